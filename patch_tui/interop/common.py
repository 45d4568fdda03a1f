"""What the four format modules share, so nothing is written four times.

- the loss report (`Loss`, `LossReport`): what could not be carried, by field path;
- names: snake_case for Patch, PascalCase tool parts for Arcade and spec 1.0, toolkit names;
- JSON Schema properties <-> Patch inputs (spec 1.0, MCP and Shinkai all use JSON Schema tables);
- external_auth labels <-> OAuth providers and scopes;
- the Patch fields no format has a place for;
- building the imported tool: a canonical manifest and a `main()` stub that lints clean.

Import treats every definition as untrusted: only validated names and `repr()` literals reach the
Python body, and every other string goes through the YAML writer into the frontmatter.
"""

from __future__ import annotations

import json
import keyword
import math
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Literal

from patch_tui.format.fields import fits_json_type
from patch_tui.format.manifest import (
    AUTH_SCOPE_RE,
    INPUT_TYPES,
    VERSION_RE,
    Manifest,
    input_json_schema,
)

Direction = Literal["export", "import"]


class DefinitionError(ValueError):
    """A definition that is not the shape its format says (the CLI prints it and exits 2)."""


# --- the loss report --------------------------------------------------------------------------


@dataclass(frozen=True)
class Loss:
    """One thing that could not be carried. `field` is a dotted path in the *source*: a Patch
    manifest path for an export (`inputs.query.tainted_ok`), a path in the foreign definition for
    an import (`inputSchema.properties.limit.minimum`)."""

    field: str
    message: str

    def to_json(self) -> dict[str, str]:
        return {"field": self.field, "message": self.message}


@dataclass
class LossReport:
    format: str
    direction: Direction
    tool: str = ""
    losses: list[Loss] = field(default_factory=list)

    def add(self, field_path: str, message: str) -> None:
        loss = Loss(field_path, message)
        if loss not in self.losses:
            self.losses.append(loss)

    def fields(self) -> list[str]:
        return [loss.field for loss in self.losses]

    def __bool__(self) -> bool:
        return bool(self.losses)

    def __len__(self) -> int:
        return len(self.losses)

    def to_json(self) -> list[dict[str, str]]:
        return [loss.to_json() for loss in self.losses]

    def text(self) -> str:
        """Plain text for stderr or a panel (the caller renders it as data, never as markup)."""
        title = FORMAT_TITLES.get(self.format, self.format)
        what = f"`{self.tool}` " if self.tool else ""
        if not self.losses:
            return f"{self.direction} {what}{'to' if self.direction == 'export' else 'from'} {title}: nothing lost"
        head = (
            f"{self.direction} {what}{'to' if self.direction == 'export' else 'from'} {title}: "
            f"{len(self.losses)} thing{'s' if len(self.losses) != 1 else ''} not carried"
        )
        return "\n".join([head, *(f"  - {loss.field}: {loss.message}" for loss in self.losses)])


FORMAT_TITLES: dict[str, str] = {
    "arcade": "Arcade",
    "otc": "spec 1.0",
    "mcp": "MCP",
    "shinkai": "Shinkai",
}


# --- names ------------------------------------------------------------------------------------

_ACRONYM_RE = re.compile(r"([A-Z]+)([A-Z][a-z])")
_CAMEL_RE = re.compile(r"([a-z0-9])([A-Z])")


