"""The desk's form is built from the field table (format/fields.py): a field added to the
table shows up in the form, with its help, and an edit of it is written into the source,
without a line of form code for it."""

from __future__ import annotations

import pytest
from desk_helpers import make_app, ready, tool_folder, wait_lint
from textual.widgets import Input, Static, Switch

from patch_tui.format import fields, toolfile
from patch_tui.ui.desk.manifest_form import FieldColumn

CAMERA = fields.FieldSpec(
    "capabilities",
    "camera",
    "boolean",
    default=False,
    widget="switch",
    doc="The tool takes pictures.",
)
SECRET = fields.FieldSpec(
    "inputs[]", "secret", "boolean", default=False, widget="switch", doc="Never logged."
)
HOMEPAGE = fields.FieldSpec(
    "",
    "homepage",
    "string",
    widget="text",
    section="Links",
    placeholder="https://...",
    doc="Where the tool is documented.",
)


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("PATCH_TUI_CONFIG", str(tmp_path / "config.toml"))
    monkeypatch.setenv("PATCH_TUI_STORE", str(tmp_path / "store.sqlite3"))


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setattr(fields, "FIELDS", (*fields.FIELDS, CAMERA, SECRET, HOMEPAGE))
    return tool_folder(tmp_path)


def _label_beside(widget) -> str:
    """The label on the screen left of a field, on its line (its column paints the labels),
    as the screen's compositor draws it now."""
    column = widget.parent
    assert isinstance(column, FieldColumn)
    line = widget.screen._compositor.render_strips()[widget.region.y].text
    return line[column.content_region.x : widget.region.x]


async def test_new_fields_show_up_with_their_help_and_write_the_source(folder):
    app = make_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        form = screen.form
        await pilot.pause()
        camera = form.query_one("#f-capabilities-camera", Switch)
        form.scroll_to_widget(camera, animate=False)
        await pilot.pause()
        assert camera.value is False and _label_beside(camera).strip() == "camera"
        assert camera.tooltip == "The tool takes pictures."
        assert form.query_one("#f-inputs-0-secret", Switch).value is False
        homepage = form.query_one("#f-homepage", Input)
        assert homepage.placeholder == "https://..."

        camera.focus()
        await pilot.pause()
        help_text = str(form.query_one("#field-help", Static).render())
        assert "capabilities.camera: The tool takes pictures." in help_text
        count = screen.lint_count
        await pilot.press("enter")
        await wait_lint(pilot, screen, count)
        assert toolfile.parse(screen.source.text).data["capabilities"]["camera"] is True

        homepage.focus()
        count = screen.lint_count
        await pilot.press(*"x.org")
        await wait_lint(pilot, screen, count)
        assert toolfile.parse(screen.source.text).data["homepage"] == "x.org"
        # Emptied, an optional text field leaves the manifest.
        count = screen.lint_count
        await pilot.press(*["backspace"] * 5)
        await wait_lint(pilot, screen, count)
        assert "homepage" not in toolfile.parse(screen.source.text).data

        form.query_one("#f-inputs-1-secret", Switch).focus()
        count = screen.lint_count
        await pilot.press("enter")
        await wait_lint(pilot, screen, count)
        assert toolfile.parse(screen.source.text).data["inputs"][1]["secret"] is True


def _labels_beside_fields(form) -> dict[str, str]:
    """Each field widget's id -> the label painted left of it on its line."""
    return {
        w.id: _label_beside(w).strip()
        for w in form.query(".field")
        if w.display and w.region.height
    }


async def test_every_field_is_labelled_on_its_own_line_as_the_form_changes(folder):
    app = make_app(folder)
    async with app.run_test(size=(140, 100)) as pilot:
        screen = await ready(pilot, app)
        form = screen.form
        await pilot.pause(0.3)  # the sections below the first frame's fold, and more cards

        def check(at_least: int) -> None:
            shown = _labels_beside_fields(form)
            fields_shown = list(form.query(".field"))
            assert len(shown) == len(fields_shown) >= at_least  # the lower sections' too
            for widget in fields_shown:
                assert shown[widget.id] == widget.field_label[:13], widget.id

        check(at_least=30)
        assert _labels_beside_fields(form)["f-capabilities-camera"] == "camera"
        assert _labels_beside_fields(form)["f-homepage"] == "homepage"

        # A new input card moves every field below it down: their labels move with them.
        count = screen.lint_count
        assert await pilot.click("#input-add")
        await wait_lint(pilot, screen, count)
        await pilot.pause(0.3)
        assert len(form.query(".input-card")) == 3
        check(at_least=38)

        # The inputs note shown, the cards gone (inputs no longer a list): the fields below
        # move up, and their labels with them.
        text = screen.source.text
        start, end = text.index("# inputs:"), text.index("# outputs:")
        count = screen.lint_count
        screen.source.load_text(
            text[:start] + "# inputs:\n#   text:\n#     type: string\n" + text[end:]
        )
        await wait_lint(pilot, screen, count)
        await pilot.pause(0.3)
        assert form.query_one("#inputs-note").display
        assert not form.query(".input-card")
        check(at_least=15)
