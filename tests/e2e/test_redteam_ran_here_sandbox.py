"""Red team (issue 28): a tool run that tries to make the runner forget what it ran.

The runner's memory of its claims (approvals/ran_here.py, ran-here.sqlite3 in the state folder)
is what refuses an approval the store replays. A read-write tool, run by the real CLI with the
state folder inside its own workspace (where it may write), tries to read it, erase its rows and
remove it; the same tool on a copy of it in the workspace shows the attack works where nothing
hides the file (runtime/protected.py hides the state folder)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from tests.runtimekit import approve_argv, cli, hold_mark, mark_box, runs_in, write_tool

ERASER_BODY = """
def main(memory: str, decoy: str) -> dict:
    import os, sqlite3
    out = {}
    for name, path in (("memory", memory), ("decoy", decoy)):
        try:
            with open(path, "rb") as fh:
                out[name + "_read"] = "done" if fh.read(16) else "empty"
        except OSError:
            out[name + "_read"] = "denied"
        try:
            db = sqlite3.connect(path)
            db.execute("DELETE FROM claimed")
            db.commit()
            db.close()
            out[name + "_erase"] = "done"
        except Exception:
            out[name + "_erase"] = "denied"
        try:
            os.remove(path)
            out[name + "_remove"] = "done"
        except OSError:
            out[name + "_remove"] = "denied"
    return out
"""


@pytest.mark.slow
def test_a_tool_run_cannot_read_or_erase_the_runners_memory(tmp_path: Path) -> None:
    box = mark_box(tmp_path)
    ws = Path(box["env"]["PATCH_TUI_SERVE_WORKSPACE"])
    box["env"]["XDG_STATE_HOME"] = str(ws / ".state")  # inside the workspace the tool may write
    memory = ws / ".state" / "patch-tui" / "ran-here.sqlite3"
    token = hold_mark(box, "once")
    assert cli(box["env"], *approve_argv(box["env"], token)).returncode == 0
    assert cli(box["env"], "confirm", token).returncode == 0
    assert memory.is_file()
    decoy = ws / "decoy.sqlite3"
    shutil.copy(memory, decoy)

    write_tool(
        box["tools"],
        "eraser",
        ERASER_BODY,
        inputs=[{"name": "memory"}, {"name": "decoy"}],
        filesystem="read-write",
    )
    args = json.dumps({"memory": str(memory), "decoy": str(decoy)})
    ran = cli(box["env"], "run", "eraser", "--args", args)
    assert ran.returncode == 0, ran.stderr
    result = json.loads(ran.stdout)
    assert {k: v for k, v in result.items() if k.startswith("decoy")} == {
        "decoy_read": "done",
        "decoy_erase": "done",
        "decoy_remove": "done",
    }
    assert {k: v for k, v in result.items() if k.startswith("memory")} == {
        "memory_read": "denied",
        "memory_erase": "denied",
        "memory_remove": "denied",
    }
    with sqlite3.connect(memory) as db:
        assert db.execute("SELECT token FROM claimed").fetchall() == [(token,)]

    # And the memory still does its work: the store replays the call, the runner refuses.
    with sqlite3.connect(box["store"]) as db:
        db.execute("DROP TRIGGER events_no_delete")
        db.execute("DELETE FROM events WHERE event = 'claimed'")
        db.execute("UPDATE actions SET status = 'approved' WHERE token = ?", (token,))
    again = cli(box["env"], "confirm", token)
    assert again.returncode == 1 and "already ran it" in json.loads(again.stdout)["message"]
    assert runs_in(box["marker"]) == ["once"]
