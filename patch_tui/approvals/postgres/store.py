"""PgStore: the confirmation store on PostgreSQL, the ApprovalStore interface
(approvals/backend.py) with the meaning SQLite's Store gives it, in plain SQL.

Every transition is one conditional UPDATE (`... WHERE status = 'pending' AND expires_at > now`)
inside one write transaction, and writers take turns (connection.py), so of any number of
concurrent deciders or confirmers, on any number of machines, exactly one wins. No crypto here:
whether a signature is good or a quorum complete is the caller's callback, run inside the
transaction on the rows as they are (approvals/decisions.py decides; this stores).

Rows become Actions exactly as SQLite's do (approvals/schema.py's `_row_to_action`): the same
columns, the same text times, the same damaged-row handling.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

import psycopg

from patch_tui.approvals import approvable
from patch_tui.approvals.backend import ClaimCheck, GrantUseCheck, QuorumCheck
from patch_tui.approvals.connection import _pid_start
from patch_tui.approvals.postgres.connection import StoreUnreachable
from patch_tui.approvals.postgres.outputs import PgOutputs
from patch_tui.approvals.records import Signature
from patch_tui.approvals.schema import _ACTION_COLUMNS, _event_detail, _row_to_action
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
    refusal_note,
)

Conn = psycopg.Connection[Any]


def _read_action(row: tuple[Any, ...]) -> Action:
    """An Action as read for a person: `tampered` says why confirm refused to run it, when it
    did (the refusal is kept as its result), as SQLite's store reads it."""
    action = _row_to_action(row)
    note = refusal_note(action)
    return replace(action, tampered=note) if note else action


def _edit_detail(action: Action) -> dict[str, Any]:
    """What a decision event says of the args: their hash, and the agent's when a person edited
    (as SQLite's store says it)."""
    if action.proposed_args is None:
        return {"args_sha256": action.args_sha256}
    return {
        "edited": True,
        "proposed_args_sha256": args_sha256(action.proposed_args),
        "args_sha256": action.args_sha256,
    }


