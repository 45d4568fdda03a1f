"""A push `patch-tui web` could not deliver is said in the TUI too (issue 29, item 3): the
person at the terminal learns the phone was not told. The web app records the failure beside
the store (approvals/push.py's FailureLog); the TUI's store watch reads what is new."""

from __future__ import annotations

from pathlib import Path

import pytest
from inboxkit import hold, isolate, make_app, tools, wait_for

from patch_tui.approvals.push import FailureLog, PushResult, PushTarget, failure_log_path


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> tuple[Path, Path]:
    store = isolate(monkeypatch, tmp_path)
    return tools(tmp_path), store


async def test_a_failed_push_shows_in_the_tui_once_and_old_ones_do_not(env) -> None:
    folder, store = env
    action = hold(store, folder / "delete_file.py", {"path": "/tmp/a.txt"})
    target = PushTarget("alice", "ntfy", "https://ntfy.example/alice-topic")
    log = FailureLog(failure_log_path(store))
    log.append(PushResult(target, "old" * 11, False, 4, "HTTP 500"))  # before the app: not news
    app = make_app(folder, store)
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.pause(0.5)
        log.append(PushResult(target, action.token, False, 4, "HTTP 503 \x1b]0;x\x07"))

        def said() -> list[str]:
            return [str(n.message) for n in app._notifications if "push" in str(n.message)]

        await wait_for(pilot, lambda: bool(said()), what="the failed push's notification")
        await pilot.pause(0.6)
        [sentence] = said()
    assert sentence.startswith("A push to ntfy https://ntfy.example for alice failed")
    assert action.token[:8] in sentence and "HTTP 503" in sentence
    assert "\x1b" not in sentence and "\x07" not in sentence  # the error is shown, not obeyed
    assert "alice-topic" not in sentence  # a webhook's secret path never reaches the screen
