"""PT014-PT016: input types, array items, duplicate inputs."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from patch_tui.format.fields import (
    json_type,
    spec,
)
from patch_tui.format.yamlio import Path
from patch_tui.lint.context import LintContext
from patch_tui.lint.diagnostic import Diagnostic, Fix
from patch_tui.lint.rule import Rule
from patch_tui.lint.rules.manifest.helpers import did_you_mean, inputs_of, show, suggest

# Type names people write out of habit, mapped to the JSON type they mean.
# The types each place takes, from the field table (format/fields.py).
_INPUT_TYPE_CHOICES = spec("inputs[].type").choices
_OUTPUT_TYPE_CHOICES = spec("outputs.type").choices
_ITEM_TYPE_CHOICES = spec("items.type").choices

_TYPE_ALIASES = {
    "str": "string",
    "text": "string",
    "int": "integer",
    "float": "number",
    "double": "number",
    "bool": "boolean",
    "list": "array",
    "dict": "object",
    "map": "object",
}


PT014 = Rule(
    "PT014",
    "bad-input-type",
    family="manifest",
    summary="an input type is not a JSON type",
    fix="sometimes",
)


@PT014.check
def bad_input_type(ctx: LintContext) -> Iterator[Diagnostic]:
    """An input's type (or an `items` or `outputs` type) is not string, number, integer,
    boolean, array or object.

    Why: the runtime and every AI host turn these types into a JSON Schema; Python names like
    `str` or `int` mean nothing there, so the tool is rejected or gets unchecked arguments.

    Fix: use the JSON name: `str` -> `string`, `int` -> `integer`, `float` -> `number`, `bool` ->
    `boolean`, `list` -> `array`, `dict` -> `object` (the quick fix does this).
    """
    targets: list[tuple[Path, tuple[str, ...]]] = []
    for i, _inp in inputs_of(ctx):
        targets.append((("inputs", i, "type"), _INPUT_TYPE_CHOICES))
        targets.append((("inputs", i, "items", "type"), _ITEM_TYPE_CHOICES))
    targets.append((("outputs", "type"), _OUTPUT_TYPE_CHOICES))
    targets.append((("outputs", "items", "type"), _ITEM_TYPE_CHOICES))
    if isinstance(ctx.get("outputs", "items"), str):
        targets.append((("outputs", "items"), _ITEM_TYPE_CHOICES))
    for path, allowed in targets:
        value = ctx.get(*path)
        if not isinstance(value, str) or value in allowed:
            continue
        alias = _TYPE_ALIASES.get(value.lower())
        matches = [alias] if alias else suggest(value, allowed)
        fix = None
        if len(matches) == 1 and tuple(path) in ctx.tf.nodes:
            fix = Fix(
                f"use `{matches[0]}`",
                (ctx.node_edit(path, matches[0]),),
                safe=alias is not None or value.lower() == matches[0],
            )
        yield PT014.diag(
            ctx,
            f"type `{show(value)}` is not a JSON type{did_you_mean(matches)}: use one of "
            + ", ".join(allowed),
            *path,
            fix=fix,
        )


def _infer_items_type(default: Any) -> str:
    kinds = {json_type(v) for v in default} if isinstance(default, list) and default else set()
    return kinds.pop() if len(kinds) == 1 else "string"


PT015 = Rule(
    "PT015",
    "array-without-items",
    family="manifest",
    summary="an array input without items",
    severity="warning",
    fix="sometimes",
)


@PT015.check
def array_without_items(ctx: LintContext) -> Iterator[Diagnostic]:
    """An input of type `array` without `items`.

    Why: hosts build a JSON Schema from the inputs, and an array schema without `items` lets the
    AI send anything in it (strict hosts reject the tool outright). The runtime accepts it and
    lists the array as declared (its own generator writes such tools), so this is a warning.

    Fix: declare the element type, e.g. `items: {type: string}`. The quick fix adds
    `items: {type: string}`, or the type of the default's elements.
    """
    for i, inp in inputs_of(ctx):
        if inp.get("type") == "array" and "items" not in inp:
            kind = _infer_items_type(inp.get("default"))
            fix = ctx.set_value_fix(
                f"add `items: {{type: {kind}}}`", ("inputs", i, "items"), {"type": kind}
            )
            yield PT015.diag(
                ctx,
                f"array input `{show(inp.get('name', i))}` has no `items`: add `items: {{type: {kind}}}` "
                "(or the type of its elements)",
                "inputs",
                i,
                "type",
                severity="warning",
                fix=fix,
            )


PT016 = Rule("PT016", "duplicate-input", family="manifest", summary="two inputs share a name")


@PT016.check
def duplicate_input(ctx: LintContext) -> Iterator[Diagnostic]:
    """Two inputs share a name.

    Why: inputs become keyword arguments of `main()` and properties of a JSON object: a name can
    only appear once, and which declaration wins depends on the reader.

    Fix: rename one of them (and the matching `main()` parameter), or remove the duplicate.
    """
    seen: dict[str, int] = {}
    for i, inp in inputs_of(ctx):
        name = inp.get("name")
        if not isinstance(name, str):
            continue
        if name in seen:
            line = ctx.span("inputs", seen[name], "name").line
            yield PT016.diag(
                ctx,
                f"input `{show(name)}` is declared twice (first on line {line}): rename or remove one",
                "inputs",
                i,
                "name",
            )
        else:
            seen[name] = i
