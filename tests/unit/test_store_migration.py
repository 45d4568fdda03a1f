"""The store's upgrades: a store file written by an older patch-tui (schema 2: before edited
approvals and grants; schema 3: approvals sealed with an HMAC) opens with every action and event
kept. An HMAC-sealed approval still waiting to run goes back to pending and says why: the key
beside the store no longer approves anything (issue 23, item 7)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from patch_tui.approvals import decisions, grants
from patch_tui.approvals.grants import Pattern
from patch_tui.approvals.schema import REOPENED_WHY
from patch_tui.approvals.store import (
    MIGRATIONS,
    SCHEMA_VERSION,
    Store,
    StoreUnavailable,
    _split_sql,
    args_sha256,
)

SHA = "a" * 64
T0 = "2026-11-01T10:00:00.000Z"
LATER = "2999-01-01T00:00:00.000Z"  # not expired whenever the test runs


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]


def _tables(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def _action(conn: sqlite3.Connection, token: str, status: str, args: dict, **more: str) -> int:
    cur = conn.execute(
        "INSERT INTO actions (token, kind, tool, version, source_sha256, tool_path, args_json, "
        "args_sha256, reason, status, created_at, expires_at, decided_at, decided_by, note, "
        "result_json) VALUES (?, 'human_confirm', 'delete_file', '1.0.0', ?, '/t/delete_file.py',"
        " ?, ?, 'irreversible', ?, ?, ?, ?, ?, ?, ?)",
        (
            token,
            SHA,
            json.dumps(args),
            args_sha256(args),
            status,
            T0,
            LATER,
            more.get("decided_at"),
            more.get("decided_by"),
            more.get("note"),
            more.get("result"),
        ),
    )
    action_id = int(cur.lastrowid or 0)
    conn.execute(
        "INSERT INTO events (action_id, at, actor, event, detail) VALUES (?, ?, 'alice@old', "
        "'created', '{}')",
        (action_id, T0),
    )
    if status in ("approved", "executed"):
        # What the HMAC release wrote: an approved event carrying its seal.
        sealed = {"note": None, "bound": {"token": token, "mac": "f" * 64}}
        conn.execute(
            "INSERT INTO events (action_id, at, actor, event, detail) VALUES (?, ?, "
            "'alice@old', 'approved', ?)",
            (action_id, T0, json.dumps(sealed)),
        )
    return action_id


def _old_store(tmp_path: Path, version: int) -> tuple[Path, dict[str, str]]:
    """A store file in schema `version` (2 or 3), built by the migrations of that release, with
    a pending, an approved (sealed, not yet run), a rejected and an executed action."""
    path = tmp_path / "state" / "store.sqlite3"
    path.parent.mkdir(mode=0o700)
    conn = sqlite3.connect(path)
    for script in MIGRATIONS[:version]:
        for statement in _split_sql(script):
            conn.execute(statement)
    conn.execute(f"PRAGMA user_version = {version}")
    tokens = {n: f"{n:-<32}"[:32] for n in ("pending", "approved", "rejected", "executed")}
    _action(conn, tokens["pending"], "pending", {"path": "/tmp/a"})
    _action(conn, tokens["approved"], "approved", {"path": "/tmp/b"}, decided_at=T0,
            decided_by="alice@old", note="looks right")  # fmt: skip
    _action(conn, tokens["rejected"], "rejected", {"path": "/tmp/x"}, decided_at=T0,
            decided_by="alice@old", note="nope")  # fmt: skip
    _action(conn, tokens["executed"], "executed", {"path": "/tmp/c"}, decided_at=T0,
            decided_by="alice@old", result='{"deleted":"/tmp/c"}')  # fmt: skip
    conn.commit()
    conn.close()
    path.chmod(0o600)
    return path, tokens


@pytest.mark.parametrize("version", [2, 3])
def test_an_old_store_is_upgraded_with_every_action_and_event_kept(
    tmp_path: Path, version: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Its own state folder: each version's store holds the same tokens, and the runner's memory
    # of its claims (approvals/ran_here.py) would refuse the second run of one as a replay.
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert SCHEMA_VERSION == 5
    path, tokens = _old_store(tmp_path, version)
    conn = sqlite3.connect(path)
    before_events = conn.execute("SELECT * FROM events ORDER BY id").fetchall()
    conn.close()
    with Store(path, actor="bob@new") as store:
        conn = sqlite3.connect(path)
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert {"grants", "signatures", "grant_signatures"} <= _tables(conn)
        # The old events are kept as they were; the upgrade only appended.
        after_events = conn.execute("SELECT * FROM events ORDER BY id").fetchall()
        assert after_events[: len(before_events)] == before_events
        appended = after_events[len(before_events) :]
        conn.close()
        got = {name: store.get(token) for name, token in tokens.items()}
        assert {n: a.status for n, a in got.items()} == {
            "pending": "pending",
            "approved": "pending",  # the HMAC seal no longer approves: a person must again
            "rejected": "rejected",
            "executed": "executed",
        }
        assert got["approved"].note == REOPENED_WHY and got["approved"].decided_by is None
        assert [(e[4]) for e in appended] == ["reopened"]  # one event, on the reopened action
        assert got["rejected"].note == "nope"
        assert got["executed"].result == {"deleted": "/tmp/c"}
        # Confirm does not run it on the old seal...
        claim = decisions.claim(store, tokens["approved"])
        assert not claim.ok and claim.code == "awaiting_approval"
        # ...a person approves it again, signed, and then it runs.
        assert decisions.approve(store, tokens["approved"]).ok
        assert decisions.claim(store, tokens["approved"]).ok
        # What schema 3 and 4 add works on the old rows: an edited approval keeps the proposal.
        decision = decisions.approve(store, tokens["pending"], args={"path": "/tmp/a-edited"})
        assert decision.ok and decision.action.edited
        assert decision.action.proposed_args == {"path": "/tmp/a"}
        grant = grants.create(store, "delete_file", "1.0.0", SHA, [Pattern("path", "/tmp/*")], 600)
        assert [g.id for g in grants.list_grants(store)] == [grant.id]


def test_the_inbox_says_why_a_reopened_action_is_pending(tmp_path: Path) -> None:
    from runtimekit import cli, cli_env

    path, tokens = _old_store(tmp_path, 3)
    env = cli_env(tmp_path / "home", path)
    listed = cli(env, "inbox", "list")
    assert listed.returncode == 0, listed.stderr
    block = next(b for b in listed.stdout.split("\n\n") if b.startswith(tokens["approved"]))
    assert "pending" in block and REOPENED_WHY in " ".join(block.split())


def test_an_unsigned_grant_row_from_before_never_approves_and_is_reported(tmp_path: Path) -> None:
    path, tokens = _old_store(tmp_path, 3)
    conn = sqlite3.connect(path)
    conn.execute(
        "INSERT INTO grants (tool, version, source_sha256, patterns_json, created_at, "
        "created_by, expires_at) VALUES ('delete_file', '1.0.0', ?, '[]', ?, 'alice@old', ?)",
        (SHA, T0, "2026-12-31T00:00:00.000Z"),
    )
    conn.commit()
    conn.close()
    with Store(path) as store:
        action = store.get(tokens["pending"])
        assert grants.apply(store, action) is None
        assert store.get(tokens["pending"]).status == "pending"
        (listed,) = grants.listing(store, None)
        assert listed.state == "untrusted" and "not signed" in listed.status


def test_the_upgrade_runs_once_and_a_second_process_opens_the_upgraded_file(tmp_path: Path) -> None:
    path, tokens = _old_store(tmp_path, 2)
    with Store(path) as first, Store(path) as second:
        assert first.get(tokens["pending"]) == second.get(tokens["pending"])
    conn = sqlite3.connect(path)
    # The columns added once (a second run of the ALTERs would have failed), one reopening.
    assert _columns(conn, "actions").count("grant_id") == 1
    assert conn.execute("SELECT count(*) FROM events WHERE event = 'reopened'").fetchone() == (1,)
    conn.close()


def test_a_store_from_a_newer_patch_tui_is_refused_untouched(tmp_path: Path) -> None:
    path, _ = _old_store(tmp_path, 2)
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.commit()
    before = conn.execute("SELECT * FROM actions ORDER BY id").fetchall()
    conn.close()
    with pytest.raises(StoreUnavailable, match="newer patch-tui"):
        Store(path)
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT * FROM actions ORDER BY id").fetchall() == before
    assert "grants" not in _tables(conn)  # nothing was migrated
