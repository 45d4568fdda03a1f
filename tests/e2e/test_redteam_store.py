"""Red team (issue 23): a process of the user's that can read and write the store (SQLite) but
holds no approver's private key, against the real CLI. It tries to turn one person's decision
into more than they decided: a signature moved onto another held call, an approval run twice,
a revoked grant brought back."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.runtimekit import approve_argv, cli, hold_mark, mark_box, replay_on_postgres, runs_in


@pytest.fixture
def box(tmp_path) -> dict[str, Any]:
    return mark_box(tmp_path)


def _sql(box: dict[str, Any], statement: str, *params: Any) -> None:
    with sqlite3.connect(box["store"]) as db:
        db.execute(statement, params)


def _approve(box: dict[str, Any], token: str) -> None:
    done = cli(box["env"], *approve_argv(box["env"], token))
    assert done.returncode == 0, done.stderr


@pytest.mark.slow
def test_a_signature_moved_onto_another_held_call_runs_nothing(box) -> None:
    """The person approves a harmless call; the attacker copies that signature row onto a
    second held call of the same tool and marks it approved."""
    harmless = hold_mark(box, "harmless")
    wanted = hold_mark(box, "the attacker's")
    _approve(box, harmless)
    _sql(
        box,
        "INSERT INTO signatures (action_id, approver, decision, at, note, args_sha256, envelope) "
        "SELECT (SELECT id FROM actions WHERE token = ?), approver, decision, at, note, "
        "(SELECT args_sha256 FROM actions WHERE token = ?), envelope FROM signatures",
        wanted,
        wanted,
    )
    _sql(
        box,
        "UPDATE actions SET status = 'approved', decided_at = (SELECT decided_at FROM actions "
        "WHERE token = ?), expires_at = (SELECT expires_at FROM actions WHERE token = ?) "
        "WHERE token = ?",
        harmless,
        harmless,
        wanted,
    )
    ran = cli(box["env"], "confirm", wanted)
    assert ran.returncode == 1 and json.loads(ran.stdout)["status"] == "tampered", ran.stdout
    assert runs_in(box["marker"]) == []


@pytest.mark.slow
def test_an_approval_runs_once_even_when_the_store_is_set_back_to_approved(box) -> None:
    token = hold_mark(box, "once")
    _approve(box, token)
    first = cli(box["env"], "confirm", token)
    assert first.returncode == 0, first.stderr
    _sql(
        box,
        "UPDATE actions SET status = 'approved', claimed_at = NULL, claimed_by = NULL, "
        "finished_at = NULL, result_json = NULL WHERE token = ?",
        token,
    )
    again = cli(box["env"], "confirm", token)
    assert again.returncode == 1 and json.loads(again.stdout)["status"] == "tampered", again.stdout
    assert runs_in(box["marker"]) == ["once"]
    listed = cli(box["env"], "inbox", "list", "--all")
    assert "already run once" in listed.stdout or "TAMPERED" in listed.stdout, listed.stdout


def _erase_the_claim(box: dict[str, Any], token: str) -> None:
    """What a store writer does to run an executed call again: the events trigger dropped, the
    `claimed` event deleted, the action set back to approved (its signatures still verify)."""
    with sqlite3.connect(box["store"]) as db:
        db.execute("DROP TRIGGER events_no_delete")
        db.execute(
            "DELETE FROM events WHERE event = 'claimed' AND action_id = "
            "(SELECT id FROM actions WHERE token = ?)",
            (token,),
        )
        db.execute("UPDATE actions SET status = 'approved' WHERE token = ?", (token,))


@pytest.mark.slow
def test_an_approval_runs_once_even_when_the_claim_event_is_erased(box) -> None:
    """The store forgets the first run entirely; the runner's own memory of what it claimed
    (approvals/ran_here.py, in its state folder) does not."""
    token = hold_mark(box, "once")
    _approve(box, token)
    assert cli(box["env"], "confirm", token).returncode == 0
    _erase_the_claim(box, token)
    again = cli(box["env"], "confirm", token)
    assert again.returncode == 1, again.stdout
    refusal = json.loads(again.stdout)
    assert refusal["status"] == "tampered" and "already ran it" in refusal["message"]
    assert runs_in(box["marker"]) == ["once"]
    listed = cli(box["env"], "inbox", "list", "--all")
    assert "TAMPERED" in listed.stdout and "already ran it" in listed.stdout, listed.stdout


@pytest.mark.slow
@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,  # the call ran twice: not a missing file or table on the way
    reason="a process of the user's that can write the store can also write the runner's "
    "memory beside it (the state folder): erasing both the 'claimed' event and the memory's "
    "row runs an approved call again until the approval expires; the store holds no secret "
    "(against a shared database, which cannot reach that folder, the memory holds)",
)
def test_an_approval_runs_once_even_when_the_runners_memory_is_erased_too(box) -> None:
    token = hold_mark(box, "once")
    _approve(box, token)
    assert cli(box["env"], "confirm", token).returncode == 0
    _erase_the_claim(box, token)
    memory = Path(box["env"]["XDG_STATE_HOME"]) / "patch-tui" / "ran-here.sqlite3"
    with sqlite3.connect(memory) as db:
        db.execute("DELETE FROM claimed WHERE token = ?", (token,))
    cli(box["env"], "confirm", token)
    assert runs_in(box["marker"]) == ["once"]


def _grant_then_revoke(box: dict[str, Any]) -> str:
    granted = cli(box["env"], "inbox", "allow", "mark", "--where", "text=ok-*", "--for", "1h")
    assert granted.returncode == 0, granted.stderr
    args = json.dumps({"marker": str(box["marker"]), "text": "ok-by-grant"})
    assert cli(box["env"], "run", "mark", "--args", args).returncode == 0
    revoked = cli(box["env"], "inbox", "revoke", "1")
    assert revoked.returncode == 0, revoked.stderr
    return args


@pytest.mark.slow
def test_a_revoked_grant_stays_revoked_when_the_store_forgets_it(box) -> None:
    args = _grant_then_revoke(box)
    with pytest.raises(sqlite3.IntegrityError, match="never taken back"):
        _sql(box, "UPDATE grants SET revoked_at = NULL, revoked_by = NULL, revocation = NULL")
    after = cli(box["env"], "run", "mark", "--args", args)
    assert after.returncode == 3, after.stdout
    assert runs_in(box["marker"]) == ["ok-by-grant"]


@pytest.mark.slow
@pytest.mark.xfail(
    strict=True,
    reason="a grant's revocation is a column of its row: a store writer that drops the "
    "grants_revocation_stays trigger and clears revoked_at makes a revoked grant approve "
    "again until its expires_at (at most 7 days); the store holds no secret",
)
def test_a_revoked_grant_stays_revoked_even_when_the_trigger_is_dropped(box) -> None:
    args = _grant_then_revoke(box)
    with sqlite3.connect(box["store"]) as db:
        db.execute("DROP TRIGGER grants_revocation_stays")
        db.execute("UPDATE grants SET revoked_at = NULL, revoked_by = NULL, revocation = NULL")
    cli(box["env"], "run", "mark", "--args", args)
    assert runs_in(box["marker"]) == ["ok-by-grant"]


@pytest.mark.slow
def test_a_team_database_cannot_run_an_approved_call_twice(tmp_path, pg_url: str) -> None:
    """The team inbox's database, as its superuser: it erases the first run and sets the call
    back to approved. The runner on the agent's machine remembers, and refuses."""
    import psycopg

    box = mark_box(tmp_path)
    box["env"]["PATCH_TUI_STORE"] = pg_url
    token = hold_mark(box, "once")
    _approve(box, token)
    assert cli(box["env"], "confirm", token).returncode == 0
    with psycopg.connect(pg_url, autocommit=True) as db:
        db.execute("ALTER TABLE events DISABLE TRIGGER events_append_only")
        replay_on_postgres(db, token)
    again = cli(box["env"], "confirm", token)
    assert again.returncode == 1, again.stdout
    refusal = json.loads(again.stdout)
    assert refusal["status"] == "tampered" and "already ran it" in refusal["message"]
    assert runs_in(box["marker"]) == ["once"]


@pytest.mark.slow
def test_a_runner_that_cannot_remember_the_run_runs_nothing(box) -> None:
    """Fail closed: when this machine's memory of its claims cannot be written, a replay could
    not be told from a first run, so the call is finished unrun and the refusal says why."""
    token = hold_mark(box, "never")
    _approve(box, token)
    memory = Path(box["env"]["XDG_STATE_HOME"]) / "patch-tui" / "ran-here.sqlite3"
    memory.parent.mkdir(parents=True, exist_ok=True)
    memory.mkdir()  # a folder where the file should be
    ran = cli(box["env"], "confirm", token)
    assert ran.returncode == 1, ran.stdout
    refusal = json.loads(ran.stdout)
    assert refusal["status"] == "not_run" and "cannot record" in refusal["message"]
    assert "Traceback" not in ran.stderr and runs_in(box["marker"]) == []
    assert cli(box["env"], "confirm", token).returncode == 1  # and it never runs later
    assert runs_in(box["marker"]) == []
