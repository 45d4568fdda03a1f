"""Arcade tool definitions (validated against `arcade-tool-definition.schema.json`, shipped beside this module).

Mapping (docs/interop.md has the table):
- name <-> `name` (PascalCase), `fully_qualified_name` = `Toolkit.Name@version`, `toolkit`
  `{name, version}` (the toolkit is not part of a Patch tool: `--toolkit`, default the folder);
- inputs <-> `input.parameters[]` `{name, required, description, value_schema}`; val_type:
  object <-> json, array <-> array + inner_val_type; Arcade enums go into the description;
- outputs <-> `output` `{available_modes, description, value_schema}`; modes are value (null for
  a tool returning nothing) and error, plus requires_authorization with external_auth;
- external_auth <-> `requirements.authorization` `{provider_id, provider_type: oauth2, oauth2.scopes}`.
  The schema allows ONE authorization object: a second provider is reported as a loss.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from patch_tui.format.manifest import Manifest
from patch_tui.interop.common import (
    DefinitionError,
    LossReport,
    import_version,
    input_name,
    one_line,
    patch_name,
    report_unknown_keys,
    require_mapping,
    require_str,
    split_qualified,
    to_pascal,
    toolkit_name,
    unique,
    with_enum,
)
from patch_tui.interop.oauth import labels_from_scopes, oauth_requirements
from patch_tui.interop.patch_tool import build_tool, manifest_data, report_unportable
from patch_tui.interop.schema import output_item_type

FORMAT = "arcade"
SCHEMA_FILE = Path(__file__).with_name("arcade-tool-definition.schema.json")

# Patch type -> Arcade val_type, and back.
VAL_TYPES: dict[str, str] = {
    "string": "string",
    "integer": "integer",
    "number": "number",
    "boolean": "boolean",
    "object": "json",
    "array": "array",
}
PATCH_TYPES: dict[str, str] = {v: k for k, v in VAL_TYPES.items()}


@cache
def schema() -> dict[str, Any]:
    """Arcade's JSON Schema for a tool definition (shipped in the package)."""
    return json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))


def _value_schema(
    type_: str, item: str | None, *, where: str, report: LossReport, missing_item: str
) -> dict[str, Any]:
    if type_ != "array":
        return {"val_type": VAL_TYPES[type_]}
    if item is None:
        if where == "outputs":  # an input's missing items are reported with the common losses
            report.add(
                f"{where}.items", f"no item type: exported as an array of {VAL_TYPES[missing_item]}"
            )
        item = missing_item
    elif item == "array":
        report.add(f"{where}.items", "Arcade has no arrays of arrays: exported as an array of json")
    inner = "json" if item == "array" else VAL_TYPES[item]
    return {"val_type": "array", "inner_val_type": inner}


def export(manifest: Manifest, *, toolkit: str | None = None) -> tuple[dict[str, Any], LossReport]:
    report = LossReport(FORMAT, "export", manifest.name)
    kit = toolkit_name(toolkit or "Tools")
    tool = to_pascal(manifest.name)
    parameters = []
    for inp in manifest.inputs:
        parameters.append(
            {
                "name": inp.name,
                "required": inp.required,
                "description": inp.description,
                "value_schema": _value_schema(
                    inp.type,
                    inp.items.type if inp.items else None,
                    where=f"inputs.{inp.name}",
                    report=report,
                    missing_item="string",
                ),
            }
        )
    providers = oauth_requirements(manifest)
    out = manifest.outputs
    modes = ["null" if out.type == "null" else "value", "error"]
    if providers:
        modes.append("requires_authorization")
    output: dict[str, Any] = {"available_modes": modes}
    if out.description:
        output["description"] = out.description
    if out.type != "null":
        output["value_schema"] = _value_schema(
            out.type,
            output_item_type(manifest),
            where="outputs",
            report=report,
            missing_item="object",
        )
    definition: dict[str, Any] = {
        "name": tool,
        "fully_qualified_name": f"{kit}.{tool}@{manifest.version}",
        "description": manifest.description,
        "toolkit": {"name": kit, "version": manifest.version},
        "input": {"parameters": parameters},
        "output": output,
    }
    if providers:
        (pid, scopes), *rest = providers.items()
        definition["requirements"] = {
            "authorization": {
                "provider_id": pid,
                "provider_type": "oauth2",
                "oauth2": {"scopes": scopes},
            }
        }
        for other, other_scopes in rest:
            report.add(
                "external_auth",
                f"Arcade allows one authorization provider: `{other}` ({', '.join(other_scopes)}) is not exported",
            )
    report_unportable(
        manifest,
        report,
        keeps_defaults=False,
        infer_network=bool(providers),
        where_network="Arcade implies it only from requirements",
    )
    return definition, report


