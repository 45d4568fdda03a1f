"""Rules on the Python body (PT030-PT049), all fed by one AST pass (lint/body.py).

Each rule's docstring is its docs entry: the first line says what it catches, then a "Why:"
paragraph and a "Fix:" paragraph (docs/rules.md is generated from them).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

from patch_tui.format import toolfile as tfmod
from patch_tui.format.fields import FILESYSTEM_MODES, INPUT_TYPES
from patch_tui.format.toolfile import Span, ToolFile
from patch_tui.lint import distributions as dists
from patch_tui.lint.body import (
    TYPE_TO_ANNOTATION,
    BodyFacts,
    MainInfo,
    Param,
    annotation_items,
    annotation_types,
    literal_value,
    preferred_type,
    value_type,
    words,
)
from patch_tui.lint.engine import Diagnostic, Edit, Fix, LintContext, rule
from patch_tui.untrusted.text_safety import visible

# Words in an input's name that say it carries content from outside (PT046).
TAINT_WORDS: frozenset[str] = frozenset(
    {
        "url", "urls", "uri", "link", "links", "href", "html", "text", "texts", "content",
        "contents", "body", "query", "message", "messages", "prompt", "email", "emails",
        "markdown", "document", "documents", "doc", "page", "comment", "comments", "post",
        "tweet", "snippet", "payload", "xml", "feed", "rss", "webpage", "website", "search",
        "subject", "note", "notes", "transcript", "article", "reply", "input",
    }
)
# ...unless the name's head noun (its last word) says it is something else: `message_id`,
# `input_path` and `text_format` are not content.
NOT_CONTENT_HEADS: frozenset[str] = frozenset(
    {
        "id", "ids", "path", "paths", "file", "files", "filename", "dir", "directory", "folder",
        "format", "type", "lang", "language", "encoding", "count", "limit", "size", "length",
        "mode", "key", "keys", "color", "style", "name", "names", "field", "fields", "column",
        "columns", "selector", "separator", "delimiter", "index", "number", "token",
    }
)
CONTENT_TYPES = ("string", "array", "object")
GUARD_TEXT = (
    'if __name__ == "__main__":',
    "    args = json.loads(sys.stdin.read())",
    "    print(json.dumps(main(**args)))",
)

# --- helpers ----------------------------------------------------------------------------------


def _column(ctx: LintContext, line: int, offset: int) -> int:
    """A 1-based character column from an AST column (a UTF-8 byte offset)."""
    text = ctx.tf.line_text(line)
    if text.isascii():
        return offset + 1
    return len(text.encode("utf-8")[:offset].decode("utf-8", "replace")) + 1


def node_span(ctx: LintContext, node: ast.AST, *, first_line: bool = False) -> Span:
    line = getattr(node, "lineno", 1)
    col = _column(ctx, line, getattr(node, "col_offset", 0))
    end_line = getattr(node, "end_lineno", None) or line
    end_offset = getattr(node, "end_col_offset", None)
    if first_line or end_offset is None:
        end_line = line
        end_col = len(ctx.tf.line_text(line).rstrip()) + 1
    else:
        end_col = _column(ctx, end_line, end_offset)
    if (end_line, end_col) <= (line, col):
        end_line, end_col = line, col + 1
    return Span(line, col, end_line, end_col)


def _signature_span(ctx: LintContext, main: MainInfo) -> Span:
    node = main.node
    line = node.lineno
    end_line = main.header_end_line
    return Span(
        line,
        _column(ctx, line, node.col_offset),
        end_line,
        len(ctx.tf.line_text(end_line).rstrip()) + 1,
    )


def _body_diag(
    ctx: LintContext,
    code: str,
    message: str,
    node: ast.AST,
    *,
    severity: str = "error",
    fix: Fix | None = None,
    first_line: bool = False,
    field: tuple[str | int, ...] | None = None,
) -> Diagnostic:
    """A diagnostic at a piece of code; `field` names the manifest field it concerns, so the
    form can focus it."""
    span = node_span(ctx, node, first_line=first_line)
    return Diagnostic(code, severity, message, span, fix, field)  # type: ignore[arg-type]


def _facts(ctx: LintContext) -> BodyFacts:
    facts = ctx.body
    assert isinstance(facts, BodyFacts)
    return facts


def _not_a_tool(ctx: LintContext) -> bool:
    """An empty, binary or undecodable file: PT001 says all there is to say."""
    return ctx.tf.open_index is None and not ctx.tf.text.strip()


def _inputs(ctx: LintContext) -> list[tuple[int, str, dict[str, Any]]]:
    """(index, name, raw input) for every input that has a name; bad entries are PT01x's job."""
    raw = ctx.get("inputs")
    if not isinstance(raw, list):
        return []
    return [
        (i, item["name"], item)
        for i, item in enumerate(raw)
        if isinstance(item, dict) and isinstance(item.get("name"), str)
    ]


def _names(items: list[str]) -> str:
    return ", ".join(f"`{n}`" for n in items)


