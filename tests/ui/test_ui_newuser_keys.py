"""Keys a newcomer presses (issue 25), as they press them: ctrl+z takes back a pick made in an
enum field, and `a` in the inbox before everything was read says what is left, never nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from desk_helpers import make_app, ready, wait_lint
from inboxkit import hold, inbox_app, isolate, open_inbox, tools
from pilotkit import until

from patch_tui.format import toolfile
from patch_tui.ui.inbox.inbox_dialogs import DecideModal


@pytest.mark.usefixtures("desk_env")
async def test_ctrl_z_undoes_a_pick_in_an_enum_field(folder):
    app = make_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        field = screen.form.query_one("#f-inputs-0-type")
        field.focus()
        await pilot.pause()
        assert toolfile.parse(screen.source.text).data["inputs"][0]["type"] == "string"
        count = screen.lint_count
        await pilot.press("i")  # type-ahead picks "integer": the accident
        await wait_lint(pilot, screen, count, timeout=20)
        assert toolfile.parse(screen.source.text).data["inputs"][0]["type"] == "integer"
        count = screen.lint_count
        await pilot.press("ctrl+z")
        await wait_lint(pilot, screen, count, timeout=20)
        assert toolfile.parse(screen.source.text).data["inputs"][0]["type"] == "string"
        assert field.value == "string"
        count = screen.lint_count
        await pilot.press("ctrl+y")
        await wait_lint(pilot, screen, count, timeout=20)
        assert toolfile.parse(screen.source.text).data["inputs"][0]["type"] == "integer"


async def test_a_before_everything_was_read_says_what_is_left(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    store = isolate(monkeypatch, tmp_path)
    folder = tools(tmp_path, "delete_file")
    hold(store, folder / "delete_file.py", {"path": "/data/" + "d" * 600})
    app = inbox_app(store)
    async with app.run_test(size=(100, 32)) as pilot:
        screen = await open_inbox(pilot, app)
        assert not screen.can_approve
        await pilot.press("a")
        await until(pilot, lambda: app._notifications, what="a message")
        assert not isinstance(app.screen, DecideModal)  # nothing is decided
        said = " ".join(n.message for n in app._notifications)
        assert "read the details to the end" in said and "E expands" in said
