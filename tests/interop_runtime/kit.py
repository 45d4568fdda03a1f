"""Driving the real Patch runtime: its parser and writer (harness `parse.js`), its toolbox
(`save.js`), and its MCP server over stdio (`local-runtime.js`, the real server with a local
sandbox) through the python `mcp` client, the way a host talks to it."""

from __future__ import annotations

import json
import os
import subprocess
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from tests.interop_runtime.samples import REPO
from tests.mcpkit import RUNTIME_META, mcp_session


def harness_dir() -> Path | None:
    """The built harness (`harness-dist/`), named by PATCH_RUNTIME_HARNESS (`make interop`)."""
    env = os.environ.get("PATCH_RUNTIME_HARNESS")
    if not env:
        return None
    path = Path(env)
    return path if (path / "local-runtime.js").is_file() else None


def _node(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    folder = harness_dir()
    assert folder is not None
    return subprocess.run(
        ["node", str(folder / script), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def runtime_parse(paths: list[Path]) -> dict[str, dict[str, Any]]:
    """The runtime parser's verdict on each file: {path: {ok, manifest, inputSchema | error}}."""
    out = _node("parse.js", *map(str, paths))
    assert out.returncode == 0, out.stderr
    rows = [json.loads(line) for line in out.stdout.splitlines() if line.strip()]
    return {row["file"]: row for row in rows}


def runtime_serialize(path: Path) -> str:
    """What the runtime's writer (serializeManifest) makes of a file it accepts."""
    out = _node("parse.js", "--serialize", str(path))
    assert out.returncode == 0, out.stderr
    return out.stdout


def runtime_save(toolbox: Path, files: list[Path]) -> str:
    """Save files into a toolbox exactly as the runtime's generator and saveTool do."""
    out = _node("save.js", str(toolbox), *map(str, files))
    assert out.returncode == 0, out.stderr
    return out.stderr


@asynccontextmanager
async def runtime_client(toolbox: Path):
    """An MCP client session with the real runtime server over stdio, on this toolbox."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    folder = harness_dir()
    assert folder is not None
    env = {
        **os.environ,
        "PATCH_CAT_TOOLBOX_DIR": str(toolbox),
        # The server checks these exist at start-up; generation is off in the harness.
        "ANTHROPIC_API_KEY": "x",
        "E2B_API_KEY": "x",
        "LOG_LEVEL": "error",
    }
    params = StdioServerParameters(command="node", args=[str(folder / "local-runtime.js")], env=env)
    errlog = open(toolbox.parent / f"{toolbox.name}-runtime.log", "a")  # noqa: SIM115 - closed below
    try:
        async with Client(stdio_client(params, errlog=errlog), mode="legacy", cache=None) as client:
            yield client
    finally:
        errlog.close()


def serve_client(toolbox: Path, store: Path) -> Any:
    """An MCP client session with `patch-tui serve` over stdio, on this toolbox."""
    env = {
        **os.environ,
        "PATCH_TUI_CONFIG": str(store.parent / "config.toml"),
        "XDG_CACHE_HOME": str(store.parent / "cache"),
        "XDG_STATE_HOME": str(store.parent / "state"),
    }
    args = ["serve", "--toolbox", str(toolbox), "--store", str(store)]
    return mcp_session(args, env, store.parent / "serve.log", cwd=str(REPO))


def descriptors(tools: list[Any], meta: set[str]) -> dict[str, dict[str, Any]]:
    """The toolbox's tools of a tools/list result (meta tools left out), as the JSON a host
    reads: {name: {name, description, inputSchema}}."""
    out: dict[str, dict[str, Any]] = {}
    for tool in tools:
        if tool.name in meta:
            continue
        out[tool.name] = {
            "name": tool.name,
            "description": tool.description,
            "inputSchema": tool.input_schema,
        }
    return out


async def runtime_tools(toolbox: Path) -> dict[str, dict[str, Any]]:
    """The runtime's tools/list for a toolbox; an error there (one entry it cannot parse breaks
    the whole list) raises."""
    async with runtime_client(toolbox) as client:
        listed = await client.list_tools()
    return descriptors(listed.tools, set(RUNTIME_META))
