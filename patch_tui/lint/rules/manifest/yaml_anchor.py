"""PT025: a YAML anchor, alias or explicit tag in the frontmatter."""

from __future__ import annotations

from collections.abc import Iterator

from patch_tui.format.toolfile import Span
from patch_tui.lint.context import LintContext
from patch_tui.lint.diagnostic import Diagnostic
from patch_tui.lint.rule import Rule

PT025 = Rule(
    "PT025",
    "yaml-anchor",
    family="manifest",
    summary="a YAML anchor, alias or explicit tag",
    severity="warning",
)


@PT025.check
def yaml_anchor(ctx: LintContext) -> Iterator[Diagnostic]:
    """The frontmatter uses a YAML anchor (`&name`), an alias (`*name`) or an explicit tag
    (`!!str`, `!!int`, ...).

    Why: the Patch runtime reads them, so the tool loads; but a manifest is read by people,
    editors and other tools too, and a value defined in one place and used in another is easy to
    misread (and some readers refuse aliases). patch-tui reads them like the runtime and refuses
    aliases that expand past a size limit (the "billion laughs" attack).

    A tag the runtime knows (`!!str`, `!!int`, `!!float`, `!!bool`, `!!null`, `!!seq`,
    `!!map`, `!`) is read as the runtime reads it; any other tag is an error (PT002), as the
    runtime refuses the file.

    Fix: write the repeated value out in full where it is used, and drop the `&name`; write a
    tagged value plainly (`python_version: "3.12"` for `!!str 3.12`).
    """
    tf = ctx.tf
    if tf.open_index is None:
        return
    if tf.anchors:
        line, col = tf.yaml_pos_to_file(tf.anchors[0])
        more = f" (and {len(tf.anchors) - 1} more)" if len(tf.anchors) > 1 else ""
        yield PT025.diag(
            ctx,
            f"a YAML anchor or alias{more}: the runtime reads it, but write the value out in full so every reader sees the same manifest",
            severity="warning",
            span=Span(line, col, line, col + 1),
        )
    if tf.tags:
        line, col = tf.yaml_pos_to_file(tf.tags[0])
        more = f" (and {len(tf.tags) - 1} more)" if len(tf.tags) > 1 else ""
        yield PT025.diag(
            ctx,
            f"an explicit YAML tag{more}: the runtime reads it (`!!str 3.12` is the text 3.12), but write the value plainly (quote a string) so every reader sees the same manifest",
            severity="warning",
            span=Span(line, col, line, col + 1),
        )
