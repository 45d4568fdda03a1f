"""Helpers the body rules share: spans of code, reporting at a node, manifest fixes.

Every body rule reads the facts of one AST pass (lint/analysis/); none walks the tree again.
"""

from __future__ import annotations

import ast
from typing import Any

from patch_tui.format import toolfile as tfmod
from patch_tui.format.toolfile import Span, ToolFile
from patch_tui.lint.analysis import (
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
from patch_tui.lint.context import LintContext
from patch_tui.lint.diagnostic import Diagnostic, Fix, Severity
from patch_tui.lint.rule import Rule


def column(ctx: LintContext, line: int, offset: int) -> int:
    """A 1-based character column from an AST column (a UTF-8 byte offset)."""
    text = ctx.tf.line_text(line)
    if text.isascii():
        return offset + 1
    return len(text.encode("utf-8")[:offset].decode("utf-8", "replace")) + 1


def node_span(ctx: LintContext, node: ast.AST, *, first_line: bool = False) -> Span:
    line = getattr(node, "lineno", 1)
    col = column(ctx, line, getattr(node, "col_offset", 0))
    end_line = getattr(node, "end_lineno", None) or line
    end_offset = getattr(node, "end_col_offset", None)
    if first_line or end_offset is None:
        end_line = line
        end_col = len(ctx.tf.line_text(line).rstrip()) + 1
    else:
        end_col = column(ctx, end_line, end_offset)
    if (end_line, end_col) <= (line, col):
        end_line, end_col = line, col + 1
    return Span(line, col, end_line, end_col)


def signature_span(ctx: LintContext, main: MainInfo) -> Span:
    node = main.node
    line = node.lineno
    end_line = main.header_end_line
    return Span(
        line,
        column(ctx, line, node.col_offset),
        end_line,
        len(ctx.tf.line_text(end_line).rstrip()) + 1,
    )


def body_diag(
    ctx: LintContext,
    rule: Rule,
    message: str,
    node: ast.AST,
    *,
    severity: Severity | None = None,
    fix: Fix | None = None,
    first_line: bool = False,
    field: tuple[str | int, ...] | None = None,
) -> Diagnostic:
    """A diagnostic of `rule` at a piece of code; `field` names the manifest field it concerns,
    so the form can focus it."""
    span = node_span(ctx, node, first_line=first_line)
    return rule.at(span, message, severity=severity, fix=fix, field=field)


def facts_of(ctx: LintContext) -> BodyFacts:
    facts = ctx.body
    assert isinstance(facts, BodyFacts)
    return facts


def not_a_tool(ctx: LintContext) -> bool:
    """An empty, binary or undecodable file: PT001 says all there is to say."""
    return ctx.tf.open_index is None and not ctx.tf.text.strip()


def named_inputs(ctx: LintContext) -> list[tuple[int, str, dict[str, Any]]]:
    """(index, name, raw input) for every input that has a name; bad entries are PT01x's job."""
    raw = ctx.get("inputs")
    if not isinstance(raw, list):
        return []
    return [
        (i, item["name"], item)
        for i, item in enumerate(raw)
        if isinstance(item, dict) and isinstance(item.get("name"), str)
    ]


def quoted_names(items: list[str]) -> str:
    return ", ".join(f"`{n}`" for n in items)


def input_from_param(param: Param) -> dict[str, Any]:
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


def manifest_set(
    ctx: LintContext, title: str, changes: list[tuple[tuple[str | int, ...], Any]], *, safe: bool
) -> Fix | None:
    """A frontmatter fix that applies several field changes at once."""
    data: Any = ctx.tf.data
    if not isinstance(data, dict):
        return None
    for path, value in changes:
        data = tfmod.set_field(data, path, value)
    return ctx.frontmatter_fix(title, data, safe=safe)


def set_value(
    ctx: LintContext, title: str, path: tuple[str | int, ...], value: Any, *, safe: bool
) -> Fix | None:
    # Touches only the lines concerned, so comments elsewhere in the frontmatter survive.
    return ctx.set_value_fix(title, path, value, safe=safe)


def body_start_span(tf: ToolFile) -> Span:
    """Where the body starts; an empty body points at the closing marker, never past the end."""
    line = min(tf.body_start_line, max(len(tf.lines), 1))
    return Span(line, 1, line, 2)
