"""Pilot tests of the authoring desk: every flow a person uses, asserted on what they would see
(the source text, the form's fields, the file on disk, the dialogs)."""

from __future__ import annotations

import os
import stat

import pytest
from desk_helpers import make_app, ready, wait_lint
from pilotkit import until
from textual.widgets import Input, OptionList, Switch

from patch_tui.format import toolfile
from patch_tui.runtime.toolbox import file_sha256
from patch_tui.ui.desk.lint_panel import LintPanel
from patch_tui.ui.dialogs.confirm import ChoiceModal
from patch_tui.ui.dialogs.conflict import ConflictModal
from patch_tui.ui.dialogs.dialog import TYPING_PAUSE
from patch_tui.ui.widgets.enum_field import EnumField, EnumPicker

# The config and the store in tmp_path, $EDITOR a no-op; `folder` is a copy of the desk's tools
# (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("desk_env")


def _line(text: str, start: str) -> str:
    return next(line for line in text.splitlines() if line.strip().startswith(start))


async def test_opens_first_tool_with_form_and_source(folder):
    app = make_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        assert screen.current_path == folder.resolve() / "echo_text.py"
        assert screen.source.text == (folder / "echo_text.py").read_text()
        assert screen.form.query_one("#f-name", Input).value == "echo_text"
        assert screen.form.query_one("#f-inputs-1-type", EnumField).value == "boolean"
        assert screen.form.query_one("#f-inputs-0-tainted__ok", Switch).value is True
        assert screen.lint_panel.diagnostics == []
        assert not screen.dirty


async def test_enum_field_picks_with_keys_and_mouse(folder):
    app = make_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        field = screen.form.query_one("#f-outputs-type", EnumField)
        assert field.value == "string"
        field.focus()
        # Escape closes the list without a change.
        await pilot.press("enter")
        assert isinstance(app.screen, EnumPicker)
        await pilot.press("escape")
        assert app.screen is screen and app.focused is field and not screen.dirty

        # enter opens the list on the current value; down, enter picks the next one.
        count = screen.lint_count
        await pilot.press("enter", "down", "enter")
        await wait_lint(pilot, screen, count)
        assert app.focused is field and field.value == "number"
        assert _line(screen.source.text, "#   type: number") == "#   type: number"
        assert toolfile.parse(screen.source.text).data["outputs"]["type"] == "number"

        # Type-ahead: a letter picks the next option starting with it, and cycles.
        count = screen.lint_count
        await pilot.press("o")
        await wait_lint(pilot, screen, count)
        assert (
            field.value == "object"
            and toolfile.parse(screen.source.text).data["outputs"]["type"] == "object"
        )
        await pilot.press("n", "n")
        # number, then null: the source catches up with both picks (the form shows each parse
        # as it lands, so the field settles on the last pick, as typed)
        await until(
            pilot,
            lambda: (
                field.value == "null"
                and toolfile.parse(screen.source.text).data["outputs"]["type"] == "null"
            ),
            what="the second pick, in the field and the source",
        )
        await pilot.press("z")  # no option starts with z: nothing changes
        assert field.value == "null"
        count = screen.lint_count
        await pilot.press("n")
        await wait_lint(pilot, screen, count)
        assert (
            field.value == "number"
            and toolfile.parse(screen.source.text).data["outputs"]["type"] == "number"
        )

        # The mouse: a click opens the list, a click on an option picks it.
        count = screen.lint_count
        assert await pilot.click("#f-inputs-0-items-type")
        assert isinstance(app.screen, EnumPicker)
        await pilot.pause()  # the list placed under the field before a click aims at it
        assert await pilot.click(
            OptionList, offset=(3, 2)
        )  # below the border: (none), then "string"
        await wait_lint(pilot, screen, count)
        assert toolfile.parse(screen.source.text).data["inputs"][0]["items"] == {"type": "string"}

        # The blank option removes the field.
        items = screen.form.query_one("#f-inputs-0-items-type", EnumField)
        items.focus()
        count = screen.lint_count
        await pilot.press("enter", "home", "enter")
        await wait_lint(pilot, screen, count)
        assert "items" not in toolfile.parse(screen.source.text).data["inputs"][0]
        assert items.value is None


