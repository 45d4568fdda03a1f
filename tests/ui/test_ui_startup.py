"""`patch-tui` pauses the garbage collector while it starts and resumes it after the first frame."""

from __future__ import annotations

import gc

import pytest
from desk_helpers import tool_folder

from patch_tui.commands.tui import parse_for_bench, start_app


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("PATCH_TUI_CONFIG", str(tmp_path / "config.toml"))
    monkeypatch.setenv("PATCH_TUI_STORE", str(tmp_path / "store.sqlite3"))
    monkeypatch.setenv("PATCH_TUI_WATCH_TOOLS", "false")
    monkeypatch.setenv("PATCH_TUI_WATCH_THEMES", "false")
    yield
    gc.enable()
    gc.unfreeze()  # the app froze this test process's objects: let them be collected again


async def test_collector_paused_for_start_up_and_resumed_after_the_first_frame(tmp_path):
    folder = tool_folder(tmp_path)
    app = start_app(parse_for_bench(str(folder / "echo_text.py")))
    assert not gc.isenabled()
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        assert gc.isenabled()
        assert gc.get_freeze_count() > 0
        assert app.editor.form.data["name"] == "echo_text"


def test_a_failed_start_leaves_the_collector_on(tmp_path):
    with pytest.raises(FileNotFoundError):
        start_app(parse_for_bench(str(tmp_path / "missing.py")))
    assert gc.isenabled()


def test_quitting_before_the_background_starts_is_quiet(tmp_path):
    # The background services start after the first frame; if the app is already closing by
    # then (a quit right at start), they must not start, and the collector must still resume.
    folder = tool_folder(tmp_path)
    app = start_app(parse_for_bench(str(folder / "echo_text.py")))
    assert not app.is_running and not gc.isenabled()
    app._install_background()  # what the first frame's callback does
    assert gc.isenabled()
    assert getattr(app, "_pending_watch", None) is None
