"""`python -m patch_tui` and the `patch-tui` script (`entry`): one command, then the end."""

from __future__ import annotations

import gc
import os
import sys

from patch_tui.cli import DISPATCHED, main

# Commands whose process has nothing left to do once they return (end_at_once): `inbox list`
# leaves 10,000 listed actions and psycopg's modules to free, a fifth of its time.
ENDS_AT_ONCE = frozenset({"run", "inbox list"})


def end_at_once(code: int) -> None:
    """After a command in ENDS_AT_ONCE: end the process now, with stdout and stderr flushed and
    the audit record's background fsync done, but without the interpreter's teardown (freeing
    every loaded module: about 20 ms of a 200 ms `run`, 20-40 ms of `inbox list --json` with
    10,000 pending on PostgreSQL). Returns, for the usual exit, after any
    other command or when a flush fails (the usual exit then says what it says)."""
    if not DISPATCHED or DISPATCHED[-1] not in ENDS_AT_ONCE:
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    files = sys.modules.get("patch_tui.runtime.toolbox_files")
    if files is not None:
        files.wait_for_syncs()
    os._exit(code)


def collector_for(command: str) -> None:
    """Told the command `entry` dispatches: a command that lives on (the TUI, serve, guard,
    ...) gets Python's cycle collector back; one in ENDS_AT_ONCE keeps it paused, for it frees
    nothing before it ends (its imports alone ran it a dozen times: about 15 ms of
    `inbox list --json`)."""
    if command not in ENDS_AT_ONCE:
        gc.enable()


def entry() -> None:
    gc.disable()  # until collector_for hears which command runs
    code = main(on_dispatch=collector_for)
    end_at_once(code)  # `run`, `inbox list`: end here, without the interpreter's teardown
    raise SystemExit(code)


if __name__ == "__main__":
    entry()
