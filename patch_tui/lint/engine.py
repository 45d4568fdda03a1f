"""The lint engine: diagnostics, quick fixes, the rule registry and one shared context.

A rule is a small function registered under its code with `@rule(...)`. It receives a
`LintContext` (the parsed file, its raw manifest data and one shared analysis of the body) and
yields `Diagnostic`s. Rules never raise on bad input: the engine turns a crash inside a rule into
a PT000 diagnostic so one buggy rule can never hide the others or produce a traceback.
"""

from __future__ import annotations

import ast
import traceback
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

from patch_tui.format import toolfile as tfmod
from patch_tui.format import yamlio
from patch_tui.format.toolfile import Span, ToolFile
from patch_tui.format.yamlio import Path

Severity = Literal["error", "warning", "info"]
SEVERITY_RANK: dict[str, int] = {"error": 0, "warning": 1, "info": 2}


@dataclass(frozen=True)
class Edit:
    """Replace the text between two 1-based (line, column) positions of the file."""

    line: int
    column: int
    end_line: int
    end_column: int
    new_text: str


@dataclass(frozen=True)
class Fix:
    """A quick fix: what it does, and the edits that do it.

    `safe` fixes keep the tool's meaning (or only make a declaration honest) and are applied by
    `patch-tui lint --fix`; unsafe ones are offered in the TUI only.
    """

    title: str
    edits: tuple[Edit, ...]
    safe: bool = True


@dataclass(frozen=True)
class Diagnostic:
    code: str
    severity: Severity
    message: str
    span: Span
    fix: Fix | None = None
    field: Path | None = None  # the manifest field concerned, for the form to focus
    path: str | None = None  # the file, filled in by lint_file

    @property
    def line(self) -> int:
        return self.span.line

    @property
    def column(self) -> int:
        return self.span.column

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": self.path,
            "code": self.code,
            "severity": self.severity,
            "line": self.span.line,
            "column": self.span.column,
            "end_line": self.span.end_line,
            "end_column": self.span.end_column,
            "message": self.message,
        }
        if self.fix is not None:
            out["fix"] = {
                "title": self.fix.title,
                "safe": self.fix.safe,
                "edits": [
                    {
                        "line": e.line,
                        "column": e.column,
                        "end_line": e.end_line,
                        "end_column": e.end_column,
                        "new_text": e.new_text,
                    }
                    for e in self.fix.edits
                ],
            }
        return out


RuleFunc = Callable[["LintContext"], Iterable[Diagnostic]]


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    family: str
    summary: str
    func: RuleFunc
    needs_manifest: bool = True  # skip when the frontmatter could not be read
    needs_body: bool = False  # skip when the body is not valid Python


RULES: dict[str, Rule] = {}


def rule(
    code: str,
    name: str,
    *,
    family: str,
    summary: str,
    needs_manifest: bool = True,
    needs_body: bool = False,
) -> Callable[[RuleFunc], RuleFunc]:
    """Register a rule function under its (stable, public) code."""

    def register(func: RuleFunc) -> RuleFunc:
        if code in RULES:
            raise ValueError(f"rule code {code} registered twice")
        RULES[code] = Rule(code, name, family, summary, func, needs_manifest, needs_body)
        return func

    return register


