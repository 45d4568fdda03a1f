"""Shinkai tool `Metadata` (v0.9.8).

Mapping (docs/interop.md has the table):
- name, version, description <-> the same fields; `tool_type: python`; keywords are derived from
  the name and providers; `author` is the model that generated the tool, when there is one;
- inputs <-> `parameters` (a JSON-Schema-like object table);
- outputs <-> `result` (always an object: another type is wrapped as `{result: <value>}`, and a
  result whose only, required property is `result` is unwrapped on import);
- external_auth <-> `oauth[]`, one entry per provider with its well-known URLs. Client id, client
  secret and redirect URL are left empty: Patch gets its tokens from Arcade, never from the file.
- `configurations` is written empty: Patch tools have no configuration.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlparse

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
)
from patch_tui.interop.oauth import (
    PROVIDER_TITLES,
    labels_from_scopes,
    oauth_requirements,
    provider_id,
)
from patch_tui.interop.patch_tool import build_tool, manifest_data, report_unportable
from patch_tui.interop.schema import (
    inputs_from_object_schema,
    object_schema,
    output_item_type,
    outputs_from_schema,
)

FORMAT = "shinkai"
WRAP_KEY = "result"

# OAuth provider id -> (authorizationUrl, tokenUrl).
OAUTH_URLS: dict[str, tuple[str, str]] = {
    "google": (
        "https://accounts.google.com/o/oauth2/v2/auth",
        "https://oauth2.googleapis.com/token",
    ),
    "slack": ("https://slack.com/oauth/v2/authorize", "https://slack.com/api/oauth.v2.access"),
    "github": (
        "https://github.com/login/oauth/authorize",
        "https://github.com/login/oauth/access_token",
    ),
    "linear": ("https://linear.app/oauth/authorize", "https://api.linear.app/oauth/token"),
}
_HOSTS: dict[str, str] = {
    "accounts.google.com": "google",
    "slack.com": "slack",
    "github.com": "github",
    "linear.app": "linear",
}


def keywords_for(manifest_name: str, labels: list[str]) -> list[str]:
    """Keywords derived from the name's words and the auth providers (so they need no field)."""
    words = [w for w in manifest_name.split("_") if w]
    for label in labels:
        provider = label.split(".", 1)[0]
        if provider not in words:
            words.append(provider)
    return list(dict.fromkeys(words))


def _result(manifest: Manifest, report: LossReport) -> dict[str, Any]:
    out = manifest.outputs
    if out.type == "object":
        if out.description:
            report.add(
                "outputs.description",
                "a Shinkai result has no description of its own: not exported",
            )
        return {"type": "object", "properties": {}, "required": []}
    if out.type == "null":
        report.add(
            "outputs.type",
            "Shinkai results are objects: a tool returning nothing is an empty object (imports back as object)",
        )
        if out.description:
            report.add(
                "outputs.description",
                "a Shinkai result has no description of its own: not exported",
            )
        return {"type": "object", "properties": {}, "required": []}
    prop: dict[str, Any] = {"type": out.type}
    item = output_item_type(manifest)
    if out.type == "array" and item:
        prop["items"] = {"type": item}
    if out.description:
        prop["description"] = out.description
    return {"type": "object", "properties": {WRAP_KEY: prop}, "required": [WRAP_KEY]}


def export(manifest: Manifest, *, toolkit: str | None = None) -> tuple[dict[str, Any], LossReport]:
    report = LossReport(FORMAT, "export", manifest.name)
    providers = oauth_requirements(manifest)
    definition: dict[str, Any] = {
        "name": manifest.name,
        "version": manifest.version,
        "description": manifest.description,
    }
    if manifest.generated_by:
        definition["author"] = manifest.generated_by
    definition |= {
        "keywords": keywords_for(manifest.name, manifest.external_auth),
        "tool_type": "python",
        "configurations": {"type": "object", "properties": {}, "required": []},
        "parameters": object_schema(manifest, descriptions=True, required_always=True),
        "result": _result(manifest, report),
    }
    if providers:
        definition["oauth"] = [
            {
                "name": PROVIDER_TITLES[pid],
                "version": "2.0",
                "authorizationUrl": OAUTH_URLS[pid][0],
                "redirectUrl": "",
                "tokenUrl": OAUTH_URLS[pid][1],
                "clientId": "",
                "clientSecret": "",
                "scopes": scopes,
                "responseType": "code",
            }
            for pid, scopes in providers.items()
        ]
    report_unportable(
        manifest,
        report,
        infer_network=bool(providers),
        where_network="Shinkai implies it only from oauth",
        generated_as="author" if manifest.generated_by else None,
    )
    return definition, report


