"""The problems table: its message column takes the width the other columns leave."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets.data_table import ColumnKey

from patch_tui.format.toolfile import Span
from patch_tui.lint.engine import Diagnostic
from patch_tui.ui.desk.lint_panel import LintPanel

LONG = "a long message " * 12


def diagnostic(message: str) -> Diagnostic:
    return Diagnostic("PT011", "error", message, Span(2, 9, 2, 12))


class Panel(App[None]):
    def compose(self) -> ComposeResult:
        panel = LintPanel()
        # Rows before the panel's own Mount ran: the desk does this from its on_mount.
        panel.show([diagnostic(LONG)])
        yield panel


def message_width(panel: LintPanel) -> int:
    return panel.columns[ColumnKey("message")].get_render_width(panel)


async def test_message_column_fills_the_rest_whatever_the_rows() -> None:
    app = Panel()
    async with app.run_test(size=(80, 10)) as pilot:
        await pilot.pause()
        panel = app.query_one(LintPanel)
        fixed = sum(c.get_render_width(panel) for c in panel.ordered_columns) - message_width(panel)
        assert fixed + message_width(panel) == panel.scrollable_content_region.width
        assert panel.row_count == 1 and panel.diagnostics[0].message == LONG

        await pilot.resize_terminal(120, 10)
        await pilot.pause()
        assert fixed + message_width(panel) == panel.scrollable_content_region.width
        assert panel.row_count == 1  # the rows survive the new columns

        panel.show([diagnostic("short")])
        await pilot.pause()
        assert fixed + message_width(panel) == panel.scrollable_content_region.width
