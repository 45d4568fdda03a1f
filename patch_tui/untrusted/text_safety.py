"""The one display rule for untrusted text: every character shown for what it is.

Tool descriptions, tool arguments, tool output, LLM output and upstream servers' text reach people
(the TUI, the CLI, guard's and serve's logs, the exports) and AI agents. A person approving a call
must read exactly what it holds, so:

- every code point that is not visible and ordinary is shown escaped as `⟦U+XXXX⟧` (`visible`):
  controls (C0 but newline and tab, DEL, C1), line and paragraph separators, bidi controls, every
  Default_Ignorable_Code_Point (zero-width characters, the combining grapheme joiner U+034F,
  Mongolian and other variation selectors, Khmer inherent vowels U+17B4/5, the Hangul fillers,
  musical formatting U+1D173-1D17A, tag characters, ...), every other format character (Cf),
  private-use and unassigned code points, lone surrogates, the Braille blank U+2800 (a blank that
  is not a space), and combining marks with no letter to sit on (`find_hidden`);
- look-alikes are flagged (`look_alikes`, `flags`): a word mixing scripts (`pаypal` with a
  Cyrillic `а`), and a domain or path component written wholly in a script other than the rest
  of the address (`payments@асе.com`, all-Cyrillic `асе`), with the letters it can be read as.
  The rules are Unicode's (UTS #39: mixed-script detection at the "highly restrictive" level,
  which lets Latin sit with Han and kana or Hangul; whole-script confusables from
  confusables.txt). Each character's script and the confusables data come from
  `confusable_homoglyphs` (the data files of Unicode's Scripts.txt and confusables.txt, as
  django-registration uses them); it is imported only when text holds a non-ASCII letter.

Why the Default_Ignorable list is written here: Python's unicodedata does not expose the property,
and Unicode defines it with whole reserved ranges (E0000-E0FFF, FFF0-FFF8, ...), so the list
below (DerivedCoreProperties.txt) also covers characters a later Unicode version assigns there.

Pure Python: no Textual, no Rich, so the linter, the CLI, guard and the exports use it as well as
the UI (`ui.safe_text` styles the same findings).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal, NamedTuple

HiddenKind = Literal[
    "control",
    "bidi",
    "zero_width",
    "tag",
    "soft_hyphen",
    "variation_selector",
    "filler",
    "format",
    "default_ignorable",
    "private_use",
    "unassigned",
    "surrogate",
    "blank",
    "lone_mark",
]

# What each kind is called in a sentence for a person.
KIND_WORDS: dict[str, str] = {
    "control": "control character",
    "bidi": "bidirectional control",
    "zero_width": "zero-width character",
    "tag": "invisible tag character",
    "soft_hyphen": "soft hyphen",
    "variation_selector": "variation selector",
    "filler": "invisible filler character",
    "format": "invisible format character",
    "default_ignorable": "invisible (default-ignorable) character",
    "private_use": "private-use character",
    "unassigned": "unassigned code point",
    "surrogate": "lone surrogate",
    "blank": "Braille blank",
    "lone_mark": "lone combining mark",
}

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
_BRAILLE_BLANK = 0x2800

# Default_Ignorable_Code_Point, from Unicode's DerivedCoreProperties.txt (inclusive ranges).
_DEFAULT_IGNORABLE: tuple[tuple[int, int], ...] = (
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x061C, 0x061C),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x206F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)
# Mongolian free variation selectors (and U+180F) are variation selectors too.
_VARIATION_SELECTORS = ((0xFE00, 0xFE0F), (0xE0100, 0xE01EF), (0x180B, 0x180D), (0x180F, 0x180F))


def _in(cp: int, ranges: tuple[tuple[int, int], ...]) -> bool:
    return any(lo <= cp <= hi for lo, hi in ranges)


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


@lru_cache(maxsize=4096)
def _kind_of_code_point(cp: int) -> HiddenKind | None:
    """The family of a hidden code point whatever surrounds it (lone marks need the context)."""
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
    if _in(cp, _VARIATION_SELECTORS):
        return "variation_selector"
    if cp in _FILLER:
        return "filler"
    if cp == _BRAILLE_BLANK:
        return "blank"
    if _in(cp, _DEFAULT_IGNORABLE):
        return "default_ignorable"
    category = unicodedata.category(chr(cp))
    if category == "Cf":
        return "format"
    if category == "Co":
        return "private_use"
    if category == "Cn":
        return "unassigned"
    if category == "Cs":
        return "surrogate"
    if category in ("Zl", "Zp"):
        return "control"
    return None


def hidden_kind(ch: str) -> HiddenKind | None:
    """The family of a hidden character, or None for an ordinary one (newline and tab are
    ordinary). A combining mark is ordinary here: whether it is alone depends on the character
    before it, which `find_hidden` looks at."""
    cp = ord(ch)
    # Fast path: printable ASCII is by far the most common case.
    if 0x20 <= cp < 0x7F or ch in "\n\t":
        return None
    return _kind_of_code_point(cp)


@lru_cache(maxsize=8192)
def _is_mark(ch: str) -> bool:
    return not ch.isascii() and unicodedata.category(ch)[0] == "M"


@lru_cache(maxsize=8192)
def _carries_marks(ch: str) -> bool:
    """Whether a combining mark after `ch` sits on something a person sees (a letter, a digit,
    a symbol, another mark on one): not after a space, a control or nothing."""
    if ch.isascii():
        return 0x21 <= ord(ch) < 0x7F
    return unicodedata.category(ch)[0] in ("L", "N", "M", "S", "P")


_DROP_NL_TAB = str.maketrans("", "", "\n\t")


def _needs_scan(text: str) -> bool:
    # Most text is plain printable ASCII plus newlines/tabs: skip the per-character loop then.
    if text.isascii():
        return not (text.isprintable() or text.translate(_DROP_NL_TAB).isprintable())
    return True


def find_hidden(text: str) -> list[Hidden]:
    """Every hidden character in `text`, in order, lone combining marks included."""
    if not _needs_scan(text):
        return []
    out: list[Hidden] = []
    carries = False  # whether the previous character shown as itself can carry a mark
    for index, ch in enumerate(text):
        if " " <= ch <= "~":  # printable ASCII, the bulk of most text
            carries = ch != " "
            continue
        kind = hidden_kind(ch)
        if kind is None and not carries and _is_mark(ch):
            kind = "lone_mark"
        if kind is not None:
            out.append(Hidden(index, ch, ord(ch), kind))
            carries = False
        else:
            carries = _carries_marks(ch)
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


def visible_line(text: str) -> str:
    """`visible`, on one line: newline and tab shown as `⟦U+000A⟧` and `⟦U+0009⟧` too (a log
    line, a list row, a tool name)."""
    return visible(text).replace("\n", "⟦U+000A⟧").replace("\t", "⟦U+0009⟧")


def strip_hidden(text: str) -> str:
    """`text` without its hidden characters (newline and tab kept)."""
    if not _needs_scan(text):
        return text
    drop = {h.index for h in find_hidden(text)}
    return "".join(ch for i, ch in enumerate(text) if i not in drop)


# --- look-alikes (UTS #39) -----------------------------------------------------------------

# Scripts no word belongs to on its own: punctuation, digits, marks (UTS #39 ignores them).
_NO_SCRIPT = frozenset(["COMMON", "INHERITED", "Unknown"])
# UTS #39's "highly restrictive" level: one script, or Latin with the scripts Chinese, Japanese
# and Korean text is written in together (Han with kana, Han with Bopomofo, Han with Hangul).
_TOGETHER = (
    frozenset(["LATIN", "HAN", "HIRAGANA", "KATAKANA"]),
    frozenset(["LATIN", "HAN", "BOPOMOFO"]),
    frozenset(["LATIN", "HAN", "HANGUL"]),
)


class MixedWord(NamedTuple):  # named tuples, not frozen dataclasses: a fifth of the import time
    """A word whose letters come from more than one script (e.g. Latin `p` with Cyrillic `а`)."""

    start: int
    end: int
    word: str
    scripts: tuple[str, ...]


class LookAlike(NamedTuple):
    """A piece of text that can be read as other text: a word mixing scripts (`mixed_word`), or
    a component of an address written wholly in another script than the rest of it
    (`other_script`). `reads_as`: the letters it looks like in the surrounding script, when
    Unicode's confusables give one for each of its letters."""

    start: int
    end: int
    text: str
    kind: Literal["mixed_word", "other_script"]
    scripts: tuple[str, ...]  # the text's own scripts, e.g. ("Latin", "Cyrillic")
    around: str | None = None  # other_script: the script of the rest of the address
    reads_as: str | None = None

    def sentence(self) -> str:
        """What a person is told, in plain words (look-alike letters are shown escaped-safe)."""
        shown = visible_line(self.text)
        if self.kind == "mixed_word":
            what = f'"{shown}" mixes {" and ".join(self.scripts)} letters in one word'
        else:
            what = (
                f'"{shown}" is written in {self.scripts[0]} letters inside a {self.around} address'
            )
        if self.reads_as is not None and self.reads_as != self.text:
            what += f' (it looks like "{visible_line(self.reads_as)}" but is not)'
        return what


