"""ui/safe_text: untrusted text becomes plain Content with hidden characters as visible tokens."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from inboxkit import HOSTILE

from patch_tui.ui.safe_text import SafeReport, json_view, safe, safe_line, scan

C1 = {chr(c) for c in range(0x80, 0xA0)}


def _no_controls(text: str) -> None:
    assert "\x1b" not in text
    assert not C1.intersection(text)
    assert not any(ord(c) < 0x20 and c not in "\n\t" for c in text)


def test_markup_is_never_interpreted() -> None:
    for value in (
        "[/]",
        "[/",
        "[@click=app.quit]x[/]",
        "[link=https://evil.example]good[/link]",
        "[b]bold[/b]",
    ):
        content = safe(value)
        assert content.plain == value
        assert all(
            "link" not in str(span.style) and "@click" not in str(span.style)
            for span in content.spans
        )


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_strings_become_tokens(name: str) -> None:
    value = HOSTILE[name]
    report = SafeReport()
    content = safe(value, report=report)
    _no_controls(content.plain)
    hidden = [
        c
        for c in value
        if ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 or ord(c) in (0x202E, 0x200B) or ord(c) >= 0xE0000
    ]
    for ch in hidden:
        assert f"⟦U+{ord(ch):04X}⟧" in content.plain
    assert report.hidden_total == len(hidden)


def test_tokens_are_styled_and_counted_by_family() -> None:
    report = SafeReport()
    content = safe("a\u202eb\u200bc\x1bd\u00ade\ufe0ff\u3164", report=report)
    assert content.plain == "a⟦U+202E⟧b⟦U+200B⟧c⟦U+001B⟧d⟦U+00AD⟧e⟦U+FE0F⟧f⟦U+3164⟧"
    assert dict(report.hidden) == {
        "bidi": 1,
        "zero_width": 1,
        "control": 1,
        "soft_hyphen": 1,
        "variation_selector": 1,
        "filler": 1,
    }
    # Each token carries a style; a token typed literally by an attacker does not.
    assert len(content.spans) == 6
    fake = safe("⟦U+202E⟧")
    assert fake.spans == [] and not scan("⟦U+202E⟧")


def test_newline_and_tab_kept_except_on_one_line() -> None:
    assert safe("a\nb\tc").plain == "a\nb\tc"
    assert safe_line("a\nb\tc").plain == "a⟦U+000A⟧b⟦U+0009⟧c"


def test_other_format_characters_and_lone_surrogates() -> None:
    report = SafeReport()
    content = safe("x\u2028y\u2066z\ud800", report=report)
    assert content.plain == "x⟦U+2028⟧y⟦U+2066⟧z⟦U+D800⟧"
    content.plain.encode("utf-8")  # a lone surrogate would make the terminal's encoder fail
    assert report.hidden_total == 3


def test_mixed_script_words_are_flagged() -> None:
    report = SafeReport()
    content = safe("log in at pаypal.com now", report=report)  # Cyrillic а
    assert report.mixed == 1 and report.mixed_words == ["pаypal"]
    assert any("underline" in str(span.style) for span in content.spans)
    assert "look-alike" in (report.banner() or safe("")).plain


def test_banner_summarises() -> None:
    report = scan("a\u202e\u202eb\x1b")
    banner = report.banner()
    assert banner is not None
    assert "3 hidden or control characters" in banner.plain
    assert "2 bidi" in banner.plain and "1 control" in banner.plain
    assert SafeReport().banner() is None


def test_json_view_is_canonical_and_collapses_long_values() -> None:
    args = {"b": "x" * 1000, "a": [1, None, True, {"z": "\u202e"}]}
    view = json_view(args)
    text = view.content.plain
    assert text.index('"a"') < text.index('"b"')  # sorted keys, as the approval binds them
    assert view.collapsed == ["$.b"]
    assert "1,000" not in text and "760 more characters hidden: press e to expand $.b" in text
    assert "⟦U+202E⟧" in text and view.report.hidden_total == 1
    full = json_view(args, expanded={"$.b"})
    assert full.collapsed == [] and "x" * 1000 in full.content.plain


def test_json_view_counts_hidden_characters_inside_collapsed_values() -> None:
    view = json_view({"text": "a" * 500 + "\u202e"})
    assert view.collapsed and view.report.hidden["bidi"] == 1


def test_json_view_escapes_quotes_and_newlines() -> None:
    text = json_view({"k": 'say "hi"\nbye\\'}).content.plain
    assert '"say \\"hi\\"\\nbye\\\\"' in text


@given(st.text())
def test_any_text_is_safe(text: str) -> None:
    out = safe(text).plain
    _no_controls(out)
    assert "\u202e" not in out and "\u200b" not in out
    out.encode("utf-8")


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(),
        lambda c: st.lists(c) | st.dictionaries(st.text(), c),
        max_leaves=20,
    )
)
def test_any_json_is_safe(value: object) -> None:
    json.dumps(value)
    out = json_view(value, expanded={"*"}).content.plain
    _no_controls(out)
    out.encode("utf-8")