def _input_from_param(param: Param) -> dict[str, Any]:
    """An input declaration inferred from a parameter of main()."""
    has_default, default = literal_value(param.default)
    types = annotation_types(param.annotation)
    kind = preferred_type(frozenset(types - {"null"}) if types else None)
    if kind is None and has_default:
        kind = value_type(default)
    kind = kind or "string"
    data: dict[str, Any] = {
        "name": param.name,
        "type": kind,
        "description": f"The {' '.join(words(param.name)) or param.name}.",
    }
    if param.default is not None:
        data["required"] = False
        if has_default and default is not None:
            data["default"] = default
    if kind == "array":
        data["items"] = {"type": annotation_items(param.annotation) or "string"}
    return data


def _manifest_set(ctx: LintContext, title: str, changes: list[tuple[tuple[str | int, ...], Any]], *, safe: bool) -> Fix | None:
    """A frontmatter fix that applies several field changes at once."""
    data: Any = ctx.tf.data
    if not isinstance(data, dict):
        return None
    for path, value in changes:
        data = tfmod.set_field(data, path, value)
    return ctx.frontmatter_fix(title, data, safe=safe)


def _set_value(ctx: LintContext, title: str, path: tuple[str | int, ...], value: Any, *, safe: bool) -> Fix | None:
    # Touches only the lines concerned, so comments elsewhere in the frontmatter survive.
    return ctx.set_value_fix(title, path, value, safe=safe)


# --- PT030-PT037: the entry point -----------------------------------------------------------


def _body_start_span(tf: ToolFile) -> Span:
    """Where the body starts; an empty body points at the closing marker, never past the end."""
    line = min(tf.body_start_line, max(len(tf.lines), 1))
    return Span(line, 1, line, 2)


@rule(
    "PT030",
    "body-syntax-error",
    family="body",
    summary="the body is not valid Python",
    needs_manifest=False,
)
def body_syntax_error(ctx: LintContext) -> Iterator[Diagnostic]:
    """The Python after the closing `# ---` does not parse.

    Why: the runtime cannot load the tool at all, and none of the body checks (PT031-PT046) can
    run until it parses, so a tool with this error may hide many others.

    Fix: correct the syntax at the reported line and column (the message is Python's own).
    """
    tf = ctx.tf
    if ctx.body_tree is not None or (tf.open_index is not None and tf.close_index is None):
        return
    # The engine keeps only the tree; the error is recomputed here, for broken files only.
    offset = tf.body_start_line - 1
    try:
        ast.parse("\n" * offset + tf.body)
    except SyntaxError as exc:
        last = max(len(tf.lines), 1)
        line = min(exc.lineno or tf.body_start_line, last)  # "unexpected EOF" is past the end
        col = max(exc.offset or 1, 1)
        end_line = min(exc.end_lineno or line, last)
        end_col = exc.end_offset if exc.end_offset and exc.end_offset > 0 else col + 1
        if (end_line, end_col) <= (line, col):
            end_line, end_col = line, col + 1
        yield Diagnostic(
            "PT030",
            "error",
            f"the body is not valid Python ({exc.msg}): fix the syntax here; "
            "the other body checks run once it parses",
            Span(line, col, end_line, end_col),
        )
    except (RecursionError, MemoryError):
        yield Diagnostic(
            "PT030",
            "error",
            "the body is nested too deeply for Python to parse it: flatten the expression",
            _body_start_span(tf),
        )
    except ValueError as exc:  # e.g. NUL characters in the source
        yield Diagnostic(
            "PT030",
            "error",
            f"the body is not valid Python ({exc}): remove the offending characters",
            _body_start_span(tf),
        )


@rule(
    "PT031",
    "missing-main",
    family="body",
    summary="no top-level `def main(...)`",
    needs_manifest=False,
    needs_body=True,
)
def missing_main(ctx: LintContext) -> Iterator[Diagnostic]:
    """The body has no top-level, plain `def main(...)`.

    Why: the runtime calls `main(**args)` with the inputs as keyword arguments. A missing main,
    a main nested in a class or function, or an `async def main` (which returns a coroutine that
    cannot be printed as JSON) means every call fails.

    Fix: define `def main(...)` at the top level of the body, with one parameter per input, and
    return a JSON-serializable value. Run async code inside it with `asyncio.run(...)`.
    """
    if _not_a_tool(ctx):
        return
    facts = _facts(ctx)
    main = facts.main
    if main is not None and main.is_async:
        yield _body_diag(
            ctx,
            "PT031",
            "main() is `async def`, but the runtime calls it as a plain function: make it `def main(...)` "
            "and run the coroutine inside with `asyncio.run(...)`",
            main.node,
            first_line=True,
        )
        return
    if main is not None:
        return
    if facts.main_candidates:
        yield _body_diag(
            ctx,
            "PT031",
            "`main` is not a top-level function: define `def main(...)` at the top level of the body",
            facts.main_candidates[0],
            first_line=True,
        )
        return
    tree = facts.tree
    if tree.body:
        span = node_span(ctx, tree.body[0], first_line=True)
    else:
        line = max(ctx.tf.body_start_line - 1, 1)
        span = Span.line_span(line, ctx.tf.line_text(line))
    yield Diagnostic(
        "PT031",
        "error",
        "no top-level `def main(...)`: add one with a parameter per input; the runtime calls main(**args)",
        span,
    )


