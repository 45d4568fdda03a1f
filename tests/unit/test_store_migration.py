"""The store's schema 2 -> 3 upgrade (edited approvals and standing grants): a store file written by
the patch-tui before issue 17 opens with every action, event and approval kept, and gains what
schema 3 adds."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from patch_tui.approvals import grants
from patch_tui.approvals.grants import Pattern
from patch_tui.approvals.store import (
    MIGRATIONS,
    SCHEMA_VERSION,
    Store,
    StoreUnavailable,
    _split_sql,
)

SHA = "a" * 64


def _columns(conn: sqlite3.Connection, table: str) -> list[tuple[str, str]]:
    return [(r[1], r[2]) for r in conn.execute(f"PRAGMA table_info({table})")]


def _tables(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def _v2_reference(tmp_path: Path) -> sqlite3.Connection:
    """An empty database built by the first two migrations only: what schema 2 looks like."""
    conn = sqlite3.connect(tmp_path / "reference-v2.sqlite3")
    for script in MIGRATIONS[:2]:
        for statement in _split_sql(script):
            conn.execute(statement)
    return conn


def _old_store(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A store file in schema 2 holding a pending, an approved (sealed), a rejected and an
    executed action. Written by today's Store, then taken back to schema 2 (its columns and
    tables exactly as the two first migrations make them, checked against a fresh schema-2
    database), so the approval's seal is a real one."""
    path = tmp_path / "state" / "store.sqlite3"
    with Store(path, actor="alice@old") as store:
        pending = store.create_pending(
            "human_confirm",
            "delete_file",
            "1.0.0",
            SHA,
            {"path": "/tmp/a"},
            "irreversible",
            tool_path="/t/delete_file.py",
        )
        approved = store.create_pending(
            "human_confirm",
            "delete_file",
            "1.0.0",
            SHA,
            {"path": "/tmp/b"},
            "irreversible",
            ttl=3600,
        )
        rejected = store.create_pending(
            "tainted_input", "slack_send", "2.0.0", SHA, {"text": "hi"}, "tainted"
        )
        executed = store.create_pending(
            "human_confirm", "delete_file", "1.0.0", SHA, {"path": "/tmp/c"}, "irreversible"
        )
        assert store.approve(approved.token, note="looks right").ok
        assert store.reject(rejected.token, reason="nope").ok
        assert store.approve(executed.token).ok
        assert store.claim(executed.token).ok
        store.finish(executed.token, True, {"deleted": "/tmp/c"})
    conn = sqlite3.connect(path)
    conn.execute("DROP TABLE grants")
    conn.execute("ALTER TABLE actions DROP COLUMN proposed_args_json")
    conn.execute("ALTER TABLE actions DROP COLUMN grant_id")
    conn.execute("PRAGMA user_version = 2")
    conn.commit()
    reference = _v2_reference(tmp_path)
    for table in ("actions", "events", "recent_outputs"):
        assert _columns(conn, table) == _columns(reference, table), table
    assert _tables(conn) == _tables(reference)
    conn.close()
    tokens = {
        "pending": pending.token,
        "approved": approved.token,
        "rejected": rejected.token,
        "executed": executed.token,
    }
    return path, tokens


def test_a_schema_2_store_is_upgraded_to_3_with_every_action_and_event_kept(tmp_path: Path) -> None:
    assert SCHEMA_VERSION == 3
    path, tokens = _old_store(tmp_path)
    conn = sqlite3.connect(path)
    before_actions = conn.execute("SELECT * FROM actions ORDER BY id").fetchall()
    before_events = conn.execute("SELECT * FROM events ORDER BY id").fetchall()
    conn.close()

    with Store(path, actor="bob@new") as store:
        # Every old row, unchanged, in the columns it had; the new columns empty.
        conn = sqlite3.connect(path)
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 3
        names = [c for c, _ in _columns(conn, "actions")]
        assert names[-2:] == ["proposed_args_json", "grant_id"]
        after = conn.execute(f"SELECT {', '.join(names[:-2])} FROM actions ORDER BY id").fetchall()
        assert after == before_actions
        assert (
            conn.execute("SELECT proposed_args_json, grant_id FROM actions").fetchall()
            == [(None, None)] * 4
        )
        assert conn.execute("SELECT * FROM events ORDER BY id").fetchall() == before_events
        assert "grants" in _tables(conn)
        conn.close()

        statuses = {name: store.get(token) for name, token in tokens.items()}
        assert {n: a.status for n, a in statuses.items() if a} == {
            "pending": "pending",
            "approved": "approved",
            "rejected": "rejected",
            "executed": "executed",
        }
        assert statuses["rejected"].note == "nope"
        assert statuses["executed"].result == {"deleted": "/tmp/c"}
        # The approval made before the upgrade still holds: its seal verifies, confirm runs it.
        assert statuses["approved"].tampered is None and not statuses["approved"].edited
        assert store.claim(tokens["approved"]).ok

        # What schema 3 adds works on the old rows: an edited approval keeps the proposal...
        decision = store.approve(tokens["pending"], args={"path": "/tmp/a-edited"})
        assert decision.ok and decision.action.edited
        assert decision.action.proposed_args == {"path": "/tmp/a"}
        assert decision.action.args == {"path": "/tmp/a-edited"}
        # ...and standing grants are stored and listed.
        grant = grants.create(store, "delete_file", "1.0.0", SHA, [Pattern("path", "/tmp/*")], 600)
        assert [g.id for g in grants.list_grants(store)] == [grant.id]


def test_the_upgrade_runs_once_and_a_second_process_opens_the_upgraded_file(tmp_path: Path) -> None:
    path, tokens = _old_store(tmp_path)
    with Store(path) as first, Store(path) as second:
        assert first.get(tokens["pending"]) == second.get(tokens["pending"])
    conn = sqlite3.connect(path)
    # One `grants` table, the columns added once (a second run of the ALTERs would have failed).
    assert [c for c, _ in _columns(conn, "actions")].count("grant_id") == 1
    conn.close()


def test_a_store_from_a_newer_patch_tui_is_refused_untouched(tmp_path: Path) -> None:
    path, _ = _old_store(tmp_path)
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
