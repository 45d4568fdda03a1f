"""Placeholders that step aside (issue 25): a new input's description is an empty field with a
hint, so what a person types is all that is written; a new tool opens with its template
description selected, so typing replaces it; Enter on PT052 selects the template text."""

from __future__ import annotations

import pytest
from desk_helpers import make_app, ready, wait_lint
from pilotkit import until
from textual.widgets import Input

from patch_tui.format import toolfile
from patch_tui.format.templates import INPUT_DESCRIPTION_HINT

pytestmark = pytest.mark.usefixtures("desk_env")

SENTENCE = "Only count words longer than three letters."


async def test_add_input_leaves_an_empty_description_with_a_hint(folder):
    app = make_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        screen.form.query_one("#input-add").focus()
        await pilot.pause()
        count = screen.lint_count
        await pilot.press("enter")
        await wait_lint(pilot, screen, count, timeout=20)
        await until(pilot, lambda: app.focused.id == "f-inputs-2-name", what="the new name")
        field = screen.form.query_one("#f-inputs-2-description", Input)
        assert field.value == "" and field.placeholder == INPUT_DESCRIPTION_HINT
        await pilot.press("tab", "tab")  # name -> type -> description, as a person tabs
        assert app.focused is field
        count = screen.lint_count
        await pilot.press(*SENTENCE)
        await wait_lint(pilot, screen, count, timeout=20)
        await until(
            pilot,
            lambda: (
                toolfile.parse(screen.source.text).data["inputs"][2].get("description") == SENTENCE
            ),
            what="the typed sentence in the source",
        )
        await pilot.press("ctrl+s")
        await pilot.pause(0.2)
    saved = toolfile.read(str(folder / "echo_text.py")).data["inputs"][2]["description"]
    assert saved == SENTENCE  # nothing of a template before it


async def test_a_new_tools_template_description_is_selected_and_typed_over(folder):
    app = make_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        await pilot.press("ctrl+n")
        await pilot.pause()
        count = screen.lint_count
        await pilot.press(*"letter_tally", "enter")
        await wait_lint(pilot, screen, count, timeout=20)
        field = screen.form.query_one("#f-description", Input)
        await until(pilot, lambda: app.focused is field, what="the description field")
        await until(pilot, lambda: field.selected_text != "", what="the template selected")
        assert field.selected_text == "Describe what letter_tally does in one sentence."
        assert any(d.code == "PT052" for d in screen.diagnostics)
        count = screen.lint_count
        await pilot.press(*"Count the words in a text.")
        await wait_lint(pilot, screen, count, timeout=20)
        await until(
            pilot,
            lambda: "# description: Count the words in a text.\n" in screen.source.text,
            what="the typed description in the source",
        )
        await until(
            pilot,
            lambda: not any(d.code == "PT052" for d in screen.diagnostics),
            what="PT052 to go",
        )


async def test_enter_on_pt052_selects_the_template_text_in_the_form(folder):
    text = (folder / "echo_text.py").read_text()
    (folder / "echo_text.py").write_text(
        text.replace(
            "#     description: The text to return.",
            "#     description: Describe this argument.Echo it back.",
            1,
        )
    )
    app = make_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        [problem] = [d for d in screen.diagnostics if d.code == "PT052"]
        await pilot.press("ctrl+l")
        panel = screen.lint_panel
        panel.move_cursor(row=screen.lint_panel.diagnostics.index(problem))
        await pilot.pause()
        await pilot.press("enter")
        field = screen.form.query_one("#f-inputs-0-description", Input)
        await until(pilot, lambda: field.selected_text != "", what="the template selected")
        assert field.selected_text == "Describe this argument."
        count = screen.lint_count
        await pilot.press("delete")
        await wait_lint(pilot, screen, count, timeout=20)
        assert field.value == "Echo it back."
