"""Regenerate the desk screenshot (docs/screenshot-editor.svg, on the home and authoring pages):
`.venv/bin/python docs/screenshots.py`.

The desk on a copy of sample_tools/ with slugify.py open, at 150x42, in the default theme, with
config and store in a temporary folder (your own settings never show in it)."""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from pathlib import Path

DOCS = Path(__file__).resolve().parent
REPO = DOCS.parent


async def desk(tmp: Path) -> None:
    from patch_tui.runtime.toolbox import Toolbox
    from patch_tui.settings.config import Settings
    from patch_tui.ui.app import PatchApp

    tools = tmp / "sample_tools"
    shutil.copytree(REPO / "sample_tools", tools)
    path = tools / "slugify.py"
    settings = Settings(watch_tools=False, watch_themes=False)
    app = PatchApp(Toolbox.open(path), path, settings=settings, theme="patch-dark")
    async with app.run_test(size=(150, 42)) as pilot:
        while app.editor.lint_count == 0:
            await pilot.pause(0.05)
        await pilot.pause(0.5)  # highlighting and the tool list's lint states
        for widget in app.screen.query("Input, TextArea"):
            widget.cursor_blink = False  # type: ignore[attr-defined]
        await pilot.pause(0.1)
        app.save_screenshot(filename="screenshot-editor.svg", path=str(DOCS))


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="patch-tui-shots-") as tmpdir:
        tmp = Path(tmpdir)
        os.environ["PATCH_TUI_CONFIG"] = str(tmp / "config.toml")
        os.environ["PATCH_TUI_STORE"] = str(tmp / "store.sqlite3")
        asyncio.run(desk(tmp))
    print(f"wrote {DOCS / 'screenshot-editor.svg'}")


if __name__ == "__main__":
    main()
