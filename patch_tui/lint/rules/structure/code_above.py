"""PT026: code above the opening `# ---` marker, which the runtime never runs."""

from __future__ import annotations

from collections.abc import Iterator

from patch_tui.format.toolfile import Span
from patch_tui.lint.context import LintContext
from patch_tui.lint.diagnostic import Diagnostic
from patch_tui.lint.rule import Rule


# What may stand above the opening marker: the runtime never runs it, so only lines that do
# nothing (blank lines and comments: a shebang, an encoding line) are harmless there.
def _code_above(ctx: LintContext) -> list[int]:
    tf = ctx.tf
    if tf.open_index is None:
        return []
    return [
        i + 1
        for i in range(tf.open_index)
        if tf.lines[i].strip() and not tf.lines[i].lstrip().startswith("#")
    ]


PT026 = Rule(
    "PT026",
    "code-above-frontmatter",
    family="structure",
    summary="code above the opening `# ---` marker",
    needs_manifest=False,
)


@PT026.check
def code_above_frontmatter(ctx: LintContext) -> Iterator[Diagnostic]:
    """Code above the opening `# ---` marker.

    Why: the Patch runtime runs only the body, the lines after the closing marker. Code above
    the frontmatter never runs there: an `import` written at the top is missing at run time (a
    NameError), although the file looks complete. `patch-tui run` runs what the runtime runs.
    Only a shebang, an encoding line, comments and blank lines belong above the marker.

    Fix: move the code below the closing `# ---` line.
    """
    rows = _code_above(ctx)
    if not rows:
        return
    first = rows[0]
    more = f" (and {len(rows) - 1} more lines)" if len(rows) > 1 else ""
    yield PT026.diag(
        ctx,
        f"code above the opening `# ---` marker{more}: the runtime runs only what follows the closing marker: move it below",
        span=Span.line_span(first, ctx.tf.line_text(first)),
    )