async def test_cards_below_the_fold_arrive_with_their_values(folder):
    # The first cards are built for the first frame, the rest right after it: all must show
    # their own values and take edits.
    path = folder / "echo_text.py"
    extra = "".join(
        f"#   - name: extra{i}\n#     type: integer\n#     description: Extra {i}.\n"
        for i in range(3)
    )
    path.write_text(path.read_text().replace("# outputs:", extra + "# outputs:", 1))
    app = make_app(folder, path)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        names = [screen.form.query_one(f"#f-inputs-{i}-name", Input).value for i in range(5)]
        assert names == ["text", "shout", "extra0", "extra1", "extra2"]
        assert screen.form.query_one("#f-inputs-4-type", EnumField).value == "integer"
        field = screen.form.query_one("#f-inputs-4-description", Input)
        field.focus()
        field.cursor_position = len(field.value)
        count = screen.lint_count
        await pilot.press("end", "!")
        await wait_lint(pilot, screen, count)
        assert toolfile.parse(screen.source.text).data["inputs"][4]["description"] == "Extra 2.!"


async def test_a_letter_typed_in_the_open_picker_is_ignored(folder):
    app = make_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        field = screen.form.query_one("#f-outputs-type", EnumField)
        field.focus()
        await pilot.press("enter")
        assert isinstance(app.screen, EnumPicker)
        await pilot.press("o")  # type-ahead belongs to the closed field, not to its list
        await pilot.press("escape")
        assert app.screen is screen and field.value == "string"


async def test_enum_field_shows_an_unknown_value_as_it_is(folder):
    path = folder / "echo_text.py"
    path.write_text(path.read_text().replace("#     type: boolean", "#     type: bool"))
    app = make_app(folder, path)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        field = screen.form.query_one("#f-inputs-1-type", EnumField)
        assert field.value == "bool" and field.has_class("-unknown")
        assert "bool" in str(field.render())
        assert any(d.code == "PT022" or "bool" in d.message for d in screen.diagnostics)


async def test_form_edit_rewrites_only_frontmatter_and_undo_works(folder):
    app = make_app(folder)
    original = (folder / "echo_text.py").read_text()
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        field = screen.form.query_one("#f-description", Input)
        field.focus()
        field.cursor_position = len(field.value)
        count = screen.lint_count
        await pilot.press("end", "!", "!")
        await wait_lint(pilot, screen, count)
        text = screen.source.text
        assert (
            _line(text, "# description: Return")
            == "# description: Return the text it is given, optionally shouted.!!"
        )
        assert toolfile.parse(text).body == toolfile.parse(original).body
        assert screen.dirty
        assert "●" in screen.sub_title
        # The field being typed in kept its text and the focus through the re-parse.
        assert app.focused is field and field.value.endswith("!!")

        # A switch: required of the second input.
        switch = screen.form.query_one("#f-inputs-1-required", Switch)
        switch.focus()
        count = screen.lint_count
        await pilot.press("enter")
        await wait_lint(pilot, screen, count)
        data = toolfile.parse(screen.source.text).data
        assert data["inputs"][1]["required"] is True

        # Undo in the source pane takes the form edits back, one by one.
        screen.source.focus()
        count = screen.lint_count
        await pilot.press("ctrl+z", "ctrl+z")
        await wait_lint(pilot, screen, count)
        assert screen.source.text == original
        assert not screen.dirty


