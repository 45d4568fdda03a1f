"""Who is reading which held call, on PostgreSQL: the same claims as approvals/reading.py
(events `reading` / `released`, advice that ends by itself), over the pool."""

from __future__ import annotations

from typing import Any

from patch_tui.approvals.postgres.settling import PgSettling
from patch_tui.approvals.reading import READING_TTL, Reading, current, refusal, standing
from patch_tui.approvals.schema import _ACTION_COLUMNS, _row_to_action
from patch_tui.approvals.values import Decision, now_iso


class PgReading(PgSettling):
    def claim_reading(self, token: str, seconds: float = READING_TTL) -> Decision:
        now = self._now()
        at, until = now_iso(now), now_iso(now + max(1.0, seconds))
        with self._write() as conn:
            row = conn.execute(
                f"SELECT id, {_ACTION_COLUMNS} FROM actions WHERE token = %s".encode(), (token,)
            ).fetchone()
            action = None if row is None else _row_to_action(row[1:])
            held = None if row is None else self._reading(conn, int(row[0]), at)
            refused = refusal(action, held, self.actor)
            if refused is not None or row is None:
                return refused or Decision(False, None, "unknown token", "unknown_token")
            self._event(conn, int(row[0]), "reading", at, until=until)
        return Decision(True, action)

    def release_reading(self, token: str) -> bool:
        at = now_iso(self._now())
        with self._write() as conn:
            row = conn.execute("SELECT id FROM actions WHERE token = %s", (token,)).fetchone()
            if row is None:
                return False
            held = self._reading(conn, int(row[0]), at)
            if held is None or held.by != self.actor:
                return False
            self._event(conn, int(row[0]), "released", at)
        return True

    def readings(self) -> dict[str, Reading]:
        at = now_iso(self._now())
        rows = self._read(
            "SELECT DISTINCT ON (e.action_id) a.token, e.event, e.actor, e.detail "
            "FROM events e JOIN actions a ON a.id = e.action_id "
            "WHERE a.status = 'pending' AND e.event IN ('reading', 'released') "
            "ORDER BY e.action_id, e.id DESC"
        )
        return standing(rows, at)

    def _reading(self, conn: Any, action_id: int, at: str) -> Reading | None:
        row = conn.execute(
            "SELECT event, actor, detail FROM events WHERE action_id = %s "
            "AND event IN ('reading', 'released') ORDER BY id DESC LIMIT 1",
            (action_id,),
        ).fetchone()
        return None if row is None else current(row[0], row[1], row[2], at)
