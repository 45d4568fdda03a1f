"""TOML files (config.toml and theme files) read safely: by type and size first, with a nesting
limit, so a FIFO, /dev/zero or `[[[[...]]]]` saved as a config or theme file is one line of
error, never a hang or a RecursionError. Plain Python: start-up reads these."""

from __future__ import annotations

import os
import tomllib
from typing import Any

# Config and theme files are tiny and flat; tomllib recurses once per nested array or inline
# table, so deeper text is refused before it is parsed (a RecursionError otherwise).
MAX_TOML_DEPTH = 32
MAX_TOML_BYTES = 1 << 20


def _too_deep(text: str, limit: int) -> bool:
    """Whether arrays or inline tables nest deeper than `limit` (brackets inside strings and
    comments do not count). A cheap scan: tomllib does the real parsing afterwards."""
    depth = 0
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "#":
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        if c == '"' or c == "'":
            quote = c * 3 if text.startswith(c * 3, i) else c
            j = i + len(quote)
            while j < n and not text.startswith(quote, j):
                if c == '"' and text[j] == "\\":
                    j += 1
                elif len(quote) == 1 and text[j] == "\n":
                    break
                j += 1
            i = j + len(quote)
            continue
        if c == "[" or c == "{":
            depth += 1
            if depth > limit:
                return True
        elif (c == "]" or c == "}") and depth:
            depth -= 1
        i += 1
    return False


def _data_depth(value: Any) -> int:
    """How deep tables and arrays nest in parsed data (dotted keys nest without brackets)."""
    deepest = 0
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, depth + 1)
            if deepest > MAX_TOML_DEPTH:
                break
            stack.extend(
                (v, depth + 1) for v in (item.values() if isinstance(item, dict) else item)
            )
    return deepest


def loads_toml(text: str) -> dict[str, Any]:
    """tomllib.loads with a nesting limit. Too deep is a TOMLDecodeError, which every caller
    already reports in one line (never a RecursionError)."""
    if _too_deep(text, MAX_TOML_DEPTH):
        raise tomllib.TOMLDecodeError(f"nested deeper than {MAX_TOML_DEPTH} levels")
    try:
        data = tomllib.loads(text)
    except RecursionError:  # should the scan ever miss a way to nest
        raise tomllib.TOMLDecodeError(f"nested deeper than {MAX_TOML_DEPTH} levels") from None
    if _data_depth(data) > MAX_TOML_DEPTH:
        raise tomllib.TOMLDecodeError(f"nested deeper than {MAX_TOML_DEPTH} levels")
    return data


def read_toml(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A TOML file read by type and size first (a FIFO or /dev/zero is refused, see
    untrusted/files.py), then `loads_toml`. Raises OSError, UnicodeDecodeError, TOMLDecodeError."""
    from patch_tui.untrusted.files import read_bytes

    return loads_toml(read_bytes(path, limit=MAX_TOML_BYTES).decode("utf-8"))
