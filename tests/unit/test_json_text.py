"""`inbox list --json`'s writer (format/json_text.py): whatever a row holds, the text is ASCII,
a row per line, and parses back to exactly the rows; orjson writes what it can, json the rest."""

from __future__ import annotations

import io
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from patch_tui.format.json_text import write_ascii_json_lines

# JSON values as the store decodes them (strictly: no NaN or infinity), with any character a
# string may hold, lone surrogates included (json.loads makes them from "\ud800").
_TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=12)
_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**100), max_value=2**100)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
    max_leaves=12,
)


def written(items: list[Any]) -> bytes:
    out = io.BytesIO()
    write_ascii_json_lines(items, out)
    return out.getvalue()


@given(st.lists(st.dictionaries(_TEXT, _VALUES, max_size=5), max_size=5))
def test_any_rows_come_back_exactly_as_ascii_a_row_per_line(rows: list[dict[str, Any]]) -> None:
    text = written(rows)
    assert text.isascii()
    assert json.loads(text) == rows
    lines = text.decode("ascii").split("\n")
    if not rows:
        assert lines == ["[]", ""]
        return
    assert lines[0] == "[" and lines[-2:] == ["]", ""]
    assert [json.loads(line.removesuffix(",")) for line in lines[1:-2]] == rows


def test_escapes_and_bidi_controls_are_escaped_never_written_raw() -> None:
    row = {"path": "\x1b[31mred\x1b[0m \u202eevil\u202c caf\u00e9", "\u200bkey": 1}
    text = written([row])
    assert b"\x1b" not in text and text.isascii()
    assert b"\\u001b[31m" in text and b"\\u202e" in text and b"\\u200bkey" in text
    assert json.loads(text) == [row]


def test_what_orjson_refuses_is_written_by_json_exactly() -> None:
    big = 2**80 + 1  # beyond 64 bits: orjson refuses it, json writes every digit
    rows = [{"n": big}, {"s": "\ud800"}, {"ok": True}]
    text = written(rows)
    assert str(big).encode() in text and b"\\ud800" in text
    assert json.loads(text) == rows


def test_an_empty_listing_is_an_empty_array() -> None:
    assert written([]) == b"[]\n"
