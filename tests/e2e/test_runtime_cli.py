"""`patch-tui run / confirm / inbox` from the shell: exit codes, races between processes, crashes
mid-run, and clear messages for every broken store."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from patch_tui.approvals import decisions
from patch_tui.approvals.store import Store
from tests.runtimekit import (
    MARK_BODY,
    MARK_INPUTS,
    PATCH_TUI,
    approve_argv,
    cli,
    cli_env,
    runs_in,
    write_tool,
)

pytestmark = pytest.mark.slow


@pytest.fixture
def env(tmp_path: Path) -> dict[str, Any]:
    tools = tmp_path / "box" / "tools"
    write_tool(
        tools,
        "echo",
        'def main(text: str) -> dict:\n    return {"echo": text}',
        inputs=[{"name": "text"}],
    )
    write_tool(tools, "fails", 'def main() -> dict:\n    raise RuntimeError("disk on fire")')
    write_tool(
        tools, "mark", MARK_BODY, inputs=MARK_INPUTS, human_confirm=True, filesystem="read-write"
    )
    slow = MARK_BODY.replace("    return", "    import time\n    time.sleep(30)\n    return")
    write_tool(
        tools, "slow_mark", slow, inputs=MARK_INPUTS, human_confirm=True, filesystem="read-write"
    )
    store = tmp_path / "store.sqlite3"
    return {
        "env": cli_env(tmp_path, store, tmp_path / "box"),
        "store": store,
        "tmp": tmp_path,
        "tools": tools,
        "marker": tmp_path / "ws" / "marker.txt",  # in the workspace (cli_env): writable
    }


@pytest.fixture
def here(env: dict[str, Any], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    """The CLI in this process (same code path, no interpreter start): for exit codes and
    messages. Races, crashes and locks use real processes (`cli`)."""
    from patch_tui.cli import main

    for key in ("PATCH_TUI_CONFIG", "PATCH_TUI_STORE", "PATCH_TUI_TOOLBOX", "XDG_CACHE_HOME"):
        monkeypatch.setenv(key, env["env"][key])
    monkeypatch.chdir(env["tmp"] / "ws")  # run and confirm write in the folder they start from

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        capsys.readouterr()
        rc = main(list(args))
        out, err = capsys.readouterr()
        return subprocess.CompletedProcess(list(args), rc, out, err)

    return run


def _hold(env: dict[str, Any], tool: str = "mark", text: str = "once") -> str:
    r = cli(
        env["env"], "run", tool, "--args", json.dumps({"marker": str(env["marker"]), "text": text})
    )
    assert r.returncode == 3, r.stderr
    payload = json.loads(r.stdout)
    assert payload["status"] == "confirmation_required"
    return payload["confirmation_token"]


def test_run_exit_codes(env: dict[str, Any], here: Any) -> None:
    ok = here("run", "echo", "--args", '{"text": "hi"}')
    assert ok.returncode == 0 and json.loads(ok.stdout) == {"echo": "hi"}
    by_path = here("run", str(env["tools"] / "echo.py"), "--args", '{"text": "p"}')
    assert by_path.returncode == 0 and json.loads(by_path.stdout) == {"echo": "p"}
    failed = here("run", "fails")
    assert failed.returncode == 1 and "disk on fire" in failed.stderr and failed.stdout == ""
    for bad_args, message in [
        (["run", "echo", "--args", "{oops"], "--args is not valid JSON"),
        (["run", "echo", "--args", "[1]"], "must be a JSON object"),
        (["run", "no_such_tool"], "no tool named 'no_such_tool'"),
        (["run", "echo", "--args", '{"txt": 1}'], "no input 'txt'"),
        (["run", "echo"], "needs the input 'text'"),
    ]:
        r = here(*bad_args)
        assert r.returncode == 2 and message in r.stderr, (bad_args, r.stderr)
        assert "Traceback" not in r.stderr
    held = here("run", "mark", "--args", json.dumps({"marker": str(env["marker"]), "text": "x"}))
    assert held.returncode == 3 and json.loads(held.stdout)["status"] == "confirmation_required"
    token = json.loads(held.stdout)["confirmation_token"]
    # stderr is for the person at the shell: what they do (an agent reads the JSON's instruction).
    assert f"`patch-tui inbox approve {token}`" in held.stderr
    assert f"`patch-tui confirm {token}`" in held.stderr
    assert "patch_confirm_action" not in held.stderr
    assert runs_in(env["marker"]) == []
    assert json.loads(here("inbox", "list", "--json").stdout)[0]["token"] == token


def test_confirm_exit_codes(env: dict[str, Any], here: Any) -> None:
    token = _hold(env)
    early = here("confirm", token)
    assert early.returncode == 1 and json.loads(early.stdout)["status"] == "awaiting_approval"
    assert "awaiting_approval" in early.stderr
    assert (
        "patch_confirm_action" not in early.stderr
        and f"`patch-tui confirm {token}` again" in early.stderr
    )
    text = here("inbox", "list")
    assert text.returncode == 0 and token in text.stdout and "mark" in text.stdout
    assert here(*approve_argv(env["env"], token)).returncode == 0
    ran = here("confirm", token)
    assert ran.returncode == 0 and json.loads(ran.stdout) == {"written": "once"}
    second = here("confirm", token)
    assert second.returncode == 1 and json.loads(second.stdout)["status"] == "already_used"
    assert runs_in(env["marker"]) == ["once"]
    unknown = here("confirm", "not-a-token")
    assert unknown.returncode == 1 and json.loads(unknown.stdout)["status"] == "unknown_token"
    nope = here("inbox", "reject", "not-a-token")
    assert nope.returncode == 1 and "unknown token" in nope.stderr


def test_token_with_a_leading_dash_is_accepted(env: dict[str, Any], here: Any) -> None:
    # New tokens never start with "-", but a store may hold one (written before that rule):
    # approve, confirm and reject must still take it as the token, not as an option.
    for prefix in ("-", "--"):  # "--" too: base64url has "-" in every position
        token = _hold(env, text=prefix)
        dashed = prefix + token[len(prefix) :]
        with sqlite3.connect(env["store"]) as db:
            db.execute("UPDATE actions SET token = ? WHERE token = ?", (dashed, token))
        approved = here(*approve_argv(env["env"], dashed, "--note", "looked it over"))
        assert approved.returncode == 0, approved.stderr
        ran = here("confirm", dashed)
        assert ran.returncode == 0 and json.loads(ran.stdout) == {"written": prefix}
        assert here("inbox", "reject", dashed, "--reason", "late").returncode == 1  # decided


def _at_once(env: dict[str, Any], *args: str, n: int = 8) -> list[subprocess.CompletedProcess[str]]:
    """n processes started together; each one's outcome."""
    procs = [
        subprocess.Popen(
            [*PATCH_TUI, *args],
            env=env["env"],
            cwd=env["tmp"] / "ws",
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(n)
    ]
    out = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=120)
        out.append(subprocess.CompletedProcess(p.args, p.returncode, stdout, stderr))
    return out


