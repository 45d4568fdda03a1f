"""How the CLI prints an action's args (commands/inbox_show.py): folded, never cut, one value per
line, every character through the display rule."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from patch_tui.commands.inbox_show import FOLD, _cells, arg_lines, fold
from patch_tui.untrusted.text_safety import visible_line


@given(st.text(), st.integers(min_value=8, max_value=120))
def test_fold_loses_nothing_and_keeps_to_the_width(text: str, width: int) -> None:
    shown = visible_line(text)
    pieces = fold(shown, width)
    assert "".join(pieces) == shown
    for piece in pieces:
        # A piece is over the width only when a single unit (a ⟦U+XXXX⟧ token) is wider.
        assert sum(_cells(c) for c in piece) <= max(width, 10)


def test_a_token_is_never_split_across_lines() -> None:
    pieces = fold(visible_line("ab\x1bcd" * 10), 9)
    assert all(p.count("⟦") == p.count("⟧") for p in pieces)


def test_each_value_is_one_line_of_json_folded_under_its_key() -> None:
    args = {"z": "line one\nline two\x1b]52;c;x\x07", "a": 1, "m": ["x", {"k": None}]}
    lines = arg_lines(args, 40, indent="")
    keys = [line.split(":")[0] for line in lines if not line.startswith((FOLD, " "))]
    assert keys == ["a", "m", "z"]
    joined = "".join(line.removeprefix(FOLD) for line in lines if not line.startswith(" "))
    assert "a: 1" in joined and 'm: ["x", {"k": null}]' in joined
    # the newline is JSON's \n (no second line can be forged), the escape a visible code point
    assert 'z: "line one\\nline two\\u001b]52;c;x\\u0007"' in joined
    assert all("\x1b" not in line and "\x07" not in line for line in lines)
