"""The lint panel: one row per diagnostic (severity, code, where, message).

Enter jumps to the diagnostic (its form field when it has one the form shows, else its span in
the source); `f` applies its quick fix. The panel only posts messages: the editor owns the text
and applies the fix through the TextArea, so undo works.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on
from textual.binding import Binding
from textual.message import Message
from textual.widgets import DataTable

from patch_tui.untrusted.text_safety import visible

if TYPE_CHECKING:  # lint's types load with the first lint, after the first frame
    from patch_tui.lint.diagnostic import Diagnostic

# Severity -> the theme variable that colours it.
SEVERITY_COLOUR = {"error": "error", "warning": "warning", "info": "accent"}
SEVERITY_MARK = {"error": "✗ error", "warning": "! warn", "info": "i info"}
FIXED_WIDTHS = (8, 6, 8)  # severity, code, at


class LintPanel(DataTable[Any]):
    """Diagnostics of the open tool."""

    BINDINGS = [
        Binding("f", "apply_fix", "Quick fix", id="lint.fix"),
        Binding("s", "jump_source", "To source", id="lint.source", show=False),
    ]

    class Jump(Message):
        """Go to a diagnostic: `to_source` forces the source span over the form field."""

        def __init__(self, diagnostic: Diagnostic, to_source: bool = False) -> None:
            self.diagnostic = diagnostic
            self.to_source = to_source
            super().__init__()

    class ApplyFix(Message):
        def __init__(self, diagnostic: Diagnostic) -> None:
            self.diagnostic = diagnostic
            super().__init__()

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(cursor_type="row", zebra_stripes=False, **kwargs)
        self.diagnostics: list[Diagnostic] = []
        self._message_width: int | None = None  # the message column fills what is left

    def on_mount(self) -> None:
        self._ensure_columns()
        # Severity colours come from the theme: repaint the rows when it changes.
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self.show(self.diagnostics))

    def _ensure_columns(self) -> None:
        if self.columns:
            return
        # Text labels, not str: DataTable reads a str label as Rich markup, whose emoji codes
        # table (a few ms to import) the first frame would otherwise wait for.
        self.add_column(Text("severity"), key="severity", width=FIXED_WIDTHS[0])
        self.add_column(Text("code"), key="code", width=FIXED_WIDTHS[1])
        self.add_column(Text("at"), key="at", width=FIXED_WIDTHS[2])
        self.add_column(Text("message"), key="message", width=self._message_width)

    def on_resize(self) -> None:
        # The message column takes the width the others leave, set rather than measured from
        # the rows: a measured width depended on when the rows arrived (once it was cut to the
        # header's width), and a long message is shown whole under the table anyway.
        padding = 2 * self.cell_padding
        fixed = sum(w + padding for w in FIXED_WIDTHS)
        width = max(self.scrollable_content_region.width - fixed - padding, 10)
        if width != self._message_width:
            self._message_width = width
            self.clear(columns=True)
            self.show(self.diagnostics)

    def show(self, diagnostics: list[Diagnostic]) -> None:
        """Replace the rows, keeping the cursor on the same row index when possible."""
        self._ensure_columns()
        row = self.cursor_row
        self.diagnostics = list(diagnostics)
        self.clear()
        variables = self.app.theme_variables
        for i, d in enumerate(self.diagnostics):
            colour = variables.get(SEVERITY_COLOUR[d.severity], "")
            style = ("bold " if d.severity == "error" else "") + colour
            message = visible(d.message) + ("  [fix]" if d.fix is not None else "")
            self.add_row(
                Text(SEVERITY_MARK[d.severity], style=style.strip()),
                Text(d.code),
                Text(f"{d.line}:{d.column}"),
                Text(message, overflow="ellipsis", no_wrap=True),
                key=str(i),
            )
        counts = {
            s: sum(d.severity == s for d in self.diagnostics) for s in ("error", "warning", "info")
        }
        summary = ", ".join(f"{n} {s}{'s' if n > 1 else ''}" for s, n in counts.items() if n)
        self.border_subtitle = summary or "no problems ✓"
        if self.diagnostics:
            self.move_cursor(row=min(max(row, 0), len(self.diagnostics) - 1))

    @property
    def current(self) -> Diagnostic | None:
        if not self.diagnostics or not 0 <= self.cursor_row < len(self.diagnostics):
            return None
        return self.diagnostics[self.cursor_row]

    @on(DataTable.RowSelected)
    def _selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if (d := self.current) is not None:
            self.post_message(self.Jump(d))

    def action_jump_source(self) -> None:
        if (d := self.current) is not None:
            self.post_message(self.Jump(d, to_source=True))

    def action_apply_fix(self) -> None:
        d = self.current
        if d is None:
            return
        if d.fix is None:
            self.notify(f"{d.code} has no quick fix", severity="warning", markup=False)
            return
        self.post_message(self.ApplyFix(d))
