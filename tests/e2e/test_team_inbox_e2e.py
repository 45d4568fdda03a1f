"""The team inbox end to end: one PostgreSQL database (tests/pgkit.py), `serve` and `guard` on
one machine (HOME A), two approvers on two laptops (HOME B and C, each their own key), all real
processes: a held call waiting for a quorum of two, a reject, a claim, a grant made by B used by
A's serve, 50 concurrent approvers and 20 concurrent confirmers of one token (exactly once), and
the database restarting while a `patch_confirm_action` waits."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from patch_tui.approvals.open_store import open_store
from patch_tui.settings.store_location import DatabaseURL
from tests.mcpkit import FAKE_RUNTIME, mcp_session
from tests.runtimekit import MARK_BODY, MARK_INPUTS, runs_in, write_tool

pytestmark = pytest.mark.slow

PATCH_TUI = [sys.executable, "-m", "patch_tui"]


def _home(tmp: Path, name: str, url: str, approvers: Path) -> dict[str, str]:
    """A person's (or a machine's) environment: its own HOME, folders, key and user name, the
    shared database and approvers file."""
    home = tmp / name
    for sub in ("config", "state", "cache", "ws"):
        (home / sub).mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PATCH_TUI_", "XDG_"))}
    env.update(
        HOME=str(home),
        USER=name,
        LOGNAME=name,
        XDG_CONFIG_HOME=str(home / "config"),
        XDG_STATE_HOME=str(home / "state"),
        XDG_CACHE_HOME=str(home / "cache"),
        PATCH_TUI_CONFIG=str(home / "config" / "config.toml"),
        PATCH_TUI_STORE=url,
        PATCH_TUI_APPROVERS_FILE=str(approvers),
        PATCH_TUI_APPROVER_KEY=str(home / "config" / "approver_ed25519"),
        PATCH_TUI_SERVE_WORKSPACE=str(home / "ws"),
        PATCH_TUI_CONFIRM_WAIT="0",
    )
    return env


def _key(env: dict[str, str], name: str) -> str:
    """The person's key (created in their HOME), its public line for the approvers file."""
    from patch_tui.approvals.keys import create_key_file

    return create_key_file(Path(env["PATCH_TUI_APPROVER_KEY"]), f"{name}@laptop").public_line


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*PATCH_TUI, *args], env=env, capture_output=True, text=True, timeout=120)


async def _acli(env: dict[str, str], *args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        *PATCH_TUI,
        *args,
        env=env,
        cwd=env["PATCH_TUI_SERVE_WORKSPACE"],  # `confirm` runs a tool in the folder it is run from
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 180)
    return proc.returncode or 0, out.decode(), err.decode()


def _approve(env: dict[str, str], token: str, sha: str) -> subprocess.CompletedProcess[str]:
    return _cli(env, "inbox", "approve", token, "--yes", "--args-sha256", sha)


def _answer(result: Any) -> dict[str, Any]:
    return result.structured_content or json.loads(result.content[0].text)


@pytest.fixture
def team(tmp_path: Path, own_pg: Any) -> dict[str, Any]:
    url = own_pg.create_database()
    approvers = tmp_path / "approvers.toml"
    a = _home(tmp_path, "agent", url, approvers)
    b = _home(tmp_path, "bob", url, approvers)
    c = _home(tmp_path, "carol", url, approvers)
    approvers.write_text(
        "[[approver]]\n"
        'name = "bob"\n'
        f'key = "{_key(b, "bob")}"\n'
        "grants = true\n"
        "[[approver]]\n"
        'name = "carol"\n'
        f'key = "{_key(c, "carol")}"\n'
        "[[rule]]\n"
        'tools = ["mark"]\n'
        "require = 2\n"
    )
    box = tmp_path / "agent" / "box"
    write_tool(
        box / "tools",
        "mark",
        MARK_BODY,
        inputs=MARK_INPUTS,
        human_confirm=True,
        filesystem="read-write",
    )
    write_tool(
        box / "tools",
        "note",
        MARK_BODY,
        inputs=MARK_INPUTS,
        human_confirm=True,
        filesystem="read-write",
    )
    a["PATCH_TUI_TOOLBOX"] = str(box)
    return {
        "server": own_pg,
        "url": url,
        "a": a,
        "b": b,
        "c": c,
        "marker": tmp_path / "agent" / "ws" / "marker.txt",
        "errlog": tmp_path / "serve.log",
    }


