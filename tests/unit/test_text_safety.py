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
    assert strip_hidden(text) == "".join(ch for ch in text if hidden_kind(ch) is None)
    # Only hidden characters are replaced, so removing the labels gives the stripped text back.
    assert len(find_hidden(text)) == shown.count("⟦U+") - text.count("⟦U+")
