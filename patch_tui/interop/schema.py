"""JSON Schema properties <-> Patch inputs and outputs: spec 1.0, MCP and Shinkai all describe a
tool's arguments as a JSON Schema table; what does not fit is a loss, by field path."""

from __future__ import annotations

import json
import math
from typing import Any

from patch_tui.format.fields import fits_json_type
from patch_tui.format.manifest import INPUT_TYPES, Manifest, input_json_schema
from patch_tui.interop.common import (
    DefinitionError,
    LossReport,
    input_name,
    one_line,
    unique,
    with_enum,
)

# --- JSON Schema properties <-> inputs -----------------------------------------------------------

JSON_TYPES = frozenset(INPUT_TYPES)


def _pick_type(raw: Any, where: str, report: LossReport, prop: dict[str, Any]) -> str:
    if isinstance(raw, list):
        types = [t for t in raw if t != "null"]
        if "null" in raw:
            report.add(
                f"{where}.type", "null is not a Patch type: the value is imported as not nullable"
            )
        if len(types) == 1:
            raw = types[0]
        else:
            report.add(
                f"{where}.type",
                f"a union of types {raw} has no Patch equivalent: imported as string",
            )
            return "string"
    if raw is None:
        for combo in ("anyOf", "oneOf", "allOf"):
            if combo in prop:
                return "string"  # reported with the other unknown keys
        if "properties" in prop:
            return "object"
        if "items" in prop:
            return "array"
        if "enum" in prop:
            return "string"
        report.add(
            f"{where}.type", "no type (any JSON value) has no Patch equivalent: imported as string"
        )
        return "string"
    if raw in JSON_TYPES:
        return str(raw)
    report.add(f"{where}.type", f"type `{raw}` is not a Patch type: imported as string")
    return "string"


