"""The Patch tool manifest, as a pydantic model.

The model accepts every manifest the Patch runtime's parser accepts (`runtime_format.validate`,
a port of its zod schema): `serve`, the gate, the desk and the browser must never drop a tool the
runtime loads. Where the format document is stricter (pinned packages, known providers,
`python_version` like "3.12", a strict x.y.z version, snake_case input names, ISO dates), that is
a lint diagnostic, never a refusal here. Lint does not validate through this model: it checks
the raw YAML data field by field so it can report every problem at its own line. A manifest that
lints without errors always validates here.

The fields' defaults, docs and order come from the field table (`fields.FIELDS`); the types and
constraints are declared here, and `table_disagreements()` holds the model to the table (same
fields, types, enums, defaults, required), run by tests/test_field_table.py.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from patch_tui.format.fields import (  # noqa: F401 - re-exported: the manifest's vocabulary
    ALWAYS_WRITTEN,
    AUTH_PROVIDERS,
    AUTH_SCOPE_RE,
    CAPABILITY_FIELDS,
    FIELD_ORDER,
    FIELDS,
    FILESYSTEM_MODES,
    GENERATED_AT_RE,
    INPUT_FIELDS,
    INPUT_TYPES,
    NAME_RE,
    NO_DEFAULT,
    OUTPUT_FIELDS,
    PACKAGE_RE,
    PYTHON_VERSION_RE,
    REQUIRED_FIELDS,
    RUNTIME_FIELDS,
    TOP_LEVEL_FIELDS,
    VERSION_RE,
    FieldSpec,
    bump_version,
    field_doc,
    fields_of,
    spec,
)
from patch_tui.format.plain_manifest import item_type

InputType = Literal["string", "number", "integer", "boolean", "array", "object"]
Filesystem = Literal["none", "read-only", "read-write"]

_MODEL_CONFIG = ConfigDict(strict=True, extra="ignore", validate_assignment=True)


def _field(path: str, factory: Callable[[], Any] | None = None, **constraints: Any) -> Any:
    """A model field's default and doc, from the field table (fields.FIELDS): the types are
    declared here, and `table_disagreements()` holds them to the table."""
    f = spec(path)
    if f.default is NO_DEFAULT:
        return Field(description=f.doc, **constraints)
    if factory is not None or isinstance(f.default, list | dict):
        return Field(default_factory=factory or list, description=f.doc, **constraints)
    return Field(default=f.default, description=f.doc, **constraints)


class Items(BaseModel):
    """The type of each element of an array."""

    model_config = _MODEL_CONFIG

    type: str = _field("items.type")


class Input(BaseModel):
    """One argument of the tool's `main()`."""

    model_config = _MODEL_CONFIG

    name: str = _field("inputs[].name", min_length=1)
    type: InputType = _field("inputs[].type")
    description: str = _field("inputs[].description")
    required: bool = _field("inputs[].required")
    default: Any = _field("inputs[].default")
    tainted_ok: bool = _field("inputs[].tainted_ok")
    items: Items | None = _field("inputs[].items")

    @property
    def has_default(self) -> bool:
        return "default" in self.model_fields_set


class Outputs(BaseModel):
    """What `main()` returns, printed as one line of JSON."""

    model_config = _MODEL_CONFIG

    type: str = _field("outputs.type")
    description: str | None = _field("outputs.description")
    items: Any = _field("outputs.items")

    @property
    def item_type(self) -> str | None:
        """The element type `items` names (`object` or `{type: object}`), if it names one."""
        return item_type(self.items)


class Capabilities(BaseModel):
    """What the tool may do. The runtime enforces network; the rest is declared and linted."""

    model_config = _MODEL_CONFIG

    network: bool = _field("capabilities.network")
    filesystem: Filesystem = _field("capabilities.filesystem")
    human_confirm: bool = _field("capabilities.human_confirm")
    browser: bool = _field("capabilities.browser")


class Runtime(BaseModel):
    """How the tool is run."""

    model_config = _MODEL_CONFIG

    language: Literal["python"] = _field("runtime.language")
    python_version: str = _field("runtime.python_version")
    packages: list[str] = _field("runtime.packages")


class Manifest(BaseModel):
    """The YAML manifest in a Patch tool's commented frontmatter."""

    model_config = _MODEL_CONFIG

    name: str = _field("name", pattern=NAME_RE.pattern)
    version: str = _field("version", pattern=r"^\d+\.\d+\.\d+$")
    description: str = _field("description", min_length=1)
    inputs: list[Input] = _field("inputs")
    outputs: Outputs = _field("outputs", Outputs)
    capabilities: Capabilities = _field("capabilities", Capabilities)
    runtime: Runtime = _field("runtime", Runtime)
    external_auth: list[str] = _field("external_auth")
    generated_by: str | None = _field("generated_by")
    generated_at: str | None = _field("generated_at")

    def to_data(self) -> dict[str, Any]:
        """The manifest as plain YAML data in canonical order, omitting what was never set
        and is optional (so a serialized manifest reads back to an equal model)."""
        return manifest_to_data(self)

    def input(self, name: str) -> Input | None:
        return next((i for i in self.inputs if i.name == name), None)


