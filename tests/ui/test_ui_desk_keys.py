"""Pilot tests of the desk's keys as people press them (issue 12): typing in the tool list
filters, hidden widgets never hold the focus, form fields keep their text, and every desk key
works in every pane."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest
from desk_helpers import make_app, ready, wait_lint
from rich.cells import cell_len
from textual import events
from textual.widgets import Input

from patch_tui.format import toolfile
from patch_tui.ui.desk.tool_browser import ToolList

# The config and the store in tmp_path, $EDITOR a no-op; `folder` is a copy of the desk's tools
# (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("desk_env")


def _tool(folder, name: str, description: str) -> None:
    text = (folder / "echo_text.py").read_text()
    text = text.replace("# name: echo_text", f"# name: {name}").replace(
        "# description: Return the text it is given, optionally shouted.",
        f"# description: {description}",
    )
    (folder / f"{name}.py").write_text(text)


async def _scanned(pilot, screen, count: int) -> None:
    for _ in range(200):
        if len(screen.browser.entries) >= count and screen.browser.query_one(ToolList).option_count:
            return
        await pilot.pause(0.02)
    raise AssertionError("the tool list was never filled")


def _shown_ids(screen) -> list[str]:
    options = screen.browser.query_one(ToolList)
    return [options.get_option_at_index(i).id for i in range(options.option_count)]


async def test_letters_typed_in_the_tool_list_filter_it_and_run_nothing(folder):
    app = make_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        await _scanned(pilot, screen, 2)
        assert isinstance(app.focused, ToolList)  # where start-up puts the focus
        # "word" used to open Rename (r), Copy (c) and so on.
        await pilot.press("w", "o", "r", "d")
        assert app.screen is screen
        box = screen.browser.query_one("#browser-filter", Input)
        assert box.value == "word" and app.focused is box
        assert [p.rsplit("/", 1)[-1] for p in _shown_ids(screen)] == ["word_total.py"]
        # Down goes back into the list; a letter there continues the filter.
        await pilot.press("down", "x")
        assert box.value == "wordx" and app.focused is box and app.screen is screen
        assert screen.toolbox.tool_paths() and (folder / "word_total.py").exists()


async def test_slash_focuses_the_filter(folder):
    app = make_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        screen.form.query_one("#f-description", Input).focus()
        await pilot.pause()
        screen.browser.query_one(ToolList).focus()
        await pilot.press("slash")
        box = screen.browser.query_one("#browser-filter", Input)
        assert app.focused is box and box.value == ""
        await pilot.press("e", "c")
        assert box.value == "ec"


async def test_hiding_the_tool_list_moves_the_focus_to_a_shown_pane(folder):
    app = make_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        await _scanned(pilot, screen, 2)
        options = screen.browser.query_one(ToolList)
        options.focus()
        options.highlighted = 1  # word_total, not the open echo_text
        await pilot.pause()
        await pilot.press("f3")
        assert not screen.browser.display
        focused = app.focused
        assert focused is not None and screen.browser not in focused.ancestors_with_self
        # Delete (and x, which used to ask too) act on nothing hidden.
        await pilot.press("x", "delete")
        assert app.screen is screen
        assert (folder / "word_total.py").exists()


async def test_the_list_commands_are_on_keys_nobody_types_by_accident(folder):
    app = make_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        await _scanned(pilot, screen, 2)
        screen.browser.query_one(ToolList).focus()
        await pilot.pause()
        keys = {b.action: b.key for b in ToolList.BINDINGS}  # type: ignore[union-attr]
        for action in ("request('rename')", "request('duplicate')", "request('delete')"):
            key = keys[action]
            assert all(len(k) > 1 for k in key.split(",")), key  # no single printable key
        await pilot.press("ctrl+e")
        from patch_tui.ui.dialogs.confirm import PromptModal

        assert isinstance(app.screen, PromptModal)


async def test_the_lint_mark_shows_beside_the_scrollbar_of_a_long_list(folder):
    for i in range(200):
        _tool(folder, f"tool_{i:03d}", "A tool.")
    # A broken one: its ✗ must show.
    path = folder / "tool_003.py"
    path.write_text(path.read_text().replace("# version: 1.0", "# version: one"))
    app = make_app(folder, folder / "echo_text.py")
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        await _scanned(pilot, screen, 202)
        await pilot.pause(0.1)
        options = screen.browser.query_one(ToolList)
        assert options.max_scroll_y > 0  # it scrolls: the scrollbar is there
        room = options.scrollable_content_region.width
        for i in range(options.option_count):
            prompt = options.get_option_at_index(i).prompt
            assert cell_len(prompt.plain) <= room, prompt.plain
        entry = next(e for e in screen.browser.entries if e.name == "tool_003")
        assert entry.errors


async def test_filter_ranks_a_name_match_above_a_description_match(folder):
    _tool(folder, "alpha_tool", "Mentions zeta in passing.")
    _tool(folder, "zeta_tool", "A tool.")
    app = make_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        await _scanned(pilot, screen, 4)
        screen.browser.query_one("#browser-filter", Input).focus()
        await pilot.press("z", "e", "t", "a")
        assert [p.rsplit("/", 1)[-1] for p in _shown_ids(screen)] == [
            "zeta_tool.py",
            "alpha_tool.py",
        ]


async def test_tab_puts_the_cursor_at_the_end_and_the_next_key_adds(folder):
    app = make_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        screen.form.query_one("#f-name", Input).focus()
        await pilot.pause()
        count = screen.lint_count
        await pilot.press("tab", "X")
        await wait_lint(pilot, screen, count, timeout=20)
        version = screen.form.query_one("#f-version", Input)
        assert app.focused is version
        assert version.value == "1.0.0X"
        assert toolfile.parse(screen.source.text).data["version"] == "1.0.0X"


async def test_a_burst_of_keys_right_after_tab_lands_in_the_next_field(folder):
    app = make_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        name = screen.form.query_one("#f-name", Input)
        name.focus()
        await pilot.pause()
        count = screen.lint_count
        # As a terminal delivers a fast typist's keys: all queued before any is handled.
        for key, char in (("tab", None), ("Z", "Z"), ("Y", "Y")):
            app.post_message(events.Key(key, char))
        await wait_lint(pilot, screen, count, timeout=20)
        await pilot.pause(0.2)
        assert name.value == "echo_text"
        assert screen.form.query_one("#f-version", Input).value == "1.0.0ZY"


async def test_ctrl_z_undoes_typing_in_a_form_field(folder):
    app = make_app(folder)
    original = (folder / "echo_text.py").read_text()
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        field = screen.form.query_one("#f-description", Input)
        field.focus()
        await pilot.pause()
        count = screen.lint_count
        await pilot.press("!", "!")
        await wait_lint(pilot, screen, count, timeout=20)
        assert field.value.endswith("shouted.!!")
        # Two keys typed together undo as one step (or two, on a machine slow enough to put a
        # second between them): ctrl+z takes the field and the source back either way.
        for _ in range(2):
            if field.value.endswith("shouted."):
                break
            count = screen.lint_count
            await pilot.press("ctrl+z")
            await wait_lint(pilot, screen, count, timeout=20)
        assert field.value == "Return the text it is given, optionally shouted."
        # The form writes the frontmatter in the runtime writer's style ('3.12').
        from patch_tui.format import toolfile

        assert screen.source.text == toolfile.format_text(toolfile.parse(original))
        for _ in range(2):
            if field.value.endswith("!!"):
                break
            count = screen.lint_count
            await pilot.press("ctrl+y")
            await wait_lint(pilot, screen, count, timeout=20)
        assert field.value.endswith("shouted.!!")


async def test_add_input_moves_the_focus_to_the_new_name(folder):
    app = make_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        screen.form.query_one("#input-add").focus()
        await pilot.pause()
        count = screen.lint_count
        await pilot.press("enter")
        await wait_lint(pilot, screen, count, timeout=20)
        for _ in range(50):
            if getattr(app.focused, "id", None) == "f-inputs-2-name":
                break
            await pilot.pause(0.02)
        assert getattr(app.focused, "id", None) == "f-inputs-2-name"
        count = screen.lint_count
        await pilot.press("x")
        await wait_lint(pilot, screen, count, timeout=20)
        assert toolfile.parse(screen.source.text).data["inputs"][2]["name"] == "arg3x"


DESK_KEYS = [
    (key, binding.action)
    for binding in __import__(
        "patch_tui.ui.desk.editor", fromlist=["EditorScreen"]
    ).EditorScreen.BINDINGS
    # Tab moves the focus (its own tests); Esc in the filter clears it first (tool_browser.py).
    if binding.id not in ("desk.next_pane", "desk.previous_pane", "desk.leave_pane")
    for key in binding.key.split(",")
]


@pytest.mark.parametrize(
    "pane", ["#source", "#f-description", "#browser-list", "#browser-filter", "#lint"]
)
async def test_every_desk_key_works_in_every_pane(folder, pane):
    """F1 lists the desk's keys as working everywhere on the desk: press each one with the
    focus in each pane and check that the desk's action ran (TextArea took F6 and F7)."""
    app = make_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        ran: list[str] = []
        for _key, action in DESK_KEYS:
            name = action.split("(")[0]
            setattr(screen, f"action_{name}", lambda *a, _n=name: ran.append(_n))
        widget = screen.query_one(pane)
        for key, action in DESK_KEYS:
            widget.focus()
            for _ in range(100):
                await pilot.pause(0.01)
                if app.focused is widget:
                    break
            assert app.focused is widget, (key, app.focused)
            ran.clear()
            await pilot.press(key)
            assert ran == [action.split("(")[0]], (pane, key, ran)
            assert app.screen is screen


