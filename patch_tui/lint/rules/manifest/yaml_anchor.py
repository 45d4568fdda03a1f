"""PT025: a YAML anchor or alias in the frontmatter."""

from __future__ import annotations

from collections.abc import Iterator

from patch_tui.format.toolfile import Span
from patch_tui.lint.context import LintContext
from patch_tui.lint.diagnostic import Diagnostic
from patch_tui.lint.rule import Rule

PT025 = Rule(
    "PT025", "yaml-anchor", family="manifest", summary="a YAML anchor or alias",
    severity="warning",
)


@PT025.check
def yaml_anchor(ctx: LintContext) -> Iterator[Diagnostic]:
    """The frontmatter uses a YAML anchor (`&name`) or alias (`*name`).

    Why: the Patch runtime reads them, so the tool loads; but a manifest is read by people,
    editors and other tools too, and a value defined in one place and used in another is easy to
    misread (and some readers refuse aliases). patch-tui reads them like the runtime and refuses
    aliases that expand past a size limit (the "billion laughs" attack).

    Fix: write the repeated value out in full where it is used, and drop the `&name`.
    """
    tf = ctx.tf
    if not tf.anchors or tf.open_index is None:
        return
    pos = tf.anchors[0]
    line, col = tf.yaml_pos_to_file(pos)
    more = f" (and {len(tf.anchors) - 1} more)" if len(tf.anchors) > 1 else ""
    yield PT025.diag(ctx, f"a YAML anchor or alias{more}: the runtime reads it, but write the value out in full so every reader sees the same manifest",
        severity="warning",
        span=Span(line, col, line, col + 1),
    )
