"""The manifest's fields in one table, with the format's enums and value patterns: plain data.

`FIELDS` is the one description of every manifest field: where it sits, its type, the values it
takes, whether the format requires it, its default, its help text and how the desk's form shows
it. Everything else is derived from it: the field order the writer uses (`FIELD_ORDER`), the
required fields lint reports, the form's widgets and conversions, the field help, and the lint
type checks. The pydantic model (manifest.py) takes its defaults and docs from here and declares
the types itself; `manifest.table_disagreements()` (run by tests/test_field_table.py) keeps the
two in agreement, so a field added here and not there fails the suite.

Plain data, no pydantic: the linter, the tool-file parser and the desk's first frame start
without importing it (a tenth of a second on every `patch-tui lint` run and every desk start).
"""

from __future__ import annotations

import re
from typing import Any, Literal, NamedTuple

from patch_tui.format.templates import INPUT_DESCRIPTION_HINT, TOOL_DESCRIPTION_HINT

INPUT_TYPES: tuple[str, ...] = ("string", "number", "integer", "boolean", "array", "object")
OUTPUT_TYPES: tuple[str, ...] = (*INPUT_TYPES, "null")
FILESYSTEM_MODES: tuple[str, ...] = ("none", "read-only", "read-write")
AUTH_PROVIDERS: tuple[str, ...] = ("gmail", "google_calendar", "slack", "github", "linear")

NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")
VERSION_RE = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$")
PACKAGE_RE = re.compile(r"^[a-zA-Z0-9._-]+==\d+(\.\d+){0,2}$")
PYTHON_VERSION_RE = re.compile(r"^3\.\d{1,2}$")


def name_hint(name: str) -> str:
    """Why `name` is not a tool name, with the snake_case name it probably means ("Reverse Text"
    -> `reverse_text`) when there is one."""
    rule = "lowercase letters, digits and `_`, starting with a letter"
    guess = re.sub(r"[^a-z0-9]+", "_", name.strip().lower()).strip("_")
    if guess and NAME_RE.match(guess):
        return f"`{guess}`? A tool name is {rule}"
    return f"a tool name is {rule} (e.g. `word_count`)"


# The runtime's own rule (one dot): `gmail.read.all` is refused.
AUTH_SCOPE_RE = re.compile(r"^([a-z][a-z0-9_]*)\.([a-z][a-z0-9_]*)$")
# ISO 8601 UTC with seconds and a Z (fractions allowed), the stamp the generator writes.
GENERATED_AT_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$")


class _NoDefault:
    """The default of a field the model cannot do without (`name`, `version`, ...)."""

    def __repr__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT: Any = _NoDefault()

FieldType = Literal["string", "boolean", "array", "object", "any"]
# How the desk's form shows a field:
#   text    one line of text; an empty one removes the field unless the format requires it
#   list    a list of strings, typed comma-separated
#   json    any JSON value, or plain text that is not JSON (an input's default)
#   switch  on / off
#   choice  one of `choices` (blank allowed unless the field is required)
#   type    an element type: a choice of `items.type`, written as {type: X}
#   label   shown, not edited
#   cards   one card per entry (inputs)
#   group   a mapping whose fields are shown under the field's section title
Widget = Literal["text", "list", "json", "switch", "choice", "type", "label", "cards", "group"]


# A named tuple, not a frozen dataclass: a fifth of the import time (the desk's first frame
# imports the table).
class FieldSpec(NamedTuple):
    """One manifest field.

    `group` is the mapping it sits in: "" (top level), "inputs[]" (each input), "outputs",
    "capabilities", "runtime" or "items" (an element type, under `inputs[].items` and
    `outputs.items`). `of` names what an array holds ("string", or the group of its entries) and
    which group an object is. `choices` are the values lint and the form expect; `closed` when
    the Patch runtime refuses any other (the model's Literal). `required`: the format asks for
    it in every manifest (lint reports it missing; the writer always writes it). `default`: what
    the runtime assumes when it is absent (NO_DEFAULT: the model refuses a manifest without it);
    an object group's default `{}` is each of its own fields' default. `nullable`: null is
    accepted as "not given"."""

    group: str
    key: str
    type: FieldType
    doc: str
    widget: Widget
    of: str = ""
    choices: tuple[str, ...] = ()
    closed: bool = False
    required: bool = False
    default: Any = None
    nullable: bool = False
    label: str = ""  # the form's label, when not the key
    placeholder: str = ""  # the form's hint in an empty text field
    section: str = ""  # the form section a top-level field opens

    @property
    def path(self) -> str:
        """Where the field sits: "name", "inputs[].type", "capabilities.network"."""
        return f"{self.group}.{self.key}" if self.group else self.key

    @property
    def yaml_kind(self) -> str:
        """The YAML shape its value must have: "string", "boolean", "list", "mapping", "any"."""
        return {"array": "list", "object": "mapping"}.get(self.type, self.type)


