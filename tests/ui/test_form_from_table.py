"""The desk's form is built from the field table (format/fields.py): a field added to the
table shows up in the form, with its help, and an edit of it is written into the source,
without a line of form code for it."""

from __future__ import annotations

import pytest
from desk_helpers import make_app, ready, tool_folder, wait_lint
from textual.widgets import Input, Static, Switch

from patch_tui.format import fields, toolfile
from patch_tui.ui.desk.manifest_form import FieldRow

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


def _row_of(widget) -> FieldRow:
    return next(a for a in widget.ancestors if isinstance(a, FieldRow))


async def test_new_fields_show_up_with_their_help_and_write_the_source(folder):
    app = make_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        form = screen.form
        await pilot.pause()
        camera = form.query_one("#f-capabilities-camera", Switch)
        assert camera.value is False and _row_of(camera).label == "camera"
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
