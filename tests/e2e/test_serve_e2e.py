"""End to end: the mcp SDK's own client over stdio against `patch-tui serve` in a subprocess,
with approvals made by the real CLI in other processes, as a person would."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.mcpkit import TAINTED, decide_here, serve_box, serve_session
from tests.runtimekit import approve_argv, cli, runs_in, write_tool

pytestmark = pytest.mark.slow


@pytest.fixture
def box(tmp_path: Path) -> dict[str, Any]:
    return serve_box(tmp_path)


connect = serve_session


def data(result: Any) -> Any:
    return result.structured_content


def approve(box: dict[str, Any], token: str, *extra: str):
    """The person approves with the real CLI, in another process."""
    return cli(box["env"], *approve_argv(box["env"], token, *extra))


def approve_here(box: dict[str, Any], token: str) -> bool:
    """The same decision through the store API from this (test) process, which is also not the
    server's: cheaper than a CLI start where the CLI itself is not what is being shown."""
    return decide_here(box["store"], token)


async def test_list_call_expiry_and_list_changed(box: dict[str, Any]) -> None:
    """One server (a server start costs seconds): listing, plain calls, expiry, live reload."""
    marker = box["marker"]
    messages: list[Any] = []
    async with connect(box, extra_env={"PATCH_TUI_CONFIRM_TTL": "1"}, messages=messages) as client:
        listed = await client.list_tools()
        by_name = {t.name: t for t in listed.tools}
        assert set(by_name) == {
            "patch_confirm_action",
            "patch_list_tools",
            "patch_list_runs",
            "patch_generate_tool",
            "patch_run_tool",
            "patch_auth_register",
            "patch_auth_status",
            "patch_replay",
            "patch_compose",
            "echo",
            "mark",
            "leak",
            "sink",
            "sink_ok",
            "danger",
        }  # the broken file is left out, and the list still works
        echo, mark, leak = by_name["echo"], by_name["mark"], by_name["leak"]
        # The runtime's manifestToInputSchema, exactly.
        assert echo.input_schema == {
            "type": "object",
            "properties": {"text": {"type": "string", "description": "The text."}},
            "required": ["text"],
            "additionalProperties": False,
        }
        assert (
            echo.annotations.read_only_hint is True and echo.annotations.destructive_hint is False
        )
        assert (
            mark.annotations.destructive_hint is True and mark.annotations.read_only_hint is False
        )
        assert leak.annotations.open_world_hint is True and leak.annotations.read_only_hint is False
        result = await client.call_tool("echo", {"text": "hello"})
        assert not result.is_error and data(result) == {"echo": "hello"}
        assert json.loads(result.content[0].text) == {"echo": "hello"}
        bad = await client.call_tool("echo", {"nope": 1})
        assert bad.is_error and "no input 'nope'" in data(bad)["message"]
        assert data(bad)["error"] == "PatchError"
        unknown = await client.call_tool("missing_tool", {})
        assert unknown.is_error and data(unknown) == {
            "error": "ToolNotFoundError",
            "message": 'Tool "missing_tool" not found in toolbox.',
        }
        runs = await client.call_tool("patch_list_runs", {"limit": 5})
        assert [r["tool"] for r in data(runs)["result"]] == ["echo"]
        tools = await client.call_tool("patch_list_tools", {})
        assert {t["name"] for t in data(tools)["result"]} == {
            "echo",
            "mark",
            "leak",
            "sink",
            "sink_ok",
            "danger",
        }

        # Expiry (TTL 1 s here): a late approval is refused, and confirm says expired.
        held = await client.call_tool("mark", {"marker": str(marker), "text": "late"})
        token = data(held)["confirmation_token"]
        await anyio.sleep(1.2)
        late = approve(box, token)
        assert late.returncode == 1 and "expired" in late.stderr
        answer = await client.call_tool("patch_confirm_action", {"confirmation_token": token})
        assert answer.is_error and data(answer)["status"] == "expired"
        assert runs_in(marker) == []

        # A new tool file: the host hears notifications/tools/list_changed and sees the tool.
        messages.clear()
        write_tool(box["tools"], "fresh", "def main() -> dict:\n    return {}")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not messages:
            await anyio.sleep(0.1)
        methods = [getattr(m, "method", None) for m in messages]
        assert "notifications/tools/list_changed" in methods
        assert "fresh" in {t.name for t in (await client.list_tools()).tools}
    log = (box["tmp"] / "serve.log").read_text()
    assert "broken.py" in log and "left out" in log
    index = json.loads((box["root"] / "index.json").read_text())
    assert set(index) == {
        "echo",
        "mark",
        "leak",
        "sink",
        "sink_ok",
        "danger",
        "fresh",
    }


