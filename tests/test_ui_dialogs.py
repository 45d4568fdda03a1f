"""Pilot tests of the modal input rule and the inbox's decisions, as a person types them: a call
that arrives while the inbox is open, sentences typed into every dialog, Esc in the history."""

from __future__ import annotations

from pathlib import Path

import pytest
from inboxkit import hold, inbox_app, isolate, open_inbox, tools, wait_for

from patch_tui.core.store import Store
from patch_tui.ui.widgets.inbox_dialogs import DecideModal

SIZE = (120, 36)


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> tuple[Path, Path]:
    store = isolate(monkeypatch, tmp_path)
    return tools(tmp_path), store


def _status(store: Path, token: str):
    with Store(store, actor="check") as s:
        return s.get(token)


async def test_a_call_arriving_while_the_inbox_is_open_is_approved_with_a_y(env) -> None:
    folder, store = env
    app = inbox_app(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_inbox(pilot, app)
        assert not screen.list.actions and screen.has_class("-empty")
        action = hold(store, folder / "delete_file.py", {"path": "/tmp/a.txt"})
        await wait_for(pilot, lambda: screen.current is not None, what="the live call")
        # Its details fit the pane: everything is shown, approve is enabled by itself.
        await wait_for(pilot, lambda: screen.can_approve, what="approve to be enabled")
        assert screen.detail.max_scroll_y == 0
        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(app.screen, DecideModal), what="the dialog")
        await pilot.press("y")
        await wait_for(pilot, lambda: not isinstance(app.screen, DecideModal), what="the dialog to close")
        assert _status(store, action.token).status == "approved"


async def test_a_live_call_taller_than_a_small_pane_is_approved_after_reading_on(env) -> None:
    folder, store = env
    app = inbox_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_inbox(pilot, app)
        action = hold(store, folder / "delete_file.py", {"path": "/tmp/a.txt"})
        await wait_for(pilot, lambda: screen.current is not None and screen.detail.max_scroll_y > 0, what="the live call laid out")
        assert not screen.can_approve  # at 80x24 it does not fit: space reads it on
        for _ in range(10):
            if screen.can_approve:
                break
            await pilot.press("space")
            await pilot.pause(0.05)
        assert screen.can_approve
        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(app.screen, DecideModal), what="the dialog")
        await pilot.press("y")
        await wait_for(pilot, lambda: not isinstance(app.screen, DecideModal), what="the dialog to close")
        assert _status(store, action.token).status == "approved"