async def test_f6_and_f7_from_the_source_pane(folder, monkeypatch):
    app = make_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        screen.source.focus()
        await pilot.pause()
        await pilot.press("f6")
        from patch_tui.ui.dialogs.confirm import ChoiceModal

        assert isinstance(app.screen, ChoiceModal)
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen
        calls: list[list[str]] = []
        monkeypatch.setattr("subprocess.call", lambda argv: calls.append(argv) or 0)
        monkeypatch.setattr(
            app, "suspend", contextlib.nullcontext
        )  # headless: no terminal to give away
        await pilot.press("f7")
        await pilot.pause()
        assert calls and calls[0][-1] == str(screen.current_path)
        # The footer shows both keys while the source pane has the focus.
        shown = {b.action for _n, b, _e, _t in screen.active_bindings.values() if b.show}
        assert {"save_version", "open_in_editor"} <= shown


async def test_first_run_copies_the_samples_into_the_users_toolbox_and_says_where(
    tmp_path, monkeypatch
):
    from patch_tui.commands.tui import build_app, parse_for_bench
    from patch_tui.settings import paths

    home = tmp_path / "toolbox"
    monkeypatch.delenv("PATCH_TUI_TOOLBOX", raising=False)
    monkeypatch.setenv("PATCH_CAT_TOOLBOX_DIR", str(home))
    shipped = {p.name: p.read_bytes() for p in paths.sample_tools_dir().glob("*.py")}
    app = build_app(parse_for_bench(""))
    app.settings.watch_tools = False
    app.settings.watch_themes = False
    assert app.toolbox.tools_dir == home / "tools"
    assert {p.name for p in (home / "tools").glob("*.py")} == set(shipped)
    # A real Patch toolbox: the runtime lists only what index.json names, by absolute path.

    index = json.loads((home / "index.json").read_text())
    assert {Path(e["filePath"]).name for e in index.values()} == set(shipped)
    assert all(Path(e["filePath"]).is_absolute() and e["name"] in index for e in index.values())
    assert (home / "runs").is_dir() and (home / "config.json").exists()
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        assert screen.current_path.parent == home / "tools"
        notes = [n.message for n in app._notifications]
        assert any(str(home / "tools") in n and "sample" in n for n in notes), notes
        # An edit saved goes to the copy, never to the shipped samples.
        screen.source.focus()
        await pilot.press("end", "x", "ctrl+s")
        await pilot.pause()
        assert screen.current_path.read_bytes() != shipped[screen.current_path.name]
    assert {p.name: p.read_bytes() for p in paths.sample_tools_dir().glob("*.py")} == shipped
    # The next run opens that toolbox as it is: nothing copied over the user's edit.
    edited = {p.name: p.read_bytes() for p in (home / "tools").glob("*.py")}
    again = build_app(parse_for_bench(""))
    assert again.notice is None and again.toolbox.tools_dir == home / "tools"
    assert {p.name: p.read_bytes() for p in (home / "tools").glob("*.py")} == edited