@rule(
    "PT032",
    "main-params-mismatch",
    family="body",
    summary="main()'s parameters differ from the inputs' names",
    needs_body=True,
)
def main_params_mismatch(ctx: LintContext) -> Iterator[Diagnostic]:
    """main()'s parameters and the manifest's inputs do not name the same arguments.

    Why: the runtime calls `main(**args)` with exactly the declared inputs. An input main() does
    not accept raises `TypeError: unexpected keyword argument`; a parameter with no input can
    never be given by the caller (and fails when it has no default); a positional-only
    parameter cannot be passed by keyword at all.

    Fix: make them agree. The quick fix adds the missing inputs to the manifest from main()'s
    signature (type from the annotation, `required: false` and the default when the parameter
    has one); review their descriptions. Add parameters for inputs main() lacks.
    """
    facts = _facts(ctx)
    main = facts.main
    if main is None or not isinstance(ctx.get("inputs"), list):
        return
    declared = [name for _, name, _ in _inputs(ctx)]
    params = {p.name for p in main.params}
    no_input = [p for p in main.params if p.name not in declared and p.kind != "positional_only"]
    no_param = [n for n in declared if n not in params] if main.kwarg is None else []
    positional_only = [p.name for p in main.params if p.kind == "positional_only"]
    parts: list[str] = []
    if no_input:
        parts.append(
            f"main() takes {_names([p.name for p in no_input])} but no input declares "
            f"{'it' if len(no_input) == 1 else 'them'}: add {'it' if len(no_input) == 1 else 'them'} to inputs"
        )
    if no_param:
        parts.append(
            f"input{'s' if len(no_param) > 1 else ''} {_names(no_param)} "
            f"{'are' if len(no_param) > 1 else 'is'} not a parameter of main(), so main(**args) "
            f"fails: add {'them' if len(no_param) > 1 else 'it'} to main()'s signature"
        )
    if positional_only:
        parts.append(
            f"{_names(positional_only)} {'are' if len(positional_only) > 1 else 'is'} positional-only "
            "and main(**args) cannot pass it: remove the `/` from main()'s signature"
        )
    if not parts:
        return
    fix = None
    if no_input:
        raw = ctx.get("inputs")
        new_inputs = [*raw, *(_input_from_param(p) for p in no_input)]
        fix = _manifest_set(
            ctx,
            f"Add input{'s' if len(no_input) > 1 else ''} {_names([p.name for p in no_input])} from main()'s signature",
            [(("inputs",), new_inputs)],
            safe=True,
        )
    yield Diagnostic("PT032", "error", "; ".join(parts), _signature_span(ctx, main), fix, ("inputs",))


def _default_fix(ctx: LintContext, main: MainInfo, param: Param, raw: dict[str, Any]) -> Fix | None:
    """Give a parameter the manifest's default, when Python allows a default there."""
    if "default" not in raw:
        return None
    value = raw["default"]
    if param.kind != "keyword_only":
        later = main.params[main.params.index(param) + 1 :]
        if any(p.default is None and p.kind != "keyword_only" for p in later):
            return None  # a default here would make main()'s signature a syntax error
    node = param.node
    line, end = node.end_lineno or node.lineno, node.end_col_offset or node.col_offset
    col = _column(ctx, line, end)
    text = f" = {value!r}" if param.annotation is not None else f"={value!r}"
    return Fix(f"Give `{param.name}` the default {value!r}", (Edit(line, col, line, col, text),), True)


@rule(
    "PT033",
    "optional-input-without-default",
    family="body",
    summary="an input with `required: false` has no default in main()",
    needs_body=True,
)
def optional_without_default(ctx: LintContext) -> Iterator[Diagnostic]:
    """An optional input (`required: false`) whose parameter in main() has no default.

    Why: when the caller leaves an optional input out, main(**args) is called without it and
    fails with `TypeError: missing 1 required positional argument`.

    Fix: give the parameter a default in main() (the quick fix uses the manifest's `default`),
    or make the input required.
    """
    main = _facts(ctx).main
    if main is None:
        return
    for index, name, raw in _inputs(ctx):
        param = main.param(name)
        if raw.get("required") is not False or param is None or param.default is not None:
            continue
        yield _body_diag(
            ctx,
            "PT033",
            f"input `{name}` is optional (`required: false`) but main() gives `{name}` no default, "
            "so a call without it fails: add a default to the parameter",
            param.node,
            fix=_default_fix(ctx, main, param, raw),
            field=("inputs", index, "required"),
        )


@rule(
    "PT034",
    "required-input-with-default",
    family="body",
    summary="a required input has a default in main()",
    needs_body=True,
)
def required_with_default(ctx: LintContext) -> Iterator[Diagnostic]:
    """A required input whose parameter in main() has a default.

    Why: the manifest and the code disagree about whether the caller must give the argument;
    agents read the manifest, so they will always ask for (or invent) a value main() does not
    need.

    Fix: mark the input `required: false` with the same `default` (the quick fix does this), or
    drop the default from main() if the input really is required.
    """
    main = _facts(ctx).main
    if main is None:
        return
    for index, name, raw in _inputs(ctx):
        param = main.param(name)
        if raw.get("required", True) is not True or param is None or param.default is None:
            continue
        changes: list[tuple[tuple[str | int, ...], Any]] = [(("inputs", index, "required"), False)]
        ok, default = literal_value(param.default)
        if ok and default is not None and "default" not in raw:
            changes.append((("inputs", index, "default"), default))
        yield _body_diag(
            ctx,
            "PT034",
            f"input `{name}` is required but main() gives it a default: mark it `required: false` "
            "in the manifest, or drop the default",
            param.default,
            severity="warning",
            fix=_manifest_set(ctx, f"Mark input `{name}` optional", changes, safe=False),
            field=("inputs", index, "required"),
        )


