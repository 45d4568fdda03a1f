"""Red team (issue 28): the runner's memory of its claims (approvals/ran_here.py) against a store
whose clock is not this machine's. A store that says it is 40 days later, for one claim, must
not make the memory let go of a call it ran, which the store then sets back to approved and
hands in again at its true time, while the approval still verifies."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from patch_tui.approvals import decisions, keys
from patch_tui.approvals.approvers import parse_approvers
from patch_tui.approvals.store import Store


def _hold(store: Store, text: str) -> Any:
    return store.create_pending(
        "human_confirm", "send_mail", "1.0.0", "d" * 64, {"text": text}, "irreversible",
        tool_path="/t/send_mail.py",
    )  # fmt: skip


def test_a_store_clock_set_forward_does_not_make_the_runner_forget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    alice = keys.create_key_file(tmp_path / "keys" / "alice_key", "alice@test")
    trust = parse_approvers({"approver": [{"name": "alice", "key": alice.public_line}]})
    path = tmp_path / "store.sqlite3"
    with Store(path, actor="alice@test") as store:
        first = _hold(store, "pay once")
        assert decisions.approve(store, first.token, signer=alice, approvers=trust).ok
        assert decisions.claim(store, first.token, trust).ok
        store.finish(first.token, True, {"paid": 1})

        # The store's clock jumps ahead past the memory's retention for one call of its own.
        later = time.time() + 40 * 24 * 3600
        monkeypatch.setattr(store, "_now", lambda: later)
        second = _hold(store, "another")
        assert decisions.approve(store, second.token, signer=alice, approvers=trust).ok
        assert decisions.claim(store, second.token, trust).ok
        store.finish(second.token, True, {})
        monkeypatch.setattr(store, "_now", time.time)

    # Then it erases the first run and sets the call back to approved (still signed, unexpired).
    with sqlite3.connect(path) as db:
        db.execute("DROP TRIGGER events_no_delete")
        db.execute("DELETE FROM events WHERE event = 'claimed'")
        db.execute("UPDATE actions SET status = 'approved' WHERE token = ?", (first.token,))
    with Store(path, actor="alice@test") as store:
        again = decisions.claim(store, first.token, trust)
    assert not again.ok and again.code == "tampered" and "already ran it" in again.why


def test_an_approval_that_would_outlast_the_memory_runs_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A genuine signature whose statement lasts 60 days (an approver's clock set ahead, or
    another signing program): run once, it could be replayed after the memory let it go. It
    never counts, so it never runs."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    alice = keys.create_key_file(tmp_path / "keys" / "alice_key", "alice@test")
    trust = parse_approvers({"approver": [{"name": "alice", "key": alice.public_line}]})
    with Store(tmp_path / "store.sqlite3", actor="alice@test", ttl=60 * 24 * 3600) as store:
        held = _hold(store, "pay once")
        decisions.approve(store, held.token, signer=alice, approvers=trust)
        claimed = decisions.claim(store, held.token, trust)
        assert not claimed.ok, claimed
        standing = decisions.standing(store, store.get(held.token), trust)
    assert not standing.complete
    assert any("longer than any approval may" in why for _, why in standing.problems)
