"""One pass over the body's AST that collects every fact the body rules (PT031-PT046) need.

The walk is iterative and in source order (a hostile file with a 10,000-term expression must not
blow the Python stack), and each node is visited once. Every stack entry carries where the node
runs: at import time (`MODULE`), inside the `__main__` guard (`GUARD`), or inside a function.
Rules then only read `BodyFacts`; none of them walks the tree again.

Names are resolved through the file's imports (`import urllib.request as ur` makes `ur.urlopen`
read as `urllib.request.urlopen`), which is enough for tool files: they are one short script.
"""

from __future__ import annotations

import ast
from typing import Literal

from patch_tui.lint.analysis.annotations import last_name
from patch_tui.lint.analysis.facts import (
    BodyFacts,
    FileUse,
    Guard,
    ImportUse,
    MainInfo,
    Param,
    Use,
)
from patch_tui.lint.analysis.tables import (
    DYNAMIC_IMPORTS,
    ENV_GETTERS,
    EXEC_CALLS,
    EXEC_PREFIXES,
    FILE_CALLS,
    HTTP_CLIENTS,
    HTTP_WRITE_METHODS,
    MODULE_DUNDERS,
    NETWORK_CALLS,
    OPEN_CALLS,
    PATH_CONSTRUCTORS,
    PATH_DERIVED,
    PATH_ITERATORS,
    PATH_METHODS,
    PATH_ONLY_METHODS,
    PURE_CALLS,
    PURE_PREFIXES,
    SQL_DESTRUCTIVE,
    STRONG_VERBS,
    TOKEN_VAR,
    WEAK_VERBS,
    catches_import_error,
    in_memory_db,
    is_main_test,
    is_type_checking,
    mode_kind,
    network_module,
    open_mode,
    verb_candidates,
)

MODULE = ""  # runs at import time
GUARD = "__main__"  # inside `if __name__ == "__main__":`
LAMBDA = "lambda"


# A call's qualified name -> the fact it gives the region it runs in (json.dump also prints).
_CALL_FLAGS: dict[str, str] = {
    "json.load": "json_load",
    "json.loads": "json_load",
    "json.dumps": "json_dumps",
    "json.dump": "json_dumps",
    "print": "print",
    "sys.stdout.write": "print",
    "sys.stdout.buffer.write": "print",
    "input": "stdin",
    "main": "main_kwargs",
}

# --- the pass ---------------------------------------------------------------------------------


def analyse(tree: ast.Module) -> BodyFacts:
    """Collect every fact the body rules need, in one walk of the tree."""
    return _Analyser(tree).run()


# Fields that never hold a node worth visiting: names and flags, expression contexts and
# operators (Load, Add, Eq: a third of all nodes, carrying no fact), import aliases (read by
# _import directly) and a Constant's value.
_SKIP_FIELDS = frozenset(
    {
        "id",
        "attr",
        "name",
        "arg",
        "module",
        "level",
        "kind",
        "type_comment",
        "conversion",
        "is_async",
        "simple",
        "ctx",
        "op",
        "ops",
        "names",
        "tag",
    }
)
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {ast.Constant: ()}
_TRY_STAR: type | None = getattr(ast, "TryStar", None)


def _child_fields(kind: type) -> tuple[str, ...]:
    fields = getattr(kind, "_fields", ())
    return tuple(f for f in reversed(fields) if f not in _SKIP_FIELDS)


_Item = tuple[ast.AST, str, "ast.stmt | None", bool]  # node, region, module statement, optional