def _accepts(types: frozenset[str], declared: str) -> bool:
    return declared in types or (declared == "integer" and "number" in types)


@rule(
    "PT035",
    "annotation-type-mismatch",
    family="body",
    summary="main()'s annotation disagrees with the input's declared type",
    needs_body=True,
)
def annotation_mismatch(ctx: LintContext) -> Iterator[Diagnostic]:
    """A parameter's type annotation disagrees with its input's declared `type` (or `items`).

    Why: the runtime passes the JSON type the manifest declares; code written for another type
    breaks on the first call (a `str` treated as a `list` iterates characters).

    Fix: change the annotation (`string` -> `str`, `integer` -> `int`, `number` -> `float`,
    `boolean` -> `bool`, `array` -> `list[...]`, `object` -> `dict`), or the input's type.
    """
    main = _facts(ctx).main
    if main is None:
        return
    for index, name, raw in _inputs(ctx):
        declared = raw.get("type")
        param = main.param(name)
        if param is None or param.annotation is None or declared not in INPUT_TYPES:
            continue
        types = annotation_types(param.annotation)
        if types is None or not (types - {"null"}):
            continue
        if _accepts(types, declared):
            items = raw.get("items")
            want = items.get("type") if isinstance(items, dict) else None
            got = annotation_items(param.annotation)
            if declared == "array" and want in INPUT_TYPES and got is not None and got != want:
                if not (want == "integer" and got == "number"):
                    yield _body_diag(
                        ctx,
                        "PT035",
                        f"main() annotates `{name}` as a list of {got} but the input's items are "
                        f"{want}: annotate `list[{TYPE_TO_ANNOTATION[want]}]` or change `items.type`",
                        param.annotation,
                        severity="warning",
                        fix=_set_value(ctx, f"Set `{name}` items to {got}", ("inputs", index, "items", "type"), got, safe=False),
                        field=("inputs", index, "items"),
                    )
            continue
        better = preferred_type(frozenset(types - {"null"}))
        changes: list[tuple[tuple[str | int, ...], Any]] = [(("inputs", index, "type"), better)]
        if better == "array" and not isinstance(raw.get("items"), dict):
            changes.append((("inputs", index, "items"), {"type": annotation_items(param.annotation) or "string"}))
        try:
            segment = ast.unparse(param.annotation)
        except RecursionError:
            segment = "its annotation"
        yield _body_diag(
            ctx,
            "PT035",
            f"main() annotates `{name}` as `{segment}` but the input is declared `{declared}`: "
            f"annotate it `{TYPE_TO_ANNOTATION[declared]}` or set the input's type to `{better}`",
            param.annotation,
            severity="warning",
            fix=_manifest_set(ctx, f"Set input `{name}` type to {better}", changes, safe=False),
            field=("inputs", index, "type"),
        )


def _guard_fix(ctx: LintContext, facts: BodyFacts) -> Fix | None:
    """Append the standard entry point, importing json and sys if the body does not."""
    tf = ctx.tf
    nl = tf.newline
    edits: list[Edit] = []
    missing = [m for m in ("json", "sys") if facts.aliases.get(m) != m]
    if missing:
        body = facts.tree.body
        imports = [s for s in body if isinstance(s, ast.Import | ast.ImportFrom)]
        if imports:
            at = (imports[-1].end_lineno or imports[-1].lineno) + 1
        elif body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            at = (body[0].end_lineno or body[0].lineno) + 1
        else:
            at = tf.body_start_line
        edits.append(Edit(at, 1, at, 1, "".join(f"import {m}{nl}" for m in missing)))
    # Replace the trailing newlines with exactly two blank lines, then the guard.
    text = tf.text
    stripped = text.rstrip("\r\n")
    head = tfmod._split_lines(stripped)
    line, col = (len(head), len(head[-1]) + 1) if head else (1, 1)
    lead = nl * 3 if stripped else ""
    end = len(tf.lines) + 1
    edits.append(Edit(line, col, end, 1, lead + nl.join(GUARD_TEXT) + nl))
    return Fix('Add the `if __name__ == "__main__":` entry point', tuple(edits), True)


