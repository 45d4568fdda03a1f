"""`patch-tui guard` in front of the real Patch runtime (`local-runtime.js`: its own MCP server,
confirmations, audit, with a local sandbox), as a user's host config puts it: the mcp client ->
guard over stdio -> the runtime over stdio. A person decides through the store from this process.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from patch_tui.approvals.store import Store
from tests.interop_runtime.kit import _node, harness_dir
from tests.mcpkit import RUNTIME_META, decide_here, echo_and_mark, mcp_session
from tests.runtimekit import cli_env, runs_in

pytestmark = pytest.mark.slow


@pytest.fixture
def box(tmp_path: Path) -> dict[str, Any]:
    root = tmp_path / "patch-cat"
    tools = root / "tools"
    echo_and_mark(tools)
    made = _node("mkindex.js", str(root))  # index.json as the runtime writes it
    assert made.returncode == 0, made.stderr
    store = tmp_path / "store.sqlite3"
    env = cli_env(tmp_path, store)
    env.update(
        PATCH_CAT_TOOLBOX_DIR=str(root), ANTHROPIC_API_KEY="x", E2B_API_KEY="x", LOG_LEVEL="error"
    )
    env.pop("PATCH_TUI_TOOLBOX", None)
    return {
        "root": root,
        "tools": tools,
        "store": store,
        "env": env,
        "tmp": tmp_path,
        "marker": tmp_path / "marker.txt",
    }


def guarded(box: dict[str, Any]) -> Any:
    folder = harness_dir()
    assert folder is not None
    args = ["guard", "--", "node", str(folder / "local-runtime.js")]
    return mcp_session(args, box["env"], box["tmp"] / "guard.log")


def data(result: Any) -> Any:
    return json.loads(result.content[0].text)


def decide(box: dict[str, Any], token: str, reason: str | None = None) -> None:
    assert decide_here(box["store"], token, "reject" if reason else "approve", reason)


async def test_guard_in_front_of_the_runtime(box: dict[str, Any]) -> None:
    marker = box["marker"]
    async with guarded(box) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        assert names[:9] == RUNTIME_META  # the runtime's own listing, unchanged
        assert data(await client.call_tool("echo", {"text": "hi"})) == {"echo": "hi"}

        held = await client.call_tool("mark", {"marker": str(marker), "text": "one"})
        token = data(held)["confirmation_token"]
        assert "patch-tui inbox" in data(held)["instruction"] and runs_in(marker) == []
        with Store(box["store"]) as store:
            action = store.get(token)
        assert action.version == "1.0.0" and action.tool_path == str(box["tools"] / "mark.py")
        assert action.upstream_token and action.upstream_token not in held.content[0].text
        stolen = await client.call_tool(
            "patch_confirm_action", {"confirmation_token": action.upstream_token}
        )
        assert data(stolen)["status"] == "unknown_token" and runs_in(marker) == []
        decide(box, token)
        ran = await client.call_tool("patch_confirm_action", {"confirmation_token": token})
        assert not ran.is_error and data(ran) == {"written": "one"} and runs_in(marker) == ["one"]
        # Guard read the runtime's audit of that run: its source hash is the approved file's.
        with Store(box["store"]) as store:
            executed = [e for e in store.events(token) if e.event == "executed"][0]
        audit = json.loads((box["root"] / "runs" / f"{executed.detail['run_id']}.json").read_text())
        assert executed.detail["source_sha256"] == audit["tool"]["source_sha256"]
        again = await client.call_tool("patch_confirm_action", {"confirmation_token": token})
        assert data(again)["status"] == "already_used" and runs_in(marker) == ["one"]

        held = await client.call_tool("mark", {"marker": str(marker), "text": "two"})
        token = data(held)["confirmation_token"]
        decide(box, token, reason="not now")
        no = await client.call_tool("patch_confirm_action", {"confirmation_token": token})
        assert data(no)["status"] == "rejected" and data(no)["reason"] == "not now"

        held = await client.call_tool("mark", {"marker": str(marker), "text": "three"})
        token = data(held)["confirmation_token"]
        decide(box, token)
        tool = box["tools"] / "mark.py"
        tool.write_text(tool.read_text().replace('fh.write(text + "\\n")', 'fh.write("EVIL\\n")'))
        changed = await client.call_tool("patch_confirm_action", {"confirmation_token": token})
        assert data(changed)["status"] == "tool_changed"
    assert runs_in(marker) == ["one"]


async def test_an_approval_after_the_runtimes_60_seconds(box: dict[str, Any]) -> None:
    """The runtime forgets its token after 60 s; the person approves later; it runs once."""
    marker = box["marker"]
    async with guarded(box) as client:
        held = await client.call_tool("mark", {"marker": str(marker), "text": "late"})
        token = data(held)["confirmation_token"]
        await anyio.sleep(61)
        decide(box, token)
        ran = await client.call_tool("patch_confirm_action", {"confirmation_token": token})
        assert not ran.is_error, ran.content[0].text
        assert data(ran) == {"written": "late"} and runs_in(marker) == ["late"]
    assert "calling it again upstream" in (box["tmp"] / "guard.log").read_text()


TAINT = "a string the agent read from a tool's output"  # 16+ characters: the runtime tracks it


async def test_a_taint_approval_does_not_run_a_human_confirm_tool(box: dict[str, Any]) -> None:
    """The real runtime holds `mark` (human_confirm) for tainted input first, and confirming
    that token skips its human_confirm gate. Through guard, the taint approval opens a second
    inbox item; only its approval runs the call, once."""
    marker = box["marker"]
    async with guarded(box) as client:
        assert data(await client.call_tool("echo", {"text": TAINT})) == {"echo": TAINT}
        held = data(await client.call_tool("mark", {"marker": str(marker), "text": TAINT}))
        assert held["kind"] == "tainted_input", held
        assert held["tainted_inputs"] == [{"inputName": "text", "matchedTools": ["echo"]}]
        decide(box, held["confirmation_token"])
        answer = await client.call_tool(
            "patch_confirm_action", {"confirmation_token": held["confirmation_token"]}
        )
        second = data(answer)
        assert second["status"] == "confirmation_required" and second["kind"] == "human_confirm"
        assert runs_in(marker) == []
        decide(box, second["confirmation_token"])
        ran = await client.call_tool(
            "patch_confirm_action", {"confirmation_token": second["confirmation_token"]}
        )
        assert not ran.is_error, ran.content[0].text
        assert data(ran) == {"written": TAINT} and runs_in(marker) == [TAINT]