async def test_form_inputs_editor_add_move_remove(folder):
    app = make_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        form = screen.form
        count = screen.lint_count
        form.query_one("#input-add").focus()
        await pilot.press("enter")
        await wait_lint(pilot, screen, count)
        names = [i["name"] for i in toolfile.parse(screen.source.text).data["inputs"]]
        assert names == ["text", "shout", "arg3"]
        await pilot.pause(0.1)
        assert form.query_one("#f-inputs-2-name", Input).value == "arg3"

        count = screen.lint_count
        form.query_one("#input-up-2").focus()
        await pilot.press("enter")
        await wait_lint(pilot, screen, count)
        names = [i["name"] for i in toolfile.parse(screen.source.text).data["inputs"]]
        assert names == ["text", "arg3", "shout"]

        count = screen.lint_count
        form.query_one("#input-remove-1").focus()
        await pilot.press("enter")
        await wait_lint(pilot, screen, count)
        names = [i["name"] for i in toolfile.parse(screen.source.text).data["inputs"]]
        assert names == ["text", "shout"]

        # Two adds before the re-parse catches up: both land, the cards follow (no stale or
        # duplicate cards). `press()` twice: Textual's Button drops a key press while it is
        # still showing the previous one.
        add = form.query_one("#input-add")
        add.focus()
        count = screen.lint_count
        add.press()
        add.press()
        await wait_lint(pilot, screen, count)
        await pilot.pause(0.3)
        names = [i["name"] for i in toolfile.parse(screen.source.text).data["inputs"]]
        assert names == ["text", "shout", "arg3", "arg4"]
        assert len(form.query(".input-card")) == 4


async def test_form_inputs_editor_by_mouse(folder):
    app = make_app(folder)
    async with app.run_test(size=(140, 60)) as pilot:
        screen = await ready(pilot, app)
        form = screen.form

        async def click(selector: str) -> list[str]:
            count = screen.lint_count
            assert await pilot.click(selector)
            await wait_lint(pilot, screen, count)
            await pilot.pause(0.1)
            return [i["name"] for i in toolfile.parse(screen.source.text).data["inputs"]]

        assert await click("#input-add") == ["text", "shout", "arg3"]
        assert form.query_one("#f-inputs-2-name", Input).value == "arg3"
        assert await click("#input-down-0") == ["shout", "text", "arg3"]
        assert form.query_one("#f-inputs-0-name", Input).value == "shout"
        assert await click("#input-remove-2") == ["shout", "text"]
        assert len(form.query(".input-card")) == 2


async def test_source_edit_refreshes_form_but_not_the_focused_field(folder):
    app = make_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        version = screen.form.query_one("#f-version", Input)
        version.focus()
        text = screen.source.text
        row = text.splitlines().index("# name: echo_text")
        count = screen.lint_count
        screen.source.replace("# name: echo_loud", (row, 0), (row, len("# name: echo_text")))
        row = text.splitlines().index("# version: 1.0.0")
        screen.source.replace("# version: 2.0.0", (row, 0), (row, len("# version: 1.0.0")))
        await wait_lint(pilot, screen, count)
        assert screen.form.query_one("#f-name", Input).value == "echo_loud"
        assert version.value == "1.0.0"  # focused: never clobbered while typing
        assert app.focused is version


async def test_broken_yaml_dims_form_and_lint_points_at_it(folder):
    app = make_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        row = screen.source.text.splitlines().index("# inputs:")
        count = screen.lint_count
        screen.source.insert(" [", (row, len("# inputs:")))
        await wait_lint(pilot, screen, count)
        codes = [d.code for d in screen.lint_panel.diagnostics]
        assert "PT002" in codes
        assert screen.form.stale and screen.form.has_class("-stale")
        assert screen.form.query_one("#form-fields").disabled
        # The last good manifest is still shown.
        assert screen.form.query_one("#f-name", Input).value == "echo_text"
        # Enter on the YAML error: the cursor goes to its line in the source.
        panel = screen.query_one(LintPanel)
        panel.focus()
        panel.move_cursor(row=codes.index("PT002"))
        await pilot.press("enter")
        await pilot.pause()
        assert app.focused is screen.source
        span = panel.diagnostics[codes.index("PT002")].span
        assert screen.source.cursor_location[0] == span.line - 1
        assert row <= span.line - 1 <= row + 1  # at the broken line, or where YAML noticed


