"""PT004: an unknown field, with "did you mean" for near misses."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from patch_tui.format.fields import (
    CAPABILITY_FIELDS,
    INPUT_FIELDS,
    OUTPUT_FIELDS,
    RUNTIME_FIELDS,
    TOP_LEVEL_FIELDS,
    fields_of,
)
from patch_tui.format.yamlio import Path
from patch_tui.lint.context import LintContext
from patch_tui.lint.diagnostic import Diagnostic, Fix
from patch_tui.lint.rule import Rule
from patch_tui.lint.rules.manifest.helpers import did_you_mean, inputs_of, show, suggest

_ITEM_FIELDS: tuple[str, ...] = tuple(f.key for f in fields_of("items"))


def _mappings(ctx: LintContext) -> Iterator[tuple[Path, dict[str, Any], tuple[str, ...], str]]:
    """Every mapping of the manifest with its known keys and a name for messages."""
    yield (), ctx.data, TOP_LEVEL_FIELDS, "the manifest"
    for i, inp in inputs_of(ctx):
        yield ("inputs", i), inp, INPUT_FIELDS, "input"
        if isinstance(inp.get("items"), dict):
            yield ("inputs", i, "items"), inp["items"], _ITEM_FIELDS, "items"
    for key, fields in (
        ("outputs", OUTPUT_FIELDS),
        ("capabilities", CAPABILITY_FIELDS),
        ("runtime", RUNTIME_FIELDS),
    ):
        value = ctx.get(key)
        if isinstance(value, dict):
            yield (key,), value, fields, f"`{key}`"
    items = ctx.get("outputs", "items")
    if isinstance(items, dict):
        yield ("outputs", "items"), items, _ITEM_FIELDS, "`outputs.items`"


PT004 = Rule(
    "PT004",
    "unknown-field",
    family="manifest",
    summary="an unknown field",
    severity="warning",
    fix="sometimes",
)


@PT004.check
def unknown_field(ctx: LintContext) -> Iterator[Diagnostic]:
    """An unknown field, at any level of the manifest, with "did you mean" for near misses.

    Why: the Patch runtime ignores fields it does not know, so a typo like `human_confrim: true`
    silently leaves the safe default in place: the tool runs without the confirmation you asked
    for. Unknown fields also make the manifest harder to read for reviewers and other tools.

    Fix: rename the field to the suggested one (`patch-tui lint --fix` does it when there is a
    single obvious suggestion), or remove it.
    """
    for path, mapping, known, where in _mappings(ctx):
        for key in mapping:
            if key in known:
                continue
            matches = [m for m in suggest(str(key), known) if m not in mapping]
            fix = None
            if len(matches) == 1 and (*path, key) in ctx.tf.nodes:
                fix = Fix(
                    f"rename `{show(key)}` to `{matches[0]}`",
                    (ctx.node_edit((*path, key), matches[0], key=True),),
                )
            if where == "input":  # named only when needed: most manifests have no unknown field
                where = f"input `{show(mapping.get('name', path[-1]))}`"
            hint = did_you_mean(matches) or f": {where} has only " + ", ".join(
                f"`{k}`" for k in known
            )
            yield PT004.diag(
                ctx,
                f"unknown field `{show(key)}` in {where}{hint}",
                *path,
                key,
                severity="warning",
                key=True,
                fix=fix,
            )
