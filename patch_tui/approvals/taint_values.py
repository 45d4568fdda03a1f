"""The strings the taint gate compares: those an agent passes in a call's args (at any depth),
and those a tool returned (at any depth of its output, exactly as returned). approvals/gate.py
holds the rule."""

from __future__ import annotations

import json
from typing import Any


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    if isinstance(value, dict):
        # Keys too: a tool sees an object's keys as much as its values, so a recent output
        # passed as a key is passed on all the same (red team: {"<link>": true} went unheld).
        return [s for k, v in value.items() for s in (str(k), *_strings(v))]
    return []


def _returned_strings(output: str) -> list[str]:
    """The strings a tool returned, exactly as the agent got them: every string value (and key)
    at any depth of its JSON result, newlines and quotes as they are, plus the text itself.
    Outputs are remembered as JSON text, where a newline or a quote is escaped: comparing an
    arg with that text alone missed the exact value whenever it held one."""
    found = [output]
    try:
        value = json.loads(output)
    except ValueError:
        return found
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            found.extend(k for k in item if isinstance(k, str))
            stack.extend(item.values())
    return found
