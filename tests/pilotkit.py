"""Waiting in Pilot tests: one helper that polls a condition cheaply and lets the screen settle
once it holds.

The app under test runs on the test's own event loop, so a plain `asyncio.sleep` between checks
lets it work. `pilot.pause()` would also post a message to every widget and refresh the screen:
about 7 ms of CPU on the desk each time, so polling with it 50 times a second cost a quarter of a
core for as long as a test waited."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

POLL = 0.02
# A wait follows the app's state; its limit only ends a test whose app hangs. It is far above
# what any wait takes on a loaded machine (five workers on two cores, other jobs beside them),
# since a passing test never waits longer than its condition needs.
HANG = 60.0


async def until(
    pilot: Any,
    cond: Callable[[], object],
    timeout: float = HANG,
    what: str | Callable[[], str] = "condition",
) -> float:
    """Wait until cond() is true, then settle the screen; returns the seconds it took.
    `what` (or what it returns, for a message built at the time) names the wait when it fails."""
    loop = asyncio.get_running_loop()
    start = loop.time()
    if cond():
        return 0.0
    while not cond():
        if loop.time() - start > timeout:
            raise AssertionError(f"timed out waiting for {what() if callable(what) else what}")
        await asyncio.sleep(POLL)
    await pilot.pause()
    return loop.time() - start
