"""What Python annotations and literal values mean as the manifest's JSON types, and how names
split into words (for the taint and irreversible-verb checks)."""

from __future__ import annotations

import ast
import re
from functools import lru_cache

from patch_tui.format.fields import json_type

_ANNOTATION_TYPES: dict[str, frozenset[str] | None] = {
    "str": frozenset({"string"}),
    "Path": frozenset({"string"}),
    "PurePath": frozenset({"string"}),
    "LiteralString": frozenset({"string"}),
    "int": frozenset({"integer"}),
    "float": frozenset({"number", "integer"}),  # a float parameter takes ints too
    "complex": frozenset({"number", "integer"}),
    "Decimal": frozenset({"number", "integer"}),
    "bool": frozenset({"boolean"}),
    "list": frozenset({"array"}),
    "List": frozenset({"array"}),
    "tuple": frozenset({"array"}),
    "Tuple": frozenset({"array"}),
    "set": frozenset({"array"}),
    "Set": frozenset({"array"}),
    "frozenset": frozenset({"array"}),
    "FrozenSet": frozenset({"array"}),
    "Sequence": frozenset({"array"}),
    "MutableSequence": frozenset({"array"}),
    "Iterable": frozenset({"array"}),
    "Collection": frozenset({"array"}),
    "dict": frozenset({"object"}),
    "Dict": frozenset({"object"}),
    "Mapping": frozenset({"object"}),
    "MutableMapping": frozenset({"object"}),
    "None": frozenset({"null"}),
    "NoneType": frozenset({"null"}),
    "Any": None,
    "object": None,
}
TYPE_TO_ANNOTATION: dict[str, str] = {
    "string": "str",
    "integer": "int",
    "number": "float",
    "boolean": "bool",
    "array": "list",
    "object": "dict",
}


def last_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Constant) and node.value is None:
        return "None"
    return None


def annotation_types(node: ast.expr | None) -> frozenset[str] | None:
    """The JSON types a parameter annotation accepts; None means anything (or unknown)."""
    try:
        return _annotation_types(node)
    except RecursionError:  # `int | int | ...` ten thousand times
        return None


def _annotation_types(node: ast.expr | None) -> frozenset[str] | None:
    if node is None:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:  # a string annotation: "list[str]"
            node = ast.parse(node.value, mode="eval").body
        except SyntaxError:
            return None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        left, right = _annotation_types(node.left), _annotation_types(node.right)
        return None if left is None or right is None else left | right
    if isinstance(node, ast.Subscript):
        base = last_name(node.value)
        args = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if base == "Optional":
            inner = _annotation_types(args[0])
            return None if inner is None else inner | {"null"}
        if base == "Union":
            out: frozenset[str] = frozenset()
            for arg in args:
                got = _annotation_types(arg)
                if got is None:
                    return None
                out |= got
            return out
        if base == "Annotated":
            return _annotation_types(args[0])
        if base == "Literal":
            kinds: set[str] = set()
            for arg in args:
                value = arg.value if isinstance(arg, ast.Constant) else object()
                kinds |= _value_types(value) or {"string"}
            return frozenset(kinds)
        return _ANNOTATION_TYPES.get(base or "", None)
    name = last_name(node)
    return _ANNOTATION_TYPES.get(name or "", None)


def annotation_items(node: ast.expr | None) -> str | None:
    """The element type of a list annotation (`list[str]` -> "string"), if it says."""
    try:
        return _annotation_items(node)
    except RecursionError:
        return None


def _annotation_items(node: ast.expr | None) -> str | None:
    if isinstance(node, ast.BinOp):
        return _annotation_items(node.left) or _annotation_items(node.right)
    if not isinstance(node, ast.Subscript):
        return None
    base = last_name(node.value)
    if base in ("Optional", "Annotated"):
        inner = node.slice.elts[0] if isinstance(node.slice, ast.Tuple) else node.slice
        return _annotation_items(inner)
    if _ANNOTATION_TYPES.get(base or "") != frozenset({"array"}):
        return None
    inner = node.slice.elts[0] if isinstance(node.slice, ast.Tuple) else node.slice
    types = annotation_types(inner)
    return preferred_type(types) if types else None


def _value_types(value: object) -> set[str]:
    # A literal that JSON cannot hold (bytes, complex, ...) has no type to compare.
    if value is not None and not isinstance(value, bool | int | float | str | list | tuple | dict):
        return set()
    return {json_type(value)}


def value_type(value: object) -> str | None:
    """The manifest type of a JSON value."""
    found = _value_types(value) - {"null"}
    return next(iter(found)) if found else None


def preferred_type(types: frozenset[str] | None) -> str | None:
    """One manifest type out of what an annotation accepts (float -> number, not integer)."""
    if not types:
        return None
    for t in ("string", "number", "integer", "boolean", "array", "object"):
        if t in types:
            return t
    return None


def literal_value(node: ast.expr | None) -> tuple[bool, object]:
    """(True, value) when node is a JSON-compatible literal."""
    if node is None:
        return False, None
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None
    if isinstance(value, tuple):
        value = list(value)
    return (_json_like(value), value)


def _json_like(value: object, depth: int = 0) -> bool:
    if depth > 20:
        return False
    if value is None or isinstance(value, bool | int | float | str):
        return True
    if isinstance(value, list):
        return all(_json_like(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _json_like(v, depth + 1) for k, v in value.items())
    return False


_WORD_RE = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


@lru_cache(maxsize=4096)
def words(name: str) -> tuple[str, ...]:
    """snake_case and camelCase split into lowercase words (cached: names repeat a lot)."""
    return tuple(w.lower() for w in _WORD_RE.findall(name))
