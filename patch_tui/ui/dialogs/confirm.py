"""Small modal dialogs: yes/no confirmation, a choice between a few actions, a name prompt.

Following Posting's ConfirmationModal: y / n / escape bindings, and a destructive question
focuses the safe answer so a stray Enter never destroys anything. Every text shown here may come
from a file (a tool name, a path) and is rendered as plain Content, never markup. Style, focus
and where typed keys go are the shared `Dialog`'s (dialogs/dialog.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widgets import Button, Input, Label, Static

from patch_tui.ui.dialogs.dialog import Dialog
from patch_tui.ui.safe_text import SafeInput
from patch_tui.ui.safe_text import safe as _plain


class ConfirmModal(Dialog[bool]):
    """Ask a yes/no question. Dismisses with True (yes) or False (no, escape)."""

    BINDINGS = [
        Binding("y", "answer(True)", "Yes", id="confirm.yes"),
        Binding("n", "answer(False)", "No", id="confirm.no"),
        Binding("escape", "answer(False)", "Cancel", id="confirm.cancel"),
    ]

    def __init__(
        self,
        question: str,
        *,
        title: str = "Confirm",
        yes: str = "Yes",
        no: str = "Cancel",
        destructive: bool = False,
    ) -> None:
        super().__init__()
        self.question = question
        self.dialog_title = title
        self.yes_label = yes
        self.no_label = no
        self.destructive = destructive

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(_plain(self.dialog_title), classes="dialog-title")
            yield Static(_plain(self.question))
            with Horizontal(classes="dialog-buttons"):
                yield Button(
                    f"{self.yes_label} (y)",
                    id="yes",
                    variant="error" if self.destructive else "primary",
                )
                yield Button(f"{self.no_label} (n)", id="no")

    def on_mount(self) -> None:
        self.query_one("#no" if self.destructive else "#yes", Button).focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)


class ChoiceModal(Dialog[str | None]):
    """Pick one of a few actions (each with a key). Dismisses with its id, or None (escape)."""

    BINDINGS = [Binding("escape", "choose(None)", "Cancel", id="choice.cancel")]
    # Four choices (F6's three versions and Cancel) need more room than the usual dialog.
    DEFAULT_CSS = "ChoiceModal.-many > Vertical { width: 80; }"

    def __init__(
        self,
        question: str,
        choices: Sequence[tuple[str, str, str]],
        *,
        title: str = "Choose",
        focus: str | None = None,
        detail: Content | None = None,
    ) -> None:
        """`choices`: (id, label, key). `focus`: the id focused first (the safe one)."""
        super().__init__(classes="-many" if len(choices) > 3 else None)
        self.question = question
        self.choices = list(choices)
        self.dialog_title = title
        self.focus_id = focus or (self.choices[0][0] if self.choices else None)
        self.detail = detail
        # Per instance: each choice's key is a command (Dialog.on_key decides when it acts).
        self.command_keys = frozenset(key for _cid, _label, key in self.choices)

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(_plain(self.dialog_title), classes="dialog-title")
            yield Static(_plain(self.question))
            if self.detail is not None:
                yield Static(self.detail, id="choice-detail")
            with Horizontal(classes="dialog-buttons"):
                for cid, label, key in self.choices:
                    yield Button(f"{label} ({key})", id=f"choice-{cid}")

    def on_command_key(self, key: str) -> None:
        for cid, _label, choice_key in self.choices:
            if key == choice_key:
                self.dismiss(cid)
                return

    def on_mount(self) -> None:
        if self.focus_id is not None:
            self.query_one(f"#choice-{self.focus_id}", Button).focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss((event.button.id or "").removeprefix("choice-") or None)

    def action_choose(self, choice: str | None) -> None:
        self.dismiss(choice)


class PromptModal(Dialog[str | None]):
    """Ask for one line of text (a tool name). `check` returns an error message or None."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="prompt.cancel")]

    def __init__(
        self,
        question: str,
        *,
        title: str = "Name",
        value: str = "",
        placeholder: str = "",
        check: Callable[[str], str | None] | None = None,
    ) -> None:
        super().__init__()
        self.question = question
        self.dialog_title = title
        self.initial = value
        self.placeholder = placeholder
        self.check = check

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(_plain(self.dialog_title), classes="dialog-title")
            yield Static(_plain(self.question))
            yield SafeInput(value=self.initial, placeholder=self.placeholder, id="prompt-input")
            yield Static("", classes="dialog-error", id="prompt-error")
            with Horizontal(classes="dialog-buttons"):
                yield Button("OK", id="ok", variant="primary")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def _submit(self) -> None:
        value = self.query_one(Input).value.strip()
        error = self.check(value) if self.check is not None else None
        if error:
            self.query_one("#prompt-error", Static).update(_plain(str(error)))
            return
        self.dismiss(value or None)

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._submit()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "ok":
            self._submit()
        else:
            self.dismiss(None)

    def action_cancel(self) -> None:
        self.dismiss(None)
