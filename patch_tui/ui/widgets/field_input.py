"""A text field of the desk's manifest form: shows the start of its text when idle, keeps the
cursor instead of selecting all on focus, and has its own undo / redo."""

from __future__ import annotations

import time
from typing import Any

from textual.binding import Binding
from textual.widgets import Input
from textual.widgets.input import Selection

from patch_tui.ui.safe_text import SafeInput


class FieldInput(SafeInput):
    """A text field of the form. Whenever nobody is typing in it, it shows the start of its text:
    Input keeps its cursor after the end of a value it was given, or where typing left it, and
    scrolls there whenever it is laid out again.

    Focus puts the cursor at the end without selecting (Input selects everything on focus, so
    the first key typed after Tab replaced the whole field: `1.0.0` became `X`), and ctrl+z /
    ctrl+y undo and redo what was typed here (Input has no undo of its own). Keystrokes less
    than UNDO_MERGE seconds apart undo together, like a word."""

    UNDO_MERGE = 1.0

    BINDINGS = [
        Binding("ctrl+z", "undo_field", "Undo", id="form.undo", show=False),
        Binding("ctrl+y,ctrl+shift+z", "redo_field", "Redo", id="form.redo", show=False),
    ]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, select_on_focus=False, **kwargs)
        self._undo: list[str] = []
        self._redo: list[str] = []
        self._before = self.value  # the value the next recorded change started from
        self._last_change = 0.0
        self._select_on_focus: tuple[int, int] | None = None

    def select_span(self, start: int, end: int) -> None:
        """Select value[start:end] (template text a person is to type over, lint PT052), now if
        focused, else when the focus arrives (focus would put the cursor at the end)."""
        if self.has_focus:
            self.selection = Selection(start, end)
        else:
            self._select_on_focus = (start, end)

    def on_mount(self) -> None:
        self.call_after_refresh(self.show_start)

    def on_focus(self) -> None:
        wanted, self._select_on_focus = self._select_on_focus, None
        if wanted is not None and wanted[1] <= len(self.value):
            self.selection = Selection(*wanted)
        else:
            self.cursor_position = len(self.value)
        if self.value != self._before:
            # Changed from outside (the source pane) since: the old steps no longer apply.
            self._undo.clear()
            self._redo.clear()
            self._before = self.value

    def on_blur(self) -> None:
        self.cursor_position = 0

    def show_start(self) -> None:
        if not self.has_focus:
            self.cursor_position = 0

    def on_input_changed(self, event: Input.Changed) -> None:
        # Not stopped: the form turns it into a source edit.
        if event.input is not self or event.value == self._before:
            return  # another field's, or our own undo / redo
        if self.has_focus:
            now = time.monotonic()
            if not self._undo or now - self._last_change > self.UNDO_MERGE:
                self._undo.append(self._before)
            self._redo.clear()
            self._last_change = now
        self._before = event.value

    def _restore(self, value: str) -> None:
        self._before = value
        self._last_change = 0.0  # the next keystroke starts a new step
        self.value = value
        self.cursor_position = len(value)

    def action_undo_field(self) -> None:
        if self._undo:
            self._redo.append(self.value)
            self._restore(self._undo.pop())

    def action_redo_field(self) -> None:
        if self._redo:
            self._undo.append(self.value)
            self._restore(self._redo.pop())
