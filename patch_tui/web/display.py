"""Untrusted text on a page: the one display rule (untrusted/text_safety.py) and its flags.

    shown(text)          -> Shown    the text with every hidden character as a visible
                                     ⟦U+XXXX⟧ token, cut into segments so a template marks the
                                     tokens, plus what was found (hidden characters by family,
                                     words mixing look-alike scripts)
    shown_json(value)    -> Shown    a JSON value as pretty canonical JSON (sorted keys: the form
                                     the approval binds), then as above
    args_view(args)      -> list[Arg]  every arg in full, each with its own flags

HTML escaping is the template engine's (Jinja2 autoescape, always on): nothing here builds
markup, so a `<script>` in an arg is text on the page, and the tokens replace control and bidi
characters before escaping ever sees them. Nothing is collapsed or cut: a person sees every arg
in full.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from patch_tui.format.fields import json_type
from patch_tui.untrusted import text_safety
from patch_tui.untrusted.text_safety import find_hidden


@dataclass(frozen=True)
class Segment:
    text: str
    token: bool  # a ⟦U+XXXX⟧ standing for a hidden character


@dataclass(frozen=True)
class Shown:
    segments: tuple[Segment, ...]
    flags: tuple[str, ...]  # one sentence per finding, e.g. "2 bidi controls"

    @property
    def text(self) -> str:
        return "".join(s.text for s in self.segments)

    @property
    def flagged(self) -> bool:
        return bool(self.flags)


def shown(text: str) -> Shown:
    hidden = find_hidden(text)
    segments: list[Segment] = []
    last = 0
    for h in hidden:
        if h.index > last:
            segments.append(Segment(text[last : h.index], False))
        segments.append(Segment(h.label, True))
        last = h.index + 1
    if last < len(text) or not segments:
        segments.append(Segment(text[last:], False))
    # What a person is told, in the words every front end uses (text_safety.flags).
    flags = text_safety.flags(text)
    return Shown(tuple(segments), tuple(flags))


def pretty_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (k, *_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def shown_json(value: Any) -> Shown:
    """JSON escapes control characters itself (`\\u001b`), so the text is inert; the flags come
    from the strings inside, so an escape sequence is still called what it is."""
    text = shown(pretty_json(value))
    flags = dict.fromkeys(f for s in _strings(value) for f in shown(s).flags)
    return Shown(text.segments, tuple(flags))


@dataclass(frozen=True)
class Arg:
    name: Shown
    value: Shown
    kind: str  # the JSON type, as the person reads it


def _json_kind(value: Any) -> str:
    """The JSON type (format/fields.py's names), with a string's length or an array's size."""
    kind = json_type(value)
    if kind == "string":
        return f"string, {len(value)} characters"
    if kind == "array":
        return f"array, {len(value)} items"
    return kind


def args_view(args: dict[str, Any]) -> list[Arg]:
    """Every arg, sorted by name (the canonical order), in full."""
    return [
        Arg(shown(name), shown_json(args[name]), _json_kind(args[name])) for name in sorted(args)
    ]
