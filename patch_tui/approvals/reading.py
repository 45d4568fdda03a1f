"""Who is reading which held call (the team inbox's "claim": `c` in the inbox, `inbox claim`).

    store.claim_reading(token, seconds=READING_TTL) -> Decision   ok: it is yours until then;
                                                     else code "being_read", why: who has it
    store.release_reading(token)                     -> bool       yours, and now released
    store.readings()                                 -> dict[token, Reading]   of pending actions

A claim tells everyone else that someone is reading this call, so two people do not both study
and decide the same one. It is advice, not a lock: it never stops a decision (signatures and
the approvers file decide who may approve), it ends by itself after `seconds` (a person who
walked away holds nothing), and deciding ends it. Claims are events (`reading`, `released`) in
the append-only log, written under the store's write lock, so of two people claiming at once
exactly one gets it, and the record of who read what stays.

Both stores carry `ReadingRows` (approvals/sql_backend.py): the same statements over each
backend's connection.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from patch_tui.approvals.schema import _event_detail
from patch_tui.approvals.sql_backend import Conn, SqlBackend
from patch_tui.approvals.values import ActionStatus, Decision, now_iso

# How long a claim lasts unless renewed (`c` again) or released: reading one call takes minutes.
READING_TTL = 300.0


@dataclass(frozen=True)
class Reading:
    by: str
    until: str


def current(event: str, actor: str, detail: Any, now: str) -> Reading | None:
    """The claim a token's last reading/released event leaves standing at `now`, if any."""
    until = _event_detail(detail).get("until")
    if event == "reading" and isinstance(until, str) and until > now:
        return Reading(actor, until)
    return None


def standing(rows: Any, now: str) -> dict[str, Reading]:
    """token -> the claim left standing at `now`, from (token, event, actor, detail) rows: each
    pending action's last reading/released event (both backends' `readings`)."""
    out = {}
    for token, event, actor, detail in rows:
        held = current(event, actor, detail, now)
        if held is not None:
            out[token] = held
    return out


def refusal(action: Any, held: Reading | None, actor: str) -> Decision | None:
    """Why `actor` cannot claim this action now (None: they can)."""
    if action is None:
        return Decision(False, None, "unknown token", "unknown_token")
    if action.status != ActionStatus.PENDING:
        return Decision(False, action, f"it is {action.status}, not pending", "not_pending")
    if held is not None and held.by != actor:
        return Decision(
            False, action, f"{held.by} is reading it (until {held.until})", "being_read"
        )
    return None


class ReadingRows(SqlBackend):
    """The claims, as events under the store's write lock."""

    def claim_reading(self, token: str, seconds: float = READING_TTL) -> Decision:
        now = self._now()
        at, until = now_iso(now), now_iso(now + max(1.0, seconds))
        with self._write() as conn:
            found = self._select_action(conn, token)
            action = None if found is None else found[1]
            held = self._reading(conn, found[0], at) if found is not None else None
            refused = refusal(action, held, self.actor)
            if refused is not None or found is None:
                return refused or Decision(False, None, "unknown token", "unknown_token")
            self._event(conn, found[0], "reading", at, until=until)
        return Decision(True, action)

    def release_reading(self, token: str) -> bool:
        at = now_iso(self._now())
        with self._write() as conn:
            found = self._select_action(conn, token)
            if found is None:
                return False
            held = self._reading(conn, found[0], at)
            if held is None or held.by != self.actor:
                return False
            self._event(conn, found[0], "released", at)
        return True

    def readings(self) -> dict[str, Reading]:
        """token -> the claim standing on each pending action. The last reading/released event
        of each action comes from the few such events (grouped), never a look per action:
        10,000 pending are listed at once."""
        at = now_iso(self._now())
        rows = self._read(
            "SELECT a.token, e.event, e.actor, e.detail FROM events e "
            "JOIN actions a ON a.id = e.action_id WHERE a.status = 'pending' AND e.id IN "
            "(SELECT max(id) FROM events WHERE event IN ('reading', 'released') "
            "GROUP BY action_id)"
        )
        return standing(rows, at)

    def _reading(self, conn: Conn, action_id: int, at: str) -> Reading | None:
        row = conn.execute(
            "SELECT event, actor, detail FROM events WHERE action_id = ? "
            "AND event IN ('reading', 'released') ORDER BY id DESC LIMIT 1",
            (action_id,),
        ).fetchone()
        return None if row is None else current(row[0], row[1], row[2], at)