async def test_lint_jump_to_form_field(folder):
    path = folder / "echo_text.py"
    path.write_text(path.read_text().replace("# version: 1.0.0", "# version: 1.0.0.0"))
    app = make_app(folder, path)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        panel = screen.query_one(LintPanel)
        codes = [d.code for d in panel.diagnostics]
        assert "PT012" in codes
        panel.focus()
        panel.move_cursor(row=codes.index("PT012"))
        await pilot.press("enter")
        await pilot.pause()
        assert app.focused is screen.form.query_one("#f-version", Input)
        # `s` goes to the source span instead.
        panel.focus()
        await pilot.press("s")
        await pilot.pause()
        assert app.focused is screen.source
        assert screen.source.selected_text == "1.0.0.0"


async def test_quick_fix_through_the_text_area_with_undo(folder):
    path = folder / "echo_text.py"
    broken = path.read_text().replace('python_version: "3.12"', "python_version: 3.12")
    path.write_text(broken)
    app = make_app(folder, path)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        panel = screen.query_one(LintPanel)
        codes = [d.code for d in panel.diagnostics]
        assert "PT023" in codes
        panel.focus()
        panel.move_cursor(row=codes.index("PT023"))
        count = screen.lint_count
        await pilot.press("f")
        await wait_lint(pilot, screen, count)
        assert '#   python_version: "3.12"' in screen.source.text
        assert "PT023" not in [d.code for d in screen.lint_panel.diagnostics]
        assert screen.dirty
        screen.source.focus()
        count = screen.lint_count
        await pilot.press("ctrl+z")
        await wait_lint(pilot, screen, count)
        assert screen.source.text == broken
        assert not screen.dirty


async def test_save_writes_atomically_keeping_mode(folder):
    path = folder / "echo_text.py"
    os.chmod(path, 0o750)
    app = make_app(folder, path)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        screen.source.insert("# a comment\n", screen.source.document.end)
        await pilot.pause()
        assert screen.dirty
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert path.read_text() == screen.source.text
        assert path.read_text().endswith("# a comment\n")
        assert stat.S_IMODE(path.stat().st_mode) == 0o750
        assert not screen.dirty
        assert screen.loaded_sha == file_sha256(path)
        # F2 is the twin for terminals that swallow ctrl+s.
        screen.source.insert("# more\n", screen.source.document.end)
        await pilot.press("f2")
        await pilot.pause()
        assert path.read_text().endswith("# more\n")


async def test_outside_change_follows_clean_buffer(folder):
    path = folder / "echo_text.py"
    app = make_app(folder, path)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        new = path.read_text().replace("optionally shouted", "maybe shouted")
        path.write_text(new)
        count = screen.lint_count
        screen.on_file_changed_outside(path)
        await wait_lint(pilot, screen, count)
        assert screen.source.text == new
        assert not screen.dirty
        assert screen.form.query_one("#f-description", Input).value.endswith("maybe shouted.")
        assert not screen.query_one("#banner").has_class("-shown")


async def test_outside_change_with_dirty_buffer_shows_banner(folder):
    path = folder / "echo_text.py"
    app = make_app(folder, path)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        screen.source.insert("# mine\n", screen.source.document.end)
        await pilot.pause()
        theirs = path.read_text().replace("optionally shouted", "maybe shouted")
        path.write_text(theirs)
        screen.on_file_changed_outside(path)
        await pilot.pause()
        assert screen.query_one("#banner").has_class("-shown")
        assert screen.source.text.endswith("# mine\n")  # nothing typed is lost
        assert path.read_text() == theirs  # and nothing of theirs either
        # Keep mine: the next save overwrites knowingly, without a dialog.
        await pilot.pause()  # the banner's buttons are built when it first shows
        assert await pilot.click("#banner-keep")
        await pilot.pause()
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert not isinstance(app.screen, ConflictModal)
        assert path.read_text().endswith("# mine\n")