def _script_name(alias: str) -> str:
    return alias.replace("_", " ").title()


@lru_cache(maxsize=4096)
def _script(ch: str) -> str:
    """The script of a character (confusable_homoglyphs' alias of Scripts.txt: LATIN,
    CYRILLIC, COMMON, INHERITED, ...)."""
    if ch.isascii():
        return "LATIN" if ch.isalpha() else "COMMON"
    from confusable_homoglyphs import categories

    return str(categories.alias(ch))


def script_of(ch: str) -> str | None:
    """The script of a letter ("Latin", "Cyrillic", ...); None for digits, punctuation, marks."""
    alias = _script(ch)
    return None if alias in _NO_SCRIPT else _script_name(alias)


def _scripts(text: str) -> list[str]:
    """The scripts of `text`'s letters (aliases), in order of first use."""
    found: list[str] = []
    for ch in text:
        alias = _script(ch)
        if alias not in _NO_SCRIPT and alias not in found:
            found.append(alias)
    return found


def _mixed(scripts: list[str]) -> bool:
    if len(scripts) < 2:
        return False
    wanted = set(scripts)
    return not any(wanted <= together for together in _TOGETHER)


@lru_cache(maxsize=8192)
def _is_word_char(ch: str) -> bool:
    # Hidden joiners inside a word must not split it: "p\u200bаypal" is still one word.
    if ch.isascii():
        return ch.isalnum() or ch == "_"
    return ch.isalnum() or _is_mark(ch) or hidden_kind(ch) is not None