@rule(
    "PT036",
    "missing-main-guard",
    family="body",
    summary='no `if __name__ == "__main__":` block that reads JSON args from stdin and prints json.dumps(main(**args))',
    needs_manifest=False,
    needs_body=True,
)
def missing_main_guard(ctx: LintContext) -> Iterator[Diagnostic]:
    """The body has no `if __name__ == "__main__":` entry point that speaks the runtime's protocol.

    Why: the runtime runs the file as a script, writes the arguments as one JSON object to
    stdin and reads the result as JSON from the last line of stdout. Without the guard nothing
    runs; without the JSON read or print the call cannot get its arguments or return a result.

    Fix: end the file with

        if __name__ == "__main__":
            args = json.loads(sys.stdin.read())
            print(json.dumps(main(**args)))

    (the quick fix adds it, with `import json` / `import sys` when missing).
    """
    if _not_a_tool(ctx):
        return
    facts = _facts(ctx)
    guard = facts.guard
    if guard is None:
        fix = _guard_fix(ctx, facts) if facts.main is not None else None
        last = facts.tree.body[-1] if facts.tree.body else None
        span = (
            node_span(ctx, last, first_line=True)
            if last is not None
            else _body_start_span(ctx.tf)
        )
        yield Diagnostic(
            "PT036",
            "error",
            'no `if __name__ == "__main__":` entry point: add one that does '
            "`args = json.loads(sys.stdin.read())` and `print(json.dumps(main(**args)))`",
            span,
            fix,
        )
        return
    if guard.ok:
        return
    missing = []
    if not guard.reads_json_stdin:
        missing.append("read the args as JSON from stdin (`args = json.loads(sys.stdin.read())`)")
    if not guard.calls_main_with_kwargs:
        missing.append("call `main(**args)`")
    if not guard.prints_json_result:
        missing.append("print the result as JSON (`print(json.dumps(result))`)")
    yield _body_diag(
        ctx,
        "PT036",
        "the `__main__` block must " + ", ".join(missing),
        guard.node,
        first_line=True,
    )


@rule(
    "PT037",
    "import-time-work",
    family="body",
    summary="work at import time: a top-level statement other than imports, defs, classes, constants, the docstring and the main guard",
    needs_manifest=False,
    needs_body=True,
)
def import_time_work(ctx: LintContext) -> Iterator[Diagnostic]:
    """A top-level statement that does work when the file is imported.

    Why: tools must have no side effects at import time: the runtime and patch-tui load tools to
    inspect them, and code at the top level (a request, a file write, a loop) would run then,
    outside any approval or sandbox decision.

    Fix: move the statement into main() (or a function main() calls). Imports, `def`, `class`,
    constant assignments (literals, `re.compile(...)` and other pure constructors), the
    docstring and the `if __name__ == "__main__":` block may stay at the top level.
    """
    for stmt in _facts(ctx).import_time_work:
        code = ctx.tf.line_text(stmt.lineno).strip()
        if len(code) > 50:
            code = code[:47] + "..."
        yield _body_diag(
            ctx,
            "PT037",
            f"`{code}` runs when the file is imported: move it into main()",
            stmt,
            first_line=True,
        )


# --- PT040-PT046: what the body does against what the manifest declares ---------------------


@rule(
    "PT040",
    "undeclared-network",
    family="body",
    summary="network use with `network: false`",
    needs_body=True,
)
def undeclared_network(ctx: LintContext) -> Iterator[Diagnostic]:
    """The body uses the network (requests, httpx, urllib.request, http.client, socket, aiohttp,
    smtplib, ...) while `capabilities.network` is false.

    Why: the runtime enforces `network: false` by booting the sandbox without internet access,
    so the tool fails at its first request; and users grant tools by their declared
    capabilities, so the declaration must be honest.

    Fix: set `capabilities.network: true` if the tool really needs the network (the quick fix,
    offered in the editor only: it widens what the tool may do), or remove the network code.
    """
    if not isinstance(ctx.get("capabilities"), dict):
        return  # missing or malformed: PT010/PT022 say so
    network = ctx.get("capabilities", "network", default=False)
    if network is not False:
        return
    for module, node in _facts(ctx).network.items():
        yield _body_diag(
            ctx,
            "PT040",
            f"`{module}` reaches the network but `capabilities.network` is false, so the sandbox "
            "blocks it: set `network: true` or remove the network code",
            node,
            fix=_set_value(ctx, "Set capabilities.network: true", ("capabilities", "network"), True, safe=False),
            field=("capabilities", "network"),
        )


_KIND_WORDS = {
    "read": "reads the file system",
    "create": "creates files",
    "append": "appends to a file",
    "write": "writes files",
    "delete": "deletes files",
    "move": "moves files",
}


@rule(
    "PT041",
    "undeclared-file-access",
    family="body",
    summary="file access beyond `filesystem`",
    needs_body=True,
)
def undeclared_file_access(ctx: LintContext) -> Iterator[Diagnostic]:
    """The body touches files beyond `capabilities.filesystem`: any access with `none`; a
    write, delete or move with `read-only`.

    Why: people approve tools by what they declare. A "read-only" tool that deletes, or a
    "none" tool that reads `~/.ssh`, is exactly what the declaration exists to rule out.

    Fix: declare what the code does (`filesystem: read-only` for reads, `read-write` for
    anything that changes files; the quick fix is offered in the editor only), or remove the
    file access.
    """
    if not isinstance(ctx.get("capabilities"), dict):
        return
    fs = ctx.get("capabilities", "filesystem", default="none")
    if fs not in FILESYSTEM_MODES or fs == "read-write":
        return
    for use in _facts(ctx).file_access:
        if fs == "read-only" and use.kind == "read":
            continue
        need = "read-only" if use.kind == "read" else "read-write"
        yield _body_diag(
            ctx,
            "PT041",
            f"`{use.what}` {_KIND_WORDS[use.kind]} but `capabilities.filesystem` is `{fs}`: "
            f"declare `filesystem: {need}` or remove the file access",
            use.node,
            fix=_set_value(ctx, f"Set capabilities.filesystem: {need}", ("capabilities", "filesystem"), need, safe=False),
            field=("capabilities", "filesystem"),
        )


