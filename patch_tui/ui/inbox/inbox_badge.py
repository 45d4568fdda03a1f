"""The app's one confirmation store, and the pending count shown on every screen.

    app_store(app)            -> Store   opened once per app, from a worker thread only (opening
                                         may wait on a lock); StoreError when it cannot be opened
    install_pending_watch(app)           the app's one store watch (approvals/watcher.py): keeps a
                                         PendingBadge on each screen, and publishes every
                                         StoreChanged on `pending_watch(app).store_changed`

Why a badge mounted into each screen rather than a line in one screen's header: the desk, help,
generate and inbox screens each have their own layout, and some have no header at all. The badge
is absolutely positioned in the top-right corner, so it takes no room in anyone's layout.
A new arrival also shows a toast (unless the inbox is already in front).

The watch never creates a store: with no store file yet the count is 0 until one appears, so
opening the desk never writes into the user's state folder.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.app import App
from textual.content import Content
from textual.screen import ModalScreen, Screen
from textual.signal import Signal
from textual.widgets import Static

from patch_tui.approvals.store import Store, StoreError
from patch_tui.approvals.watcher import StoreChanged, StoreWatcher
from patch_tui.settings.store_location import DatabaseURL
from patch_tui.ui.desk.host import DeskHost
from patch_tui.ui.services import services

if TYPE_CHECKING:
    from patch_tui.approvals.push import FailureLog

POLL_INTERVAL = 0.3
# A PostgreSQL store's watch sleeps this long at most between looks (a NOTIFY ends it at once).
LIVE_WAIT = 5.0


def store_path(app: App[Any]) -> Path | DatabaseURL:
    """Where the store is, fit to show: a database URL prints without its password."""
    return services(app).resolved_store_path


def app_store(app: App[Any]) -> Store:
    """The app's Store (thread-safe; call from workers: opening can block on a lock)."""
    return services(app).store()


class PendingBadge(Static):
    """`⚑ 3 pending`, top right; hidden at 0. Clicking it opens the inbox."""

    DEFAULT_CSS = """
    PendingBadge {
        position: absolute;
        overlay: screen;
        width: auto;
        height: 1;
        padding: 0 1;
        background: $warning;
        color: $text;
        text-style: bold;
        display: none;
    }
    PendingBadge.-busy { background: $error; }
    """

    def show_count(self, count: int, busy: bool) -> None:
        self.display = count > 0 or busy
        self.set_class(busy, "-busy")
        label = f"⚑ {count} pending" if count else "⚑"
        self.update(Content(label + (" · store busy" if busy else "")))
        self.call_after_refresh(self.place)

    def on_resize(self) -> None:
        # Placed from its own width: after a refresh that came before its first layout that
        # width was still 0 and the badge sat off the right edge (seen under load).
        self.place()

    def place(self) -> None:
        if self.is_attached:
            width = self.screen.size.width
            self.styles.offset = (max(0, width - self.outer_size.width - 1), 0)

    def on_click(self) -> None:
        if isinstance(self.app, DeskHost):  # the standalone inbox has no screens to open
            self.app.action_open_screen("inbox")


