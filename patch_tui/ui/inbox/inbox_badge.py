"""The app's one confirmation store, and the pending count shown on every screen.

    app_store(app)            -> Store   opened once per app, from a worker thread only (opening
                                         may wait on a lock); StoreError when it cannot be opened
    install_pending_watch(app)           polls the count and keeps a PendingBadge on each screen

Why a badge mounted into each screen rather than a line in one screen's header: the desk, help,
generate and inbox screens each have their own layout, and some have no header at all. The badge
is absolutely positioned in the top-right corner, so it takes no room in anyone's layout.
A new arrival also shows a toast (unless the inbox is already in front).

The watch never creates a store: with no store file yet the count is 0 until one appears, so
opening the desk never writes into the user's state folder.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from textual.app import App
from textual.content import Content
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from patch_tui.approvals.store import Store, StoreBusy, StoreError

POLL_INTERVAL = 0.3
# The TUI waits on a lock for at most this long per read, then says "store busy" and retries.
TUI_BUSY_TIMEOUT_MS = 1500
_OPEN_LOCK = threading.Lock()


def store_path(app: App[Any]) -> Path:
    from patch_tui.settings import paths

    explicit = getattr(app, "store_path", None)
    return paths.default_store(explicit)


def app_store(app: App[Any]) -> Store:
    """The app's Store (thread-safe; call from workers: opening can block on a lock)."""
    with _OPEN_LOCK:
        store: Store | None = getattr(app, "_patch_store", None)
        if store is None:
            settings = getattr(app, "settings", None)
            ttl = float(getattr(settings, "confirm_ttl", 300) or 300)
            store = Store(store_path(app), actor="tui", ttl=ttl, busy_timeout_ms=TUI_BUSY_TIMEOUT_MS)
            app._patch_store = store  # type: ignore[attr-defined]
        return store


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
        opener = getattr(self.app, "action_open_screen", None)
        if opener is not None:
            opener("inbox")


class PendingWatch:
    """Polls the store's pending count (data_version first: a cheap read) in a thread worker."""

    def __init__(self, app: App[Any]) -> None:
        self.app = app
        self.count = 0
        self.busy = False
        self._version: int | None = None
        self._running = False
        self._last_read = 0.0
        self._seen_tokens = 0
        # Tokens pending at the last read (None before the first): what is new since then
        # is what the alerts announce (ui/alerts.py); what was waiting at start-up is not.
        self._known: set[str] | None = None
        from patch_tui.ui.alerts import Alerter

        self.alerter = Alerter(app)

    def start(self) -> None:
        self.app.set_interval(POLL_INTERVAL, self._tick, name="pending-watch")
        self.app.screen_change_signal.subscribe(self.app, self._screen_changed)
        self._tick()

    def _tick(self) -> None:
        if self._running:
            return  # a read is still waiting on the store: never pile up threads
        self._running = True
        self.app.run_worker(
            self._read, thread=True, group="pending-watch", exit_on_error=False, name="pending count"
        )

    def _read(self) -> None:
        count, busy = self.count, False
        arrived: list[Any] = []
        try:
            if getattr(self.app, "_patch_store", None) is None and not store_path(self.app).exists():
                count = 0
                self._known = set()
            else:
                store = app_store(self.app)
                version = store.data_version()
                # Re-count on a change, and every second anyway: expiry changes no version.
                if version != self._version or time.monotonic() - self._last_read > 1.0:
                    count = store.pending_count()
                    if version != self._version or self._known is None:
                        arrived = self._arrivals(store)
                    self._version = version
                    self._last_read = time.monotonic()
        except StoreBusy:
            busy = True
        except StoreError:
            count = 0
        except Exception:  # never let one bad read stop the badge for good
            count = self.count
        try:
            self.app.call_from_thread(self._apply, count, busy, arrived)
        except RuntimeError:
            self._running = False  # the app is closing

    def _arrivals(self, store: Store) -> list[Any]:
        pending = store.list_actions(statuses=("pending",), limit=200)
        known, self._known = self._known, {a.token for a in pending}
        if known is None:
            return []
        return [a for a in reversed(pending) if a.token not in known]

    def _apply(self, count: int, busy: bool, arrived: list[Any] | None = None) -> None:
        self._running = False
        if arrived:
            self.alerter.arrived(arrived)
        grew = count > self.count
        changed = count != self.count or busy != self.busy
        self.count, self.busy = count, busy
        if grew and type(self.app.screen).__name__ != "InboxScreen":
            noun = "action is" if count == 1 else "actions are"
            self.app.notify(
                f"{count} {noun} waiting for your approval: ctrl+r opens the inbox.",
                title="Confirmation inbox",
                severity="warning",
                markup=False,
            )
        if changed:
            self._update_badge(self.app.screen)

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


def install_pending_watch(app: App[Any]) -> PendingWatch:
    watch = PendingWatch(app)
    app._pending_watch = watch  # type: ignore[attr-defined]
    watch.start()
    return watch
