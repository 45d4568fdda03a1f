"""PT032's quick fix the other way round (issue 25): an input main() lacks is added to main()'s
signature, annotated from its type, with its default when optional."""

from __future__ import annotations

from lintkit import CLEAN, edit

from patch_tui.lint.engine import lint_text, selected_rules


def _pt032(text: str):
    [d] = [d for d in lint_text(text, rules=selected_rules(("PT032",))) if d.code == "PT032"]
    return d


def _apply(text: str, fix) -> str:
    lines = text.split("\n")
    for e in fix.edits:
        line = lines[e.line - 1]
        lines[e.line - 1] = line[: e.column - 1] + e.new_text + line[e.end_column - 1 :]
    return "\n".join(lines)


def _clean(text: str) -> bool:
    return not [d for d in lint_text(text) if d.code in ("PT032", "PT033", "PT034", "PT030")]


def test_an_optional_input_missing_from_main_is_added_with_its_default() -> None:
    text = edit(
        "def main(text: str, separators: list | None = None) -> dict:",
        "def main(text: str) -> dict:\n    separators = None",
    )
    d = _pt032(text)
    assert d.fix is not None and not d.fix.safe
    out = _apply(text, d.fix)
    assert "def main(text: str, separators: list = []) -> dict:" in out
    assert _clean(out)


def test_a_required_input_is_added_to_a_main_without_parameters() -> None:
    text = CLEAN.replace(
        "def main(text: str, separators: list | None = None) -> dict:",
        "def main() -> dict:\n    text, separators = '', None",
    )
    text = text.replace("#     required: false\n#     default: []\n", "", 1)
    d = _pt032(text)
    assert d.fix is not None
    out = _apply(text, d.fix)
    assert "def main(text: str, separators: list) -> dict:" in out


def test_no_fix_where_it_would_not_be_python() -> None:
    # The required input `text` after a parameter with a default: not valid Python.
    text = edit(
        "def main(text: str, separators: list | None = None) -> dict:",
        "def main(separators: list | None = None) -> dict:\n    text = ''",
    )
    assert _pt032(text).fix is None


def test_pt035s_fix_to_a_non_array_type_drops_items() -> None:
    text = edit(
        "def main(text: str, separators: list | None = None) -> dict:",
        "def main(text: str, separators: str | None = None) -> dict:",
    )
    [d] = [d for d in lint_text(text, rules=selected_rules(("PT035",))) if d.code == "PT035"]
    assert d.fix is not None
    out = _apply_block(text, d.fix)
    block = out[out.index("- name: separators") : out.index("# outputs:")]
    assert "type: string" in block and "items" not in block


def _apply_block(text: str, fix) -> str:
    lines = text.split("\n")
    for e in sorted(fix.edits, key=lambda e: (e.line, e.column), reverse=True):
        head = "\n".join(lines[: e.line - 1] + [lines[e.line - 1][: e.column - 1]])
        tail = "\n".join([lines[e.end_line - 1][e.end_column - 1 :]] + lines[e.end_line :])
        lines = (head + e.new_text + tail).split("\n")
    return "\n".join(lines)
