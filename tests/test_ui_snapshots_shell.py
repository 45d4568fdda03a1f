"""Snapshots of the shell: the F1 help screen and the desk in each shipped theme.

Fixed terminal size, watchers off, cursors not blinking, a fixed tool folder. Regenerate with
`.venv/bin/pytest tests/test_ui_snapshots_shell.py --snapshot-update` and look at the SVGs.
"""

from __future__ import annotations

import pytest
from desk_helpers import make_app, ready, tool_folder
from textual.widgets import Input, TextArea


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("PATCH_TUI_CONFIG", str(tmp_path / "config.toml"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))


def _still(app) -> None:
    for widget in app.screen.query("Input, TextArea"):
        if isinstance(widget, Input | TextArea):
            widget.cursor_blink = False


async def _settle(pilot) -> None:
    await ready(pilot, pilot.app)
    _still(pilot.app)
    await pilot.pause()


@pytest.mark.parametrize("theme", ["patch-dark", "patch-light", "patch-contrast"])
def test_desk_in_each_theme(snap_compare, tmp_path, theme: str) -> None:
    app = make_app(tool_folder(tmp_path), theme=theme)
    assert snap_compare(app, terminal_size=(120, 36), run_before=_settle)


def test_help_screen(snap_compare, tmp_path) -> None:
    app = make_app(tool_folder(tmp_path))

    async def open_help(pilot) -> None:
        await _settle(pilot)
        await pilot.press("f1")
        await pilot.pause()

    assert snap_compare(app, terminal_size=(100, 44), run_before=open_help)
