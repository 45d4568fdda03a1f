"""PT002 in words a person can act on (issue 25): an unclosed quote is reported on the line that
opens it (PyYAML finds out lines later, at the next quote), and a `: ` inside a value asks for
quotes."""

from __future__ import annotations

from lintkit import edit, line_of

from patch_tui.lint.engine import lint_text

DESC = "# description: Count the words in a text, e.g. a paragraph of 21.5 lines."


def _pt002(text: str):
    return [d for d in lint_text(text) if d.code == "PT002"]


def test_an_unclosed_quote_is_reported_where_it_opens() -> None:
    text = edit(DESC, "# description: 'Count the words in a text.")
    text = edit("#   description: The number of words.", "#   description: 'The number.'", text)
    [d] = _pt002(text)
    assert d.line == line_of(text, "# description: 'Count") and d.column == 16
    assert "single quote opened here is never closed" in d.message
    text = edit("#     description: The text to count.", '#     description: "The text.')
    [d] = _pt002(text)
    assert d.line == line_of(text, '"The text.') and "double quote" in d.message


def test_a_quoted_value_over_two_lines_is_not_blamed() -> None:
    text = edit(DESC, '# description: "Count the words\n#   in a text."\n#   oops: [')
    [d] = _pt002(text)
    assert "quote" not in d.message


def test_a_colon_space_in_a_value_asks_for_quotes() -> None:
    [d] = _pt002(edit(DESC, "# description: Count words: in a text."))
    assert 'a value containing ": " must be quoted' in d.message
