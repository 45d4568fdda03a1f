"""Settling the store: what time and dead processes decided, written down explicitly.

Reading the store never writes (`Store.list_actions` is a pure read); the watcher, the CLI's
`inbox list` / `export` and the gate call `settle()` at the points where a listed "pending" must
be approvable now. Kept apart from store.py, whose decisions (approve, reject, claim) are made by
a person or the gate, not by the clock.
"""

from __future__ import annotations

from patch_tui.approvals.connection import StoreConnection, _pid_alive
from patch_tui.approvals.values import now_iso


class Settling(StoreConnection):
    def mark_interrupted(self) -> int:
        """Actions claimed by a process (on this host) that is gone become `interrupted`.
        They are never re-run: the tool may have done part of its work."""
        rows = self._read(
            "SELECT token, claim_pid, claim_pid_start FROM actions "
            "WHERE status = 'executing' AND claim_host = ?",
            (self._host,),
        )
        dead = [tok for tok, pid, start in rows if pid is None or not _pid_alive(int(pid), start)]
        if not dead:
            return 0
        at = now_iso(self._now())
        count = 0
        with self._write() as conn:
            for tok in dead:
                found = self._select_action(conn, tok)
                if found is None:
                    continue
                cur = conn.execute(
                    "UPDATE actions SET status = 'interrupted', finished_at = ? "
                    "WHERE id = ? AND status = 'executing'",
                    (at, found[0]),
                )
                if cur.rowcount == 1:
                    count += 1
                    self._event(conn, found[0], "interrupted", at, why="the claiming process died")
        return count

    def expire_due(self) -> int:
        """pending or approved actions past their expiry become `expired` (one event each)."""
        at = now_iso(self._now())
        due = self._read(
            "SELECT id, status FROM actions WHERE status IN ('pending', 'approved') AND expires_at <= ?",
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
