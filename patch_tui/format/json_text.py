"""JSON text, fast: from one encoder made once, and in lines for a long listing.

`json.dumps(value, **options)` and `JSONEncoder.encode` build a new C encoder on every call,
half the time of a small value; a listing of 10,000 actions makes tens of thousands of calls
(each action's size check). `reusable_encoder` builds json's C encoder once from a
`JSONEncoder`'s own options and returns the same text as its `encode`.

`write_ascii_json_lines` writes `inbox list --json`: 5.8 MB for 10,000 actions, which json's C
encoder took 50-80 ms to write on this machine and orjson writes in a tenth of that.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, BinaryIO


def reusable_encoder(options: json.JSONEncoder) -> Callable[[Any], str]:
    """`options.encode`, with the C encoder made once. Without the circular check (a value that
    holds itself raises RecursionError instead of ValueError): for data decoded from JSON, which
    never does. Falls back to `options.encode` where Python has no C encoder or for `indent`."""
    import json.encoder

    # Not in typeshed; None where Python was built without json's C speedups.
    c_make_encoder = getattr(json.encoder, "c_make_encoder", None)
    if c_make_encoder is None or options.indent is not None:  # pragma: no cover
        return options.encode
    strings = (
        json.encoder.encode_basestring_ascii
        if options.ensure_ascii
        else json.encoder.encode_basestring
    )
    chunks = c_make_encoder(
        None,  # no circular check (see above)
        options.default,
        strings,
        None,  # indent
        options.key_separator,
        options.item_separator,
        options.sort_keys,
        options.skipkeys,
        options.allow_nan,
    )
    return lambda value: "".join(chunks(value, 0))


def write_ascii_json_lines(items: Sequence[Any], out: BinaryIO) -> None:
    """`items` as one JSON array of ASCII-only text, an item per line: json.dumps(item,
    ensure_ascii=True, separators=(",", ":")) each, parsed back the same, so a terminal showing it
    cannot be tricked by bidi controls or escape sequences inside tool args or results.

    Each line is copied out as soon as it is made, and freed: keeping a bytes object per item
    until the end took 90 MB for 10,000 actions (orjson sizes each one's buffer generously), and
    every fresh page of that is a page fault, ten times the encoding's own time on this machine.

    For values decoded from strict JSON (the store's columns: approvals/schema.py): orjson writes
    NaN and infinity as null, where json would write `NaN`, which is not JSON either. orjson writes
    UTF-8 and refuses what json may take (ints beyond 64 bits, lone surrogates, keys that are not
    strings): such an item, or one whose line is not ASCII, is written by json, as it was before."""
    import orjson

    if not items:
        out.write(b"[]\n")
        return
    pending = bytearray(b"[\n")
    separator = b""
    for item in items:
        try:
            line = orjson.dumps(item)
        except TypeError:  # orjson.JSONEncodeError: json says whether it is JSON at all
            line = b""
        if not line or not line.isascii():
            line = _ASCII_COMPACT(item).encode("ascii")
        pending += separator
        pending += line
        separator = b",\n"
        if len(pending) >= _WRITE_AT:
            out.write(pending)
            pending.clear()
    pending += b"\n]\n"
    out.write(pending)


# Bytes gathered before each write: stdout may be unbuffered (PYTHONUNBUFFERED, `python -u`),
# where a write per line was 20,000 system calls for 10,000 actions, 20-40 ms.
_WRITE_AT = 64 * 1024


_ASCII_COMPACT = reusable_encoder(json.JSONEncoder(ensure_ascii=True, separators=(",", ":")))
