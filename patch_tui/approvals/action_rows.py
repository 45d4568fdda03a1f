"""The store's actions, for both backends (approvals/sql_backend.py): recording a held call,
reading and listing them, their events, and the run's transitions: claim (approved ->
executing, once), refuse (approved -> failed, never run), finish (executing -> executed |
failed). Each transition is one conditional UPDATE inside the backend's write transaction."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from patch_tui.approvals.backend import ClaimCheck
from patch_tui.approvals.connection import _pid_start
from patch_tui.approvals.schema import _ACTION_COLUMNS, _event_detail
from patch_tui.approvals.sql_backend import Conn, SqlBackend, read_action
from patch_tui.approvals.values import (
    KINDS,
    OPEN_STATUSES,
    STATUSES,
    Action,
    ActionStatus,
    Decision,
    Event,
    Kind,
    StoreError,
    _not_pending_code,
    _not_pending_why,
    _refuse_damaged,
    args_sha256,
    canonical_json,
    new_token,
    now_iso,
)


def _status_filter(statuses: Iterable[str], params: list[Any]) -> str:
    """The WHERE clause for these statuses (their values appended to `params`); ValueError
    naming an unknown one."""
    wanted = [str(s) for s in statuses]
    unknown = [s for s in wanted if s not in STATUSES]
    if unknown:
        raise ValueError(f"unknown status {unknown[0]!r}; expected one of {STATUSES}")
    params.extend(wanted)
    return f"status IN ({', '.join('?' * len(wanted))})" if wanted else "1 = 0"


class ActionRows(SqlBackend):
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
            action_id = self._insert_id(
                conn,
                "INSERT INTO actions (token, kind, tool, version, source_sha256, tool_path, "
                "args_json, args_sha256, reason, details_json, status, created_at, expires_at, "
                "upstream_token) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?)",
                (
                    token,
                    str(kind),
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
            self._event(
                conn, action_id, "created", created, kind=str(kind), tool=tool, expires_at=expires
            )
            found = self._select_action(conn, token)
        assert found is not None
        return found[1]

    def get(self, token: str) -> Action | None:
        rows = self._read(f"SELECT {_ACTION_COLUMNS} FROM actions WHERE token = ?", (token,))
        return read_action(rows[0]) if rows else None

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
            where.append(_status_filter(statuses, params))
        if tool is not None:
            where.append("tool = ?")
            params.append(tool)
        sql = f"SELECT {_ACTION_COLUMNS} FROM actions"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY created_at DESC, id DESC"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(int(limit))
        return [read_action(r) for r in self._read(sql, params)]

    def count_actions(self, statuses: Iterable[str] | None = (ActionStatus.PENDING,)) -> int:
        """How many actions `list_actions(statuses)` lists (every status for None)."""
        if statuses is None:
            return int(self._read("SELECT count(*) FROM actions")[0][0])
        params: list[Any] = []
        where = _status_filter(statuses, params)
        return int(self._read(f"SELECT count(*) FROM actions WHERE {where}", params)[0][0])

    def pending_count(self) -> int:
        rows = self._read(
            "SELECT count(*) FROM actions WHERE status = 'pending' AND expires_at > ?",
            (now_iso(self._now()),),
        )
        return int(rows[0][0])

    def next_expiry(self) -> str | None:
        """The earliest expiry of a pending or approved action (what `settle` will expire next)."""
        rows = self._read(
            "SELECT min(expires_at) FROM actions WHERE status IN ('pending', 'approved')"
        )
        return rows[0][0] if rows else None

    def events(self, token: str | None = None, limit: int | None = None) -> list[Event]:
        """The event log, oldest first (with `limit`: the last ones)."""
        sql = (
            "SELECT e.id, a.token, e.at, e.actor, e.event, e.detail "
            "FROM events e JOIN actions a ON a.id = e.action_id"
        )
        params: list[Any] = []
        if token is not None:
            sql += " WHERE a.token = ?"
            params.append(token)
        if limit is not None:
            sql = f"SELECT * FROM ({sql} ORDER BY e.id DESC LIMIT ?) last ORDER BY 1"
            params.append(int(limit))
        else:
            sql += " ORDER BY e.id"
        return [
            Event(id=r[0], token=r[1], at=r[2], actor=r[3], event=r[4], detail=_event_detail(r[5]))
            for r in self._read(sql, params)
        ]

    # -- execution ----------------------------------------------------------------------------

    def claim(self, token: str, check: ClaimCheck) -> Decision:
        """approved and unexpired -> executing, atomically, for exactly one caller. Records this
        process's pid (and start time) so a crash mid-run is later marked interrupted.

        Only an approval `check` accepts is claimed: it gets the action, its signatures and the
        grant that approved it (if one did) as they are inside this transaction, and returns
        None or a refusal (code, why). Refused, the action becomes `failed` (result: the
        refusal) with a `refused` event, and the Decision's code is the refusal's."""
        at = now_iso(self._now())
        with self._write() as conn:
            found = self._select_action(conn, token, lock=True)
            if found is None:
                return Decision(False, None, "unknown token", "unknown_token")
            action_id, action = found
            if action.status == ActionStatus.APPROVED and action.expires_at > at:
                refused = self._claim_refusal(conn, action_id, action, at, check)
                if refused is not None:
                    return refused
            cur = conn.execute(
                "UPDATE actions SET status = 'executing', claimed_at = ?, claimed_by = ?, "
                "claim_host = ?, claim_pid = ?, claim_pid_start = ? "
                "WHERE id = ? AND status = 'approved' AND expires_at > ?",
                (at, self.actor, self._host, self._pid, _pid_start(self._pid), action_id, at),
            )
            current = self._select_action(conn, token)
            if cur.rowcount == 1:
                changed = _changed_by_claim(action, current[1] if current else None)
                if changed:
                    # The database answered the claim's UPDATE with another call (a trigger):
                    # what runs must be what the signatures were checked against.
                    why = f"the store changed its {changed} as it was claimed"
                    return self._refuse(conn, action_id, action, at, "tampered", why, "executing")
            assert current is not None
            action = current[1]
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
            return self._not_open(conn, action_id, action, at)

    def _claim_refusal(
        self, conn: Conn, action_id: int, action: Action, at: str, check: ClaimCheck
    ) -> Decision | None:
        """Why this live approval may not run (it becomes failed), or None: it may."""
        if action.damaged:
            return _refuse_damaged(action, "run")
        # An approval runs once. The status alone says so, and anything that can write the
        # store can set it back to approved (the signatures still verify, for this very call,
        # until it expires): the append-only events remember the first claim. (Red team:
        # `UPDATE actions SET status = 'approved'` re-ran an executed call.)
        earlier = conn.execute(
            "SELECT at FROM events WHERE action_id = ? AND event = 'claimed' LIMIT 1",
            (action_id,),
        ).fetchone()
        if earlier is not None:
            why = f"it was already run once (claimed at {earlier[0]}); the store was edited"
            return self._refuse(conn, action_id, action, at, "tampered", why)
        grant = None
        if action.grant_id is not None:
            grant = self._grant_in(conn, int(action.grant_id))
        problem = check(action, self._signatures(conn, action_id), grant)
        if problem is not None:
            return self._refuse(conn, action_id, action, at, *problem)
        return None

    def _refuse(
        self,
        conn: Conn,
        action_id: int,
        action: Action,
        at: str,
        code: str,
        why: str,
        status: str = "approved",
    ) -> Decision:
        """approved (or `status`) -> failed, never run: the approval does not hold. The result
        says why, so the inbox shows it; the `refused` event records who tried."""
        result = {"status": code, "error": f"not run: {why}", "why": why}
        conn.execute(
            "UPDATE actions SET status = 'failed', finished_at = ?, result_json = ? "
            "WHERE id = ? AND status = ?",
            (at, canonical_json(result), action_id, status),
        )
        self._event(conn, action_id, "refused", at, code=code, why=why)
        found = self._select_action(conn, action.token)
        refused = found[1] if found is not None else action  # gone: a trigger renamed it
        return Decision(False, replace(refused, tampered=why), why, code)

    def finish(
        self, token: str, ok: bool, result: Any, ran: dict[str, Any] | None = None
    ) -> Action:
        """executing -> executed (ok) or failed, with the result (any JSON value). `ran`: what
        ran (run id, source and args sha256), kept in the event."""
        at = now_iso(self._now())
        status = str(ActionStatus.EXECUTED if ok else ActionStatus.FAILED)
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

    # -- why a transition did not happen ------------------------------------------------------

    def _not_open(self, conn: Conn, action_id: int, action: Action, at: str) -> Decision:
        """The answer for an action no decision or claim could change: expired (marked so now,
        if its expiry passed while it was open), still awaiting approval, or already decided."""
        if action.status in OPEN_STATUSES and action.expires_at <= at:
            action = self._expire_one(conn, action_id, action, at)
            return Decision(False, action, f"expired at {action.expires_at}", "expired")
        if action.status == ActionStatus.PENDING:
            return Decision(False, action, "awaiting approval", "awaiting_approval")
        return Decision(False, action, _not_pending_why(action), _not_pending_code(action))

    def _expire_one(self, conn: Conn, action_id: int, action: Action, at: str) -> Action:
        cur = conn.execute(
            "UPDATE actions SET status = 'expired' WHERE id = ? AND status = ?",
            (action_id, str(action.status)),
        )
        if cur.rowcount == 1:
            self._event(conn, action_id, "expired", at, was=str(action.status))
        found = self._select_action(conn, action.token)
        assert found is not None
        return found[1]


# What a claim's signatures (or grant) were checked against: the call that runs.
_CLAIMED_CALL = (
    "token",
    "kind",
    "tool",
    "tool_path",
    "version",
    "source_sha256",
    "args_sha256",
    "upstream_token",
    "grant_id",
    "damaged",
)


def _changed_by_claim(checked: Action, claimed: Action | None) -> str | None:
    """What of the call differs between the row a claim checked and the row its UPDATE left
    (a database trigger can rewrite it), in words; None when it is the same call."""
    if claimed is None:
        return "token"
    changed = [f for f in _CLAIMED_CALL if getattr(checked, f) != getattr(claimed, f)]
    try:
        same_args = canonical_json(checked.args) == canonical_json(claimed.args)
    except (TypeError, ValueError, RecursionError):
        same_args = False
    if not same_args and "args_sha256" not in changed:
        changed.append("args")
    return ", ".join(changed) or None
