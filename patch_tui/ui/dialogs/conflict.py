"""The file changed on disk while it had unsaved edits: Reload / Keep mine / Diff.

Nothing is decided for the person: "Keep mine" overwrites the file with the buffer, "Reload"
throws the buffer away for the disk's text (undo in the source pane still has it), "Diff" shows
what differs before choosing, and escape leaves everything as it is.
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widgets import Button, Label, Static

from patch_tui.ui.dialogs.dialog import Dialog
from patch_tui.ui.safe_text import safe_line
from patch_tui.ui.widgets.diff_view import DiffView


class ConflictModal(Dialog[str | None]):
    """Dismisses with "reload", "keep", or None (decide later)."""

    DEFAULT_CSS = """
    ConflictModal > Vertical {
        width: 90%; max-width: 120; max-height: 90%; border: thick $warning; padding: 0 1;
    }
    ConflictModal.-diff > Vertical { height: 90%; }
    ConflictModal DiffView { display: none; }
    ConflictModal.-diff DiffView { display: block; }
    """

    BINDINGS = [
        Binding("r", "choose('reload')", "Reload", id="conflict.reload"),
        Binding("k", "choose('keep')", "Keep mine", id="conflict.keep"),
        Binding("d", "toggle_diff", "Diff", id="conflict.diff"),
        Binding("escape", "choose(None)", "Decide later", id="conflict.cancel"),
    ]

    def __init__(self, path: str, mine: str, disk: str | None, *, saving: bool = False) -> None:
        super().__init__()
        self.path = path
        self.mine = mine
        self.disk = disk
        self.saving = saving

    def compose(self) -> ComposeResult:
        what = "was deleted" if self.disk is None else "changed on disk"
        with Vertical():
            yield Label(Content("File " + what), classes="dialog-title")
            yield Static(
                Content.assemble(
                    safe_line(self.path),
                    f" {what} since you opened it, and you have unsaved edits. "
                    + ("Saving now would overwrite it. " if self.saving else "")
                    + "Reload takes the disk's version (undo still has yours); Keep mine saves yours over it.",
                )
            )
            yield DiffView(id="conflict-diff")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Diff (d)", id="diff")
                yield Button("Reload (r)", id="reload", disabled=self.disk is None)
                yield Button("Keep mine (k)", id="keep", variant="warning")
                yield Button("Later (esc)", id="later")

    def on_mount(self) -> None:
        self.query_one("#diff", Button).focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        bid = event.button.id
        if bid == "diff":
            self.action_toggle_diff()
        elif bid == "later":
            self.dismiss(None)
        elif bid == "reload" and self.disk is None:
            return
        else:
            self.dismiss(bid)

    def action_choose(self, choice: str | None) -> None:
        if choice == "reload" and self.disk is None:
            return
        self.dismiss(choice)

    def action_toggle_diff(self) -> None:
        self.toggle_class("-diff")
        if self.has_class("-diff"):
            self.query_one(DiffView).show(self.disk or "", self.mine, "on disk", "your edits")
