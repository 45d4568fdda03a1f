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


async def ready(pilot, app):
    """The editor screen once its first lint is shown."""
    screen = app.editor
    await wait_lint(pilot, screen, 0)
    return screen
