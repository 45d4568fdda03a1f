"""Keys a newcomer presses (issue 25), as they press them: ctrl+z takes back a pick made in an
enum field, and `a` in the inbox before everything was read says what is left, never nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from desk_helpers import linted_as_is, make_app, ready, wait_lint
from inboxkit import hold, inbox_app, isolate, open_inbox, tools
from pilotkit import until

from patch_tui.approvals import decisions
from patch_tui.format import toolfile
from patch_tui.ui.inbox.inbox_dialogs import DecideModal


@pytest.mark.usefixtures("desk_env")
async def test_ctrl_z_undoes_a_pick_in_an_enum_field(folder):
    app = make_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        field = screen.form.query_one("#f-inputs-0-type")
        field.focus()
        await pilot.pause()
        assert toolfile.parse(screen.source.text).data["inputs"][0]["type"] == "string"
        count = screen.lint_count
        await pilot.press("i")  # type-ahead picks "integer": the accident
        await wait_lint(pilot, screen, count, timeout=20)
        assert toolfile.parse(screen.source.text).data["inputs"][0]["type"] == "integer"
        count = screen.lint_count
        await pilot.press("ctrl+z")
        await wait_lint(pilot, screen, count, timeout=20)
        assert toolfile.parse(screen.source.text).data["inputs"][0]["type"] == "string"
        assert field.value == "string"
        count = screen.lint_count
        await pilot.press("ctrl+y")
        await wait_lint(pilot, screen, count, timeout=20)
        assert toolfile.parse(screen.source.text).data["inputs"][0]["type"] == "integer"


async def test_a_before_everything_was_read_says_what_is_left(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    store = isolate(monkeypatch, tmp_path)
    folder = tools(tmp_path, "delete_file")
    hold(store, folder / "delete_file.py", {"path": "/data/" + "d" * 600})
    app = inbox_app(store)
    async with app.run_test(size=(100, 32)) as pilot:
        screen = await open_inbox(pilot, app)
        assert not screen.can_approve
        await pilot.press("a")
        await until(pilot, lambda: app._notifications, what="a message")
        assert not isinstance(app.screen, DecideModal)  # nothing is decided
        said = " ".join(n.message for n in app._notifications)
        assert "read the details to the end" in said and "E expands" in said


def _copy_tool(folder: Path, name: str) -> None:
    text = (folder / "echo_text.py").read_text()
    (folder / f"{name}.py").write_text(text.replace("name: echo_text", f"name: {name}"))


async def _listed(pilot, screen, count: int) -> None:
    from textual.widgets import OptionList

    await until(
        pilot,
        lambda: (
            len(screen.browser.entries) >= count
            and screen.browser.query_one(OptionList).option_count >= count
        ),
        what="the tool list",
    )


@pytest.mark.usefixtures("desk_env")
async def test_the_filter_steps_aside_once_a_tool_opens(folder):
    app = make_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        await _listed(pilot, screen, 2)
        await pilot.press("/", *"word", "enter")
        await until(pilot, lambda: screen.current_path.name == "word_total.py", what="open")
        box = screen.browser.query_one("#browser-filter")
        assert box.value == ""
        assert screen.browser.query_one("#browser-list").option_count == 2


@pytest.mark.usefixtures("desk_env")
async def test_a_new_tool_name_in_words_is_offered_in_snake_case(folder):
    app = make_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        await pilot.press("ctrl+n")
        await pilot.pause()
        await pilot.press(*"Reverse Text", "enter")
        await pilot.pause()
        error = str(app.screen.query_one("#prompt-error").render())
        assert "`reverse_text`?" in error


@pytest.mark.usefixtures("desk_env")
async def test_after_a_delete_the_neighbour_opens(folder):
    for name in ("alpha_tool", "beta_tool", "gamma_tool"):
        _copy_tool(folder, name)
    app = make_app(folder, folder / "beta_tool.py")
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        await _listed(pilot, screen, 5)
        shown = [e.path.name for e in screen.browser.entries]
        after = shown[shown.index("beta_tool.py") + 1]
        screen.browser.query_one("#browser-list").focus()
        await pilot.press("delete")
        await pilot.pause()
        await pilot.press("tab", "enter")  # from Cancel to Delete, as a person does
        await until(pilot, lambda: screen.current_path.name != "beta_tool.py", what="a tool")
        assert screen.current_path.name == after != shown[0]


@pytest.mark.usefixtures("desk_env")
async def test_new_version_can_be_cancelled_and_history_has_its_own_footer(folder):
    from patch_tui.ui.desk.history import HistoryScreen
    from patch_tui.ui.dialogs.confirm import ChoiceModal
    from patch_tui.ui.widgets.key_bar import KeyBar

    app = make_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        before = (folder / "echo_text.py").read_text()
        await pilot.press("f6")
        await until(pilot, lambda: isinstance(app.screen, ChoiceModal), what="the dialog")
        assert app.screen.query_one("#choice-cancel")
        await pilot.press("c")
        await until(pilot, lambda: app.screen is screen, what="the dialog to close")
        assert (folder / "echo_text.py").read_text() == before
        await pilot.press("f10")
        await until(pilot, lambda: isinstance(app.screen, HistoryScreen), what="history")
        await pilot.pause()
        items = [i.description for i in app.screen.query_one(KeyBar)._items]
        assert "Close" in items and "Save" not in items and "Next pane" not in items


@pytest.mark.usefixtures("desk_env")
async def test_enter_on_a_missing_input_description_goes_to_its_empty_field(folder):
    path = folder / "echo_text.py"
    path.write_text(path.read_text().replace("#     description: The text to return.\n", "", 1))
    app = make_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        [missing] = [d for d in screen.diagnostics if "no `description`" in d.message]
        await pilot.press("ctrl+l")
        screen.lint_panel.move_cursor(row=screen.lint_panel.diagnostics.index(missing))
        await pilot.pause()
        await pilot.press("enter")
        field = screen.form.query_one("#f-inputs-0-description")
        await until(pilot, lambda: app.focused is field, what="the empty description field")


@pytest.mark.usefixtures("desk_env")
async def test_enter_in_the_frontmatter_keeps_the_line_a_comment(folder):
    app = make_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        source = screen.source
        lines = source.text.splitlines()
        row = next(i for i, line in enumerate(lines) if line.startswith("#     type: string"))
        source.focus()
        source.move_cursor((row, len(lines[row])))
        await pilot.pause()
        await pilot.press("enter", *"required: true")
        # The lint of the whole line typed: one of a text halfway typed ("#     requi", no YAML)
        # may have been shown meanwhile, on a loaded machine.
        await until(
            pilot,
            lambda: linted_as_is(app, screen),
            20,
            "the editor to lint the line as typed",
        )
        assert source.text.splitlines()[row + 1] == "#     required: true"
        assert not [d for d in screen.diagnostics if d.code in ("PT002", "PT003")]
        # In the body, Enter is a plain Enter.
        body = next(i for i, line in enumerate(source.text.splitlines()) if line == "import json")
        source.move_cursor((body, len("import json")))
        await pilot.press("enter")
        assert source.text.splitlines()[body + 1] == ""


async def test_try_it_says_which_exception_the_tool_raised(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from inboxkit import make_app as inbox_desk

    from patch_tui.ui.desk.try_it import TryItScreen

    store = isolate(monkeypatch, tmp_path)
    folder = tools(tmp_path, "word_count")
    path = folder / "word_count.py"
    path.write_text(
        path.read_text().replace(
            "    words = WORD_RE.findall(text)",
            '    raise LookupError(f"no dictionary for {text!r}")',
        )
    )
    app = inbox_desk(folder, store, path)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause(0.3)
        await pilot.press("ctrl+j")
        await until(pilot, lambda: isinstance(app.screen, TryItScreen), what="try it")
        screen = app.screen
        screen.query_one("#in-text").focus()
        await pilot.press(*"klingon")
        before = screen.run_count
        await pilot.press("f5")
        await until(pilot, lambda: screen.run_count > before, timeout=30, what="the run")
        output = str(screen.query_one("#try-output").render())
        assert "LookupError: no dictionary for 'klingon'" in output
        assert "the whole traceback is under stderr" in output


async def test_the_history_is_in_the_order_of_its_when_column(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import time

    from patch_tui.approvals.store import Store

    store = isolate(monkeypatch, tmp_path)
    folder = tools(tmp_path, "delete_file")
    first = hold(store, folder / "delete_file.py", {"path": "/tmp/held-first"})
    second = hold(store, folder / "delete_file.py", {"path": "/tmp/held-second"})
    with Store(store, actor="alice@cli") as s:
        assert decisions.reject(s, second.token, reason="no").ok
        time.sleep(0.01)
        # Held first, decided last: the newest in the history.
        assert decisions.reject(s, first.token, reason="no").ok
    app = inbox_app(store)
    async with app.run_test(size=(100, 32)) as pilot:
        screen = await open_inbox(pilot, app)
        await pilot.press("h")
        await until(pilot, lambda: len(screen.list.actions) == 2, what="history rows")
        assert [a.token for a in screen.list.actions] == [first.token, second.token]


@pytest.mark.usefixtures("desk_env")
async def test_a_form_edit_scrolls_the_source_to_the_line_it_wrote(tmp_path):
    import shutil

    from inboxkit import SAMPLES

    folder = tmp_path / "long"
    folder.mkdir()
    shutil.copy(SAMPLES / "csv_to_json.py", folder / "csv_to_json.py")
    app = make_app(folder)
    async with app.run_test(size=(120, 24)) as pilot:
        screen = await ready(pilot, app)
        source = screen.source
        source.scroll_home(animate=False)
        field = screen.form.query_one("#f-inputs-2-description")
        field.focus()
        await pilot.pause()
        count = screen.lint_count
        await pilot.press("!")
        await wait_lint(pilot, screen, count, timeout=20)
        row = next(
            i for i, line in enumerate(source.text.splitlines()) if line.endswith("numbers.!")
        )
        y = source.wrapped_document.location_to_offset((row, 0)).y

        def shown() -> bool:
            top = source.scroll_offset.y
            return top <= y < top + source.scrollable_content_region.height

        await until(pilot, shown, what="the edited line in view")
        assert app.focused is field  # the cursor and the focus stay in the form