_F = FieldSpec
FIELDS: tuple[FieldSpec, ...] = (
    _F(
        "",
        "name",
        "string",
        required=True,
        default=NO_DEFAULT,
        widget="text",
        section="Tool",
        placeholder="snake_case_name",
        doc="snake_case: lowercase letters, digits and underscores. Globally unique in the registry.",
    ),
    _F(
        "",
        "version",
        "string",
        required=True,
        default=NO_DEFAULT,
        widget="text",
        placeholder="1.0.0",
        doc="Strict semver x.y.z. New content = new version, never overwrite.",
    ),
    _F(
        "",
        "description",
        "string",
        required=True,
        default=NO_DEFAULT,
        widget="text",
        placeholder=TOOL_DESCRIPTION_HINT,
        doc="One sentence. Sanitized and quarantine-LLM-checked at registry contribute time.",
    ),
    _F(
        "",
        "inputs",
        "array",
        of="inputs[]",
        required=True,
        default=[],
        widget="cards",
        section="Inputs",
        doc="The arguments of main(), in order. Can be [].",
    ),
    _F(
        "",
        "outputs",
        "object",
        of="outputs",
        required=True,
        default={},
        widget="group",
        section="Outputs",
        doc="{type, description?, items?}: the JSON value main() returns.",
    ),
    _F(
        "",
        "capabilities",
        "object",
        of="capabilities",
        required=True,
        default={},
        widget="group",
        section="Capabilities",
        doc="{network, filesystem, human_confirm, browser}: what the tool may do.",
    ),
    _F(
        "",
        "runtime",
        "object",
        of="runtime",
        required=True,
        default={},
        widget="group",
        section="Runtime",
        doc="{language, python_version, packages}.",
    ),
    _F(
        "",
        "external_auth",
        "array",
        of="string",
        default=[],
        widget="list",
        section="External auth",
        label="scopes",
        placeholder="gmail.read, slack.send_message",
        doc='Scope labels like ["gmail.read"]. When present, the runtime mints a short-lived token and '
        "injects it as the PATCH_ACCESS_TOKEN environment variable. Providers: gmail, "
        "google_calendar, slack, github, linear.",
    ),
    _F(
        "",
        "generated_by",
        "string",
        nullable=True,
        widget="label",
        section="Provenance (read-only)",
        doc='The model that wrote the tool, e.g. "claude-opus-4-7". Set together with generated_at.',
    ),
    _F(
        "",
        "generated_at",
        "string",
        nullable=True,
        widget="label",
        doc='When the tool was generated: ISO 8601 UTC, e.g. "2026-05-04T12:34:56Z".',
    ),
    # -- each input
    _F(
        "inputs[]",
        "name",
        "string",
        required=True,
        default=NO_DEFAULT,
        widget="text",
        placeholder="argument_name",
        doc="Argument name on the Python main() function.",
    ),
    _F(
        "inputs[]",
        "type",
        "string",
        choices=INPUT_TYPES,
        closed=True,
        required=True,
        default="string",
        widget="choice",
        doc="string / number / integer / boolean / array / object.",
    ),
    _F(
        "inputs[]",
        "description",
        "string",
        required=True,
        default="",
        widget="text",
        placeholder=INPUT_DESCRIPTION_HINT,
        doc="One sentence.",
    ),
    _F(
        "inputs[]",
        "required",
        "boolean",
        default=True,
        widget="switch",
        doc="If false, the tool's main() should provide a default.",
    ),
    _F(
        "inputs[]",
        "default",
        "any",
        widget="json",
        placeholder="JSON, or text",
        doc="Optional. A JSON value used when the argument is not given.",
    ),
    _F(
        "inputs[]",
        "tainted_ok",
        "boolean",
        default=False,
        widget="switch",
        doc="If true, this input may legitimately receive untrusted content. The runtime won't block "
        "tainted data from flowing in.",
    ),
    _F(
        "inputs[]",
        "items",
        "object",
        of="items",
        nullable=True,
        widget="type",
        doc='For array types: the type of each element, e.g. {type: "string"}.',
    ),
    # -- what main() returns
    _F(
        "outputs",
        "type",
        "string",
        choices=OUTPUT_TYPES,
        required=True,
        default="object",
        widget="choice",
        doc="The JSON type main() returns: string / number / integer / boolean / array / object / null.",
    ),
    _F(
        "outputs",
        "description",
        "string",
        nullable=True,
        widget="text",
        doc="Optional. What the result means.",
    ),
    _F(
        "outputs",
        "items",
        "any",
        widget="type",
        doc="For an array result: the type of each element ({type: object}, or just object).",
    ),
    # -- what the tool may do
    _F(
        "capabilities",
        "network",
        "boolean",
        required=True,
        default=False,
        widget="switch",
        doc="If false, the sandbox boots with allowInternetAccess: false. Enforced at runtime.",
    ),
    _F(
        "capabilities",
        "filesystem",
        "string",
        choices=FILESYSTEM_MODES,
        closed=True,
        required=True,
        default="none",
        widget="choice",
        doc="none / read-only / read-write. Declared, and checked by lint against the body.",
    ),
    _F(
        "capabilities",
        "human_confirm",
        "boolean",
        required=True,
        default=False,
        widget="switch",
        doc="If true, the runtime returns confirmation_required instead of executing. A person must "
        "approve the call before patch_confirm_action(token) actually runs it.",
    ),
    _F(
        "capabilities",
        "browser",
        "boolean",
        default=False,
        widget="switch",
        doc="The tool drives a headless browser (Patch runtime extension). Needs network: true.",
    ),
    # -- how it is run
    _F(
        "runtime",
        "language",
        "string",
        choices=("python",),
        closed=True,
        required=True,
        default="python",
        widget="label",
        doc="Always python.",
    ),
    _F(
        "runtime",
        "python_version",
        "string",
        required=True,
        default="3.12",
        widget="text",
        label="python",
        placeholder="3.12",
        doc='The Python version as a quoted string, like "3.12".',
    ),
    _F(
        "runtime",
        "packages",
        "array",
        of="string",
        required=True,
        default=[],
        widget="list",
        placeholder="requests==2.32.3, ...",
        doc='Pinned third-party packages like ["requests==2.32.3"]; each must match '
        "^[a-zA-Z0-9._-]+==\\d+(\\.\\d+){0,2}$.",
    ),
    # -- an element type
    _F(
        "items",
        "type",
        "string",
        choices=INPUT_TYPES,
        default="string",
        widget="choice",
        doc="Type of each element: string / number / integer / boolean / array / object.",
    ),
)
del _F