async def test_save_conflict_asks_and_keeps_or_reloads(folder):
    path = folder / "echo_text.py"
    app = make_app(folder, path)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        screen.source.insert("# mine\n", screen.source.document.end)
        theirs = path.read_text() + "# theirs\n"
        path.write_text(theirs)
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, ConflictModal)
        assert path.read_text() == theirs  # never overwritten silently
        await pilot.press("d")  # the diff
        await pilot.pause()
        assert app.screen.has_class("-diff")
        await pilot.press("r")  # reload theirs
        await pilot.pause()
        assert screen.source.text == theirs
        assert not screen.dirty

        screen.source.insert("# mine again\n", screen.source.document.end)
        path.write_text(theirs + "# theirs again\n")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, ConflictModal)
        await pilot.press("k")  # keep mine: saved over theirs, knowingly
        await pilot.pause()
        assert path.read_text().endswith("# mine again\n")
        assert not screen.dirty


async def test_save_as_new_version_keeps_history(folder):
    path = folder / "echo_text.py"
    original = path.read_text()
    app = make_app(folder, path)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        await pilot.press("f6")
        await pilot.pause()
        assert isinstance(app.screen, ChoiceModal)
        await pilot.press("m")
        await pilot.pause()
        assert toolfile.read(str(path)).manifest.version == "1.1.0"
        assert screen.source.text == path.read_text()
        kept = screen.toolbox.history("echo_text")
        assert [v for v, _ in kept] == ["1.0.0"]
        assert kept[0][1].read_text() == original
        # History browser lists it.
        await pilot.press("f10")
        await pilot.pause()
        from patch_tui.ui.desk.history import HistoryScreen

        assert isinstance(app.screen, HistoryScreen)
        await pilot.press("escape")


async def test_switching_tools_with_unsaved_edits_asks(folder):
    app = make_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        screen.source.insert("# unsaved\n", screen.source.document.end)
        await pilot.pause()
        browser_list = screen.browser.query_one("#browser-list")
        browser_list.focus()
        browser_list.highlighted = 1
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, ChoiceModal)
        await pilot.press("c")  # cancel: stay
        # A pause, as a person makes: keys right after a letter closed a dialog are dropped.
        await pilot.pause(TYPING_PAUSE)
        assert screen.current_path.name == "echo_text.py"
        assert screen.source.text.endswith("# unsaved\n")
        browser_list.focus()
        await pilot.press("enter")
        await pilot.pause()
        count = screen.lint_count
        await pilot.press("d")  # discard
        await wait_lint(pilot, screen, count)
        assert screen.current_path.name == "word_total.py"
        assert not (folder / "echo_text.py").read_text().endswith("# unsaved\n")


async def test_a_newly_shown_field_shows_the_start_of_its_text(folder):
    # Loading a longer value into a field nobody is typing in must not leave it scrolled to the
    # end (Input puts its cursor after a new value).
    app = make_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        count = screen.lint_count
        browser_list = screen.browser.query_one("#browser-list")
        browser_list.focus()
        browser_list.highlighted = 1
        await pilot.press("enter")
        await wait_lint(pilot, screen, count)
        field = screen.form.query_one("#f-description", Input)
        assert field.value == "Count the words in a text."
        assert field.cursor_position == 0 and field.scroll_x == 0

        # Typing at the end, then leaving the field: it shows its start again, also after the
        # form is laid out anew (the stale banner comes and goes when the YAML breaks).
        field.focus()
        await pilot.press("end", "!")
        assert field.cursor_position == len(field.value)
        screen.source.focus()
        await pilot.pause()
        assert field.cursor_position == 0 and field.scroll_x == 0
        count = screen.lint_count
        screen.source.insert("  [\n", (3, 0))
        await wait_lint(pilot, screen, count)
        assert screen.form.stale
        count = screen.lint_count
        screen.source.undo()
        await wait_lint(pilot, screen, count)
        assert not screen.form.stale and field.scroll_x == 0


