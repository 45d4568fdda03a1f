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
    # A required input after a parameter with a default: adding it would be a syntax error.
    text = CLEAN.replace(
        "#   - name: text\n#     type: string\n#     description: The text to count.\n#     tainted_ok: true\n",
        "",
        1,
    ).replace(
        "#     default: []\n#     items:\n#       type: string\n",
        "#     default: []\n#     items:\n#       type: string\n#   - name: text\n#     type: string\n#     description: The text to count.\n#     tainted_ok: true\n",
        1,
    )
    text = text.replace(
        "def main(text: str, separators: list | None = None) -> dict:",
        "def main(separators: list | None = None) -> dict:\n    text = ''",
    )
    assert _pt032(text).fix is None
