"""Pilot tests of the export / import screen."""

from __future__ import annotations

import json
from pathlib import Path

from desk_helpers import make_app, ready, tool_folder
from pilotkit import until
from textual.widgets import Input, Select, TabbedContent

from patch_tui.format import toolfile
from patch_tui.interop import mcp
from patch_tui.ui.desk.export import InteropScreen


async def _until(pilot, check, timeout: float = 15.0) -> None:
    await until(pilot, check, timeout)


async def test_export_shows_copies_and_saves(tmp_path: Path) -> None:
    folder = tool_folder(tmp_path)
    path = folder / "word_total.py"
    app = make_app(folder, path)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        app.action_open_screen("interop")  # what the palette's "tool: export / import" runs
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, InteropScreen)
        arcade_def = json.loads(screen.definition_text)
        assert arcade_def["fully_qualified_name"] == "Tools.WordTotal@0.2.0"  # the folder's name
        assert screen.report is not None and "inputs.text.tainted_ok" in screen.report.fields()

        screen.query_one("#export-format", Select).value = "mcp"
        await pilot.pause()
        mcp.validate(json.loads(screen.definition_text))
        screen.query_one("#export-view").focus()
        await pilot.press("c")
        assert app.clipboard == screen.definition_text

        await pilot.press("s")
        await pilot.pause()
        target = tmp_path / "exported.json"
        prompt_input = app.screen.query_one(Input)
        prompt_input.value = str(target)
        await pilot.press("enter")
        await _until(pilot, target.exists)
        assert json.loads(target.read_text(encoding="utf-8"))["name"] == "word_total"


async def test_import_writes_into_the_toolbox_and_opens_the_tool(tmp_path: Path) -> None:
    folder = tool_folder(tmp_path)
    definition = {
        "name": "fetchTitle",
        "description": "Fetch a web page's title.",
        "inputSchema": {
            "type": "object",
            "properties": {"pageUrl": {"type": "string", "description": "The page."}},
            "required": ["pageUrl"],
        },
        "annotations": {"openWorldHint": True, "readOnlyHint": True},
    }
    src = tmp_path / "tools.json"
    src.write_text(json.dumps({"tools": [definition]}), encoding="utf-8")
    bad = tmp_path / "bad.json"
    bad.write_text("{oops", encoding="utf-8")
    app = make_app(folder, folder / "word_total.py")
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        app.push_screen(InteropScreen())
        await pilot.pause()
        screen = app.screen
        screen.query_one(TabbedContent).active = "tab-import"
        screen.query_one("#import-format", Select).value = "mcp"
        screen.query_one("#import-path", Input).value = str(bad)
        await pilot.pause()  # the import tab is laid out before the click
        await pilot.click("#import-go")
        result = screen.query_one("#import-result")
        await _until(pilot, lambda: "not JSON" in str(result.render()))
        assert isinstance(app.screen, InteropScreen)

        path_input = screen.query_one("#import-path", Input)
        path_input.value = str(src)
        path_input.focus()
        await pilot.press("enter")  # Enter in the path field imports too
        new = folder / "fetch_title.py"
        await _until(pilot, lambda: app.editor.current_path == new)
        m = toolfile.read(str(new)).manifest
        assert (
            m is not None and m.capabilities.network and [i.name for i in m.inputs] == ["page_url"]
        )
        assert not isinstance(app.screen, InteropScreen)

        # The same import again: nothing is overwritten, and the screen says why.
        before = new.read_bytes()
        app.push_screen(InteropScreen())
        await pilot.pause()
        screen = app.screen
        screen.query_one(TabbedContent).active = "tab-import"
        screen.query_one("#import-format", Select).value = "mcp"
        screen.query_one("#import-path", Input).value = str(src)
        await pilot.pause()  # the import tab is laid out before the click
        await pilot.click("#import-go")
        result = screen.query_one("#import-result")
        await _until(pilot, lambda: "already has" in str(result.render()))
        assert new.read_bytes() == before
