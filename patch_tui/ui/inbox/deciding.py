"""a, r, e and g on one pending call: the decide dialog (what it recalls of the call, the
look-alikes and the workspace warning again where the decision is made), edit then approve, and
allow calls like this. A part of the inbox screen, as claims, batch and history are; what may be
approved is decided by approvals/approvable.py inside the store's approval, never here."""

from __future__ import annotations

import json
from typing import Any

from textual.content import Content

from patch_tui.approvals import workspace
from patch_tui.approvals.store import Action, Decision
from patch_tui.ui.inbox.detail import app_catalog, blocked, label, tool_info
from patch_tui.ui.inbox.inbox_badge import app_store
from patch_tui.ui.inbox.parts import InboxParts
from patch_tui.ui.safe_text import safe_line
from patch_tui.untrusted.text_safety import value_flags

# The args recalled in the decide dialog (the details pane above it has them all).
DIALOG_ARGS_CHARS = 400


class DecidePart(InboxParts):
    def action_approve(self) -> None:
        if self.has_selection():
            self.decide_selection("approve")
        else:
            self._decide("approve")

    def action_edit(self) -> None:
        """Edit, then approve (issue 17): the args in a form from the tool's inputs."""
        from patch_tui.ui.inbox.edit_args_dialog import open_edit_dialog

        action = self._shown_to_approve("Editing")
        if action is None:
            return

        def done(decision: Decision | None) -> None:
            if decision is not None and decision.code == "awaiting_approval":
                self._signed_notice(action, decision)
            elif decision is not None and decision.ok:
                self.notify(
                    f"Approved with edited args: {action.tool} ({action.token[:8]}…). The agent "
                    "will be told what changed.",
                    markup=False,
                )
            self.refresh_now()

        open_edit_dialog(self, action, done)

    def action_allow_like_this(self) -> None:
        """Allow calls like this for… (issue 17): a standing grant from the selected action."""
        from patch_tui.ui.inbox.allow_dialog import describe, open_allow_dialog

        action = self._shown_to_approve("Allowing")
        if action is None:
            return

        def done(grant: Any) -> None:
            if grant is not None:
                self.notify(describe(grant), markup=False)
            self.refresh_now()

        open_allow_dialog(self, action, done)

    def action_reject(self) -> None:
        if self.has_selection():
            self.decide_selection("reject")
        else:
            self._decide("reject")

    def _pending_shown(self) -> Action | None:
        """The pending action under the cursor, its detail brought up to date first, or None
        when there is nothing to decide (history view, a decided action)."""
        if self._detail_timer is not None:
            # The cursor moved and the detail has not caught up: show it first. A new action
            # was not shown yet, so deciding on it is refused by the can_approve check after.
            self._detail_timer.stop()
            self._sync_detail()
        action = self.current
        if action is None or action.status != "pending" or self.mode != "pending":
            return None
        return action

    def _shown_to_approve(self, doing: str) -> Action | None:
        """The pending action under the cursor for a way of approving it (`doing`: "Editing",
        "Allowing"), or None, said in a notice when it was not all shown yet."""
        action = self._pending_shown()
        if action is not None and not self.can_approve:
            self.notify(
                f"{doing} is disabled until everything was shown (see the details)", markup=False
            )
            return None
        return action

    def _decide(self, verb: str) -> None:
        action = self._pending_shown()
        if action is None:
            return
        if verb == "approve" and not self.can_approve:
            why = blocked(action, app_catalog(self))
            self.notify(
                f"Approve is disabled: {why}"
                if why
                else "Not yet: read the details to the end first (d reads on; E expands what "
                "is collapsed), then a approves",
                markup=False,
            )
            return
        info = tool_info(action, app_catalog(self))
        summary = json.dumps(action.args, ensure_ascii=False, sort_keys=True)
        more = len(summary) - DIALOG_ARGS_CHARS
        question = Content.assemble(
            safe_line(action.tool, "bold"),
            " ",
            safe_line(f"{action.version} ({action.kind})"),
            "\n",
            label("args "),
            safe_line(summary[:DIALOG_ARGS_CHARS]),
            (
                f"… ({more:,} more characters: the details show them all)" if more > 0 else "",
                "$text-warning",
            ),
        )
        if verb == "approve":
            # The look-alikes again where the decision is made (the summary above is cut).
            said = [sentence for _, sentence in value_flags({"tool": action.tool, **action.args})]
            for sentence in dict.fromkeys(said):
                question = Content.assemble(
                    question, "\n", safe_line("⚠ " + sentence, "bold $text-warning")
                )
        warning = workspace.warning(action) if verb == "approve" else None
        if warning is not None:
            question = Content.assemble(
                question, "\n", safe_line("⚠ " + warning, "bold $text-error")
            )
        token, shown_sha256 = action.token, action.args_sha256

        def decide(note: str | None) -> Decision:
            from patch_tui.approvals import decisions

            store = app_store(self.app)
            if verb == "approve":
                return decisions.approve(store, token, note=note, shown_args_sha256=shown_sha256)
            return decisions.reject(store, token, reason=note)

        def done(decision: Decision | None) -> None:
            if decision is not None and decision.code == "awaiting_approval":
                self._signed_notice(action, decision)
            elif decision is not None and decision.ok:
                self.notify(
                    f"{'Approved' if verb == 'approve' else 'Rejected'}: {action.tool} "
                    f"({token[:8]}…). The agent's patch_confirm_action "
                    + (
                        "will now run it." if verb == "approve" else "will be told it was rejected."
                    ),
                    markup=False,
                )
            self.refresh_now()

        # Imported when first asked: its fields (Input, TextArea) are not for the first frame.
        from patch_tui.ui.inbox.inbox_dialogs import DecideModal

        self.app.push_screen(
            DecideModal(
                verb,
                question,
                decide,
                destructive=info.destructive,
                note_label=None if verb == "approve" else "reason (optional, the agent sees it)",
            ),
            done,
        )

    def _signed_notice(self, action: Action, decision: Decision) -> None:
        """A signed approval short of the quorum: recorded, and the call stays pending."""
        self.notify(
            f"Signed: {action.tool} ({action.token[:8]}…) {decision.why}; it runs once enough "
            "approvers have approved.",
            markup=False,
        )
