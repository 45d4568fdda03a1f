"""`patch_confirm_action` waits for the person, in `serve` and `guard` alike.

    await wait_for_decision(store, token, wait=50, report=ctx.session.report_progress)

Returns as soon as the action is no longer pending (approved, rejected, expired, gone), or when
`wait` seconds have passed, whichever comes first; the caller then answers as it always did
(runs it, `rejected` with the reason, or `awaiting_approval`). So one call completes the moment
a person decides in the inbox, and an agent needs no polling loop of its own.

Why a bounded wait (default 50 s, the `confirm_wait` setting): MCP hosts time a request out
(60 s is common, the TypeScript SDK's default), and a timed-out request is an error the agent
may retry or give up on, while `awaiting_approval` tells it to ask again. While it waits, a
progress notification goes out every couple of seconds when the client sent a progress token
(`report` is a no-op otherwise); hosts that reset their timeout on progress then keep waiting.

The wait sleeps in `store.wait_for_change()` until anything commits: on PostgreSQL a NOTIFY wakes
it (no polling, any machine's decision within a round trip), on SQLite it reads `data_version()`
every 250 ms. The row is read again only when the version moved. A store that stops answering
(a database restarting) does not end the wait: it keeps waiting and reads again once it is back.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from patch_tui.approvals.store import Store, StoreError, parse_iso

DEFAULT_WAIT = 50.0
POLL = 0.25  # seconds between data_version reads: what a person perceives as "at once"
PROGRESS_EVERY = 2.0
WAIT_MESSAGE = "waiting for a person to approve or reject this call in the patch-tui inbox"

Report = Callable[[float, float | None, str | None], Awaitable[Any]]


def confirm_wait_setting() -> float:
    """The `confirm_wait` setting (seconds; 0 answers at once). A broken config gives the
    default: the server still starts, and `patch-tui` reports the file elsewhere."""
    from patch_tui.settings.config import ConfigError, load_settings

    try:
        value = float(load_settings().confirm_wait)
    except (ConfigError, AttributeError, TypeError, ValueError):
        return DEFAULT_WAIT
    return max(0.0, value)


async def wait_for_decision(
    store: Store,
    token: str,
    *,
    wait: float,
    report: Report | None = None,
    poll: float = POLL,
) -> None:
    import anyio

    if wait <= 0:
        return
    started = time.monotonic()
    deadline = started + wait
    seen: int | None = None
    expires: float | None = None
    next_report = started
    while True:
        reachable = True
        try:
            version = await anyio.to_thread.run_sync(store.data_version)
            if version != seen:
                action = await anyio.to_thread.run_sync(store.get, token)
                if action is None or action.status != "pending":
                    return
                seen, expires = version, parse_iso(action.expires_at)
        except StoreError:
            # Unreachable (a database restarting) or busy: the call keeps waiting, and reads
            # the action again once the store answers.
            reachable, seen = False, None
        now = time.monotonic()
        if now >= deadline or (expires is not None and time.time() >= expires):
            return
        if report is not None and now >= next_report:
            next_report = now + PROGRESS_EVERY
            try:
                await report(round(now - started, 1), wait, WAIT_MESSAGE)
            except Exception:  # a client gone or refusing progress: keep waiting, never crash
                report = None
        left = deadline - now
        if report is not None:
            left = min(left, max(poll, next_report - now))
        if expires is not None:
            left = min(left, max(0.0, expires - time.time()))
        if reachable:
            # Until anything commits: PostgreSQL wakes on NOTIFY, SQLite looks every 250 ms.
            await anyio.to_thread.run_sync(_wait, store, seen, left)
        else:
            await anyio.sleep(min(1.0, left))


def _wait(store: Any, seen: int | None, timeout: float) -> None:
    try:
        store.wait_for_change(seen, timeout)
    except StoreError:
        pass  # the loop reads again, and waits out an unreachable store there
