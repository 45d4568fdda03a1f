"""The store's signed decisions, for both backends (approvals/sql_backend.py): each approver's
signature row, the transitions they make, and a grant's approval. Storage and atomic transitions
only: whether a signature is good and a quorum complete is the caller's judgement
(approvals/decisions.py), passed in as a callback and run inside the transaction
(approvals/backend.py)."""

from __future__ import annotations

import json
from typing import Any

from patch_tui.approvals import approvable
from patch_tui.approvals.backend import GrantUseCheck, QuorumCheck
from patch_tui.approvals.records import Signature
from patch_tui.approvals.sql_backend import Conn, SqlBackend
from patch_tui.approvals.values import (
    Action,
    ActionStatus,
    Decision,
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


class DecisionRows(SqlBackend):
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
        the signature row is appended; then a reject rejects, and an approve approves when
        `complete`, given the action and its signatures as they are now, returns the approval's
        expiry."""
        at = now_iso(self._now())  # the store's clock says whether it expired, not the signer's
        with self._write() as conn:
            opened = self._open_for_decision(conn, token, signature, shown_args_sha256, at)
            if isinstance(opened, Decision):
                return opened
            action_id, action = opened
            if args is not None and canonical_json(args) != canonical_json(action.args):
                action = self._edit_args(conn, action_id, action, args)
            self._insert_signature(conn, action_id, action, signature)
            if signature.decision == "reject":
                return self._transition(
                    conn,
                    action_id,
                    token,
                    "rejected",
                    at,
                    decided_by=self._decider(signature),
                    note=signature.note,
                    approver=signature.approver,
                    reason=signature.note,
                )
            return self._record_approve(conn, action_id, action, signature, complete, at)

    def _open_for_decision(
        self,
        conn: Conn,
        token: str,
        signature: Signature,
        shown_args_sha256: str | None,
        at: str,
    ) -> tuple[int, Action] | Decision:
        """The pending, unexpired action a decision may be recorded on, or why not."""
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
        return action_id, action

    def _insert_signature(
        self, conn: Conn, action_id: int, action: Action, signature: Signature
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

    def _record_approve(
        self,
        conn: Conn,
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
        return self._transition(
            conn,
            action_id,
            action.token,
            "approved",
            at,
            decided_by=self._decider(signature),
            note=signature.note,
            expires=expiry,
            approver=signature.approver,
            **_edit_detail(action),
        )

    def _decider(self, signature: Signature) -> str:
        """Who decided, as the inbox shows it: the approver whose key signed, and the process
        that recorded it ("alice via alice@tui")."""
        return f"{signature.approver} via {self.actor}"

    def _transition(
        self,
        conn: Conn,
        action_id: int,
        token: str,
        status: str,
        at: str,
        *,
        decided_by: str,
        note: str | None,
        expires: str | None = None,
        grant_row: int | None = None,
        actor: str | None = None,
        **detail: Any,
    ) -> Decision:
        """pending -> approved | rejected: the one conditional UPDATE, and its event (by this
        process unless `actor` says who; the approver is in the detail)."""
        cur = conn.execute(
            "UPDATE actions SET status = ?, decided_at = ?, decided_by = ?, note = ?, "
            "expires_at = coalesce(?, expires_at), grant_id = coalesce(?, grant_id) "
            "WHERE id = ? AND status = 'pending'",
            (status, at, decided_by, note, expires, grant_row, action_id),
        )
        found = self._select_action(conn, token)
        assert found is not None
        if cur.rowcount != 1:
            return self._not_open(conn, action_id, found[1], at)
        self._event(conn, action_id, status, at, actor=actor, **detail)
        return Decision(True, found[1])

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
            edited = json.dumps(args, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"args are not plain JSON: {exc}") from None
        # Both databases evaluate every right-hand side on the old row: the proposal moves aside
        # once.
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
        rows = self._read(
            "SELECT s.approver, s.decision, s.at, s.envelope, s.note FROM signatures s "
            "JOIN actions a ON a.id = s.action_id WHERE a.token = ? ORDER BY s.id",
            (token,),
        )
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
            grant = self._grant_in(conn, grant_id, lock=True)
            if grant is None or not check(action, grant):
                return Decision(False, action, "the grant does not apply", "grant_inapplicable")
            conn.execute(
                "UPDATE grants SET uses = uses + 1, last_used_at = ? WHERE id = ?",
                (at, grant_id),
            )
            decider = f"grant {grant_id} ({', '.join(s.approver for s in grant.signatures)})"
            return self._transition(
                conn,
                action_id,
                token,
                "approved",
                at,
                decided_by=decider,
                note=f"standing grant {grant_id}",
                expires=now_iso(self._now() + self.ttl),
                grant_row=grant_id,
                actor=decider,
                grant=grant_id,
            )