class _Analyser:
    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.facts = BodyFacts(tree)
        self.aliases = self.facts.aliases
        self.path_names: set[str] = set()
        self.top_defs: dict[str, ast.AST] = {}
        self.top_classes: set[str] = set()
        self.flags: dict[str, set[str]] = {}  # region -> guard-relevant facts
        self.region_calls: dict[str, set[str]] = {}  # region -> names of functions it calls
        self.work_ids: set[int] = set()
        self.consumed: set[int] = set()  # constants already counted as env reads
        self.guard_node: ast.If | None = None
        self.http_client = False

    def run(self) -> BodyFacts:
        facts = self.facts
        stack: list[_Item] = [(stmt, MODULE, None, False) for stmt in reversed(self.tree.body)]
        top_ids = {id(s) for s in self.tree.body}
        push = stack.append
        child_fields = _CHILD_FIELDS
        name_type = ast.Name
        while stack:
            node, region, top, optional = stack.pop()
            kind = type(node)
            if region == MODULE and isinstance(node, ast.stmt):
                top = node
                if not self._module_statement(node, id(node) in top_ids, stack, optional):
                    continue  # the statement pushed its own children
            if kind is ast.Call:
                self._call(node, region, top)  # type: ignore[arg-type]
            elif kind is ast.Import or kind is ast.ImportFrom:
                self._import(node, optional)  # type: ignore[arg-type]
            elif kind is ast.Subscript:
                self._subscript(node)  # type: ignore[arg-type]
            elif kind is ast.Constant:
                self._constant(node)  # type: ignore[arg-type]
            elif kind is ast.Attribute:
                if node.attr == "stdin" and self.qualname(node) == "sys.stdin":  # type: ignore[attr-defined]
                    self.flags.setdefault(region, set()).add("stdin")
            elif kind is ast.Assign or kind is ast.AnnAssign:
                self._assign(node)  # type: ignore[arg-type]
            elif kind is ast.For or kind is ast.AsyncFor or kind is ast.comprehension:
                self._loop_target(node)  # type: ignore[arg-type]
            elif kind is ast.FunctionDef or kind is ast.AsyncFunctionDef or kind is ast.Lambda:
                self._function(node, region, top, stack)  # type: ignore[arg-type]
                continue
            elif kind is ast.Await and region == MODULE and top is not None:
                self._work(top)
            elif (kind is ast.Try or kind is _TRY_STAR) and not optional:
                # `try: import x / except ImportError:` inside a function: x is optional.
                if any(catches_import_error(h) for h in node.handlers):  # type: ignore[attr-defined]
                    for part in reversed((*node.handlers, *node.orelse, *node.finalbody)):  # type: ignore[attr-defined]
                        push((part, region, top, optional))
                    for stmt in reversed(node.body):  # type: ignore[attr-defined]
                        push((stmt, region, top, True))
                    continue
            # Children in reverse so they pop in source order; contexts and operators (Load,
            # Add, Eq: a third of all nodes) carry no fact and are never pushed.
            fields = child_fields.get(kind)
            if fields is None:
                fields = child_fields[kind] = _child_fields(kind)
            for name in fields:
                value = getattr(node, name, None)
                if type(value) is list:
                    for child in reversed(value):
                        # A bare Name carries no fact of its own (its parent reads it).
                        if isinstance(child, ast.AST) and type(child) is not name_type:
                            push((child, region, top, optional))
                elif isinstance(value, ast.AST) and type(value) is not name_type:
                    push((value, region, top, optional))
        self._finish()
        return facts

    # -- module level -----------------------------------------------------------------------

    def _module_statement(
        self, node: ast.stmt, is_top: bool, stack: list[_Item], optional: bool
    ) -> bool:
        """Judge a statement that runs at import time. False when it pushed its children."""
        kind = type(node)
        if kind in (ast.Import, ast.ImportFrom, ast.Pass, ast.Global, ast.Nonlocal):
            return True
        if kind in (ast.FunctionDef, ast.AsyncFunctionDef):
            name = node.name  # type: ignore[attr-defined]
            if is_top:
                self.top_defs[name] = node
            return True
        if kind is ast.ClassDef:
            if is_top:
                self.top_classes.add(node.name)  # type: ignore[attr-defined]
                if node.name == "main":  # type: ignore[attr-defined]
                    self.facts.main_candidates.append(node)
            return True  # the class body is judged statement by statement
        if kind is ast.Expr:
            if not isinstance(node.value, ast.Constant):  # type: ignore[attr-defined]
                self._work(node)
            return True
        if kind in (ast.Assign, ast.AnnAssign, ast.AugAssign) or kind.__name__ == "TypeAlias":
            for target in getattr(node, "targets", None) or [getattr(node, "target", None)]:
                for name in (
                    ast.walk(target) if isinstance(target, ast.Tuple | ast.List) else [target]
                ):
                    if isinstance(name, ast.Name) and name.id in MODULE_DUNDERS:
                        self.facts.dunder_assignments.append(Use(node, name.id))
                if is_top and isinstance(target, ast.Name) and target.id == "main":
                    self.facts.main_candidates.append(node)
            return True
        if kind is ast.If:
            test = node.test  # type: ignore[attr-defined]
            if is_main_test(test):
                if self.guard_node is None:
                    self.guard_node = node  # type: ignore[assignment]
                for child in reversed([*node.body, *node.orelse]):  # type: ignore[attr-defined]
                    stack.append((child, GUARD, None, optional))
                return False
            typing_only = is_type_checking(test)
            for child in reversed([*node.body, *node.orelse]):  # type: ignore[attr-defined]
                stack.append((child, MODULE, None, optional or typing_only))
            stack.append((test, MODULE, node, optional))
            return False
        if kind is ast.Try or kind.__name__ == "TryStar":
            catches_import = any(catches_import_error(h) for h in node.handlers)  # type: ignore[attr-defined]
            rest = [
                *node.handlers,  # type: ignore[attr-defined]
                *node.orelse,  # type: ignore[attr-defined]
                *node.finalbody,  # type: ignore[attr-defined]
            ]
            for child in reversed(rest):
                stack.append((child, MODULE, None, optional))
            for child in reversed(node.body):  # type: ignore[attr-defined]
                stack.append((child, MODULE, None, optional or catches_import))
            return False
        # for/while/with/assert/raise/del/match/return...: all of them do work at import time
        self._work(node)
        return True

    def _work(self, stmt: ast.stmt) -> None:
        if id(stmt) not in self.work_ids:
            self.work_ids.add(id(stmt))
            self.facts.import_time_work.append(stmt)

    def _pure_call(self, node: ast.Call, q: str | None) -> bool:
        if q is not None:
            if q in PURE_CALLS or q.startswith(PURE_PREFIXES) or q in self.top_classes:
                return True
            # A method of a constant or a local value (WORDS.split(), w.upper() in a
            # comprehension); a call on an imported module (requests.get) is real work.
            func_root = node.func
            while isinstance(func_root, ast.Attribute):
                func_root = func_root.value
            if "." in q and isinstance(func_root, ast.Name) and func_root.id not in self.aliases:
                return True
        func = node.func
        return isinstance(func, ast.Attribute) and isinstance(
            func.value, ast.Constant | ast.JoinedStr
        )

    # -- names ------------------------------------------------------------------------------

    def qualname(self, expr: ast.AST) -> str | None:
        parts: list[str] = []
        while isinstance(expr, ast.Attribute):
            parts.append(expr.attr)
            expr = expr.value
        if not isinstance(expr, ast.Name):
            return None
        parts.append(self.aliases.get(expr.id, expr.id))
        return ".".join(reversed(parts))

    def _import(self, node: ast.Import | ast.ImportFrom, optional: bool) -> None:
        facts = self.facts
        if isinstance(node, ast.Import):
            for alias in node.names:
                full = alias.name
                if alias.asname:
                    self.aliases[alias.asname] = full
                else:
                    top = full.partition(".")[0]
                    self.aliases.setdefault(top, top)
                self._record_import(full, node, optional)
            return
        if node.level:  # relative imports: a single-file tool has no package
            return
        module = node.module or ""
        self._record_import(module, node, optional)
        for alias in node.names:
            if alias.name == "*":
                continue
            full = f"{module}.{alias.name}"
            self.aliases[alias.asname or alias.name] = full
            if network_module(full) and not network_module(module):
                facts.network.setdefault(network_module(full) or full, node)

    def _record_import(
        self, module: str, node: ast.Import | ast.ImportFrom, optional: bool
    ) -> None:
        facts = self.facts
        facts.imports.append(ImportUse(module, node, optional))
        facts.modules.setdefault(module.partition(".")[0], []).append(node)
        net = network_module(module)
        if net is not None:
            facts.network.setdefault(net, node)
        if module.partition(".")[0] in HTTP_CLIENTS:
            self.http_client = True

    # -- statements -------------------------------------------------------------------------

    def _function(
        self,
        node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda,
        region: str,
        top: ast.stmt | None,
        stack: list[_Item],
    ) -> None:
        if isinstance(node, ast.Lambda):
            inner = LAMBDA if region == MODULE else region
            stack.append((node.body, inner, None, False))
            stack.append((node.args, region, top, False))
            return
        if region == MODULE and self.top_defs.get(node.name) is node:
            inner = f"def:{node.name}"
            if node.name == "main":
                self._main(node)
        else:
            inner = region if region not in (MODULE, GUARD) else f"def:?{node.name}"
            if node.name == "main" and self.facts.main is None:
                self.facts.main_candidates.append(node)
        for arg in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs):
            if arg.annotation is not None and last_name(arg.annotation) in ("Path", "PurePath"):
                self.path_names.add(arg.arg)
        for stmt in reversed(node.body):
            stack.append((stmt, inner, None, False))
        # Decorators, defaults and annotations run when the def runs (at import for top level).
        for part in (*node.decorator_list, node.args, node.returns):
            if part is not None:
                stack.append((part, region, top, False))

    def _main(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        args = node.args
        params: list[Param] = []
        positional = [*args.posonlyargs, *args.args]
        defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults))
        defaults += list(args.defaults)
        for i, arg in enumerate(positional):
            kind: Literal["positional_only", "positional"] = (
                "positional_only" if i < len(args.posonlyargs) else "positional"
            )
            params.append(Param(arg.arg, arg, arg.annotation, defaults[i], kind))
        for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=False):
            params.append(Param(arg.arg, arg, arg.annotation, default, "keyword_only"))
        self.facts.main = MainInfo(node, params, args.vararg, args.kwarg)

    def _assign(self, node: ast.Assign | ast.AnnAssign) -> None:
        value = node.value
        targets: list[ast.expr]
        if isinstance(node, ast.AnnAssign):
            targets = [node.target]
            if last_name(node.annotation) in ("Path", "PurePath") and isinstance(
                node.target, ast.Name
            ):
                self.path_names.add(node.target.id)
        else:
            targets = node.targets
        if value is not None and self._pathlike(value):
            for target in targets:
                if isinstance(target, ast.Name):
                    self.path_names.add(target.id)

    def _loop_target(self, node: ast.For | ast.AsyncFor | ast.comprehension) -> None:
        it = node.iter
        if (
            isinstance(node.target, ast.Name)
            and isinstance(it, ast.Call)
            and isinstance(it.func, ast.Attribute)
            and it.func.attr in PATH_ITERATORS
            and self._pathlike(it.func.value)
        ):
            self.path_names.add(node.target.id)

    def _pathlike(self, expr: ast.AST) -> bool:
        # Iterative: a hostile file may chain a method 10,000 times.
        while True:
            if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Div):
                expr = expr.left
            elif isinstance(expr, ast.Attribute) and expr.attr in ("parent", "parents"):
                expr = expr.value
            elif isinstance(expr, ast.Subscript):
                expr = expr.value
            elif isinstance(expr, ast.Name):
                return expr.id in self.path_names
            elif isinstance(expr, ast.Call):
                if self.qualname(expr.func) in PATH_CONSTRUCTORS:
                    return True
                func = expr.func
                if not (isinstance(func, ast.Attribute) and func.attr in PATH_DERIVED):
                    return False
                expr = func.value
            else:
                return False

    # -- expressions ------------------------------------------------------------------------

    def _call(self, node: ast.Call, region: str, top: ast.stmt | None) -> None:
        facts = self.facts
        func = node.func
        q = self.qualname(func)
        method = func.attr if isinstance(func, ast.Attribute) else None

        if region == MODULE and top is not None and not self._pure_call(node, q):
            self._work(top)

        # files
        if q is not None and q in OPEN_CALLS:
            index, default_mode = OPEN_CALLS[q]
            mode = open_mode(node, index, default_mode)
            kind = mode_kind(mode)
            shown = repr(mode) if mode is not None else "mode"
            label = f"{q}()" if kind == "read" else f"{q}(..., {shown})"
            facts.file_access.append(FileUse(node, kind, label))
        elif q is not None and q in FILE_CALLS and not in_memory_db(node, q):
            facts.file_access.append(FileUse(node, FILE_CALLS[q], f"{q}()"))
        elif q == "os.open":
            writes = any(
                isinstance(sub, ast.Attribute)
                and sub.attr in ("O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND")
                for arg in node.args[1:]
                for sub in ast.walk(arg)
            )
            facts.file_access.append(FileUse(node, "write" if writes else "read", "os.open()"))
        elif method is not None and method in PATH_METHODS and "pathlib" in facts.modules:
            assert isinstance(func, ast.Attribute)
            if method in PATH_ONLY_METHODS or self._pathlike(func.value):
                kind = PATH_METHODS[method]
                if method == "open":
                    kind = mode_kind(open_mode(node, 0, "r"))
                facts.file_access.append(FileUse(node, kind, f"Path.{method}()"))

        # network reached without an import of its own (`import urllib` then urllib.request...)
        if q is not None:
            net = network_module(q)
            if net is not None:
                facts.network.setdefault(net, node)
            elif q in NETWORK_CALLS:
                facts.network.setdefault(q, node)

        # processes and dynamic code
        if q is not None and (q in EXEC_CALLS or q.startswith(EXEC_PREFIXES)):
            facts.exec_calls.append(Use(node, q))
        if q in DYNAMIC_IMPORTS:
            facts.dynamic_imports.append(Use(node, q))

        # environment
        if q in ENV_GETTERS and node.args and isinstance(node.args[0], ast.Constant):
            key = node.args[0].value
            if isinstance(key, str):
                facts.env_reads.setdefault(key, []).append(node)
                if key == TOKEN_VAR:
                    facts.token_uses.append(node)
                    self.consumed.add(id(node.args[0]))

        self._irreversible(node, q, method)

        # the entry point's contract (the region's set is made only when a flag is added)
        flag = _CALL_FLAGS.get(q) if q is not None else None
        if flag is not None:
            if flag == "main_kwargs" and not any(k.arg is None for k in node.keywords):
                flag = None
            if flag is not None:
                flags = self.flags.get(region)
                if flags is None:
                    flags = self.flags[region] = set()
                flags.add(flag)
                if q == "json.dump":
                    flags.add("print")
        if isinstance(func, ast.Name):
            calls = self.region_calls.get(region)
            if calls is None:
                calls = self.region_calls[region] = set()
            calls.add(func.id)

    def _irreversible(self, node: ast.Call, q: str | None, method: str | None) -> None:
        facts = self.facts
        func = node.func
        # The imported name, not the local alias: `from os import remove as rm; rm(p)`.
        if q is not None and isinstance(func, ast.Name):
            name: str | None = q.rpartition(".")[2]
        else:
            name = (
                method if method is not None else (func.id if isinstance(func, ast.Name) else None)
            )
        if name is None:
            return
        verb: str | None = None
        single, candidates = verb_candidates(name)
        if candidates:
            root = q.partition(".")[0] if q is not None else None
            on_module = root is not None and root in self.facts.modules and "." in (q or "")
            for w in candidates:
                if w in STRONG_VERBS:
                    verb = w
                elif w in WEAK_VERBS:
                    if on_module:
                        verb = w
                    elif single and w in ("put", "patch"):
                        if self.http_client and method is not None:
                            verb = w  # session.put(...)
                    elif not single and method is not None and self.facts.network:
                        verb = w  # an API client's s3.put_object(...), api.cancel_order(...)
                if verb:
                    break
        if verb is None and method in ("execute", "executemany", "executescript") and node.args:
            first_arg = node.args[0]
            if isinstance(first_arg, ast.Constant) and isinstance(first_arg.value, str):
                m = SQL_DESTRUCTIVE.match(first_arg.value)
                if m:
                    verb = f"SQL {m.group(1).upper()}"
        if (
            verb is None
            and q is not None
            and q.endswith(("urllib.request.Request", "urllib.request.urlopen"))
        ):
            for kw in node.keywords:
                if kw.arg == "method" and isinstance(kw.value, ast.Constant):
                    if str(kw.value.value).upper() in HTTP_WRITE_METHODS:
                        verb = str(kw.value.value).upper()
                elif kw.arg == "data" and not (
                    isinstance(kw.value, ast.Constant) and kw.value.value is None
                ):
                    verb = verb or "POST"
            if verb is None and len(node.args) >= 2:
                verb = "POST"  # a body makes urllib send a POST
        if verb is not None:
            label = q if q is not None else (f".{name}()" if method else name)
            facts.irreversible.append(Use(node, f"{label} ({verb})" if verb.isupper() else label))

    def _subscript(self, node: ast.Subscript) -> None:
        if isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
            if self.qualname(node.value) in ("os.environ", "os.environb"):
                key = node.slice.value
                self.facts.env_reads.setdefault(key, []).append(node)
                if key == TOKEN_VAR:
                    self.facts.token_uses.append(node)
                    self.consumed.add(id(node.slice))

    def _constant(self, node: ast.Constant) -> None:
        value = node.value
        if isinstance(value, str) and len(value) <= 40:
            if value == TOKEN_VAR and id(node) not in self.consumed:
                self.facts.token_uses.append(node)
            elif value.isidentifier() or "-" in value:
                self.facts.strings.add(value)

    # -- after the walk ---------------------------------------------------------------------

    def _finish(self) -> None:
        facts = self.facts
        if self.guard_node is not None:
            # The guard may delegate to a helper (`if __name__ == "__main__": _run()`).
            regions = {GUARD}
            for name in self.region_calls.get(GUARD, set()):
                if name in self.top_defs and name != "main":
                    regions.add(f"def:{name}")
            got: set[str] = set()
            for region in regions:
                got |= self.flags.get(region, set())
            facts.guard = Guard(
                self.guard_node,
                reads_json_stdin={"json_load", "stdin"} <= got,
                prints_json_result={"json_dumps", "print"} <= got,
                calls_main_with_kwargs="main_kwargs" in got,
            )
        facts.import_time_work.sort(key=lambda s: (s.lineno, s.col_offset))
