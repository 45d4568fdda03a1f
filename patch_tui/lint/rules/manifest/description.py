"""PT013: the description is empty or longer than one sentence."""

from __future__ import annotations

import re
from collections.abc import Iterator

from patch_tui.lint.context import LintContext
from patch_tui.lint.diagnostic import Diagnostic
from patch_tui.lint.rule import Rule
from patch_tui.lint.rules.manifest.helpers import inputs_of, show

# A full stop ends a sentence unless it follows one of these (lower-cased, without the dot).
_ABBREVIATIONS = frozenset(
    "e.g i.e etc vs cf approx incl resp no nos fig mr mrs ms dr st jr sr e.x a.k.a u.s et al".split()
)


_SENTENCE_END_RE = re.compile(r"([.!?]+)[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")


def count_sentences(text: str) -> int:
    """How many sentences a description has. "e.g.", "21.5" and "v1.2" do not end one."""
    text = " ".join(text.split())
    if not text:
        return 0
    count = 1
    for match in _SENTENCE_END_RE.finditer(text):
        before = text[: match.start(1)].rsplit(" ", 1)[-1].lower().rstrip(".")
        if match.group(1) == "." and (before in _ABBREVIATIONS or len(before) == 1):
            continue  # "e.g. X", "J. Smith"
        count += 1
    return count


PT013 = Rule(
    "PT013",
    "description-sentence",
    family="manifest",
    summary="description empty or more than one sentence",
    severity=("error", "warning"),
)


@PT013.check
def description_sentence(ctx: LintContext) -> Iterator[Diagnostic]:
    """The description is empty (error), or is more than one sentence (warning).

    Why: the description is what an AI agent reads to decide when to call the tool, and what a
    person reads when approving it. The format asks for one sentence: long descriptions hide
    instructions and get truncated by hosts.

    Fix: write one sentence that says what the tool does, e.g. "Extract tables from a PDF file
    as JSON." Put details in the input descriptions or the code's docstring.
    """
    if "description" in ctx.data:
        desc = ctx.get("description")
        if desc is None or (isinstance(desc, str) and not desc.strip()):
            yield PT013.diag(
                ctx,
                "description is empty: write one sentence saying what the tool does",
                "description",
            )
        elif isinstance(desc, str) and count_sentences(desc) > 1:
            yield PT013.diag(
                ctx,
                f"description has {count_sentences(desc)} sentences: keep it to one sentence "
                "saying what the tool does",
                "description",
                severity="warning",
            )
    for i, inp in inputs_of(ctx):
        desc = inp.get("description")
        if isinstance(desc, str) and count_sentences(desc) > 1:
            yield PT013.diag(
                ctx,
                f"the description of input `{show(inp.get('name', i))}` has "
                f"{count_sentences(desc)} sentences: keep it to one",
                "inputs",
                i,
                "description",
                severity="warning",
            )
