"""PT051: a description that gives orders to an AI agent."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from patch_tui.lint.context import LintContext
from patch_tui.lint.diagnostic import Diagnostic
from patch_tui.lint.rule import Rule
from patch_tui.lint.rules.text.texts import texts_of
from patch_tui.untrusted.text_safety import strip_hidden

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


PT051 = Rule(
    "PT051",
    "instructs-ai",
    family="text",
    summary="a description that instructs an AI",
    severity="warning",
)


@PT051.check
def instructs_ai(ctx: LintContext) -> Iterator[Diagnostic]:
    """A description that gives orders to an AI agent ("ignore previous instructions", "you must
    call", "always call ... first", "do not tell the user", "system prompt").

    Why: descriptions are pasted into the agent's context as trusted text. Words aimed at the
    agent instead of describing the tool are the shape of a prompt injection ("tool poisoning"):
    they can make the agent call tools the user never asked for or hide what it did.

    Fix: describe what the tool does and what each input means; leave when and how to call it to
    the agent and the user.
    """
    for path, text, label in texts_of(ctx):
        if path[-1] == "name":
            continue
        found: Any = ai_instructions(text)
        if found:
            yield PT051.diag(
                ctx,
                f'{label} reads like instructions to an AI ("{found[0]}"): describe what the tool '
                "does, not what an agent must do",
                *path,
                severity="warning",
            )