_KNOWN = {
    "$schema",
    "name",
    "fully_qualified_name",
    "description",
    "toolkit",
    "input",
    "output",
    "requirements",
}


def import_definition(definition: Any) -> tuple[str, LossReport]:
    d = require_mapping(definition, "Arcade")
    report = LossReport(FORMAT, "import")
    raw_name = require_str(d, "name", "Arcade")
    name = patch_name(raw_name)
    qualified = split_qualified(d.get("fully_qualified_name"))
    raw_kit = d.get("toolkit")
    kit: dict[str, Any] = raw_kit if isinstance(raw_kit, dict) else {}
    kit_name = kit.get("name") or (qualified[0] if qualified else None)
    if kit_name:
        report.add(
            "toolkit",
            f"the toolkit `{kit_name}` is not kept (Patch tools have no toolkit): export with --toolkit {kit_name}",
        )
    if kit.get("description"):
        report.add("toolkit.description", "the toolkit's description is not kept")
    version_raw = qualified[2] if qualified else kit.get("version")
    version = import_version(
        version_raw, "fully_qualified_name" if qualified else "toolkit.version", report
    )

    inp_section = d.get("input")
    if not isinstance(inp_section, dict) or not isinstance(inp_section.get("parameters"), list):
        raise DefinitionError("an Arcade definition needs `input.parameters` (a list)")
    taken: set[str] = set()
    inputs = [
        _input(p, where=f"input.parameters[{i}]", report=report, taken=taken)
        for i, p in enumerate(inp_section["parameters"])
    ]
    outputs = _outputs(d.get("output"), report)
    labels, network = _requirements(d.get("requirements"), report)
    report_unknown_keys(d, _KNOWN, report)
    data = manifest_data(
        name=name,
        version=version,
        description=one_line(d.get("description")),
        inputs=inputs,
        outputs=outputs,
        network=network,
        external_auth=labels,
    )
    return build_tool(data, source=FORMAT, report=report), report


def _types(vs: Any, where: str, report: LossReport) -> tuple[str, str | None, list[Any]]:
    """(Patch type, item type, enum) from a value_schema."""
    if not isinstance(vs, dict) or vs.get("val_type") not in (*PATCH_TYPES, "array"):
        raise DefinitionError(
            f"`{where}.value_schema.val_type` must be one of string, integer, number, boolean, json, array"
        )
    type_ = PATCH_TYPES[vs["val_type"]]
    item = None
    if type_ == "array":
        inner = vs.get("inner_val_type")
        if inner in PATCH_TYPES:
            item = PATCH_TYPES[inner]
        else:
            report.add(
                f"{where}.value_schema.inner_val_type", "no inner type: items imported as string"
            )
            item = "string"
    report_unknown_keys(
        vs, {"val_type", "inner_val_type", "enum"}, report, f"{where}.value_schema."
    )
    enum = vs.get("enum")
    return type_, item, enum if isinstance(enum, list) else []