LONG = "x = 1  # " + "a long comment that runs far past the right edge of the pane " * 3


async def test_the_source_pane_has_room_and_wraps(folder):
    app = make_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        source = screen.source
        text_columns = source.scrollable_content_region.width - source.gutter_width
        assert text_columns >= 45, text_columns  # was 35 at 120 columns
        assert source.soft_wrap  # on by default: nothing hides past the right edge
        source.focus()
        await pilot.press("alt+z")
        assert not source.soft_wrap
        await pilot.press("alt+z")
        assert source.soft_wrap


async def test_ctrl_home_and_end_go_to_the_start_and_end_of_the_file(folder):
    app = make_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        source = screen.source
        source.focus()
        source.cursor_location = (5, 3)
        await pilot.press("ctrl+end")
        assert source.cursor_location == source.document.end
        await pilot.press("ctrl+home")
        assert source.cursor_location == (0, 0)


async def test_a_problem_jump_keeps_the_line_start_in_view(folder):
    path = folder / "echo_text.py"
    path.write_text(path.read_text() + "\n" + LONG + "\n")
    app = make_app(folder, path)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        source = screen.source
        source.soft_wrap = False
        await pilot.pause()
        row = source.document.line_count - 2
        assert source.document.get_line(row) == LONG
        room = source.scrollable_content_region.width - source.gutter_width
        source.select_span(row + 1, room - 20, row + 1, room - 8)  # fits without scrolling sideways
        await pilot.pause()
        assert source.scroll_x == 0
        assert source.selection.start == (row, room - 21)


