"""Edit, then approve: a pending action's args in a form built from the tool's inputs, with what
changed against the agent's proposal, and one button that approves the edited args.

    EditArgsDialog(action, manifest, decide)   decide(args) runs in a thread -> the store's Decision

The form is the try-it panel's (one `InputField` per input: text and number fields, a true/false
choice, JSON for arrays and objects). Only the fields a person changed replace the proposal: an
untouched field keeps the agent's exact value, even one a text field cannot hold as it is (a
string with a newline). The edited args are checked with approvals/edits.validate before anything is
decided; a bad edit shows its line and nothing is approved. The changes list is rebuilt on every
keystroke, so what is approved is what the dialog shows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.widgets import Button, Input, Select, Static, TextArea

from patch_tui.approvals import edits
from patch_tui.approvals.store import Action, Decision, StoreError
from patch_tui.ui.desk.try_fields import InputField
from patch_tui.ui.dialogs.dialog import Dialog
from patch_tui.ui.safe_text import safe_line

if TYPE_CHECKING:
    from patch_tui.format.plain_manifest import RunManifest


class EditField(InputField):
    """The try-it field, telling the dialog about every change (InputField keeps its own
    Changed events to itself)."""

    class Edited(Message):
        pass

    def on_mount(self) -> None:
        # Editing a proposal, not replacing it: focus puts the cursor at the end, as the desk's
        # form does, instead of selecting everything for the next key to overwrite.
        widget = self.widget
        if isinstance(widget, Input):
            widget.select_on_focus = False

    @on(Input.Changed)
    @on(TextArea.Changed)
    @on(Select.Changed)
    def _edited(self, event: Message) -> None:
        event.stop()
        self.post_message(self.Edited())


class EditArgsDialog(Dialog[Decision | None]):
    """Modal: keys stay here. No letter decides anything (approve is the button only), so text
    typed into the form can never approve; the first field has the focus."""

    DEFAULT_CSS = """
    EditArgsDialog > Vertical { width: 96; max-height: 90%; border: thick $warning; }
    EditArgsDialog #edit-form { height: auto; max-height: 35vh; }
    EditArgsDialog #edit-changes { height: auto; max-height: 6; margin-top: 1; }
    EditArgsDialog #edit-error { height: auto; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="edit.cancel")]

    def __init__(
        self, action: Action, manifest: RunManifest, decide: Callable[[dict[str, Any]], Decision]
    ) -> None:
        super().__init__()
        self.action = action
        self.manifest = manifest
        self.decide = decide
        self.baseline: dict[str, tuple[bool, Any, str | None]] = {}
        self.deciding = False

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(
                Content.assemble(
                    "Edit the args of ",
                    safe_line(self.action.tool, "bold"),
                    " ",
                    safe_line(self.action.version),
                    ", then approve",
                ),
                classes="dialog-title",
            )
            with VerticalScroll(id="edit-form"):
                for spec in self.manifest.inputs:
                    yield EditField(spec)
            yield Static("", id="edit-changes")
            yield Static("", id="edit-error", classes="dialog-error")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Cancel", id="edit-cancel")
                yield Button("Approve edited", id="edit-approve", variant="warning", disabled=True)

    def on_mount(self) -> None:
        for field in self.query(InputField):
            name = field.spec.name
            field.set_value(name in self.action.args, self.action.args.get(name))
        self.call_after_refresh(self._take_baseline)
        fields = list(self.query(InputField))
        if fields:
            fields[0].widget.focus()

    def _take_baseline(self) -> None:
        self.baseline = {f.spec.name: f.value() for f in self.query(InputField)}
        self._refresh_changes()

    def collect(self) -> tuple[dict[str, Any] | None, str | None]:
        """The edited args, or why not. Untouched fields keep the proposal's exact values."""
        args = dict(self.action.args)
        for field in self.query(InputField):
            name = field.spec.name
            now = field.value()
            if now == self.baseline.get(name):
                continue
            present, value, error = now
            if error:
                return None, f"{name}: {error}"
            if present:
                args[name] = value
            else:
                args.pop(name, None)
        why = edits.validate(args, self.manifest)
        return (None, why) if why else (args, None)

    @on(EditField.Edited)
    def _changed(self) -> None:
        if self.baseline:
            self._refresh_changes()

    def _refresh_changes(self) -> None:
        args, why = self.collect()
        changes = edits.changes(self.action.args, args) if args is not None else []
        lines = [safe_line(c.line()) for c in changes]
        text = (
            Content("No change yet: edit a field above.")
            if not changes
            else Content.assemble(
                ("Changes against what the agent proposed:", "bold"),
                *[part for line in lines for part in (Content("\n  "), line)],
            )
        )
        self.query_one("#edit-changes", Static).update(text)
        self._error(why)
        self.query_one("#edit-approve", Button).disabled = args is None or not changes

    @on(Button.Pressed, "#edit-cancel")
    def action_cancel(self) -> None:
        if not self.deciding:
            self.dismiss(None)

    @on(Button.Pressed, "#edit-approve")
    def _approve(self) -> None:
        args, why = self.collect()
        if args is None or self.deciding:
            self._error(why)
            return
        self.deciding = True
        self.query_one("#edit-approve", Button).disabled = True
        self._run(args)

    @work(thread=True, exclusive=True, group="edit-approve")
    def _run(self, args: dict[str, Any]) -> None:
        try:
            decision: Decision | str = self.decide(args)
        except (StoreError, ValueError) as exc:
            decision = str(exc)
        self.app.call_from_thread(self._done, decision)

    def _done(self, decision: Decision | str) -> None:
        self.deciding = False
        if isinstance(decision, Decision) and (decision.ok or decision.code == "awaiting_approval"):
            self.dismiss(decision)
            return
        why = decision if isinstance(decision, str) else decision.why
        self._refresh_changes()
        self._error(f"Not approved: {why}")

    def _error(self, why: str | None) -> None:
        error = self.query_one("#edit-error", Static)
        error.update(safe_line(why) if why else "")
        error.display = bool(why)


def open_edit_dialog(screen: Any, action: Action, done: Callable[[Decision | None], None]) -> None:
    """Open the dialog for `action` over `screen`, or say in a toast why its args cannot be
    edited (a guard call for another server, a tool file changed or gone)."""
    from patch_tui.format import toolfile
    from patch_tui.ui.inbox.inbox_badge import app_store

    if action.upstream_token is not None or (action.details or {}).get("held_by") == "guard":
        screen.notify(
            "This call is held by patch-tui guard for another MCP server, which runs the args "
            "it was given: approve it as it is, or reject it.",
            severity="warning",
            markup=False,
        )
        return
    try:
        tf = toolfile.read(action.tool_path) if action.tool_path else None
    except (OSError, ValueError):
        tf = None
    # A run's reading of the manifest (pydantic only when the model must say); None: invalid.
    manifest = tf.run_manifest if tf is not None else None
    if tf is None or manifest is None or tf.sha256 != action.source_sha256:
        screen.notify(
            "The tool file changed (or is gone) since the call was held, so it would not run: "
            "reject it and let the agent call again.",
            severity="warning",
            markup=False,
        )
        return
    token = action.token

    def decide(args: dict[str, Any]) -> Decision:
        from patch_tui.approvals import decisions

        return decisions.approve(app_store(screen.app), token, args=args)

    screen.app.push_screen(EditArgsDialog(action, manifest, decide), done)
