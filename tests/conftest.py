"""Shared by every test folder. The kits (runtimekit, mcpkit, desk_helpers, inboxkit, lintkit)
hold the helpers; pyproject's `pythonpath` makes them importable from any folder below tests/."""

from __future__ import annotations

import gc
from pathlib import Path

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


@pytest.fixture
def desk_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A desk test's surroundings: the config and the store in tmp_path (never the user's), and
    an $EDITOR that does nothing, so F7 never opens a real editor."""
    monkeypatch.setenv("PATCH_TUI_CONFIG", str(tmp_path / "config.toml"))
    monkeypatch.setenv("PATCH_TUI_STORE", str(tmp_path / "store.sqlite3"))
    monkeypatch.setenv("EDITOR", "true")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A folder holding a copy of the desk tests' tool files (tests/fixtures/desk)."""
    from desk_helpers import tool_folder

    return tool_folder(tmp_path)
