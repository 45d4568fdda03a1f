"""A small MCP server on the `mcp` SDK that speaks the Patch runtime's confirmation protocol.

`patch-tui guard` tests start it as guard's upstream (`python -m tests.fake_runtime`), over
stdio, exactly as a host config would start the real runtime. What it does, as the runtime
(`packages/mcp/src/server.ts`, `confirmation.ts`) does:

- tools/list: `patch_confirm_action` and `patch_list_tools`, then one tool per file in
  `$PATCH_CAT_TOOLBOX_DIR/tools/*.py` (name, description, inputSchema from its inputs);
- a call to a `human_confirm: true` tool answers `confirmation_required` (24 random bytes,
  base64url token; the tokens live in this process's memory for `FAKE_CONFIRM_TTL` seconds,
  default 60; single use); `patch_confirm_action` consumes the token and runs the call, or
  answers the runtime's PatchError ("invalid, expired, or already used");
- tainted input, as the runtime's taint tracker: a string of 16+ characters in an input without
  `tainted_ok` that occurs in one of the last 20 tool outputs holds the call as `tainted_input`
  (checked before human_confirm); confirming any token skips every check, as the runtime does
  (`invokeTool(..., {skipChecks: true})`), so a confirmed taint hold of a human_confirm tool
  runs it;
- results are one text content with the JSON (2-space indent); errors add isError and the text
  `{"error": <class>, "message": ...}`.

A run is `python <tool file>` with the args as JSON on stdin (the test tools print their
result as JSON), so a tool's side effects (a line in a marker file) count runs for real.

`FAKE_PLAIN=1`: a server that is not the Patch runtime: no confirmation protocol at all;
human_confirm tools run at once and are listed with `destructiveHint: true` (what guard holds).
`FAKE_LOG=PATH`: one JSON line per tools/call received (name, arguments), so tests see what
guard really forwarded. Each run writes the runtime's audit record (`runs/<run_id>.json`, tool
name, version and source_sha256 as the runtime hashes it). `FAKE_SWAP=PATH`: on
patch_confirm_action, the tool's file is replaced by PATH's bytes before it is read and run (the
change between guard's check and the runtime's read). Two test-only tools: `fake_exit` (the process dies at once, code 3)
and `fake_notify` (sends notifications/tools/list_changed).
"""

from __future__ import annotations

import base64
import json
import os
import secrets
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.stdio import stdio_server

from patch_tui.approvals.gate import find_tainted_inputs
from patch_tui.format import runtime_format, toolfile
from patch_tui.format.manifest import input_json_schema

# FAKE_TOOLBOX: a toolbox other than the one guard is told about (tests of a guard without it).
TOOLBOX = Path(os.environ.get("FAKE_TOOLBOX") or os.environ.get("PATCH_CAT_TOOLBOX_DIR", "."))
TTL = float(os.environ.get("FAKE_CONFIRM_TTL", "60"))
PLAIN = os.environ.get("FAKE_PLAIN") == "1"
LOG = os.environ.get("FAKE_LOG")
SWAP = os.environ.get("FAKE_SWAP")

PENDING: dict[str, tuple[str, dict[str, Any], float]] = {}
OUTPUTS: list[tuple[str, str]] = []  # (tool, output text), oldest first: the taint tracker


def _log(name: str, args: dict[str, Any]) -> None:
    if LOG:
        with open(LOG, "a") as fh:
            fh.write(json.dumps({"name": name, "arguments": args}) + "\n")


def _tools() -> dict[str, toolfile.ToolFile]:
    out: dict[str, toolfile.ToolFile] = {}
    for path in sorted((TOOLBOX / "tools").glob("*.py")):
        tf = toolfile.parse_bytes(path.read_bytes(), path=str(path))
        if tf.manifest is not None:
            out[tf.manifest.name] = tf
    return out


def _text(value: Any, is_error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(value, indent=2))],
        is_error=is_error,
    )


def _error(cls: str, message: str) -> types.CallToolResult:
    return _text({"error": cls, "message": message}, is_error=True)


def _summary(args: dict[str, Any]) -> str:
    text = json.dumps(args, separators=(",", ":"), ensure_ascii=False)
    return text if len(text) <= 200 else text[:199] + "\u2026"


def _run(tf: toolfile.ToolFile, args: dict[str, Any]) -> types.CallToolResult:
    proc = subprocess.run(
        [sys.executable, tf.path or ""],
        input=json.dumps(args),
        capture_output=True,
        text=True,
        timeout=60,
    )
    if proc.returncode != 0:
        return _error("SandboxError", proc.stderr.strip()[-500:] or f"exit {proc.returncode}")
    result = json.loads(proc.stdout)
    _audit(tf, args, result)
    OUTPUTS.append((tf.manifest.name if tf.manifest else "", json.dumps(result)))
    del OUTPUTS[:-20]
    return _text(result)


