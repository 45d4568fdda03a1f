"""Rules on the text people and agents read: hidden Unicode, instructions to an AI (PT050-PT051).

The name and the descriptions travel from the tool file into an AI agent's context and onto the
approval screen. They are the place an attacker hides text a person cannot see, or words that
steer the agent instead of describing the tool.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from patch_tui.format.toolfile import Span
from patch_tui.format.yamlio import Path
from patch_tui.lint.engine import Diagnostic, Edit, Fix, LintContext, rule
from patch_tui.untrusted.text_safety import find_hidden, mixed_script_words, strip_hidden, visible

_KIND_WORDS = {
    "control": "control character",
    "bidi": "bidirectional control",
    "zero_width": "zero-width character",
    "tag": "invisible tag character",
    "soft_hyphen": "soft hyphen",
    "variation_selector": "variation selector",
    "filler": "invisible filler character",
}


def _texts(ctx: LintContext) -> Iterator[tuple[Path, str, str]]:
    """(path, text, label) of every field people and agents read."""
    for key in ("name", "description"):
        value = ctx.get(key)
        if isinstance(value, str):
            yield (key,), value, key
    inputs = ctx.get("inputs")
    if isinstance(inputs, list):
        for i, inp in enumerate(inputs):
            if not isinstance(inp, dict):
                continue
            for key in ("name", "description"):
                value = inp.get(key)
                if isinstance(value, str):
                    yield ("inputs", i, key), value, f"inputs[{i}].{key}"
    value = ctx.get("outputs", "description")
    if isinstance(value, str):
        yield ("outputs", "description"), value, "outputs.description"


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


@rule(
    "PT050",
    "hidden-unicode",
    family="text",
    summary="hidden or deceptive Unicode in the name or descriptions",
)
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
    for path, text, label in _texts(ctx):
        hidden = find_hidden(text)
        if hidden:
            kinds = sorted({_KIND_WORDS[h.kind] for h in hidden})
            codes = ", ".join(dict.fromkeys(f"U+{h.codepoint:04X}" for h in hidden))
            yield ctx.diag(
                "PT050",
                f"{label} holds {len(hidden)} hidden character{'s' if len(hidden) != 1 else ''} "
                f'({", ".join(kinds)}: {codes}): remove them; it reads "{_excerpt(text, hidden[0].index)}"',
                *path,
                fix=_hidden_fix(ctx, path, text),
            )
        for word in mixed_script_words(text):
            yield ctx.diag(
                "PT050",
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


# Phrases that address the AI reading the description rather than describe the tool.
_INSTRUCTION_PATTERNS: tuple[tuple[str, str], ...] = (
    (
        r"\b(ignore|disregard|forget|override)\b.{0,30}\b(previous|prior|above|earlier|all|other|system)\b.{0,20}\b(instructions?|prompts?|rules|messages|directions|guidelines)\b",
        "ignore previous instructions",
    ),
    (
        r"\byou\s+(must|should|have\s+to|need\s+to|are\s+required\s+to)\s+(always\s+)?(call|use|invoke|run|execute|send|forward|include)\b",
        "you must call",
    ),
    (
        r"\balways\s+(call|use|invoke|run|execute)\b.{0,60}\b(first|before)\b",
        "always call ... first",
    ),
    (
        r"\b(before|instead\s+of)\s+(calling|using|invoking|running)\s+(any|every|all|other|another)\b",
        "before using any other tool",
    ),
    (
        r"\b(do\s+not|don'?t|never)\s+(tell|inform|mention|reveal|show|disclose|notify)\b.{0,20}\b(the\s+)?(user|human|person)\b",
        "do not tell the user",
    ),
    (
        r"\bwithout\s+(telling|informing|asking|notifying)\s+(the\s+)?(user|human|person)\b",
        "without telling the user",
    ),
    (r"\bsystem\s+prompt\b", "system prompt"),
    (r"\b(new|updated|real|secret|hidden)\s+instructions?\b", "new instructions"),
    (
        r"\byou\s+are\s+(now\s+)?(an?\s+)?(ai|assistant|agent|llm|chatgpt|claude|model)\b",
        "you are an AI",
    ),
    (
        r"<\s*/?\s*(system|instructions?|important)\s*>|\[/?inst\]|<\|im_(start|end)\|>",
        "prompt markup",
    ),
)
_INSTRUCTION_RES = tuple(
    (re.compile(p, re.IGNORECASE | re.DOTALL), gist) for p, gist in _INSTRUCTION_PATTERNS
)


# Every pattern above needs one of these words: one search skips the ten for most texts.
_TRIGGER_RE = re.compile(
    r"ignore|disregard|forget|override|you|always|before|instead|not|n'?t\b|never|without|system|"
    r"instruction|<|\[",
    re.IGNORECASE,
)


def ai_instructions(text: str) -> list[str]:
    """The instruction-like phrases found in a text (hidden characters cannot split them)."""
    probe = text if text.isascii() and text.isprintable() else strip_hidden(text)
    if not _TRIGGER_RE.search(probe):
        return []
    flat = " ".join(probe.split())
    return [gist for pattern, gist in _INSTRUCTION_RES if pattern.search(flat)]


@rule("PT051", "instructs-ai", family="text", summary="a description that instructs an AI")
def instructs_ai(ctx: LintContext) -> Iterator[Diagnostic]:
    """A description that gives orders to an AI agent ("ignore previous instructions", "you must
    call", "always call ... first", "do not tell the user", "system prompt").

    Why: descriptions are pasted into the agent's context as trusted text. Words aimed at the
    agent instead of describing the tool are the shape of a prompt injection ("tool poisoning"):
    they can make the agent call tools the user never asked for or hide what it did.

    Fix: describe what the tool does and what each input means; leave when and how to call it to
    the agent and the user.
    """
    for path, text, label in _texts(ctx):
        if path[-1] == "name":
            continue
        found: Any = ai_instructions(text)
        if found:
            yield ctx.diag(
                "PT051",
                f'{label} reads like instructions to an AI ("{found[0]}"): describe what the tool '
                "does, not what an agent must do",
                *path,
                severity="warning",
            )
