"""Red team (issue 28): the store's strict JSON reading (approvals/schema.py) has a fast path,
json's C scanner alone, for text that is one value and nothing else. Whatever a store holds, the
fast path and `_STRICT_JSON.decode` agree exactly: the same value (1 is not 1.0, -0.0 is not
0.0, key order kept), or both refuse it."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from patch_tui.approvals.schema import _STRICT_JSON, _decoded

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**130), max_value=2**130)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=20,
)
# What another program may put around, inside or instead of a value.
_NOISE = st.sampled_from(
    ["", " ", "\n", "\t", "\r\n ", "\ufeff", "\u00a0", "NaN", "-Infinity", "1e400", "-1E999",
     "\\ud800", "x", ",", "]", "}", '"', "\x00", "0", "-0", "01", "1.", ".5", "+1", "{}", "[]"]
)  # fmt: skip


def _outcome(read: Any, text: str) -> tuple[str, str]:
    try:
        value = read(text)
    except (ValueError, RecursionError) as exc:
        return ("refused", type(exc).__name__)
    return ("read", json.dumps(value, ensure_ascii=True))


@settings(max_examples=400, deadline=None)
@given(
    value=_VALUES,
    before=_NOISE,
    after=_NOISE,
    cut=st.integers(min_value=0, max_value=200),
    insert=_NOISE,
    spaced=st.booleans(),
)
def test_the_fast_path_reads_every_text_as_decode_does(
    value: Any, before: str, after: str, cut: int, insert: str, spaced: bool
) -> None:
    text = json.dumps(
        value, ensure_ascii=cut % 2 == 0, **({} if spaced else {"separators": (",", ":")})
    )
    for candidate in (
        text,
        before + text + after,
        text[:cut] + insert + text[cut:],
        text[:cut],
    ):
        assert _outcome(_decoded, candidate) == _outcome(_STRICT_JSON.decode, candidate), candidate


def test_numbers_at_the_edges_are_read_alike_and_infinity_never() -> None:
    for text in ("1e16", "1E16", "-0.0", "5e-324", "1e-400", "1e308", "-1e308", str(2**200)):
        assert _outcome(_decoded, text) == _outcome(_STRICT_JSON.decode, text)
        assert _outcome(_decoded, text)[0] == "read", text
    for text in ("1e309", "-1e400", "NaN", "Infinity", "-Infinity", "[1e999]", '{"a":NaN}'):
        assert _outcome(_decoded, text) == ("refused", "ValueError"), text
        assert _outcome(_STRICT_JSON.decode, text) == ("refused", "ValueError"), text