@rule(
    "PT042",
    "subprocess-or-eval",
    family="body",
    summary="subprocess, os.system, exec, eval",
    needs_manifest=False,
    needs_body=True,
)
def subprocess_or_eval(ctx: LintContext) -> Iterator[Diagnostic]:
    """The body starts other programs (subprocess, os.system, os.popen, os.exec*) or runs code
    built at run time (exec, eval).

    Why: these escape everything the manifest declares: another program can reach the network
    or the disk, and input that reaches a shell or eval() becomes code an attacker controls.

    Fix: do the work in Python (a library instead of a command line tool); parse data with
    `json.loads` or `ast.literal_eval` instead of eval(). When a command is unavoidable, pass
    a list of arguments, never `shell=True` with input in it.
    """
    for use in _facts(ctx).exec_calls:
        if use.what.endswith(("eval", "exec")):
            message = (
                f"`{use.what}()` runs code built at run time: parse data with json.loads or "
                "ast.literal_eval instead"
            )
        else:
            message = (
                f"`{use.what}()` starts another program, outside what the manifest declares: "
                "do the work in Python, or pass a fixed argument list (never shell=True with input)"
            )
        yield _body_diag(ctx, "PT042", message, use.node, severity="warning")


def _third_party(facts: BodyFacts) -> dict[str, tuple[str, ast.AST]]:
    """Top-level import name -> (dotted module, first import) for non-stdlib, non-optional imports."""
    out: dict[str, tuple[str, ast.AST]] = {}
    for imp in facts.imports:
        top = imp.module.partition(".")[0]
        if not top or imp.optional or dists.is_stdlib(top) or top in out:
            continue
        out[top] = (imp.module, imp.node)
    return out


@rule(
    "PT043",
    "undeclared-package",
    family="body",
    summary="a third-party import not covered by runtime.packages (error); a declared package never imported (warning)",
    needs_body=True,
)
def undeclared_package(ctx: LintContext) -> Iterator[Diagnostic]:
    """A third-party import that `runtime.packages` does not declare (error), or a declared
    package the body never imports (warning). Import names are mapped to distributions:
    `bs4` is `beautifulsoup4`, `yaml` is `pyyaml`, `PIL` is `pillow`, `sklearn` is
    `scikit-learn`, ...

    Why: the runtime installs exactly the declared packages, so an undeclared import fails with
    `ModuleNotFoundError` on the first call; a package declared for nothing slows every cold
    start and widens the supply chain for no reason.

    Fix: add the distribution pinned (`beautifulsoup4==4.12.3`); the quick fix pins the version
    installed here when there is one. Remove packages the tool does not use (keep one that
    another package loads by name, like a parser).
    """
    packages = ctx.get("runtime", "packages", default=[])
    if not isinstance(packages, list) or not isinstance(ctx.get("runtime", default={}), dict):
        return
    facts = _facts(ctx)
    declared: dict[str, int] = {}
    for i, entry in enumerate(packages):
        if isinstance(entry, str) and dists.declared_name(entry):
            declared[dists.normalize(dists.declared_name(entry))] = i
    used: set[str] = set()
    for top, (module, node) in _third_party(facts).items():
        candidates = [dists.normalize(d) for d in dists.distributions_for(module)]
        hit = next((c for c in candidates if c in declared), None)
        if hit is None:
            installed = [dists.normalize(d) for d in dists.installed_distributions(module)]
            hit = next((c for c in installed if c in declared), None)
        if hit is not None:
            used.add(hit)
            continue
        dist = dists.distribution_for(module)
        version = dists.installed_version(dist)
        if version is not None:
            pin = f"{dist}=={version}"
            fix = _manifest_set(
                ctx, f"Add `{pin}` to runtime.packages", [(("runtime", "packages"), [*packages, pin])], safe=True
            )
            hint = f"add `{pin}` to runtime.packages"
        else:
            fix = None
            hint = f"add it pinned to runtime.packages, like `{dist}==X.Y.Z`"
        yield _body_diag(
            ctx,
            "PT043",
            f"`{top}` is imported but the runtime installs only runtime.packages, which does not "
            f"declare `{dist}`: {hint}",
            node,
            fix=fix,
            field=("runtime", "packages"),
        )
    # Distributions also count as used when named in a string (BeautifulSoup(html, "lxml")).
    for text in facts.strings:
        norm = dists.normalize(text)
        if norm in declared:
            used.add(norm)
    for norm, index in declared.items():
        if norm in used:
            continue
        # Optional imports (try/except ImportError) still use the package when present.
        if any(
            norm in {dists.normalize(d) for d in dists.distributions_for(imp.module)}
            for imp in facts.imports
        ):
            continue
        entry = packages[index]
        yield ctx.diag(
            "PT043",
            f"`{entry}` is declared but never imported: remove it from runtime.packages "
            "(keep it only if another package loads it at run time)",
            "runtime",
            "packages",
            index,
            severity="warning",
            fix=_manifest_set(
                ctx, f"Remove `{entry}` from runtime.packages", [(("runtime", "packages", index), tfmod.DELETE)], safe=False
            ),
        )


