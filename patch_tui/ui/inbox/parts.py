"""What the inbox screen's parts share: its state and its two widgets, declared once.

The inbox screen (inbox/inbox.py) is assembled from parts that each own one concern: the detail
pane and the "everything was shown" gate (inbox/detail.py), the history view and its export
(inbox/history.py), and the batch selection (inbox/batch.py). Each part is a `Screen` subclass
over this base, so its handlers and bindings are the screen's own, and the state they share
lives here, typed, with the detail pane's widget (`DetailPane`).
"""

from __future__ import annotations

import builtins

from textual.containers import VerticalScroll
from textual.message import Message
from textual.reactive import reactive
from textual.screen import Screen
from textual.timer import Timer

from patch_tui.approvals.store import Action, Event
from patch_tui.ui.inbox.inbox_list import ActionList
from patch_tui.ui.safe_text import JsonView


class DetailPane(VerticalScroll):
    """The detail pane. It says when the compositor laid it out anew (a new size, a new content
    height, shown after being hidden), because that is when "everything was shown" must be
    checked again: a call that arrives while the pane is hidden (the empty inbox) is rendered
    before the pane has a size, and its content height changes nothing a watcher sees (the
    compositor sets the size of an exposed widget without calling watchers)."""

    class LaidOut(Message):
        pass

    def on_resize(self) -> None:
        self.post_message(self.LaidOut())

    def on_show(self) -> None:
        self.post_message(self.LaidOut())


class InboxParts(Screen[None]):
    """The inbox screen's shared state (set in the screen's __init__)."""

    mode: reactive[str] = reactive("pending", init=False)
    can_approve: reactive[bool] = reactive(False, init=False)

    actions: builtins.list[Action]
    shown: builtins.list[Action]  # the rows after the history filters
    version: int | None
    current: Action | None
    expanded: set[str]
    view: JsonView | None
    seen_end: bool
    events: builtins.list[Event]
    _detail_timer: Timer | None
    # The details of the first page (the newest rows, shown while the rest is read) wait for
    # the tool's manifest: its model (pydantic) is imported after the first frame, by the
    # reading thread (inbox.py _poll), and DetailPart.tool_arrived fills the tool part in.
    tool_deferred: bool
    # How many rows the list will hold while it shows the first page of them (else None).
    listed_total: int | None

    @property
    def list(self) -> ActionList:
        return self.query_one("#list", ActionList)

    @property
    def detail(self) -> DetailPane:
        return self.query_one("#detail", DetailPane)

    def _tick(self) -> None:
        """Read the store now (the screen's poller)."""
        raise NotImplementedError

    def _apply_filter(self) -> None:
        """Show `actions` in the list (through the history's filters)."""
        raise NotImplementedError

    def _update_gate(self) -> None:
        """Say in the detail pane what a or r would do now (inbox/detail.py)."""
        raise NotImplementedError

    def refresh_now(self) -> None:
        """After a decision: read the store at once instead of at the next tick, and have the
        badge's watch read it too (a batch's count followed a tick late)."""
        self._tick()
        from patch_tui.ui.inbox.inbox_badge import pending_watch

        watch = pending_watch(self.app)
        if watch.started:
            watch.poll()
