"""`patch-tui inbox claim` and `inbox list` on either store (a file, or a postgresql:// URL):
the real CLI in a subprocess, two people's identities on one store."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest
from storekit import pending

from patch_tui.approvals.open_store import open_store

pytestmark = pytest.mark.slow


def _cli(location: Any, user: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATCH_TUI_STORE": getattr(location, "secret_url", str(location))}
    env["USER"] = env["LOGNAME"] = user  # getpass: who the CLI acts as
    return subprocess.run(
        [sys.executable, "-m", "patch_tui", "inbox", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


def test_claim_list_and_release_from_the_command_line(store_location: Any) -> None:
    with open_store(store_location, actor="agent@build") as agent:
        action = pending(agent)
    got = _cli(store_location, "alice", "claim", action.token, "--for", "120")
    assert got.returncode == 0, got.stderr
    assert f"claimed {action.token}" in got.stdout
    taken = _cli(store_location, "bob", "claim", action.token)
    assert taken.returncode == 1 and "alice@cli is reading it" in taken.stderr
    listed = _cli(store_location, "bob", "list")
    assert "reading: alice@cli until" in listed.stdout
    rows = json.loads(_cli(store_location, "bob", "list", "--json").stdout)
    assert rows[0]["reading"]["by"] == "alice@cli"
    assert _cli(store_location, "bob", "claim", action.token, "--release").returncode == 1
    assert _cli(store_location, "alice", "claim", action.token, "--release").returncode == 0
    assert "reading" not in json.loads(_cli(store_location, "bob", "list", "--json").stdout)[0]
    assert _cli(store_location, "bob", "claim", action.token).returncode == 0


def test_list_json_in_process_lists_every_row_and_leaves_the_cycle_collector_on(
    store_location: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """`inbox list` pauses Python's cycle collector while it lists (inboxcmd): a program that
    runs the CLI in its own process gets it back on, and the rows are the store's, each one
    a line of JSON (a person's pipe or a script reads them as they always were)."""
    import gc

    from patch_tui.cli import main

    with open_store(store_location, actor="agent@build") as agent:
        made = [pending(agent, args={"n": n, "text": "caf\u00e9 \u202e"}) for n in range(5)]
    assert gc.isenabled()
    code = main(
        [
            "inbox",
            "list",
            "--json",
            "--store",
            getattr(store_location, "secret_url", str(store_location)),
        ]
    )
    assert code == 0 and gc.isenabled()
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == "[" and lines[-1] == "]" and out.isascii()
    rows = json.loads(out)
    assert [r["token"] for r in rows] == [a.token for a in reversed(made)]
    assert [json.loads(line.rstrip(",")) for line in lines[1:-1]] == rows
    assert rows[0]["args"] == {"n": 4, "text": "caf\u00e9 \u202e"}
