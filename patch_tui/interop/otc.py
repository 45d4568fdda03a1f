"""Tool definition specification 1.0 ("otc"): `id` = `Toolkit.Name@x.y.z`, JSON Schema inputs.

Mapping (docs/interop.md has the table):
- name <-> the tool part of `id` (PascalCase); `name` is `Toolkit_Tool`, as in the spec's examples;
- inputs <-> `input_schema.parameters` (an object schema; every property has a description);
- outputs <-> `output_schema` (null when the tool returns nothing);
- external_auth <-> `requirements.authorization` `[{id, oauth2: {scopes}}]`, with `user_id: true`
  (the Patch runtime mints a token for the user who calls the tool).
"""

from __future__ import annotations

from typing import Any

from patch_tui.format.manifest import Manifest
from patch_tui.interop.common import (
    DefinitionError,
    LossReport,
    import_version,
    one_line,
    patch_name,
    report_unknown_keys,
    require_mapping,
    require_str,
    split_qualified,
    to_pascal,
    toolkit_name,
)
from patch_tui.interop.oauth import labels_from_scopes, oauth_requirements
from patch_tui.interop.patch_tool import build_tool, manifest_data, report_unportable
from patch_tui.interop.schema import (
    inputs_from_object_schema,
    object_schema,
    output_schema,
    outputs_from_schema,
)

FORMAT = "otc"
NAME_MAX = 64


def export(manifest: Manifest, *, toolkit: str | None = None) -> tuple[dict[str, Any], LossReport]:
    report = LossReport(FORMAT, "export", manifest.name)
    kit = toolkit_name(toolkit or "Tools")
    tool = to_pascal(manifest.name)
    name = f"{kit}_{tool}"
    if len(name) > NAME_MAX:
        report.add(
            "name", f"`{name}` is longer than spec 1.0's 64 characters: cut to {name[:NAME_MAX]}"
        )
        name = name[:NAME_MAX]
    parameters = (
        object_schema(manifest, descriptions=True, required_always=True)
        if manifest.inputs
        else {"type": "object"}
    )
    definition: dict[str, Any] = {
        "id": f"{kit}.{tool}@{manifest.version}",
        "name": name,
        "description": manifest.description,
        "version": manifest.version,
        "input_schema": {"parameters": parameters},
        "output_schema": output_schema(manifest),
    }
    if manifest.outputs.type == "null" and manifest.outputs.description:
        report.add(
            "outputs.description",
            "output_schema is null for a tool returning nothing: the description has no place",
        )
    providers = oauth_requirements(manifest)
    if providers:
        definition["requirements"] = {
            "authorization": [
                {"id": pid, "oauth2": {"scopes": scopes}} for pid, scopes in providers.items()
            ],
            "user_id": True,
        }
    report_unportable(
        manifest,
        report,
        infer_network=bool(providers),
        where_network="spec 1.0 implies it only from requirements",
    )
    return definition, report


_KNOWN = {"id", "name", "description", "version", "input_schema", "output_schema", "requirements"}


def import_definition(definition: Any) -> tuple[str, LossReport]:
    d = require_mapping(definition, "spec 1.0")
    report = LossReport(FORMAT, "import")
    raw_name = require_str(d, "name", "spec 1.0")
    qualified = split_qualified(d.get("id"))
    id_version = None
    if qualified:
        kit, tool, id_version = qualified
        name = patch_name(tool)
        report.add(
            "id",
            f"the toolkit `{kit}` is not kept (Patch tools have no toolkit): export with --toolkit {kit}",
        )
        if raw_name != f"{kit}_{tool}":
            report.add(
                "name",
                f"`{raw_name}` is not kept: the tool is named from the id; export writes `{kit}_{tool}`",
            )
    else:
        name = patch_name(raw_name)
        if "id" in d:
            report.add("id", f"`{d['id']}` is not Toolkit.Name@x.y.z: not kept")
    version_raw = d.get("version", id_version)
    if id_version is not None and version_raw != id_version:
        report.add(
            "id", f"the id's version {id_version} differs from version {version_raw}: version wins"
        )
    version = import_version(version_raw, "version", report)

    input_schema = d.get("input_schema")
    if not isinstance(input_schema, dict) or "parameters" not in input_schema:
        raise DefinitionError(
            "a spec 1.0 definition needs `input_schema.parameters` (a JSON Schema object)"
        )
    report_unknown_keys(input_schema, {"parameters"}, report, "input_schema.")
    inputs = inputs_from_object_schema(
        input_schema["parameters"], where="input_schema.parameters", report=report
    )
    if "output_schema" in d:
        outputs = outputs_from_schema(d["output_schema"], where="output_schema", report=report)
    else:
        report.add("output_schema", "missing (it is required): imported as an object output")
        outputs = {"type": "object"}

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


def _requirements(req: Any, report: LossReport) -> tuple[list[str], bool]:
    """external_auth labels and whether the tool needs the network."""
    if req is None:
        return [], False
    if not isinstance(req, dict):
        raise DefinitionError("`requirements` must be a JSON object")
    labels: list[str] = []
    auths = req.get("authorization") or []
    if not isinstance(auths, list):
        raise DefinitionError("`requirements.authorization` must be a list")
    for i, auth in enumerate(auths):
        where = f"requirements.authorization[{i}]"
        if not isinstance(auth, dict):
            raise DefinitionError(f"`{where}` must be a JSON object")
        oauth2 = auth.get("oauth2")
        if not isinstance(oauth2, dict):
            report.add(
                where,
                f"`{auth.get('id')}` without oauth2 scopes: Patch only has OAuth scopes, not kept",
            )
            continue
        report_unknown_keys(oauth2, {"scopes"}, report, f"{where}.oauth2.")
        for label in labels_from_scopes(
            auth.get("id"), oauth2.get("scopes"), where=where, report=report
        ):
            if label not in labels:
                labels.append(label)
    secrets = req.get("secrets") or []
    if not isinstance(secrets, list):
        raise DefinitionError("`requirements.secrets` must be a list")
    for i, secret in enumerate(secrets):
        sid = secret.get("id") if isinstance(secret, dict) else secret
        report.add(
            f"requirements.secrets[{i}]",
            f"secret `{sid}`: Patch tools have no secrets (only external_auth tokens): provide it yourself, never in the file",
        )
    user_id = req.get("user_id")
    if user_id and not labels:
        report.add("requirements.user_id", "a user id without authorization has no place in Patch")
    elif labels and not user_id:
        report.add(
            "requirements.user_id",
            "not set, but Patch external_auth always acts for a user: export writes user_id: true",
        )
    report_unknown_keys(req, {"authorization", "secrets", "user_id"}, report, "requirements.")
    return labels, bool(auths) or bool(secrets)
