"""Shared by every test folder. The kits (runtimekit, mcpkit, desk_helpers, inboxkit, lintkit)
hold the helpers; pyproject's `pythonpath` makes them importable from any folder below tests/."""

from __future__ import annotations

import gc

import pytest


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """End a worker quietly. pytest-xdist stops a worker that is still busy 5 s after the run
    ended by sending it SIGINT (execnet); under load its teardown (collecting the garbage of
    hundreds of apps) can take that long, and the KeyboardInterrupt then lands in the garbage
    collector callback hypothesis installs to time GC, where Python can only print it
    ("Exception ignored in: gc_callback ... KeyboardInterrupt") at the end of the output. The
    tests are over: drop that callback and stop collecting, so the worker ends at once."""
    gc.callbacks[:] = [
        cb for cb in gc.callbacks if not getattr(cb, "__module__", "").startswith("hypothesis")
    ]
    gc.disable()