async def test_quit_with_unsaved_edits_asks(folder):
    app = make_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        screen.source.insert("# unsaved\n", screen.source.document.end)
        await pilot.pause()
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert isinstance(app.screen, ChoiceModal)
        await pilot.press("s")  # save and quit
        await pilot.pause()
    assert (folder / "echo_text.py").read_text().endswith("# unsaved\n")


async def test_new_rename_duplicate_delete_from_browser(folder):
    app = make_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        screen.browser.query_one("#browser-list").focus()
        await pilot.press("ctrl+n")
        await pilot.pause()
        await pilot.press(*"Bad", "enter")
        await pilot.pause()
        assert "lowercase" in str(app.screen.query_one("#prompt-error").render())
        count = screen.lint_count
        await pilot.press("backspace", "backspace", "backspace", *"fresh_tool", "enter")
        await wait_lint(pilot, screen, count)
        assert screen.current_path.name == "fresh_tool.py"
        assert screen.lint_panel.diagnostics == [] or all(
            d.severity != "error" for d in screen.lint_panel.diagnostics
        )

        await pilot.pause(0.2)
        screen.browser.query_one("#browser-list").focus()
        await pilot.press("ctrl+e")
        await pilot.pause()
        await pilot.press(*"fresh_tool_v2", "enter")
        await pilot.pause(0.2)
        assert (folder / "fresh_tool_v2.py").exists() and not (folder / "fresh_tool.py").exists()
        assert screen.current_path.name == "fresh_tool_v2.py"
        assert "name: fresh_tool_v2" in screen.source.text

        screen.browser.query_one("#browser-list").focus()
        await pilot.press("delete")
        await pilot.pause()
        # Destructive: the safe answer has the focus, so Enter cancels.
        await pilot.press("enter")
        await pilot.pause()
        assert (folder / "fresh_tool_v2.py").exists()
        await pilot.press("delete")
        await pilot.pause()
        await pilot.press("y")
        await pilot.pause(0.2)
        assert not (folder / "fresh_tool_v2.py").exists()
        assert list((folder / ".trash").glob("fresh_tool_v2-*.py"))


async def test_filter_as_you_type(folder):
    app = make_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        await pilot.pause(0.2)
        box = app.editor.browser.query_one("#browser-filter", Input)
        box.focus()
        await pilot.press(*"word")
        await pilot.pause()
        options = app.editor.browser.query_one("#browser-list")
        assert options.option_count == 1
        assert options.get_option_at_index(0).id.endswith("word_total.py")


async def test_broken_file_opens_with_diagnostics(folder):
    bad = folder / "broken.py"
    bad.write_bytes(b"# ---\n# name: broken\n# description: caf\xe9\n# ---\nprint(1)\n")
    app = make_app(folder, bad)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause(0.3)
        screen = app.editor
        assert screen.read_only_reason
        assert "PT001" in [d.code for d in screen.lint_panel.diagnostics]
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert bad.read_bytes().endswith(b"print(1)\n")  # never saved back mangled


async def test_markup_in_file_text_is_shown_literally(folder):
    path = folder / "echo_text.py"
    path.write_text(path.read_text().replace("# version: 1.0.0", '# version: "[b]x[/b]"'))
    app = make_app(folder, path)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        panel = screen.query_one(LintPanel)
        row = [d.code for d in panel.diagnostics].index("PT012")
        cell = panel.get_row_at(row)[3]
        assert "[b]x[/b]" in cell.plain


@pytest.mark.parametrize("size", [(80, 24), (20, 5), (60, 20)])
async def test_small_terminals(folder, size):
    app = make_app(folder)
    async with app.run_test(size=size) as pilot:
        screen = await ready(pilot, app)
        if size == (80, 24):
            assert screen.narrow
            assert screen.form.display and not screen.source.display
            await pilot.press("f4")
            await pilot.pause()
            assert screen.source.display and not screen.form.display
            assert app.focused is screen.source
        await pilot.press("f3", "f4", "f5")
        await pilot.pause()


