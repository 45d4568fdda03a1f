"""The one context every rule reads: the parsed file, its raw manifest data, the body's facts
(one AST pass, shared by all body rules) and the helpers that build quick fixes."""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from patch_tui.format import toolfile as tfmod
from patch_tui.format import yamlio
from patch_tui.format.toolfile import Span, ToolFile
from patch_tui.format.yamlio import Path
from patch_tui.lint.diagnostic import Edit, Fix

if TYPE_CHECKING:
    from patch_tui.lint.analysis import BodyFacts


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
            tree = ast.parse("\n" * offset + source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        table = python_lines("\n" * offset + source)
        if table is not None:
            _to_file_positions(tree, table)
        return tree

    @cached_property
    def body(self) -> BodyFacts | None:
        """One pass over the body's AST, shared by every body rule (see lint/analysis/)."""
        # Imported on the first body rule, not with the engine: the desk imports the engine
        # before its first frame, and the AST pass is not needed until the first lint.
        from patch_tui.lint.analysis import analyse

        return analyse(self.body_tree) if self.body_tree is not None else None

    # -- fixes ------------------------------------------------------------------------------

    def frontmatter_fix(
        self, title: str, new_data: dict[str, Any], *, safe: bool = True
    ) -> Fix | None:
        """A fix that rewrites the frontmatter lines with new manifest data (canonical style)."""
        tf = self.tf
        if not tf.has_frontmatter:
            return None
        lines = tf.frontmatter_lines
        new_text = tfmod.render_frontmatter(new_data, tf.newline)
        start = lines.start + 1  # 1-based first frontmatter line
        return Fix(title, (Edit(start, 1, lines.stop + 1, 1, new_text),), safe)

    def set_value_fix(self, title: str, path: Path, value: Any, *, safe: bool = True) -> Fix | None:
        """A fix that sets one manifest field, touching as few lines as it can.

        A scalar already there is replaced in place; a missing key of a block mapping gets new
        lines after its last sibling (so comments elsewhere in the frontmatter survive). Anything
        else (flow style, a new mapping) falls back to re-rendering the frontmatter.
        """
        tf = self.tf
        path = tuple(path)
        node = tf.nodes.get(path)
        one_line = not (isinstance(value, str) and "\n" in value)
        if (
            node is not None
            and not isinstance(value, dict | list)
            and one_line
            and (node.raw is not None and node.start.line == node.end.line)
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
            row = (
                yaml_lines[parent_node.start.line]
                if parent_node.start.line < len(yaml_lines)
                else ""
            )
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


_PY_LINE_END = re.compile(r"\r\n|\r|\n")


def python_lines(source: str) -> list[tuple[int, int, int]] | None:
    """Where each of Python's lines starts in the file's lines, or None when they are the same.

    Python ends a line at a lone \\r too; the runtime (and so the file's line numbers, as lint
    reports them) does not. Entry i (1-based, entry 0 unused) is (file line, UTF-8 bytes and
    characters of that file line before Python's line i starts)."""
    if tfmod.lone_carriage_return(source) is None:
        return None
    table = [(0, 0, 0)]
    line, prefix_bytes, prefix_chars, start = 1, 0, 0, 0
    for end in _PY_LINE_END.finditer(source):
        table.append((line, prefix_bytes, prefix_chars))
        if end.group() == "\r":  # the same line to the file: Python's next line is further on it
            piece = source[start : end.end()]
            prefix_bytes += len(piece.encode("utf-8"))
            prefix_chars += len(piece)
        else:
            line, prefix_bytes, prefix_chars = line + 1, 0, 0
        start = end.end()
    table.append((line, prefix_bytes, prefix_chars))
    return table


def _to_file_positions(tree: ast.AST, table: list[tuple[int, int, int]]) -> None:
    """Give the tree's positions in the file's lines (see python_lines)."""
    last = len(table) - 1
    for node in ast.walk(tree):
        lineno = getattr(node, "lineno", None)
        if lineno is not None:
            file_line, prefix, _ = table[min(lineno, last)]
            node.lineno = file_line  # type: ignore[attr-defined]
            node.col_offset += prefix  # type: ignore[attr-defined]
        end_lineno = getattr(node, "end_lineno", None)
        if end_lineno is not None:
            file_line, prefix, _ = table[min(end_lineno, last)]
            node.end_lineno = file_line  # type: ignore[attr-defined]
            if getattr(node, "end_col_offset", None) is not None:
                node.end_col_offset += prefix  # type: ignore[attr-defined]


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
