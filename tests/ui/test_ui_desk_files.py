"""Empty and binary files on the desk (issue 12): the form says plainly that there is no
manifest and shows no fake values, PT001 offers a starter, and bytes that are not UTF-8 show as
\\xNN tokens that fit the pane."""

from __future__ import annotations

import pytest
from desk_helpers import make_app, ready, wait_lint

from patch_tui.format import toolfile
from patch_tui.lint.engine import lint_toolfile

# The config and the store in tmp_path, $EDITOR a no-op; `folder` is a copy of the desk's tools
# (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("desk_env")


def _form_error(screen) -> str:
    return str(screen.form.query_one("#form-error").render())


async def test_an_empty_file_says_there_is_no_manifest_and_f8_inserts_a_starter(folder):
    path = folder / "blank_tool.py"
    path.write_text("")
    app = make_app(folder, path)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        error = _form_error(screen)
        assert "No manifest" in error and "last good" not in error and "F8" in error
        assert not screen.form.query_one("#form-fields").display  # no placeholders posing as values
        count = screen.lint_count
        screen.source.focus()
        await pilot.press("f8")
        await wait_lint(pilot, screen, count, timeout=20)
        await pilot.pause(0.2)
        data = toolfile.parse(screen.source.text).data
        assert data["name"] == "blank_tool"
        # Clean but for its description, a template sentence to write (PT052, issue 25).
        assert [d.code for d in screen.diagnostics] == ["PT052"]
        assert screen.form.query_one("#form-fields").display
        assert screen.form.query_one("#f-name").value == "blank_tool"
        count = screen.lint_count
        await pilot.press("ctrl+z")  # one undo step takes the starter back out
        await wait_lint(pilot, screen, count, timeout=20)
        assert screen.source.text == ""


async def test_switching_to_a_file_without_manifest_shows_none_of_the_previous_tool(folder):
    bare = folder / "bare.py"
    bare.write_text("print('no manifest here')\n")
    app = make_app(folder, folder / "echo_text.py")
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        count = screen.lint_count
        screen.open_tool(bare)
        await wait_lint(pilot, screen, count, timeout=20)
        error = _form_error(screen)
        assert "No manifest" in error and "last good" not in error
        assert not screen.form.query_one("#form-fields").display
        # A file that had a manifest and loses it while edited keeps showing it, dimmed.
        count = screen.lint_count
        screen.open_tool(folder / "echo_text.py")
        await wait_lint(pilot, screen, count, timeout=20)
        screen.source.replace("# --", (0, 0), (0, 5))
        await wait_lint(pilot, screen, count + 1, timeout=20)
        assert "last good" in _form_error(screen)
        assert screen.form.query_one("#form-fields").display


async def test_a_binary_file_shows_bytes_as_tokens_that_fit_the_pane(folder):
    path = folder / "blob.py"
    path.write_bytes(
        b"# ---\n\x89PNG\r\n\x1a\n\x00\x00\xff\xfe\xfd\xe4\xb8\n" + bytes(range(128, 256)) + b"\n"
    )
    app = make_app(folder, path)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause(0.5)
        screen = app.editor
        text = screen.source.text
        assert "\ufffd" not in text
        assert "\\x89" in text and "\\xff" in text
        assert screen.read_only_reason
        assert "last good" not in _form_error(screen)
        # Nothing to insert into a file that is not text.
        assert all(d.fix is None for d in screen.diagnostics if d.code == "PT001")


def test_pt001_offers_a_starter_only_where_it_helps():
    empty = lint_toolfile(toolfile.parse("", path="/t/fresh_one.py"))
    (d,) = empty
    assert d.code == "PT001" and d.fix is not None and not d.fix.safe
    text = d.fix.edits[0].new_text
    # Clean but for its description, a template sentence to write (PT052, issue 25).
    assert [d.code for d in lint_toolfile(toolfile.parse(text, path="/t/fresh_one.py"))] == [
        "PT052"
    ]
    assert toolfile.parse(text).data["name"] == "fresh_one"

    code = "import json\n"
    bare = [x for x in lint_toolfile(toolfile.parse(code, path="/t/9bad.py")) if x.code == "PT001"][
        0
    ]
    assert bare.fix is not None and bare.fix.title == "insert a starter manifest"
    fixed = toolfile.parse(bare.fix.edits[0].new_text + code)
    assert fixed.data["name"] == "my_tool" and fixed.body.strip().startswith("import json")

    for tf in (
        toolfile.parse_bytes(b"a\x00b", path="/t/b.py"),
        toolfile.parse_bytes(b"\xff\xfe", path="/t/b.py"),
        toolfile.parse("# ---\n# name: x\n", path="/t/b.py"),
    ):
        assert all(x.fix is None for x in lint_toolfile(tf) if x.code == "PT001")


async def test_a_file_with_a_lone_carriage_return_opens_read_only_and_is_never_rewritten(folder):
    """The runtime (and lint) see one line where a lone \\r sits; the editor would see two and
    save a line break there. So the desk shows it read-only and says why; the bytes stay."""
    path = folder / "echo_text.py"
    text = path.read_text()
    stray = text.replace("# description: ", "# description: A\r# x: 1\r# ", 1)
    assert stray != text
    path.write_bytes(stray.encode())
    app = make_app(folder, path)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause(0.5)
        screen = app.editor
        assert screen.read_only_reason and "lone carriage return" in screen.read_only_reason
        assert screen.source.read_only
        # The problems panel says what the runtime makes of it (PT027), at the \r.
        shown = [d for d in screen.lint_panel.diagnostics if d.code == "PT027"]
        line = stray.split("\n").index(next(r for r in stray.split("\n") if "\r" in r)) + 1
        assert [(d.severity, d.line) for d in shown] == [("error", line)]
        assert "`# x: 1`" in shown[0].message
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert path.read_bytes() == stray.encode() and app.is_running


async def test_f8_on_the_lone_carriage_return_problem_ends_them_and_the_file_is_editable(folder):
    """PT027's fix is the way out of read-only: F8 on it turns every lone \\r into the file's
    line ending; the buffer is then unsaved and editable, and ctrl+s writes it."""
    path = folder / "echo_text.py"
    text = path.read_text()
    stray = text.replace("# description: ", "# description: A\r# x: 1\r# ", 1)
    path.write_bytes(stray.encode())
    app = make_app(folder, path)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause(0.5)
        screen = app.editor
        panel = screen.lint_panel
        codes = [d.code for d in panel.diagnostics]
        panel.focus()
        panel.move_cursor(row=codes.index("PT027"))
        count = screen.lint_count
        await pilot.press("f8")
        await wait_lint(pilot, screen, count)
        assert screen.read_only_reason is None and not screen.source.read_only
        assert screen.dirty and "\r" not in screen.source.text
        assert "PT027" not in [d.code for d in screen.diagnostics]
        await pilot.press("ctrl+s")
        await pilot.pause(0.3)
        assert path.read_bytes() == stray.replace("\r", "\n").encode()
