"""The live side of the web app: one store watcher for the whole process, fanned out to every
open page as server-sent events, and handing new arrivals to the push alerts.

One thread polls the store through `approvals.watcher.StoreWatcher` (a `data_version()` read per
tick, a re-read only on a change: the same watcher the TUI uses, and the one a PostgreSQL
LISTEN/NOTIFY feed stands behind), so a hundred open phones cost one poll. Each change becomes a
version number sent to every subscriber's queue; a page then fetches its list fragment again.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable

from patch_tui.approvals.store import Store
from patch_tui.approvals.watcher import StoreChanged, StoreWatcher

log = logging.getLogger("patch_tui.web")


class LiveFeed:
    def __init__(
        self,
        open_store: Callable[[], Store | None],
        interval: float,
        on_arrived: Callable[[StoreChanged], None] | None = None,
    ) -> None:
        self._watcher = StoreWatcher(open_store)
        self._interval = interval
        self._on_arrived = on_arrived
        self._subscribers: set[tuple[asyncio.AbstractEventLoop, asyncio.Queue[int]]] = set()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.version = 0

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="store-watch", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)

    def subscribe(self) -> asyncio.Queue[int]:
        queue: asyncio.Queue[int] = asyncio.Queue(maxsize=8)
        with self._lock:
            self._subscribers.add((asyncio.get_running_loop(), queue))
        return queue

    def unsubscribe(self, queue: asyncio.Queue[int]) -> None:
        with self._lock:
            self._subscribers = {s for s in self._subscribers if s[1] is not queue}

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                changed = self._watcher.poll()
            except Exception:  # a poll that fails must not end the live list for good
                log.exception("the store watcher failed; trying again")
                changed = None
            if changed is not None:
                self.version += 1
                self._publish(self.version)
                if changed.arrived and self._on_arrived is not None:
                    self._on_arrived(changed)
            self._stop.wait(self._interval)

    def _publish(self, version: int) -> None:
        with self._lock:
            subscribers = list(self._subscribers)
        for loop, queue in subscribers:
            try:
                loop.call_soon_threadsafe(_offer, queue, version)
            except RuntimeError:  # that page's loop is closed
                self.unsubscribe(queue)


def _offer(queue: asyncio.Queue[int], version: int) -> None:
    if queue.full():  # a slow page needs only the newest version
        queue.get_nowait()
    queue.put_nowait(version)