async def test_one_queue_for_an_agent_machine_and_two_laptops(team: dict[str, Any]) -> None:
    url, a, b, c, marker = team["url"], team["a"], team["b"], team["c"], team["marker"]
    store = open_store(DatabaseURL(url), actor="test@observer")

    def sha(token: str) -> str:
        found = store.get(token)
        assert found is not None
        return found.args_sha256

    async with mcp_session(["serve"], a, team["errlog"]) as client:
        # -- a held call waits for two approvers ----------------------------------------------
        held = _answer(await client.call_tool("mark", {"marker": str(marker), "text": "two"}))
        assert held["status"] == "confirmation_required", held
        token = held["confirmation_token"]
        first = _approve(b, token, sha(token))
        assert store.get(token).status == "pending", first.stderr
        assert [s.approver for s in store.decisions(token)] == ["bob"]
        waiting = _answer(
            await client.call_tool("patch_confirm_action", {"confirmation_token": token})
        )
        assert waiting["status"] == "awaiting_approval" and runs_in(marker) == []
        assert _approve(b, token, sha(token)).returncode != 0  # bob twice counts once
        second = _approve(c, token, sha(token))
        assert second.returncode == 0, second.stderr
        ran = _answer(await client.call_tool("patch_confirm_action", {"confirmation_token": token}))
        assert runs_in(marker) == ["two"], ran
        decided_by = store.get(token).decided_by or ""
        assert "carol" in decided_by

        # -- a reject ----------------------------------------------------------------------------
        held = _answer(await client.call_tool("mark", {"marker": str(marker), "text": "no"}))
        token = held["confirmation_token"]
        rejected = _cli(c, "inbox", "reject", token, "--reason", "not today")
        assert rejected.returncode == 0, rejected.stderr
        answer = _answer(
            await client.call_tool("patch_confirm_action", {"confirmation_token": token})
        )
        assert answer["status"] == "rejected" and "not today" in json.dumps(answer)
        assert runs_in(marker) == ["two"]

        # -- a claim: bob reads it, carol sees so -------------------------------------------------
        held = _answer(await client.call_tool("note", {"marker": str(marker), "text": "claim"}))
        token = held["confirmation_token"]
        assert _cli(b, "inbox", "claim", token).returncode == 0
        taken = _cli(c, "inbox", "claim", token)
        assert taken.returncode == 1 and "bob@cli is reading it" in taken.stderr
        listed = json.loads(_cli(c, "inbox", "list", "--json").stdout)
        assert {r["token"]: r.get("reading", {}).get("by") for r in listed}[token] == "bob@cli"

        # -- a grant made by bob, used by the agent machine's serve ------------------------------
        made = _cli(
            b,
            "inbox",
            "allow",
            str(Path(a["PATCH_TUI_TOOLBOX"]) / "tools" / "note.py"),
            "--where",
            "text=granted-*",
            "--for",
            "1h",
        )
        assert made.returncode == 0, made.stderr
        by_grant = _answer(
            await client.call_tool("note", {"marker": str(marker), "text": "granted-1"})
        )
        assert runs_in(marker)[-1] == "granted-1", by_grant

    # -- 50 concurrent approvers, 20 concurrent confirmers of one token: exactly once ------------
    async with mcp_session(["serve"], a, team["errlog"]) as client:
        held = _answer(await client.call_tool("note", {"marker": str(marker), "text": "once"}))
        token = held["confirmation_token"]
    digest = sha(token)
    approvals = await asyncio.gather(
        *(
            _acli(b if i % 2 else c, "inbox", "approve", token, "--yes", "--args-sha256", digest)
            for i in range(50)
        )
    )
    assert sum(1 for code, _, _ in approvals if code == 0) == 1, approvals
    assert [e.event for e in store.events(token)].count("approved") == 1
    confirms = await asyncio.gather(*(_acli(a, "confirm", token) for _ in range(20)))
    ran_it = [c for c in confirms if "already_used" not in c[1]]
    assert len(ran_it) == 1 and ran_it[0][0] == 0, ran_it
    assert runs_in(marker).count("once") == 1
    store.close()


async def test_a_waiting_confirm_survives_the_database_restarting(team: dict[str, Any]) -> None:
    url, a, b, c, marker = team["url"], team["a"], team["b"], team["c"], team["marker"]
    a = {**a, "PATCH_TUI_CONFIRM_WAIT": "90"}
    async with mcp_session(["serve"], a, team["errlog"]) as client:
        held = _answer(await client.call_tool("mark", {"marker": str(marker), "text": "later"}))
        token = held["confirmation_token"]
        with open_store(DatabaseURL(url)) as store:
            digest = store.get(token).args_sha256

        async def decide_after_a_restart() -> None:
            await asyncio.sleep(1.0)  # the confirm below is waiting by now
            team["server"].kill()
            await asyncio.sleep(1.0)
            team["server"].start()
            for who in (b, c):
                code, _, err = await _acli(
                    who, "inbox", "approve", token, "--yes", "--args-sha256", digest
                )
                assert code == 0 or who is b, err

        decider = asyncio.create_task(decide_after_a_restart())
        ran = _answer(await client.call_tool("patch_confirm_action", {"confirmation_token": token}))
        await decider
        assert runs_in(marker) == ["later"], ran


async def test_guard_holds_upstream_calls_for_the_same_team(team: dict[str, Any]) -> None:
    """guard on the agent machine, in front of an upstream server (the Patch runtime's protocol,
    tests/fake_runtime.py) holding a human_confirm call, on the same database: the call waits
    for the team's quorum like serve's, then runs upstream once."""
    a, b, c, marker = team["a"], team["b"], team["c"], team["marker"]
    box = Path(a["PATCH_TUI_TOOLBOX"])
    (box / "index.json").write_text("{}\n")
    env = {**a, "PATCH_CAT_TOOLBOX_DIR": str(box), "FAKE_LOG": str(box.parent / "upstream.jsonl")}
    env.pop("PATCH_TUI_TOOLBOX")
    async with mcp_session(
        ["guard", "--", sys.executable, FAKE_RUNTIME],
        env,
        team["errlog"],
        cwd=a["PATCH_TUI_SERVE_WORKSPACE"],
    ) as client:
        held = _answer(await client.call_tool("mark", {"marker": str(marker), "text": "guarded"}))
        assert held["status"] == "confirmation_required", held
        token = held["confirmation_token"]
        with open_store(DatabaseURL(team["url"])) as store:
            digest = store.get(token).args_sha256
        _approve(b, token, digest)
        early = _answer(
            await client.call_tool("patch_confirm_action", {"confirmation_token": token})
        )
        assert early["status"] == "awaiting_approval" and runs_in(marker) == []
        assert _approve(c, token, digest).returncode == 0
        await client.call_tool("patch_confirm_action", {"confirmation_token": token})
        assert runs_in(marker) == ["guarded"]