@dataclass
class LintContext:
    """Everything a rule may look at, computed once per file."""

    tf: ToolFile

    @property
    def data(self) -> dict[str, Any]:
        return self.tf.data if isinstance(self.tf.data, dict) else {}

    def get(self, *path: str | int, default: Any = None) -> Any:
        """A raw manifest value by path, or `default` when absent or the path breaks."""
        # Called tens of times per file by the rules: exact type checks, no property lookups.
        value: Any = self.tf.data
        if type(value) is not dict:
            return default
        for step in path:
            kind = type(value)
            if kind is dict and type(step) is str and step in value:
                value = value[step]
            elif kind is list and type(step) is int and 0 <= step < len(value):
                value = value[step]
            else:
                return default
        return value

    def span(self, *path: str | int, key: bool = False) -> Span:
        """The span of a manifest value (or key); the nearest existing ancestor otherwise."""
        if not path:
            return self.tf.frontmatter_span()
        found = self.tf.span_of(path, key=key)
        return found if found is not None else self.tf.nearest_span(path)

    def diag(
        self,
        code: str,
        message: str,
        *path: str | int,
        severity: Severity = "error",
        key: bool = False,
        fix: Fix | None = None,
        span: Span | None = None,
    ) -> Diagnostic:
        """A diagnostic pointing at a manifest field."""
        return Diagnostic(
            code,
            severity,
            message,
            span if span is not None else self.span(*path, key=key),
            fix,
            tuple(path) if path else None,
        )

    # -- the body ---------------------------------------------------------------------------

    @cached_property
    def body_tree(self) -> ast.Module | None:
        """The body parsed as Python, with line numbers relative to the whole file."""
        if not self.tf.has_frontmatter and self.tf.open_index is not None:
            return None
        source = self.tf.body
        # Pad with newlines so AST line numbers are file line numbers.
        offset = self.tf.body_start_line - 1
        try:
            return ast.parse("\n" * offset + source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None

    @cached_property
    def body(self) -> Any:
        """One pass over the body's AST, shared by every body rule (see lint/body.py)."""
        from patch_tui.lint.body import analyse

        return analyse(self.body_tree) if self.body_tree is not None else None

    # -- fixes ------------------------------------------------------------------------------

    def frontmatter_fix(self, title: str, new_data: dict[str, Any], *, safe: bool = True) -> Fix | None:
        """A fix that rewrites the frontmatter lines with new manifest data (canonical style)."""
        tf = self.tf
        if not tf.has_frontmatter:
            return None
        lines = tf.frontmatter_lines
        new_text = tfmod.render_frontmatter(new_data, tf.newline)
        start = lines.start + 1  # 1-based first frontmatter line
        return Fix(title, (Edit(start, 1, lines.stop + 1, 1, new_text),), safe)

    def set_value_fix(
        self, title: str, path: Path, value: Any, *, safe: bool = True
    ) -> Fix | None:
        """A fix that sets one manifest field, touching as few lines as it can.

        A scalar already there is replaced in place; a missing key of a block mapping gets new
        lines after its last sibling (so comments elsewhere in the frontmatter survive). Anything
        else (flow style, a new mapping) falls back to re-rendering the frontmatter.
        """
        tf = self.tf
        path = tuple(path)
        node = tf.nodes.get(path)
        one_line = not (isinstance(value, str) and "\n" in value)
        if node is not None and not isinstance(value, dict | list) and one_line and (
            node.raw is not None and node.start.line == node.end.line
        ):
            return Fix(title, (self.node_edit(path, scalar_text(value)),), safe)
        edit = self._insert_key_edit(path, value) if node is None else None
        if edit is not None:
            return Fix(title, (edit,), safe)
        if not isinstance(self.tf.data, dict):
            return None
        return self.frontmatter_fix(title, tfmod.set_field(self.tf.data, path, value), safe=safe)

    def node_edit(self, path: Path, new_text: str, *, key: bool = False) -> Edit:
        """An edit replacing exactly a value's (or its key's) text in the file."""
        node = self.tf.nodes[tuple(path)]
        start, end = (node.key_start, node.key_end) if key else (node.start, node.end)
        assert start is not None and end is not None
        line, col = self.tf.yaml_pos_to_file(start)
        end_line, end_col = self.tf.yaml_pos_to_file(end)
        return Edit(line, col, end_line, end_col, new_text)

    def _insert_key_edit(self, path: Path, value: Any) -> Edit | None:
        parent_path, key = path[:-1], path[-1]
        parent = self.get(*parent_path)
        if not isinstance(parent, dict) or not isinstance(key, str) or not parent:
            return None
        tf = self.tf
        yaml_lines = tf.yaml_text.split("\n")
        parent_node = tf.nodes.get(parent_path)
        if parent_node is not None:
            row = yaml_lines[parent_node.start.line] if parent_node.start.line < len(yaml_lines) else ""
            if row[parent_node.start.column : parent_node.start.column + 1] == "{":
                return None  # flow style: a new line would break it
        last = tf.nodes.get((*parent_path, list(parent)[-1]))
        if last is None or last.key_start is None or tf.open_index is None:
            return None
        indent = " " * last.key_start.column
        # A block value ends at column 0 of the line after it; a scalar ends on its own line.
        yaml_line = last.end.line if last.end.column == 0 else last.end.line + 1
        rendered = _dump_cached({key: value})
        nl = tf.newline
        text = "".join(f"# {indent}{row}{nl}" for row in rendered.splitlines())
        file_line = tf.open_index + 2 + yaml_line
        return Edit(file_line, 1, file_line, 1, text)


def scalar_text(value: Any) -> str:
    """A scalar as the canonical writer would put it after `key: `."""
    if value is True or value is False or value is None:
        return {True: "true", False: "false", None: "null"}[value]
    if type(value) is int:
        return str(value)
    return _dump_cached({"k": value})[3:].rstrip("\n")


_DUMP_CACHE: dict[str, str] = {}


def _dump_cached(data: Any) -> str:
    """yamlio.dump, remembered: quick fixes render the same few values in file after file, and
    the pure-Python emitter is a visible share of linting a folder."""
    import json

    try:
        key = json.dumps(data, sort_keys=False, ensure_ascii=False)
    except (TypeError, ValueError):
        return yamlio.dump(data)
    found = _DUMP_CACHE.get(key)
    if found is None:
        if len(_DUMP_CACHE) > 512:
            _DUMP_CACHE.clear()
        found = _DUMP_CACHE[key] = yamlio.dump(data)
    return found


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    """Apply non-overlapping edits (1-based positions) to text; later edits first."""
    lines = tfmod._split_lines(text)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(line: int, column: int) -> int:
        if line - 1 >= len(lines):
            return len(text)
        return min(starts[line - 1] + column - 1, starts[line])

    ordered = sorted(edits, key=lambda e: (e.line, e.column), reverse=True)
    for e in ordered:
        a, b = offset(e.line, e.column), offset(e.end_line, e.end_column)
        text = text[:a] + e.new_text + text[b:]
    return text


# --- running -------------------------------------------------------------------------------


def _load_rules() -> None:
    # Importing the rule modules registers their rules.
    from patch_tui.lint import rules_body, rules_manifest, rules_text  # noqa: F401


def selected_rules(select: Iterable[str] = (), ignore: Iterable[str] = ()) -> list[Rule]:
    """Rules chosen by code prefixes, like ruff's --select/--ignore (PT04 selects PT040-PT046)."""
    _load_rules()
    sel = [s.strip().upper() for s in select if s.strip()]
    ign = [s.strip().upper() for s in ignore if s.strip()]
    out = []
    for code in sorted(RULES):
        if sel and not any(code.startswith(s) for s in sel):
            continue
        if any(code.startswith(i) for i in ign):
            continue
        out.append(RULES[code])
    return out


def lint_toolfile(tf: ToolFile, rules: list[Rule] | None = None) -> list[Diagnostic]:
    """All diagnostics for a parsed file, sorted by position then severity."""
    rules = rules if rules is not None else selected_rules()
    codes = {r.code for r in rules}
    ctx = LintContext(tf)
    out: list[Diagnostic] = []
    for problem in tf.problems:
        if problem.code in codes:
            fix = None
            if problem.code == "PT001":
                from patch_tui.lint.rules_manifest import starter_manifest_fix

                fix = starter_manifest_fix(tf)
            out.append(Diagnostic(problem.code, "error", problem.message, problem.span, fix=fix))
    manifest_ok = isinstance(tf.data, dict)
    for r in rules:
        if r.needs_manifest and not manifest_ok:
            continue
        if r.needs_body and ctx.body_tree is None:
            continue
        try:
            out.extend(r.func(ctx))
        except Exception:  # a bug in a rule must never hide the others
            last = traceback.format_exc().strip().splitlines()[-1]
            out.append(
                Diagnostic("PT000", "error", f"internal error in rule {r.code}: {last}", Span(1, 1, 1, 2))
            )
    if tf.path is not None:
        out = [d if d.path else _with_path(d, tf.path) for d in out]
    out.sort(key=lambda d: (d.span.line, d.span.column, SEVERITY_RANK[d.severity], d.code))
    return out


def _with_path(d: Diagnostic, path: str) -> Diagnostic:
    return Diagnostic(d.code, d.severity, d.message, d.span, d.fix, d.field, path)


def lint_text(text: str, path: str | None = None, rules: list[Rule] | None = None) -> list[Diagnostic]:
    return lint_toolfile(tfmod.parse(text, path=path), rules)


def fix_text(text: str, rules: list[Rule] | None = None, *, max_rounds: int = 25) -> tuple[str, int]:
    """Apply safe fixes until none are left (each round re-lints). Returns (text, fixes applied).

    One fix is applied per round when fixes overlap, and at most one fix to the frontmatter:
    two fixes that each add or rename a key of one mapping (PT004 renaming `human_confirn`,
    PT045 adding `human_confirm`) do not overlap as text, yet together would write the key
    twice. Every fix sees the text the previous one produced.
    """
    applied = 0
    for _ in range(max_rounds):
        tf = tfmod.parse(text)
        diags = lint_toolfile(tf, rules)
        fixes = [d.fix for d in diags if d.fix is not None and d.fix.safe]
        if not fixes:
            break
        # 1-based lines of the frontmatter, markers included.
        fm_lines = range(
            (tf.open_index or 0) + 1, (tf.close_index if tf.close_index is not None else -1) + 2
        )
        frontmatter_fixed = False
        chosen: list[Edit] = []
        taken: list[tuple[tuple[int, int], tuple[int, int]]] = []
        for fx in fixes:
            in_frontmatter = any(e.line in fm_lines or e.end_line in fm_lines for e in fx.edits)
            if in_frontmatter and frontmatter_fixed:
                continue
            ranges = [((e.line, e.column), (e.end_line, e.end_column)) for e in fx.edits]
            # Ranges that overlap or touch conflict: two fixes inserting at one point (each
            # adding `human_confirm:` to capabilities, say) would write the key twice. The
            # second waits for the next round, which sees the first one's text.
            if any(a <= d and c <= b for a, b in ranges for c, d in taken):
                continue
            taken.extend(ranges)
            chosen.extend(fx.edits)
            frontmatter_fixed = frontmatter_fixed or in_frontmatter
            applied += 1
        new = apply_edits(text, chosen)
        if new == text:
            break
        text = new
    return text, applied


def iter_codes() -> Iterator[Rule]:
    _load_rules()
    yield from (RULES[c] for c in sorted(RULES))
