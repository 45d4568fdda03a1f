"""The history of a tool: its earlier versions, each diffed against the text being edited."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList, Static
from textual.widgets.option_list import Option

from patch_tui.ui.widgets.diff_view import DiffView


class HistoryScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    HistoryScreen { align: center middle; }
    HistoryScreen > Vertical {
        width: 95%; height: 90%; border: thick $primary; background: $surface; padding: 0 1;
    }
    HistoryScreen Horizontal { height: 1fr; }
    HistoryScreen OptionList { width: 24; height: 1fr; }
    HistoryScreen .dialog-title { text-style: bold; }
    """

    BINDINGS = [Binding("escape,q", "dismiss(None)", "Close", id="history.close")]

    def __init__(self, name: str, versions: list[tuple[str, Path]], current: str) -> None:
        super().__init__()
        self.tool_name = name
        self.versions = versions
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(Text(f"History of {self.tool_name}"), classes="dialog-title")
            if not self.versions:
                yield Static("No earlier versions yet: “Save as new version” keeps one here.")
                return
            with Horizontal():
                yield OptionList(
                    *[Option(Text(v), id=str(p)) for v, p in reversed(self.versions)],
                    id="history-versions",
                )
                yield DiffView(id="history-diff")

    def on_mount(self) -> None:
        if self.versions:
            self.query_one(OptionList).highlighted = 0

    @on(OptionList.OptionHighlighted)
    def _show(self, event: OptionList.OptionHighlighted) -> None:
        path = Path(event.option.id or "")
        try:
            old = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            old = f"(cannot read {path}: {exc})"
        label = path.stem
        self.query_one(DiffView).show(old, self.current, f"version {label}", "current")
