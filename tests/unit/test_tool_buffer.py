"""The desk's buffer without a screen: loading, dirty, form edits as frontmatter patches built on
the last parse (no parse per keystroke), lint generations, quick fixes and saving bytes."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from patch_tui.desk import buffer as buffer_module
from patch_tui.desk.buffer import TextEdit, ToolBuffer
from patch_tui.format import toolfile
from patch_tui.lint.engine import apply_edits, lint_toolfile

SAMPLE = Path(__file__).resolve().parents[2] / "sample_tools" / "word_count.py"


def _buffer(text: str | None = None, *, raw: bytes | None = None) -> ToolBuffer:
    if raw is None:
        raw = (text if text is not None else SAMPLE.read_text(encoding="utf-8")).encode("utf-8")
    return ToolBuffer.from_bytes(Path("/tools/word_count.py"), raw)


@pytest.fixture
def count_parses(monkeypatch):
    """How many times the buffer parses text from now on."""
    calls: list[str] = []
    real = toolfile.parse

    def counting(text: str, *args, **kwargs):
        calls.append(text)
        return real(text, *args, **kwargs)

    monkeypatch.setattr(buffer_module.toolfile, "parse", counting)
    return calls


def _reparsed(text: str) -> dict:
    tf = toolfile.parse(text)
    assert not tf.problems, tf.problems
    return tf.data


def test_loading_keeps_text_hash_and_bom_and_starts_clean() -> None:
    raw = b"\xef\xbb\xbf" + SAMPLE.read_bytes()
    buf = _buffer(raw=raw)
    assert buf.bom and buf.text == SAMPLE.read_text(encoding="utf-8")
    assert buf.disk_sha == hashlib.sha256(raw).hexdigest()
    assert not buf.dirty and buf.read_only_reason is None
    assert buf.last_good is not None and buf.last_good["name"] == "word_count"
    assert buf.to_bytes() == raw  # the BOM goes back on save

    buf.text += "# more\n"
    assert buf.dirty
    buf.text = buf.saved_text  # an undo back to the saved text is clean again
    assert not buf.dirty
    buf.text += "x = 1\n"
    buf.mark_saved(buf.text, "abc")
    assert not buf.dirty and buf.disk_sha == "abc"


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"# ---\n# name: x\n# ---\n\xff\xfe\n", "not a UTF-8 text file"),
        (b"\x00\x01binary", "not a UTF-8 text file"),
        (
            b"# ---\n# name: x\n# version: 1.0.0\n# n: " + b"9" * 5000 + b"\n# ---\n",
            "cannot be written back exactly",
        ),
    ],
)
def test_files_that_cannot_be_written_back_are_read_only(raw: bytes, reason: str) -> None:
    buf = _buffer(raw=raw)
    assert buf.read_only_reason is not None and reason in buf.read_only_reason
    before = buf.text
    result = buf.form_edit(("description",), "new")
    assert result.refused and result.edit is None and buf.text == before


def test_a_form_edit_is_a_patch_of_only_the_changed_lines() -> None:
    buf = _buffer()
    old = buf.text
    result = buf.form_edit(("description",), "Count words.")
    edit = result.edit
    assert edit is not None and not result.needs_parse and not result.refused
    # Line 4 (row 3) only, as one replacement of whole lines.
    assert edit == TextEdit((3, 0), (4, 0), "# description: Count words.\n")
    assert buf.text == old.replace(
        "# description: Count the words, lines and characters in a text.",
        "# description: Count words.",
    )
    assert buf.dirty
    # The body after the frontmatter is byte for byte what it was.
    assert buf.text.split("# ---\n", 2)[2] == old.split("# ---\n", 2)[2]


def test_keystrokes_in_a_form_field_never_parse(count_parses) -> None:
    buf = _buffer()
    count_parses.clear()
    for typed in ("C", "Co", "Cou", "Coun", "Count"):
        assert buf.form_edit(("description",), typed).edit is not None
    buf.form_edit(("capabilities", "network"), True)
    buf.form_edit(
        ("inputs",),
        [*buf.last_good["inputs"], {"name": "extra", "type": "string", "description": "More."}],
    )
    buf.form_edit(("inputs", 1, "name"), "extra_text")
    assert count_parses == []
    data = _reparsed(buf.text)
    assert data["description"] == "Count"
    assert data["capabilities"]["network"] is True
    assert [i["name"] for i in data["inputs"]] == ["text", "extra_text"]


def test_a_body_edit_keeps_the_last_parse_valid(count_parses) -> None:
    buf = _buffer()
    count_parses.clear()
    buf.text = buf.text.replace("import json\n", "import json\nimport os\n")
    assert buf.form_edit(("version",), "1.1.0").edit is not None
    assert count_parses == []
    assert "import os\n" in buf.text and _reparsed(buf.text)["version"] == "1.1.0"


def test_a_frontmatter_edit_in_the_source_asks_for_a_parse_first() -> None:
    buf = _buffer()
    buf.text = buf.text.replace("# version: 1.0.0\n", "# version: 2.0.0\n")
    before = buf.text
    assert buf.form_edit(("description",), "Hi.").needs_parse
    assert buf.text == before  # nothing written from an out-of-date parse
    buf.lint_now()
    assert buf.form_edit(("description",), "Hi.").edit is not None
    data = _reparsed(buf.text)
    assert (data["version"], data["description"]) == ("2.0.0", "Hi.")


def test_a_broken_frontmatter_refuses_form_edits_and_keeps_the_last_good_manifest() -> None:
    buf = _buffer()
    buf.text = buf.text.replace("#   - name: text\n", "#   - name: [text\n")
    buf.lint_now()
    assert buf.last_good is not None and buf.last_good["name"] == "word_count"
    result = buf.form_edit(("description",), "Hi.")
    assert result.refused == "Fix the frontmatter in the source first"
    # Another file's manifest is no "last good" one of the next file opened.
    buf.load_bytes(b"print('no manifest')\n")
    assert buf.last_good is None


def test_crlf_files_keep_their_line_endings_through_a_form_edit() -> None:
    buf = _buffer(SAMPLE.read_text(encoding="utf-8").replace("\n", "\r\n"))
    assert buf.form_edit(("version",), "1.0.1").edit is not None
    assert "\n" not in buf.text.replace("\r\n", "")
    assert buf.form_edit(("version",), "1.0.2").edit is not None  # still no parse needed
    assert _reparsed(buf.text)["version"] == "1.0.2"


def test_lint_results_for_older_text_or_generations_are_dropped() -> None:
    buf = _buffer()
    generation, text = buf.begin_lint()
    tf = toolfile.parse(text)
    diagnostics = lint_toolfile(tf)
    buf.text += "# typed since\n"
    buf.invalidate_lint()
    assert not buf.accept_lint(generation, text, tf, diagnostics)
    generation, text = buf.begin_lint()
    newer, _ = buf.begin_lint()
    assert not buf.accept_lint(generation, text, toolfile.parse(text), [])  # superseded
    assert buf.accept_lint(newer, text, toolfile.parse(text), [])
    assert buf.linted_text == text


def test_a_quick_fix_applies_like_the_cli_fix_and_follows_moved_text() -> None:
    misspelt = SAMPLE.read_text(encoding="utf-8").replace("# description:", "# descripton:")
    buf = _buffer(misspelt)
    diagnostics = buf.lint_now()
    fix = next(d for d in diagnostics if d.code == "PT004" and d.fix is not None)
    expected = apply_edits(buf.text, fix.fix.edits)
    assert fix.fix is not None
    # Lines typed above the problem since the lint: the fix finds it where it is now.
    buf.text = "#!/usr/bin/env python3\n" + buf.text
    edits = buf.apply_fix(fix)
    assert edits and buf.text == "#!/usr/bin/env python3\n" + expected
    assert "# description:" in buf.text
    # Applied once, the problem is gone: a second apply does nothing.
    assert buf.apply_fix(fix) is None


def test_the_starter_manifest_fix_on_an_empty_file() -> None:
    buf = _buffer("")
    diagnostics = buf.lint_now()
    starter = next(d for d in diagnostics if d.code == "PT001" and d.fix is not None)
    assert buf.apply_fix(starter)
    buf.lint_now()
    assert buf.last_good is not None and buf.form_edit(("name",), "fresh").edit is not None


def test_fix_locations_are_the_text_areas() -> None:
    """Past the end of the text and past the end of a line clamp as the text area does."""
    buf = _buffer("ab\ncd")
    from patch_tui.lint.engine import Edit

    assert buf.text_edits([Edit(1, 9, 1, 9, "!")]) == [TextEdit((0, 2), (0, 2), "!")]
    assert buf.text_edits([Edit(7, 1, 7, 1, "!")]) == [TextEdit((1, 2), (1, 2), "!")]
    buf.apply_text_edits(buf.text_edits([Edit(2, 1, 2, 2, "X"), Edit(1, 1, 1, 1, ">")]))
    assert buf.text == ">ab\nXd"


def test_lone_carriage_returns_end_on_request_and_the_buffer_becomes_editable() -> None:
    """A file read-only for its lone \\r's: ending them (in the file's line ending) is the one
    change it takes; then it is an ordinary, unsaved buffer. Any other read-only file refuses."""
    text = SAMPLE.read_text(encoding="utf-8")
    crlf = text.replace("\n", "\r\n")
    stray = crlf.replace("\r\n", "\r", 3)  # three lone \r's in a CRLF file
    buf = _buffer(raw=stray.encode())
    assert buf.read_only_reason is not None and buf.lone_cr_line == 1
    assert buf.end_lone_carriage_returns() == 3
    assert buf.text == crlf and buf.saved_text == stray and buf.dirty
    assert buf.read_only_reason is None and buf.lone_cr_line is None
    assert buf.end_lone_carriage_returns() == 0  # nothing left to end

    binary = _buffer(raw=b"\x00\x01\r binary")
    assert binary.read_only_reason and binary.end_lone_carriage_returns() == 0
    assert binary.read_only_reason == "not a UTF-8 text file"