def _audit(tf: toolfile.ToolFile, args: dict[str, Any], result: Any) -> None:
    """The runtime's audit record of a run (`runs/<run_id>.json`), with its source hash."""
    parsed = runtime_format.parse(tf.text)
    run_id = str(uuid.uuid4())
    record = {
        "schema_version": 1,
        "run_id": run_id,
        "ran_at": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
        "tool": {
            "name": parsed.manifest["name"],
            "version": parsed.manifest["version"],
            "source_sha256": runtime_format.source_sha256(parsed.manifest, parsed.body),
        },
        "inputs": args,
        "output": result,
    }
    runs = TOOLBOX / "runs"
    runs.mkdir(exist_ok=True)
    (runs / f"{run_id}.json").write_text(json.dumps(record, indent=2) + "\n")


def _hold(
    kind: str, name: str, args: dict[str, Any], reason: str, **extra: Any
) -> types.CallToolResult:
    token = base64.urlsafe_b64encode(secrets.token_bytes(24)).decode().rstrip("=")
    PENDING[token] = (name, args, time.time() + TTL)
    return _text(
        {
            "status": "confirmation_required",
            "kind": kind,
            "tool": name,
            "confirmation_token": token,
            "args_summary": _summary(args),
            "reason": reason,
            **extra,
            "instruction": (
                "Surface this to the user. Only after explicit user approval, call "
                f'patch_confirm_action({{ confirmation_token: "{token}" }}). Do NOT '
                "auto-approve. Token expires in 60 seconds."
            ),
        }
    )


def _invoke(name: str, args: dict[str, Any], *, skip_checks: bool) -> types.CallToolResult:
    tf = _tools().get(name)
    if tf is None or tf.manifest is None:
        return _error("ToolNotFoundError", f'Tool "{name}" not found in toolbox.')
    if not PLAIN and not skip_checks:
        tainted = find_tainted_inputs(args, tf.manifest, list(reversed(OUTPUTS)))
        if tainted:
            sources = list(dict.fromkeys(t for v in tainted for t in v["matchedTools"]))
            reason = (
                "Tainted data is being passed to inputs that are not declared tainted_ok: "
                f"{', '.join(v['inputName'] for v in tainted)}. Origin: {', '.join(sources)}."
            )
            return _hold("tainted_input", name, args, reason, tainted_inputs=tainted)
        if tf.manifest.capabilities.human_confirm:
            return _hold(
                "human_confirm",
                name,
                args,
                "Tool is marked capabilities.human_confirm: true (irreversible action).",
            )
    return _run(tf, args)


def build() -> Server:
    async def on_list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        tools = []
        if not PLAIN:
            tools.append(
                types.Tool(
                    name="patch_confirm_action",
                    description="Approve and execute a tool call that was previously blocked.",
                    input_schema={
                        "type": "object",
                        "properties": {"confirmation_token": {"type": "string"}},
                        "required": ["confirmation_token"],
                        "additionalProperties": False,
                    },
                )
            )
        for name, tf in _tools().items():
            assert tf.manifest is not None
            hints = None
            if PLAIN and tf.manifest.capabilities.human_confirm:
                hints = types.ToolAnnotations(destructive_hint=True)
            tools.append(
                types.Tool(
                    name=name,
                    description=tf.manifest.description,
                    input_schema=input_json_schema(tf.manifest),
                    annotations=hints,
                )
            )
        for extra in ("fake_exit", "fake_notify"):
            tools.append(
                types.Tool(name=extra, description="test only", input_schema={"type": "object"})
            )
        return types.ListToolsResult(tools=tools)

    async def on_call_tool(ctx: Any, params: Any) -> types.CallToolResult:
        args = dict(params.arguments or {})
        _log(params.name, args)
        if params.name == "fake_exit":
            os._exit(3)
        if params.name == "fake_notify":
            await ctx.session.send_tool_list_changed()
            return _text({"notified": True})
        if params.name == "patch_confirm_action" and not PLAIN:
            entry = PENDING.pop(str(args.get("confirmation_token")), None)
            if SWAP and entry is not None:
                # The race guard cannot prevent: the file changes after guard's check, before
                # the runtime reads it to run the confirmed call.
                (TOOLBOX / "tools" / f"{entry[0]}.py").write_bytes(Path(SWAP).read_bytes())
            if entry is None or entry[2] <= time.time():
                return _error(
                    "PatchError",
                    "Confirmation token is invalid, expired, or already used. Re-issue the "
                    "original tool call to obtain a new token.",
                )
            return await anyio.to_thread.run_sync(
                lambda: _invoke(entry[0], entry[1], skip_checks=True)
            )
        return await anyio.to_thread.run_sync(lambda: _invoke(params.name, args, skip_checks=False))

    return Server("fake-patch-runtime", on_list_tools=on_list_tools, on_call_tool=on_call_tool)


async def main() -> None:
    server = build()
    async with stdio_server() as (read_stream, write_stream):
        await server.run(
            read_stream,
            write_stream,
            server.create_initialization_options(NotificationOptions(tools_changed=True)),
        )


if __name__ == "__main__":
    anyio.run(main)