@rule(
    "PT044",
    "access-token-vs-external-auth",
    family="body",
    summary="PATCH_ACCESS_TOKEN read without external_auth (error); external_auth declared and the token never read (warning)",
    needs_body=True,
)
def access_token(ctx: LintContext) -> Iterator[Diagnostic]:
    """The body reads `PATCH_ACCESS_TOKEN` but `external_auth` declares no scope (error), or
    `external_auth` declares scopes and the body never reads the token (warning).

    Why: the runtime mints the short-lived token and injects it as `PATCH_ACCESS_TOKEN` only for
    the scopes in `external_auth`, so without them the variable is empty. Scopes the code never
    uses ask the user for access the tool does not need.

    Fix: list the scopes the tool uses (`external_auth: [slack.send_message]`) and read the
    token with `os.environ["PATCH_ACCESS_TOKEN"]`; drop scopes it does not use.
    """
    facts = _facts(ctx)
    auth = ctx.get("external_auth", default=[])
    if not isinstance(auth, list):
        return  # PT022 reports the wrong type
    has_auth = isinstance(auth, list) and len(auth) > 0
    if facts.token_uses and not has_auth:
        yield _body_diag(
            ctx,
            "PT044",
            "the body reads PATCH_ACCESS_TOKEN but `external_auth` is empty, so the runtime injects "
            "no token: declare the scopes it needs, e.g. `external_auth: [slack.send_message]`",
            facts.token_uses[0],
            field=("external_auth",),
        )
    elif has_auth and not facts.token_uses:
        yield ctx.diag(
            "PT044",
            f"`external_auth` declares {_names([str(a) for a in auth])} but the body never reads "
            'PATCH_ACCESS_TOKEN: read it with os.environ["PATCH_ACCESS_TOKEN"], or drop the scopes',
            "external_auth",
            severity="warning",
            key=True,
        )


@rule(
    "PT045",
    "irreversible-without-confirm",
    family="body",
    summary="an irreversible action with `human_confirm: false`",
    needs_body=True,
)
def irreversible_without_confirm(ctx: LintContext) -> Iterator[Diagnostic]:
    """The body does something that cannot be taken back (send, post, delete, remove, drop,
    transfer, pay, publish, HTTP POST/PUT/PATCH/DELETE, destructive SQL, or file writes with
    `filesystem: read-write`) while `capabilities.human_confirm` is false.

    Why: an agent can be talked into calling any tool (prompt injection through a web page or
    an email is enough). With `human_confirm: true` the runtime returns
    `confirmation_required` and a person approves the exact arguments first.

    Fix: set `capabilities.human_confirm: true` (the quick fix).
    """
    if not isinstance(ctx.get("capabilities"), dict):
        return
    confirm = ctx.get("capabilities", "human_confirm", default=False)
    if confirm is not False:
        return
    facts = _facts(ctx)
    actions: list[tuple[ast.AST, str]] = [(u.node, u.what) for u in facts.irreversible]
    if ctx.get("capabilities", "filesystem") == "read-write":
        seen = {id(n) for n, _ in actions}
        actions += [
            (u.node, u.what)
            for u in facts.file_access
            if u.kind in ("write", "delete", "move") and id(u.node) not in seen
        ]
    if not actions:
        return
    actions.sort(key=lambda a: (getattr(a[0], "lineno", 0), getattr(a[0], "col_offset", 0)))
    node, what = actions[0]
    more = ""
    if len(actions) > 1:
        lines = sorted({getattr(n, "lineno", 0) for n, _ in actions[1:]})
        more = f" (and {len(actions) - 1} more, line{'s' if len(lines) > 1 else ''} {', '.join(map(str, lines))})"
    yield _body_diag(
        ctx,
        "PT045",
        f"`{what}` is an irreversible action{more} but `capabilities.human_confirm` is false: set "
        "`human_confirm: true` so a person approves each call",
        node,
        severity="warning",
        fix=_set_value(ctx, "Set capabilities.human_confirm: true", ("capabilities", "human_confirm"), True, safe=True),
            field=("capabilities", "human_confirm"),
    )


