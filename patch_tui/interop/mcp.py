"""MCP tool definitions (the `Tool` of `tools/list`), as the `mcp` SDK's `mcp.types.Tool` reads them.

Mapping (docs/interop.md has the table):
- name <-> `name` (unchanged: MCP names are free-form, Patch names already fit);
- inputs <-> `inputSchema` (`input_json_schema`, exactly what `patch-tui serve` advertises);
- an object output <-> `outputSchema`; no outputSchema imports as a string (text) output;
- capabilities <-> `annotations` (`annotations_for`, shared with the MCP server).

`mcp` itself is imported only inside `validate()`: this module stays light.
"""

from __future__ import annotations

from typing import Any

from patch_tui.format.manifest import Manifest, input_json_schema
from patch_tui.interop.common import (
    DefinitionError,
    LossReport,
    one_line,
    patch_name,
    report_unknown_keys,
    require_mapping,
    require_str,
)
from patch_tui.interop.patch_tool import build_tool, manifest_data, report_unportable
from patch_tui.interop.schema import inputs_from_object_schema, outputs_from_schema

FORMAT = "mcp"


def annotations_for(manifest: Manifest) -> dict[str, bool]:
    """MCP tool annotations from a tool's capabilities (camelCase keys, as on the wire).

    Every hint is explicit because MCP's defaults are the pessimistic ones (destructive, open
    world). destructiveHint: a person must confirm, or it may write files. openWorldHint: it
    uses the network. readOnlyHint: only when nothing can change the world (no confirmation, no
    writes, no network, no account token). `patch-tui serve` can use this function too:
    `mcp.types.ToolAnnotations.model_validate(annotations_for(m))`.
    """
    caps = manifest.capabilities
    destructive = caps.human_confirm or caps.filesystem == "read-write"
    return {
        "readOnlyHint": not (destructive or caps.network or manifest.external_auth),
        "destructiveHint": destructive,
        "openWorldHint": caps.network,
    }


def validate(definition: dict[str, Any]) -> Any:
    """The definition as an `mcp.types.Tool` (raises pydantic's ValidationError)."""
    from mcp import types

    return types.Tool.model_validate(definition)


def export(manifest: Manifest, *, toolkit: str | None = None) -> tuple[dict[str, Any], LossReport]:
    report = LossReport(FORMAT, "export", manifest.name)
    definition: dict[str, Any] = {
        "name": manifest.name,
        "description": manifest.description,
        "inputSchema": input_json_schema(manifest),
    }
    out = manifest.outputs
    if out.type == "object":
        output: dict[str, Any] = {"type": "object"}
        if out.description:
            output["description"] = out.description
        definition["outputSchema"] = output
    else:
        if out.type != "string":
            report.add(
                "outputs.type",
                f"MCP declares only object outputs: a {out.type} result is not described (imports back as string)",
            )
        if out.description:
            report.add("outputs.description", "MCP describes only object outputs: not exported")
        if out.type == "array" and out.items is not None:
            report.add("outputs.items", "MCP describes only object outputs: not exported")
    definition["annotations"] = annotations_for(manifest)
    caps = manifest.capabilities
    if caps.filesystem == "read-write" and not caps.human_confirm:
        report.add(
            "capabilities.human_confirm",
            "filesystem read-write shows as destructiveHint, which imports back as human_confirm: true",
        )
    report_unportable(
        manifest, report, keeps_external_auth=False, keeps_version=False, keeps_human_confirm=True
    )
    return definition, report


_KNOWN = {"name", "description", "inputSchema", "outputSchema", "annotations"}


def import_definition(definition: Any) -> tuple[str, LossReport]:
    d = require_mapping(definition, "MCP")
    report = LossReport(FORMAT, "import")
    raw_name = require_str(d, "name", "MCP")
    name = patch_name(raw_name)
    if name != raw_name:
        report.add("name", f"renamed `{raw_name}` to `{name}` (Patch names are snake_case)")
    if "inputSchema" not in d:
        raise DefinitionError("an MCP tool needs `inputSchema` (a JSON Schema object)")
    inputs = inputs_from_object_schema(d["inputSchema"], where="inputSchema", report=report)
    if d.get("outputSchema") is not None:
        outputs = outputs_from_schema(d["outputSchema"], where="outputSchema", report=report)
    else:
        outputs = {"type": "string"}  # an MCP tool without outputSchema answers with text
    ann = d.get("annotations") or {}
    if not isinstance(ann, dict):
        raise DefinitionError("`annotations` must be a JSON object")
    network = ann.get("openWorldHint") is True
    human_confirm = ann.get("destructiveHint") is True and ann.get("readOnlyHint") is not True
    for key in ann:
        if key not in ("readOnlyHint", "destructiveHint", "openWorldHint"):
            report.add(f"annotations.{key}", f"`{key}` has no place in Patch (not kept)")
    if d.get("title"):
        report.add("title", "a display title besides the name has no place in Patch")
    report_unknown_keys(d, _KNOWN | {"title"}, report)
    data = manifest_data(
        name=name,
        version="1.0.0",
        description=one_line(d.get("description")),
        inputs=inputs,
        outputs=outputs,
        network=network,
        human_confirm=human_confirm,
    )
    return build_tool(data, source=FORMAT, report=report), report
