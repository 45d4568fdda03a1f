"""PgStore: the confirmation store on PostgreSQL, the ApprovalStore interface
(approvals/backend.py) with the meaning SQLite's Store gives it.

Both stores are assembled from the same row modules (approvals/sql_backend.py: actions, signed
decisions, grants, settling, claims to read, the taint memory), so every transition is the same
one conditional UPDATE (`... WHERE status = 'pending' AND expires_at > now`) inside one write
transaction, and writers take turns (connection.py): of any number of concurrent deciders or
confirmers, on any number of machines, exactly one wins. No crypto here: whether a signature is
good or a quorum complete is the caller's callback, run inside the transaction on the rows as
they are (approvals/decisions.py decides; this stores).

What is PostgreSQL's own: a decision whose connection dropped is looked up to say whether it was
recorded, `data_version` is the store_version row, `wait_for_change` sleeps on LISTEN/NOTIFY,
and the signatures of thousands of actions are asked for with one JSON parameter.
"""

from __future__ import annotations

import json
from typing import Any

from patch_tui.approvals.action_rows import ActionRows
from patch_tui.approvals.backend import QuorumCheck
from patch_tui.approvals.decision_rows import DecisionRows
from patch_tui.approvals.grant_rows import GrantRows
from patch_tui.approvals.output_rows import OutputRows
from patch_tui.approvals.postgres.connection import PgConnection, StoreUnreachable
from patch_tui.approvals.reading import ReadingRows
from patch_tui.approvals.records import Signature
from patch_tui.approvals.settling import Settling
from patch_tui.approvals.values import Decision, StoreError


class PgStore(ActionRows, DecisionRows, GrantRows, Settling, ReadingRows, OutputRows, PgConnection):
    """The confirmation store on PostgreSQL. Thread-safe (a pool); one per process."""

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

    def add_decision(
        self,
        token: str,
        signature: Signature,
        *,
        complete: QuorumCheck,
        args: dict[str, Any] | None = None,
        shown_args_sha256: str | None = None,
    ) -> Decision:
        """As every store records a decision (decision_rows.py), and: the database going away
        mid-decision leaves it recorded whole or not at all (one transaction); which one is
        looked up once the connection is back, so the person is told "recorded" or "not
        recorded", never left guessing."""
        try:
            return super().add_decision(
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

    def decisions_many(self, tokens: list[str]) -> dict[str, list[Signature]]:
        """Every listed action's signed decisions, oldest first, in one query."""
        out: dict[str, list[Signature]] = {t: [] for t in tokens}
        if tokens:
            # The tokens go as one JSON text: psycopg adapts a list of 10,000 strings one by
            # one in Python (30 ms); json.dumps and the server's jsonb reader take 2.
            rows = self._read(
                "SELECT a.token, s.approver, s.decision, s.at, s.envelope, s.note "
                "FROM signatures s JOIN actions a ON a.id = s.action_id "
                "WHERE a.token = ANY(ARRAY(SELECT jsonb_array_elements_text(?::jsonb))) "
                "ORDER BY s.id",
                (json.dumps(list(tokens)),),
            )
            for r in rows:
                out[r[0]].append(Signature(r[1], r[2], r[3], r[4], r[5]))
        return out
