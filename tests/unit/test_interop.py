"""Export to and import from Arcade, spec 1.0 ("otc"), MCP and Shinkai, with loss reports.

The central promise: whatever changes on a trip through another format is named in a loss
report. The tests check it mechanically: they diff before and after, and every difference must
sit under a reported field path.
"""

from __future__ import annotations

import json
import keyword
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from patch_tui.cli import main as cli_main
from patch_tui.format import toolfile
from patch_tui.format.manifest import Manifest
from patch_tui.interop import (
    FORMATS,
    DefinitionError,
    LossReport,
    arcade,
    default_toolkit,
    mcp,
    otc,
    shinkai,
    split_definitions,
)
from patch_tui.interop.common import to_pascal, to_snake
from patch_tui.lint import lint_text
from patch_tui.settings.paths import sample_tools_dir
from tests.runtimekit import TESTS

DATA = TESTS / "interop_data"
OTC_EXAMPLES: list[dict[str, Any]] = json.loads((DATA / "otc_spec_examples.json").read_text())


def errors(text: str) -> list[str]:
    return [f"{d.code} {d.message}" for d in lint_text(text) if d.severity == "error"]


def manifest_of(text: str) -> Manifest:
    tf = toolfile.parse(text)
    assert tf.manifest is not None, tf.manifest_error or tf.problems
    return tf.manifest


def covered(path: str, fields: list[str]) -> bool:
    """A difference at `path` is documented by a loss on it, on a parent or on a child."""
    return any(path == f or path.startswith(f + ".") or f.startswith(path + ".") for f in fields)


def json_diff(a: Any, b: Any, path: str = "") -> list[str]:
    """Dotted paths where two JSON values differ (lists of objects compared item by item)."""
    if isinstance(a, dict) and isinstance(b, dict):
        out: list[str] = []
        for key in {*a, *b}:
            sub = f"{path}.{key}" if path else key
            if key not in a or key not in b:
                out.append(sub)
            else:
                out += json_diff(a[key], b[key], sub)
        return out
    if (
        isinstance(a, list)
        and isinstance(b, list)
        and len(a) == len(b)
        and all(isinstance(x, dict) for x in a + b)
    ):
        out = []
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            out += json_diff(x, y, f"{path}[{i}]")
        return out
    return [] if a == b else [path]


def manifest_view(m: Manifest) -> dict[str, Any]:
    """What a manifest means, by Patch field path (spelling differences normalised away)."""
    view: dict[str, Any] = {"name": m.name, "version": m.version, "description": m.description}
    for inp in m.inputs:
        base = f"inputs.{inp.name}"
        view[f"{base}.type"] = inp.type
        view[f"{base}.description"] = inp.description
        view[f"{base}.required"] = inp.required
        view[f"{base}.default"] = (inp.has_default, inp.default)
        view[f"{base}.tainted_ok"] = inp.tainted_ok
        view[f"{base}.items"] = inp.items.type if inp.items else None
    out = m.outputs
    view["outputs.type"] = out.type
    view["outputs.description"] = out.description or None
    view["outputs.items"] = out.item_type
    for key, value in m.capabilities.model_dump().items():
        view[f"capabilities.{key}"] = value
    view["runtime.python_version"] = m.runtime.python_version
    view["runtime.packages"] = m.runtime.packages
    view["external_auth"] = sorted(m.external_auth)
    view["generated_by"] = m.generated_by
    view["generated_at"] = m.generated_at
    return view


def manifest_diff(a: Manifest, b: Manifest) -> list[str]:
    va, vb = manifest_view(a), manifest_view(b)
    return sorted(k for k in {*va, *vb} if va.get(k) != vb.get(k))


def validate_arcade(definition: dict[str, Any]) -> None:
    jsonschema.Draft7Validator(arcade.schema()).validate(definition)


def validate_mcp(definition: dict[str, Any]) -> None:
    tool = mcp.validate(definition)
    # Nothing of ours was silently ignored by the model: it writes back the same JSON.
    assert tool.model_dump(by_alias=True, exclude_none=True, mode="json") == definition


# --- fixtures: tools that exercise every mapping ------------------------------------------------

