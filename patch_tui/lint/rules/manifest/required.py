"""PT010: a required field is missing."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from patch_tui.format.fields import (
    NO_DEFAULT,
    REQUIRED_FIELDS,
    FieldSpec,
    fields_of,
)
from patch_tui.lint.context import LintContext
from patch_tui.lint.diagnostic import Diagnostic
from patch_tui.lint.rule import Rule
from patch_tui.lint.rules.manifest.helpers import inputs_of, raw_of, show


def _starter(f: FieldSpec) -> Any:
    """What the quick fix writes for a missing field: its default, or for a mapping the
    defaults of the fields the format requires in it (least privilege, for the person to review)."""
    if f.type == "object":
        return {g.key: g.default for g in fields_of(f.of) if g.required}
    return f.default


# From the field table (format/fields.py): the required fields that have a default.
_DEFAULTS: dict[str, Any] = {
    f.key: _starter(f) for f in fields_of("") if f.required and f.default is not NO_DEFAULT
}


PT010 = Rule(
    "PT010",
    "missing-field",
    family="manifest",
    summary="a required field is missing",
    fix="sometimes",
)


@PT010.check
def missing_field(ctx: LintContext) -> Iterator[Diagnostic]:
    """A required field is missing (name, version, description, inputs, outputs, capabilities,
    runtime; an input's name, type or description, or an empty one; `outputs.type`;
    `runtime.language`).

    Why: the Patch runtime refuses a manifest without its required fields, so the tool cannot be
    registered or called, and one such file in the toolbox's index makes its whole tool list
    fail. An input without a name cannot be passed to `main()`; the runtime also requires a
    non-empty description for every input (the host AI reads it to fill the argument in).

    Fix: add the field. `inputs: []` declares a tool without arguments; `capabilities` and
    `runtime` are small mappings, e.g. `capabilities: {network: false, filesystem: none,
    human_confirm: false}`. The quick fix adds the least-privilege defaults for you to review.
    """
    for name in REQUIRED_FIELDS:
        if name in ctx.data:
            continue
        fix = None
        if name in _DEFAULTS:
            fix = ctx.set_value_fix(
                f"add `{name}` with defaults", (name,), _DEFAULTS[name], safe=False
            )
        yield PT010.diag(
            ctx, f"required field `{name}` is missing: add `{name}:` to the manifest", fix=fix
        )
    for i, inp in inputs_of(ctx):
        if "name" not in inp:
            yield PT010.diag(
                ctx,
                f"input {i + 1} has no `name`: add the name of the matching main() parameter",
                "inputs",
                i,
            )
        label = (
            f"input `{show(inp['name'])}`" if isinstance(inp.get("name"), str) else f"input {i + 1}"
        )
        if "type" not in inp:
            yield PT010.diag(
                ctx,
                f"{label} has no `type`: the runtime refuses it: add e.g. `type: string`",
                "inputs",
                i,
                "type",  # the form's empty field, where Enter on the problem goes
                span=ctx.span("inputs", i),
            )
        description = inp.get("description")
        if "description" not in inp:
            yield PT010.diag(
                ctx,
                f"{label} has no `description`: the runtime refuses it: say in one sentence what to pass",
                "inputs",
                i,
                "description",
                span=ctx.span("inputs", i),
            )
        elif description == "" or (
            description is None and raw_of(ctx, ("inputs", i, "description")) in ("", None)
        ):
            yield PT010.diag(
                ctx,
                f"{label} has an empty `description`: the runtime refuses it: say in one sentence what to pass",
                "inputs",
                i,
                "description",
            )
    outputs = ctx.get("outputs")
    if isinstance(outputs, dict) and "type" not in outputs:
        yield PT010.diag(
            ctx,
            "`outputs` has no `type`: the runtime refuses it: add e.g. `type: object`",
            "outputs",
        )
    runtime = ctx.get("runtime")
    if isinstance(runtime, dict) and "language" not in runtime:
        yield PT010.diag(
            ctx,
            "`runtime` has no `language`: the runtime refuses it: add `language: python`",
            "runtime",
            fix=ctx.set_value_fix("add `language: python`", ("runtime", "language"), "python"),
        )
