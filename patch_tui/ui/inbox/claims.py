"""`c` in the inbox: claim the current call, so everyone else sees you are reading it (the team
inbox; approvals/reading.py says what a claim is). They see your name on it until you decide,
for five minutes, or until `c` again renews it."""

from __future__ import annotations

from typing import Any

from patch_tui.approvals.values import Decision
from patch_tui.ui.inbox.inbox_badge import app_store


def claim_current(screen: Any) -> None:
    """Claim the inbox screen's current pending action in a worker; say how it went."""
    action = screen.current
    if action is None or screen.mode != "pending":
        return
    token, tool = action.token, action.tool

    def done(decision: Decision) -> None:
        if decision.ok:
            screen.notify(f"You are reading {tool} ({token[:8]}…): others see it.", markup=False)
        else:
            screen.notify(decision.why, severity="warning", markup=False)
        screen.refresh_now()

    def claim() -> None:
        decision = app_store(screen.app).claim_reading(token)
        screen.app.call_from_thread(done, decision)

    screen.run_worker(claim, thread=True, group="inbox-claim", exit_on_error=False)