def _finite(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(_finite(v) for v in value)
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    return True


_NO_FIT: Any = object()


def fitting_default(type_: str, value: Any) -> Any:
    """The default as the input's type wants it (5.0 for an integer is 5), or _NO_FIT: Patch
    lint (PT022) rejects a default of another type, so an import must not write one."""
    if value is None:
        return None
    if not _finite(value):
        return _NO_FIT
    if type_ == "integer" and isinstance(value, float) and value.is_integer():
        return int(value)
    return value if fits_json_type(value, type_) else _NO_FIT


def _show_json(value: Any) -> str:
    try:
        return json.dumps(value)[:60]
    except ValueError:
        return repr(value)[:60]


# Keys of a property that import reads; everything else is reported as a loss.
_PROPERTY_KEYS = frozenset({"type", "description", "default", "items", "enum", "title"})


def input_from_property(
    raw_name: str,
    prop: Any,
    *,
    required: bool,
    where: str,
    report: LossReport,
    taken: set[str],
    extra_keys: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """One Patch input (as manifest data) from one JSON Schema property."""
    name = unique(input_name(raw_name), taken)
    if name != raw_name:
        report.add(
            where,
            f"renamed `{raw_name}` to `{name}` (a Patch input is a snake_case Python name): callers send `{name}`",
        )
    if not isinstance(prop, dict):
        report.add(where, "the property is not a JSON Schema object: imported as a string")
        prop = {}
    ptype = _pick_type(prop.get("type"), where, report, prop)
    description = one_line(prop.get("description"))
    title = prop.get("title")
    if not description and isinstance(title, str):
        description = one_line(title)
    elif title is not None:
        report.add(f"{where}.title", "a title besides the description has no place in Patch")
    enum = prop.get("enum")
    if isinstance(enum, list) and enum:
        description = with_enum(description, enum)
        report.add(
            f"{where}.enum", "the allowed values are kept only in the description, not enforced"
        )
    if not description:
        # The Patch runtime refuses an input without a description: say so, and write one to edit.
        description = f"The {name.replace('_', ' ')}."
        report.add(
            f"{where}.description",
            f"no description: written as `{description}` (the Patch runtime requires one): say what to pass",
        )
    data: dict[str, Any] = {"name": name, "type": ptype, "description": description}
    if not required:
        data["required"] = False
    if "default" in prop:
        default = fitting_default(ptype, prop["default"])
        if default is _NO_FIT:
            report.add(
                f"{where}.default",
                f"the default `{_show_json(prop['default'])}` is not a {ptype}: not kept",
            )
        else:
            data["default"] = default
    if ptype == "array":
        items = prop.get("items")
        item_type = "string"
        if isinstance(items, dict) and items.get("type") in JSON_TYPES:
            item_type = items["type"]
            for key in items:
                if key != "type":
                    report.add(f"{where}.items.{key}", "Patch array items carry only a type")
        else:
            report.add(f"{where}.items", "no item type Patch can use: items imported as string")
        data["items"] = {"type": item_type}
    for key in prop:
        if key in _PROPERTY_KEYS or key in extra_keys:
            continue
        if key in ("properties", "required", "additionalProperties") and ptype == "object":
            report.add(f"{where}.{key}", "a Patch object input declares no nested fields: not kept")
        else:
            report.add(f"{where}.{key}", f"`{key}` has no place in a Patch input (not kept)")
    return data


def inputs_from_object_schema(
    schema: Any, *, where: str, report: LossReport, extra_keys: frozenset[str] = frozenset()
) -> list[dict[str, Any]]:
    """Patch inputs from an object schema `{type: object, properties, required}`."""
    if schema is None:
        return []
    if not isinstance(schema, dict):
        raise DefinitionError(f"`{where}` must be a JSON object (a JSON Schema with properties)")
    props = schema.get("properties")
    props = {} if props is None else props
    if not isinstance(props, dict):
        raise DefinitionError(f"`{where}.properties` must be a JSON object")
    required = schema.get("required")
    required = [] if required is None else required
    if not isinstance(required, list):
        raise DefinitionError(f"`{where}.required` must be a list of names")
    for key in schema:
        if key in ("type", "properties", "required", "title", "$schema"):
            continue
        if key == "additionalProperties" and schema[key] is False:
            continue  # Patch passes exactly the declared inputs anyway
        report.add(
            f"{where}.{key}", f"`{key}` on the parameters object has no place in Patch (not kept)"
        )
    for name in required:
        if name not in props:
            report.add(f"{where}.required", f"`{name}` is required but not a property: dropped")
    taken: set[str] = set()
    return [
        input_from_property(
            str(name),
            prop,
            required=name in required,
            where=f"{where}.properties.{name}",
            report=report,
            taken=taken,
            extra_keys=extra_keys,
        )
        for name, prop in props.items()
    ]


def object_schema(
    manifest: Manifest, *, descriptions: bool, required_always: bool
) -> dict[str, Any]:
    """The inputs as a JSON Schema object, built on `input_json_schema` (what the MCP server
    advertises), with a description on every property and an empty `required` list when the
    format wants them."""
    schema = input_json_schema(manifest)
    if descriptions:
        for inp, prop in zip(manifest.inputs, schema["properties"].values(), strict=True):
            prop.setdefault("description", inp.description)
    if required_always:
        schema.setdefault("required", [])
    return schema


def output_item_type(manifest: Manifest) -> str | None:
    return manifest.outputs.item_type


def output_schema(manifest: Manifest) -> dict[str, Any] | None:
    """The output as a JSON Schema (None when the tool returns nothing)."""
    out = manifest.outputs
    if out.type == "null":
        return None
    schema: dict[str, Any] = {"type": out.type}
    item = output_item_type(manifest)
    if out.type == "array" and item:
        schema["items"] = {"type": item}
    if out.description:
        schema["description"] = out.description
    return schema


def outputs_from_schema(schema: Any, *, where: str, report: LossReport) -> dict[str, Any]:
    """Patch `outputs` data from a JSON Schema (None: the tool returns nothing)."""
    if schema is None:
        return {"type": "null"}
    if not isinstance(schema, dict):
        raise DefinitionError(f"`{where}` must be a JSON Schema object or null")
    if not schema:
        report.add(
            where, "an unconstrained output (any JSON) has no Patch equivalent: imported as object"
        )
        return {"type": "object"}
    otype = _pick_type(schema.get("type"), where, report, schema)
    data: dict[str, Any] = {"type": otype}
    if schema.get("description"):
        data["description"] = one_line(schema["description"])
    if otype == "array":
        items = schema.get("items")
        if isinstance(items, dict) and items.get("type") in JSON_TYPES:
            data["items"] = {"type": items["type"]}
            for key in items:
                if key != "type":
                    report.add(f"{where}.items.{key}", "Patch output items carry only a type")
        elif items is not None:
            report.add(f"{where}.items", "no item type Patch can use: not kept")
    if isinstance(schema.get("properties"), dict) and schema["properties"]:
        names = ", ".join(str(k) for k in schema["properties"])
        report.add(f"{where}.properties", f"Patch outputs declare no fields (not kept: {names})")
        if "required" in schema:
            report.add(f"{where}.required", "Patch outputs declare no fields, so none is required")
    for key in schema:
        if key in ("type", "description", "items", "properties", "required", "title", "$schema"):
            continue
        report.add(f"{where}.{key}", f"`{key}` has no place in Patch outputs (not kept)")
    return data
