"""`c` in the inbox: claim the current call, so everyone else sees you are reading it (the team
inbox; approvals/reading.py says what a claim is). They see your name on it until you decide,
for five minutes, or until `c` again renews it. A part of the inbox screen, as batch and
history are: its key and its action."""

from __future__ import annotations

from typing import Any, ClassVar

from textual.binding import Binding

from patch_tui.approvals.values import Decision
from patch_tui.ui.inbox.inbox_badge import app_store
from patch_tui.ui.inbox.parts import InboxParts


def readers_of(store: Any, mode: str) -> dict[str, str]:
    """token -> who is reading it, for the pending list (read in the screen's worker)."""
    return {t: r.by for t, r in store.readings().items()} if mode == "pending" else {}


class ClaimPart(InboxParts):
    BINDINGS: ClassVar[list[Any]] = [
        Binding("c", "claim", "Claim", id="inbox.claim", show=False),
    ]

    def action_claim(self) -> None:
        """Claim the current pending action in a worker; say how it went."""
        action = self.current
        if action is None or self.mode != "pending":
            return
        token, tool = action.token, action.tool

        def done(decision: Decision) -> None:
            if decision.ok:
                self.notify(f"You are reading {tool} ({token[:8]}…): others see it.", markup=False)
            else:
                self.notify(decision.why, severity="warning", markup=False)
            self.refresh_now()

        def claim() -> None:
            decision = app_store(self.app).claim_reading(token)
            self.app.call_from_thread(done, decision)

        self.run_worker(claim, thread=True, group="inbox-claim", exit_on_error=False)
