"""The one store watcher (approvals/watcher.py): what it publishes, when, and what it costs."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from patch_tui.approvals import decisions
from patch_tui.approvals.store import Store, StoreBusy, parse_iso
from patch_tui.approvals.watcher import StoreChanged, StoreWatcher

SHA = "c" * 64


def _hold(store: Store, **kw: Any):
    base: dict[str, Any] = dict(
        kind="human_confirm",
        tool="send_mail",
        version="1.0.0",
        source_sha256=SHA,
        args={"to": "bob@example.com"},
        reason="irreversible",
    )
    base.update(kw)
    return store.create_pending(**base)


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def store(tmp_path: Path):
    s = Store(tmp_path / "state" / "store.sqlite3", actor="tui", busy_timeout_ms=200)
    yield s
    s.close()


def test_first_look_counts_and_announces_nothing(store: Store) -> None:
    _hold(store)
    _hold(store)
    watcher = StoreWatcher(lambda: store)
    first = watcher.poll()
    assert isinstance(first, StoreChanged)
    assert first.pending_count == 2 and first.arrived == () and first.error is None
    assert first.version == store.data_version()
    assert watcher.poll() is None  # nothing changed: nothing published


def test_arrivals_and_decisions_from_another_process(store: Store, tmp_path: Path) -> None:
    watcher = StoreWatcher(lambda: store)
    assert watcher.poll() is not None
    with Store(store.path, actor="cli") as other:
        a = _hold(other, tool="first")
        b = _hold(other, tool="second")
        changed = watcher.poll()
        assert changed is not None and changed.pending_count == 2
        assert [x.token for x in changed.arrived] == [a.token, b.token]  # oldest first
        assert decisions.reject(other, a.token).ok
        changed = watcher.poll()
        assert changed is not None and changed.pending_count == 1 and changed.arrived == ()
    assert watcher.poll() is None


def test_expiry_is_settled_by_the_watcher_when_due(store: Store) -> None:
    action = _hold(store, ttl=0.6)
    due = parse_iso(action.expires_at)
    clock = Clock(due - 0.5)
    watcher = StoreWatcher(lambda: store, clock=clock)
    first = watcher.poll()
    assert first is not None and first.pending_count == 1 and first.next_due == due
    # Nothing committed and nothing due: the watcher does not even settle.
    assert watcher.poll() is None
    while time.time() <= due:  # the store's own clock must pass the expiry too
        time.sleep(0.05)
    assert watcher.poll() is None  # the watcher's clock says not due yet: still one read
    assert store.get(action.token).status == "pending"  # reading never expires anything
    clock.now = due + 0.01
    changed = watcher.poll()
    assert changed is not None and changed.pending_count == 0 and changed.next_due == float("inf")
    assert store.get(action.token).status == "expired"
    assert [e.event for e in store.events(action.token)] == ["created", "expired"]


def test_a_quiet_poll_is_one_read_and_never_writes(store: Store) -> None:
    _hold(store)
    watcher = StoreWatcher(lambda: store)
    watcher.poll()
    observer = sqlite3.connect(store.path)
    before = observer.execute("PRAGMA data_version").fetchone()[0]
    statements: list[str] = []
    store._conn.set_trace_callback(statements.append)
    for _ in range(5):
        assert watcher.poll() is None
    store._conn.set_trace_callback(None)
    assert statements == ["PRAGMA data_version"] * 5
    assert observer.execute("PRAGMA data_version").fetchone()[0] == before
    observer.close()


def test_no_store_file_means_zero_and_no_file_is_created(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite3"
    opened: list[Store] = []

    def open_store() -> Store | None:
        if not path.exists():
            return None
        if not opened:
            opened.append(Store(path, actor="tui"))
        return opened[0]

    watcher = StoreWatcher(open_store)
    first = watcher.poll()
    assert first is not None and first.version is None and first.pending_count == 0
    assert watcher.poll() is None and not path.exists()
    with Store(path, actor="cli") as other:
        a = _hold(other)
    changed = watcher.poll()
    # The store appeared: what is in it arrived (the watcher knew of nothing before).
    assert changed is not None and changed.pending_count == 1
    assert [x.token for x in changed.arrived] == [a.token]
    opened[0].close()


def test_a_busy_store_is_said_and_retried(store: Store) -> None:
    action = _hold(store, ttl=0.3)
    watcher = StoreWatcher(lambda: store)
    assert watcher.poll() is not None
    while time.time() <= parse_iso(action.expires_at):
        time.sleep(0.05)
    lock = sqlite3.connect(store.path, isolation_level=None)
    lock.execute("BEGIN IMMEDIATE")  # another process holds the write lock: expiring must wait
    busy = watcher.poll()
    assert busy is not None and busy.busy and isinstance(busy.error, StoreBusy)
    assert busy.pending_count == 1  # the last count is kept meanwhile
    lock.execute("ROLLBACK")
    lock.close()
    recovered = watcher.poll()
    assert recovered is not None and recovered.error is None and recovered.pending_count == 0
    assert store.get(action.token).status == "expired"