TOOLS: dict[str, str] = {
    "slack_post": """\
# ---
# name: post_slack_message
# version: 2.1.0
# description: Post a message to a Slack channel after a person approves it.
# inputs:
#   - name: channel
#     type: string
#     description: The channel name without the hash.
#   - name: text
#     type: string
#     description: The message text.
#     tainted_ok: true
#   - name: mentions
#     type: array
#     description: User ids to mention.
#     required: false
#     default: []
#     items:
#       type: string
# outputs:
#   type: object
#   description: The posted message's timestamp and channel.
# capabilities:
#   network: true
#   filesystem: none
#   human_confirm: true
# runtime:
#   language: python
#   python_version: "3.12"
#   packages:
#     - requests==2.32.3
# external_auth:
#   - slack.send_message
#   - gmail.read
# ---
import json
import os
import sys

import requests


def main(channel: str, text: str, mentions: list | None = None) -> dict:
    token = os.environ["PATCH_ACCESS_TOKEN"]
    body = {"channel": channel, "text": text + "".join(f" <@{m}>" for m in mentions or [])}
    r = requests.post("https://slack.com/api/chat.postMessage", json=body, headers={"Authorization": f"Bearer {token}"}, timeout=10)
    return r.json()


if __name__ == "__main__":
    args = json.loads(sys.stdin.read())
    print(json.dumps(main(**args)))
""",
    "word_stats": """\
# ---
# name: word_stats
# version: 1.0.0
# description: Count words, lines and characters in a text.
# inputs:
#   - name: content
#     type: string
#     description: The text to measure.
#   - name: limit
#     type: integer
#     description: Stop after this many words.
#     required: false
#     default: 1000
#   - name: options
#     type: object
#     description: Extra switches.
#     required: false
# outputs:
#   type: array
#   items: integer
# capabilities:
#   network: false
#   filesystem: read-write
#   human_confirm: false
# runtime:
#   language: python
#   python_version: "3.12"
#   packages: []
# generated_by: claude-opus-4-7
# generated_at: "2026-05-04T12:34:56Z"
# ---
import json
import sys


def main(content: str, limit: int = 1000, options: dict | None = None) -> list:
    words = content.split()[:limit]
    return [len(words), content.count("\\n") + 1, len(content)]


if __name__ == "__main__":
    args = json.loads(sys.stdin.read())
    print(json.dumps(main(**args)))
""",
}


def _sample_tool_texts() -> dict[str, str]:
    folder = sample_tools_dir()
    texts = dict(TOOLS)
    if folder.is_dir():
        for path in sorted(folder.glob("*.py")):
            texts[f"sample_tools/{path.name}"] = path.read_text(encoding="utf-8")
    return texts


ALL_TOOLS = _sample_tool_texts()


# --- spec 1.0 examples (issue item 5) -----------------------------------------------------------


@pytest.mark.parametrize("example", OTC_EXAMPLES, ids=[e["id"] for e in OTC_EXAMPLES])
def test_otc_example_imports_clean_and_exports_back(example: dict[str, Any]) -> None:
    text, imported = otc.import_definition(example)
    assert errors(text) == []
    m = manifest_of(text)
    toolkit = example["id"].split(".")[0]
    exported, export_report = otc.export(m, toolkit=toolkit)
    diffs = json_diff(example, exported)
    undocumented = [d for d in diffs if not covered(d, imported.fields())]
    assert undocumented == [], (diffs, imported.text())


def test_otc_examples_carry_what_maps() -> None:
    by_id = {e["id"]: e for e in OTC_EXAMPLES}
    add = manifest_of(otc.import_definition(by_id["Calculator.Add@1.0.0"])[0])
    assert [(i.name, i.type, i.required) for i in add.inputs] == [
        ("a", "number", True),
        ("b", "number", True),
    ]
    assert add.outputs.type == "number" and add.outputs.description == "The sum of the two numbers."
    ring = manifest_of(otc.import_definition(by_id["Doorbell.Ring@0.1.0"])[0])
    assert ring.outputs.type == "null" and ring.version == "0.1.0"
    gmail_text, gmail_report = otc.import_definition(by_id["Gmail.GetEmails@1.2.0"])
    gmail = manifest_of(gmail_text)
    assert gmail.external_auth == ["gmail.read"] and gmail.capabilities.network
    assert gmail.inputs[0].required is False
    assert "def main(query: str | None = None) -> dict:" in gmail_text
    assert 'os.environ["PATCH_ACCESS_TOKEN"]' in gmail_text  # the token the runtime injects
    assert "output_schema.properties" in gmail_report.fields()
    _, sms_report = otc.import_definition(by_id["SMS.Send@0.1.2"])
    assert "requirements.secrets[0]" in sms_report.fields()
    assert "TWILIO_API_KEY" in sms_report.text()


# --- every export validates ---------------------------------------------------------------------


