"""Hidden and deceptive Unicode is found, shown and removed exactly."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from patch_tui.untrusted.text_safety import (
    find_hidden,
    hidden_kind,
    mixed_script_words,
    strip_hidden,
    visible,
)


@pytest.mark.parametrize(
    ("char", "kind"),
    [
        ("\x00", "control"),
        ("\x1b", "control"),
        ("\r", "control"),
        ("\x7f", "control"),
        ("\x85", "control"),
        ("\x9b", "control"),
        ("\u202a", "bidi"),
        ("\u202e", "bidi"),
        ("\u2066", "bidi"),
        ("\u2069", "bidi"),
        ("\u200e", "bidi"),
        ("\u200f", "bidi"),
        ("\u061c", "bidi"),
        ("\u200b", "zero_width"),
        ("\u200d", "zero_width"),
        ("\u2060", "zero_width"),
        ("\ufeff", "zero_width"),
        ("\u180e", "zero_width"),
        ("\U000e0001", "tag"),
        ("\U000e0041", "tag"),
        ("\U000e007f", "tag"),
        ("\u00ad", "soft_hyphen"),
        ("\ufe0f", "variation_selector"),
        ("\U000e0100", "variation_selector"),
        ("\u3164", "filler"),
        ("\u2028", "control"),
        ("\u2029", "control"),
        ("\u2062", "zero_width"),
        ("\u206f", "zero_width"),
        ("\ufff9", "zero_width"),
        ("\u115f", "filler"),
        ("\u1160", "filler"),
        ("\uffa0", "filler"),
    ],
)
def test_each_hidden_family_is_found(char: str, kind: str) -> None:
    text = f"ab{char}cd"
    found = find_hidden(text)
    assert [(h.index, h.char, h.codepoint, h.kind) for h in found] == [(2, char, ord(char), kind)]


@pytest.mark.parametrize(
    "text", ["plain text.", "line\nbreak\tand tab", "café, naïve, 日本語", "é", ""]
)
def test_ordinary_text_has_nothing_hidden(text: str) -> None:
    assert find_hidden(text) == []
    assert visible(text) == text
    assert strip_hidden(text) == text


def test_visible_labels_each_hidden_character_and_keeps_newlines() -> None:
    text = "Send\u202e the report\u200b\nnow\x1b[31m\t!"
    assert visible(text) == "Send⟦U+202E⟧ the report⟦U+200B⟧\nnow⟦U+001B⟧[31m\t!"


def test_tag_characters_are_shown_with_five_digits() -> None:
    # An invisible "hi" spelled in tag characters: the classic hidden-prompt trick.
    assert visible("ok\U000e0068\U000e0069") == "ok⟦U+E0068⟧⟦U+E0069⟧"


def test_strip_hidden_removes_only_hidden_characters() -> None:
    assert strip_hidden("a\u00adb\u200bc\nd\te\u202e") == "abc\nd\te"


def test_hidden_kind_of_ordinary_characters_is_none() -> None:
    for ch in "aZ9 ~\n\té€日😀":
        assert hidden_kind(ch) is None


def test_mixed_script_word_latin_with_cyrillic() -> None:
    text = "Log in to pаypal now"  # the first `а` is CYRILLIC SMALL LETTER A
    words = mixed_script_words(text)
    assert len(words) == 1
    w = words[0]
    assert (w.start, w.end, w.word) == (10, 16, "pаypal")
    assert text[w.start : w.end] == w.word
    assert set(w.scripts) == {"Latin", "Cyrillic"}


def test_mixed_script_word_latin_with_greek() -> None:
    words = mixed_script_words("the Αpple store")  # GREEK CAPITAL LETTER ALPHA
    assert [w.word for w in words] == ["Αpple"]
    assert set(words[0].scripts) == {"Latin", "Greek"}


@pytest.mark.parametrize(
    "text",
    [
        "plain English",
        "Привет мир and hello",  # separate words in separate scripts are fine
        "café naïve Ångström",  # accented Latin stays Latin
        "Python入門のテキスト",  # Japanese mixes scripts legitimately
        "λ calculus",
    ],
)
def test_single_script_words_are_not_flagged(text: str) -> None:
    assert mixed_script_words(text) == []


def test_zero_width_inside_a_word_does_not_split_it() -> None:
    words = mixed_script_words("p\u200bаypal")
    assert [w.word for w in words] == ["p\u200bаypal"]


@given(st.text())
def test_visible_never_leaves_a_hidden_character(text: str) -> None:
    shown = visible(text)
    assert find_hidden(shown) == []
    hidden = {h.index for h in find_hidden(text)}
    assert strip_hidden(text) == "".join(ch for i, ch in enumerate(text) if i not in hidden)
    # Only hidden characters are replaced, so removing the labels gives the stripped text back.
    assert len(find_hidden(text)) == shown.count("⟦U+") - text.count("⟦U+")


# -- the one display rule (issue 24): every invisible code point escaped, look-alikes flagged --

# Each of these rendered as nothing (or as a space) in the TUI or the CLI before.
INVISIBLES = {
    "\u034f": "default_ignorable",  # COMBINING GRAPHEME JOINER
    "\u180b": "variation_selector",  # MONGOLIAN FREE VARIATION SELECTOR ONE
    "\u17b5": "default_ignorable",  # KHMER VOWEL INHERENT AA
    "\u2800": "blank",  # BRAILLE PATTERN BLANK
    "\U0001d173": "default_ignorable",  # MUSICAL SYMBOL BEGIN BEAM
    "\ue000": "private_use",
    "\U000f0000": "private_use",
    "\U000e0fff": "default_ignorable",  # reserved, default-ignorable whatever Unicode assigns
    "\u0378": "unassigned",
    "\ufff0": "default_ignorable",
    "\U000110bd": "format",  # KAITHI NUMBER SIGN
}


@pytest.mark.parametrize(("char", "kind"), list(INVISIBLES.items()))
def test_every_invisible_code_point_is_escaped(char: str, kind: str) -> None:
    text = f"to{char}x"
    assert [(h.index, h.kind) for h in find_hidden(text)] == [(2, kind)]
    assert visible(text) == f"to⟦U+{ord(char):04X}⟧x"


def test_a_combining_mark_with_no_letter_is_escaped_and_one_on_a_letter_is_not() -> None:
    assert visible("e\u0301 and \u0301 alone") == "e\u0301 and ⟦U+0301⟧ alone"
    assert visible("\u0301first") == "⟦U+0301⟧first"
    # after a hidden character it sits on nothing a person sees
    assert visible("a\u200b\u0301") == "a⟦U+200B⟧⟦U+0301⟧"


def test_visible_line_keeps_a_log_line_on_one_line() -> None:
    from patch_tui.untrusted.text_safety import visible_line

    assert visible_line("a\nb\tc\x1b") == "a⟦U+000A⟧b⟦U+0009⟧c⟦U+001B⟧"


def test_an_all_cyrillic_domain_in_a_latin_address_is_flagged_with_what_it_looks_like() -> None:
    from patch_tui.untrusted.text_safety import flags, look_alikes

    text = "payments@асе.com"  # а, с, е are Cyrillic
    found = look_alikes(text)
    assert [(x.text, x.kind, x.scripts, x.around, x.reads_as) for x in found] == [
        ("асе", "other_script", ("Cyrillic",), "Latin", "ace")
    ]
    assert flags(text) == [
        '"асе" is written in Cyrillic letters inside a Latin address (it looks like "ace" but '
        "is not)"
    ]


def test_a_mixed_script_word_says_what_it_reads_as() -> None:
    from patch_tui.untrusted.text_safety import flags

    assert flags("billing@pаypal.com") == [
        '"pаypal" mixes Latin and Cyrillic letters in one word (it looks like "paypal" but is not)'
    ]


@pytest.mark.parametrize(
    "text",
    ["пример.рф", "mail@example.com", "https://例え.jp/パス", "/srv/данные/data", "café@naïve.fr"],
)
def test_addresses_in_one_script_are_not_flagged(text: str) -> None:
    from patch_tui.untrusted.text_safety import look_alikes

    found = [x.text for x in look_alikes(text)]
    # A path with a Cyrillic folder among Latin ones is said (it is another script), nothing else.
    assert found == (["данные"] if "данные" in text else [])
