"""The store backend interface (approvals/backend.py), as every backend must keep it: dumb storage
with atomic conditional transitions, the judgement passed in as callbacks run inside the
transaction. Written against the `backend` fixture, so another backend (PostgreSQL) adds itself
to the fixture's params and runs the same tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from patch_tui.approvals.backend import ApprovalStore
from patch_tui.approvals.records import Grant, Pattern, Signature
from patch_tui.approvals.store import Store

LATER = "2999-01-01T00:00:00.000Z"


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest, tmp_path: Path):
    if request.param == "sqlite":
        with Store(tmp_path / "c.sqlite3", actor="test") as store:
            yield store
    else:  # a fresh database on the run's real PostgreSQL (tests/pgkit.py)
        from patch_tui.approvals.open_store import open_store
        from patch_tui.settings.store_location import DatabaseURL

        with open_store(DatabaseURL(request.getfixturevalue("pg_url")), actor="test") as store:
            yield store


def _held(store: ApprovalStore, **args: object):
    return store.create_pending(
        "human_confirm", "t", "1.0.0", "a" * 64, args or {"x": 1}, "why", tool_path="/t/t.py"
    )


def _sig(who: str, verb: str = "approve", text: str = "{}") -> Signature:
    return Signature(who, verb, "2026-11-26T00:00:00.000Z", text, None)  # type: ignore[arg-type]


def test_the_sqlite_store_is_an_approval_store(backend: ApprovalStore) -> None:
    assert isinstance(backend, ApprovalStore)


def test_add_decision_approves_only_when_the_callback_says_complete(backend) -> None:
    action = _held(backend)
    seen: list[int] = []

    def two(current, signatures) -> str | None:
        seen.append(len(signatures))
        return LATER if len({s.approver for s in signatures}) >= 2 else None

    first = backend.add_decision(action.token, _sig("alice"), complete=two)
    assert not first.ok and first.code == "awaiting_approval"
    assert backend.get(action.token).status == "pending"
    second = backend.add_decision(action.token, _sig("bob"), complete=two)
    assert second.ok and second.action.status == "approved" and second.action.expires_at == LATER
    assert seen == [1, 2]  # the callback saw the rows as they were, the new one included
    assert [s.approver for s in backend.decisions(action.token)] == ["alice", "bob"]
    late = backend.add_decision(action.token, _sig("carol"), complete=two)
    assert not late.ok and late.code == "already_decided"


def test_a_reject_rejects_at_once(backend) -> None:
    action = _held(backend)
    done = backend.add_decision(action.token, _sig("bob", "reject"), complete=lambda a, s: None)
    assert done.ok and done.action.status == "rejected"


def test_an_edit_replaces_the_args_and_keeps_the_proposal(backend) -> None:
    action = _held(backend, path="/a")
    done = backend.add_decision(
        action.token, _sig("alice"), complete=lambda a, s: LATER, args={"path": "/b"}
    )
    assert done.ok and done.action.args == {"path": "/b"}
    assert done.action.proposed_args == {"path": "/a"}


def test_claim_runs_the_check_inside_and_a_refusal_fails_the_action(backend) -> None:
    action = _held(backend)
    backend.add_decision(action.token, _sig("alice"), complete=lambda a, s: LATER)
    refused = backend.claim(action.token, lambda a, s, g: ("tampered", "a forged signature"))
    assert not refused.ok and refused.code == "tampered"
    after = backend.get(action.token)
    assert after.status == "failed" and after.tampered == "a forged signature"
    other = _held(backend)
    backend.add_decision(other.token, _sig("alice"), complete=lambda a, s: LATER)
    assert backend.claim(other.token, lambda a, s, g: None).ok
    assert not backend.claim(other.token, lambda a, s, g: None).ok  # once


def test_grants_carry_their_signatures_and_approve_only_when_checked(backend) -> None:
    grant = backend.add_grant(
        Grant(
            id=0,
            tool="t",
            version="1.0.0",
            source_sha256="a" * 64,
            patterns=(Pattern("x", "1"),),
            created_at="2026-11-26T00:00:00.000Z",
            created_by="alice",
            expires_at=LATER,
            grant_id="g-1",
            tool_path="/t/t.py",
            signatures=(_sig("alice", "grant"),),
        )
    )
    assert grant.id > 0 and [s.approver for s in grant.signatures] == ["alice"]
    grant = backend.add_grant_signature(grant.id, _sig("bob", "grant"))
    assert [s.approver for s in grant.signatures] == ["alice", "bob"]
    action = _held(backend)
    no = backend.approve_by_grant(action.token, grant.id, lambda a, g: False)
    assert not no.ok and backend.get(action.token).status == "pending"
    yes = backend.approve_by_grant(action.token, grant.id, lambda a, g: len(g.signatures) == 2)
    assert yes.ok and yes.action.grant_id == grant.id
    assert backend.get_grant(grant.id).uses == 1
    revoked = backend.revoke_grant(grant.id, _sig("carol", "revoke"))
    assert revoked.revoked_by == "carol" and revoked.revocation is not None
    assert backend.list_grants() == [] and len(backend.list_grants(ended=True)) == 1


@pytest.fixture(params=["sqlite", "postgresql"])
def backend_and_sql(request: pytest.FixtureRequest, tmp_path: Path):
    """A backend and a way to write its rows by hand, as anything that can reach the store can."""
    if request.param == "sqlite":
        import sqlite3

        path = tmp_path / "c.sqlite3"

        def sqlite_sql(statement: str, params: tuple) -> None:
            with sqlite3.connect(path) as conn:
                conn.execute(statement.replace("%s", "?"), params)

        with Store(path, actor="test") as store:
            yield store, sqlite_sql
    else:
        import psycopg

        from patch_tui.approvals.open_store import open_store
        from patch_tui.settings.store_location import DatabaseURL

        url = request.getfixturevalue("pg_url")

        def pg_sql(statement: str, params: tuple) -> None:
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute(statement.encode(), params)

        with open_store(DatabaseURL(url), actor="test") as store:
            yield store, pg_sql


def test_an_approval_set_back_by_hand_after_its_run_never_runs_again(backend_and_sql) -> None:
    """Its signatures still verify for this very call until it expires; the append-only events
    remember the first claim (red team: `UPDATE actions SET status = 'approved'` re-ran it)."""
    backend, sql = backend_and_sql
    action = _held(backend)
    backend.add_decision(action.token, _sig("alice"), complete=lambda a, s: LATER)
    assert backend.claim(action.token, lambda a, s, g: None).ok
    backend.finish(action.token, True, {"status": "ok"})
    sql("UPDATE actions SET status = 'approved' WHERE token = %s", (action.token,))
    again = backend.claim(action.token, lambda a, s, g: None)
    assert not again.ok and again.code == "tampered" and "already run once" in (again.why or "")


def test_a_revocation_is_never_taken_back_by_hand(backend_and_sql) -> None:
    """A revoked grant's signatures still verify without its revocation (red team: clearing
    revoked_at brought it back): the store refuses the write."""
    backend, sql = backend_and_sql
    grant = backend.add_grant(
        Grant(
            id=0,
            tool="t",
            version="1.0.0",
            source_sha256="a" * 64,
            patterns=(Pattern("x", "1"),),
            created_at="2026-11-26T00:00:00.000Z",
            created_by="alice",
            expires_at=LATER,
            grant_id="g-2",
            tool_path="/t/t.py",
            signatures=(_sig("alice", "grant"),),
        )
    )
    backend.revoke_grant(grant.id, _sig("alice", "revoke"))
    with pytest.raises(Exception, match="never taken back"):
        sql("UPDATE grants SET revoked_at = NULL, revocation = NULL WHERE id = %s", (grant.id,))
    assert backend.list_grants() == []