@pytest.mark.parametrize("key", sorted(ALL_TOOLS))
def test_every_tool_exports_valid_definitions(key: str) -> None:
    tf = toolfile.parse(ALL_TOOLS[key])
    if tf.manifest is None:
        pytest.skip(f"{key} has no valid manifest")
    m = tf.manifest
    definition, _ = arcade.export(m, toolkit="Samples")
    validate_arcade(definition)
    assert definition["fully_qualified_name"] == f"Samples.{definition['name']}@{m.version}"
    definition, _ = mcp.export(m)
    validate_mcp(definition)
    definition, _ = otc.export(m, toolkit="Samples")
    assert definition["id"] == f"Samples.{to_pascal(m.name)}@{m.version}"
    for prop in definition["input_schema"]["parameters"].get("properties", {}).values():
        assert "description" in prop
    definition, _ = shinkai.export(m)
    assert definition["tool_type"] == "python" and definition["result"]["type"] == "object"
    # And every export imports back to a tool that lints without errors.
    for fmt in FORMATS.values():
        text, _ = fmt.import_(fmt.export(m, toolkit="Samples")[0])
        assert errors(text) == [], (fmt.key, text)


def test_export_command_imports_no_ui_or_sdk(tmp_path: Path) -> None:
    import subprocess
    import sys

    tool = tmp_path / "t.py"
    tool.write_text(TOOLS["word_stats"], encoding="utf-8")
    probe = (
        "import contextlib, io, sys\nfrom patch_tui.cli import main\n"
        f"with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
        f"    rc = main(['export', {str(tool)!r}, '--format', 'mcp'])\n"
        "print(rc, ','.join(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    rc, loaded = out.stdout.split()
    assert rc == "0"
    assert not {"textual", "anthropic", "mcp"} & set(loaded.split(","))


def test_arcade_export_mapping() -> None:
    m = manifest_of(TOOLS["slack_post"])
    d, report = arcade.export(m, toolkit="team_chat")
    assert d["name"] == "PostSlackMessage"
    assert d["fully_qualified_name"] == "TeamChat.PostSlackMessage@2.1.0"
    assert d["toolkit"] == {"name": "TeamChat", "version": "2.1.0"}
    params = {p["name"]: p for p in d["input"]["parameters"]}
    assert params["mentions"] == {
        "name": "mentions",
        "required": False,
        "description": "User ids to mention.",
        "value_schema": {"val_type": "array", "inner_val_type": "string"},
    }
    assert d["output"]["available_modes"] == ["value", "error", "requires_authorization"]
    assert d["output"]["value_schema"] == {"val_type": "json"}
    # One authorization object only: Slack goes, Google is the reported loss.
    assert d["requirements"]["authorization"] == {
        "provider_id": "slack",
        "provider_type": "oauth2",
        "oauth2": {"scopes": ["chat:write"]},
    }
    fields = report.fields()
    for expected in (
        "external_auth",
        "inputs.text.tainted_ok",
        "inputs.mentions.default",
        "capabilities.human_confirm",
        "runtime.packages",
    ):
        assert expected in fields, report.text()
    assert "google" in report.text()


def test_mcp_annotations_follow_capabilities() -> None:
    post = manifest_of(TOOLS["slack_post"])
    assert mcp.annotations_for(post) == {
        "readOnlyHint": False,
        "destructiveHint": True,
        "openWorldHint": True,
    }
    stats = manifest_of(TOOLS["word_stats"])  # read-write files, no network
    assert mcp.annotations_for(stats) == {
        "readOnlyHint": False,
        "destructiveHint": True,
        "openWorldHint": False,
    }
    pure = stats.model_copy(
        update={"capabilities": stats.capabilities.model_copy(update={"filesystem": "read-only"})}
    )
    assert mcp.annotations_for(pure) == {
        "readOnlyHint": True,
        "destructiveHint": False,
        "openWorldHint": False,
    }
    d, report = mcp.export(stats)
    assert "outputSchema" not in d  # an array result has no MCP output schema
    assert {"outputs.type", "outputs.items", "version", "capabilities.filesystem"} <= set(
        report.fields()
    )


def test_shinkai_wraps_non_object_results_and_writes_oauth() -> None:
    stats = manifest_of(TOOLS["word_stats"])
    d, report = shinkai.export(stats)
    assert d["result"] == {
        "type": "object",
        "properties": {"result": {"type": "array", "items": {"type": "integer"}}},
        "required": ["result"],
    }
    assert d["author"] == "claude-opus-4-7" and d["keywords"] == ["word", "stats"]
    back = manifest_of(shinkai.import_definition(d)[0])
    assert back.outputs.type == "array" and back.outputs.items is not None
    post, _ = shinkai.export(manifest_of(TOOLS["slack_post"]))
    assert [(o["name"], o["scopes"]) for o in post["oauth"]] == [
        ("Slack", ["chat:write"]),
        ("Google", ["https://www.googleapis.com/auth/gmail.readonly"]),
    ]
    assert all(o["clientSecret"] == "" for o in post["oauth"])


# --- imports --------------------------------------------------------------------------------------

FASTMCP_TOOL = {
    "name": "searchIssues",
    "title": "Search issues",
    "description": "Search the tracker's issues. Returns at most `limit` results.",
    "inputSchema": {
        "type": "object",
        "title": "searchIssuesArguments",
        "properties": {
            "query": {"title": "Query", "type": "string"},
            "maxResults": {
                "type": "integer",
                "default": 10,
                "minimum": 1,
                "maximum": 100,
                "description": "How many.",
            },
            "state": {"type": "string", "enum": ["open", "closed"], "description": "Issue state."},
            "from": {"type": ["string", "null"], "description": "Start date."},
            "labels": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["query"],
    },
    "annotations": {"readOnlyHint": True, "openWorldHint": True, "idempotentHint": True},
}


def test_mcp_import_of_a_server_tool() -> None:
    text, report = mcp.import_definition(FASTMCP_TOOL)
    assert errors(text) == []
    m = manifest_of(text)
    assert m.name == "search_issues"
    names = [i.name for i in m.inputs]
    assert names == ["query", "max_results", "state", "from_", "labels"]
    state = m.input("state")
    assert state is not None and state.description == "Issue state (one of: open, closed)."
    limit = m.input("max_results")
    assert limit is not None and limit.default == 10 and not limit.required
    assert m.input("query").description == "Query"  # the title stands in for a missing description
    assert m.capabilities.network and not m.capabilities.human_confirm
    assert m.outputs.type == "string"  # no outputSchema: the tool answers with text
    assert (
        "def main(query: str, max_results: int = 10, state: str | None = None, from_: str | None = None, labels: list[str] | None = None) -> str:"
        in text
    )
    fields = report.fields()
    for expected in (
        "inputSchema.properties.maxResults",  # renamed
        "inputSchema.properties.maxResults.minimum",
        "inputSchema.properties.maxResults.maximum",
        "inputSchema.properties.state.enum",
        "inputSchema.properties.from",  # renamed: a Python keyword
        "inputSchema.properties.from.type",  # nullable
        "annotations.idempotentHint",
        "title",
    ):
        assert expected in fields, report.text()


def test_required_after_optional_becomes_keyword_only() -> None:
    d = {
        "name": "x",
        "inputSchema": {
            "type": "object",
            "properties": {
                "a": {"type": "string", "description": "A."},
                "b": {"type": "integer", "description": "B."},
            },
            "required": ["b"],
        },
    }
    text, _ = mcp.import_definition(d)
    assert "def main(*, a: str | None = None, b: int) -> str:" in text
    compile(toolfile.parse(text).body, "stub", "exec")


def test_hostile_definition_never_reaches_the_body() -> None:
    evil = '"""\nimport os; os.system("echo pwned")  #'
    d = {
        "name": "evil\u202etool",
        "description": evil,
        "inputSchema": {
            "type": "object",
            "properties": {
                'x"); os.system("id': {"type": "string", "description": evil, "default": evil},
            },
        },
    }
    text, _ = mcp.import_definition(d)
    body = toolfile.parse(text).body
    assert "os.system" not in body.replace(repr(evil), "")  # only inside a repr() literal
    tree = compile(body, "stub", "exec", flags=0x400)  # ast.PyCF_ONLY_AST
    assert tree is not None
    m = manifest_of(text)
    assert m.name == "eviltool" and m.description == " ".join(evil.split())
    assert all(i.name.isidentifier() for i in m.inputs)


@pytest.mark.parametrize(
    ("fmt", "definition", "message"),
    [
        ("mcp", {"description": "no name"}, "needs `name`"),
        ("mcp", {"name": "x"}, "inputSchema"),
        ("mcp", {"name": "x", "inputSchema": {"properties": []}}, "properties"),
        ("otc", {"name": "x"}, "input_schema.parameters"),
        (
            "arcade",
            {
                "name": "x",
                "input": {"parameters": [{"name": "a", "value_schema": {"val_type": "date"}}]},
            },
            "val_type",
        ),
        ("shinkai", ["not", "an", "object"], "JSON object"),
    ],
)
def test_wrong_shapes_are_definition_errors(fmt: str, definition: Any, message: str) -> None:
    with pytest.raises(
        DefinitionError, match=message.replace("`", ".").replace("[", ".").replace("]", ".")
    ):
        FORMATS[fmt].import_(definition)


def test_arcade_import_maps_types_auth_and_reports_the_rest() -> None:
    d = {
        "name": "ListEmails",
        "fully_qualified_name": "Gmail.ListEmails@3.1",
        "description": "List emails.",
        "toolkit": {"name": "Gmail", "version": "3.1.0", "description": "Gmail tools."},
        "input": {
            "parameters": [
                {
                    "name": "labels",
                    "required": False,
                    "description": "Labels.",
                    "value_schema": {"val_type": "array", "inner_val_type": "string"},
                },
                {
                    "name": "filter",
                    "required": True,
                    "description": "Filter.",
                    "value_schema": {"val_type": "json"},
                    "inferrable": False,
                },
                {
                    "name": "order",
                    "required": False,
                    "description": "Order.",
                    "value_schema": {"val_type": "string", "enum": ["asc", "desc"]},
                },
            ]
        },
        "output": {
            "available_modes": ["value", "error", "requires_authorization"],
            "value_schema": {"val_type": "array", "inner_val_type": "json"},
        },
        "requirements": {
            "authorization": {
                "provider_id": "google",
                "provider_type": "oauth2",
                "oauth2": {
                    "scopes": [
                        "https://www.googleapis.com/auth/gmail.readonly",
                        "https://www.googleapis.com/auth/drive",
                    ]
                },
            },
            "secrets": [{"key_id": "API_KEY"}],
        },
    }
    text, report = arcade.import_definition(d)
    assert errors(text) == []
    m = manifest_of(text)
    assert m.name == "list_emails" and m.version == "3.1.0"
    assert [(i.name, i.type, i.items.type if i.items else None) for i in m.inputs] == [
        ("labels", "array", "string"),
        ("filter", "object", None),
        ("order", "string", None),
    ]
    assert m.outputs.type == "array" and m.outputs.item_type == "object"
    assert m.external_auth == ["gmail.read"]
    text_report = report.text()
    for expected in (
        "fully_qualified_name",
        "toolkit",
        "toolkit.description",
        "input.parameters[1].inferrable",
        "input.parameters[2].value_schema.enum",
        "requirements.authorization.scopes",
        "requirements.secrets[0]",
    ):
        assert expected in report.fields(), text_report
    assert "drive" in text_report and "API_KEY" in text_report


def test_shinkai_import_drops_secrets_and_urls() -> None:
    d = {
        "name": "Weather Now",
        "version": "0.2",
        "description": "Current weather for a city.",
        "author": "someone",
        "keywords": ["weather"],
        "tool_type": "typescript",
        "configurations": {
            "type": "object",
            "properties": {"api_key": {"type": "string", "description": "Key."}},
            "required": ["api_key"],
        },
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "City.", "nullable": True}},
            "required": ["city"],
        },
        "result": {
            "type": "object",
            "properties": {"temp": {"type": "number"}},
            "required": ["temp"],
        },
        "oauth": [
            {
                "name": "Github",
                "version": "2.0",
                "authorizationUrl": "https://example.com/auth",
                "clientId": "abc",
                "clientSecret": "s3cr3t",
                "scopes": ["repo"],
                "responseType": "code",
            }
        ],
        "sqlTables": [{"name": "t", "definition": "CREATE TABLE t (x)"}],
    }
    text, report = shinkai.import_definition(d)
    assert "s3cr3t" not in text and "abc" not in text
    m = manifest_of(text)
    assert m.name == "weather_now" and m.version == "0.2.0" and m.external_auth == ["github.repo"]
    for expected in (
        "version",
        "author",
        "keywords",
        "tool_type",
        "configurations.properties.api_key",
        "parameters.properties.city.nullable",
        "result.properties",
        "oauth[0].authorizationUrl",
        "oauth[0].clientId",
        "oauth[0].clientSecret",
        "sqlTables",
    ):
        assert expected in report.fields(), report.text()


