"""Helpers the manifest rules share: showing values safely, quoting, near-miss suggestions.

Manifest rules read the raw YAML data (not the pydantic model) so each problem is reported at
its own line, and several problems in one manifest are all reported at once.
"""

from __future__ import annotations

import difflib
import json
import re
from typing import Any

from patch_tui.format import yamlio
from patch_tui.format.yamlio import Path
from patch_tui.lint.context import LintContext
from patch_tui.lint.diagnostic import Fix
from patch_tui.untrusted.text_safety import visible


def show(value: Any) -> str:
    """A value as it would be written in YAML, safe to print (hidden characters made visible)."""
    if isinstance(value, str):
        return visible(value)
    return visible(json.dumps(value, ensure_ascii=False))


def node_of(ctx: LintContext, path: Path) -> yamlio.Node | None:
    return ctx.tf.nodes.get(tuple(path))


def raw_of(ctx: LintContext, path: Path) -> str | None:
    node = node_of(ctx, path)
    return node.raw if node is not None else None


def is_plain(ctx: LintContext, path: Path) -> bool:
    node = node_of(ctx, path)
    return node is not None and node.plain


def quote(text: str) -> str:
    """A YAML double-quoted scalar (JSON's escapes are valid YAML ones)."""
    return json.dumps(text, ensure_ascii=False)


def quote_fix(ctx: LintContext, path: Path, title: str | None = None) -> Fix | None:
    """Quote a plain scalar exactly as written, so every reader sees the same string."""
    node = node_of(ctx, path)
    if node is None or not node.plain or node.raw is None:
        return None
    return Fix(title or f"quote it: {quote(node.raw)}", (ctx.node_edit(path, quote(node.raw)),))


def inputs_of(ctx: LintContext) -> list[tuple[int, dict[str, Any]]]:
    inputs = ctx.get("inputs")
    if not isinstance(inputs, list):
        return []
    return [(i, inp) for i, inp in enumerate(inputs) if isinstance(inp, dict)]


def suggest(word: str, choices: tuple[str, ...] | list[str], cutoff: float = 0.7) -> list[str]:
    lowered = {c.lower(): c for c in choices}
    if word.lower() in lowered:
        return [lowered[word.lower()]]
    squashed = {re.sub(r"[-_ ]", "", c.lower()): c for c in choices}
    key = re.sub(r"[-_ ]", "", word.lower())
    if key in squashed:
        return [squashed[key]]
    return difflib.get_close_matches(word, list(choices), n=3, cutoff=cutoff)


def did_you_mean(matches: list[str]) -> str:
    if not matches:
        return ""
    return " (did you mean " + " or ".join(f"`{m}`" for m in matches) + "?)"
