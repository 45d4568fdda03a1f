"""Find and reveal hidden or deceptive Unicode in untrusted text.

Tool descriptions, tool arguments and LLM output reach people (in the TUI, the inbox, the terminal)
and AI agents. Characters that render as nothing, reorder the text around them (bidi controls, the
"Trojan Source" trick), or smuggle invisible instructions (tag characters) must be made visible
before a person is asked to trust what they read. Pure Python: no Textual, no Rich, so the linter
and the CLI use it as well as the UI.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Literal

HiddenKind = Literal[
    "control", "bidi", "zero_width", "tag", "soft_hyphen", "variation_selector", "filler"
]

_BIDI = frozenset(
    [0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069, 0x200E, 0x200F, 0x061C]
)
_ZERO_WIDTH = frozenset(
    [0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF, 0x180E]
    # Other invisible format characters: invisible math operators, deprecated shaping controls,
    # interlinear annotation marks. They render as nothing, like the zero-width ones.
    + [0x2061, 0x2062, 0x2063, 0x2064, *range(0x206A, 0x2070), 0xFFF9, 0xFFFA, 0xFFFB]
)
# Line and paragraph separators break lines for some readers (Python's str.splitlines, YAML,
# JavaScript) and not for others: treated like control characters.
_SEPARATORS = frozenset([0x2028, 0x2029])
_FILLER = frozenset([0x3164, 0x115F, 0x1160, 0xFFA0])


@dataclass(frozen=True)
class Hidden:
    """One hidden character: where it is (index into the string), what it is, and its family."""

    index: int
    char: str
    codepoint: int
    kind: HiddenKind

    @property
    def label(self) -> str:
        """How the character is shown in place of itself, e.g. `⟦U+202E⟧`."""
        return f"⟦U+{self.codepoint:04X}⟧"

    @property
    def name(self) -> str:
        return unicodedata.name(self.char, f"U+{self.codepoint:04X}")


def hidden_kind(ch: str) -> HiddenKind | None:
    """The family of a hidden character, or None for an ordinary one (newline and tab are ordinary)."""
    cp = ord(ch)
    # Fast path: printable ASCII is by far the most common case.
    if 0x20 <= cp < 0x7F or ch in "\n\t":
        return None
    if cp < 0x20 or cp == 0x7F or 0x80 <= cp <= 0x9F:
        return "control"
    if cp < 0xAD:
        return None
    if cp == 0xAD:
        return "soft_hyphen"
    if cp in _BIDI:
        return "bidi"
    if cp in _SEPARATORS:
        return "control"
    if cp in _ZERO_WIDTH:
        return "zero_width"
    if 0xE0000 <= cp <= 0xE007F:
        return "tag"
    if 0xFE00 <= cp <= 0xFE0F or 0xE0100 <= cp <= 0xE01EF:
        return "variation_selector"
    if cp in _FILLER:
        return "filler"
    return None


_DROP_NL_TAB = str.maketrans("", "", "\n\t")


def _needs_scan(text: str) -> bool:
    # Most text is plain printable ASCII plus newlines/tabs: skip the per-character loop then.
    if text.isascii():
        return not (text.isprintable() or text.translate(_DROP_NL_TAB).isprintable())
    return True


def find_hidden(text: str) -> list[Hidden]:
    """Every hidden character in `text`, in order."""
    if not _needs_scan(text):
        return []
    out: list[Hidden] = []
    for index, ch in enumerate(text):
        kind = hidden_kind(ch)
        if kind is not None:
            out.append(Hidden(index, ch, ord(ch), kind))
    return out


def has_hidden(text: str) -> bool:
    return bool(find_hidden(text))


def visible(text: str) -> str:
    """`text` with each hidden character replaced by a visible `⟦U+XXXX⟧` (newline and tab kept)."""
    if not _needs_scan(text):
        return text
    parts: list[str] = []
    last = 0
    for h in find_hidden(text):
        parts.append(text[last : h.index])
        parts.append(h.label)
        last = h.index + 1
    parts.append(text[last:])
    return "".join(parts)


def strip_hidden(text: str) -> str:
    """`text` without its hidden characters (newline and tab kept)."""
    if not _needs_scan(text):
        return text
    return "".join(ch for ch in text if hidden_kind(ch) is None)


# --- mixed scripts ----------------------------------------------------------------------------

# Scripts we can name from a letter's Unicode name ("CYRILLIC SMALL LETTER A" -> Cyrillic).
# Homoglyph attacks mix Latin with these; other scripts are reported by their first name word.
_SCRIPT_WORDS = {
    "LATIN": "Latin",
    "CYRILLIC": "Cyrillic",
    "GREEK": "Greek",
    "ARMENIAN": "Armenian",
    "CHEROKEE": "Cherokee",
    "HEBREW": "Hebrew",
    "ARABIC": "Arabic",
    "COPTIC": "Coptic",
    "GEORGIAN": "Georgian",
}


# Scripts whose letters look like Latin ones: a word mixing two of these is a homoglyph risk.
# (Japanese mixes kanji, kana and Latin in one word legitimately, so other mixes are not flagged.)
CONFUSABLE_SCRIPTS = frozenset(
    ["Latin", "Cyrillic", "Greek", "Armenian", "Cherokee", "Coptic", "Mathematical"]
)


@dataclass(frozen=True)
class MixedWord:
    """A word whose letters come from more than one script (e.g. Latin `p` with Cyrillic `а`)."""

    start: int
    end: int
    word: str
    scripts: tuple[str, ...]


def script_of(ch: str) -> str | None:
    """The script of a letter, from its Unicode name; None for non-letters and unnamed ones."""
    if ch.isascii():
        return "Latin" if ch.isalpha() else None
    if not ch.isalpha():
        return None
    name = unicodedata.name(ch, "")
    if not name:
        return None
    first = name.split(" ", 1)[0]
    if first in _SCRIPT_WORDS:
        return _SCRIPT_WORDS[first]
    # "MATHEMATICAL BOLD CAPITAL A", "FULLWIDTH LATIN ...", CJK and others.
    for word in name.split(" ")[1:3]:
        if word in _SCRIPT_WORDS:
            return _SCRIPT_WORDS[word]
    return first.capitalize()


def _is_word_char(ch: str) -> bool:
    # Hidden joiners inside a word must not split it: "p\u200bаypal" is still one word.
    return ch.isalnum() or ch == "_" or hidden_kind(ch) in ("zero_width", "variation_selector")


def mixed_script_words(text: str) -> list[MixedWord]:
    """Words that mix letters from look-alike scripts (Latin with Cyrillic, Greek, ...): the
    usual homoglyph trick, as in `pаypal` with a Cyrillic `а`."""
    if text.isascii():
        return []
    out: list[MixedWord] = []
    i, n = 0, len(text)
    while i < n:
        if not _is_word_char(text[i]):
            i += 1
            continue
        start = i
        while i < n and _is_word_char(text[i]):
            i += 1
        word = text[start:i]
        if word.isascii():
            continue
        scripts: list[str] = []
        for ch in word:
            s = script_of(ch)
            if s is not None and s not in scripts:
                scripts.append(s)
        if len(CONFUSABLE_SCRIPTS.intersection(scripts)) > 1:
            out.append(MixedWord(start, i, word, tuple(scripts)))
    return out
