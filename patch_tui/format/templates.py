"""The template text patch-tui itself writes into new tools, and the hints its form shows.

One home for these sentences: the starter tool (`runtime.toolbox.new_tool_text`, `patch-tui new`),
PT001's starter manifest and the form write them; lint's PT052 (lint/rules/text/template_text.py)
recognises them, and the other placeholder shapes a person leaves behind ("TODO", "Describe …"),
in a description that would otherwise be served to an agent as if it were written (issue 25).
"""

from __future__ import annotations

import re

# What `patch-tui new NAME` (without --description) and PT001's starter manifest write: a
# sentence to replace, flagged by PT052 until it is.
TOOL_DESCRIPTION = "Describe what {name} does in one sentence."

# The form's hints in an empty description field (placeholders: never written into the file).
TOOL_DESCRIPTION_HINT = "What the tool does, in one sentence (the agent reads it)"
INPUT_DESCRIPTION_HINT = "What to pass here, in one sentence"

# Sentences earlier versions wrote into new inputs and tools; still ours wherever they are found.
OLD_TEMPLATES = ("Describe this argument.",)

_OUR_SENTENCES = re.compile(
    r"Describe what \S+ does in one sentence\.|"
    + "|".join(
        re.escape(t) for t in (*OLD_TEMPLATES, TOOL_DESCRIPTION_HINT, INPUT_DESCRIPTION_HINT)
    )
)
# A placeholder a person (or a template elsewhere) leaves: a TODO-like marker as a word, a
# description that starts by asking to be written, or filler text.
_PLACEHOLDER = re.compile(
    r"\b(TODO|FIXME|TBD)\b"
    r"|^\s*(Describe (what|this|here|your|the (tool|input|argument|parameter|output|result)s?)"
    r"|Add a description|Write a description)\b"
    r"|\blorem ipsum\b|^\s*(One sentence|Description|Some description)\.?\s*$",
    re.IGNORECASE,
)


def template_text(text: str) -> tuple[int, int, str] | None:
    """(start, end, the template text) of the first template sentence or placeholder in a
    description, or None when it reads as written by someone."""
    found = _OUR_SENTENCES.search(text)
    if found is not None:
        return found.start(), found.end(), found.group(0)
    found = _PLACEHOLDER.search(text)
    if found is None:
        return None
    word = found.group(0).strip()
    if word.lower().startswith("describe"):
        # The whole sentence that asks to be written, up to its full stop.
        end = text.find(".", found.end())
        end = len(text) if end < 0 else end + 1
        return found.start(), end, text[found.start() : end].strip()
    if word.upper() in ("TODO", "FIXME", "TBD") and word != word.upper():
        return None  # "todo" and "xxx" as ordinary words (a to-do list tool), not markers
    return found.start(), found.end(), word