def test_names() -> None:
    assert to_snake("getHTTPResponse") == "get_http_response"
    assert to_snake("Gmail_GetEmails") == "gmail_get_emails"
    assert to_snake("get-weather") == "get_weather"
    assert to_snake("Weather - Now!") == "weather_now"
    assert to_snake("Café au lait") == "cafe_au_lait"
    for name in ("extract_pdf_table", "tool_2", "a_b", "get_v2_data", "x__y", "trailing_"):
        assert to_snake(to_pascal(name)) == name
    assert to_pascal("extract_pdf_table") == "ExtractPdfTable"
    assert default_toolkit("/x/sample_tools/a.py") == "SampleTools"


def test_split_definitions_accepts_mcp_tools_list() -> None:
    listing = {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "a"}, {"name": "b"}]}}
    assert [d["name"] for d in split_definitions(listing, "mcp")] == ["a", "b"]
    assert split_definitions({"name": "a"}, "otc") == [{"name": "a"}]
    with pytest.raises(DefinitionError):
        split_definitions("text", "otc")


# --- property: export then import keeps everything but the reported losses ----------------------

_WORD = st.from_regex(r"[a-z]{1,8}", fullmatch=True)
_SENTENCE = st.builds(
    lambda words: " ".join(words).capitalize() + ".", st.lists(_WORD, min_size=1, max_size=6)
)
_NAME = st.from_regex(r"[a-z][a-z0-9_]{0,15}", fullmatch=True).filter(
    lambda s: not keyword.iskeyword(s) and s != "args"
)
_TYPES = st.sampled_from(["string", "number", "integer", "boolean", "array", "object"])
# Defaults of the input's type (another type is a lint error, PT022), or null.
_DEFAULTS = {
    "string": st.one_of(st.none(), _WORD),
    "number": st.one_of(
        st.integers(-1000, 1000), st.floats(-1e6, 1e6, allow_nan=False).map(lambda f: round(f, 3))
    ),
    "integer": st.integers(-1000, 1000),
    "boolean": st.booleans(),
    "array": st.lists(st.integers(0, 9), max_size=3),
    "object": st.dictionaries(_WORD, st.integers(0, 9), max_size=2),
}
_LABELS = st.lists(
    st.sampled_from(
        [
            "gmail.read",
            "gmail.send",
            "google_calendar.read",
            "google_calendar.events",
            "slack.send_message",
            "slack.reactions_write",
            "github.repo",
            "github.read_user",
            "linear.read",
            "gmail.settings_basic",
        ]
    ),
    unique=True,
    max_size=4,
)


