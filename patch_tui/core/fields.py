"""The manifest's field names, enums and value patterns: plain data, no pydantic.

Kept apart from manifest.py so the linter and the tool-file parser start without importing
pydantic (a tenth of a second on every `patch-tui lint` run); manifest.py re-exports all of it.
"""

from __future__ import annotations

import re
from typing import Any

INPUT_TYPES: tuple[str, ...] = ("string", "number", "integer", "boolean", "array", "object")
FILESYSTEM_MODES: tuple[str, ...] = ("none", "read-only", "read-write")
AUTH_PROVIDERS: tuple[str, ...] = ("gmail", "google_calendar", "slack", "github", "linear")

NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")
VERSION_RE = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$")
PACKAGE_RE = re.compile(r"^[a-zA-Z0-9._-]+==\d+(\.\d+){0,2}$")
PYTHON_VERSION_RE = re.compile(r"^3\.\d{1,2}$")
AUTH_SCOPE_RE = re.compile(r"^([a-z][a-z0-9_]*)\.([a-z][a-z0-9_.]*)$")
# ISO 8601 UTC with seconds and a Z (fractions allowed), the stamp the generator writes.
GENERATED_AT_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$")

TOP_LEVEL_FIELDS: tuple[str, ...] = (
    "name",
    "version",
    "description",
    "inputs",
    "outputs",
    "capabilities",
    "runtime",
    "external_auth",
    "generated_by",
    "generated_at",
)
REQUIRED_FIELDS: tuple[str, ...] = (
    "name",
    "version",
    "description",
    "inputs",
    "outputs",
    "capabilities",
    "runtime",
)
INPUT_FIELDS: tuple[str, ...] = (
    "name",
    "type",
    "description",
    "required",
    "default",
    "tainted_ok",
    "items",
)
OUTPUT_FIELDS: tuple[str, ...] = ("type", "description", "items")
CAPABILITY_FIELDS: tuple[str, ...] = ("network", "filesystem", "human_confirm", "browser")
RUNTIME_FIELDS: tuple[str, ...] = ("language", "python_version", "packages")

# Canonical order of the keys of each mapping, by where it sits in the manifest.
FIELD_ORDER: dict[str, tuple[str, ...]] = {
    "": TOP_LEVEL_FIELDS,
    "inputs[]": INPUT_FIELDS,
    "outputs": OUTPUT_FIELDS,
    "capabilities": CAPABILITY_FIELDS,
    "runtime": RUNTIME_FIELDS,
}


# The Python types that hold a value of each JSON type once parsed.
JSON_PY_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "number": (int, float),
    "integer": (int,),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
    "null": (type(None),),
}


def fits_json_type(value: Any, type_: str) -> bool:
    """Whether a parsed value is of a JSON type, strictly: a bool is never a number and 5.0 is
    not an integer. An unknown type name fits nothing."""
    if isinstance(value, bool) and type_ in ("number", "integer"):
        return False
    return isinstance(value, JSON_PY_TYPES.get(type_, ()))


def json_type(value: Any) -> str:
    """The JSON type name of a parsed value: "null", "boolean", "integer", "number", "string",
    "array" or "object" (a bool is never a number, as in JSON Schema)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    return "object"