def _model_data(
    model: BaseModel, order: tuple[str, ...], always: tuple[str, ...]
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    fields_set = model.model_fields_set
    for key in order:
        if key not in type(model).model_fields:
            continue
        if key not in fields_set and key not in always:
            continue
        value = getattr(model, key)
        if isinstance(value, BaseModel):
            value = value.model_dump(exclude_unset=True) or {"type": getattr(value, "type", None)}
        out[key] = value
    return out


def manifest_to_data(m: Manifest) -> dict[str, Any]:
    data = _model_data(m, TOP_LEVEL_FIELDS, REQUIRED_FIELDS)
    data["inputs"] = [_model_data(i, INPUT_FIELDS, ALWAYS_WRITTEN["inputs[]"]) for i in m.inputs]
    data["outputs"] = _model_data(m.outputs, OUTPUT_FIELDS, ALWAYS_WRITTEN["outputs"])
    data["capabilities"] = _model_data(
        m.capabilities, CAPABILITY_FIELDS, ALWAYS_WRITTEN["capabilities"]
    )
    data["runtime"] = _model_data(m.runtime, RUNTIME_FIELDS, ALWAYS_WRITTEN["runtime"])
    if "external_auth" in data or m.external_auth:
        data["external_auth"] = list(m.external_auth)
    return data


def input_json_schema(m: Manifest) -> dict[str, Any]:
    """A JSON Schema (object) for the tool's arguments, as MCP and the try-it form use it."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    for inp in m.inputs:
        prop: dict[str, Any] = {"type": inp.type}
        if inp.description:
            prop["description"] = inp.description
        if inp.type == "array":
            prop["items"] = {"type": inp.items.type if inp.items else "string"}
        if inp.has_default:
            prop["default"] = inp.default
        properties[inp.name] = prop
        if inp.required:
            required.append(inp.name)
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


# -- the model held to the field table ------------------------------------------------------

MODELS: dict[str, type[BaseModel]] = {
    "": Manifest,
    "inputs[]": Input,
    "outputs": Outputs,
    "capabilities": Capabilities,
    "runtime": Runtime,
    "items": Items,
}

_SCALARS: dict[str, Any] = {"string": str, "boolean": bool, "any": Any}


def _expected_annotation(f: FieldSpec) -> Any:
    """The type the model must declare for a table field."""
    if f.closed:
        base: Any = Literal[f.choices]  # Literal[("a", "b")] is Literal["a", "b"]
    elif f.type == "array":
        base = types.GenericAlias(list, (MODELS[f.of] if f.of in MODELS else _SCALARS[f.of],))
    elif f.type == "object":
        base = MODELS[f.of]
    else:
        base = _SCALARS[f.type]
    return base | None if f.nullable else base


def _model_default(info: Any) -> Any:
    if info.is_required():
        return NO_DEFAULT
    if info.default_factory is not None:
        made = info.default_factory()
        return made.model_dump() if isinstance(made, BaseModel) else made
    return info.default


def _table_default(f: FieldSpec) -> Any:
    if f.type == "object" and f.default == {}:
        return MODELS[f.of]().model_dump()  # each of its fields' own default
    return f.default


def table_disagreements() -> list[str]:
    """Where the pydantic model and the field table (fields.FIELDS) differ: fields one has and
    the other lacks, types, enums, defaults, docs, order, and the required fields the model
    would let a manifest omit without a default. [] when they agree."""
    problems: list[str] = []
    for group, model in MODELS.items():
        table = {f.key: f for f in fields_of(group)}
        declared = model.model_fields
        for key in declared.keys() - table.keys():
            problems.append(f"{model.__name__}.{key}: in the model, not in the table")
        for key in table.keys() - declared.keys():
            problems.append(f"{table[key].path}: in the table, not in {model.__name__}")
        if [k for k in declared if k in table] != [k for k in table if k in declared]:
            problems.append(f"{model.__name__}: the fields are not in the table's order")
        for key in table.keys() & declared.keys():
            f, info = table[key], declared[key]
            if info.annotation != _expected_annotation(f):
                problems.append(
                    f"{f.path}: the model says {info.annotation}, the table {_expected_annotation(f)}"
                )
            if _model_default(info) != _table_default(f):
                problems.append(
                    f"{f.path}: default {_model_default(info)!r} in the model, {f.default!r} in the table"
                )
            if (info.description or "") != f.doc:
                problems.append(f"{f.path}: the model's doc is not the table's")
            if f.closed != (getattr(info.annotation, "__origin__", None) is Literal):
                problems.append(
                    f"{f.path}: closed={f.closed} but the model's type is {info.annotation}"
                )
    return sorted(problems)