async def test_palette_commands_are_named_area_verb(folder):
    app = make_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        from patch_tui.ui.desk.editor import EditorCommands

        provider = EditorCommands(screen)
        names = [name for name, _help, _cb in provider._commands()]
        assert "tool: save" in names and "tool: new version" in names and "lint: apply fix" in names
        assert all(": " in n for n in names)


async def test_save_in_patch_toolbox_updates_index(tmp_path):
    import json
    import shutil

    from desk_helpers import FIXTURES

    root = tmp_path / "box"
    (root / "tools").mkdir(parents=True)
    shutil.copy(FIXTURES / "echo_text.py", root / "tools" / "echo_text.py")
    (root / "index.json").write_text(
        json.dumps(
            {
                "tools": [
                    {"name": "echo_text", "version": "1.0.0", "description": "old", "enabled": True}
                ]
            }
        )
    )
    app = make_app(root)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        assert screen.toolbox.is_patch_toolbox
        field = screen.form.query_one("#f-version", Input)
        field.focus()
        await pilot.pause()
        count = screen.lint_count
        await pilot.press("end", "backspace", "1")
        await wait_lint(pilot, screen, count)
        await pilot.press("ctrl+s")
        await pilot.pause()
    entry = json.loads((root / "index.json").read_text())["echo_text"]
    assert entry == {
        "name": "echo_text",
        "version": "1.0.1",
        "description": "Return the text it is given, optionally shouted.",
        "filePath": entry["filePath"],
        "embedding": None,
        "lastUsedAt": None,
        "createdAt": entry["createdAt"],
        "enabled": True,
    }
    assert entry["filePath"].endswith("/tools/echo_text.py")


def test_cli_missing_path_is_a_clear_message(tmp_path, capsys):
    from patch_tui.cli import main

    assert main([str(tmp_path / "nope.py")]) == 2
    err = capsys.readouterr().err
    assert "no such file or folder" in err and "Traceback" not in err


async def test_theme_switch_recolours_the_source(folder):
    from textual.color import Color

    app = make_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        app.theme = "patch-light"
        await pilot.pause()
        keyword = screen.source._theme.syntax_styles["keyword"].color
        assert keyword is not None
        assert Color.from_rich_color(keyword) == Color.parse(app.theme_variables["primary"])
        assert screen.source.theme == "patch"


async def test_form_shows_odd_data_without_destroying_it(folder):
    path = folder / "echo_text.py"
    text = path.read_text().replace(
        "# version: 1.0.0", '# version: 1.0.0\n# generated_by: "claude\u202egnp.exe"'
    )
    start = text.index("# inputs:")
    end = text.index("# outputs:")
    text = text[:start] + "# inputs:\n#   text:\n#     type: string\n" + text[end:]
    path.write_text(text)
    app = make_app(folder, path)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        form = screen.form
        # Hidden characters are shown, never obeyed.
        assert "U+202E" in str(form.query_one("#f-generated__by").render())
        # A mapping under `inputs` is reported and the editor that would replace it is off.
        assert form.query_one("#inputs-note").display
        assert form.query_one("#input-add").disabled
        assert screen.source.text == text


async def test_form_marks_fields_with_problems(folder):
    app = make_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        version = screen.form.query_one("#f-version", Input)
        assert not version.has_class("-problem")
        text = screen.source.text
        row = text.splitlines().index("# version: 1.0.0")
        count = screen.lint_count
        screen.source.replace("# version: 1.0", (row, 0), (row, len("# version: 1.0.0")))
        await wait_lint(pilot, screen, count)
        assert version.has_class("-problem")
        assert "PT022" in str(version.tooltip)
        count = screen.lint_count
        screen.source.replace("# version: 1.0.0", (row, 0), (row, len("# version: 1.0")))
        await wait_lint(pilot, screen, count)
        assert not version.has_class("-problem")


async def test_copy_source_to_clipboard(folder):
    app = make_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        await pilot.press("f9")
        await pilot.pause()
        assert app.clipboard == screen.source.text
