"""The confirmation store: one SQLite file shared by every process (MCP server, CLI, TUI).

API (everything a caller needs; all times are ISO 8601 UTC strings like
"2026-11-21T10:20:36.123Z", fixed width so they also sort as text):

    store = Store(path, actor="tui", ttl=300)       # opens or creates; also a context manager
    action = store.create_pending(kind, tool, version, source_sha256, args, reason,
                                  tool_path=None, details=None, ttl=None)   -> Action
    store.get(token)                                  -> Action | None
    store.list_actions(statuses=("pending",), tool=None, limit=None)  -> list[Action], newest first
                                                         (statuses=None: every status); a pure
                                                         read: call settle() first where a listed
                                                         "pending" must be approvable now
    store.pending_count()                             -> int
    store.add_decision(token, signature, complete=..., args=None, shown_args_sha256=None)
                                                      -> Decision   a signed approve/reject
    store.decisions(token)                            -> list[Signature]
    store.approve_by_grant(token, grant_id, check)    -> Decision   (approvals/grants.py)
    store.claim(token, check)                         -> Decision   approved+unexpired -> executing,
                                                         only if check(...) accepts (see below)
    store.add_grant / add_grant_signature / revoke_grant / get_grant / list_grants
    store.finish(token, ok, result, ran=None)         -> Action     executing -> executed | failed
    store.mark_interrupted()                          -> int        dead claimers -> interrupted
    store.expire_due()                                -> int        pending/approved past expiry -> expired
    store.settle()                                    -> int        expire_due() + mark_interrupted()
    store.next_expiry()                               -> str | None the earliest pending/approved expiry
    store.events(token=None, limit=None)              -> list[Event], oldest first
    store.data_version()                              -> int        changes whenever anything commits
    store.record_output(tool, output) / store.recent_outputs()      the taint gate's shared memory
    store.close()

States: pending -> approved | rejected | expired; approved -> executing (claimed by one
confirm_action call) | expired; executing -> executed | failed | interrupted (the claiming process
died; never re-run automatically). Every change is one conditional UPDATE inside one
`BEGIN IMMEDIATE` transaction, so two approvers or two confirmers can never both win, and each
change appends a row to the `events` table (actor = OS user @ process label, time, event, detail).

A live UI polls through one StoreWatcher (approvals/watcher.py): `data_version()` every 250-500
ms, a re-read only when the number changed, and `settle()` when the next expiry is due.

Status and kind are StrEnums (ActionStatus, ActionKind in approvals/values.py) whose values are
the strings stored in the database and written in every JSON answer. The store's code is split
by concern: values.py (records, errors), schema.py (migrations, rows), store_files.py (file
permissions), connection.py (opening, the write transaction: SQLite's dialect), and the row
modules the PostgreSQL store shares (approvals/sql_backend.py: action_rows, decision_rows,
grant_rows, settling, reading, output_rows); this module assembles them, and every name callers
used is still importable from here. It implements approvals/backend.py's `ApprovalStore`.

Errors are `StoreError` subclasses whose message is fit to show as is: `StoreBusy` (another process
held the lock past the busy timeout), `StoreUnavailable` (cannot open: missing folder that cannot be
created, unreadable, newer schema), `StoreReadOnly` and `StoreCorrupt` (both `StoreUnavailable`).
A corrupt file is never rewritten or replaced: recorded decisions are worth more than a working
inbox, so the message tells the person to move it aside.

An approval is a person's signature (approvals/decisions.py signs and verifies; this store keeps
no secret and does no crypto). `claim` runs the decisions service's check inside its transaction:
an approval without a good signature by a trusted approver over exactly this call (token, kind,
tool, path, source and args sha256, expiry, upstream token) refuses with `tampered` (other args:
`args_changed`; an approver not allowed the tool: `not_allowed`; short of quorum:
`awaiting_approval`). Either way the action becomes `failed` with that answer as its result and a
`refused` event, so it shows in the inbox instead of staying approved. Keeping every tool run away
from the store's folder is still the sandbox's part (`store_files` lists what it must hide), but a
tool that reached the store could no longer approve anything.

The store protects itself: it refuses a file (or its -wal, -shm, key) that another user owns or
may write, a folder another user may write (even a sticky one like /tmp: others could plant the
-wal file), or a folder above it that others may write without the sticky bit; the message says
how to fix it. New stores are created 0600 in a folder created 0700.

Why the token is stored in clear, not hashed: the token is a handle on an action, not a
credential. It authorizes nothing by itself: what authorizes a run is the approval row, bound to
the exact args (sha256 of their canonical JSON) and to the tool's source sha256. Anyone able to read
this file (mode 0600, the user's own) can also write it and approve directly, so a hash would
protect nothing (what stops a forged approval is the signature above), while `inbox list --json` and `inbox approve TOKEN` need the token itself. Event
rows refer to actions by row id, and logs print only a token's first 8 characters.

Durability: `synchronous=FULL` on every commit (decisions must survive a power cut; the cost,
one fsync per change, is measured in bench/store_bench.py).
"""