# Runs with no whitespace and no ASCII punctuation (but `_`): the candidate words, found by `re`
# so that ASCII text costs no per-character Python loop.
_RUNS = re.compile(r"[^\s!-/:-@\[-^`{-~]+")
_NON_SPACE = re.compile(r"\S+")
_SEPARATOR = re.compile(r"[./\\@:]")


def _words(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    stop = len(text) if end is None else end
    for run in _RUNS.finditer(text, start, stop):
        a, b = run.span()
        if text.isascii() or text[a:b].isascii():
            out.append((a, b))  # letters, digits and `_` only
            continue
        i = a
        while i < b:  # non-ASCII punctuation and symbols split words too
            if not _is_word_char(text[i]):
                i += 1
                continue
            first = i
            while i < b and _is_word_char(text[i]):
                i += 1
            out.append((first, i))
    return out


@lru_cache(maxsize=1024)
def _reads_as(text: str, target: str) -> str | None:
    """`text` with each letter replaced by its look-alike in script `target` (Unicode's
    confusables), or None when a letter has none."""
    from confusable_homoglyphs import categories, confusables

    out: list[str] = []
    for ch in text:
        alias = _script(ch)
        if alias in _NO_SCRIPT or alias == target:
            out.append(ch)
            continue
        twins = [
            glyph["c"]
            for glyph in confusables.confusables_data.get(ch, [])
            if len(glyph["c"]) == 1 and categories.alias(glyph["c"]) == target
        ]
        if not twins:
            return None
        # Prefer the plain letter (LATIN SMALL LETTER A) over its variants (FULLWIDTH ...).
        twins.sort(key=lambda c: (not c.isascii(), c))
        out.append(twins[0])
    return "".join(out)


def _mixed_word(text: str, start: int, end: int) -> LookAlike | None:
    word = text[start:end]
    if word.isascii():
        return None
    scripts = _scripts(word)
    if not _mixed(scripts):
        return None
    # Read it in the script most of its letters are in (pаypal: Latin).
    letters = [_script(ch) for ch in word if _script(ch) not in _NO_SCRIPT]
    main = max(scripts, key=letters.count)
    return LookAlike(
        start,
        end,
        word,
        "mixed_word",
        tuple(_script_name(s) for s in scripts),
        reads_as=_reads_as(word, main),
    )


def _addresses(text: str) -> list[tuple[int, int]]:
    """Runs of non-space characters holding an address separator (`a@b.com`, `/etc/x`)."""
    return [
        run.span()
        for run in _NON_SPACE.finditer(text)
        if not run.group().isascii() and _SEPARATOR.search(run.group())
    ]


def _other_script_components(text: str, start: int, end: int) -> list[LookAlike]:
    """The components of the address text[start:end] written wholly in a script that none of
    its other components uses (`асе` in `payments@асе.com`)."""
    components = [
        (a, b, _scripts(text[a:b]))
        for a, b in _words(text, start, end)
        if not text[a:b].isascii() or text[a:b].isalpha()
    ]
    out: list[LookAlike] = []
    for a, b, scripts in components:
        if len(scripts) != 1:
            continue  # no letters (digits only), or mixed: reported as a mixed word
        around: dict[str, int] = {}
        for c, d, other in components:
            if (c, d) != (a, b):
                for s in other:
                    around[s] = around.get(s, 0) + (d - c)
        if not around or scripts[0] in around:
            continue
        main = max(around, key=lambda s: around[s])
        if _mixed([scripts[0], main]):
            out.append(
                LookAlike(
                    a,
                    b,
                    text[a:b],
                    "other_script",
                    (_script_name(scripts[0]),),
                    _script_name(main),
                    _reads_as(text[a:b], main),
                )
            )
    return out


def _has_letters_beyond_ascii(text: str) -> bool:
    return not text.isascii() and any(not ch.isascii() and ch.isalpha() for ch in text)


def look_alikes(text: str) -> list[LookAlike]:
    """Every look-alike in `text`, in order: words mixing scripts, and components of an
    address written wholly in another script than the rest of the address."""
    if not _has_letters_beyond_ascii(text):
        return []
    found = [m for a, b in _words(text) if (m := _mixed_word(text, a, b)) is not None]
    for a, b in _addresses(text):
        found.extend(_other_script_components(text, a, b))
    found.sort(key=lambda x: (x.start, x.end))
    return found


def mixed_script_words(text: str) -> list[MixedWord]:
    """Words that mix scripts (Latin with Cyrillic, Greek, ...): the usual homoglyph trick, as in
    `pаypal` with a Cyrillic `а`."""
    return [
        MixedWord(x.start, x.end, x.text, x.scripts)
        for x in look_alikes(text)
        if x.kind == "mixed_word"
    ]


# --- what a person is told ------------------------------------------------------------------


def hidden_sentence(hidden: list[Hidden]) -> str:
    """One sentence about hidden characters: how many, of which families, which code points."""
    kinds: dict[str, int] = {}
    for h in hidden:
        kinds[h.kind] = kinds.get(h.kind, 0) + 1
    families = ", ".join(
        f"{n} {KIND_WORDS[k]}{'s' if n != 1 else ''}"
        for k, n in sorted(kinds.items(), key=lambda kv: -kv[1])
    )
    codes = ", ".join(dict.fromkeys(f"U+{h.codepoint:04X}" for h in hidden))
    noun = "character" if len(hidden) == 1 else "characters"
    return f"{len(hidden)} hidden {noun} shown as ⟦U+…⟧ ({families}: {codes})"


def flags(text: str) -> list[str]:
    """What a person must be told about `text` before trusting it, one plain sentence each:
    its hidden characters (all in one sentence), then each look-alike. Empty for plain text."""
    out: list[str] = []
    hidden = find_hidden(text)
    if hidden:
        out.append(hidden_sentence(hidden))
    out.extend(x.sentence() for x in look_alikes(text))
    return out


def value_flags(value: object, where: str = "") -> list[tuple[str, str]]:
    """`flags` of every string inside a JSON value (keys too), each with where it is:
    `("to", sentence)`, `("to key", ...)`, `("items[2]", ...)` under `where`."""
    out: list[tuple[str, str]] = []
    if isinstance(value, str):
        out.extend((where, sentence) for sentence in flags(value))
    elif isinstance(value, dict):
        for key, item in value.items():
            name = f"{where}.{key}" if where else str(key)
            out.extend((f"{name} key", sentence) for sentence in flags(str(key)))
            out.extend(value_flags(item, name))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out.extend(value_flags(item, f"{where}[{index}]"))
    return out
