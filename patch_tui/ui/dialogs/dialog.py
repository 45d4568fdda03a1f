"""The one base of every dialog (docs/architecture.md, Dialogs): how a dialog looks, where its focus starts, and
where the keys typed in it go.

The rule for keys, because a dialog guards decisions (approve a call, discard edits, quit):

- A dialog with a text field focuses the field, so what a person types lands there as text.
- A key a dialog does not handle stops at the dialog: it never reaches the screen behind.
- Typed text never decides. The first printable key that is not one of the dialog's keys (y, n,
  a choice's letter) marks the burst as typing: every printable key and Enter then do nothing
  until the keyboard has been quiet for `TYPING_PAUSE`. So "please do not" in the
  unsaved-changes dialog never reaches its "d" (discard).
- Right after a dialog closed while letters were being pressed in it, the rest of that burst is
  dropped by the app (`DialogKeyGuard`): "nay" typed at an approve dialog is "n" (cancel) and
  never "a" (approve again, on the inbox behind) then "y". A dialog closed by Enter, Escape or
  the mouse arms nothing: those are not typed by accident as part of a sentence.

Every dialog subclasses `Dialog` and styles its frame as a `Vertical` directly under the
screen (`.dialog-title`, `.dialog-buttons` and `.dialog-error` are shared). A dialog with keys
of its own that are not bindings (a choice's letters) lists them in `command_keys` and acts on
them in `on_command_key`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from textual import events
from textual.screen import ModalScreen

if TYPE_CHECKING:
    from textual.widgets import Input, TextArea

ResultType = TypeVar("ResultType")

# Keys closer together than this are one burst of typing (a fast typist is ~100 ms a key, a
# slow one ~300 ms; a person who pauses to read and then presses a key is not typing). Measured
# between the keys' own timestamps (taken when the terminal's bytes were read), so a slow
# repaint between two keys does not split a burst.
TYPING_PAUSE = 0.6

# Keys that insert text somewhere, besides printable characters.
TEXT_KEYS = frozenset({"enter", "space"})


def is_typed(event: events.Key) -> bool:
    """A key that would be text (or would submit it): never a command in a burst of typing."""
    return event.key in TEXT_KEYS or bool(event.is_printable and event.character)


class Dialog(ModalScreen[ResultType]):
    """A modal dialog: shared style, the focus rule and the key rule (see the module)."""

    DEFAULT_CSS = """
    Dialog { align: center middle; }
    Dialog > Vertical {
        width: 64; max-width: 100%; height: auto; max-height: 100%;
        border: thick $primary; background: $surface; padding: 1 2;
    }
    Dialog .dialog-title { text-style: bold; margin-bottom: 1; }
    Dialog .dialog-buttons { height: auto; align: right middle; margin-top: 1; }
    Dialog .dialog-buttons Button { margin-left: 1; }
    Dialog .dialog-error { color: $text-error; }
    """

    # Keys the dialog acts on outside its BINDINGS (handled in on_command_key).
    command_keys: frozenset[str] = frozenset()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._typing_until = float("-inf")
        self._last_letter = float("-inf")  # when the last printable key this dialog saw was typed
        self._told_typing = False

    # -- focus --------------------------------------------------------------------------------

    def on_mount(self) -> None:
        # Runs after the subclass's on_mount (handlers go down the class hierarchy), and focus()
        # takes effect in call order: whatever the subclass focused, a text field wins, so typed
        # text lands in it.
        field = self.first_text_field()
        if field is not None:
            field.focus()

    def first_text_field(self) -> Input | TextArea | None:
        # Imported here: every app mixes in DialogKeyGuard from this module, and `patch-tui
        # inbox` shows no text field before its first frame (TextArea's import is its own).
        from textual.widgets import Input, TextArea

        for widget in self.query("Input, TextArea"):
            if not isinstance(widget, (Input, TextArea)) or not widget.focusable:
                continue
            if isinstance(widget, TextArea) and widget.read_only:
                continue  # a read-only view is not a field anyone types into
            return widget
        return None

    # -- keys ---------------------------------------------------------------------------------

    def is_command_key(self, key: str) -> bool:
        if key in self.command_keys:
            return True
        return any(key in bindings.key_to_bindings for _node, bindings in self._modal_binding_chain)

    async def on_key(self, event: events.Key) -> None:
        """Keys the focused widget did not take (a field takes every printable key)."""
        now = event.time
        typed = is_typed(event)
        if event.is_printable:
            self._last_letter = now
        if typed and (now < self._typing_until or not self.is_command_key(event.key)):
            # Text, not a command: it decides nothing and goes no further.
            self._typing_until = now + TYPING_PAUSE
            event.stop()
            event.prevent_default()
            if not self._told_typing:
                self._told_typing = True
                self.notify(
                    "Typed text does nothing in this dialog: use its buttons or their keys.",
                    severity="warning",
                    timeout=4,
                    markup=False,
                )
            return
        if event.key in self.command_keys:
            event.stop()
            event.prevent_default()
            self.on_command_key(event.key)

    def on_command_key(self, key: str) -> None:
        """A key of `command_keys`, pressed as a command (not typed as text)."""

    def dismiss(self, result: Any = None) -> Any:
        # If letters were being pressed as it closed (it closed on a letter, or a worker closed
        # it while they were typed), the rest of that burst is dropped by the app.
        if isinstance(self.app, DialogKeyGuard):
            self.app.dialog_key_guard.arm(self._last_letter)
        return super().dismiss(result)


class DialogKeyGuardState:
    """The burst of keys that closed a dialog: its keys typed after it closed are dropped."""

    def __init__(self) -> None:
        self.last = float("-inf")  # when the burst's last key was typed
        self.dropped = 0

    def arm(self, last_letter: float) -> None:
        self.last = max(self.last, last_letter)
        self.dropped = 0

    def drop(self, event: events.Key) -> bool:
        if event.time - self.last >= TYPING_PAUSE or not is_typed(event):
            return False
        self.last = event.time  # the burst goes on
        self.dropped += 1
        return True


class DialogKeyGuard:
    """Mixed into every App of patch-tui (before `App` in the bases): keys typed in the same
    burst that closed a dialog are dropped, instead of acting on the screen behind it."""

    dialog_key_guard: DialogKeyGuardState

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.dialog_key_guard = DialogKeyGuardState()

    async def on_event(self, event: events.Event) -> None:
        if (
            isinstance(event, events.Key)
            and not event.is_forwarded
            and not isinstance(self.screen, Dialog)  # type: ignore[attr-defined]
            and self.dialog_key_guard.drop(event)
        ):
            if self.dialog_key_guard.dropped == 1:
                self.notify(  # type: ignore[attr-defined]
                    "Keys typed as the dialog closed were ignored.",
                    severity="warning",
                    timeout=3,
                    markup=False,
                )
            return
        await super().on_event(event)  # type: ignore[misc]
