"""The approve / reject dialog of the inbox.

It makes the decision itself (in a thread worker, through the store's conditional update) and
stays open when the decision did not go through, saying why: "already approved by alice@cli at
...", "expired at ...". A person must never believe they rejected something another inbox had
already approved. Dismisses with the store's `Decision` when this dialog made the change, or
None when cancelled.

Approve is the irreversible one: its dialog has no text field, starts on Cancel (a stray Enter
decides nothing), and approves with `y` or Enter on its Approve button, nothing else. Reject
focuses its reason field, so a reason typed there is text (Enter rejects with it). The shared
`Dialog` keeps every other key in the dialog, and drops the rest of a burst that closed it.
"""

from __future__ import annotations

from collections.abc import Callable

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widgets import Button, Input, Label, Static, TextArea

from patch_tui.approvals.store import Decision, StoreError
from patch_tui.ui.dialogs.dialog import Dialog
from patch_tui.ui.safe_text import safe, safe_line
from patch_tui.untrusted.text_safety import visible

PAST = {"approve": "approved", "reject": "rejected"}


class DecideModal(Dialog[Decision | None]):
    DEFAULT_CSS = """
    DecideModal > Vertical { width: 76; }
    DecideModal.-reject > Vertical { border: thick $error; }
    DecideModal #decide-error { display: none; margin-top: 1; }
    DecideModal #decide-error.-shown { display: block; }
    DecideModal #decide-note { margin-top: 1; }
    """
    # y / n as in every confirm dialog of the app; typed into the reason field they are text.
    BINDINGS = [
        Binding("y", "go", "Yes", id="decide.yes"),
        Binding("n", "cancel", "No", id="decide.no"),
        Binding("escape", "cancel", "Cancel", id="decide.cancel"),
    ]

    def __init__(
        self,
        verb: str,
        question: Content,
        decide: Callable[[str | None], Decision],
        *,
        destructive: bool,
        note_label: str | None,
    ) -> None:
        """`verb`: "approve" or "reject". `decide(note)` runs in a thread and returns the
        store's Decision (it may raise StoreError: shown, the dialog stays open). `note_label`:
        the placeholder of a text field for a note, or None for no field (approve)."""
        super().__init__(classes=f"-{verb}")
        self.verb = verb
        self.question = question
        self.decide = decide
        self.destructive = destructive
        self.note_label = note_label
        self.deciding = False
        self.closed_by_conflict = False

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(f"{self.verb.capitalize()} this action?", classes="dialog-title")
            yield Static(self.question, id="decide-question")
            if self.note_label is not None:
                yield Input(placeholder=self.note_label, id="decide-note")
            yield Static("", id="decide-error", classes="dialog-error")
            with Horizontal(classes="dialog-buttons"):
                yield Button(
                    f"{self.verb.capitalize()} (y)",
                    id="decide-yes",
                    variant="error" if self.verb == "reject" or self.destructive else "primary",
                )
                yield Button("Cancel (n)", id="decide-no")

    def on_mount(self) -> None:
        # The note field, when there is one, takes the focus (Dialog); else Cancel, whatever
        # the tool: approving is never one stray Enter away.
        self.query_one("#decide-no", Button).focus()

    @on(Input.Submitted, "#decide-note")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if self.verb == "reject":
            self._go()  # rejecting is the safe way out: Enter after the reason does it

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "decide-yes":
            self._go()
        else:
            self.dismiss(None)

    def action_cancel(self) -> None:
        if not self.deciding:
            self.dismiss(None)

    def action_go(self) -> None:
        self._go()

    def _go(self) -> None:
        if self.deciding or self.closed_by_conflict:
            return
        self.deciding = True
        self.query_one("#decide-yes", Button).disabled = True
        fields = self.query("#decide-note").results(Input)
        note = next((f.value.strip() for f in fields), "") or None
        self._run(note)

    @work(thread=True, exclusive=True, group="decide", exit_on_error=False)
    def _run(self, note: str | None) -> None:
        try:
            decision: Decision | str = self.decide(note)
        except StoreError as exc:
            decision = str(exc)
        try:
            self.app.call_from_thread(self._done, decision)
        except RuntimeError:
            pass

    def _done(self, decision: Decision | str) -> None:
        self.deciding = False
        if isinstance(decision, Decision) and (decision.ok or decision.code == "awaiting_approval"):
            # awaiting_approval: the signature is recorded, others must approve too ("1 of 2").
            self.dismiss(decision)
            return
        error = self.query_one("#decide-error", Static)
        if isinstance(decision, str):  # the store failed (busy, read-only): may be retried
            error.update(safe(f"Not recorded: {decision}"))
            self.query_one("#decide-yes", Button).disabled = False
        else:
            error.update(
                Content.assemble(
                    (f"Not {PAST[self.verb]}: ", "bold"), safe(decision.why or decision.code)
                )
            )
            # Someone else decided (or it expired): this dialog can only be closed now.
            self.closed_by_conflict = True
            self.query_one("#decide-yes", Button).display = False
            close = self.query_one("#decide-no", Button)
            close.label = "Close"
            close.focus()
        error.add_class("-shown")


class SourceModal(Dialog[None]):
    """A tool's source, read-only (the standalone inbox has no editor behind it). Hidden
    characters are shown as tokens: a Trojan Source body must not look innocent here either."""

    DEFAULT_CSS = """
    SourceModal > Vertical { width: 95%; max-width: 100%; height: 90%; padding: 0; }
    SourceModal TextArea { height: 1fr; }
    """
    BINDINGS = [Binding("escape,q", "dismiss", "Close", id="source.close")]

    def __init__(self, path: str, text: str) -> None:
        super().__init__()
        self.path = path
        self.text = text

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(safe_line(self.path, "bold"))
            yield TextArea(
                visible(self.text), read_only=True, show_line_numbers=True, id="source-text"
            )

    def on_mount(self) -> None:
        self.query_one(TextArea).focus()