@st.composite
def _input(draw: st.DrawFn, name: str) -> dict[str, Any]:
    type_ = draw(_TYPES)
    # The Patch runtime requires every input to have a description.
    data: dict[str, Any] = {"name": name, "type": type_, "description": draw(_SENTENCE)}
    if draw(st.booleans()):
        data["required"] = draw(st.booleans())
    if draw(st.booleans()):
        data["default"] = draw(_DEFAULTS[type_])
    if draw(st.booleans()):
        data["tainted_ok"] = draw(st.booleans())
    if type_ == "array" and draw(st.integers(0, 4)):
        data["items"] = {"type": draw(_TYPES)}
    return data


@st.composite
def manifests(draw: st.DrawFn) -> Manifest:
    names = draw(st.lists(_NAME, unique=True, max_size=4))
    out_type = draw(
        st.sampled_from(["string", "number", "integer", "boolean", "array", "object", "null"])
    )
    outputs: dict[str, Any] = {"type": out_type}
    if draw(st.booleans()):
        outputs["description"] = draw(_SENTENCE)
    if out_type == "array" and draw(st.booleans()):
        item = draw(_TYPES)
        outputs["items"] = item if draw(st.booleans()) else {"type": item}
    data: dict[str, Any] = {
        "name": draw(_NAME),
        "version": f"{draw(st.integers(0, 20))}.{draw(st.integers(0, 20))}.{draw(st.integers(0, 20))}",
        "description": draw(_SENTENCE),
        "inputs": [draw(_input(n)) for n in names],
        "outputs": outputs,
        "capabilities": {
            "network": draw(st.booleans()),
            "filesystem": draw(st.sampled_from(["none", "read-only", "read-write"])),
            "human_confirm": draw(st.booleans()),
            "browser": draw(st.booleans()),
        },
        "runtime": {
            "language": "python",
            "python_version": draw(st.sampled_from(["3.11", "3.12", "3.13"])),
            "packages": draw(
                st.lists(st.sampled_from(["requests==2.32.3", "httpx==0.27.0"]), unique=True)
            ),
        },
        "external_auth": draw(_LABELS),
    }
    if draw(st.booleans()):
        data["generated_by"] = "claude-opus-4-7"
        data["generated_at"] = "2026-05-04T12:34:56Z"
    return Manifest.model_validate(data)


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(m=manifests())
def test_round_trip_loses_only_what_is_reported(fmt: str, m: Manifest) -> None:
    definition, exported = FORMATS[fmt].export(m, toolkit="Kit")
    if fmt == "arcade":
        validate_arcade(definition)
    if fmt == "mcp":
        validate_mcp(definition)
    if fmt == "otc":
        assert re.fullmatch(r"[A-Za-z0-9_-]{1,64}", definition["name"])
        assert re.fullmatch(r"Kit\.[A-Za-z0-9_]+@\d+\.\d+\.\d+", definition["id"])
        params = definition["input_schema"]["parameters"]
        assert all("description" in p for p in params.get("properties", {}).values())
        assert (definition["output_schema"] is None) == (m.outputs.type == "null")
    assert json.loads(json.dumps(definition)) == definition  # plain JSON, nothing else
    text, _ = FORMATS[fmt].import_(definition)
    back = manifest_of(text)
    assert errors(text) == []
    assert isinstance(exported, LossReport)
    undocumented = [d for d in manifest_diff(m, back) if not covered(d, exported.fields())]
    assert undocumented == [], (undocumented, exported.text(), definition)


_JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=8)),
    lambda children: st.one_of(
        st.lists(children, max_size=3), st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)
_KEYS = st.sampled_from(
    [
        "name",
        "inputSchema",
        "input_schema",
        "parameters",
        "input",
        "output",
        "result",
        "oauth",
        "requirements",
        "annotations",
        "properties",
        "type",
        "required",
        "items",
        "value_schema",
        "val_type",
        "id",
        "version",
        "toolkit",
    ]
)
_FOREIGN = st.recursive(
    st.one_of(_JSON, st.sampled_from(["string", "object", "array", "json", "x", "Kit.Tool@1.0.0"])),
    lambda children: st.dictionaries(_KEYS, children, max_size=6),
    max_leaves=30,
)


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@settings(max_examples=60, deadline=None)
@given(definition=_FOREIGN)
def test_any_json_imports_or_says_why(fmt: str, definition: Any) -> None:
    try:
        text, _ = FORMATS[fmt].import_(definition)
    except DefinitionError as exc:
        assert str(exc)
        return
    manifest_of(text)
    compile(toolfile.parse(text).body, "stub", "exec")


# --- CLI -------------------------------------------------------------------------------------------


@pytest.fixture
def tool_path(tmp_path: Path) -> Path:
    folder = tmp_path / "team_chat"
    folder.mkdir()
    path = folder / "post_slack_message.py"
    path.write_text(TOOLS["slack_post"], encoding="utf-8")
    return path