async def test_timeout_and_no_install_options(box: dict[str, Any]) -> None:
    write_tool(
        box["tools"],
        "slow",
        "import time\n\ndef main() -> dict:\n    time.sleep(30)\n    return {}",
    )
    write_tool(
        box["tools"],
        "needs_pkg",
        "def main() -> dict:\n    return {}",
        packages=["requests==2.32.3"],
    )
    async with connect(box, options=("--timeout", "1.5", "--no-install")) as client:
        started = time.monotonic()
        slow = await client.call_tool("slow", {})
        assert slow.is_error and time.monotonic() - started < 15
        assert data(slow)["error"] == "ToolOutputError"  # the runtime's error shape
        assert "ran longer than 1.5 s and was stopped" in data(slow)["message"]
        refused = await client.call_tool("needs_pkg", {})
        assert refused.is_error and "installing was refused" in json.dumps(data(refused))
    bad = cli(box["env"], "serve", "--timeout", "0")
    assert bad.returncode == 2 and "--timeout must be a positive number" in bad.stderr


async def test_held_calls_run_once_only_after_approval(box: dict[str, Any]) -> None:
    marker = box["marker"]
    async with connect(box) as client:
        held = await client.call_tool("mark", {"marker": str(marker), "text": "first"})
        payload = data(held)
        assert not held.is_error and payload["status"] == "confirmation_required"
        assert payload["kind"] == "human_confirm" and payload["tool"] == "mark"
        assert set(payload) >= {
            "confirmation_token",
            "args_summary",
            "reason",
            "expires_at",
            "instruction",
        }
        token = payload["confirmation_token"]
        assert runs_in(marker) == []
        early = await client.call_tool("patch_confirm_action", {"confirmation_token": token})
        assert data(early)["status"] == "awaiting_approval" and runs_in(marker) == []
        listed = json.loads(cli(box["env"], "inbox", "list", "--json").stdout)
        assert [a["token"] for a in listed] == [token]
        assert listed[0]["args"] == {"marker": str(marker), "text": "first"}
        approved = approve(box, token, "--note", "fine")
        assert approved.returncode == 0, approved.stderr
        assert approve(box, token).returncode == 1  # already decided: no second decision
        ran = await client.call_tool("patch_confirm_action", {"confirmation_token": token})
        assert not ran.is_error and data(ran) == {"written": "first"}
        again = await client.call_tool("patch_confirm_action", {"confirmation_token": token})
        assert again.is_error and data(again)["status"] == "already_used"
        assert runs_in(marker) == ["first"]
        # Rejected: never runs, and the host hears the person's reason.
        held2 = await client.call_tool("mark", {"marker": str(marker), "text": "second"})
        token2 = data(held2)["confirmation_token"]
        rejected = cli(box["env"], "inbox", "reject", token2, "--reason", "wrong file")
        assert rejected.returncode == 0, rejected.stderr
        answer = await client.call_tool("patch_confirm_action", {"confirmation_token": token2})
        assert answer.is_error and data(answer)["status"] == "rejected"
        assert data(answer)["reason"] == "wrong file"
        unknown = await client.call_tool("patch_confirm_action", {"confirmation_token": "nope"})
        assert data(unknown)["status"] == "unknown_token"
        statuses = json.loads(cli(box["env"], "inbox", "list", "--all", "--json").stdout)
        assert {a["status"] for a in statuses} == {"executed", "rejected"}
        await _tool_edited_after_approval_is_refused(client, box)
        await _taint_path_and_separate_gates(client, box)


async def _tool_edited_after_approval_is_refused(client: Any, box: dict[str, Any]) -> None:
    marker = box["tmp"] / "ws" / "edited.txt"
    held = await client.call_tool("mark", {"marker": str(marker), "text": "x"})
    token = data(held)["confirmation_token"]
    assert approve_here(box, token)
    tool = box["tools"] / "mark.py"
    tool.write_text(tool.read_text().replace('fh.write(text + "\\n")', 'fh.write("EVIL\\n")'))
    refused = await client.call_tool("patch_confirm_action", {"confirmation_token": token})
    assert refused.is_error and data(refused)["status"] == "tool_changed"
    assert runs_in(marker) == []
    from patch_tui.approvals.store import Store

    with Store(box["store"]) as store:
        assert store.get(token).status == "failed"


