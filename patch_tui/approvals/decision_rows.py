"""The store's signed decisions: each approver's signature row, the transitions they make, and a
grant's approval. Storage and atomic transitions only: whether a signature is good and a quorum
complete is the caller's judgement (approvals/decisions.py), passed in as a callback and run
inside the transaction (approvals/backend.py)."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from patch_tui.approvals import approvable
from patch_tui.approvals.backend import GrantUseCheck, QuorumCheck
from patch_tui.approvals.grant_rows import GrantRows
from patch_tui.approvals.records import Signature
from patch_tui.approvals.schema import _translate
from patch_tui.approvals.values import (
    Action,
    ActionStatus,
    Decision,
    _not_pending_code,
    _not_pending_why,
    args_sha256,
    canonical_json,
    now_iso,
)


def _edit_detail(action: Action) -> dict[str, Any]:
    """What a decision event says of the args: their hash, and the agent's when a person edited."""
    if action.proposed_args is None:
        return {"args_sha256": action.args_sha256}
    return {
        "edited": True,
        "proposed_args_sha256": args_sha256(action.proposed_args),
        "args_sha256": action.args_sha256,
    }


class DecisionRows(GrantRows):
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
        """Record one approver's signed decision (approvals/backend.py says what it means).

        In one transaction: the action must be pending and unexpired (and, with
        `shown_args_sha256`, still have the args a person saw: else `changed_since_shown`);
        `args` (a person's edit, validated by the caller against the tool's inputs,
        approvals/edits.py) replace the args, the agent's proposal moving to `proposed_args`;
        the signature row is appended; then a reject rejects, and an approve approves when `complete`,
        given the action and its signatures as they are now, returns the approval's expiry."""
        at = now_iso(self._now())
        with self._write() as conn:
            opened = self._open_for_decision(conn, token, signature, shown_args_sha256, at)
            if isinstance(opened, Decision):
                return opened
            action_id, action = opened
            if args is not None and canonical_json(args) != canonical_json(action.args):
                action = self._edit_args(conn, action_id, action, args)
            self._insert_signature(conn, action_id, action, signature)
            if signature.decision == "reject":
                return self._record_reject(conn, action_id, action, signature, at)
            return self._record_approve(conn, action_id, action, signature, complete, at)

    def _open_for_decision(
        self,
        conn: sqlite3.Connection,
        token: str,
        signature: Signature,
        shown_args_sha256: str | None,
        at: str,
    ) -> tuple[int, Action] | Decision:
        """The pending, unexpired action a decision may be recorded on, or why not."""
        found = self._select_action(conn, token)
        if found is None:
            return Decision(False, None, "unknown token", "unknown_token")
        action_id, action = found
        if action.status == ActionStatus.PENDING and signature.decision == "approve":
            # Under the write lock: what no one can have seen is never approved
            # (approvable.py); a reject is always possible.
            unseen = approvable.unseen(action)
            if unseen is not None:
                return Decision(False, action, unseen.why, unseen.code)
        if action.status != ActionStatus.PENDING or action.expires_at <= at:
            return self._decided(conn, token, 0, "", at)
        if shown_args_sha256 is not None and action.args_sha256 != shown_args_sha256:
            return Decision(
                False,
                action,
                "its args changed since they were shown: look at it again",
                "changed_since_shown",
            )
        return action_id, action

    def _insert_signature(
        self, conn: sqlite3.Connection, action_id: int, action: Action, signature: Signature
    ) -> None:
        conn.execute(
            "INSERT INTO signatures (action_id, approver, decision, at, note, "
            "args_sha256, envelope) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                action_id,
                signature.approver,
                signature.decision,
                signature.at,
                signature.note,
                action.args_sha256,
                signature.envelope,
            ),
        )

    def _record_reject(
        self,
        conn: sqlite3.Connection,
        action_id: int,
        action: Action,
        signature: Signature,
        at: str,
    ) -> Decision:
        cur = conn.execute(
            "UPDATE actions SET status = 'rejected', decided_at = ?, decided_by = ?, "
            "note = ? WHERE id = ? AND status = 'pending'",
            (at, self._decider(signature), signature.note, action_id),
        )
        return self._decided(
            conn,
            action.token,
            cur.rowcount,
            "rejected",
            at,
            approver=signature.approver,
            reason=signature.note,
        )

    def _record_approve(
        self,
        conn: sqlite3.Connection,
        action_id: int,
        action: Action,
        signature: Signature,
        complete: QuorumCheck,
        at: str,
    ) -> Decision:
        """Approved when `complete` says the quorum is there (its expiry), else still pending."""
        expiry = complete(action, self._signatures(conn, action_id))
        if expiry is None:
            self._event(
                conn, action_id, "signed", at, approver=signature.approver, **_edit_detail(action)
            )
            return Decision(False, action, "awaiting more approvals", "awaiting_approval")
        cur = conn.execute(
            "UPDATE actions SET status = 'approved', decided_at = ?, decided_by = ?, "
            "note = ?, expires_at = ? WHERE id = ? AND status = 'pending'",
            (at, self._decider(signature), signature.note, expiry, action_id),
        )
        return self._decided(
            conn,
            action.token,
            cur.rowcount,
            "approved",
            at,
            approver=signature.approver,
            note=signature.note,
            **_edit_detail(action),
        )

    def _decider(self, signature: Signature) -> str:
        """Who decided, as the inbox shows it: the approver whose key signed, and the process
        that recorded it ("alice via alice@tui")."""
        return f"{signature.approver} via {self.actor}"

    def _edit_args(
        self, conn: sqlite3.Connection, action_id: int, action: Action, args: dict[str, Any]
    ) -> Action:
        if action.upstream_token is not None:
            # The upstream server runs the args it was given when its token is confirmed: an
            # edit here would be shown as approved and never run.
            raise ValueError(
                "this call is held by the upstream server, which runs the args it was "
                "given: it cannot be edited (reject it, and the agent can call again)"
            )
        try:
            edited = json.dumps(args, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"args are not plain JSON: {exc}") from None
        # SQLite evaluates every right-hand side on the old row: the proposal moves aside once
        # (a second edit keeps the agent's own proposal, not the first edit).
        conn.execute(
            "UPDATE actions SET proposed_args_json = coalesce(proposed_args_json, args_json), "
            "args_json = ?, args_sha256 = ? WHERE id = ? AND status = 'pending'",
            (edited, args_sha256(args), action_id),
        )
        found = self._select_action(conn, action.token)
        assert found is not None
        return found[1]

    def decisions(self, token: str) -> list[Signature]:
        """The action's signed decisions, oldest first."""
        with self._lock:
            try:
                found = self._select_action(self._conn, token)
                return [] if found is None else self._signatures(self._conn, found[0])
            except sqlite3.Error as exc:
                raise _translate(exc, self.path) from None

    def decisions_many(self, tokens: list[str]) -> dict[str, list[Signature]]:
        """Every listed action's signed decisions, oldest first, in one read per 500 (the inbox
        annotates thousands of pending actions at once)."""
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

    def _signatures(self, conn: sqlite3.Connection, action_id: int) -> list[Signature]:
        rows = conn.execute(
            "SELECT approver, decision, at, envelope, note FROM signatures "
            "WHERE action_id = ? ORDER BY id",
            (action_id,),
        ).fetchall()
        return [Signature(r[0], r[1], r[2], r[3], r[4]) for r in rows]

    def approve_by_grant(self, token: str, grant_id: int, check: GrantUseCheck) -> Decision:
        """pending -> approved by a standing grant, when `check(action, grant)` holds inside this
        transaction (the grant as it is now, with its signatures); the use is counted."""
        at = now_iso(self._now())
        with self._write() as conn:
            found = self._select_action(conn, token)
            if found is None:
                return Decision(False, None, "unknown token", "unknown_token")
            action_id, action = found
            if action.status != ActionStatus.PENDING or action.expires_at <= at:
                return Decision(False, action, _not_pending_why(action), "grant_inapplicable")
            if approvable.unseen(action) is not None:
                return Decision(False, action, "its args cannot be shown", "grant_inapplicable")
            grant = self._grant_in(conn, grant_id)
            if grant is None or not check(action, grant):
                return Decision(False, action, "the grant does not apply", "grant_inapplicable")
            conn.execute(
                "UPDATE grants SET uses = uses + 1, last_used_at = ? WHERE id = ?",
                (at, grant_id),
            )
            decider = f"grant {grant_id} ({', '.join(s.approver for s in grant.signatures)})"
            cur = conn.execute(
                "UPDATE actions SET status = 'approved', decided_at = ?, decided_by = ?, "
                "note = ?, expires_at = ?, grant_id = ? WHERE id = ? AND status = 'pending'",
                (
                    at,
                    decider,
                    f"standing grant {grant_id}",
                    now_iso(self._now() + self.ttl),
                    grant_id,
                    action_id,
                ),
            )
            return self._decided(
                conn, token, cur.rowcount, "approved", at, actor=decider, grant=grant_id
            )

    def _decided(
        self,
        conn: sqlite3.Connection,
        token: str,
        changed: int,
        event: str,
        at: str,
        *,
        actor: str | None = None,
        **detail: Any,
    ) -> Decision:
        found = self._select_action(conn, token)
        if found is None:
            return Decision(False, None, "unknown token", "unknown_token")
        action_id, action = found
        if changed == 1:
            self._event(conn, action_id, event, at, actor=actor, **detail)
            return Decision(True, action)
        if (
            action.status == ActionStatus.PENDING
        ):  # still pending, so it failed on the expiry condition
            action = self._expire_one(conn, action_id, action, at)
            return Decision(False, action, f"expired at {action.expires_at}", "expired")
        return Decision(False, action, _not_pending_why(action), _not_pending_code(action))

    def _expire_one(
        self, conn: sqlite3.Connection, action_id: int, action: Action, at: str
    ) -> Action:
        conn.execute(
            "UPDATE actions SET status = 'expired' WHERE id = ? AND status = ?",
            (action_id, action.status),
        )
        self._event(conn, action_id, "expired", at, was=action.status)
        found = self._select_action(conn, action.token)
        assert found is not None
        return found[1]