_KNOWN = {
    "name",
    "version",
    "description",
    "author",
    "keywords",
    "tool_type",
    "configurations",
    "parameters",
    "result",
    "oauth",
    "sqlTables",
    "sqlQueries",
    "tools",
    "id",
    "homepage",
    "license",
}
_OAUTH_KNOWN = {
    "name",
    "version",
    "authorizationUrl",
    "redirectUrl",
    "tokenUrl",
    "clientId",
    "clientSecret",
    "scopes",
    "responseType",
    "refreshToken",
    "pkceType",
    "requestTokenContentType",
    "requestTokenAuthHeader",
}


def import_definition(definition: Any) -> tuple[str, LossReport]:
    d = require_mapping(definition, "Shinkai")
    report = LossReport(FORMAT, "import")
    raw_name = require_str(d, "name", "Shinkai")
    name = patch_name(raw_name)
    if name != raw_name:
        report.add("name", f"renamed `{raw_name}` to `{name}` (Patch names are snake_case)")
    version = import_version(d.get("version"), "version", report)
    if d.get("tool_type") not in (None, "python"):
        report.add(
            "tool_type", f"a {d['tool_type']} tool: the Patch body is Python, to be written again"
        )
    for key in ("id", "author", "homepage", "license"):
        if d.get(key):
            report.add(key, f"`{key}` has no place in a Patch tool (not kept)")
    for key in ("sqlTables", "sqlQueries", "tools"):
        if d.get(key):
            report.add(key, f"`{key}` has no place in a Patch tool (not kept)")
    inputs = inputs_from_object_schema(
        d.get("parameters") or {"type": "object"}, where="parameters", report=report
    )
    config = d.get("configurations")
    if isinstance(config, dict) and isinstance(config.get("properties"), dict):
        for key in config["properties"]:
            report.add(
                f"configurations.properties.{key}",
                "Patch tools have no configuration: pass it as an input, or read it in main()",
            )
    outputs = _outputs(d.get("result"), report)
    labels = _oauth(d.get("oauth"), report)
    keywords = d.get("keywords") or []
    if keywords and keywords != keywords_for(name, labels):
        report.add("keywords", "Patch tools have no keywords: not kept")
    report_unknown_keys(d, _KNOWN, report)
    data = manifest_data(
        name=name,
        version=version,
        description=one_line(d.get("description")),
        inputs=inputs,
        outputs=outputs,
        network=bool(d.get("oauth")),
        external_auth=labels,
    )
    return build_tool(data, source=FORMAT, report=report), report


def _outputs(result: Any, report: LossReport) -> dict[str, Any]:
    if result is None:
        return {"type": "object"}
    if not isinstance(result, dict):
        raise DefinitionError("`result` must be a JSON object")
    props = result.get("properties")
    if (
        isinstance(props, dict)
        and list(props) == [WRAP_KEY]
        and result.get("required") == [WRAP_KEY]
    ):
        return outputs_from_schema(
            props[WRAP_KEY], where=f"result.properties.{WRAP_KEY}", report=report
        )
    return outputs_from_schema(result, where="result", report=report)


def _oauth(entries: Any, report: LossReport) -> list[str]:
    if entries is None:
        return []
    if not isinstance(entries, list):
        raise DefinitionError("`oauth` must be a list of objects")
    labels: list[str] = []
    for i, entry in enumerate(entries):
        where = f"oauth[{i}]"
        if not isinstance(entry, dict):
            raise DefinitionError(f"`{where}` must be a JSON object")
        pid = provider_id(entry.get("name"))
        if pid is None:
            host = urlparse(str(entry.get("authorizationUrl") or "")).hostname or ""
            pid = _HOSTS.get(host)
        known_urls = OAUTH_URLS.get(pid or "", ("", ""))
        for key, known in (("authorizationUrl", known_urls[0]), ("tokenUrl", known_urls[1])):
            if entry.get(key) and entry[key] != known:
                report.add(
                    f"{where}.{key}",
                    "OAuth URLs are not kept: the Patch runtime gets tokens from Arcade",
                )
        for key in (
            "redirectUrl",
            "clientId",
            "pkceType",
            "requestTokenContentType",
            "requestTokenAuthHeader",
            "refreshToken",
        ):
            if entry.get(key):
                report.add(
                    f"{where}.{key}",
                    "OAuth client settings are not kept: the Patch runtime gets tokens from Arcade",
                )
        if entry.get("clientSecret"):
            report.add(
                f"{where}.clientSecret", "dropped: a client secret never goes into a tool file"
            )
        report_unknown_keys(entry, _OAUTH_KNOWN, report, f"{where}.")
        for label in labels_from_scopes(
            pid or entry.get("name"), entry.get("scopes"), where=where, report=report
        ):
            if label not in labels:
                labels.append(label)
    return labels