async def _taint_path_and_separate_gates(client: Any, box: dict[str, Any]) -> None:
    marker = box["tmp"] / "ws" / "taint.txt"
    leaked = await client.call_tool("leak", {})
    assert "mallory" in data(leaked)["result"]
    # An input without tainted_ok receiving it: held, naming the source tool and the input.
    held = await client.call_tool("sink", {"marker": str(marker), "text": TAINTED})
    payload = data(held)
    assert payload["status"] == "confirmation_required" and payload["kind"] == "tainted_input"
    # The runtime's fields, and ours beside them: which output matched, and when.
    taint = payload["tainted_inputs"]
    assert [{k: t[k] for k in ("inputName", "matchedTools")} for t in taint] == [
        {"inputName": "text", "matchedTools": ["leak"]}
    ]
    assert [o["tool"] for o in taint[0]["matchedOutputs"]] == ["leak"]
    assert "leak" in payload["reason"]
    # tainted_ok inputs and short strings pass.
    ok = await client.call_tool("sink_ok", {"marker": str(marker), "text": TAINTED})
    assert not ok.is_error and runs_in(marker) == [TAINTED]
    assert approve_here(box, payload["confirmation_token"])
    ran = await client.call_tool(
        "patch_confirm_action", {"confirmation_token": payload["confirmation_token"]}
    )
    assert not ran.is_error and runs_in(marker) == [TAINTED, TAINTED]
    # Tainted and human_confirm: approving the taint never skips the human_confirm gate.
    held = await client.call_tool("danger", {"marker": str(marker), "text": TAINTED})
    taint_token = data(held)["confirmation_token"]
    assert data(held)["kind"] == "tainted_input"
    assert approve_here(box, taint_token)
    nxt = await client.call_tool("patch_confirm_action", {"confirmation_token": taint_token})
    assert data(nxt)["status"] == "confirmation_required" and data(nxt)["kind"] == "human_confirm"
    assert runs_in(marker) == [TAINTED, TAINTED]  # still not run
    hc_token = data(nxt)["confirmation_token"]
    assert hc_token != taint_token
    assert approve_here(box, hc_token)
    final = await client.call_tool("patch_confirm_action", {"confirmation_token": hc_token})
    assert not final.is_error
    assert runs_in(marker) == [TAINTED, TAINTED, TAINTED]


async def test_confirm_action_refuses_forged_and_altered_approvals(box: dict[str, Any]) -> None:
    # Issue 11: what a tool (or anything) writing SQL into the store can do must not run a call.
    import sqlite3

    from patch_tui.approvals.store import args_sha256

    marker = box["marker"]
    async with connect(box) as client:
        forged = data(await client.call_tool("mark", {"marker": str(marker), "text": "forged"}))
        with sqlite3.connect(box["store"]) as db:
            db.execute(
                "UPDATE actions SET status = 'approved' WHERE token = ?",
                (forged["confirmation_token"],),
            )
        answer = await client.call_tool(
            "patch_confirm_action", {"confirmation_token": forged["confirmation_token"]}
        )
        assert answer.is_error and data(answer)["status"] == "tampered"
        altered = data(await client.call_tool("mark", {"marker": str(marker), "text": "fine"}))
        token = altered["confirmation_token"]
        assert approve(box, token).returncode == 0
        evil = {"marker": str(marker), "text": "evil"}
        with sqlite3.connect(box["store"]) as db:
            db.execute(
                "UPDATE actions SET args_json = ?, args_sha256 = ? WHERE token = ?",
                (json.dumps(evil), args_sha256(evil), token),
            )
        answer = await client.call_tool("patch_confirm_action", {"confirmation_token": token})
        assert answer.is_error and data(answer)["status"] == "args_changed"
    assert runs_in(marker) == []
    listed = json.loads(cli(box["env"], "inbox", "list", "--all", "--json").stdout)
    assert {(a["status"], bool(a["tampered"])) for a in listed} == {("failed", True)}
