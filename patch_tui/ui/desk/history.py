"""The history of a tool: its earlier versions, each diffed against the text being edited."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Label, OptionList, Static
from textual.widgets.option_list import Option

from patch_tui.ui.dialogs.dialog import Dialog
from patch_tui.ui.widgets.diff_view import DiffView
from patch_tui.ui.widgets.key_bar import KeyBar


class HistoryScreen(Dialog[Path | None]):
    """Earlier versions with a diff; `r` restores the highlighted one (dismisses with its path:
    the desk asks, keeps the current text in the history, then restores it as one undoable
    edit), `c` copies it."""

    DEFAULT_CSS = """
    HistoryScreen > Vertical { width: 95%; height: 90%; padding: 0 1; }
    HistoryScreen Horizontal { height: 1fr; }
    HistoryScreen OptionList { width: 24; height: 1fr; }
    """

    BINDINGS = [
        Binding("escape,q", "dismiss(None)", "Close", id="history.close"),
        Binding("r", "restore", "Restore", id="history.restore"),
        Binding("c", "copy", "Copy", id="history.copy"),
        # A modal screen does not pass keys to the app's bindings: F1 is bound here too.
        Binding("f1", "app.open_screen('help')", "Help", id="history.help"),
    ]

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
            else:
                with Horizontal():
                    yield OptionList(
                        *[Option(Text(v), id=str(p)) for v, p in reversed(self.versions)],
                        id="history-versions",
                    )
                    yield DiffView(id="history-diff")
        # Its own footer: the desk's, under this screen, listed keys that do nothing here.
        yield KeyBar()

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

    def _highlighted(self) -> Path | None:
        if not self.versions:
            return None
        option = self.query_one(OptionList).highlighted_option
        return Path(option.id) if option is not None and option.id else None

    def action_restore(self) -> None:
        path = self._highlighted()
        if path is not None:
            self.dismiss(path)

    def action_copy(self) -> None:
        path = self._highlighted()
        if path is None:
            return
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            self.notify(f"Cannot read {path.name}: {exc}", severity="error", markup=False)
            return
        self.app.copy_to_clipboard(text)
        self.notify(f"Copied version {path.stem} (OSC 52)", title="Copy", markup=False)
