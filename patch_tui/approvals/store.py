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
permissions), connection.py (opening, the write transaction, events), decision_rows.py (signed
decisions), grant_rows.py (grants), and this module (the actions API); every name callers used is
still importable from here. It implements approvals/backend.py's `ApprovalStore`.

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

import json
import math
import sqlite3
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from patch_tui.approvals.backend import ClaimCheck
from patch_tui.approvals.connection import _pid_start
from patch_tui.approvals.decision_rows import DecisionRows
from patch_tui.approvals.reading import ReadingSqlite
from patch_tui.approvals.schema import (
    _ACTION_COLUMNS,
    MIGRATIONS,
    SCHEMA_VERSION,
    _event_detail,
    _split_sql,
)
from patch_tui.approvals.settling import Settling
from patch_tui.approvals.store_files import store_files
from patch_tui.approvals.values import (
    BUSY_TIMEOUT_MS,
    DEFAULT_TTL,
    KINDS,
    OPEN_STATUSES,
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
    _not_pending_code,
    _not_pending_why,
    _refuse_damaged,
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


class Store(ReadingSqlite, Settling, DecisionRows):
    """The confirmation store. Safe to share between threads (one connection behind a lock);
    every process opens its own `Store` on the same file."""

    # -- creating and reading -----------------------------------------------------------------

    def create_pending(
        self,
        kind: Kind | str,
        tool: str,
        version: str,
        source_sha256: str,
        args: dict[str, Any],
        reason: str,
        *,
        tool_path: str | None = None,
        details: dict[str, Any] | None = None,
        ttl: float | None = None,
        upstream_token: str | None = None,
    ) -> Action:
        """Record a held call. `args` must be JSON (no NaN); it is kept exactly, key order too."""
        if kind not in KINDS:
            raise ValueError(f"unknown confirmation kind {kind!r}; expected one of {KINDS}")
        if not isinstance(args, dict):
            raise ValueError("args must be a JSON object")
        try:
            args_json = json.dumps(args, ensure_ascii=False, allow_nan=False)
            details_json = None if details is None else canonical_json(details)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"args are not plain JSON: {exc}") from None
        now = self._now()
        life = self.ttl if ttl is None else ttl
        if not math.isfinite(life) or life < 0:
            raise ValueError("ttl must be a finite number of seconds >= 0")
        token = new_token()
        created, expires = now_iso(now), now_iso(now + life)
        with self._write() as conn:
            cur = conn.execute(
                "INSERT INTO actions (token, kind, tool, version, source_sha256, tool_path, "
                "args_json, args_sha256, reason, details_json, status, created_at, expires_at, "
                "upstream_token) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?)",
                (
                    token,
                    kind,
                    tool,
                    version,
                    source_sha256,
                    tool_path,
                    args_json,
                    args_sha256(args),
                    reason,
                    details_json,
                    created,
                    expires,
                    upstream_token,
                ),
            )
            action_id = int(cur.lastrowid or 0)
            self._event(
                conn, action_id, "created", created, kind=kind, tool=tool, expires_at=expires
            )
        found = self.get(token)
        assert found is not None
        return found

    def get(self, token: str) -> Action | None:
        rows = self._read(f"SELECT id, {_ACTION_COLUMNS} FROM actions WHERE token = ?", (token,))
        return self._annotate(rows)[0] if rows else None

    def list_actions(
        self,
        statuses: Iterable[str] | None = (ActionStatus.PENDING,),
        tool: str | None = None,
        limit: int | None = None,
    ) -> list[Action]:
        """Newest first; `statuses=None` lists every status. A pure read: it never writes, so
        a listing shows the store as it is. Call `settle()` first where a listed "pending" must
        really be approvable right now (the CLI's list, the inbox's watcher)."""
        where: list[str] = []
        params: list[Any] = []
        if statuses is not None:
            wanted = list(statuses)
            unknown = [s for s in wanted if s not in STATUSES]
            if unknown:
                raise ValueError(f"unknown status {unknown[0]!r}; expected one of {STATUSES}")
            where.append(f"status IN ({', '.join('?' * len(wanted))})")
            params.extend(wanted)
        if tool is not None:
            where.append("tool = ?")
            params.append(tool)
        sql = f"SELECT id, {_ACTION_COLUMNS} FROM actions"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY created_at DESC, id DESC"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(int(limit))
        return self._annotate(self._read(sql, params))

    def count_actions(self, statuses: Iterable[str] | None = (ActionStatus.PENDING,)) -> int:
        """How many actions `list_actions(statuses)` lists (every status for None)."""
        if statuses is None:
            return int(self._read("SELECT count(*) FROM actions")[0][0])
        wanted = list(statuses)
        unknown = [s for s in wanted if s not in STATUSES]
        if unknown:
            raise ValueError(f"unknown status {unknown[0]!r}; expected one of {STATUSES}")
        sql = f"SELECT count(*) FROM actions WHERE status IN ({', '.join('?' * len(wanted))})"
        return int(self._read(sql, wanted)[0][0])

    def pending_count(self) -> int:
        now = now_iso(self._now())
        rows = self._read(
            "SELECT count(*) FROM actions WHERE status = 'pending' AND expires_at > ?", (now,)
        )
        return int(rows[0][0])

    def next_expiry(self) -> str | None:
        """The earliest expiry of a pending or approved action (what `settle` will expire next)."""
        rows = self._read(
            "SELECT min(expires_at) FROM actions WHERE status IN ('pending', 'approved')"
        )
        return rows[0][0] if rows else None

    def data_version(self) -> int:
        """A number that changes whenever any process commits a change to the store.

        `PRAGMA data_version` moves on other connections' commits only, so our own commits are
        added as a counter. Both only grow, so their sum changes exactly when either does."""
        rows = self._read("PRAGMA data_version")
        return int(rows[0][0]) + self._local_commits

    def events(self, token: str | None = None, limit: int | None = None) -> list[Event]:
        sql = (
            "SELECT e.id, a.token, e.at, e.actor, e.event, e.detail "
            "FROM events e JOIN actions a ON a.id = e.action_id"
        )
        params: list[Any] = []
        if token is not None:
            sql += " WHERE a.token = ?"
            params.append(token)
        sql += " ORDER BY e.id"
        if limit is not None:
            sql = f"SELECT * FROM ({sql.replace(' ORDER BY e.id', ' ORDER BY e.id DESC')} LIMIT ?) ORDER BY 1"
            params.append(int(limit))
        return [
            Event(id=r[0], token=r[1], at=r[2], actor=r[3], event=r[4], detail=_event_detail(r[5]))
            for r in self._read(sql, params)
        ]

    # -- execution ----------------------------------------------------------------------------

    def claim(self, token: str, check: ClaimCheck) -> Decision:
        """approved and unexpired -> executing, atomically, for exactly one caller. Records this
        process's pid (and start time) so a crash mid-run is later marked interrupted.

        Only an approval `check` accepts is claimed: it gets the action, its signatures and the
        grant that approved it (if one did) as they are under this transaction's lock, and
        returns None or a refusal (code, why). Refused, the action becomes `failed` (result: the
        refusal) with a `refused` event, and the Decision's code is the refusal's."""
        now = self._now()
        at = now_iso(now)
        with self._write() as conn:
            found = self._select_action(conn, token)  # under the write lock: no race
            if found is None:
                return Decision(False, None, "unknown token", "unknown_token")
            action_id, current = found
            if current.status == ActionStatus.APPROVED and current.expires_at > at:
                if current.damaged:
                    return _refuse_damaged(current, "run")
                # An approval runs once. The status alone says so, and anything that can write
                # the store can set it back to approved (the signatures still verify, for this
                # very call, until it expires): the append-only events remember the first claim.
                # (Red team: `UPDATE actions SET status = 'approved'` re-ran an executed call.)
                earlier = conn.execute(
                    "SELECT at FROM events WHERE action_id = ? AND event = 'claimed' LIMIT 1",
                    (action_id,),
                ).fetchone()
                if earlier is not None:
                    why = f"it was already run once (claimed at {earlier[0]}); the store was edited"
                    return self._refuse(conn, action_id, current, at, "tampered", why)
                grant = None if current.grant_id is None else self._grant_in(conn, current.grant_id)
                problem = check(current, self._signatures(conn, action_id), grant)
                if problem is not None:
                    return self._refuse(conn, action_id, current, at, *problem)
            cur = conn.execute(
                "UPDATE actions SET status = 'executing', claimed_at = ?, claimed_by = ?, "
                "claim_host = ?, claim_pid = ?, claim_pid_start = ? "
                "WHERE id = ? AND status = 'approved' AND expires_at > ?",
                (at, self.actor, self._host, self._pid, _pid_start(self._pid), action_id, at),
            )
            found = self._select_action(conn, token)
            assert found is not None
            action = found[1]
            if cur.rowcount == 1:
                self._event(
                    conn,
                    action_id,
                    "claimed",
                    at,
                    pid=self._pid,
                    host=self._host,
                    args_sha256=action.args_sha256,
                    source_sha256=action.source_sha256,
                )
                return Decision(True, action)
            if action.status in OPEN_STATUSES and action.expires_at <= at:
                action = self._expire_one(conn, action_id, action, at)
                return Decision(False, action, f"expired at {action.expires_at}", "expired")
            if action.status == ActionStatus.PENDING:
                return Decision(False, action, "awaiting approval", "awaiting_approval")
            return Decision(False, action, _not_pending_why(action), _not_pending_code(action))

    def _refuse(
        self, conn: sqlite3.Connection, action_id: int, action: Action, at: str, code: str, why: str
    ) -> Decision:
        """approved -> failed, never run: the approval does not hold. The result says why, so
        the inbox shows it; the `refused` event records who tried."""
        result = {"status": code, "error": f"not run: {why}", "why": why}
        conn.execute(
            "UPDATE actions SET status = 'failed', finished_at = ?, result_json = ? "
            "WHERE id = ? AND status = 'approved'",
            (at, canonical_json(result), action_id),
        )
        self._event(conn, action_id, "refused", at, code=code, why=why)
        found = self._select_action(conn, action.token)
        assert found is not None
        return Decision(False, replace(found[1], tampered=why), why, code)

    def finish(
        self, token: str, ok: bool, result: Any, ran: dict[str, Any] | None = None
    ) -> Action:
        """executing -> executed (ok) or failed, with the result (any JSON value). `ran`: what
        ran (run id, source and args sha256), kept in the event."""
        at = now_iso(self._now())
        status = ActionStatus.EXECUTED if ok else ActionStatus.FAILED
        try:
            result_json = canonical_json(result)
        except (TypeError, ValueError):
            result_json = canonical_json(
                {"error": "result is not JSON", "repr": repr(result)[:2000]}
            )
        with self._write() as conn:
            cur = conn.execute(
                "UPDATE actions SET status = ?, finished_at = ?, result_json = ? "
                "WHERE token = ? AND status = 'executing'",
                (status, at, result_json, token),
            )
            found = self._select_action(conn, token)
            if found is None:
                raise StoreError(f"unknown token {token[:8]}...")
            action_id, action = found
            if cur.rowcount != 1:
                raise StoreError(
                    f"action {token[:8]}... is {action.status}, not executing; result not recorded"
                )
            self._event(conn, action_id, status, at, **(ran or {}))
        return action
