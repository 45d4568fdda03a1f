"""A unified diff, coloured from the theme, as plain Text (file text is never markup)."""

from __future__ import annotations

import difflib
from typing import Any

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from patch_tui.untrusted.text_safety import visible


def diff_text(
    old: str, new: str, old_label: str, new_label: str, variables: dict[str, str] | None = None
) -> Text:
    """The unified diff of two texts; "no differences" when they are equal."""
    v = variables or {}
    lines = list(
        difflib.unified_diff(
            old.splitlines(), new.splitlines(), fromfile=old_label, tofile=new_label, lineterm=""
        )
    )
    out = Text(no_wrap=True)
    if not lines:
        out.append("no differences", style="italic")
        return out
    for line in lines:
        if line.startswith(("+++", "---")):
            style = "bold"
        elif line.startswith("@@"):
            style = v.get("accent", "")
        elif line.startswith("+"):
            style = v.get("success", "")
        elif line.startswith("-"):
            style = v.get("error", "")
        else:
            style = ""
        out.append(visible(line) + "\n", style=style)
    return out


class DiffView(VerticalScroll):
    """A scrollable diff."""

    DEFAULT_CSS = """
    DiffView { height: 1fr; border: round $panel; }
    DiffView > Static { width: auto; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._body = Static("", id="diff-body")

    def compose(self) -> Any:
        yield self._body

    def show(self, old: str, new: str, old_label: str, new_label: str) -> None:
        self._body.update(diff_text(old, new, old_label, new_label, self.app.theme_variables))
