"""Red team (issue 28): a team database replaying one approved call to many runners at once.

The database's superuser keeps setting an executed call back to approved (its `claimed` event
erased) while three `patch-tui confirm` processes and two `patch-tui serve` sessions confirm its
token together on one machine. The runner's memory of its claims (approvals/ran_here.py) is one
SQLite transaction per claim: the call ran once, before, and never again."""

from __future__ import annotations

import asyncio
import json
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.mcpkit import serve_session
from tests.runtimekit import (
    PATCH_TUI,
    approve_argv,
    cli,
    hold_mark,
    mark_box,
    replay_on_postgres,
    runs_in,
)


def _keep_replaying(url: str, token: str, stop: threading.Event) -> int:
    """As the superuser: set the call back to approved, its first run erased, again and again."""
    import psycopg

    times = 0
    with psycopg.connect(url, autocommit=True) as db:
        db.execute("ALTER TABLE events DISABLE TRIGGER events_append_only")
        while not stop.is_set():
            replay_on_postgres(db, token)
            times += 1
            time.sleep(0.02)
    return times


async def _serve_confirms(box: dict[str, Any], token: str, rounds: int) -> list[str]:
    answers = []
    async with serve_session(box) as client:
        for _ in range(rounds):
            out = await client.call_tool("patch_confirm_action", {"confirmation_token": token})
            answers.append(json.loads(out.content[0].text)["status"])
            await asyncio.sleep(0.05)
    return answers


@pytest.mark.slow
async def test_many_runners_confirming_a_replayed_call_at_once_never_run_it_again(
    tmp_path: Path, pg_url: str
) -> None:
    box = mark_box(tmp_path)
    box["env"]["PATCH_TUI_STORE"] = pg_url
    box["store"], box["root"] = pg_url, box["tools"].parent
    token = hold_mark(box, "once")
    assert cli(box["env"], *approve_argv(box["env"], token)).returncode == 0
    assert cli(box["env"], "confirm", token).returncode == 0
    assert runs_in(box["marker"]) == ["once"]

    stop = threading.Event()
    replays: list[int] = []
    replayer = threading.Thread(
        target=lambda: replays.append(_keep_replaying(pg_url, token, stop)), daemon=True
    )
    replayer.start()
    try:
        procs = [
            subprocess.Popen(
                [*PATCH_TUI, "confirm", token],
                env=box["env"],
                cwd=box["env"]["PATCH_TUI_SERVE_WORKSPACE"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(3)
        ]
        served = await asyncio.gather(*(_serve_confirms(box, token, 4) for _ in range(2)))
        outs = [proc.communicate(timeout=60) for proc in procs]
    finally:
        stop.set()
        replayer.join(10)
    assert replays and replays[0] > 0
    for proc, (stdout, stderr) in zip(procs, outs, strict=True):
        assert proc.returncode == 1 and "Traceback" not in stderr, stderr
        assert json.loads(stdout)["status"] in {"tampered", "already_used"}, stdout
    statuses = [status for answers in served for status in answers]
    assert statuses and set(statuses) <= {"tampered", "already_used"}, statuses
    assert "tampered" in statuses + [json.loads(out)["status"] for out, _ in outs]
    assert runs_in(box["marker"]) == ["once"]
