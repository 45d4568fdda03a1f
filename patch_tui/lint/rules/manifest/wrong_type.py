"""PT022: a field of the wrong type as the Patch runtime's YAML reader reads it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from patch_tui.format import yamlio
from patch_tui.format.fields import (
    INPUT_TYPES,
    REQUIRED_FIELDS,
    YAML_KINDS,
    fits_json_type,
)
from patch_tui.format.toolfile import ProblemCode
from patch_tui.format.yamlio import Path
from patch_tui.lint.context import LintContext
from patch_tui.lint.diagnostic import Diagnostic, Fix
from patch_tui.lint.rule import Rule
from patch_tui.lint.rules.manifest.helpers import quote, quote_fix, show
from patch_tui.untrusted.text_safety import visible

_STR, _BOOL, _LIST, _DICT, _ANY = "string", "boolean", "list", "mapping", "any"


def _kinds(group: str) -> dict[str, str]:
    """The YAML shape each field of a group must have, from the field table (format/fields.py)."""
    kinds = dict(YAML_KINDS[group])
    if group == "runtime":
        # PT023 owns python_version: a number there gets its own message and fix.
        kinds["python_version"] = _ANY
    return kinds


_TOP_TYPES = _kinds("")
_INPUT_TYPES = _kinds("inputs[]")
_OUTPUT_TYPES = _kinds("outputs")
_CAP_TYPES = _kinds("capabilities")
_RUNTIME_TYPES = _kinds("runtime")
_ITEMS_TYPES = _kinds("items")
# Required mappings left empty (`outputs:`) are reported as such, not as a wrong type.
_REQUIRED_MAPPINGS = frozenset(
    k for k, kind in _TOP_TYPES.items() if kind == _DICT and k in REQUIRED_FIELDS
)


# The first characters of every plain scalar YAML 1.1 reads as a bool, null, number or date.
_YAML11_NUMBER_START = frozenset("0123456789+-.~")


_YAML11_WORD_START = frozenset("yYnNtTfFoO")


def _type_name(value: Any) -> str:
    if value is None:
        return "empty"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return "a string"


_FINE_TYPES = {(_BOOL, bool), (_LIST, list), (_DICT, dict)}


def _fine(value: Any, expected: str) -> bool:
    """The quick answer for nearly every value of a real manifest (checked before building the
    generator and the label of _check_value)."""
    kind = type(value)
    if kind is str:
        if expected != _STR:
            return False
        if not value:
            return True
        first = value[0]
        # YAML 1.1 reads numbers and dates (a digit, sign, dot) and words of at most five
        # letters (yes, no, on, off, true, False, null, y, n) as non-strings.
        if first in _YAML11_NUMBER_START:
            return False
        return first not in _YAML11_WORD_START or len(value) > 5
    return (expected, kind) in _FINE_TYPES


def _check_value(
    ctx: LintContext, path: Path, value: Any, expected: str, label: str
) -> Iterator[Diagnostic]:
    if _fine(value, expected):
        return
    kind = type(value)
    node = ctx.tf.nodes.get(tuple(path))
    raw = node.raw if node is not None else None
    plain = node.plain if node is not None else False
    if expected == _STR and kind is str and not plain:
        return
    shown = show(raw if raw is not None else value)
    if expected == _STR:
        if isinstance(value, str):
            # The runtime reads a string, as meant (`generated_at: 2026-05-04T12:34:56Z`, a
            # description `yes`): its own writer leaves these unquoted or quotes them itself.
            return
        elif value is None and plain and raw:
            yield PT022.diag(
                ctx,
                f"`{label}: {shown}` is read as null, not a string: quote it: {quote(raw)}",
                *path,
                fix=quote_fix(ctx, path),
            )
        elif value is None:
            if path != ("description",):  # PT013 reports an empty description
                yield PT022.diag(ctx, f"`{label}` is empty: give it a value", *path)
        elif path == ("version",) and plain and raw and re.fullmatch(r"\d+(\.\d+)?", raw):
            # `version: 1.0` is a number; quoting alone would leave a non-semver "1.0".
            guess = ".".join(str(int(p)) for p in (raw.split(".") + ["0", "0"])[:3])
            yield PT022.diag(
                ctx,
                f"`version: {shown}` is read as a number, not a string: write it as x.y.z: {guess}",
                *path,
                fix=Fix(f"write {guess}", (ctx.node_edit(path, guess),)),
            )
        elif isinstance(value, bool | int | float) and plain and raw is not None:
            yield PT022.diag(
                ctx,
                f"`{label}: {shown}` is read as {_type_name(value)}, not a string: quote it: {quote(raw)}",
                *path,
                fix=quote_fix(ctx, path),
            )
        else:
            yield PT022.diag(ctx, f"`{label}` must be a string, not {_type_name(value)}", *path)
    elif expected == _BOOL:
        if isinstance(value, bool):
            return
        if isinstance(value, str) and plain and yamlio.YAML11_BOOL_RE.match(value):
            meant = value.lower() in ("y", "yes", "true", "on")
            word = "true" if meant else "false"
            yield PT022.diag(
                ctx,
                f'`{label}: {shown}`: the Patch runtime reads it as the string "{visible(value)}", '
                f"not a boolean: write {word}",
                *path,
                fix=ctx.set_value_fix(f"write {word}", path, meant),
            )
        elif isinstance(value, str) and not plain and value.strip().lower() in ("true", "false"):
            word = value.strip().lower()
            yield PT022.diag(
                ctx,
                f"`{label}` is the string {quote(value)} in quotes, not a boolean: write {word} without quotes",
                *path,
                fix=ctx.set_value_fix(f"write {word}", path, word == "true"),
            )
        else:
            yield PT022.diag(
                ctx, f"`{label}: {shown}` must be true or false, not {_type_name(value)}", *path
            )
    elif expected == _LIST:
        if isinstance(value, list):
            return
        fix = None
        if value is None:
            fix = ctx.set_value_fix("write []", path, [])
            message = f"`{label}` is empty: write `{label}: []` for none"
        elif isinstance(value, str):
            fix = ctx.set_value_fix(f"make it a list: [{visible(value)}]", path, [value])
            message = f"`{label}` must be a list: write [{shown}]"
        else:
            message = f"`{label}` must be a list, not {_type_name(value)}"
        yield PT022.diag(ctx, message, *path, fix=fix)
    elif expected == _DICT:
        if isinstance(value, dict):
            return
        fix = None
        if isinstance(value, str) and value in INPUT_TYPES and path[-1] == "items":
            fix = ctx.set_value_fix(f"write {{type: {value}}}", path, {"type": value})
            message = f"`{label}` must be a mapping: write `{label}: {{type: {value}}}`"
        else:
            message = f"`{label}` must be a mapping of fields, not {_type_name(value)}"
        yield PT022.diag(ctx, message, *path, fix=fix)


def _check_fields(
    ctx: LintContext, base: Path, mapping: dict[str, Any], types: dict[str, str], where: str
) -> Iterator[Diagnostic]:
    for key, expected in types.items():
        if key in mapping and expected != _ANY and not _fine(mapping[key], expected):
            label = f"{where}.{key}" if where else key
            yield from _check_value(ctx, (*base, key), mapping[key], expected, label)


PT022 = Rule(
    ProblemCode.WRONG_TYPE,
    "wrong-type",
    family="manifest",
    summary="a field of the wrong type as the runtime reads it (`no` is a string, `1.0` a number)",
    # Errors only: since the runtime's reading decides (issue 15), a value it reads as meant is
    # no longer warned about, however a YAML 1.1 reader would take it.
    fix="sometimes",
)


@PT022.check
def wrong_type(ctx: LintContext) -> Iterator[Diagnostic]:
    """A field has the wrong type as the Patch runtime reads it.

    Why: the runtime reads YAML with js-yaml's JSON schema: `true`/`True`/`TRUE` and the falses
    are booleans, `no`, `yes`, `on` and `off` are strings, dates stay strings, `null`, `Null`
    and `~` are null, and `1.0`, `0755`, `0x1F` and `1_000` are numbers. A value it reads as
    another type than the field needs makes it refuse the tool (`network: no` is the string
    "no", not false; `description: 1.0` is a number). Strings it reads as strings are fine
    however they are written: its own writer leaves `generated_at: 2026-05-04T12:34:56Z`
    unquoted.

    Fix: write booleans as `true` / `false` without quotes, quote strings that look like numbers
    or null (`version: "1.0.0"`), and use lists and mappings where the format asks for them.
    `patch-tui fmt` writes values as the runtime's own writer does.
    """
    data = ctx.data
    for key, expected in _TOP_TYPES.items():
        if key not in data or expected == _ANY:
            continue
        if key in _REQUIRED_MAPPINGS and data[key] is None:
            yield PT022.diag(ctx, f"`{key}` is empty: fill in its fields", key)
            continue
        if not _fine(data[key], expected):
            yield from _check_value(ctx, (key,), data[key], expected, key)
    inputs = ctx.get("inputs")
    if isinstance(inputs, list):
        for i, inp in enumerate(inputs):
            if not isinstance(inp, dict):
                yield PT022.diag(
                    ctx,
                    f"input {i + 1} must be a mapping with name, type and description, not {_type_name(inp)}",
                    "inputs",
                    i,
                )
                continue
            where = f"inputs[{i}]"
            yield from _check_fields(ctx, ("inputs", i), inp, _INPUT_TYPES, where)
            if isinstance(inp.get("items"), dict):
                yield from _check_fields(
                    ctx, ("inputs", i, "items"), inp["items"], _ITEMS_TYPES, f"{where}.items"
                )
            yield from _check_default(ctx, i, inp)
    for key, types in (
        ("outputs", _OUTPUT_TYPES),
        ("capabilities", _CAP_TYPES),
        ("runtime", _RUNTIME_TYPES),
    ):
        mapping = ctx.get(key)
        if isinstance(mapping, dict):
            yield from _check_fields(ctx, (key,), mapping, types, key)
    items = ctx.get("outputs", "items")
    if isinstance(items, dict):
        yield from _check_fields(ctx, ("outputs", "items"), items, _ITEMS_TYPES, "outputs.items")
    elif items is not None and not isinstance(items, str):
        yield PT022.diag(
            ctx,
            "`outputs.items` must be a type like `object` or `{type: object}`",
            "outputs",
            "items",
        )
    for list_path in (("runtime", "packages"), ("external_auth",)):
        values = ctx.get(*list_path)
        if isinstance(values, list):
            for j, v in enumerate(values):
                if _fine(v, _STR):
                    continue
                yield from _check_value(
                    ctx, (*list_path, j), v, _STR, f"{'.'.join(map(str, list_path))}[{j}]"
                )


def _check_default(ctx: LintContext, i: int, inp: dict[str, Any]) -> Iterator[Diagnostic]:
    if "default" not in inp or inp["default"] is None:
        return
    kind = inp.get("type", "string")
    if kind not in INPUT_TYPES:
        return
    value = inp["default"]
    path: Path = ("inputs", i, "default")
    label = f"inputs[{i}].default"
    if kind == "boolean" or kind == "string":
        yield from _check_value(ctx, path, value, _BOOL if kind == "boolean" else _STR, label)
        return
    if not fits_json_type(value, kind):
        yield PT022.diag(
            ctx,
            f"the default of {kind} input `{show(inp.get('name', i))}` is {_type_name(value)}: "
            f"give a default of type {kind}",
            *path,
        )
