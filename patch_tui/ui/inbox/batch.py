"""Batches: select several pending actions, then approve or reject them together, having seen
every one.

Keys on the pending list: **space** selects or deselects the action under the cursor (and moves
down), **shift+down** / **shift+up** extend the selection row by row, **ctrl+a** selects every
listed action, __*__ inverts the selection, **esc** clears it.
With a selection, **a** and **r** open the batch dialog instead of the single one.

What the batch dialog guarantees:

- It lists every action it will decide: tool, version, kind, age, the args (in full, as canonical
  JSON, through the safe-text helpers) and the tool's source path. The list is the snapshot taken
  when the dialog opened: an action that arrives meanwhile is not in it, and nothing outside it is
  ever decided. Approve stays disabled until the list was scrolled to its end (or fits), Reject too.
- Each action is decided on its own, through the store's own approve / reject: one conditional
  update and one `approved` (signed) or `rejected` event per action, exactly as a single decision.
- An action is approved only if it is still what was shown (same args hash, kind and source
  hash), its tool file did not change, it is a `human_confirm` hold (a `tainted_input` hold is
  decided on its own, after reading where its data came from), its args are not damaged and fit
  the dialog in full. Every other one is refused with its reason, and the store's refusals
  (expired, decided by someone else) are reported the same way, item by item.
- The same key rule as every dialog: `y` or Enter on the Approve button approves; typed text
  never does; the reject dialog's reason field has the focus and the reason goes to every action.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.geometry import Size
from textual.widgets import Button, Input, Label, Static

from patch_tui.approvals import approvable, decisions
from patch_tui.approvals.store import Action, Decision, StoreError, parse_iso
from patch_tui.ui.dialogs.dialog import Dialog
from patch_tui.ui.inbox import inbox_list
from patch_tui.ui.inbox.detail import blocked
from patch_tui.ui.inbox.inbox_badge import app_store
from patch_tui.ui.inbox.parts import InboxParts
from patch_tui.ui.safe_text import safe_line

# Args longer than this (as canonical JSON) are not approved in a batch: the dialog could not
# show them in full. They are listed (cut), and approved on their own after reading them.
BATCH_ARGS_CHARS = 600


@dataclass(frozen=True)
class Outcome:
    """What became of one action of a batch: decided, or why not."""

    token: str
    ok: bool
    why: str = ""


def canonical_args(action: Action) -> str:
    return json.dumps(action.args, ensure_ascii=False, sort_keys=True)


def approve_refusal(action: Action) -> str | None:
    """Why `action` (as shown) is not approved in a batch, or None."""
    problem = approvable.unseen(action)
    if problem is not None:
        return problem.why
    if action.kind != "human_confirm":
        return f"a {action.kind} hold is decided on its own, after reading where its data came from"
    why = blocked(action)
    if why is not None:
        return why
    if len(canonical_args(action)) > BATCH_ARGS_CHARS:
        return "its args are too long to show here in full: approve it on its own"
    return None


def changed_since_shown(shown: Action, now: Action) -> str | None:
    if (now.args_sha256, now.source_sha256, now.kind, now.tool_path) != (
        shown.args_sha256,
        shown.source_sha256,
        shown.kind,
        shown.tool_path,
    ):
        return "it changed since this list was shown"
    return None


def decide_batch(
    store: Any, verb: str, shown: list[Action], reason: str | None = None
) -> list[Outcome]:
    """Decide every action of `shown`, one store decision each (never any other action)."""
    out: list[Outcome] = []
    for action in shown:
        try:
            now = store.get(action.token)
            if now is None:
                out.append(Outcome(action.token, False, "it is no longer in the store"))
                continue
            if now.status == "pending":
                why = changed_since_shown(action, now)
                if why is None and verb == "approve":
                    why = approve_refusal(now)
                if why is not None:
                    out.append(Outcome(action.token, False, why))
                    continue
            decision: Decision = (
                decisions.approve(store, action.token, shown_args_sha256=action.args_sha256)
                if verb == "approve"
                else decisions.reject(store, action.token, reason=reason)
            )
        except (StoreError, ValueError) as exc:
            out.append(Outcome(action.token, False, f"not recorded: {exc}"))
            continue
        out.append(
            Outcome(
                action.token, decision.ok, "" if decision.ok else (decision.why or decision.code)
            )
        )
    return out


def _age(action: Action) -> str:
    try:
        return inbox_list.human_duration(inbox_list.clock() - parse_iso(action.created_at)) + " ago"
    except ValueError:
        return ""


class BatchDialog(Dialog[list[Outcome] | None]):
    """Approve or reject a batch (see the module). Dismisses with the outcomes, or None."""

    DEFAULT_CSS = """
    BatchDialog > Vertical { width: 110; max-height: 100%; }
    BatchDialog.-reject > Vertical { border: thick $error; }
    BatchDialog #batch-items { height: auto; border: round $panel; padding: 0 1; }
    BatchDialog #batch-items:focus { border: round $primary; }
    BatchDialog #batch-note { margin-top: 1; }
    BatchDialog #batch-state { margin-top: 1; height: auto; }
    """
    BINDINGS = [
        Binding("y", "go", "Yes", id="batch.yes"),
        Binding("n", "cancel", "No", id="batch.no"),
        Binding("escape", "cancel", "Cancel", id="batch.cancel"),
        Binding("pagedown", "scroll(1)", "Page down", show=False, id="batch.page_down"),
        Binding("pageup", "scroll(-1)", "Page up", show=False, id="batch.page_up"),
        Binding("down", "scroll(0.1)", "Down", show=False, id="batch.down"),
        Binding("up", "scroll(-0.1)", "Up", show=False, id="batch.up"),
        Binding("end", "scroll(1000)", "End", show=False, id="batch.end"),
    ]

    def __init__(
        self, verb: str, actions: list[Action], decide: Callable[[str | None], list[Outcome]]
    ) -> None:
        super().__init__(classes=f"-{verb}")
        self.verb = verb
        self.actions = list(actions)  # the snapshot: nothing else is ever decided here
        self.decide = decide
        self.refused = {
            a.token: why
            for a in self.actions
            if verb == "approve" and (why := approve_refusal(a)) is not None
        }
        self.outcomes: dict[str, Outcome] = {}
        self.seen_end = False
        self.deciding = False
        self.done = False

    @property
    def deciding_count(self) -> int:
        return len(self.actions) - len(self.refused)

    def compose(self) -> ComposeResult:
        n = len(self.actions)
        with Vertical():
            yield Label(
                f"{self.verb.capitalize()} these {n} action{'s' if n != 1 else ''}?",
                classes="dialog-title",
            )
            with VerticalScroll(id="batch-items"):
                yield Static(self._items(), id="batch-list")
            if self.verb == "reject":
                yield Input(
                    placeholder="reason for all of them (optional, the agent sees it)",
                    id="batch-note",
                )
            yield Static("", id="batch-state")
            with Horizontal(classes="dialog-buttons"):
                yield Button(
                    f"{self.verb.capitalize()} {self.deciding_count} (y)",
                    id="batch-yes",
                    variant="error",
                    disabled=self.deciding_count == 0,
                )
                yield Button("Cancel (n)", id="batch-no")

    def on_mount(self) -> None:
        # As the single approve dialog: Cancel first (a stray Enter decides nothing); the reason
        # field takes the focus in the reject dialog (Dialog's rule).
        self.query_one("#batch-no", Button).focus()
        self.watch(self.query_one("#batch-items"), "scroll_y", self._scrolled, init=False)
        self.call_after_refresh(self._fit)
        self._update_state()

    def _items(self) -> Content:
        lines: list[Content | str | tuple[str, str]] = []
        for n, action in enumerate(self.actions, 1):
            if n > 1:
                lines.append("\n\n")
            outcome = self.outcomes.get(action.token)
            refusal = self.refused.get(action.token)
            if outcome is not None:
                mark: Content = (
                    Content.styled(
                        f"✓ {'approved' if self.verb == 'approve' else 'rejected'}",
                        "bold $text-success",
                    )
                    if outcome.ok
                    else Content.assemble(
                        (
                            f"✗ not {'approved' if self.verb == 'approve' else 'rejected'}: ",
                            "bold $text-error",
                        ),
                        safe_line(outcome.why),
                    )
                )
            elif refusal is not None:
                mark = Content.assemble(
                    ("✗ will not be approved: ", "bold $text-error"), safe_line(refusal)
                )
            else:
                mark = Content("")
            args = canonical_args(action) if not action.damaged else f"DAMAGED: {action.damaged}"
            cut = len(args) - BATCH_ARGS_CHARS
            lines += [
                f"{n:>2}. ",
                safe_line(action.tool, "bold"),
                " ",
                safe_line(
                    f"{action.version}  {action.kind}  held {_age(action)}  token {action.token[:8]}…"
                ),
                "\n    ",
                ("args   ", "bold $text-muted"),
                safe_line(args[:BATCH_ARGS_CHARS]),
                (f"… ({cut:,} more characters)" if cut > 0 else "", "$text-warning"),
                "\n    ",
                ("source ", "bold $text-muted"),
                safe_line(action.tool_path or "(not recorded)"),
            ]
            if mark.cell_length:
                lines += ["\n    ", mark]
        return Content.assemble(*lines)

    # -- "every item was shown" ---------------------------------------------------------------

    def _scrolled(self, _value: float) -> None:
        self._check_seen()

    def on_resize(self) -> None:
        self.call_after_refresh(self._fit)

    def _fit(self) -> None:
        """The list takes the height the rest of the dialog leaves, so its buttons are always
        on screen (80x24 included); the list scrolls instead."""
        frame = self.query_one(Vertical)
        items = self.query_one("#batch-items", VerticalScroll)
        rest = sum(
            child.outer_size.height + child.styles.margin.height
            for child in frame.children
            if child is not items and child.display
        )
        gutter = items.styles.gutter.height
        room = max(
            3,
            self.size.height
            - rest
            - frame.styles.gutter.height
            - items.styles.margin.height
            - gutter,
        )
        if items.styles.max_height is None or items.styles.max_height.value != room + gutter:
            items.styles.max_height = room + gutter  # border-box: the box's own border included
        # Fitting is computed from the content itself at the box's width, never from the box's
        # last layout (which may predate this limit: a list too long for the screen would
        # count as read).
        width = items.scrollable_content_region.width
        if width > 0 and not self.seen_end:
            listing = self.query_one("#batch-list", Static)
            needed = listing.get_content_height(Size(width, room), Size(width, room), width)
            if needed <= room:
                self.seen_end = True
                self._update_state()

    def _check_seen(self) -> None:
        """Scrolled to the end of a list taller than its box (a list that fits: see _fit)."""
        box = self.query_one("#batch-items", VerticalScroll)
        if self.seen_end or box.size.height <= 0:
            return
        if box.max_scroll_y > 0 and box.scroll_y >= box.max_scroll_y - 0.5:
            self.seen_end = True
            self._update_state()

    def action_scroll(self, pages: float) -> None:
        box = self.query_one("#batch-items", VerticalScroll)
        box.scroll_to(y=box.scroll_y + pages * max(1, box.size.height - 1), animate=False)

    def _update_state(self) -> None:
        state = self.query_one("#batch-state", Static)
        yes = self.query_one("#batch-yes", Button)
        if self.done:
            ok = sum(1 for o in self.outcomes.values() if o.ok)
            past = "approved" if self.verb == "approve" else "rejected"
            state.update(
                Content.assemble(
                    (f"{ok} of {len(self.actions)} {past}", "bold"),
                    "; every other one says why above." if ok < len(self.actions) else ".",
                )
            )
            return
        parts: list[Content | str | tuple[str, str]] = []
        if self.refused:
            parts.append(
                (
                    f"{len(self.refused)} will not be approved (marked ✗): decide them on their own. ",
                    "$text-warning",
                )
            )
        if not self.seen_end:
            parts.append(
                (
                    f"{self.verb.capitalize()} is disabled until the list was read to its end (pgdn, end, or the mouse).",
                    "bold $text-warning",
                )
            )
        elif self.deciding_count:
            parts.append(
                f"y {self.verb}s the {self.deciding_count} listed above, each on its own; nothing else."
            )
        state.update(Content.assemble(*parts))
        yes.disabled = self.deciding_count == 0 or not self.seen_end or self.deciding

    # -- deciding -----------------------------------------------------------------------------

    @on(Input.Submitted, "#batch-note")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._go()  # rejecting is the safe way out: Enter after the reason does it

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "batch-yes":
            self._go()
        else:
            self.action_cancel()

    def action_go(self) -> None:
        self._go()

    def action_cancel(self) -> None:
        if self.deciding:
            return
        self.dismiss(list(self.outcomes.values()) if self.done else None)

    def _go(self) -> None:
        if self.deciding or self.done or self.deciding_count == 0:
            return
        if not self.seen_end:
            self.notify(
                "Read the list to its end first (pgdn or end).", severity="warning", markup=False
            )
            return
        self.deciding = True
        self._update_state()
        fields = self.query("#batch-note").results(Input)
        note = next((f.value.strip() for f in fields), "") or None
        self._run(note)

    @work(thread=True, exclusive=True, group="batch", exit_on_error=False)
    def _run(self, note: str | None) -> None:
        try:
            outcomes: list[Outcome] | str = self.decide(note)
        except StoreError as exc:
            outcomes = str(exc)
        try:
            self.app.call_from_thread(self._done, outcomes)
        except RuntimeError:
            pass

    def _done(self, outcomes: list[Outcome] | str) -> None:
        self.deciding = False
        if isinstance(outcomes, str):
            # The store could not be opened: nothing was decided; the button stays for a retry.
            self._update_state()
            self.query_one("#batch-state", Static).update(
                safe_line(f"Nothing recorded: {outcomes}")
            )
            return
        self.done = True
        self.outcomes = {o.token: o for o in outcomes}
        self.refused = {}
        self.query_one("#batch-list", Static).update(self._items())
        self.query_one("#batch-yes", Button).display = False
        close = self.query_one("#batch-no", Button)
        close.label = "Close"
        close.focus()
        self._update_state()


class BatchPart(InboxParts):
    """The selection keys of the inbox screen and its batch decisions."""

    def has_selection(self) -> bool:
        return self.mode == "pending" and bool(self.list.selected)

    def _selection_changed(self) -> None:
        self.list.refresh()
        self._update_title()
        self._update_gate()
        self.refresh_bindings()

    def _update_title(self) -> None:
        rows = len(self.shown)
        if self.listed_total is not None and self.mode == "pending":
            rows = self.listed_total  # the first page of them is shown, the rest is being read
        title = f"Pending ({rows})" if self.mode == "pending" else f"History ({rows})"
        if self.has_selection():
            title += f" · {len(self.list.selected)} selected: a / r decide them, esc clears"
        self.query_one("#list-box").border_title = title

    def action_toggle_select(self) -> None:
        if self.mode != "pending":
            return
        action = self.list.current
        if action is None:
            return
        selected = self.list.selected
        selected.symmetric_difference_update({action.token})
        self.list.cursor += 1
        self._selection_changed()

    def action_extend_selection(self, step: int) -> None:
        """shift+down / shift+up: select this row and the next (a range, as in a file list)."""
        if self.mode != "pending" or self.list.current is None:
            return
        self.list.selected.add(self.list.current.token)
        self.list.cursor += step
        if self.list.current is not None:
            self.list.selected.add(self.list.current.token)
        self._selection_changed()

    def action_select_all(self) -> None:
        if self.mode == "pending":
            self.list.selected = {a.token for a in self.list.actions}
            self._selection_changed()

    def action_invert_selection(self) -> None:
        if self.mode == "pending":
            self.list.selected = {a.token for a in self.list.actions} - self.list.selected
            self._selection_changed()

    def clear_batch(self) -> bool:
        """Clear the selection; False when there was none."""
        if not self.list.selected:
            return False
        self.list.selected = set()
        self._selection_changed()
        return True

    def decide_selection(self, verb: str) -> None:
        """The batch dialog over the selected actions, in list order."""
        chosen = [a for a in self.list.actions if a.token in self.list.selected]
        if not chosen:
            return

        def decide(note: str | None) -> builtins.list[Outcome]:
            return decide_batch(app_store(self.app), verb, chosen, note)

        def done(outcomes: builtins.list[Outcome] | None) -> None:
            if outcomes is not None:
                decided = {o.token for o in outcomes if o.ok}
                self.list.selected -= decided
                ok = len(decided)
                past = "Approved" if verb == "approve" else "Rejected"
                self.notify(
                    f"{past} {ok} of {len(outcomes)}"
                    + (" (the others are still selected)" if ok < len(outcomes) else ""),
                    markup=False,
                )
                self._selection_changed()
            self.refresh_now()

        self.app.push_screen(BatchDialog(verb, chosen, decide), done)