def test_cli_export_to_stdout_with_report_on_stderr(
    tool_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli_main(["export", str(tool_path), "--format", "arcade"]) == 0
    out, err = capsys.readouterr()
    definition = json.loads(out)
    validate_arcade(definition)
    assert (
        definition["fully_qualified_name"] == "TeamChat.PostSlackMessage@2.1.0"
    )  # the folder's name
    assert "not carried" in err and "inputs.text.tainted_ok" in err


def test_cli_export_json_report_and_out_file(
    tool_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        cli_main(
            [
                "export",
                str(tool_path),
                "--format",
                "otc",
                "--toolkit",
                "Slack",
                "--report-format",
                "json",
            ]
        )
        == 0
    )
    out, err = capsys.readouterr()
    doc = json.loads(out)
    assert doc["definition"]["id"] == "Slack.PostSlackMessage@2.1.0"
    assert {"field": "capabilities.human_confirm", "message": doc["losses"][0]["message"]} in doc[
        "losses"
    ] or any(loss["field"] == "capabilities.human_confirm" for loss in doc["losses"])
    assert err == ""
    target = tmp_path / "out" / "tool.json"
    assert cli_main(["export", str(tool_path), "--format", "mcp", "--out", str(target)]) == 0
    out, err = capsys.readouterr()
    assert out.strip() == str(target)
    validate_mcp(json.loads(target.read_text()))


def test_cli_export_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["export", str(tmp_path / "missing.py"), "--format", "mcp"]) == 2
    bad = tmp_path / "bad.py"
    bad.write_text("# ---\n# name: Bad Name\n# ---\n", encoding="utf-8")
    assert cli_main(["export", str(bad), "--format", "mcp"]) == 2
    _, err = capsys.readouterr()
    assert "patch-tui lint" in err and "Traceback" not in err


def test_cli_import_a_list_never_overwrites(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "examples.json"
    src.write_text(json.dumps(OTC_EXAMPLES), encoding="utf-8")
    out_dir = tmp_path / "imported"
    assert cli_main(["import", str(src), "--from", "otc", "--out", str(out_dir)]) == 0
    out, err = capsys.readouterr()
    written = out.split()
    assert [Path(p).name for p in written] == [
        "add.py",
        "ring.py",
        "get_timestamp.py",
        "get_emails.py",
        "send.py",
    ]
    for p in written:
        assert errors(Path(p).read_text(encoding="utf-8")) == []
    assert "TWILIO_API_KEY" in err and "lint: 0 errors" in err
    before = (out_dir / "add.py").read_bytes()
    (out_dir / "add.py").write_text("# mine\n", encoding="utf-8")
    assert cli_main(["import", str(src), "--from", "otc", "--out", str(out_dir)]) == 1
    out, err = capsys.readouterr()
    assert out == "" and "exists: not overwritten" in err
    assert (out_dir / "add.py").read_text() == "# mine\n" and before != b"# mine\n"


def test_cli_import_json_report_and_duplicate_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "tools.json"
    tool = {
        "name": "echo",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
    }
    src.write_text(json.dumps({"tools": [tool, tool]}), encoding="utf-8")
    assert (
        cli_main(
            ["import", str(src), "--from", "mcp", "--out", str(tmp_path), "--report-format", "json"]
        )
        == 0
    )
    results = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in results] == ["echo", "echo_2"]
    assert manifest_of(Path(results[1]["path"]).read_text()).name == "echo_2"
    assert results[0]["lint"]["error"] == 0


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not JSON (line 1, column 2"),
        ('"a string"', "expected a MCP definition"),
        ('{"name": 3}', "needs `name`"),
        ("[]", "no definitions"),
        (
            '{"name": "x", "inputSchema": {"type": "object", "properties": {"a": {"default": NaN}}}}',
            "NaN is not JSON",
        ),
    ],
)
def test_cli_import_bad_input_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, message: str
) -> None:
    src = tmp_path / "in.json"
    src.write_text(content, encoding="utf-8")
    assert cli_main(["import", str(src), "--from", "mcp", "--out", str(tmp_path / "o")]) == 2
    _, err = capsys.readouterr()
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "o").exists()


