"""The manifest form's values, as plain functions of the field table (no Textual).

What a field's widget shows for the manifest data (`_input_text`, `_switch_flag`, `_enum_text`)
and what a person's text writes back (`_typed_value`, DELETE for an emptied optional field),
driven by each field's `widget` hint in format/fields.py, so a new field needs no case here.
"""

from __future__ import annotations

import json
from typing import Any

from patch_tui.format.fields import FieldSpec
from patch_tui.format.toolfile import DELETE

FieldPath = tuple[str | int, ...]


def doc_path(path: FieldPath) -> str:
    return ".".join(str(p) for p in path if not isinstance(p, int))


def _get(data: Any, path: FieldPath, default: Any = None) -> Any:
    value = data
    for step in path:
        if isinstance(value, dict) and isinstance(step, str) and step in value:
            value = value[step]
        elif isinstance(value, list) and isinstance(step, int) and 0 <= step < len(value):
            value = value[step]
        else:
            return default
    return value


def _has(data: Any, path: FieldPath) -> bool:
    sentinel = object()
    return _get(data, path, sentinel) is not sentinel


def _text_of(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value)


def _default_text(value: Any) -> str:
    """A default as typed in the form: JSON, except a string that reads back as itself."""
    if isinstance(value, str):
        try:
            json.loads(value)
        except ValueError:
            return value if value.strip() == value and value else json.dumps(value)
        return json.dumps(value)
    return json.dumps(value)


def _split_list(text: str) -> list[str]:
    return [part.strip() for part in text.replace("\n", ",").split(",") if part.strip()]


def _enum_text(value: Any) -> str | None:
    """What an EnumField shows: the value, or JSON for a value of the wrong kind (lint says
    why), or None when there is none."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value)


def _field_value(f: FieldSpec, path: FieldPath, data: dict[str, Any]) -> Any:
    """The raw value a field's widget shows (`items: object` is short for `{type: object}`)."""
    value = _get(data, path)
    if f.widget == "type":
        parent = _get(data, path[:-1])
        value = parent if isinstance(parent, str) else value
    return value


def _input_text(f: FieldSpec, path: FieldPath, data: dict[str, Any]) -> str:
    """What a text field shows: lists comma-separated, JSON values as JSON."""
    value = _field_value(f, path, data)
    if f.widget == "list":
        return ", ".join(str(v) for v in value) if isinstance(value, list) else _text_of(value)
    if f.widget == "json":
        return _default_text(value) if _has(data, path) else ""
    return _text_of(value)


def _switch_flag(f: FieldSpec, path: FieldPath, data: dict[str, Any]) -> bool:
    value = _field_value(f, path, data)
    return value if isinstance(value, bool) else bool(f.default)


def _typed_value(f: FieldSpec, text: str) -> Any:
    """What a text field's text writes into the manifest; DELETE removes the field (an empty
    optional one, a blank JSON value)."""
    if f.widget == "list":
        items = _split_list(text)
        return DELETE if not items and not f.required else items
    if f.widget == "json":
        if not text.strip():
            return DELETE
        try:
            return json.loads(text)
        except ValueError:
            return text  # not JSON: the person means this text
    return DELETE if not text and not f.required else text
