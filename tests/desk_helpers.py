"""Shared set-up for the desk's Pilot and snapshot tests: a tmp folder of tools, an app with
watchers off, and a wait for the debounced lint."""

from __future__ import annotations

import shutil
from pathlib import Path

from pilotkit import until

FIXTURES = Path(__file__).parent / "fixtures" / "desk"


def tool_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "tools"
    folder.mkdir()
    for src in sorted(FIXTURES.glob("*.py")):
        shutil.copy(src, folder / src.name)
    return folder


def make_app(folder: Path, path: Path | None = None, theme: str = "patch-dark"):
    from patch_tui.runtime.toolbox import Toolbox
    from patch_tui.settings.config import Settings
    from patch_tui.ui.app import PatchApp

    settings = Settings(watch_tools=False, watch_themes=False)
    return PatchApp(Toolbox.open(path or folder), path, settings=settings, theme=theme)


async def wait_lint(pilot, screen, since: int, timeout: float = 15.0) -> None:
    """Wait until the editor linted after `since` lints (debounce + worker), then settle."""
    await until(pilot, lambda: screen.lint_count > since, timeout, "the editor to lint again")
    await pilot.pause()


def linted_as_is(app, screen) -> bool:
    """The editor shows the lint of the text as it is now: none is scheduled, the last one
    started was of this very text, and its worker (which applies it) has finished. Counting
    lints is not enough after typing: one of the text halfway typed may be what was counted."""
    running = [w for w in app.workers if w.group == "lint" and not w.is_finished]
    return (
        screen._lint_timer is None
        and screen.buffer.text == screen.source.text
        and screen.lint_count > 0
        and not running
    )


async def ready(pilot, app):
    """The editor screen once its first lint is shown."""
    screen = app.editor
    await wait_lint(pilot, screen, 0)
    return screen
