"""The confirmation store: states, races between processes, durability and clear failures."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from patch_tui.approvals import decisions
from patch_tui.approvals.approvers import os_user
from patch_tui.approvals.store import (
    SCHEMA_VERSION,
    Action,
    Store,
    StoreBusy,
    StoreCorrupt,
    StoreUnavailable,
    args_sha256,
)

SHA = "a" * 64


def _pending(store: Store, **kw):
    base = dict(
        kind="human_confirm",
        tool="send_mail",
        version="1.0.0",
        source_sha256=SHA,
        args={"to": "bob@example.com", "body": "hi"},
        reason="irreversible",
    )
    base.update(kw)
    return store.create_pending(**base)


@pytest.fixture
def store(tmp_path: Path) -> Store:
    with Store(tmp_path / "state" / "c.sqlite3", actor="alice@test") as s:
        yield s


def test_create_and_get_keep_args_exactly(store: Store) -> None:
    args = {"z": 1, "a": [1.5, None, "é"], "m": {"y": True, "b": "x"}}
    action = _pending(store, args=args, details={"source_tools": ["fetch"]}, tool_path="/t/x.py")
    assert len(action.token) == 32 and "=" not in action.token
    got = store.get(action.token)
    assert got is not None
    assert got.args == args and list(got.args) == ["z", "a", "m"]  # key order kept
    assert got.args_sha256 == args_sha256(
        {"a": [1.5, None, "é"], "m": {"b": "x", "y": True}, "z": 1}
    )
    assert got.status == "pending" and got.details == {"source_tools": ["fetch"]}
    assert got.tool_path == "/t/x.py"
    assert got.created_at.endswith("Z") and got.expires_at > got.created_at
    assert store.get("nope") is None
    assert set(got.to_json()) == {
        "token",
        "kind",
        "tool",
        "version",
        "args",
        "reason",
        "status",
        "created_at",
        "expires_at",
        "decided_at",
        "decided_by",
        "note",
        "result",
        "proposed_args",
        "grant",
        "tampered",
    }


def test_an_action_read_from_a_row_is_an_ordinary_frozen_action(store: Store) -> None:
    """Rows become Actions without the dataclass's __init__ (schema.py, for speed): the result
    must be indistinguishable from one built the usual way: equal, frozen, replace() works."""
    import dataclasses

    made = _pending(store, args={"n": 1}, details={"k": "v"}, tool_path="/t/x.py")
    got = store.get(made.token)
    assert got is not None
    rebuilt = Action(**{f.name: getattr(got, f.name) for f in dataclasses.fields(Action)})
    assert got == rebuilt and repr(got) == repr(rebuilt)
    assert got.standing is None and got.damaged is None and got.tampered is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        got.status = "approved"  # type: ignore[misc]
    assert dataclasses.replace(got, standing="1 of 2").standing == "1 of 2"


def test_bad_input_is_refused_clearly(store: Store) -> None:
    with pytest.raises(ValueError, match="kind"):
        _pending(store, kind="whatever")
    with pytest.raises(ValueError, match="JSON"):
        _pending(store, args={"x": float("nan")})


def test_approve_once_then_explain(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite3"
    a = Store(path, actor="alice@cli")
    b = Store(path, actor="bob@tui")
    action = _pending(a)
    first = decisions.approve(a, action.token, note="looks right")
    assert first.ok and first.action.status == "approved"
    # Decided by the person whose key signed (without an approvers file: the OS user), through
    # this process.
    assert first.action.decided_by == f"{os_user()} via alice@cli"
    assert first.action.note == "looks right"
    second = decisions.approve(b, action.token)
    assert not second.ok and second.code == "already_decided"
    assert second.why.startswith(f"already approved by {os_user()} via alice@cli at ")
    third = decisions.reject(b, action.token, reason="no")
    assert not third.ok and "already approved" in third.why
    unknown = decisions.approve(b, "missing-token")
    assert not unknown.ok and unknown.why == "unknown token" and unknown.action is None


def test_args_changed_after_they_were_shown_are_never_approved(tmp_path: Path) -> None:
    """The inbox passes the args hash it showed; a row rewritten between showing and deciding
    (another writer of the file) stays pending instead of being approved unseen."""
    path = tmp_path / "c.sqlite3"
    store = Store(path, actor="alice@tui")
    action = _pending(store)
    swapped = {"to": "mallory@example.com", "body": "hi"}
    with sqlite3.connect(path) as conn:
        conn.execute(
            "UPDATE actions SET args_json = ?, args_sha256 = ? WHERE token = ?",
            (json.dumps(swapped), args_sha256(swapped), action.token),
        )
    refused = decisions.approve(store, action.token, shown_args_sha256=action.args_sha256)
    assert not refused.ok and refused.code == "changed_since_shown"
    assert store.get(action.token).status == "pending"
    fresh = store.get(action.token)
    assert decisions.approve(store, action.token, shown_args_sha256=fresh.args_sha256).ok


def test_reject_keeps_reason(store: Store) -> None:
    action = _pending(store)
    d = decisions.reject(store, action.token, reason="wrong recipient")
    assert d.ok and d.action.status == "rejected" and d.action.note == "wrong recipient"
    again = decisions.approve(store, action.token)
    assert not again.ok and again.code == "rejected" and "wrong recipient" in again.why


def test_expiry(store: Store) -> None:
    action = _pending(store, ttl=0)
    d = decisions.approve(store, action.token)
    assert not d.ok and d.code == "expired" and d.why.startswith("expired at ")
    assert store.get(action.token).status == "expired"
    other = _pending(store, ttl=0)
    assert store.pending_count() == 0
    assert [a.token for a in store.list_actions()] == [other.token]  # listing never writes
    assert store.get(other.token).status == "pending"
    assert store.settle() == 1  # expiry is settled explicitly
    assert store.list_actions() == []
    assert store.get(other.token).status == "expired"
    assert [e.event for e in store.events(other.token)] == ["created", "expired"]
    assert store.settle() == 0


def test_reading_never_writes(store: Store) -> None:
    """Listing, counting and getting leave the file alone, even with expiries due and a dead
    claimer: a second connection sees no commit (its data_version does not move)."""
    due = _pending(store, ttl=0)
    claimed = _pending(store)
    assert decisions.approve(store, claimed.token).ok and decisions.claim(store, claimed.token).ok
    with sqlite3.connect(store.path) as conn:
        conn.execute("UPDATE actions SET claim_pid = 2147483646 WHERE token = ?", (claimed.token,))
    watcher = sqlite3.connect(store.path)
    before = watcher.execute("PRAGMA data_version").fetchone()[0]
    local = store.data_version()
    for _ in range(3):
        store.list_actions(statuses=None)
        store.list_actions()
        store.pending_count()
        store.get(due.token)
        store.events()
    assert watcher.execute("PRAGMA data_version").fetchone()[0] == before
    assert store.data_version() == local
    assert {a.token: a.status for a in store.list_actions(statuses=None)} == {
        due.token: "pending",
        claimed.token: "executing",
    }
    assert store.settle() == 2  # now, explicitly: one expired, one interrupted
    assert watcher.execute("PRAGMA data_version").fetchone()[0] != before
    assert {a.token: a.status for a in store.list_actions(statuses=None)} == {
        due.token: "expired",
        claimed.token: "interrupted",
    }
    watcher.close()


def test_claim_finish_and_events(store: Store) -> None:
    action = _pending(store)
    early = decisions.claim(store, action.token)
    assert not early.ok and early.code == "awaiting_approval"
    assert decisions.approve(store, action.token).ok
    claim = decisions.claim(store, action.token)
    assert claim.ok and claim.action.status == "executing"
    again = decisions.claim(store, action.token)
    assert not again.ok and again.code == "already_used"
    done = store.finish(action.token, True, {"sent": True})
    assert done.status == "executed" and done.result == {"sent": True}
    assert [e.event for e in store.events(action.token)] == [
        "created",
        "approved",
        "claimed",
        "executed",
    ]
    assert all(e.actor == "alice@test" for e in store.events(action.token))
    assert store.list_actions(statuses=None)[0].status == "executed"


def test_list_newest_first_with_filters(store: Store) -> None:
    first = _pending(store, tool="a")
    second = _pending(store, tool="b")
    assert [a.token for a in store.list_actions()] == [second.token, first.token]
    assert [a.token for a in store.list_actions(tool="a")] == [first.token]
    assert len(store.list_actions(limit=1)) == 1
    decisions.reject(store, first.token)
    assert [a.token for a in store.list_actions()] == [second.token]
    assert {a.status for a in store.list_actions(statuses=None)} == {"pending", "rejected"}
    assert store.pending_count() == 1


def test_data_version_moves_on_any_process_commit(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite3"
    ui, other = Store(path, actor="tui"), Store(path, actor="cli")
    v0 = ui.data_version()
    assert ui.data_version() == v0  # nothing changed, nothing moves
    action = _pending(other)
    v1 = ui.data_version()
    assert v1 != v0
    decisions.approve(ui, action.token)  # our own commit moves it too
    assert ui.data_version() != v1


def test_events_are_append_only(store: Store, tmp_path: Path) -> None:
    _pending(store)
    conn = sqlite3.connect(store.path)
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        conn.execute("UPDATE events SET actor = 'mallory'")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        conn.execute("DELETE FROM events")
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute("UPDATE actions SET status = 'done'")
    conn.close()


def test_file_is_private_and_in_wal_mode(store: Store) -> None:
    assert (os.stat(store.path).st_mode & 0o777) == 0o600
    conn = sqlite3.connect(store.path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    conn.close()


def test_corrupt_file_is_reported_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite3"
    junk = b"this is not sqlite at all" * 100
    path.write_bytes(junk)
    with pytest.raises(StoreCorrupt, match="left untouched"):
        Store(path)
    assert path.read_bytes() == junk


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite3"
    Store(path).close()
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(StoreUnavailable, match="newer patch-tui"):
        Store(path)


_PROBE_RO = (
    "import sys\nfrom patch_tui.approvals.store import Store, StoreReadOnly\n"
    "for p in sys.argv[1:]:\n"
    "    try:\n        Store(p)\n    except StoreReadOnly as e:\n        print('RO', e)\n"
)


def _in_read_only_folder(folder: Path, *paths: Path) -> str:
    """Run the probe with `folder` read-only: by permissions for a normal user; as root (who
    ignores permissions) through a read-only bind mount in a user namespace."""
    if os.geteuid() != 0:
        folder.chmod(0o500)
        try:
            cmd = [sys.executable, "-c", _PROBE_RO, *map(str, paths)]
            return subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout
        finally:
            folder.chmod(0o700)
    script = (
        f'mount --bind "{folder}" "{folder}" && mount -o remount,bind,ro "{folder}" && '
        f'exec "{sys.executable}" -c "$0" "$@"'
    )
    cmd = ["unshare", "-rm", "sh", "-c", script, _PROBE_RO, *map(str, paths)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout


def test_read_only_store_and_folder(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    path = folder / "c.sqlite3"
    Store(path).close()
    out = _in_read_only_folder(folder, path, folder / "new.sqlite3").splitlines()
    assert len(out) == 2, out
    assert out[0].startswith("RO ") and "read-only" in out[0]
    assert out[1].startswith("RO ") and "cannot create" in out[1]
    blocked = tmp_path / "file-not-dir"
    blocked.write_text("x")
    with pytest.raises(StoreUnavailable, match="folder"):
        Store(blocked / "sub" / "c.sqlite3")


def test_locked_store_says_busy(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite3"
    s = Store(path, busy_timeout_ms=100)
    action = _pending(s)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(StoreBusy, match="busy"):
            decisions.approve(s, action.token)
    finally:
        holder.execute("ROLLBACK")
    assert decisions.approve(s, action.token).ok  # nothing was lost or half-done


_RACER = textwrap.dedent(
    """
    import json, sys, time
    from patch_tui.approvals import decisions
    from patch_tui.approvals.store import Store
    path, token, verb, go = sys.argv[1:5]
    s = Store(path, actor=f"racer{sys.argv[5]}")
    while time.time() < float(go):
        time.sleep(0.001)
    d = decisions.approve(s, token) if verb == "approve" else decisions.claim(s, token)
    print(json.dumps({"ok": d.ok, "why": d.why}))
    """
)


@pytest.mark.parametrize("verb", ["approve", "claim"])
def test_eight_processes_race_exactly_one_wins(tmp_path: Path, verb: str) -> None:
    import time

    path = tmp_path / "c.sqlite3"
    s = Store(path)
    action = _pending(s)
    if verb == "claim":
        decisions.approve(s, action.token)
    go = time.time() + 1.5  # every racer starts its attempt at the same instant
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _RACER, str(path), action.token, verb, str(go), str(i)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for i in range(8)
    ]
    results = [json.loads(p.communicate(timeout=60)[0]) for p in procs]
    assert sum(r["ok"] for r in results) == 1
    assert all(r["why"] for r in results if not r["ok"])
    kinds = [e.event for e in s.events(action.token)]
    assert kinds.count("approved" if verb == "approve" else "claimed") == 1


def test_dead_claimer_is_marked_interrupted_never_rerun(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite3"
    s = Store(path)
    action = _pending(s)
    decisions.approve(s, action.token)
    code = (
        "import sys\nfrom patch_tui.approvals import decisions\n"
        "from patch_tui.approvals.store import Store\n"
        "assert decisions.claim(Store(sys.argv[1]), sys.argv[2]).ok\n"
    )
    subprocess.run([sys.executable, "-c", code, str(path), action.token], check=True, timeout=60)
    assert s.get(action.token).status == "executing"
    assert s.mark_interrupted() == 1
    assert s.get(action.token).status == "interrupted"
    again = decisions.claim(s, action.token)
    assert not again.ok and again.code == "already_used" and "interrupted" in again.why
    # A live claimer (this process) is left alone.
    other = _pending(s)
    decisions.approve(s, other.token)
    assert decisions.claim(s, other.token).ok
    assert s.mark_interrupted() == 0 and s.get(other.token).status == "executing"


def test_recent_outputs_keep_last_twenty(store: Store) -> None:
    for i in range(25):
        store.record_output(f"tool{i}", f"output number {i:02d} long enough")
    recent = store.recent_outputs()
    assert len(recent) == 20
    assert recent[0] == ("tool24", "output number 24 long enough")
    assert recent[-1][0] == "tool5"


def test_tokens_never_start_with_a_dash() -> None:
    # A leading "-" would make `patch-tui inbox approve TOKEN` read the token as an option;
    # with the plain encoding about 1 token in 64 did (2,000 draws: ~31 expected).
    from patch_tui.approvals.store import new_token

    tokens = [new_token() for _ in range(2000)]
    assert all(len(t) == 32 and not t.startswith("-") for t in tokens)
    assert len(set(tokens)) == len(tokens)


def test_a_store_from_before_guard_is_migrated_keeping_its_actions(tmp_path: Path) -> None:
    """Schema 1 (no upstream_token) opens as the current schema: rows and decisions kept."""
    from patch_tui.approvals.store import MIGRATIONS, _split_sql

    path = tmp_path / "old.sqlite3"
    conn = sqlite3.connect(path)
    for statement in _split_sql(MIGRATIONS[0]):
        conn.execute(statement)
    conn.execute(
        "INSERT INTO actions (token, kind, tool, version, source_sha256, args_json, args_sha256, "
        "reason, status, created_at, expires_at) VALUES ('tok', 'human_confirm', 'send_mail', "
        "'1.0.0', ?, '{\"to\": \"bob\"}', ?, 'why', 'rejected', '2026-01-01T00:00:00.000Z', "
        "'2099-01-01T00:00:00.000Z')",
        (SHA, args_sha256({"to": "bob"})),
    )
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    with Store(path) as store:
        old = store.get("tok")
        assert old is not None and old.status == "rejected" and old.args == {"to": "bob"}
        assert old.upstream_token is None
        fresh = _pending(store, upstream_token="UPSTREAM-TOKEN")
        assert store.get(fresh.token).upstream_token == "UPSTREAM-TOKEN"
        # The upstream token is guard's business: never in the listing a person or agent reads.
        assert "UPSTREAM-TOKEN" not in json.dumps(fresh.to_json())
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    conn.close()
