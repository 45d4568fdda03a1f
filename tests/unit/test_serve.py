"""The MCP server in process: the 2026-07-28 protocol path (the SDK client's default), its
subscriptions/listen change events, tool hints and index.json sync. (The handshake era, which MCP
hosts speak, runs over real stdio in test_serve_e2e.py.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from patch_tui.approvals.store import Store
from patch_tui.format.toolfile import parse
from patch_tui.mcp_server.serve import PatchServer, build_server, tool_annotations
from patch_tui.runtime.toolbox import Toolbox
from tests.runtimekit import MARK_BODY, MARK_INPUTS, tool_text, write_tool

ECHO = 'def main(text: str) -> dict:\n    return {"echo": text}'


@pytest.fixture
def state(tmp_path: Path) -> PatchServer:
    tools = tmp_path / "box" / "tools"
    write_tool(tools, "echo", ECHO, inputs=[{"name": "text"}])
    write_tool(tools, "mark", MARK_BODY, inputs=MARK_INPUTS, human_confirm=True)
    (tmp_path / "box" / "index.json").write_text('{"tools": [], "owner": "kept"}\n')
    store = Store(tmp_path / "store.sqlite3", actor="mcp")
    return PatchServer(Toolbox.open(tmp_path / "box"), store, timeout=20, allow_install=False)


def _hints(**caps: Any) -> dict[str, Any]:
    text = tool_text("t", "def main() -> dict:\n    return {}", **caps)
    manifest = parse(text).manifest
    assert manifest is not None
    return tool_annotations(manifest)


def test_hints_follow_capabilities() -> None:
    assert _hints() == {"read_only_hint": True, "destructive_hint": False, "open_world_hint": False}
    assert _hints(filesystem="read-only")["read_only_hint"] is True
    rw = _hints(filesystem="read-write")
    assert rw["destructive_hint"] is True and rw["read_only_hint"] is False
    hc = _hints(human_confirm=True)
    assert hc["destructive_hint"] is True and hc["read_only_hint"] is False
    net = _hints(network=True)
    assert net["open_world_hint"] is True and net["read_only_hint"] is False
    assert net["destructive_hint"] is False


def test_index_follows_the_files(state: PatchServer) -> None:
    index = json.loads((state.toolbox.root / "index.json").read_text())
    assert index["owner"] == "kept"  # keys we do not know survive
    # The runtime's shape: {name: entry}, each pointing at its file.
    assert [(k, t["version"]) for k, t in index.items() if k != "owner"] == [
        ("echo", "1.0.0"),
        ("mark", "1.0.0"),
    ]
    assert index["echo"]["filePath"] == str(state.toolbox.tools_dir / "echo.py")
    (state.toolbox.tools_dir / "mark.py").unlink()
    write_tool(state.toolbox.tools_dir, "echo", ECHO, inputs=[{"name": "text"}], version="1.1.0")
    assert state.rescan() is True
    index = json.loads((state.toolbox.root / "index.json").read_text())
    assert [(k, t["version"]) for k, t in index.items() if k != "owner"] == [("echo", "1.1.0")]
    assert state.rescan() is False  # nothing changed since


def test_broken_and_duplicate_files_are_left_out_with_one_log_line(
    state: PatchServer, capsys: pytest.CaptureFixture[str]
) -> None:
    tools = state.toolbox.tools_dir
    (tools / "broken.py").write_text("# ---\n# name: Bad Name\n# version: 1\n# ---\n")
    (tools / "zz_copy.py").write_text(tool_text("echo", ECHO, inputs=[{"name": "text"}]))
    (tools / "patch_confirm_action.py").write_text(
        tool_text("patch_confirm_action", "def main() -> dict:\n    return {}")
    )
    state.rescan()
    state.rescan()
    assert set(state.entries) == {"echo", "mark"}
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 3, err  # once per file, not once per scan
    assert any("broken.py" in line and "left out" in line for line in err)
    assert any("zz_copy.py" in line and "already in echo.py" in line for line in err)
    assert any("reserved" in line for line in err)


async def test_modern_protocol_calls_and_listen_events(state: PatchServer) -> None:
    from mcp import Client

    server = build_server(state)
    async with Client(server, cache=None) as client:  # mode "auto": the 2026-07-28 path
        names = {t.name for t in (await client.list_tools()).tools}
        assert {"echo", "mark", "patch_confirm_action"} <= names
        result = await client.call_tool("echo", {"text": "hi"})
        assert not result.is_error and result.structured_content == {"echo": "hi"}
        held = await client.call_tool("mark", {"marker": "/nonexistent/x", "text": "y"})
        assert held.structured_content["status"] == "confirmation_required"
        async with client.listen(tools_list_changed=True) as sub:
            write_tool(state.toolbox.tools_dir, "fresh", "def main() -> dict:\n    return {}")
            with anyio.fail_after(10):
                async for event in sub:
                    assert type(event).__name__ == "ToolsListChanged"
                    break
        assert "fresh" in {t.name for t in (await client.list_tools()).tools}
