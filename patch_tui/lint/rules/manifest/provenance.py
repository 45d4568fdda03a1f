"""PT021: the generated_by / generated_at provenance stamp."""

from __future__ import annotations

from collections.abc import Iterator

from patch_tui.format.fields import (
    GENERATED_AT_RE,
)
from patch_tui.lint.context import LintContext
from patch_tui.lint.diagnostic import Diagnostic, Fix
from patch_tui.lint.rule import Rule
from patch_tui.lint.rules.manifest.helpers import quote, show

PT021 = Rule(
    "PT021",
    "bad-provenance",
    family="manifest",
    summary="generated_at not ISO 8601 UTC, or only one of generated_by/generated_at",
    fix="sometimes",
)


@PT021.check
def bad_provenance(ctx: LintContext) -> Iterator[Diagnostic]:
    """`generated_at` is not ISO 8601 UTC, or only one of `generated_by` / `generated_at` is set.

    Why: the provenance stamp tells reviewers which model wrote a tool and when; half a stamp, or
    a time in an unknown zone, cannot be trusted or compared.

    Fix: set both, e.g. `generated_by: claude-opus-4-7` and
    `generated_at: "2026-05-04T12:34:56Z"` (UTC, with seconds and a `Z`), or remove both.
    """
    by, at = ctx.get("generated_by"), ctx.get("generated_at")
    if isinstance(at, str) and not GENERATED_AT_RE.match(at):
        fix = None
        utc = _to_utc(at)
        if utc is not None and ("generated_at",) in ctx.tf.nodes:
            fix = Fix(f"write {utc}", (ctx.node_edit(("generated_at",), quote(utc)),))
        yield PT021.diag(
            ctx,
            f'generated_at `{show(at)}` is not ISO 8601 UTC: write it like "2026-05-04T12:34:56Z"'
            + (f' (here "{utc}")' if utc else ""),
            "generated_at",
            fix=fix,
        )
    has_by, has_at = (
        by is not None and "generated_by" in ctx.data,
        at is not None and "generated_at" in ctx.data,
    )
    if has_by and not has_at:
        yield PT021.diag(
            ctx,
            "generated_by is set without generated_at: add when the tool was generated (UTC), or remove both",
            "generated_by",
            key=True,
        )
    if has_at and not has_by:
        yield PT021.diag(
            ctx,
            "generated_at is set without generated_by: add the model that generated the tool, or remove both",
            "generated_at",
            key=True,
        )


def _to_utc(text: str) -> str | None:
    """A timestamp with an explicit zone, converted to the canonical UTC stamp."""
    from datetime import UTC, datetime

    try:
        parsed = datetime.fromisoformat(text.strip().replace("z", "Z"))
    except ValueError:
        return None
    if parsed.tzinfo is None:
        return None  # an unknown zone: guessing would change the meaning
    return parsed.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