def test_imported_stub_gets_the_stub_info_and_nothing_worse() -> None:
    text, _ = otc.import_definition(OTC_EXAMPLES[0])
    found = [(d.code, d.severity) for d in lint_text(text)]
    assert found == [("PT047", "info")]
    written = text.replace(
        '    raise NotImplementedError("add: imported stub, main() is not written yet")',
        "    return a + b",
    )
    assert lint_text(written) == []


def test_definition_json_escapes_hidden_characters_only() -> None:
    from patch_tui.interop import definition_json

    value = {"description": "Café \u202eevil\u200b \x1b[31m \x7f \u2028 ok"}
    text = definition_json(value)
    assert json.loads(text) == value
    assert "Café" in text  # readable UTF-8 stays
    for ch in ("\u202e", "\u200b", "\x1b", "\x7f", "\u2028"):
        assert ch not in text
    assert "\\u202e" in text


def test_cli_export_escapes_a_hostile_description(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "t.py"
    path.write_text(
        TOOLS["word_stats"].replace("Count words,", "Count \u202ewords,"), encoding="utf-8"
    )
    assert cli_main(["export", str(path), "--format", "mcp"]) == 0
    out = capsys.readouterr().out
    assert "\u202e" not in out and json.loads(out)["description"].startswith("Count \u202ewords")


def test_a_default_of_another_type_is_dropped_and_reported() -> None:
    d = {
        "name": "x",
        "inputSchema": {
            "type": "object",
            "properties": {
                "n": {"type": "integer", "default": "ten", "description": "N."},
                "k": {"type": "integer", "default": 5.0, "description": "K."},
                "b": {"type": "number", "default": True, "description": "B."},
            },
        },
    }
    text, report = mcp.import_definition(d)
    assert errors(text) == []
    m = manifest_of(text)
    assert (
        not m.input("n").has_default and m.input("k").default == 5 and not m.input("b").has_default
    )
    assert {"inputSchema.properties.n.default", "inputSchema.properties.b.default"} <= set(
        report.fields()
    )


@pytest.mark.slow
async def test_tools_of_a_real_mcp_server_import_lint_clean(tmp_path: Path) -> None:
    """The new user's path: take `tools/list` from a running MCP server (`patch-tui serve` over
    the sample tools, through the mcp SDK's own client) and import it with the CLI."""
    import shutil
    import sys

    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    from tests.runtimekit import cli, cli_env

    root = tmp_path / "box"
    (root / "tools").mkdir(parents=True)
    originals = {}
    for path in sorted(sample_tools_dir().glob("*.py")):
        shutil.copy(path, root / "tools" / path.name)
        m = toolfile.read(str(path)).manifest
        if m is not None:
            originals[m.name] = m
    assert originals, "no sample tools to serve"
    env = cli_env(tmp_path, tmp_path / "store.sqlite3", root)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "patch_tui", "serve", "--toolbox", str(root)], env=env
    )
    with open(tmp_path / "serve.log", "w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode="legacy", cache=None) as client:
            listed = await client.list_tools()
    tools = [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in listed.tools]
    src = tmp_path / "tools_list.json"
    src.write_text(json.dumps({"tools": tools}), encoding="utf-8")

    out_dir = tmp_path / "imported"
    done = cli(
        env, "import", str(src), "--from", "mcp", "--out", str(out_dir), "--report-format", "json"
    )
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)
    assert len(results) == len(tools)
    for result in results:
        text = Path(result["path"]).read_text(encoding="utf-8")
        assert errors(text) == [], (result["name"], text)
        m = manifest_of(text)
        original = originals.get(m.name)
        if original is None:
            continue  # the server's own patch_* tools
        assert [(i.name, i.type, i.required) for i in m.inputs] == [
            (i.name, i.type, i.required) for i in original.inputs
        ]
        assert m.capabilities.network == original.capabilities.network
        assert m.capabilities.human_confirm == (
            original.capabilities.human_confirm or original.capabilities.filesystem == "read-write"
        )
