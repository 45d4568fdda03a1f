"""The manifest form on the desk (Pilot): a form edit never parses on the UI thread, an edit that
comes right after a source edit still lands, and the help line shows the focused field's doc,
whole, and nothing once no field has the focus."""

from __future__ import annotations

import threading

import pytest
from desk_helpers import make_app, ready, tool_folder, wait_lint
from textual.widgets import Input, Static

from patch_tui.format import toolfile
from patch_tui.format.fields import field_doc


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("PATCH_TUI_CONFIG", str(tmp_path / "config.toml"))
    monkeypatch.setenv("PATCH_TUI_STORE", str(tmp_path / "store.sqlite3"))


@pytest.fixture
def folder(tmp_path):
    return tool_folder(tmp_path)


def _help(screen) -> Static:
    return screen.form.query_one("#field-help", Static)


def _help_text(screen) -> str:
    help_box = _help(screen)
    return help_box.render().plain if help_box.has_class("-shown") else ""


async def test_typing_in_a_form_field_never_parses_on_the_ui_thread(folder, monkeypatch):
    app = make_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        threads: list[str] = []
        real = toolfile.parse

        def recording(*args, **kwargs):
            threads.append(threading.current_thread().name)
            return real(*args, **kwargs)

        monkeypatch.setattr(toolfile, "parse", recording)
        field = screen.form.query_one("#f-description", Input)
        field.focus()
        await pilot.pause()
        count = screen.lint_count
        await pilot.press("end", "!", "!", "!")
        await wait_lint(pilot, screen, count)
        assert toolfile.parse(screen.source.text).data["description"].endswith("!!!")
        main = threading.main_thread().name
        assert threads and main not in threads[:-1], threads  # the last one is this test's own


async def test_a_form_edit_right_after_a_source_edit_keeps_both(folder):
    """The last parse is older than the text: the form edit waits for the lint thread's parse,
    then lands on the text as it is (the source edit is kept)."""
    app = make_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        source = screen.source
        source.replace_as(object(), "# version: 1.2.0\n", (2, 0), (3, 0))  # as if typed
        field = screen.form.query_one("#f-description", Input)
        field.focus()
        field.value = "Echo."  # within the lint's debounce: the parse is out of date
        for _ in range(250):  # up to 5 s: the edit lands once the text was parsed again
            data = toolfile.parse(source.text).data
            if data["description"] == "Echo.":
                break
            await pilot.pause(0.02)
        assert (data["version"], data["description"]) == ("1.2.0", "Echo.")
        await wait_lint(pilot, screen, screen.lint_count)
        assert screen.form.query_one("#f-version", Input).value == "1.2.0"


async def test_the_help_line_follows_the_focus(folder):
    app = make_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        screen.form.query_one("#f-version", Input).focus()
        await pilot.pause()
        await pilot.pause()
        assert _help_text(screen).startswith("version: ")
        screen.form.query_one("#f-description", Input).focus()
        await pilot.pause()
        await pilot.pause()
        assert _help_text(screen).startswith("description: ")
        # Out of the form (the source pane, the problems): no help of a field left behind.
        screen.source.focus()
        await pilot.pause()
        await pilot.pause()
        assert not _help(screen).has_class("-shown")
        await pilot.press("ctrl+l")
        await pilot.pause()
        assert not _help(screen).has_class("-shown")


async def test_the_help_line_is_whole_at_80_columns(folder):
    app = make_app(folder)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await ready(pilot, app)
        field = screen.form.query_one("#f-capabilities-human__confirm")
        field.focus()
        await pilot.pause()
        await pilot.pause()
        await pilot.pause()
        help_box = _help(screen)
        doc = field_doc("capabilities.human_confirm")
        rendered = " ".join(
            "".join(segment.text for segment in help_box.render_line(y)).strip("─ ")
            for y in range(help_box.size.height)
        )
        assert rendered.split() == ["capabilities.human_confirm:", *doc.split()]
        # The field stays in view above the help.
        assert field.region.bottom <= help_box.region.y


async def test_a_clean_tool_opened_after_one_with_problems_shows_none_of_them(folder):
    """The detail line under the problems and the form's marks belong to the file they were
    found in: opening a clean tool next shows none of them."""
    broken = folder / "a_broken.py"
    broken.write_text(
        (folder / "echo_text.py").read_text().replace("# name: echo_text", "# name: Echo Text")
    )
    app = make_app(folder, broken)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        assert screen.diagnostics and screen.form.query(".-problem")
        screen.lint_panel.focus()
        await pilot.pause()
        detail = screen.query_one("#lint-detail", Static)
        assert "PT" in detail.render().plain
        count = screen.lint_count
        screen.open_tool(folder / "echo_text.py")
        await wait_lint(pilot, screen, count)
        assert screen.diagnostics == []
        assert detail.render().plain == ""
        assert not screen.form.query(".-problem")


async def test_edits_dropped_for_another_tool_leave_its_row_as_on_disk(folder):
    app = make_app(folder, folder / "echo_text.py")
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        browser = screen.browser
        count = screen.lint_count
        screen.source.replace_as(object(), "# version: 9.9.9\n", (2, 0), (3, 0))
        await wait_lint(pilot, screen, count)
        row = next(e for e in browser.entries if e.path.name == "echo_text.py")
        assert row.version == "9.9.9"  # the list follows the unsaved text
        screen.open_tool(folder / "word_total.py")  # the edits are discarded (asked before)
        for _ in range(100):
            row = next(e for e in browser.entries if e.path.name == "echo_text.py")
            if row.version == "1.0.0":
                break
            await pilot.pause(0.02)
        assert row.version == "1.0.0"