from __future__ import annotations

import sqlite3

from patch_tui.approvals.action_rows import ActionRows
from patch_tui.approvals.connection import StoreConnection
from patch_tui.approvals.decision_rows import DecisionRows
from patch_tui.approvals.grant_rows import GrantRows
from patch_tui.approvals.output_rows import OutputRows
from patch_tui.approvals.reading import ReadingRows
from patch_tui.approvals.records import Signature
from patch_tui.approvals.schema import (
    MIGRATIONS,
    SCHEMA_VERSION,
    _split_sql,
    _translate,
)
from patch_tui.approvals.settling import Settling
from patch_tui.approvals.store_files import store_files
from patch_tui.approvals.values import (
    BUSY_TIMEOUT_MS,
    DEFAULT_TTL,
    KINDS,
    STATUSES,
    Action,
    ActionKind,
    ActionStatus,
    Decision,
    Event,
    Kind,
    StoreBusy,
    StoreCorrupt,
    StoreError,
    StoreReadOnly,
    StoreUnavailable,
    StoreUnsafe,
    args_sha256,
    canonical_json,
    default_actor,
    new_token,
    now_iso,
    parse_iso,
)

# Callers import these from here, as they always did.
__all__ = [
    "BUSY_TIMEOUT_MS",
    "DEFAULT_TTL",
    "KINDS",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "STATUSES",
    "Action",
    "ActionKind",
    "ActionStatus",
    "Decision",
    "Event",
    "Kind",
    "Store",
    "StoreBusy",
    "StoreCorrupt",
    "StoreError",
    "StoreReadOnly",
    "StoreUnavailable",
    "StoreUnsafe",
    "_split_sql",
    "args_sha256",
    "canonical_json",
    "default_actor",
    "new_token",
    "now_iso",
    "parse_iso",
    "store_files",
]


class Store(
    ActionRows, DecisionRows, GrantRows, Settling, ReadingRows, OutputRows, StoreConnection
):
    """The confirmation store. Safe to share between threads (one connection behind a lock);
    every process opens its own `Store` on the same file."""

    def data_version(self) -> int:
        """A number that changes whenever any process commits a change to the store.

        `PRAGMA data_version` moves on other connections' commits only, so our own commits are
        added as a counter. Both only grow, so their sum changes exactly when either does."""
        rows = self._read("PRAGMA data_version")
        return int(rows[0][0]) + self._local_commits

    def decisions_many(self, tokens: list[str]) -> dict[str, list[Signature]]:
        """Every listed action's signed decisions, oldest first, in one read per 500 (the inbox
        annotates thousands of pending actions at once; SQLite takes at most 999 parameters)."""
        out: dict[str, list[Signature]] = {t: [] for t in tokens}
        with self._lock:
            try:
                for start in range(0, len(tokens), 500):
                    chunk = tokens[start : start + 500]
                    rows = self._conn.execute(
                        "SELECT a.token, s.approver, s.decision, s.at, s.envelope, s.note "
                        "FROM signatures s JOIN actions a ON a.id = s.action_id "
                        f"WHERE a.token IN ({', '.join('?' * len(chunk))}) ORDER BY s.id",
                        chunk,
                    ).fetchall()
                    for r in rows:
                        out[r[0]].append(Signature(r[1], r[2], r[3], r[4], r[5]))
            except sqlite3.Error as exc:
                raise _translate(exc, self.path) from None
        return out