class PgStore(PgOutputs):
    """The confirmation store on PostgreSQL. Thread-safe (a pool); one per process."""

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
            row = conn.execute(
                "INSERT INTO actions (token, kind, tool, version, source_sha256, tool_path, "
                "args_json, args_sha256, reason, details_json, status, created_at, expires_at, "
                "upstream_token) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, 'pending', "
                "%s, %s, %s) RETURNING id",
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
            ).fetchone()
            assert row is not None
            self._event(
                conn, int(row[0]), "created", created, kind=str(kind), tool=tool, expires_at=expires
            )
            found = self._select_action(conn, token)
        assert found is not None
        return found[1]

    def get(self, token: str) -> Action | None:
        rows = self._read(f"SELECT {_ACTION_COLUMNS} FROM actions WHERE token = %s", (token,))
        return _read_action(rows[0]) if rows else None

    def list_actions(
        self,
        statuses: Iterable[str] | None = (ActionStatus.PENDING,),
        tool: str | None = None,
        limit: int | None = None,
    ) -> list[Action]:
        where: list[str] = []
        params: list[Any] = []
        if statuses is not None:
            wanted = [str(s) for s in statuses]
            unknown = [s for s in wanted if s not in STATUSES]
            if unknown:
                raise ValueError(f"unknown status {unknown[0]!r}; expected one of {STATUSES}")
            where.append("status = ANY(%s)")
            params.append(wanted)
        if tool is not None:
            where.append("tool = %s")
            params.append(tool)
        sql = f"SELECT {_ACTION_COLUMNS} FROM actions"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY created_at DESC, id DESC"
        if limit is not None:
            sql += " LIMIT %s"
            params.append(int(limit))
        return [_read_action(r) for r in self._read(sql, params)]

    def pending_count(self) -> int:
        rows = self._read(
            "SELECT count(*) FROM actions WHERE status = 'pending' AND expires_at > %s",
            (now_iso(self._now()),),
        )
        return int(rows[0][0])

    def next_expiry(self) -> str | None:
        rows = self._read(
            "SELECT min(expires_at) FROM actions WHERE status IN ('pending', 'approved')"
        )
        return rows[0][0] if rows else None

    def data_version(self) -> int:
        """A number that moves whenever any process commits a change (store_version)."""
        rows = self._read("SELECT n FROM store_version")
        return int(rows[0][0]) if rows else 0

    def wait_for_change(self, seen: int | None, timeout: float) -> int:
        """Sleep until the store changes from version `seen` (LISTEN/NOTIFY: no polling), at
        most `timeout` seconds; the version then. StoreError when the store cannot be read."""
        feed = self.feed()
        mark = feed.mark()
        version = self.data_version()
        if version != seen:
            return version
        if feed.wait(mark, timeout):
            return self.data_version()
        return version

    def events(self, token: str | None = None, limit: int | None = None) -> list[Event]:
        sql = (
            "SELECT e.id, a.token, e.at, e.actor, e.event, e.detail "
            "FROM events e JOIN actions a ON a.id = e.action_id"
        )
        params: list[Any] = []
        if token is not None:
            sql += " WHERE a.token = %s"
            params.append(token)
        if limit is not None:
            sql = f"SELECT * FROM ({sql} ORDER BY e.id DESC LIMIT %s) last ORDER BY 1"
            params.append(int(limit))
        else:
            sql += " ORDER BY e.id"
        return [
            Event(id=r[0], token=r[1], at=r[2], actor=r[3], event=r[4], detail=_event_detail(r[5]))
            for r in self._read(sql, params)
        ]

    # -- decisions ----------------------------------------------------------------------------

    def add_decision(
        self,
        token: str,
        signature: Signature,
        *,
        complete: QuorumCheck,
        args: dict[str, Any] | None = None,
        shown_args_sha256: str | None = None,
    ) -> Decision:
        """Record one approver's signed decision and, in the same transaction, the transition it
        makes: a reject ends the action; an approve completes it when `complete` (given every
        signature, this one included) returns the approval's expiry.

        The database going away mid-decision leaves it recorded whole or not at all (one
        transaction); which one is looked up once the connection is back, so the person is told
        "recorded" or "not recorded", never left guessing."""
        try:
            return self._add_decision(
                token, signature, complete=complete, args=args, shown_args_sha256=shown_args_sha256
            )
        except StoreUnreachable as exc:
            lost = str(exc)
        recorded = self._was_recorded(token, signature)
        if recorded is None:
            raise StoreUnreachable(
                f"{lost}; the decision was recorded whole or not at all: look at the action again "
                "once the database is back"
            ) from None
        if not recorded:
            raise StoreUnreachable(f"{lost}; the decision was not recorded") from None
        action = self.get(token)
        return Decision(True, action, "recorded (the connection dropped as it committed)")

    def _was_recorded(self, token: str, signature: Signature) -> bool | None:
        """Whether this very signature is in the store (None: the store still cannot be read)."""
        try:
            return any(s.envelope == signature.envelope for s in self.decisions(token))
        except StoreError:
            return None

    def _add_decision(
        self,
        token: str,
        signature: Signature,
        *,
        complete: QuorumCheck,
        args: dict[str, Any] | None,
        shown_args_sha256: str | None,
    ) -> Decision:
        at = signature.at
        with self._write() as conn:
            found = self._select_action(conn, token, lock=True)
            if found is None:
                return Decision(False, None, "unknown token", "unknown_token")
            action_id, action = found
            if action.status == ActionStatus.PENDING and signature.decision == "approve":
                # Under the write lock: what no one can have seen is never approved
                # (approvable.py, the one answer every front end gives); a reject is always
                # possible.
                unseen = approvable.unseen(action)
                if unseen is not None:
                    return Decision(False, action, unseen.why, unseen.code)
            if action.status != ActionStatus.PENDING or action.expires_at <= at:
                return self._not_open(conn, action_id, action, at)
            if shown_args_sha256 is not None and action.args_sha256 != shown_args_sha256:
                return Decision(
                    False,
                    action,
                    "its args changed since they were shown: look at it again",
                    "changed_since_shown",
                )
            if args is not None and canonical_json(args) != canonical_json(action.args):
                action = self._edit_args(conn, action_id, action, args)
            conn.execute(
                "INSERT INTO signatures (action_id, approver, decision, at, note, args_sha256, "
                "envelope) VALUES (%s, %s, %s, %s, %s, %s, %s)",
                (
                    action_id,
                    signature.approver,
                    signature.decision,
                    at,
                    signature.note,
                    action.args_sha256,
                    signature.envelope,
                ),
            )
            decider = f"{signature.approver} via {self.actor}"
            if signature.decision == "reject":
                return self._transition(
                    conn,
                    action_id,
                    token,
                    "rejected",
                    at,
                    decider=decider,
                    note=signature.note,
                    expires=None,
                    approver=signature.approver,
                    reason=signature.note,
                )
            expiry = complete(action, self._signatures(conn, action_id))
            if expiry is None:
                self._event(
                    conn,
                    action_id,
                    "signed",
                    at,
                    approver=signature.approver,
                    **_edit_detail(action),
                )
                return Decision(False, action, "awaiting more approvals", "awaiting_approval")
            return self._transition(
                conn,
                action_id,
                token,
                "approved",
                at,
                decider=decider,
                note=signature.note,
                expires=expiry,
                approver=signature.approver,
                **_edit_detail(action),
            )

    def _edit_args(
        self, conn: Conn, action_id: int, action: Action, args: dict[str, Any]
    ) -> Action:
        """A person's edit: the args that will run change while pending; the agent's proposal
        is kept once (a second edit keeps the agent's own, not the first edit)."""
        if action.upstream_token is not None:
            # The upstream server runs the args it was given when its token is confirmed: an
            # edit here would be shown as approved and never run.
            raise ValueError(
                "this call is held by the upstream server, which runs the args it was "
                "given: it cannot be edited (reject it, and the agent can call again)"
            )
        try:
            text = json.dumps(args, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"args are not plain JSON: {exc}") from None
        conn.execute(
            "UPDATE actions SET proposed_args_json = coalesce(proposed_args_json, args_json), "
            "args_json = %s, args_sha256 = %s WHERE id = %s AND status = 'pending'",
            (text, args_sha256(args), action_id),
        )
        found = self._select_action(conn, action.token)
        assert found is not None
        return found[1]

    def _transition(
        self,
        conn: Conn,
        action_id: int,
        token: str,
        status: str,
        at: str,
        *,
        decider: str,
        note: str | None,
        expires: str | None,
        grant_row: int | None = None,
        **detail: Any,
    ) -> Decision:
        """pending -> approved | rejected: the one conditional UPDATE, and its event."""
        cur = conn.execute(
            "UPDATE actions SET status = %s, decided_at = %s, decided_by = %s, note = %s, "
            "expires_at = coalesce(%s, expires_at), grant_id = coalesce(%s, grant_id) "
            "WHERE id = %s AND status = 'pending'",
            (status, at, decider, note, expires, grant_row, action_id),
        )
        found = self._select_action(conn, token)
        assert found is not None
        if cur.rowcount != 1:
            return self._not_open(conn, action_id, found[1], at)
        self._event(conn, action_id, status, at, actor=decider, **detail)
        return Decision(True, found[1])

    def _not_open(self, conn: Conn, action_id: int, action: Action, at: str) -> Decision:
        if action.status in OPEN_STATUSES and action.expires_at <= at:
            action = self._expire_one(conn, action_id, action, at)
            return Decision(False, action, f"expired at {action.expires_at}", "expired")
        if action.status == ActionStatus.PENDING:
            return Decision(False, action, "awaiting approval", "awaiting_approval")
        return Decision(False, action, _not_pending_why(action), _not_pending_code(action))

    def _expire_one(self, conn: Conn, action_id: int, action: Action, at: str) -> Action:
        cur = conn.execute(
            "UPDATE actions SET status = 'expired' WHERE id = %s AND status = %s",
            (action_id, str(action.status)),
        )
        if cur.rowcount == 1:
            self._event(conn, action_id, "expired", at, was=str(action.status))
        found = self._select_action(conn, action.token)
        assert found is not None
        return found[1]

    def decisions(self, token: str) -> list[Signature]:
        rows = self._read(
            "SELECT s.approver, s.decision, s.at, s.envelope, s.note FROM signatures s "
            "JOIN actions a ON a.id = s.action_id WHERE a.token = %s ORDER BY s.id",
            (token,),
        )
        return [Signature(r[0], r[1], r[2], r[3], r[4]) for r in rows]

    def decisions_many(self, tokens: list[str]) -> dict[str, list[Signature]]:
        """Every listed action's signed decisions, oldest first, in one query."""
        out: dict[str, list[Signature]] = {t: [] for t in tokens}
        if tokens:
            # The tokens go as one JSON text: psycopg adapts a list of 10,000 strings one by
            # one in Python (30 ms); json.dumps and the server's jsonb reader take 2.
            rows = self._read(
                "SELECT a.token, s.approver, s.decision, s.at, s.envelope, s.note "
                "FROM signatures s JOIN actions a ON a.id = s.action_id "
                "WHERE a.token = ANY(ARRAY(SELECT jsonb_array_elements_text(%s::jsonb))) "
                "ORDER BY s.id",
                (json.dumps(list(tokens)),),
            )
            for r in rows:
                out[r[0]].append(Signature(r[1], r[2], r[3], r[4], r[5]))
        return out

    def _signatures(self, conn: Conn, action_id: int) -> list[Signature]:
        rows = conn.execute(
            "SELECT approver, decision, at, envelope, note FROM signatures "
            "WHERE action_id = %s ORDER BY id",
            (action_id,),
        ).fetchall()
        return [Signature(r[0], r[1], r[2], r[3], r[4]) for r in rows]

    def approve_by_grant(self, token: str, grant_id: int, check: GrantUseCheck) -> Decision:
        """pending -> approved by a standing grant, when `check(action, grant)` holds inside this
        transaction (the grant as it is now, with its signatures); the use is counted."""
        at = now_iso(self._now())
        with self._write() as conn:
            found = self._select_action(conn, token, lock=True)
            if found is None:
                return Decision(False, None, "unknown token", "unknown_token")
            action_id, action = found
            if action.status != ActionStatus.PENDING or action.expires_at <= at:
                return Decision(False, action, _not_pending_why(action), "grant_inapplicable")
            if approvable.unseen(action) is not None:
                return Decision(False, action, "its args cannot be shown", "grant_inapplicable")
            grant = self._grant(conn, grant_id, lock=True)
            if grant is None or not check(action, grant):
                return Decision(False, action, "the grant does not apply", "grant_inapplicable")
            conn.execute(
                "UPDATE grants SET uses = uses + 1, last_used_at = %s WHERE id = %s",
                (at, grant_id),
            )
            return self._transition(
                conn,
                action_id,
                token,
                "approved",
                at,
                decider=f"grant {grant_id} ({', '.join(s.approver for s in grant.signatures)})",
                note=f"standing grant {grant_id}",
                expires=now_iso(self._now() + self.ttl),
                grant_row=grant_id,
                grant=grant_id,
            )

    # -- execution ----------------------------------------------------------------------------

    def claim(self, token: str, check: ClaimCheck) -> Decision:
        """approved and unexpired -> executing, for exactly one caller, only when `check` finds
        the approval good inside this transaction; otherwise approved -> failed, never run."""
        at = now_iso(self._now())
        with self._write() as conn:
            found = self._select_action(conn, token, lock=True)
            if found is None:
                return Decision(False, None, "unknown token", "unknown_token")
            action_id, action = found
            if action.status == ActionStatus.APPROVED and action.expires_at > at:
                if action.damaged:
                    return _refuse_damaged(action, "run")
                # An approval runs once, whatever the status column says: the append-only
                # events remember the first claim (as the SQLite store; red team).
                earlier = conn.execute(
                    "SELECT at FROM events WHERE action_id = %s AND event = 'claimed' LIMIT 1",
                    (action_id,),
                ).fetchone()
                if earlier is not None:
                    why = f"it was already run once (claimed at {earlier[0]}); the store was edited"
                    return self._refuse(conn, action_id, action, at, "tampered", why)
                grant = None
                if action.grant_id is not None:
                    grant = self._grant(conn, int(action.grant_id))
                problem = check(action, self._signatures(conn, action_id), grant)
                if problem is not None:
                    return self._refuse(conn, action_id, action, at, *problem)
            cur = conn.execute(
                "UPDATE actions SET status = 'executing', claimed_at = %s, claimed_by = %s, "
                "claim_host = %s, claim_pid = %s, claim_pid_start = %s "
                "WHERE id = %s AND status = 'approved' AND expires_at > %s",
                (at, self.actor, self._host, self._pid, _pid_start(self._pid), action_id, at),
            )
            current = self._select_action(conn, token)
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

    def _refuse(
        self, conn: Conn, action_id: int, action: Action, at: str, code: str, why: str
    ) -> Decision:
        result = {"status": code, "error": f"not run: {why}", "why": why}
        conn.execute(
            "UPDATE actions SET status = 'failed', finished_at = %s, result_json = %s "
            "WHERE id = %s AND status = 'approved'",
            (at, canonical_json(result), action_id),
        )
        self._event(conn, action_id, "refused", at, code=code, why=why)
        found = self._select_action(conn, action.token)
        assert found is not None
        return Decision(False, replace(found[1], tampered=why), why, code)

    def finish(
        self, token: str, ok: bool, result: Any, ran: dict[str, Any] | None = None
    ) -> Action:
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
                "UPDATE actions SET status = %s, finished_at = %s, result_json = %s "
                "WHERE token = %s AND status = 'executing'",
                (str(status), at, result_json, token),
            )
            found = self._select_action(conn, token)
            if found is None:
                raise StoreError(f"unknown token {token[:8]}...")
            action_id, action = found
            if cur.rowcount != 1:
                raise StoreError(
                    f"action {token[:8]}... is {action.status}, not executing; result not recorded"
                )
            self._event(conn, action_id, str(status), at, **(ran or {}))
        return action

    # -- plumbing -----------------------------------------------------------------------------

    def _select_action(
        self, conn: Conn, token: str, *, lock: bool = False
    ) -> tuple[int, Action] | None:
        sql = f"SELECT id, {_ACTION_COLUMNS} FROM actions WHERE token = %s"
        row = conn.execute((sql + (" FOR UPDATE" if lock else "")).encode(), (token,)).fetchone()
        if row is None:
            return None
        return int(row[0]), _row_to_action(row[1:])
