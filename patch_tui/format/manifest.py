"""The Patch tool manifest, as a pydantic model.

The model accepts every manifest the Patch runtime's parser accepts (`runtime_format.validate`,
a port of its zod schema): `serve`, the gate, the desk and the browser must never drop a tool the
runtime loads. Where the format document is stricter (pinned packages, known providers,
`python_version` like "3.12", a strict x.y.z version, snake_case input names, ISO dates), that is
a lint diagnostic, never a refusal here. The field docs are the format document's notes (the
form shows them as help). Lint does not validate through this model: it checks the raw YAML data
field by field so it can report every problem at its own line. A manifest that lints without
errors always validates here.

Field order in this module is the canonical field order the Patch runtime writes.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from patch_tui.format.fields import (  # noqa: F401 - re-exported: the manifest's vocabulary
    AUTH_PROVIDERS,
    AUTH_SCOPE_RE,
    CAPABILITY_FIELDS,
    FIELD_ORDER,
    FILESYSTEM_MODES,
    GENERATED_AT_RE,
    INPUT_FIELDS,
    INPUT_TYPES,
    NAME_RE,
    OUTPUT_FIELDS,
    PACKAGE_RE,
    PYTHON_VERSION_RE,
    REQUIRED_FIELDS,
    RUNTIME_FIELDS,
    TOP_LEVEL_FIELDS,
    VERSION_RE,
    bump_version,
    field_doc,
)

InputType = Literal["string", "number", "integer", "boolean", "array", "object"]
Filesystem = Literal["none", "read-only", "read-write"]

_MODEL_CONFIG = ConfigDict(
    use_attribute_docstrings=True,
    strict=True,
    extra="ignore",
    validate_assignment=True,
)


class Items(BaseModel):
    """The type of each element of an array."""

    model_config = _MODEL_CONFIG

    type: str = "string"
    """Type of each element: string / number / integer / boolean / array / object."""


class Input(BaseModel):
    """One argument of the tool's `main()`."""

    model_config = _MODEL_CONFIG

    name: str = Field(min_length=1)
    """Argument name on the Python main() function."""

    type: InputType = "string"
    """string / number / integer / boolean / array / object."""

    description: str = ""
    """One sentence."""

    required: bool = True
    """If false, the tool's main() should provide a default."""

    default: Any = None
    """Optional. A JSON value used when the argument is not given."""

    tainted_ok: bool = False
    """If true, this input may legitimately receive untrusted content. The runtime won't block
    tainted data from flowing in."""

    items: Items | None = None
    """For array types: the type of each element, e.g. {type: "string"}."""

    @property
    def has_default(self) -> bool:
        return "default" in self.model_fields_set


class Outputs(BaseModel):
    """What `main()` returns, printed as one line of JSON."""

    model_config = _MODEL_CONFIG

    type: str = "object"
    """The JSON type main() returns: string / number / integer / boolean / array / object / null."""

    description: str | None = None
    """Optional. What the result means."""

    items: Any = None
    """For an array result: the type of each element ({type: object}, or just object)."""

    @property
    def item_type(self) -> str | None:
        """The element type `items` names (`object` or `{type: object}`), if it names one."""
        items = self.items
        if isinstance(items, str):
            return items
        if isinstance(items, dict) and isinstance(items.get("type"), str):
            return items["type"]
        if isinstance(items, Items):
            return items.type
        return None


class Capabilities(BaseModel):
    """What the tool may do. The runtime enforces network; the rest is declared and linted."""

    model_config = _MODEL_CONFIG

    network: bool = False
    """If false, the sandbox boots with allowInternetAccess: false. Enforced at runtime."""

    filesystem: Filesystem = "none"
    """none / read-only / read-write. Declared, and checked by lint against the body."""

    human_confirm: bool = False
    """If true, the runtime returns confirmation_required instead of executing. A person must
    approve the call before patch_confirm_action(token) actually runs it."""

    browser: bool = False
    """The tool drives a headless browser (Patch runtime extension). Needs network: true."""


class Runtime(BaseModel):
    """How the tool is run."""

    model_config = _MODEL_CONFIG

    language: Literal["python"] = "python"
    """Always python."""

    python_version: str = "3.12"
    """The Python version as a quoted string, like "3.12"."""

    packages: list[str] = Field(default_factory=list)
    """Pinned third-party packages like ["requests==2.32.3"]; each must match
    ^[a-zA-Z0-9._-]+==\\d+(\\.\\d+){0,2}$."""


class Manifest(BaseModel):
    """The YAML manifest in a Patch tool's commented frontmatter."""

    model_config = _MODEL_CONFIG

    name: str = Field(pattern=NAME_RE.pattern)
    """snake_case: lowercase letters, digits and underscores. Globally unique in the registry."""

    version: str = Field(pattern=r"^\d+\.\d+\.\d+$")
    """Strict semver x.y.z. New content = new version, never overwrite."""

    description: str = Field(min_length=1)
    """One sentence. Sanitized and quarantine-LLM-checked at registry contribute time."""

    inputs: list[Input] = Field(default_factory=list)
    """The arguments of main(), in order. Can be []."""

    outputs: Outputs = Field(default_factory=Outputs)
    """{type, description?, items?}: the JSON value main() returns."""

    capabilities: Capabilities = Field(default_factory=Capabilities)
    """{network, filesystem, human_confirm, browser}: what the tool may do."""

    runtime: Runtime = Field(default_factory=Runtime)
    """{language, python_version, packages}."""

    external_auth: list[str] = Field(default_factory=list)
    """Scope labels like ["gmail.read"]. When present, the runtime mints a short-lived token and
    injects it as the PATCH_ACCESS_TOKEN environment variable. Providers: gmail,
    google_calendar, slack, github, linear."""

    generated_by: str | None = None
    """The model that wrote the tool, e.g. "claude-opus-4-7". Set together with generated_at."""

    generated_at: str | None = None
    """When the tool was generated: ISO 8601 UTC, e.g. "2026-05-04T12:34:56Z"."""

    def to_data(self) -> dict[str, Any]:
        """The manifest as plain YAML data in canonical order, omitting what was never set
        and is optional (so a serialized manifest reads back to an equal model)."""
        return manifest_to_data(self)

    def input(self, name: str) -> Input | None:
        return next((i for i in self.inputs if i.name == name), None)


def _model_data(model: BaseModel, order: tuple[str, ...], always: tuple[str, ...]) -> dict[str, Any]:
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
    data["inputs"] = [
        _model_data(i, INPUT_FIELDS, ("name", "type", "description")) for i in m.inputs
    ]
    data["outputs"] = _model_data(m.outputs, OUTPUT_FIELDS, ("type",))
    data["capabilities"] = _model_data(
        m.capabilities, CAPABILITY_FIELDS, ("network", "filesystem", "human_confirm")
    )
    data["runtime"] = _model_data(m.runtime, RUNTIME_FIELDS, RUNTIME_FIELDS)
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
