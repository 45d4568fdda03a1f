"""Red team (issue 23): a process of the user's that can read and write the store (SQLite) but
holds no approver's private key, against the real CLI. It tries to turn one person's decision
into more than they decided: a signature moved onto another held call, an approval run twice,
a revoked grant brought back."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import pytest

from tests.runtimekit import approve_argv, cli, hold_mark, mark_box, runs_in


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


@pytest.mark.slow
@pytest.mark.xfail(
    strict=True,
    reason="a store writer that also drops the events trigger and deletes the action's "
    "'claimed' event can run an approved call again until the approval's expires_at: the "
    "store holds no secret, so 'once' is only as strong as its append-only events",
)
def test_an_approval_runs_once_even_when_the_claim_event_is_erased(box) -> None:
    token = hold_mark(box, "once")
    _approve(box, token)
    assert cli(box["env"], "confirm", token).returncode == 0
    with sqlite3.connect(box["store"]) as db:
        db.execute("DROP TRIGGER events_no_delete")
        db.execute(
            "DELETE FROM events WHERE event = 'claimed' AND action_id = "
            "(SELECT id FROM actions WHERE token = ?)",
            (token,),
        )
        db.execute("UPDATE actions SET status = 'approved' WHERE token = ?", (token,))
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