GROUPS: tuple[str, ...] = ("", "inputs[]", "outputs", "capabilities", "runtime", "items")


def fields_of(group: str) -> tuple[FieldSpec, ...]:
    """The fields of one group, in the canonical order the Patch runtime writes them."""
    return tuple(f for f in FIELDS if f.group == group)


def spec(path: str) -> FieldSpec:
    """The field at a table path ("inputs[].type"); KeyError for an unknown one."""
    for f in FIELDS:
        if f.path == path:
            return f
    raise KeyError(path)


def _keys(group: str) -> tuple[str, ...]:
    return tuple(f.key for f in fields_of(group))


def _required(group: str) -> tuple[str, ...]:
    return tuple(f.key for f in fields_of(group) if f.required)


TOP_LEVEL_FIELDS: tuple[str, ...] = _keys("")
REQUIRED_FIELDS: tuple[str, ...] = _required("")
INPUT_FIELDS: tuple[str, ...] = _keys("inputs[]")
OUTPUT_FIELDS: tuple[str, ...] = _keys("outputs")
CAPABILITY_FIELDS: tuple[str, ...] = _keys("capabilities")
RUNTIME_FIELDS: tuple[str, ...] = _keys("runtime")
# The fields the writer always writes, by group (the format requires them).
ALWAYS_WRITTEN: dict[str, tuple[str, ...]] = {g: _required(g) for g in GROUPS}

# Canonical order of the keys of each mapping, by where it sits in the manifest.
FIELD_ORDER: dict[str, tuple[str, ...]] = {
    "": TOP_LEVEL_FIELDS,
    "inputs[]": INPUT_FIELDS,
    "outputs": OUTPUT_FIELDS,
    "capabilities": CAPABILITY_FIELDS,
    "runtime": RUNTIME_FIELDS,
}

# The YAML shape of each field, by group, as the lint type check wants it ("list", "mapping"...).
YAML_KINDS: dict[str, dict[str, str]] = {
    g: {f.key: f.yaml_kind for f in fields_of(g)} for g in GROUPS
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


# Where a dotted help path's last part points in the table ("inputs.type" -> "inputs[].type").
_DOC_GROUPS: dict[str, str] = {"inputs": "inputs[]"}


def field_doc(path: str) -> str:
    """The help text of a field, by dotted path: "name", "inputs.type", "capabilities.network",
    "outputs.items.type" (an element type's own field). "" for a path that names no field."""
    head, _, leaf = path.rpartition(".")
    last = head.split(".")[-1] if head else ""
    group = _DOC_GROUPS.get(last, last)
    if group not in GROUPS:
        return ""
    for f in FIELDS:
        if f.group == group and f.key == leaf:
            return f.doc
    return ""
