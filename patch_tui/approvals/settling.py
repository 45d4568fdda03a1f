"""Settling the store, for both backends (approvals/sql_backend.py): what time and dead
processes decided, written down explicitly. Due actions become `expired`; actions whose
claiming process on this host is gone become `interrupted` (another host's claims are that
host's to judge). Never re-run: the tool may have done part of its work.

Reading the store never writes (`list_actions` is a pure read); the watcher, the CLI's
`inbox list` / `export` and the gate call `settle()` at the points where a listed "pending" must
be approvable now. Kept apart from the decisions (approve, reject, claim), which are made by a
person or the gate, not by the clock.
"""

from __future__ import annotations

from collections.abc import Sequence

from patch_tui.approvals.connection import _pid_alive
from patch_tui.approvals.sql_backend import SqlBackend
from patch_tui.approvals.values import now_iso


class Settling(SqlBackend):
    def mark_interrupted(self) -> int:
        """Actions claimed by a process on this host that is gone become `interrupted`."""
        rows = self._read(
            "SELECT id, claim_pid, claim_pid_start FROM actions "
            "WHERE status = 'executing' AND claim_host = ?",
            (self._host,),
        )
        dead = [i for i, pid, start in rows if pid is None or not _pid_alive(int(pid), start)]
        return self._interrupt(dead, "the claiming process died")

    def interrupt_own(self, token: str, why: str) -> bool:
        """This process's own claim on `token` becomes `interrupted`: it claimed the action and
        will not run it (the database went away between the claim and the run, so whether
        the claim was recorded could not be known at the time). Never run twice."""
        rows = self._read(
            "SELECT id FROM actions WHERE token = ? AND status = 'executing' "
            "AND claim_host = ? AND claim_pid = ?",
            (token, self._host, self._pid),
        )
        return self._interrupt([int(r[0]) for r in rows], why) == 1

    def _interrupt(self, ids: Sequence[int], why: str) -> int:
        if not ids:
            return 0
        at = now_iso(self._now())
        count = 0
        with self._write() as conn:
            for action_id in ids:
                cur = conn.execute(
                    "UPDATE actions SET status = 'interrupted', finished_at = ? "
                    "WHERE id = ? AND status = 'executing'",
                    (at, action_id),
                )
                if cur.rowcount == 1:
                    count += 1
                    self._event(conn, action_id, "interrupted", at, why=why)
        return count

    def expire_due(self) -> int:
        """pending or approved actions past their expiry become `expired` (one event each)."""
        at = now_iso(self._now())
        due = self._read(
            "SELECT id, status FROM actions WHERE status IN ('pending', 'approved') "
            "AND expires_at <= ?",
            (at,),
        )
        if not due:
            return 0  # the common case stays a cheap read: no write lock, no fsync
        count = 0
        with self._write() as conn:
            for action_id, status in due:
                cur = conn.execute(
                    "UPDATE actions SET status = 'expired' WHERE id = ? AND status = ? "
                    "AND expires_at <= ?",
                    (action_id, status, at),
                )
                if cur.rowcount == 1:
                    count += 1
                    self._event(conn, action_id, "expired", at, was=status)
        return count

    def settle(self) -> int:
        """Expire what is due and mark dead claimers interrupted; how many actions changed.
        Costs one read when nothing is due (no write lock, no fsync)."""
        return self.expire_due() + self.mark_interrupted()
