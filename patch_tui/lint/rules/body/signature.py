"""PT032-PT035: main()'s signature against the manifest's inputs."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

from patch_tui.format import toolfile as tfmod
from patch_tui.format.fields import INPUT_TYPES
from patch_tui.lint.analysis import (
    TYPE_TO_ANNOTATION,
    MainInfo,
    Param,
    annotation_items,
    annotation_types,
    literal_value,
    preferred_type,
)
from patch_tui.lint.context import LintContext
from patch_tui.lint.diagnostic import Diagnostic, Edit, Fix
from patch_tui.lint.rule import Rule
from patch_tui.lint.rules.body.helpers import (
    body_diag,
    column,
    facts_of,
    input_from_param,
    manifest_set,
    named_inputs,
    quoted_names,
    set_value,
    signature_span,
)

PT032 = Rule(
    "PT032",
    "main-params-mismatch",
    family="body",
    summary="main()'s parameters differ from the inputs' names",
    needs_body=True,
    fix="sometimes",
)


@PT032.check
def main_params_mismatch(ctx: LintContext) -> Iterator[Diagnostic]:
    """main()'s parameters and the manifest's inputs do not name the same arguments.

    Why: the runtime calls `main(**args)` with exactly the declared inputs. An input main() does
    not accept raises `TypeError: unexpected keyword argument`; a parameter with no input can
    never be given by the caller (and fails when it has no default); a positional-only
    parameter cannot be passed by keyword at all.

    Fix: make them agree. The quick fix adds the missing inputs to the manifest from main()'s
    signature (type from the annotation, `required: false` and the default when the parameter
    has one); review their descriptions. For inputs main() lacks, the quick fix adds them to
    main()'s signature (annotated from the input's type, with its default when optional), for
    the body to use.
    """
    facts = facts_of(ctx)
    main = facts.main
    if main is None or not isinstance(ctx.get("inputs"), list):
        return
    declared = [name for _, name, _ in named_inputs(ctx)]
    params = {p.name for p in main.params}
    no_input = [p for p in main.params if p.name not in declared and p.kind != "positional_only"]
    no_param = [n for n in declared if n not in params] if main.kwarg is None else []
    positional_only = [p.name for p in main.params if p.kind == "positional_only"]
    parts: list[str] = []
    if no_input:
        parts.append(
            f"main() takes {quoted_names([p.name for p in no_input])} but no input declares "
            f"{'it' if len(no_input) == 1 else 'them'}: add {'it' if len(no_input) == 1 else 'them'} to inputs"
        )
    if no_param:
        parts.append(
            f"input{'s' if len(no_param) > 1 else ''} {quoted_names(no_param)} "
            f"{'are' if len(no_param) > 1 else 'is'} not a parameter of main(), so main(**args) "
            f"fails: add {'them' if len(no_param) > 1 else 'it'} to main()'s signature"
        )
    if positional_only:
        parts.append(
            f"{quoted_names(positional_only)} {'are' if len(positional_only) > 1 else 'is'} positional-only "
            "and main(**args) cannot pass it: remove the `/` from main()'s signature"
        )
    if not parts:
        return
    fix = None
    if no_param and not no_input and not positional_only:
        fix = _params_fix(ctx, main, no_param)
    if no_input:
        raw = ctx.get("inputs")
        new_inputs = [*raw, *(input_from_param(p) for p in no_input)]
        fix = manifest_set(
            ctx,
            f"Add input{'s' if len(no_input) > 1 else ''} {quoted_names([p.name for p in no_input])} from main()'s signature",
            [(("inputs",), new_inputs)],
            safe=True,
        )
    yield PT032.at(signature_span(ctx, main), "; ".join(parts), fix=fix, field=("inputs",))


def _params_fix(ctx: LintContext, main: MainInfo, names: list[str]) -> Fix | None:
    """Add the inputs main() lacks to its signature, after its last parameter: annotated from
    the input's type, with its default (or None) when the input is optional. None where that
    would not be valid Python (a *args or **kwargs, or a required one after a default)."""
    if main.vararg is not None or main.kwarg is not None:
        return None
    inputs = {name: raw for _, name, raw in named_inputs(ctx)}
    pieces: list[str] = []
    has_default = any(p.default is not None and p.kind != "keyword_only" for p in main.params)
    for name in names:
        raw = inputs.get(name) or {}
        note = TYPE_TO_ANNOTATION.get(str(raw.get("type")), "")
        text = f"{name}: {note}" if note else name
        if raw.get("required") is False:
            value = raw.get("default")
            text += f" = {value!r}" if note else f"={value!r}"
        elif has_default:
            return None  # a parameter without a default after one with a default
        pieces.append(text)
    if main.params:
        last = main.params[-1]
        end_node: ast.AST = last.default if last.default is not None else last.node
        line = getattr(end_node, "end_lineno", None) or last.node.lineno
        col = column(ctx, line, getattr(end_node, "end_col_offset", 0) or 0)
        text = ", " + ", ".join(pieces)
    else:
        line = main.node.lineno
        source = ctx.tf.line_text(line)
        at = source.find("main(")
        if at < 0:
            return None
        col = len(source[: at + len("main(")]) + 1
        text = ", ".join(pieces)
    return Fix(
        f"Add {quoted_names(names)} to main()'s signature",
        (Edit(line, col, line, col, text),),
        False,  # main() must then use them: review the body
    )


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
    col = column(ctx, line, end)
    text = f" = {value!r}" if param.annotation is not None else f"={value!r}"
    return Fix(
        f"Give `{param.name}` the default {value!r}", (Edit(line, col, line, col, text),), True
    )


PT033 = Rule(
    "PT033",
    "optional-input-without-default",
    family="body",
    summary="an input with `required: false` has no default in main()",
    needs_body=True,
    fix="sometimes",
)


@PT033.check
def optional_without_default(ctx: LintContext) -> Iterator[Diagnostic]:
    """An optional input (`required: false`) whose parameter in main() has no default.

    Why: when the caller leaves an optional input out, main(**args) is called without it and
    fails with `TypeError: missing 1 required positional argument`.

    Fix: give the parameter a default in main() (the quick fix uses the manifest's `default`),
    or make the input required.
    """
    main = facts_of(ctx).main
    if main is None:
        return
    for index, name, raw in named_inputs(ctx):
        param = main.param(name)
        if raw.get("required") is not False or param is None or param.default is not None:
            continue
        yield body_diag(
            ctx,
            PT033,
            f"input `{name}` is optional (`required: false`) but main() gives `{name}` no default, "
            "so a call without it fails: add a default to the parameter",
            param.node,
            fix=_default_fix(ctx, main, param, raw),
            field=("inputs", index, "required"),
        )


PT034 = Rule(
    "PT034",
    "required-input-with-default",
    family="body",
    summary="a required input has a default in main()",
    needs_body=True,
    severity="warning",
    fix="sometimes",
)


@PT034.check
def required_with_default(ctx: LintContext) -> Iterator[Diagnostic]:
    """A required input whose parameter in main() has a default.

    Why: the manifest and the code disagree about whether the caller must give the argument;
    agents read the manifest, so they will always ask for (or invent) a value main() does not
    need.

    Fix: mark the input `required: false` with the same `default` (the quick fix does this), or
    drop the default from main() if the input really is required.
    """
    main = facts_of(ctx).main
    if main is None:
        return
    for index, name, raw in named_inputs(ctx):
        param = main.param(name)
        if raw.get("required", True) is not True or param is None or param.default is None:
            continue
        changes: list[tuple[tuple[str | int, ...], Any]] = [(("inputs", index, "required"), False)]
        ok, default = literal_value(param.default)
        if ok and default is not None and "default" not in raw:
            changes.append((("inputs", index, "default"), default))
        yield body_diag(
            ctx,
            PT034,
            f"input `{name}` is required but main() gives it a default: mark it `required: false` "
            "in the manifest, or drop the default",
            param.default,
            severity="warning",
            fix=manifest_set(ctx, f"Mark input `{name}` optional", changes, safe=False),
            field=("inputs", index, "required"),
        )


def _accepts(types: frozenset[str], declared: str) -> bool:
    return declared in types or (declared == "integer" and "number" in types)


PT035 = Rule(
    "PT035",
    "annotation-type-mismatch",
    family="body",
    summary="main()'s annotation disagrees with the input's declared type",
    needs_body=True,
    severity="warning",
    fix="sometimes",
)


@PT035.check
def annotation_mismatch(ctx: LintContext) -> Iterator[Diagnostic]:
    """A parameter's type annotation disagrees with its input's declared `type` (or `items`).

    Why: the runtime passes the JSON type the manifest declares; code written for another type
    breaks on the first call (a `str` treated as a `list` iterates characters).

    Fix: change the annotation (`string` -> `str`, `integer` -> `int`, `number` -> `float`,
    `boolean` -> `bool`, `array` -> `list[...]`, `object` -> `dict`), or the input's type.
    """
    main = facts_of(ctx).main
    if main is None:
        return
    for index, name, raw in named_inputs(ctx):
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
                    yield body_diag(
                        ctx,
                        PT035,
                        f"main() annotates `{name}` as a list of {got} but the input's items are "
                        f"{want}: annotate `list[{TYPE_TO_ANNOTATION[want]}]` or change `items.type`",
                        param.annotation,
                        severity="warning",
                        fix=set_value(
                            ctx,
                            f"Set `{name}` items to {got}",
                            ("inputs", index, "items", "type"),
                            got,
                            safe=False,
                        ),
                        field=("inputs", index, "items"),
                    )
            continue
        better = preferred_type(frozenset(types - {"null"}))
        changes: list[tuple[tuple[str | int, ...], Any]] = [(("inputs", index, "type"), better)]
        if better == "array" and not isinstance(raw.get("items"), dict):
            changes.append(
                (
                    ("inputs", index, "items"),
                    {"type": annotation_items(param.annotation) or "string"},
                )
            )
        elif better != "array" and "items" in raw:
            # `items` describes an array's elements: left under a string it is a problem of
            # its own (issue 25: the fix left it behind).
            changes.append((("inputs", index, "items"), tfmod.DELETE))
        try:
            segment = ast.unparse(param.annotation)
        except RecursionError:
            segment = "its annotation"
        yield body_diag(
            ctx,
            PT035,
            f"main() annotates `{name}` as `{segment}` but the input is declared `{declared}`: "
            f"annotate it `{TYPE_TO_ANNOTATION[declared]}` or set the input's type to `{better}`",
            param.annotation,
            severity="warning",
            fix=manifest_set(ctx, f"Set input `{name}` type to {better}", changes, safe=False),
            field=("inputs", index, "type"),
        )
