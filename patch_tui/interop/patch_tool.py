"""The Patch tool's side of every format: the Patch fields no format has a place for (reported on
export), and the imported tool file (a canonical manifest and a `main()` stub that lints clean).

Only validated names and `repr()` literals reach the Python body; every other string of an
imported definition goes through the YAML writer into the frontmatter."""

from __future__ import annotations

import json
import math
from typing import Any

from patch_tui.format.manifest import Manifest
from patch_tui.interop.common import FORMAT_TITLES, DefinitionError, LossReport
from patch_tui.interop.oauth import oauth_scope
from patch_tui.interop.schema import output_item_type

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
            report.add(
                f"inputs.{inp.name}.tainted_ok",
                "no place for tainted_ok: the input will be treated as not accepting untrusted content",
            )
        if not keeps_defaults and inp.has_default:
            report.add(
                f"inputs.{inp.name}.default",
                f"no place for a default (`{json.dumps(inp.default)}`)",
            )
    out = manifest.outputs
    if out.type != "array" and out.items is not None:
        report.add("outputs.items", f"items on a {out.type} output: not exported")
    caps = manifest.capabilities
    if infer_network is not None and caps.network != infer_network:
        shown = f" ({where_network})" if where_network else ""
        report.add(
            "capabilities.network", f"no place for network: {str(caps.network).lower()}{shown}"
        )
    if caps.filesystem != "none":
        report.add("capabilities.filesystem", f"no place for filesystem: {caps.filesystem}")
    if caps.human_confirm and not keeps_human_confirm:
        report.add(
            "capabilities.human_confirm",
            "no place for human_confirm: the other side will not ask a person before running it",
        )
    if caps.browser:
        report.add("capabilities.browser", "no place for browser: true")
    if manifest.runtime.packages:
        report.add(
            "runtime.packages",
            f"no place for the packages ({', '.join(manifest.runtime.packages)})",
        )
    if manifest.runtime.python_version != "3.12":
        report.add(
            "runtime.python_version",
            f"no place for python_version {manifest.runtime.python_version}",
        )
    if manifest.external_auth and not keeps_external_auth:
        report.add(
            "external_auth", f"no place for external_auth ({', '.join(manifest.external_auth)})"
        )
    elif manifest.external_auth:
        for label in manifest.external_auth:
            if oauth_scope(label) is None:
                report.add(
                    "external_auth",
                    f"`{label}` is not a provider.scope label of a supported provider: not exported",
                )
    if not keeps_version:
        report.add("version", f"no place for the version ({manifest.version})")
    if manifest.generated_by is not None:
        report.add(
            "generated_by",
            f"carried only as {generated_as}, which does not import back"
            if generated_as
            else "no place for generated_by",
        )
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
    if (
        value is None
        or isinstance(value, bool | int | str)
        or (isinstance(value, float) and math.isfinite(value))
    ):
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
        raise DefinitionError(
            f"the imported manifest is not valid: {exc.errors()[0]['msg']}"
        ) from exc
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