@rule(
    "PT046",
    "tainted-input",
    family="body",
    summary="an input that carries outside content without `tainted_ok: true`",
)
def tainted_input(ctx: LintContext) -> Iterator[Diagnostic]:
    """An input whose name says it carries outside content (url, html, text, content, body,
    query, message, email, ...) without `tainted_ok: true`.

    Why: the runtime blocks data that came from untrusted sources (web pages, emails, other
    tools' output) from flowing into inputs not marked `tainted_ok`, so the tool fails exactly
    when an agent uses it as intended. Marking it is a security decision: the code must treat
    the value as data, never as instructions, a command or a path to trust.

    Fix: after checking the code handles hostile values safely, set `tainted_ok: true` on the
    input (the quick fix, offered in the editor only); otherwise rename the input if it does
    not carry outside content.
    """
    for index, name, raw in _inputs(ctx):
        if raw.get("tainted_ok") is True or raw.get("type", "string") not in CONTENT_TYPES:
            continue
        ws = words(name)
        hits = [w for w in ws if w in TAINT_WORDS]
        if not hits or ws[-1] in NOT_CONTENT_HEADS:
            continue
        yield ctx.diag(
            "PT046",
            f"input `{name}` looks like it carries outside content ({hits[0]}), and the runtime "
            "blocks untrusted data from inputs without `tainted_ok: true`: set it once the code "
            "treats the value as data only",
            "inputs",
            index,
            "name",
            severity="warning",
            fix=_set_value(ctx, f"Set `tainted_ok: true` on input `{name}`", ("inputs", index, "tainted_ok"), True, safe=False),
        )


def _is_stub(body: list[ast.stmt]) -> bool:
    """Only a docstring, `pass`, `...`, plain assignments, and a final
    `raise NotImplementedError` (what `patch-tui import` writes)."""
    def trivial(stmt: ast.stmt) -> bool:
        return isinstance(stmt, ast.Pass) or (
            isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
        )

    if all(trivial(s) for s in body):
        return True
    last = body[-1]
    if not isinstance(last, ast.Raise) or last.exc is None:
        return False
    exc = last.exc.func if isinstance(last.exc, ast.Call) else last.exc
    if not (isinstance(exc, ast.Name) and exc.id == "NotImplementedError"):
        return False
    return all(trivial(s) or isinstance(s, ast.Assign) for s in body[:-1])


@rule(
    "PT047",
    "stub-main",
    family="body",
    summary="main() is a stub that still has to be written",
    needs_manifest=False,
    needs_body=True,
)
def stub_main(ctx: LintContext) -> Iterator[Diagnostic]:
    """main() only raises NotImplementedError (or is just `pass` / `...`): the tool is a stub,
    like the ones `patch-tui import` writes from another format's definition (info).

    Why: the manifest may be complete and correct, but every call fails until main() does the
    work. This is a reminder, not a defect.

    Fix: write main()'s body so it returns the declared output, then drop the stub comment.
    """
    main = _facts(ctx).main
    if main is not None and _is_stub(list(main.node.body)):
        yield _body_diag(
            ctx,
            "PT047",
            "main() is a stub: write its body (it returns the declared output as JSON)",
            main.node,
            severity="info",
            first_line=True,
        )


@rule(
    "PT048",
    "dynamic-import",
    family="body",
    summary="a module imported by a name the rules cannot read",
    needs_manifest=False,
    needs_body=True,
)
def dynamic_import(ctx: LintContext) -> Iterator[Diagnostic]:
    """A module imported through `__import__(...)` or `importlib.import_module(...)` (warning).

    Why: the body rules (network, files, processes, packages: PT040-PT045) read `import`
    statements. A module imported by a call is invisible to them, and one whose name is built at
    run time (`__import__("sq" + "lite3")`) cannot be known at all: the manifest's capabilities
    can no longer be checked against what the code does.

    Fix: write a plain `import sqlite3` (or `from x import y`) at the top of the file. If the
    module really is chosen at run time, review by hand that the capabilities cover every
    module it can be.
    """
    for use in _facts(ctx).dynamic_imports:
        node = use.node
        assert isinstance(node, ast.Call)
        first = node.args[0] if node.args else None
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            shown = visible(first.value[:60])
            message = (
                f"`{use.what}(\"{shown}\")` imports {shown} out of the rules' sight: write "
                f"`import {shown}` so network, file and package checks see it"
            )
        else:
            message = (
                f"`{use.what}()` imports a module whose name is computed at run time: no check "
                "can tell which module it is (network, files, processes); import it by name"
            )
        yield _body_diag(ctx, "PT048", message, node, severity="warning")


@rule(
    "PT049",
    "module-dunder-assignment",
    family="body",
    summary="a module dunder like `__name__` assigned at import time",
    needs_manifest=False,
    needs_body=True,
)
def module_dunder_assignment(ctx: LintContext) -> Iterator[Diagnostic]:
    """`__name__`, `__builtins__`, `__import__` (or another module dunder) assigned at import
    time (warning).

    Why: the body rules assume Python's own meaning of these names: `__name__ = "__main__"`
    makes the `if __name__ == "__main__":` entry point run on import, and replacing
    `__builtins__` or `__import__` changes what every name and import means. Nothing the rules
    say about the entry point, imports or calls can be trusted after that.

    Fix: remove the assignment. A tool never needs to set these names.
    """
    for use in _facts(ctx).dunder_assignments:
        yield _body_diag(
            ctx,
            "PT049",
            f"`{use.what}` is assigned at import time: the entry point and import checks assume "
            "Python's own meaning of it and cannot be trusted; remove the assignment",
            use.node,
            severity="warning",
            first_line=True,
        )
