"""What this machine has run: the runner's own memory of the approvals it claimed.

An approval runs once. The store says so (the action's status, and its append-only `claimed`
event), but the store is only as honest as whoever can write it: a team inbox's database, or
anyone with its superuser, can drop the events' trigger, erase the `claimed` event and set an
executed call back to `approved`; its signatures still verify for this very call until they
expire, so the store alone cannot tell a replay from the first run (tests/e2e/
test_redteam_store.py). This file can: it is kept where the calls run, in the user's state folder
(a tool's sandbox hides that folder, runtime/protected.py), out of the database's reach. Every
claim the decisions service makes is recorded here before the call runs, and a token recorded
already is a replay: refused, never run (decisions.claim).

It guards calls run on this machine against the store. It does not guard against a process of
the user's own, which can rewrite this file as well as a SQLite store beside it; and a store
that replays a call to a runner on another machine meets that machine's memory, not this one's.

A token is kept RETENTION_S after its claim: no approval outlives that (an approval's statement
expires at most `confirm_ttl`, 30 days at most, after it was signed, and it was signed before it
was claimed), and a claim refuses a statement that says it lasts longer (an approver's clock
set ahead, another signing program: decisions.binding_problem). Writes are one SQLite
transaction each (WAL): of two processes recording one token at once, exactly one records it
first.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from patch_tui.approvals.values import Action, Decision, StoreError, now_iso
from patch_tui.settings import paths

if TYPE_CHECKING:
    from patch_tui.approvals.backend import ApprovalStore

FILE_NAME = "ran-here.sqlite3"
RETENTION_S = 31 * 24 * 3600
_SCHEMA = "CREATE TABLE IF NOT EXISTS claimed (token TEXT PRIMARY KEY, at TEXT NOT NULL)"


def default_path() -> Path:
    return paths.state_dir() / FILE_NAME


def record_claim(token: str, path: Path | None = None, clock: float | None = None) -> str | None:
    """Remember that this machine claimed `token` now. None when it had not before; the time of
    the earlier claim when it had (a replay: the caller must not run it). StoreError when the
    memory cannot be written (the call must not run either: a replay could not be told).
    `clock`: this machine's time (tests move it); never a store's, which could say it is weeks
    later and so have the memory let go of a call it ran."""
    where = path or default_path()
    now = time.time() if clock is None else clock
    try:
        where.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        db = sqlite3.connect(where, timeout=10, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(_SCHEMA)
            db.execute("BEGIN IMMEDIATE")
            try:
                earlier = db.execute("SELECT at FROM claimed WHERE token = ?", (token,)).fetchone()
                if earlier is None:
                    db.execute(
                        "INSERT INTO claimed (token, at) VALUES (?, ?)", (token, now_iso(now))
                    )
                    db.execute("DELETE FROM claimed WHERE at < ?", (now_iso(now - RETENTION_S),))
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        finally:
            db.close()
    except (OSError, sqlite3.Error) as exc:
        raise StoreError(
            f"{where}: cannot record that this machine ran {token[:8]}... ({exc}); "
            "it was not run, so a replayed approval cannot run twice"
        ) from None
    return None if earlier is None else str(earlier[0])


def first_time_here(store: ApprovalStore, claimed: Decision) -> Decision:
    """A claim the store granted, unless this machine's memory says it ran this call already:
    then (or when that memory cannot be written) the call is finished unrun, and the refusal
    says why. The store's transaction is over by now; the memory's own transaction decides
    between two claims of one token here."""
    action = claimed.action
    assert action is not None
    try:
        # By this machine's clock, never the store's: a store that said it was weeks later
        # would have the memory let go of a call it ran, then replay it at its true time.
        earlier = record_claim(action.token)
    except StoreError as exc:
        why = str(exc)
        unrun = _finished_unrun(store, action, {"error": f"not run: {why}"})
        return Decision(False, unrun, why, "not_run")
    if earlier is None:
        return claimed
    why = (
        f"this machine already ran it (claimed here at {earlier}); the store was set back to "
        "approved"
    )
    result = {"status": "tampered", "error": f"not run: {why}", "why": why}
    return Decision(False, _finished_unrun(store, action, result), why, "tampered")


def _finished_unrun(store: ApprovalStore, action: Action, result: dict[str, Any]) -> Action:
    """The claimed action finished as failed with `result`; the action as claimed when the store
    will not take that (one that is replaying the call may have set it back meanwhile): the
    refusal stands either way, and nothing ran."""
    try:
        return store.finish(action.token, False, result)
    except StoreError:
        return action
