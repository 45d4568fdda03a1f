"""Shared by every test folder. The kits (runtimekit, mcpkit, desk_helpers, inboxkit, lintkit)
hold the helpers; pyproject's `pythonpath` makes them importable from any folder below tests/."""

from __future__ import annotations

import atexit
import gc
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# Every store a test opens is recorded in the state folder's registry (runtime/protected.py):
# the tests' own state folder, never the user's. A test that sets XDG_STATE_HOME itself wins.
os.environ.setdefault("XDG_STATE_HOME", tempfile.mkdtemp(prefix="patch-tui-tests-state-"))


def _test_approver_key() -> None:
    """One approver key for this test process and every CLI, serve and guard it starts (they
    inherit the environment): approvals made in-process then verify in a subprocess, as one
    person's on one machine do. Never the developer's own key: `approver_key` points here. Tests
    about the default key file or other approvers unset it or pass their own signer."""
    if os.environ.get("PATCH_TUI_APPROVER_KEY"):
        return
    from patch_tui.approvals.keys import create_key_file

    folder = tempfile.mkdtemp(prefix="patch-tui-test-key-")
    atexit.register(shutil.rmtree, folder, True)
    path = Path(folder) / "approver_ed25519"
    create_key_file(path, "tester@test")
    os.environ["PATCH_TUI_APPROVER_KEY"] = str(path)


_test_approver_key()


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """The garbage collector, tuned for a test worker. Each Pilot test builds and drops an app of
    some hundred thousand short-lived objects; with Python's default thresholds (700, 10, 10) a
    worker spent about a fifth of its CPU time collecting, mostly walking the modules, classes
    and functions every test imports and never frees. Those are frozen once collected (moved
    out of the collector's reach), and the youngest generation is collected every 10,000
    allocations instead of 700. Measured on the desk's test files: 57 s of CPU without, 46 s
    with; each worker holds about 50 MB more."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(10_000, 10, 10)


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


@pytest.fixture
def generate_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A generation test's surroundings: no API key, base URL or model from the developer's
    environment, and the config and the toolbox in tmp_path."""
    for var in (
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "ANTHROPIC_AUTH_TOKEN",
        "PATCH_TUI_MODEL",
    ):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PATCH_TUI_CONFIG", str(tmp_path / "config.toml"))
    monkeypatch.setenv("PATCH_TUI_TOOLBOX", str(tmp_path / "toolbox"))


@pytest.fixture
def fake() -> Iterator[Any]:
    """The fake Claude Messages API on 127.0.0.1 (tests/fake_anthropic.py), speaking the real
    SSE protocol to the real anthropic SDK."""
    from fake_anthropic import FakeAnthropic

    with FakeAnthropic() as server:
        yield server


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """One clear line when the web inbox's browser tests were skipped for want of a browser."""
    skipped = terminalreporter.stats.get("skipped", [])
    if not any("test_web_browser" in getattr(r, "nodeid", "") for r in skipped):
        return
    from tests.webkit import browser_missing

    why = browser_missing()
    if why is not None:
        terminalreporter.write_line(f"web inbox browser tests skipped: {why}")
