"""PT050: hidden or deceptive Unicode in the name or descriptions."""

from __future__ import annotations

from collections.abc import Iterator

from patch_tui.format.toolfile import Span
from patch_tui.format.yamlio import Path
from patch_tui.lint.context import LintContext
from patch_tui.lint.diagnostic import Diagnostic, Edit, Fix
from patch_tui.lint.rule import Rule
from patch_tui.lint.rules.text.texts import texts_of
from patch_tui.untrusted.text_safety import (
    KIND_WORDS,
    find_hidden,
    mixed_script_words,
    strip_hidden,
    visible,
)


def _literal_edits(ctx: LintContext, path: Path) -> list[Edit] | None:
    """Edits deleting each hidden character where it literally sits in the file.

    Returns None when the characters are not all written literally inside the value's text (an
    escape like "\\u200b" in a quoted string), so the caller falls back to rewriting the value.
    """
    tf = ctx.tf
    node = tf.nodes.get(tuple(path))
    if node is None or tf.open_index is None:
        return None
    line, col = tf.yaml_pos_to_file(node.start)
    end_line, end_col = tf.yaml_pos_to_file(node.end)
    edits: list[Edit] = []
    for n in range(line, end_line + 1):
        text = tf.line_text(n)
        start = col - 1 if n == line else 0
        stop = end_col - 1 if n == end_line else len(text)
        for h in find_hidden(text[start:stop]):
            c = start + h.index + 1
            edits.append(Edit(n, c, n, c + 1, ""))
    return edits


def _hidden_fix(ctx: LintContext, path: Path, value: str) -> Fix | None:
    wanted = len(find_hidden(value))
    edits = _literal_edits(ctx, path)
    title = f"remove {wanted} hidden character{'s' if wanted != 1 else ''}"
    if edits is not None and len(edits) == wanted:
        return Fix(title, tuple(edits))
    return ctx.set_value_fix(title, path, strip_hidden(value))


PT050 = Rule(
    "PT050",
    "hidden-unicode",
    family="text",
    summary="hidden or deceptive Unicode in the name or descriptions",
    severity=("error", "warning"),
    fix="sometimes",
)


@PT050.check
def hidden_unicode(ctx: LintContext) -> Iterator[Diagnostic]:
    """Hidden or deceptive Unicode in the name or a description: bidi controls, zero-width and tag
    characters, soft hyphens, variation selectors, fillers (error); words mixing look-alike
    scripts, like Latin with Cyrillic (warning).

    Why: these characters change what a text says without changing what it looks like. A bidi
    override makes a reviewer read words in a different order than the agent does (the "Trojan
    Source" trick), tag characters carry invisible instructions to an AI, and `pаypal` with a
    Cyrillic `а` is not `paypal`. The approval screen and the agent must see the same text.

    Fix: delete the hidden characters (`patch-tui lint --fix` removes them; the message shows
    each as `⟦U+XXXX⟧`), and retype mixed-script words with one keyboard layout.
    """
    for path, text, label in texts_of(ctx):
        hidden = find_hidden(text)
        if hidden:
            kinds = sorted({KIND_WORDS[h.kind] for h in hidden})
            codes = ", ".join(dict.fromkeys(f"U+{h.codepoint:04X}" for h in hidden))
            yield PT050.diag(
                ctx,
                f"{label} holds {len(hidden)} hidden character{'s' if len(hidden) != 1 else ''} "
                f'({", ".join(kinds)}: {codes}): remove them; it reads "{_excerpt(text, hidden[0].index)}"',
                *path,
                fix=_hidden_fix(ctx, path, text),
            )
        for word in mixed_script_words(text):
            yield PT050.diag(
                ctx,
                f'{label}: the word "{visible(word.word)}" mixes {" and ".join(word.scripts)} letters '
                "that look alike: retype it in one script",
                *path,
                severity="warning",
                span=_word_span(ctx, path, text, word.start, word.end),
            )


def _excerpt(text: str, index: int, width: int = 60) -> str:
    """The text around `index` with hidden characters shown, cut to a readable length."""
    start = max(0, index - width // 2)
    end = min(len(text), start + width)
    start = max(0, min(start, end - width))
    shown = visible(text[start:end]).replace("\n", "⏎")
    return ("…" if start else "") + shown + ("…" if end < len(text) else "")


def _word_span(ctx: LintContext, path: Path, text: str, start: int, end: int) -> Span | None:
    """The span of a word inside a one-line plain or quoted value, when it can be found there."""
    span = ctx.span(*path)
    if span.line != span.end_line:
        return None
    line = ctx.tf.line_text(span.line)
    at = line.find(text[start:end], span.column - 1, span.end_column - 1)
    if at < 0:
        return None
    return Span(span.line, at + 1, span.line, at + 1 + end - start)
