"""`patch-tui` pauses the garbage collector while it starts and resumes it after the first frame."""

from __future__ import annotations

import gc
import re

import pytest
from desk_helpers import tool_folder
from pilotkit import until

from patch_tui.commands.tui import parse_for_bench, start_app
from patch_tui.ui import css_cache


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("PATCH_TUI_CONFIG", str(tmp_path / "config.toml"))
    monkeypatch.setenv("PATCH_TUI_STORE", str(tmp_path / "store.sqlite3"))
    monkeypatch.setenv("PATCH_TUI_WATCH_TOOLS", "false")
    monkeypatch.setenv("PATCH_TUI_WATCH_THEMES", "false")
    # start_app reads parsed stylesheets from the cache folder: this test's, not the user's.
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    yield
    gc.enable()
    gc.unfreeze()  # the app froze this test process's objects: let them be collected again
    css_cache.deactivate()  # the next test's apps parse as Textual does


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


def _first_frame_text(app) -> list[str]:
    """Capture the text of the first frame the app hands to the terminal (`App._display`, as
    bench/tui_bench.py does; a frame inside Textual's start-up batch is never written)."""
    frames: list[str] = []
    display = app._display

    def capture(screen, renderable) -> None:
        display(screen, renderable)
        if frames or renderable is None or app._batch_count or screen is not app.screen:
            return
        update = screen._compositor.render_update(full=True)
        frames.append("\n".join("".join(s.text for s in strip) for strip in update.strips))
        frames.append(str(app.editor.lint_count))
        frames.append(str(len(app.editor.query("#form-tail"))))

    app._display = capture
    return frames


async def test_the_first_frame_written_shows_the_tool_its_form_and_first_input(tmp_path):
    # The desk is pushed after Textual's start-up batch: pushed inside it, its first frame was
    # computed and dropped, and the work meant to follow the first frame (lower form sections,
    # the first lint) ran before the first frame anyone saw.
    folder = tool_folder(tmp_path)
    app = start_app(parse_for_bench(str(folder / "echo_text.py")))
    frames = _first_frame_text(app)
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: bool(frames), what="the first frame")
    text, lints_before, lower_sections = frames
    assert "# name: echo_text" in text  # the source
    assert re.search(r"name +echo_text", text)  # the form's name field, with its value
    assert re.search(r"▌ name +text", text)  # the first input's card, with its values
    # What follows the first frame follows it: the first lint, the sections below the fold.
    assert lints_before == "0"
    assert lower_sections == "0"


@pytest.mark.parametrize("size", [(120, 36), (120, 50), (80, 24)])
async def test_the_form_fold_is_the_lines_the_form_shows(tmp_path, size):
    # The sections built for the first frame are those above the fold DeskLayout computes
    # (ui/desk/layout.py form_lines, with the clean panel): it must be the form's real height.
    from patch_tui.ui.desk.layout import DeskLayout

    folder = tool_folder(tmp_path)
    app = start_app(parse_for_bench(str(folder / "echo_text.py")))
    async with app.run_test(size=size) as pilot:
        editor = app.editor
        await until(pilot, lambda: editor.lint_count >= 1 and editor.desk_layout.clean)
        form = editor.form
        width, height = size
        expected = DeskLayout(clean=True).for_size(width, height).form_lines(height)
        assert form.scrollable_content_region.height == expected