class PendingWatch:
    """The app's one watch on the store: a StoreWatcher (approvals/watcher.py) polled in a thread
    worker. Each StoreChanged updates the badge and the alerts here, and goes out on
    `store_changed` (a Textual Signal) to whoever else shows the store: the inbox."""

    def __init__(self, app: App[Any]) -> None:
        self.app = app
        self.count = 0
        self.busy = False
        self.last: StoreChanged | None = None
        self._running = False
        self._following = False
        self.started = False
        self._last_read = 0.0
        self.watcher = StoreWatcher(self._open_store)
        self.store_changed: Signal[StoreChanged] = Signal(app, "store-changed")
        from patch_tui.ui.alerts import Alerter

        self.alerter = Alerter(app)
        # Pushes `patch-tui web` could not deliver: said here too, so a person at the terminal
        # knows the phone was not told (approvals/push.py). Opened when the watch starts.
        self.push_failures: FailureLog | None = None

    @property
    def _known(self) -> set[str] | None:
        return self.watcher.known

    def _open_store(self) -> Store | None:
        # Never creates a store: with no store file yet there is nothing to watch.
        return services(self.app).open_store()

    def start(self) -> None:
        """Start polling (once: the app starts it, and so does a screen that shows the store
        live, whichever comes first)."""
        if self.started:
            return
        self.started = True
        # Imported here: push.py's senders (smtplib, urllib, email) are not for a first frame.
        from patch_tui.approvals.push import FailureLog, failure_log_path

        self.push_failures = FailureLog(failure_log_path(store_path(self.app)))
        self.app.screen_change_signal.subscribe(self.app, self._screen_changed)
        if self._live():
            # A database store announces every commit: one thread sleeps until it does.
            self._following = True
            self.app.run_worker(
                self._follow, thread=True, group="pending-watch", exit_on_error=False
            )
            return
        self.app.set_interval(POLL_INTERVAL, self.poll, name="pending-watch")
        self.poll()

    def _live(self) -> bool:
        try:
            return isinstance(services(self.app).resolved_store_path, DatabaseURL)
        except StoreError:
            return False

    def _follow(self) -> None:
        """The watch of a PostgreSQL store: sleep on its change feed, show each change. A lost
        connection shows as the store's error (the inbox's status line says so) until the feed
        is back, then everything missed is read again and a toast says so."""
        from textual.worker import get_current_worker

        worker = get_current_worker()
        first = True
        while not worker.is_cancelled:
            try:
                changed = self.watcher.poll() if first else self.watcher.wait(LIVE_WAIT)
            except Exception as exc:  # never let one bad read stop the watch for good
                changed = StoreChanged(
                    version=None,
                    pending_count=self.count,
                    error=StoreError(f"{store_path(self.app)}: cannot read the store: {exc!r}"),
                )
            first = False
            if changed is not None and changed.error is not None:
                time.sleep(1.0)  # the feed reconnects with its own backoff meanwhile
            try:
                self.app.call_from_thread(self._apply, changed)
            except RuntimeError:
                return  # the app is closing

    def poll(self) -> None:
        """Look at the store now (also what the timer calls)."""
        if self._running or self._following:
            return  # a read is still waiting on the store (or the live loop owns the watcher)
        self._running = True
        self.app.run_worker(
            self._read,
            thread=True,
            group="pending-watch",
            exit_on_error=False,
            name="pending count",
        )

    def _read(self) -> None:
        try:
            changed = self.watcher.poll()
        except Exception as exc:  # never let one bad read stop the watch for good
            changed = StoreChanged(
                version=None,
                pending_count=self.count,
                error=StoreError(f"{store_path(self.app)}: cannot read the store: {exc!r}"),
            )
        self._last_read = time.monotonic()
        failures = self.push_failures.read_new() if self.push_failures is not None else []
        try:
            if failures:
                self.app.call_from_thread(self._push_failed, failures)
            self.app.call_from_thread(self._apply, changed)
        except RuntimeError:
            self._running = False  # the app is closing

    def _push_failed(self, failures: list[str]) -> None:
        for sentence in failures:  # safe text: approvals/push.py made it one visible line
            self.app.notify(sentence, title="Push alert", severity="error", markup=False)

    def _apply(self, changed: StoreChanged | None) -> None:
        self._running = False
        if changed is None:
            return
        was = self.last
        self.last = changed
        if was is not None and was.error is not None and changed.error is None and self._live():
            self.app.notify(
                "The store is back: what changed meanwhile was read again.",
                title="Confirmation inbox",
                markup=False,
            )
        if changed.arrived:
            self.alerter.arrived(list(changed.arrived))
        if changed.departed and self._following:
            self._say_departed(changed.departed)
        busy = changed.busy
        # An unavailable store (not busy) shows no count, as before: nothing can be decided.
        count = 0 if changed.error is not None and not busy else changed.pending_count
        grew = count > self.count
        moved = count != self.count or busy != self.busy
        self.count, self.busy = count, busy
        if grew and type(self.app.screen).__name__ != "InboxScreen":
            noun = "action is" if count == 1 else "actions are"
            self.app.notify(
                f"{count} {noun} waiting for your approval: ctrl+r opens the inbox.",
                title="Confirmation inbox",
                severity="warning",
                markup=False,
            )
        if moved:
            self._update_badge(self.app.screen)
        self.store_changed.publish(changed)

    def _say_departed(self, departed: tuple[Any, ...]) -> None:
        """A team inbox: how the calls that left the queue ended, whoever ended them (a person
        on another laptop, a grant, the clock), so no one decides a call already decided."""
        for action in departed:
            if action.status == "expired":
                what = "expired undecided"
            elif action.decided_by:
                what = f"{action.status} by {action.decided_by}"
            else:
                what = str(action.status)
            self.app.notify(
                f"{action.tool} ({action.token[:8]}…) {what}.",
                title="Confirmation inbox",
                markup=False,
            )

    def _screen_changed(self, screen: Screen[Any]) -> None:
        self._update_badge(screen)

    def _update_badge(self, screen: Screen[Any]) -> None:
        if isinstance(screen, ModalScreen) or not screen.is_attached:
            return
        badges = list(screen.query(PendingBadge))
        if not badges:
            if self.count == 0 and not self.busy:
                return
            badge = PendingBadge(id="pending-badge")
            screen.mount(badge)
            badge.show_count(self.count, self.busy)
            return
        badges[0].show_count(self.count, self.busy)


def pending_watch(app: App[Any]) -> PendingWatch:
    """The app's watch, made (not started) on first use: the inbox subscribes to it on mount,
    which may come before the app starts it."""
    svc = services(app)
    if svc.watch is None:
        svc.watch = PendingWatch(app)
    return svc.watch


def install_pending_watch(app: App[Any]) -> PendingWatch:
    watch = pending_watch(app)
    watch.start()
    return watch