def test_eight_confirmers_one_run(env: dict[str, Any]) -> None:
    # (Eight approvers racing on one token: tests/unit/test_store.py, with lighter processes.)
    token = _hold(env)
    with Store(env["store"], actor="person@test") as store:
        assert decisions.approve(store, token).ok
    confirms = _at_once(env, "confirm", token)
    assert sorted(r.returncode for r in confirms) == [0] + [1] * 7
    assert all(json.loads(r.stdout)["status"] == "already_used" for r in confirms if r.returncode)
    assert runs_in(env["marker"]) == ["once"]  # the tool ran exactly once
    with Store(env["store"]) as store:
        events = [e.event for e in store.events(token)]
    assert events == ["created", "approved", "claimed", "executed"]


def test_kill_9_between_claim_and_finish_is_interrupted_never_rerun(env: dict[str, Any]) -> None:
    token = _hold(env, "slow_mark", "half")
    with Store(env["store"], actor="person@test") as store:
        assert decisions.approve(store, token).ok
    proc = subprocess.Popen(
        [*PATCH_TUI, "confirm", token],
        env=env["env"],
        cwd=env["tmp"] / "ws",
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 30
    while not runs_in(env["marker"]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert runs_in(env["marker"]) == ["half"]  # the tool started: the action is claimed
    with Store(env["store"]) as store:
        assert store.get(token).status == "executing"
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=30)
    listed = json.loads(cli(env["env"], "inbox", "list", "--all", "--json").stdout)
    assert [(a["token"], a["status"]) for a in listed] == [(token, "interrupted")]
    again = cli(env["env"], "confirm", token)
    assert again.returncode == 1 and json.loads(again.stdout)["status"] == "already_used"
    assert "interrupted" in again.stderr
    time.sleep(0.5)
    assert runs_in(env["marker"]) == ["half"]  # never re-run


def test_broken_stores_give_one_clear_line(env: dict[str, Any], here: Any) -> None:
    junk = env["tmp"] / "junk.sqlite3"
    junk.write_bytes(b"definitely not a database" * 50)
    folder = env["tmp"] / "a-file"
    folder.write_text("x")
    cases = [
        (junk, ["inbox", "list"], "damaged"),
        (junk, ["inbox", "approve", "tok"], "damaged"),
        (junk, ["confirm", "tok"], "damaged"),
        (junk, ["run", "echo", "--args", '{"text": "x"}'], "damaged"),
        (folder / "store.sqlite3", ["inbox", "list"], "cannot create the store's folder"),
        (env["tmp"], ["inbox", "list"], "is a folder"),
    ]
    for store, args, expected in cases:
        r = here("--store", str(store), *args)
        assert r.returncode == 1, (args, r.stderr)
        assert expected in r.stderr and "Traceback" not in r.stderr
        assert len(r.stderr.strip().splitlines()) == 1
    assert junk.read_bytes() == b"definitely not a database" * 50  # never "repaired" away


def test_a_briefly_locked_store_waits_then_decides(env: dict[str, Any]) -> None:
    # (A lock held past the busy timeout gives "busy": tests/unit/test_store.py.)
    token = _hold(env)
    argv = approve_argv(env["env"], token)
    holder = sqlite3.connect(env["store"], isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    proc = subprocess.Popen(
        [*PATCH_TUI, *argv],
        env=env["env"],
        cwd=env["tmp"] / "ws",
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(1.0)
    holder.execute("ROLLBACK")
    holder.close()
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    with Store(env["store"]) as store:
        assert store.get(token).status == "approved"


def test_runtime_commands_never_import_textual(env: dict[str, Any]) -> None:
    code = (
        "import sys\n"
        "from patch_tui.cli import main\n"
        "from patch_tui.mcp_server.serve import PatchServer, build_server\n"
        "from patch_tui.approvals.store import Store\n"
        "from patch_tui.runtime.toolbox import Toolbox\n"
        f"rc = main(['run', 'echo', '--args', '{{\"text\": \"x\"}}'])\n"
        f"state = PatchServer(Toolbox.open({str(env['tools'])!r}), Store({str(env['store'])!r}),"
        " timeout=5, allow_install=False)\n"
        "build_server(state, watch=False)\n"
        "print(rc, 'textual' in sys.modules, 'anthropic' in sys.modules)\n"
    )
    r = subprocess.run(
        [PATCH_TUI[0], "-c", code], env=env["env"], capture_output=True, text=True, timeout=60
    )
    assert r.stdout.strip().splitlines()[-1] == "0 False False", r.stderr


def test_inbox_text_shows_hidden_characters_never_obeys_them(
    env: dict[str, Any], here: Any
) -> None:
    with Store(env["store"]) as store:
        action = store.create_pending(
            "human_confirm",
            "mark",
            "1.0.0",
            "0" * 64,
            {"to": "bob@example.com\u202egro.live"},
            "irreversible",
        )
        decisions.reject(store, action.token, reason="no \x1b[2J thanks")
    out = here("inbox", "list", "--all").stdout
    assert "\x1b" not in out and "\u202e" not in out
    assert "⟦U+202E⟧" in out and "⟦U+001B⟧[2J" in out
    # The JSON form keeps the args exactly as received (JSON escapes are not terminal codes).
    raw = here("inbox", "list", "--all", "--json").stdout
    assert raw.isascii()
    assert json.loads(raw)[0]["args"] == {"to": "bob@example.com\u202egro.live"}
