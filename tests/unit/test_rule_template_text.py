"""PT052 (issue 25): template text left in a description is a warning, whoever left it: our own
template sentences (a new tool's, an old "+ add input"'s) and the placeholders people leave."""

from __future__ import annotations

import pytest
from lintkit import CLEAN, edit, only

from patch_tui.lint.registry import load
from patch_tui.runtime.toolbox import new_tool_text

DESC = "# description: Count the words in a text, e.g. a paragraph of 21.5 lines."
INPUT_DESC = "#     description: The text to count."


def test_clean_tools_pass() -> None:
    assert only(CLEAN, "PT052") == []
    assert only(new_tool_text("word_count", "Count the words in a text."), "PT052") == []


def test_a_new_tool_without_a_description_is_flagged_even_after_a_rename() -> None:
    text = new_tool_text("word_count")
    [d] = only(text, "PT052")
    assert d.severity == "warning" and d.field == ("description",)
    assert "Describe what word_count does in one sentence." in d.message
    renamed = text.replace("name: word_count", "name: count_words")  # still names the old one
    assert len(only(renamed, "PT052")) == 1


@pytest.mark.parametrize(
    "description",
    [
        "Describe this argument.Only count words longer than three letters.",
        "TODO",
        "Count the words, FIXME lines too.",
        "Describe the input here.",
        "Lorem ipsum dolor sit amet.",
    ],
)
def test_template_text_in_an_input_description(description: str) -> None:
    [d] = only(edit(INPUT_DESC, f"#     description: {description}"), "PT052")
    assert d.field == ("inputs", 0, "description") and "inputs[0].description" in d.message


@pytest.mark.parametrize(
    "description",
    [
        "Add a todo item to a list.",  # "todo" as a word, not a marker
        "Describe the weather in a city in one sentence.",  # what the tool does
        "Returns the XXX-large size.",
    ],
)
def test_ordinary_words_are_not_template_text(description: str) -> None:
    assert only(edit(DESC, f"# description: {description}"), "PT052") == []


def test_the_rule_carries_its_docs() -> None:
    rule = load()["PT052"]
    assert rule.name == "template-text" and rule.severity == "warning"
    doc = rule.func.__doc__ or ""
    assert "Why:" in doc and "Fix:" in doc
