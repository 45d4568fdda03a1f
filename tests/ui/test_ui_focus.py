"""Focus that moves (issue 25): Tab and shift+Tab go from pane to pane on the desk (field by
field inside the form), Esc leaves a pane at once, Tab in the source indents only where
indenting is meant, and F1 and the footer say so. Keys are pressed as a person presses them,
bursts included."""

from __future__ import annotations

import pytest
from desk_helpers import make_app, ready
from textual import events

from patch_tui.ui.help import HelpScreen, collect_bindings
from patch_tui.ui.widgets.key_bar import KeyBar

pytestmark = pytest.mark.usefixtures("desk_env")


def _where(app) -> str:
    focused = app.focused
    screen = app.screen
    for name, pane in (
        ("browser", screen.browser),
        ("form", screen.form),
        ("source", screen.source),
        ("lint", screen.lint_panel),
    ):
        if focused is pane or pane in focused.ancestors:
            return name
    return type(focused).__name__


async def test_tab_and_shift_tab_cycle_the_panes_a_person_sees(folder):
    app = make_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        assert _where(app) == "browser"
        await pilot.press("tab")
        assert _where(app) == "form" and app.focused.id == "f-name"  # the form's first field
        await pilot.press("tab")
        assert app.focused.id == "f-version"  # field by field inside the form
        await pilot.press("escape")  # out of the form at once
        assert _where(app) == "source"
        before = screen.source.text
        await pilot.press("tab")  # the cursor is at the start of "# ---": Tab leaves
        assert _where(app) == "lint" and screen.source.text == before
        await pilot.press("tab")
        assert _where(app) == "browser"  # round again
        await pilot.press("shift+tab")
        assert _where(app) == "lint"
        await pilot.press("shift+tab")
        assert _where(app) == "source"
        await pilot.press("shift+tab")  # back into the form lands on its last field
        assert _where(app) == "form" and app.focused is screen._form_fields()[-1]
        # The filter is part of the tool list's pane: Tab from it goes on to the form.
        await pilot.press("escape", "escape", "escape", "/")
        assert app.focused.id == "browser-filter"
        await pilot.press("tab")
        assert _where(app) == "form"


async def test_at_80x24_tab_skips_what_is_hidden(folder):
    app = make_app(folder)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await ready(pilot, app)
        assert screen.desk_layout.narrow  # the form and the source share one pane
        seen = []
        for _ in range(3):
            await pilot.press("escape")
            seen.append(_where(app))
        assert seen == ["form", "lint", "browser"]  # the source is hidden behind the form
        await pilot.press("ctrl+t")  # show the source instead
        assert _where(app) == "source"
        await pilot.press("escape")
        assert _where(app) == "lint"
        await pilot.press("tab")
        assert _where(app) == "browser"
        await pilot.press("tab")
        assert _where(app) == "source"  # the form is hidden now


async def test_a_burst_after_tab_from_the_list_lands_in_the_form(folder):
    app = make_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        name = screen.form.query_one("#f-name")
        # As a terminal delivers a fast typist's keys: all queued before any is handled.
        for key, char in (("tab", None), ("end", None), ("s", "s")):
            app.post_message(events.Key(key, char))
        await pilot.pause(0.3)
        assert app.focused is name and name.value == "echo_texts"
        assert screen.browser.query_one("#browser-filter").value == ""


async def test_tab_in_the_source_indents_only_where_indenting_is_meant(folder):
    app = make_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        source = screen.source
        lines = source.text.splitlines()
        body = next(i for i, line in enumerate(lines) if line.startswith("def main"))
        # Two lines selected: Tab indents both, shift+Tab takes it back; the focus stays.
        source.focus()
        source.selection = source.selection.__class__((body, 0), (body + 1, 5))
        await pilot.pause()
        await pilot.press("tab")
        after = source.text.splitlines()
        assert after[body] == "    " + lines[body] and after[body + 1] == "    " + lines[body + 1]
        assert _where(app) == "source"
        await pilot.press("shift+tab")
        assert source.text.splitlines()[body : body + 2] == lines[body : body + 2]
        # In a line's indentation: Tab indents at the cursor.
        source.move_cursor((body + 1, 4))
        await pilot.press("tab")
        assert source.text.splitlines()[body + 1] == "    " + lines[body + 1]
        await pilot.press("shift+tab")
        assert source.text.splitlines()[body + 1] == lines[body + 1]
        # In the middle of text: Tab leaves the pane and changes nothing.
        source.move_cursor((body, 3))
        text = source.text
        await pilot.press("tab")
        assert _where(app) == "lint" and source.text == text


async def test_f1_and_the_footer_name_the_pane_keys(folder):
    app = make_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        footer = app.screen.query_one(KeyBar)
        assert any(i.key == "tab" and i.description == "Next pane" for i in footer._items)
        desk = app.screen
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        rows = {r.description: r.keys for r in collect_bindings(app, desk)}
        assert rows["Next pane"] == ["tab"] and rows["Previous pane"] == ["shift+tab"]
        assert rows["Leave pane"] == ["esc"]
        how = " ".join(str(s.render()) for s in app.screen.query(".help-how"))
        assert "Tab indents while text is selected" in " ".join(how.split())


async def test_tab_cycles_the_inbox_panes(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    from inboxkit import hold, inbox_app, isolate, open_inbox, tools

    store = isolate(monkeypatch, tmp_path)
    folder = tools(tmp_path, "delete_file")
    hold(store, folder / "delete_file.py", {"path": "/tmp/a.txt"})
    app = inbox_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_inbox(pilot, app)
        assert app.focused is screen.list
        await pilot.press("tab")
        assert app.focused is screen.detail
        await pilot.press("tab")
        assert app.focused is screen.list  # round again
        await pilot.press("shift+tab")
        assert app.focused is screen.detail
