"""The PostgreSQL store's change feed: one LISTEN connection per process, in a thread.

    feed = store.feed()                       started on first use
    mark = feed.mark()                        take this before reading the store ...
    feed.wait(mark, timeout)                  ... then sleep until anything commits after it
    feed.status                               FeedStatus: connected, or why not and since when

Every write transaction of the store ends with NOTIFY (delivered only if it commits), so a
waiter wakes within a round trip of any process's decision, on any machine, and no one polls
the database. Taking `mark()` before reading closes the gap between a read and the wait: a
commit after the mark always moves it.

A lost connection is retried with backoff (0.1 s doubling to 5 s). Notifications sent while it
was down are lost, so each reconnection moves the mark too: every waiter wakes and re-reads
the store, which is how what was missed gets read. `status` says so meanwhile (the inbox shows
it). The thread is a daemon and holds one connection; `close()` ends both.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import psycopg

from patch_tui.approvals.postgres.migrations import CHANNEL
from patch_tui.approvals.values import StoreError

BACKOFF_START = 0.1
BACKOFF_MAX = 5.0


@dataclass(frozen=True)
class FeedStatus:
    connected: bool
    # Why not (a StoreError's text, never holding a password), and since when (epoch seconds).
    error: str | None = None
    since: float = 0.0
    # How many times the connection was made again after being lost.
    reconnects: int = 0


class ChangeFeed:
    def __init__(self, conninfo: str, translate: Callable[[BaseException], StoreError]) -> None:
        self._conninfo = conninfo
        self._translate = translate
        self._cond = threading.Condition()
        self._mark = 0
        self._closed = False
        self._conn: psycopg.Connection[Any] | None = None
        self.status = FeedStatus(connected=False, error="connecting", since=time.time())
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="patch-tui store feed", daemon=True)
        self._thread.start()
        # The first connection is usually made within milliseconds; a waiter that came before
        # it would miss a change committed in between, so wait for it a little.
        self._ready.wait(2.0)

    def mark(self) -> int:
        with self._cond:
            return self._mark

    def wait(self, mark: int, timeout: float) -> bool:
        """Sleep until something committed after `mark` (or the feed reconnected), at most
        `timeout` seconds; whether it did."""
        deadline = time.monotonic() + max(0.0, timeout)
        with self._cond:
            while self._mark == mark and not self._closed:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
            return self._mark != mark

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        conn = self._conn
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.close()
        self._thread.join(timeout=2.0)

    # -- the thread ---------------------------------------------------------------------------

    def _moved(self) -> None:
        with self._cond:
            self._mark += 1
            self._cond.notify_all()

    def _run(self) -> None:
        backoff = BACKOFF_START
        reconnects = 0
        first = True
        while not self._closed:
            try:
                conn = psycopg.connect(self._conninfo, autocommit=True)
            except psycopg.Error as exc:
                self._down(exc, reconnects)
                self._ready.set()
                time.sleep(backoff)
                backoff = min(BACKOFF_MAX, backoff * 2)
                continue
            self._conn = conn
            try:
                conn.execute(f"LISTEN {CHANNEL}")
                if not first:
                    reconnects += 1
                self.status = FeedStatus(True, None, time.time(), reconnects)
                # Whatever committed while no one listened: every waiter re-reads.
                self._moved()
                self._ready.set()
                first = False
                backoff = BACKOFF_START
                checked = time.monotonic()
                while not self._closed:
                    for _note in conn.notifies(timeout=1.0):
                        self._moved()
                    # A dead server closes the socket and notifies() raises; a silently dropped
                    # network does not, so a cheap query every few seconds finds it.
                    if time.monotonic() - checked > 5.0:
                        conn.execute("SELECT 1")
                        checked = time.monotonic()
            except psycopg.Error as exc:
                if self._closed:
                    break
                self._down(exc, reconnects)
                self._moved()  # waiters re-read now, and see the store as unreachable
                time.sleep(backoff)
                backoff = min(BACKOFF_MAX, backoff * 2)
            finally:
                self._conn = None
                with contextlib.suppress(Exception):
                    conn.close()

    def _down(self, exc: BaseException, reconnects: int) -> None:
        since = self.status.since if not self.status.connected else time.time()
        self.status = FeedStatus(False, str(self._translate(exc)), since, reconnects)
