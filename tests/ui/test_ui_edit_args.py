"""Edit, then approve in the inbox (issue 17 item 1, TUI): `e` opens the args in a form built
from the tool's inputs, with the changes against the proposal; approving runs the edited args."""

from __future__ import annotations

from pathlib import Path

import pytest
from inboxkit import hold, inbox_app, isolate, open_inbox, read_to_end, tools, wait_for
from runtimekit import write_tool
from textual.widgets import Button, Input, Select, TextArea

from patch_tui.approvals.store import Store
from patch_tui.ui.inbox.edit_args_dialog import EditArgsDialog

SIZE = (110, 36)


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> tuple[Path, Path]:
    store = isolate(monkeypatch, tmp_path)
    return tools(tmp_path), store


def _get(store: Path, token: str):
    with Store(store, actor="check") as s:
        return s.get(token)


async def _open_editor(pilot, app, screen) -> EditArgsDialog:
    await read_to_end(pilot, screen)
    await pilot.press("e")
    await wait_for(pilot, lambda: isinstance(app.screen, EditArgsDialog), what="the edit dialog")
    dialog = app.screen
    await wait_for(pilot, lambda: bool(dialog.baseline), what="the form filled")
    return dialog


async def test_edit_a_field_see_the_change_and_approve_the_edited_args(env) -> None:
    folder, store = env
    proposed = {"path": "/home/me", "missing_ok": False}
    action = hold(store, folder / "delete_file.py", proposed)
    app = inbox_app(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_inbox(pilot, app)
        dialog = await _open_editor(pilot, app, screen)
        approve = dialog.query_one("#edit-approve", Button)
        assert approve.disabled  # nothing changed yet: nothing to approve here
        field = dialog.query_one("#in-path", Input)
        assert field.value == "/home/me"
        field.focus()
        await pilot.press("end", *"/old.log")
        await pilot.pause()
        changes = str(dialog.query_one("#edit-changes").render())
        assert 'path: "/home/me" -> "/home/me/old.log"' in changes
        assert not approve.disabled
        await pilot.click("#edit-approve")
        await wait_for(
            pilot, lambda: not isinstance(app.screen, EditArgsDialog), what="the dialog to close"
        )
        done = _get(store, action.token)
        assert done.status == "approved" and done.decided_by.endswith("@tui")
        assert done.args == {"path": "/home/me/old.log", "missing_ok": False}
        assert done.proposed_args == proposed


async def test_a_bad_edit_is_shown_and_nothing_is_approved(env, tmp_path: Path) -> None:
    folder, store = env
    tool = write_tool(
        tmp_path / "more",
        "tag_all",
        "def main(tags: list) -> dict:\n    return {}",
        inputs=[{"name": "tags", "type": "array"}],
        human_confirm=True,
    )
    action = hold(store, tool, {"tags": ["a", "b"]})
    app = inbox_app(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_inbox(pilot, app)
        dialog = await _open_editor(pilot, app, screen)
        area = dialog.query_one("#in-tags", TextArea)
        area.load_text('["a", ')  # not JSON
        await pilot.pause()
        assert "tags: not JSON" in str(dialog.query_one("#edit-error").render())
        assert dialog.query_one("#edit-approve", Button).disabled
        area.load_text('{"a": 1}')  # JSON, but not an array
        await pilot.pause()
        assert "tags: expected a JSON array" in str(dialog.query_one("#edit-error").render())
        assert dialog.query_one("#edit-approve", Button).disabled
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, EditArgsDialog), what="cancel")
        assert _get(store, action.token).status == "pending"
        assert _get(store, action.token).args == {"tags": ["a", "b"]}


async def test_untouched_fields_keep_the_exact_proposal(env) -> None:
    """A text field cannot hold a newline: an untouched one must not change the value."""
    folder, store = env
    proposed = {"path": "/tmp/line1\nline2", "missing_ok": False}
    action = hold(store, folder / "delete_file.py", proposed)
    app = inbox_app(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_inbox(pilot, app)
        dialog = await _open_editor(pilot, app, screen)
        dialog.query_one("#in-missing_ok", Select).value = True
        await pilot.pause()
        await pilot.click("#edit-approve")
        await wait_for(
            pilot, lambda: not isinstance(app.screen, EditArgsDialog), what="the dialog to close"
        )
        done = _get(store, action.token)
        assert done.args == {"path": "/tmp/line1\nline2", "missing_ok": True}


async def test_e_waits_until_everything_was_shown(env) -> None:
    folder, store = env
    hold(store, folder / "delete_file.py", {"path": "/data/" + "d" * 600})
    app = inbox_app(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_inbox(pilot, app)
        assert not screen.can_approve
        await pilot.press("e")
        await pilot.pause()
        assert not isinstance(app.screen, EditArgsDialog)
