"""Allow calls like this for… (issue 17 item 2, TUI): a standing grant from a selected action."""

from __future__ import annotations

from pathlib import Path

import pytest
from inboxkit import hold, inbox_app, isolate, open_inbox, read_to_end, tools, wait_for
from textual.widgets import Checkbox, Input

from patch_tui.approvals import grants
from patch_tui.approvals.store import Store
from patch_tui.ui.inbox.allow_dialog import AllowDialog

SIZE = (110, 36)


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> tuple[Path, Path]:
    store = isolate(monkeypatch, tmp_path)
    return tools(tmp_path), store


async def _open(pilot, app, screen) -> AllowDialog:
    await read_to_end(pilot, screen)
    await pilot.press("g")
    await wait_for(pilot, lambda: isinstance(app.screen, AllowDialog), what="the allow dialog")
    await pilot.pause()
    return app.screen


async def test_allow_a_widened_pattern_approves_this_call_by_the_grant(env) -> None:
    folder, store = env
    action = hold(
        store, folder / "delete_file.py", {"path": "/tmp/build/a.log", "missing_ok": True}
    )
    app = inbox_app(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_inbox(pilot, app)
        dialog = await _open(pilot, app, screen)
        path_glob = dialog.query_one("#allow-glob-0", Input)
        assert path_glob.value == "/tmp/build/a.log"  # starts exact: as narrow as it can be
        assert dialog.query_one("#allow-glob-1", Input).value == "true"  # a boolean as JSON
        path_glob.value = "/tmp/build/*"
        dialog.query_one("#allow-use-1", Checkbox).value = False  # missing_ok: any value
        await pilot.pause()
        preview = str(dialog.query_one("#allow-preview").render())
        assert "path=/tmp/build/*" in preview and "missing_ok" not in preview
        assert "This call matches: yes" in preview
        await pilot.click("#allow-ok")
        await wait_for(
            pilot, lambda: not isinstance(app.screen, AllowDialog), what="the dialog to close"
        )
    with Store(store, actor="check") as s:
        [grant] = grants.list_grants(s)
        assert grant.tool == "delete_file" and [str(p) for p in grant.patterns] == [
            "path=/tmp/build/*"
        ]
        assert grant.source_sha256 == action.source_sha256 and grant.uses == 1
        done = s.get(action.token)
        assert done.status == "approved" and done.grant_id == grant.id
        assert done.decided_by == f"grant {grant.id} ({grant.created_by})"


async def test_a_tainted_hold_cannot_be_allowed(env) -> None:
    folder, store = env
    hold(
        store,
        folder / "delete_file.py",
        {"path": "/tmp/x"},
        kind="tainted_input",
        details={
            "tainted_inputs": [{"input": "path", "source_tools": ["fetch"]}],
            "source_tools": ["fetch"],
        },
    )
    app = inbox_app(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_inbox(pilot, app)
        await read_to_end(pilot, screen)
        await pilot.press("g")
        await pilot.pause(0.2)
        assert not isinstance(app.screen, AllowDialog)
    with Store(store, actor="check") as s:
        assert grants.list_grants(s, ended=True) == []


async def test_cancel_makes_no_grant(env) -> None:
    folder, store = env
    action = hold(store, folder / "delete_file.py", {"path": "/tmp/y"})
    app = inbox_app(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_inbox(pilot, app)
        await _open(pilot, app, screen)
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, AllowDialog), what="cancel")
    with Store(store, actor="check") as s:
        assert grants.list_grants(s, ended=True) == []
        assert s.get(action.token).status == "pending"
