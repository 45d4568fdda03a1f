"""One watcher of the confirmation store for everything in a process that shows it live.

    watcher = StoreWatcher(open_store)     open_store() -> Store, or None while no store file exists
    changed = watcher.poll()               -> StoreChanged | None   (None: nothing changed)
    changed = watcher.wait(timeout)        sleeps until the store changes, then poll()

A UI calls `poll()` every 300 ms or so (SQLite), or loops on `wait()` (PostgreSQL: woken by
LISTEN/NOTIFY, so nothing is read while nothing happens), off its UI thread (a read may wait on
the store's lock), and hands each `StoreChanged` to whatever shows the store: the pending badge,
the inbox. So one process reads the store once per change however many views it has.

What a poll costs: `data_version()` (one cheap read) when nothing changed and nothing is due.
When the version moved, on the first poll, or once the earliest expiry has passed, it settles
the store (`Store.settle()`: due actions become expired, dead claimers interrupted; a write only
when something is due), then counts the pending actions, reads the next expiry and the newest
pending ones (to say which arrived). Expiry is settled here, explicitly, because reading the
store never writes (`Store.list_actions` is a pure read).

`StoreChanged` carries what the views need: the version it describes (a view re-reads its own
rows when that differs from the version of its last read), the pending count, the next expiry,
the pending actions that arrived since the previous change (none on the first), and the error
when the store could not be read (`StoreBusy`: the next poll tries again).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from patch_tui.approvals.store import (
    Action,
    ActionStatus,
    Store,
    StoreBusy,
    StoreError,
    parse_iso,
)

# The newest pending actions read to find arrivals: more than a person reads in one toast.
ARRIVALS_WINDOW = 200
# Departures read back to say how they ended: a few toasts' worth.
DEPARTED_SHOWN = 5


@dataclass(frozen=True)
class StoreChanged:
    """What changed in the store since the previous `StoreChanged` (or the first look at it)."""

    # The store's data_version after settling; None while there is no store file yet, or when
    # it could not be read.
    version: int | None
    pending_count: int
    # The earliest expiry of a pending or approved action, in epoch seconds (inf: none).
    next_due: float = float("inf")
    # Pending actions that arrived since the previous change, oldest first. Empty on the first
    # look: what was waiting before is not news.
    arrived: tuple[Action, ...] = ()
    # Why the store could not be read this time (StoreBusy: another process holds its lock).
    error: StoreError | None = None
    # Actions pending at the previous look and no longer (decided, expired, ...), as they are
    # now; at most DEPARTED_SHOWN of them. A team inbox says who decided what, elsewhere.
    departed: tuple[Action, ...] = ()

    @property
    def busy(self) -> bool:
        return isinstance(self.error, StoreBusy)

    def _same_as(self, other: StoreChanged | None) -> bool:
        return (
            other is not None
            and not self.arrived
            and not self.departed
            and (self.version, self.pending_count, self.next_due, _error_key(self.error))
            == (other.version, other.pending_count, other.next_due, _error_key(other.error))
        )


def _error_key(error: StoreError | None) -> tuple[type, str] | None:
    return None if error is None else (type(error), str(error))


class StoreWatcher:
    """Polls one store and says what changed. Not thread-safe: poll from one thread at a time."""

    def __init__(
        self,
        open_store: Callable[[], Store | None],
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._open_store = open_store
        self._clock = clock
        self.last: StoreChanged | None = None
        # Tokens pending at the last read (None before the first): what is new since then is
        # what arrived.
        self.known: set[str] | None = None
        self.polls = 0

    def poll(self) -> StoreChanged | None:
        """One look at the store: a StoreChanged when anything a view shows changed, else None."""
        self.polls += 1
        try:
            changed = self._look()
        except StoreError as exc:
            last = self.last
            changed = StoreChanged(
                version=None,
                pending_count=0 if last is None else last.pending_count,
                next_due=float("inf") if last is None else last.next_due,
                error=exc,
            )
        if changed is None or changed._same_as(self.last):
            return None
        self.last = changed
        return changed

    def wait(self, timeout: float) -> StoreChanged | None:
        """Sleep until the store changes (at most `timeout` seconds, and never past the next
        expiry), then poll. On PostgreSQL the sleep ends on a NOTIFY from any machine, so a live
        view updates within a round trip and reads nothing while nothing happens."""
        last = self.last
        if last is not None and last.error is None and last.version is not None:
            left = min(timeout, max(0.0, last.next_due - self._clock()))
            try:
                store = self._open_store()
                if store is not None:
                    store.wait_for_change(last.version, left)
            except StoreError:
                pass  # poll() says what is wrong
        return self.poll()

    def _look(self) -> StoreChanged | None:
        store = self._open_store()
        if store is None:
            self.known = set()
            return StoreChanged(version=None, pending_count=0)
        last = self.last
        version = store.data_version()
        due = last is not None and self._clock() >= last.next_due
        if last is not None and last.error is None and version == last.version and not due:
            return None  # the common case: one cheap read
        if store.settle():
            version = store.data_version()
        expiry = store.next_expiry()
        arrived, gone = self._arrivals(store)
        departed = [a for a in (store.get(t) for t in gone[:DEPARTED_SHOWN]) if a is not None]
        return StoreChanged(
            version=version,
            pending_count=store.pending_count(),
            next_due=parse_iso(expiry) if expiry else float("inf"),
            arrived=tuple(arrived),
            departed=tuple(a for a in departed if a.status != ActionStatus.PENDING),
        )

    def _arrivals(self, store: Store) -> tuple[list[Action], list[str]]:
        """(pending actions new since the last look, oldest first; tokens pending then and not
        now). Both empty on the first look."""
        pending = store.list_actions(statuses=(ActionStatus.PENDING,), limit=ARRIVALS_WINDOW)
        known, self.known = self.known, {a.token for a in pending}
        if known is None:
            return [], []
        gone = sorted(known - self.known) if len(pending) < ARRIVALS_WINDOW else []
        return [a for a in reversed(pending) if a.token not in known], gone
