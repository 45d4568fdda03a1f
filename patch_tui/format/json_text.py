"""JSON text from one encoder made once.

`json.dumps(value, **options)` and `JSONEncoder.encode` build a new C encoder on every call,
half the time of a small value; a listing of 10,000 actions makes tens of thousands of calls
(the `--json` lines, each action's size check). `reusable_encoder` builds json's C encoder once
from a `JSONEncoder`'s own options and returns the same text as its `encode`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any


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
