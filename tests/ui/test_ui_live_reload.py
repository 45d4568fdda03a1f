"""Live reload on the real desk, through the real folder watcher: an outside rename-save of the
open tool is followed when the buffer is clean and banners when it is dirty; new, renamed and
deleted tools show in the browser; our own save is not an outside change."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from desk_helpers import ready, tool_folder
from pilotkit import until as pilot_until

from patch_tui.runtime.toolbox import Toolbox
from patch_tui.settings.config import Settings
from patch_tui.ui.app import PatchApp


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("PATCH_TUI_CONFIG", str(tmp_path / "config.toml"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))


def watching_app(folder: Path) -> PatchApp:
    settings = Settings(watch_tools=True, watch_themes=False)
    return PatchApp(Toolbox.open(folder), None, settings=settings)


def outside_save(path: Path, text: str) -> None:
    scratch = path.with_name(f".{path.name}.swp")
    scratch.write_text(text, encoding="utf-8")
    os.replace(scratch, path)


async def until(pilot, check, timeout: float = 15.0) -> bool:
    try:
        await pilot_until(pilot, check, timeout)
    except AssertionError:
        return False
    return True


async def started(pilot, app: PatchApp):
    screen = await ready(pilot, app)
    # The watcher's first scan must be done before an outside change counts as news.
    assert await until(pilot, lambda: app.tool_watch is not None and app.tool_watch.watching)
    return screen


def banner_shown(screen) -> bool:
    return screen.query_one("#banner").has_class("-shown")


def names(screen) -> set[str]:
    return {e.path.name for e in screen.browser.entries}


async def test_clean_buffer_follows_outside_save(tmp_path) -> None:
    folder = tool_folder(tmp_path)
    app = watching_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await started(pilot, app)
        path = screen.current_path
        new_text = path.read_text(encoding="utf-8") + "# edited elsewhere\n"
        outside_save(path, new_text)
        assert await until(pilot, lambda: screen.source.text == new_text)
        # The reload is a source edit for the desk: it re-lints, then settles clean.
        assert await until(pilot, lambda: not screen.dirty)
        assert not banner_shown(screen)
        assert screen.source.text == new_text


async def test_dirty_buffer_gets_a_banner_and_keeps_the_edit(tmp_path) -> None:
    folder = tool_folder(tmp_path)
    app = watching_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await started(pilot, app)
        path = screen.current_path
        screen.source.focus()
        screen.source.move_cursor(screen.source.document.end)
        await pilot.press("#", "m", "i", "n", "e")
        mine = screen.source.text
        assert mine.endswith("#mine")
        outside_save(path, path.read_text(encoding="utf-8") + "# theirs\n")
        assert await until(pilot, lambda: banner_shown(screen))
        assert screen.source.text == mine  # nothing typed is lost
        assert "# theirs" in path.read_text(encoding="utf-8")  # and nothing of theirs either


async def test_browser_follows_new_renamed_and_deleted_tools(tmp_path) -> None:
    folder = tool_folder(tmp_path)
    app = watching_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await started(pilot, app)
        assert names(screen) == {"echo_text.py", "word_total.py"}
        (folder / "word_total.py").rename(folder / "word_count2.py")
        new = (folder / "echo_text.py").read_text(encoding="utf-8").replace("echo_text", "echo_two")
        (folder / "echo_two.py").write_text(new, encoding="utf-8")
        assert await until(
            pilot, lambda: names(screen) == {"echo_text.py", "word_count2.py", "echo_two.py"}
        )
        (folder / "echo_two.py").unlink()
        assert await until(pilot, lambda: names(screen) == {"echo_text.py", "word_count2.py"})


async def test_own_save_is_not_an_outside_change(tmp_path) -> None:
    folder = tool_folder(tmp_path)
    app = watching_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await started(pilot, app)
        screen.source.focus()
        screen.source.move_cursor(screen.source.document.end)
        await pilot.press("#", "o", "k")
        await pilot.press("ctrl+s")
        assert await until(pilot, lambda: not screen.dirty)
        saved = screen.source.text
        assert screen.current_path.read_text(encoding="utf-8") == saved
        await pilot.pause(0.4)  # several watcher periods
        assert not banner_shown(screen)
        assert screen.source.text == saved
        assert not [n for n in app._notifications if "changed on disk" in str(n.message)]


async def test_open_clean_tool_renamed_outside_is_followed(tmp_path) -> None:
    folder = tool_folder(tmp_path)
    app = watching_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await started(pilot, app)
        old = screen.current_path
        text = screen.source.text
        os.rename(old, folder / "moved.py")
        assert await until(pilot, lambda: screen.current_path.name == "moved.py")
        assert screen.source.text == text
        assert not banner_shown(screen)
        assert await until(
            pilot, lambda: "moved.py" in names(screen) and old.name not in names(screen)
        )