def to_snake(text: str) -> str:
    """`getHTTPResponse`, `Gmail_GetEmails`, `get-weather` -> `get_http_response`,
    `gmail_get_emails`, `get_weather`. May return "" or a name starting with a digit: callers
    pass the result through `patch_name`/`input_name`."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    # A run of separators (` - `) is one `_`; existing underscores stay as they are, which
    # keeps `a__b` and `from_` reversible through to_pascal.
    s = re.sub(r"^[^A-Za-z0-9_]+|[^A-Za-z0-9_]+$", "", ascii_text)
    s = re.sub(r"[^A-Za-z0-9_]+", "_", s)
    s = _ACRONYM_RE.sub(r"\1_\2", s)
    s = _CAMEL_RE.sub(r"\1_\2", s)
    return s.lower().lstrip("_")


def patch_name(text: str, *, fallback: str = "imported_tool") -> str:
    """A valid Patch tool name for any foreign name."""
    s = to_snake(text)
    if not s:
        return fallback
    if not s[0].isalpha():
        s = f"tool_{s}"
    return s[:64]


def input_name(text: str) -> str:
    """A valid Patch input name that is also a Python parameter name."""
    s = to_snake(text)
    if not s:
        s = "arg"
    if not s[0].isalpha():
        s = f"arg_{s}"
    if keyword.iskeyword(s) or s in ("args",):
        s += "_"
    return s


def unique(name: str, taken: set[str]) -> str:
    out, n = name, 2
    while out in taken:
        out, n = f"{name}_{n}", n + 1
    taken.add(out)
    return out


def to_pascal(name: str) -> str:
    """`extract_pdf_table` -> `ExtractPdfTable`, reversible through `to_snake`: when the plain
    join would not come back (`tool_2`, `a_b`), the parts keep their underscores (`Tool_2`)."""
    parts = name.split("_")
    joined = "".join(p[:1].upper() + p[1:] for p in parts)
    if to_snake(joined) == name:
        return joined
    return "_".join(p[:1].upper() + p[1:] for p in parts)


def toolkit_name(text: str) -> str:
    """A toolkit name safe inside `Toolkit.Name@version` and spec 1.0's name pattern:
    `sample_tools` -> `SampleTools`; an already CamelCase name (`Gmail`, `SMS`) is kept."""
    if re.fullmatch(r"[A-Za-z][A-Za-z0-9]*", text):
        return text[0].upper() + text[1:]
    s = to_snake(text).strip("_")
    if not s:
        return "Tools"
    pascal = "".join(p[:1].upper() + p[1:] for p in s.split("_"))
    return pascal if pascal[0].isalpha() else f"T{pascal}"


_QUALIFIED_RE = re.compile(r"^(?P<toolkit>[^.@]+)\.(?P<tool>[^@]+)@(?P<version>.+)$")


def split_qualified(text: Any) -> tuple[str, str, str] | None:
    """`Toolkit.Name@1.0.0` -> (toolkit, name, version), or None."""
    if not isinstance(text, str):
        return None
    m = _QUALIFIED_RE.match(text)
    return (m["toolkit"], m["tool"], m["version"]) if m else None


def import_version(value: Any, where: str, report: LossReport) -> str:
    """A strict x.y.z version for any foreign version (padding `1.2` to `1.2.0`)."""
    if value is None:
        return "1.0.0"
    text = str(value).strip()
    if VERSION_RE.match(text):
        return text
    m = re.fullmatch(r"v?(\d+)(?:\.(\d+))?(?:\.(\d+))?", text)
    if m:
        out = ".".join(str(int(g or 0)) for g in m.groups())
        report.add(where, f"version `{text}` is not strict x.y.z: written as {out}")
        return out
    report.add(where, f"version `{text}` is not semver: written as 1.0.0")
    return "1.0.0"


def one_line(text: Any) -> str:
    """A description on one line (YAML keeps it either way; Patch descriptions are sentences)."""
    return " ".join(str(text).split()) if text is not None else ""


def with_enum(description: str, values: list[Any]) -> str:
    """Keep an enum where Patch has room for it: in the description, in the same sentence."""
    shown = ", ".join(str(v) for v in values)
    base = description.rstrip().rstrip(".")
    return f"{base} (one of: {shown})." if base else f"One of: {shown}."


# --- JSON Schema properties <-> inputs -----------------------------------------------------------

JSON_TYPES = frozenset(INPUT_TYPES)


def _pick_type(raw: Any, where: str, report: LossReport, prop: dict[str, Any]) -> str:
    if isinstance(raw, list):
        types = [t for t in raw if t != "null"]
        if "null" in raw:
            report.add(f"{where}.type", "null is not a Patch type: the value is imported as not nullable")
        if len(types) == 1:
            raw = types[0]
        else:
            report.add(f"{where}.type", f"a union of types {raw} has no Patch equivalent: imported as string")
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
        report.add(f"{where}.type", "no type (any JSON value) has no Patch equivalent: imported as string")
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
        report.add(where, f"renamed `{raw_name}` to `{name}` (a Patch input is a snake_case Python name): callers send `{name}`")
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
        report.add(f"{where}.enum", "the allowed values are kept only in the description, not enforced")
    if not description:
        # The Patch runtime refuses an input without a description: say so, and write one to edit.
        description = f"The {name.replace('_', ' ')}."
        report.add(f"{where}.description", f"no description: written as `{description}` (the Patch runtime requires one): say what to pass")
    data: dict[str, Any] = {"name": name, "type": ptype, "description": description}
    if not required:
        data["required"] = False
    if "default" in prop:
        default = fitting_default(ptype, prop["default"])
        if default is _NO_FIT:
            report.add(f"{where}.default", f"the default `{_show_json(prop['default'])}` is not a {ptype}: not kept")
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
        report.add(f"{where}.{key}", f"`{key}` on the parameters object has no place in Patch (not kept)")
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


def object_schema(manifest: Manifest, *, descriptions: bool, required_always: bool) -> dict[str, Any]:
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
        report.add(where, "an unconstrained output (any JSON) has no Patch equivalent: imported as object")
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


# --- external_auth <-> OAuth ---------------------------------------------------------------------

# Patch provider -> OAuth provider id (as Arcade and spec 1.0 name them).
OAUTH_PROVIDER: dict[str, str] = {
    "gmail": "google",
    "google_calendar": "google",
    "slack": "slack",
    "github": "github",
    "linear": "linear",
}
PROVIDER_TITLES: dict[str, str] = {"google": "Google", "slack": "Slack", "github": "GitHub", "linear": "Linear"}
_GOOGLE = "https://www.googleapis.com/auth/"
# Patch scope labels <-> real OAuth scopes, both ways (a bijection: keep it one).
KNOWN_SCOPES: dict[str, tuple[str, str]] = {
    "gmail.read": ("google", _GOOGLE + "gmail.readonly"),
    "gmail.send": ("google", _GOOGLE + "gmail.send"),
    "gmail.compose": ("google", _GOOGLE + "gmail.compose"),
    "gmail.modify": ("google", _GOOGLE + "gmail.modify"),
    "gmail.labels": ("google", _GOOGLE + "gmail.labels"),
    "google_calendar.read": ("google", _GOOGLE + "calendar.readonly"),
    "google_calendar.events": ("google", _GOOGLE + "calendar.events"),
    "google_calendar.write": ("google", _GOOGLE + "calendar"),
    "slack.send_message": ("slack", "chat:write"),
    "slack.read_channels": ("slack", "channels:read"),
    "slack.read_history": ("slack", "channels:history"),
    "slack.read_users": ("slack", "users:read"),
    "github.read_user": ("github", "read:user"),
    "linear.create_issues": ("linear", "issues:create"),
}
_SCOPE_LABEL: dict[tuple[str, str], str] = {v: k for k, v in KNOWN_SCOPES.items()}
# OAuth providers by any name a definition may use for them.
_PROVIDER_ALIASES: dict[str, str] = {
    "google": "google",
    "gmail": "google",
    "google_calendar": "google",
    "googlecalendar": "google",
    "slack": "slack",
    "github": "github",
    "linear": "linear",
}
_SCOPE_PART_RE = re.compile(r"^[a-z][a-z0-9_.]*$")


def oauth_scope(label: str) -> tuple[str, str] | None:
    """An external_auth label as (OAuth provider id, scope); None when it is not provider.scope."""
    if label in KNOWN_SCOPES:
        return KNOWN_SCOPES[label]
    m = AUTH_SCOPE_RE.match(label)
    if not m or m[1] not in OAUTH_PROVIDER:
        return None
    provider, scope = m[1], m[2]
    if provider == "gmail":
        return "google", _GOOGLE + "gmail." + scope
    if provider == "google_calendar":
        return "google", _GOOGLE + "calendar." + scope
    return OAUTH_PROVIDER[provider], scope


def oauth_requirements(manifest: Manifest) -> dict[str, list[str]]:
    """external_auth grouped by OAuth provider, in order: {"google": [scope, ...], ...}."""
    out: dict[str, list[str]] = {}
    for label in manifest.external_auth:
        pair = oauth_scope(label)
        if pair is None:
            continue
        scopes = out.setdefault(pair[0], [])
        if pair[1] not in scopes:
            scopes.append(pair[1])
    return out


def provider_id(name: Any) -> str | None:
    """The OAuth provider id for a foreign provider name (`Google`, `gmail`, `GitHub`), or None."""
    if not isinstance(name, str):
        return None
    return _PROVIDER_ALIASES.get(re.sub(r"[^a-z_]", "", name.lower()))


def labels_from_scopes(provider: Any, scopes: Any, *, where: str, report: LossReport) -> list[str]:
    """external_auth labels from one OAuth provider and its scopes; what has no Patch label is
    reported."""
    pid = provider_id(provider)
    if pid is None:
        report.add(where, f"provider `{provider}` is not one Patch supports (gmail, google_calendar, slack, github, linear): not kept")
        return []
    if not isinstance(scopes, list) or not scopes:
        report.add(where, f"provider `{provider}` without scopes: Patch needs provider.scope labels, not kept")
        return []
    labels: list[str] = []
    for scope in scopes:
        label = _label_for(pid, str(scope))
        if label is None:
            report.add(f"{where}.scopes", f"scope `{scope}` has no Patch label: not kept")
        elif label not in labels:
            labels.append(label)
    return labels


def _label_for(pid: str, scope: str) -> str | None:
    if (pid, scope) in _SCOPE_LABEL:
        return _SCOPE_LABEL[(pid, scope)]
    if pid == "google":
        for prefix, patch_provider in (("gmail.", "gmail"), ("calendar.", "google_calendar")):
            rest = scope.removeprefix(_GOOGLE)
            if rest != scope and rest.startswith(prefix) and _SCOPE_PART_RE.match(rest[len(prefix):]):
                return f"{patch_provider}.{rest[len(prefix):]}"
        return None
    if _SCOPE_PART_RE.match(scope):
        return f"{pid}.{scope}"
    return None


# --- Patch fields no format has a place for ----------------------------------------------------


def report_unportable(
    manifest: Manifest,
    report: LossReport,
    *,
    where_network: str | None = None,
    infer_network: bool | None = None,
    keeps_external_auth: bool = True,
    keeps_defaults: bool = True,
    keeps_version: bool = True,
    keeps_human_confirm: bool = False,
    generated_as: str | None = None,
) -> None:
    """Report the Patch fields the target format has no place for.

    `infer_network` is what importing the exported definition back would set `network` to;
    when it differs, the flag is lost (`where_network` says where the format shows it, if anywhere).
    """
    for inp in manifest.inputs:
        if inp.type == "array" and inp.items is None:
            report.add(f"inputs.{inp.name}.items", "no item type: exported as an array of string")
        elif inp.type != "array" and inp.items is not None:
            report.add(f"inputs.{inp.name}.items", f"items on a {inp.type} input: not exported")
        if inp.tainted_ok:
            report.add(f"inputs.{inp.name}.tainted_ok", "no place for tainted_ok: the input will be treated as not accepting untrusted content")
        if not keeps_defaults and inp.has_default:
            report.add(f"inputs.{inp.name}.default", f"no place for a default (`{json.dumps(inp.default)}`)")
    out = manifest.outputs
    if out.type != "array" and out.items is not None:
        report.add("outputs.items", f"items on a {out.type} output: not exported")
    caps = manifest.capabilities
    if infer_network is not None and caps.network != infer_network:
        shown = f" ({where_network})" if where_network else ""
        report.add("capabilities.network", f"no place for network: {str(caps.network).lower()}{shown}")
    if caps.filesystem != "none":
        report.add("capabilities.filesystem", f"no place for filesystem: {caps.filesystem}")
    if caps.human_confirm and not keeps_human_confirm:
        report.add("capabilities.human_confirm", "no place for human_confirm: the other side will not ask a person before running it")
    if caps.browser:
        report.add("capabilities.browser", "no place for browser: true")
    if manifest.runtime.packages:
        report.add("runtime.packages", f"no place for the packages ({', '.join(manifest.runtime.packages)})")
    if manifest.runtime.python_version != "3.12":
        report.add("runtime.python_version", f"no place for python_version {manifest.runtime.python_version}")
    if manifest.external_auth and not keeps_external_auth:
        report.add("external_auth", f"no place for external_auth ({', '.join(manifest.external_auth)})")
    elif manifest.external_auth:
        for label in manifest.external_auth:
            if oauth_scope(label) is None:
                report.add("external_auth", f"`{label}` is not a provider.scope label of a supported provider: not exported")
    if not keeps_version:
        report.add("version", f"no place for the version ({manifest.version})")
    if manifest.generated_by is not None:
        report.add("generated_by", f"carried only as {generated_as}, which does not import back" if generated_as else "no place for generated_by")
    if manifest.generated_at is not None:
        report.add("generated_at", "no place for generated_at")


# --- the imported tool --------------------------------------------------------------------------

_PY_TYPES: dict[str, str] = {
    "string": "str",
    "number": "float",
    "integer": "int",
    "boolean": "bool",
    "array": "list",
    "object": "dict",
    "null": "None",
}


def _literal(value: Any) -> str | None:
    """A safe Python literal for a JSON scalar default (containers are left to main's body)."""
    if value is None or isinstance(value, bool | int | str) or (isinstance(value, float) and math.isfinite(value)):
        return repr(value)
    return None


def _annotation(type_: str, item: str | None = None) -> str:
    base = _PY_TYPES[type_]
    if type_ == "array" and item:
        return f"list[{_PY_TYPES[item]}]"
    return base


def stub_body(manifest: Manifest, *, source: str) -> str:
    """A `main()` stub with the inputs' signature and the stdin/stdout contract.

    Only validated names, type names and `repr()` literals of defaults are written here; the
    description and everything else from the definition stay in the YAML frontmatter.
    """
    params: list[str] = []
    for inp in manifest.inputs:
        ann = _annotation(inp.type, inp.items.type if inp.items else None)
        if inp.required:
            params.append(f"{inp.name}: {ann}")
            continue
        literal = _literal(inp.default) if inp.has_default else None
        if literal is None or literal == "None":
            params.append(f"{inp.name}: {ann} | None = None")
        else:
            params.append(f"{inp.name}: {ann} = {literal}")
    # Required parameters after optional ones are only valid Python as keyword-only ones;
    # main(**args) calls them by keyword anyway.
    order_ok = all(
        inp.required or not later.required
        for i, inp in enumerate(manifest.inputs)
        for later in manifest.inputs[i + 1 :]
    )
    if not order_ok:
        params.insert(0, "*")
    returns = _annotation(manifest.outputs.type, output_item_type(manifest))
    signature = ", ".join(params)
    uses_token = bool(manifest.external_auth)
    imports = ["import json", *(["import os"] if uses_token else []), "import sys"]
    body_lines = [
        f"# Imported from {FORMAT_TITLES.get(source, source)} by patch-tui: the manifest above is",
        "# complete; write main() and delete this comment.",
        "",
        *imports,
        "",
        "",
        f"def main({signature}) -> {returns}:",
    ]
    if uses_token:
        body_lines.append(
            '    token = os.environ["PATCH_ACCESS_TOKEN"]  # short-lived, minted by the runtime for external_auth'
        )
    body_lines += [
        f'    raise NotImplementedError("{manifest.name}: imported stub, main() is not written yet")',
        "",
        "",
        'if __name__ == "__main__":',
        "    args = json.loads(sys.stdin.read())",
        "    print(json.dumps(main(**args)))",
        "",
    ]
    return "\n".join(body_lines)


def build_tool(data: dict[str, Any], *, source: str, report: LossReport) -> str:
    """The whole tool file for imported manifest data (validated through the model)."""
    from pydantic import ValidationError

    from patch_tui.format.toolfile import serialize

    if not data.get("description"):
        data["description"] = f"Imported {FORMAT_TITLES.get(source, source)} tool {data['name']}."
    try:
        manifest = Manifest.model_validate(data)
    except ValidationError as exc:  # a bug here, not bad input: say what broke, plainly
        raise DefinitionError(f"the imported manifest is not valid: {exc.errors()[0]['msg']}") from exc
    report.tool = manifest.name
    return serialize(manifest, stub_body(manifest, source=source))


def manifest_data(
    *,
    name: str,
    version: str,
    description: str,
    inputs: list[dict[str, Any]],
    outputs: dict[str, Any],
    network: bool = False,
    human_confirm: bool = False,
    external_auth: list[str] | None = None,
) -> dict[str, Any]:
    """Manifest data in canonical shape for an imported tool."""
    data: dict[str, Any] = {
        "name": name,
        "version": version,
        "description": description,
        "inputs": inputs,
        "outputs": outputs,
        "capabilities": {"network": network, "filesystem": "none", "human_confirm": human_confirm},
        "runtime": {"language": "python", "python_version": "3.12", "packages": []},
    }
    if external_auth:
        data["external_auth"] = external_auth
    return data


def require_mapping(definition: Any, what: str) -> dict[str, Any]:
    if not isinstance(definition, dict):
        raise DefinitionError(f"a {what} definition must be a JSON object, not {type(definition).__name__}")
    return definition


def require_str(definition: dict[str, Any], key: str, what: str) -> str:
    value = definition.get(key)
    if not isinstance(value, str) or not value.strip():
        raise DefinitionError(f"a {what} definition needs `{key}` (a non-empty string)")
    return value


def report_unknown_keys(definition: dict[str, Any], known: set[str], report: LossReport, prefix: str = "") -> None:
    for key in definition:
        if key not in known:
            report.add(f"{prefix}{key}", f"`{key}` has no place in a Patch tool (not kept)")