def _input(p: Any, *, where: str, report: LossReport, taken: set[str]) -> dict[str, Any]:
    if not isinstance(p, dict) or not isinstance(p.get("name"), str):
        raise DefinitionError(f"`{where}` must be an object with a `name`")
    raw = p["name"]
    name = unique(input_name(raw), taken)
    if name != raw:
        report.add(
            where,
            f"renamed `{raw}` to `{name}` (a Patch input is a snake_case Python name): callers send `{name}`",
        )
    type_, item, enum = _types(p.get("value_schema"), where, report)
    description = one_line(p.get("description"))
    if enum:
        description = with_enum(description, enum)
        report.add(
            f"{where}.value_schema.enum",
            "the allowed values are kept only in the description, not enforced",
        )
    if p.get("inferrable") is False:
        report.add(
            f"{where}.inferrable",
            "Patch has no place for inferrable: false (the model may fill it in)",
        )
    report_unknown_keys(
        p, {"name", "required", "description", "value_schema", "inferrable"}, report, f"{where}."
    )
    data: dict[str, Any] = {"name": name, "type": type_, "description": description}
    if p.get("required") is False:
        data["required"] = False
    if item is not None:
        data["items"] = {"type": item}
    return data


def _outputs(output: Any, report: LossReport) -> dict[str, Any]:
    if output is None:
        report.add("output", "missing (it is required): imported as an object output")
        return {"type": "object"}
    if not isinstance(output, dict):
        raise DefinitionError("`output` must be a JSON object")
    modes = output.get("available_modes") or []
    for mode in modes:
        if mode == "artifact":
            report.add(
                "output.available_modes",
                "the artifact mode has no place in Patch (a tool prints one JSON value)",
            )
    vs = output.get("value_schema")
    data: dict[str, Any]
    if vs is None:
        data = {"type": "null"} if "null" in modes and "value" not in modes else {"type": "object"}
        if data["type"] == "object":
            report.add("output.value_schema", "no value schema: imported as an object output")
    else:
        type_, item, enum = _types(vs, "output", report)
        data = {"type": type_}
        if item is not None:
            data["items"] = {"type": item}
        if enum:
            report.add("output.value_schema.enum", "Patch outputs have no allowed values: not kept")
    if output.get("description"):
        data["description"] = one_line(output["description"])
    report_unknown_keys(
        output, {"available_modes", "description", "value_schema"}, report, "output."
    )
    return data


def _requirements(req: Any, report: LossReport) -> tuple[list[str], bool]:
    if req is None:
        return [], False
    if not isinstance(req, dict):
        raise DefinitionError("`requirements` must be a JSON object")
    labels: list[str] = []
    auth = req.get("authorization")
    if isinstance(auth, dict):
        provider = auth.get("provider_id") or auth.get("id")
        if auth.get("provider_type", "oauth2") != "oauth2":
            report.add(
                "requirements.authorization.provider_type",
                f"`{auth.get('provider_type')}`: Patch only has OAuth 2 scopes",
            )
        if auth.get("id") and auth.get("provider_id"):
            report.add("requirements.authorization.id", "a private provider id is not kept")
        raw_oauth2 = auth.get("oauth2")
        oauth2: dict[str, Any] = raw_oauth2 if isinstance(raw_oauth2, dict) else {}
        labels = labels_from_scopes(
            provider, oauth2.get("scopes"), where="requirements.authorization", report=report
        )
    elif auth == "token":
        report.add(
            "requirements.authorization",
            "token authorization has no place in Patch (only OAuth scopes)",
        )
    secrets = req.get("secrets") or []
    for i, secret in enumerate(secrets if isinstance(secrets, list) else []):
        key = secret.get("key_id") if isinstance(secret, dict) else secret
        report.add(
            f"requirements.secrets[{i}]",
            f"secret `{key}`: Patch tools have no secrets (only external_auth tokens): provide it yourself, never in the file",
        )
    report_unknown_keys(req, {"authorization", "secrets"}, report, "requirements.")
    network = isinstance(auth, dict) or auth == "token" or bool(secrets)
    return labels, network
