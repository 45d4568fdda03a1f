"""PT052: template text left in a description."""

from __future__ import annotations

from collections.abc import Iterator

from patch_tui.format.templates import template_text
from patch_tui.lint.context import LintContext
from patch_tui.lint.diagnostic import Diagnostic
from patch_tui.lint.rule import Rule
from patch_tui.lint.rules.text.texts import texts_of

PT052 = Rule(
    "PT052",
    "template-text",
    family="text",
    summary="template text left in a description",
    severity="warning",
)


@PT052.check
def template_text_left(ctx: LintContext) -> Iterator[Diagnostic]:
    """A description that still holds template text: one of the sentences patch-tui writes into a
    new tool ("Describe what word_count does in one sentence.", "Describe this argument."), or a
    placeholder a person left ("TODO", "FIXME", "TBD", "Describe the input …", "Lorem ipsum").

    Why: the description is what the agent reads to choose the tool and what a person reads to
    approve a call. Template text passes every other check, so the tool is served with a
    sentence that says nothing (or names another tool, after a rename), and text typed after it
    runs on from it ("Describe this argument.Only count words…").

    Fix: write the sentence. On the desk, Enter (or F8) on the problem selects the template text
    in the form's field, so what you type replaces it.
    """
    for path, text, label in texts_of(ctx):
        if path[-1] != "description":
            continue
        found = template_text(text)
        if found is None:
            continue
        _start, _end, words = found
        yield PT052.diag(
            ctx,
            f'{label} still holds template text ("{words}"): write what '
            + ("the tool does" if path == ("description",) else "it is")
            + " in your own words",
            *path,
        )
