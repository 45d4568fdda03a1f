"""Snapshot tests of the desk at fixed sizes (cursor blink and file watchers off).

Update the baselines with `pytest tests/ui/test_ui_snapshots.py --snapshot-update` and look at the
SVGs in tests/__snapshots__/ before committing them.
"""

from __future__ import annotations

import pytest
from desk_helpers import make_app, ready, wait_lint
from textual.widgets import Input, TextArea

from patch_tui.ui.desk.lint_panel import LintPanel

# The config and the store in tmp_path, $EDITOR a no-op; `folder` is a copy of the desk's tools
# (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("desk_env")


async def _steady(pilot) -> None:
    """Wait for the first lint and stop every cursor from blinking."""
    app = pilot.app
    await ready(pilot, app)
    for widget in app.screen.query("Input, TextArea"):
        widget.cursor_blink = False
    await pilot.pause(0.1)


def test_desk_wide(folder, snap_compare):
    assert snap_compare(make_app(folder), terminal_size=(140, 40), run_before=_steady)


def test_desk_100x32(folder, snap_compare):
    assert snap_compare(make_app(folder), terminal_size=(100, 32), run_before=_steady)


def test_desk_80x24_form(folder, snap_compare):
    assert snap_compare(make_app(folder), terminal_size=(80, 24), run_before=_steady)


def test_desk_80x24_source(folder, snap_compare):
    async def source(pilot) -> None:
        await _steady(pilot)
        await pilot.press("f4")
        await pilot.pause(0.3)  # the full highlight pass

    assert snap_compare(make_app(folder), terminal_size=(80, 24), run_before=source)


def test_broken_yaml_dims_form(folder, snap_compare):
    path = folder / "echo_text.py"
    path.write_text(path.read_text().replace("# inputs:", "# inputs: ["))
    assert snap_compare(make_app(folder, path), terminal_size=(140, 40), run_before=_steady)


def test_lint_problems_listed(folder, snap_compare):
    path = folder / "echo_text.py"
    text = path.read_text().replace('python_version: "3.12"', "python_version: 3.12")
    path.write_text(text.replace("# version: 1.0.0", "# version: 1.0"))

    async def focus_lint(pilot) -> None:
        await _steady(pilot)
        pilot.app.screen.query_one(LintPanel).focus()
        await pilot.pause()

    assert snap_compare(make_app(folder, path), terminal_size=(100, 32), run_before=focus_lint)


def test_dirty_file_changed_on_disk_banner(folder, snap_compare):
    path = folder / "echo_text.py"

    async def outside(pilot) -> None:
        await _steady(pilot)
        screen = pilot.app.screen
        screen.source.insert("# mine\n", screen.source.document.end)
        count = screen.lint_count
        await wait_lint(pilot, screen, count)
        path.write_text(path.read_text() + "# theirs\n")
        screen.on_file_changed_outside(path)
        await pilot.pause()

    assert snap_compare(make_app(folder, path), terminal_size=(100, 32), run_before=outside)


def test_conflict_dialog_with_diff(folder, snap_compare):
    path = folder / "echo_text.py"

    async def conflict(pilot) -> None:
        await _steady(pilot)
        screen = pilot.app.screen
        screen.source.insert("# mine\n", screen.source.document.end)
        path.write_text(path.read_text() + "# theirs\n")
        await pilot.press("ctrl+s")
        await pilot.pause()
        await pilot.press("d")
        await pilot.pause()

    assert snap_compare(make_app(folder, path), terminal_size=(100, 32), run_before=conflict)


def test_new_version_dialog(folder, snap_compare):
    async def dialog(pilot) -> None:
        await _steady(pilot)
        await pilot.press("f6")
        await pilot.pause()

    assert snap_compare(make_app(folder), terminal_size=(100, 32), run_before=dialog)


def test_delete_confirmation_focuses_cancel(folder, snap_compare):
    async def dialog(pilot) -> None:
        await _steady(pilot)
        pilot.app.screen.query_one("#browser-list").focus()
        await pilot.press("delete")
        await pilot.pause()

    assert snap_compare(make_app(folder), terminal_size=(100, 32), run_before=dialog)


def test_light_theme(folder, snap_compare):
    async def typed(pilot) -> None:
        await _steady(pilot)
        field = pilot.app.screen.query_one("#f-description", Input)
        field.focus()
        await pilot.pause()
        field.cursor_blink = False
        assert isinstance(pilot.app.screen.query_one("#source"), TextArea)

    assert snap_compare(
        make_app(folder, theme="patch-light"), terminal_size=(140, 40), run_before=typed
    )