async def test_the_problem_detail_is_shown_whole(folder):
    path = folder / "echo_text.py"
    path.write_text(path.read_text().replace("# version: 1.0.0", "# version: 1.0"))
    app = make_app(folder, path)
    async with app.run_test(size=(70, 24)) as pilot:
        screen = await ready(pilot, app)
        await pilot.press("f5")
        await pilot.pause()
        detail = screen.query_one("#lint-detail")
        text = str(detail.render())
        assert "1.0" in text
        assert detail.size.height >= detail.get_content_height(
            detail.size, detail.size, detail.size.width
        )
        assert detail.size.height >= 3  # the message wraps to three lines at 70 columns


async def test_renaming_to_the_same_name_is_a_no_op(folder):
    from patch_tui.ui.dialogs.confirm import PromptModal

    app = make_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        screen._rename(screen.current_path)
        await pilot.pause()
        assert isinstance(app.screen, PromptModal)
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is screen  # accepted, not "a tool named echo_text already exists"
        assert (folder / "echo_text.py").exists()
        assert any("same name" in n.message for n in app._notifications)


async def test_a_tool_created_under_a_filter_shows_in_the_list(folder):
    app = make_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        await _scanned(pilot, screen, 2)
        screen.browser.query_one("#browser-filter", Input).focus()
        await pilot.press("w", "o", "r", "d")
        await pilot.press("ctrl+n")
        await pilot.pause()
        await pilot.press(*"brand_new", "enter")
        for _ in range(200):
            if any(p.endswith("brand_new.py") for p in _shown_ids(screen)):
                break
            await pilot.pause(0.02)
        assert any(p.endswith("brand_new.py") for p in _shown_ids(screen))
        assert screen.browser.query_one("#browser-filter", Input).value == ""


async def test_the_palette_has_one_theme_command(folder):
    app = make_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        titles = [c.title for c in app.get_system_commands(screen)]
        assert "Theme" not in titles
        assert titles  # Textual's other commands stay


async def test_history_restores_a_version_undoably_and_copies(folder):
    from patch_tui.ui.desk.history import HistoryScreen
    from patch_tui.ui.help import HelpScreen

    app = make_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        original = screen.source.text
        assert screen.save_new_version("patch")  # 1.0.0 kept in the history
        await pilot.pause()
        current = screen.source.text
        assert "1.0.1" in current
        screen.source.focus()
        await pilot.press("f10")
        await pilot.pause()
        assert isinstance(app.screen, HistoryScreen)
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await pilot.pause()
        copied: list[str] = []
        app.copy_to_clipboard = copied.append  # type: ignore[method-assign]
        await pilot.press("c")
        assert copied == [original]
        count = screen.lint_count
        await pilot.press("r")
        await pilot.pause()
        await pilot.press("y")
        await wait_lint(pilot, screen, count, timeout=20)
        assert screen.source.text == original and screen.dirty
        kept = [p for _v, p in screen.toolbox.history("echo_text") if "+kept-" in p.name]
        assert len(kept) == 1 and kept[0].read_text() == current
        count = screen.lint_count
        await pilot.press("ctrl+z")
        await wait_lint(pilot, screen, count, timeout=20)
        assert screen.source.text == current
