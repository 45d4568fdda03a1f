"""PT027: a lone carriage return (`\\r` not followed by `\\n`), which the runtime does not take
as a line end.

Why a rule of its own, and not part of PT050 (hidden Unicode): PT050 reads the values of the
name and the descriptions, where a lone `\\r` never arrives (YAML ends a line there), and its fix
deletes characters. A lone `\\r` can sit on any line of the file; what it changes is where the
runtime's lines, and so its markers and frontmatter, begin and end, and its fix turns it into a
line end. That is the file's structure, next to PT026 (code the runtime never runs).
"""

from __future__ import annotations

from collections.abc import Iterator

from patch_tui.format import runtime_format
from patch_tui.format.toolfile import Span, ToolFile
from patch_tui.lint.context import LintContext
from patch_tui.lint.diagnostic import Diagnostic, Edit, Fix, apply_edits
from patch_tui.lint.rule import Rule
from patch_tui.untrusted.text_safety import visible

PT027 = Rule(
    "PT027",
    "lone-carriage-return",
    family="structure",
    summary="a carriage return (`\\r`) not followed by `\\n`: no line end to the runtime",
    severity=("error", "warning"),
    fix="always",
    needs_manifest=False,
)


@PT027.check
def lone_carriage_return(ctx: LintContext) -> Iterator[Diagnostic]:
    """A carriage return (`\\r`) not followed by `\\n`, reported once per line at the first one.
    An error when the runtime reads the file differently than its lines show: a `# ---` after it
    that is no marker, or manifest text after it that is dropped; a warning when turning it into
    a line end changes nothing the runtime reads (in the body, where Python ends a line there
    too and runs the code as shown).

    Why: the Patch runtime splits lines only at `\\n` and `\\r\\n`, so what follows a lone `\\r`
    is part of the same line, where old-Mac editors (and the desk's editor) show a new one. A
    `# ---` after it is not a marker; in the frontmatter, the runtime takes `# ` off the start of
    the whole line only, and its YAML reader then ends a line at the `\\r`, so `# version: 2.0.0`
    after it is a YAML comment: dropped from the manifest. In the body Python ends a line at a
    lone `\\r` and runs the code as shown, but counts more lines than the runtime and lint do,
    so its tracebacks name other line numbers. The desk opens such a file read-only, since its
    editor would save a line break there and change what the runtime reads; this rule's quick
    fix there (`F8`) ends every lone `\\r` and makes the file editable.

    Fix: turn each lone `\\r` into the file's line ending (`\\n` or `\\r\\n`). `patch-tui lint
    --fix` does it where that leaves what the runtime reads unchanged (in the body). Elsewhere it
    leaves the file alone, as the conversion would change the manifest or the markers the runtime
    finds (the fix is still in `--format json`): make the change by hand and check the result.
    """
    tf = ctx.tf
    if "\r" not in tf.text:
        return
    for index, line in enumerate(tf.lines):
        content = _without_ending(line)
        if "\r" not in content:
            continue
        pieces = content.split("\r")
        columns: list[int] = []
        for piece in pieces[:-1]:
            columns.append((columns[-1] if columns else 0) + len(piece) + 1)
        region = _region(tf, index)
        edits = tuple(Edit(index + 1, c, index + 1, c + 1, tf.newline) for c in columns)
        exact = region == "body" or _reading(tf.text) == _reading(apply_edits(tf.text, edits))
        count = (
            "a lone carriage return (\\r, no \\n after it): the Patch runtime ends no line there"
            if len(columns) == 1
            else f"{len(columns)} lone carriage returns (\\r, no \\n after them): the Patch "
            "runtime ends no line at them"
        )
        fix = Fix(
            ("turn it into a line end" if len(columns) == 1 else "turn them into line ends")
            + ("" if exact else " (changes what the runtime reads)"),
            edits,
            safe=exact,
        )
        yield PT027.at(
            Span(index + 1, columns[0], index + 1, columns[0] + 1),
            f"{count}; {_effect(tf, index, region, content, pieces)}: "
            + (
                "turn it into a line end (--fix does)"
                if exact
                else "turn it into a line end if one is meant, and check what the runtime reads then"
            ),
            severity="warning" if exact else "error",
            fix=fix,
        )


def _without_ending(line: str) -> str:
    if line.endswith("\r\n"):
        return line[:-2]
    return line.removesuffix("\n")


def _region(tf: ToolFile, index: int) -> str:
    """Where a line is to the runtime: "above" the frontmatter (or no frontmatter at all),
    "frontmatter" (the markers included) or "body"."""
    if tf.open_index is None or index < tf.open_index:
        return "above"
    if tf.close_index is None or index <= tf.close_index:
        return "frontmatter"
    return "body"


def _markers(tf: ToolFile, index: int) -> str:
    """Which markers the runtime finds instead."""
    if tf.open_index is None:
        return "it finds no frontmatter"
    if index < tf.open_index:
        return f"it takes line {tf.open_index + 1} as the opening marker"
    if tf.close_index is None:
        return "the frontmatter has no closing marker"
    return f"it takes line {tf.close_index + 1} as the closing marker"


def _effect(tf: ToolFile, index: int, region: str, content: str, pieces: list[str]) -> str:
    """What the runtime makes of the line, concretely."""
    hidden = next(
        (p for p in pieces if runtime_format.is_marker(p)), None
    ) is not None and not runtime_format.is_marker(content)
    after = next((p.strip() for p in pieces[1:] if p.strip()), "")
    if hidden:
        return "the `# ---` on this line is not a frontmatter marker to it, so " + _markers(
            tf, index
        )
    if region == "body":
        shown = f"`{_excerpt(after)}` after it" if after else "the code"
        return (
            f"Python does, and runs {shown} as shown, but the runtime and lint count one line "
            "where Python counts more, and the desk shows the file read-only"
        )
    if region == "frontmatter":
        if after.startswith("#"):
            return (
                f"its YAML reader does, and `{_excerpt(after)}` after it keeps its `#`: a YAML "
                "comment, dropped from the manifest"
            )
        if after:
            return (
                f"its YAML reader does, and reads `{_excerpt(after)}` after it as written, "
                "no `# ` taken off"
            )
        return "its YAML reader ends a line there"
    if after:
        return f"`{_excerpt(after)}` after it stays on this line, above the frontmatter"
    return "the line stays one line, above the frontmatter"


def _excerpt(text: str, width: int = 40) -> str:
    shown = visible(text)
    return shown if len(shown) <= width else shown[: width - 1] + "…"


def _reading(text: str) -> tuple[object, ...]:
    """What the runtime reads from a file: its verdict, the manifest, and the body as Python
    reads it (Python ends a line at a lone \\r too)."""
    try:
        parsed = runtime_format.parse(text)
    except runtime_format.RuntimeRejects as exc:
        return ("rejects", exc.message)
    body = parsed.body.replace("\r\n", "\n").replace("\r", "\n").lstrip("\n")
    return ("loads", parsed.manifest, body)
