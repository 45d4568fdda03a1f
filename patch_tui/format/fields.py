"""The manifest's field names, enums and value patterns: plain data, no pydantic.

Kept apart from manifest.py so the linter, the tool-file parser and the desk's first frame start
without importing pydantic (a tenth of a second on every `patch-tui lint` run and every desk
start); manifest.py re-exports all of it.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any, Literal

INPUT_TYPES: tuple[str, ...] = ("string", "number", "integer", "boolean", "array", "object")
FILESYSTEM_MODES: tuple[str, ...] = ("none", "read-only", "read-write")
AUTH_PROVIDERS: tuple[str, ...] = ("gmail", "google_calendar", "slack", "github", "linear")

NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")
VERSION_RE = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$")
PACKAGE_RE = re.compile(r"^[a-zA-Z0-9._-]+==\d+(\.\d+){0,2}$")
PYTHON_VERSION_RE = re.compile(r"^3\.\d{1,2}$")
# The runtime's own rule (one dot): `gmail.read.all` is refused.
AUTH_SCOPE_RE = re.compile(r"^([a-z][a-z0-9_]*)\.([a-z][a-z0-9_]*)$")
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


def bump_version(version: str, part: Literal["major", "minor", "patch"] = "minor") -> str:
    """x.y.z with one part increased and the lower ones reset."""
    match = VERSION_RE.match(version)
    if not match:
        return "1.0.0"
    major, minor, patch = (int(g) for g in match.groups())
    if part == "major":
        return f"{major + 1}.0.0"
    if part == "minor":
        return f"{major}.{minor + 1}.0"
    return f"{major}.{minor}.{patch + 1}"


# Where each model of manifest.py sits in a field_doc path ("inputs.type" -> Input's `type`).
_DOC_MODELS: dict[str, str] = {
    "": "Manifest",
    "inputs": "Input",
    "outputs": "Outputs",
    "capabilities": "Capabilities",
    "runtime": "Runtime",
    "items": "Items",
}


def field_doc(path: str) -> str:
    """The help text of a field, by dotted path: "name", "inputs.type", "capabilities.network".

    The manifest model's field docs (manifest.py, STYLE.md 3), whitespace folded. The form asks
    for them while it builds its first frame, so they are read from manifest.py's source the way
    pydantic reads attribute docstrings, without importing pydantic; when the source cannot be
    read, the model itself answers. tests/test_field_docs.py holds the two to the same text."""
    head, _, leaf = path.rpartition(".")
    model = _DOC_MODELS.get(head.split(".")[-1] if head else "")
    if model is None:
        return ""
    return _manifest_docs().get(model, {}).get(leaf, "")


@cache
def _manifest_docs() -> dict[str, dict[str, str]]:
    try:
        return _docs_from_source((Path(__file__).parent / "manifest.py").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return _docs_from_model()


def _docs_from_source(source: str) -> dict[str, dict[str, str]]:
    """{class name: {field: doc}} for the module-level classes of `source`: a docstring right
    under an annotated attribute is its doc (pydantic's `use_attribute_docstrings` rule)."""
    import ast
    import inspect

    docs: dict[str, dict[str, str]] = {}
    for node in ast.parse(source).body:
        if not isinstance(node, ast.ClassDef) or node.name not in _DOC_MODELS.values():
            continue
        fields: dict[str, str] = {}
        for before, stmt in zip(node.body, node.body[1:], strict=False):
            if (
                isinstance(before, ast.AnnAssign)
                and isinstance(before.target, ast.Name)
                and isinstance(stmt, ast.Expr)
                and isinstance(stmt.value, ast.Constant)
                and isinstance(stmt.value.value, str)
            ):
                fields[before.target.id] = " ".join(inspect.cleandoc(stmt.value.value).split())
        docs[node.name] = fields
    if set(docs) != set(_DOC_MODELS.values()):
        raise ValueError("manifest.py does not define every model")
    return docs


def _docs_from_model() -> dict[str, dict[str, str]]:
    from patch_tui.format import manifest

    docs: dict[str, dict[str, str]] = {}
    for name in _DOC_MODELS.values():
        model = getattr(manifest, name)
        docs[name] = {
            field: " ".join(info.description.split())
            for field, info in model.model_fields.items()
            if info.description
        }
    return docs
