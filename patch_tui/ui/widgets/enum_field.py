"""A one-line select for the manifest form's enums (type, items, filesystem).

Textual's Select is five widgets (the select, its current-value box with a label and two
arrows, and an overlay list) built whether or not it is ever opened; the form holds several,
and every widget costs start-up time. An EnumField is one widget: it paints its value and an
arrow, and builds its option list only when opened, as a small screen placed under the field.

Unlike Select, an EnumField never reports a value set from code: `Changed` is posted only when
a person picks an option, so loading a manifest can never echo back into the source. It also
shows a value that is not one of its options as it is (marked invalid) instead of hiding it.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from patch_tui.ui.dialogs.dialog import Dialog

BLANK_LABEL = "(none)"


class EnumPicker(Dialog[int | None]):
    """The open list of an EnumField: dismissed with the chosen index, or None."""

    DEFAULT_CSS = """
    EnumPicker { background: transparent; align: left top; }
    EnumPicker > OptionList {
        border: tall $border;
        background: $surface;
        height: auto;
        max-height: 12;
        padding: 0;
    }
    """
    BINDINGS = [Binding("escape", "dismiss_none", "Close", show=False, id="enum.close")]

    def __init__(
        self, labels: Sequence[str], current: int | None, region: tuple[int, int, int]
    ) -> None:
        super().__init__()
        self._labels = list(labels)
        self._current = current
        self._x, self._y, self._width = region

    def compose(self) -> ComposeResult:
        # Option prompts are Content: an option is never read as markup.
        yield OptionList(*(Option(Content(label)) for label in self._labels))

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        height = min(len(self._labels), 10) + 2
        below = self._y + 1
        # Open downwards when the list fits, else upwards (a field near the bottom).
        y = below if below + height <= self.size.height else max(0, self._y - height)
        width = max(self._width, max(len(label) for label in self._labels) + 4)
        x = min(self._x, max(0, self.size.width - width))  # never past the right edge
        options.styles.offset = (x, y)
        options.styles.width = width
        if self._current is not None:
            options.highlighted = self._current
        options.focus()

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option_index)

    def on_click(self, event: events.Click) -> None:
        if event.widget is self:  # a click outside the list closes it, like Select's
            self.dismiss(None)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)


class EnumField(Widget, can_focus=True):
    """A value from a fixed list; None is "no value" when `allow_blank`."""

    DEFAULT_CSS = """
    EnumField {
        height: 1;
        width: 1fr;
        background: $surface;
        color: $foreground;
        pointer: pointer;
    }
    EnumField:focus { background-tint: $foreground 5%; }
    EnumField.-blank { color: $foreground 50%; }
    EnumField.-unknown { color: $error; }
    """
    BINDINGS = [
        Binding("enter,space,down", "open", "Pick", show=False, id="enum.open"),
        # A pick is undone like typing in a text field (a choice made by accident, issue 25).
        Binding("ctrl+z", "undo_pick", "Undo", show=False, id="enum.undo"),
        Binding("ctrl+y,ctrl+shift+z", "redo_pick", "Redo", show=False, id="enum.redo"),
    ]

    value: reactive[str | None] = reactive(None, layout=False)

    class Changed(Message):
        """A person picked `value` (None: the blank option)."""

        def __init__(self, field: EnumField, value: str | None) -> None:
            self.field = field
            self.value = value
            super().__init__()

        @property
        def control(self) -> EnumField:
            return self.field

    def __init__(
        self,
        options: Sequence[str],
        *,
        value: str | None = None,
        allow_blank: bool = False,
        prompt: str = BLANK_LABEL,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self._undo: list[str | None] = []
        self._redo: list[str | None] = []
        self.options = tuple(options)
        self.allow_blank = allow_blank
        self.prompt = prompt
        self.set_reactive(EnumField.value, value)
        # Not mounted yet: its styles are computed once, when it mounts.
        self._mark(value, update=False)

    def _mark(self, value: str | None, *, update: bool = True) -> None:
        self.set_class(value is None, "-blank", update=update)
        self.set_class(value is not None and value not in self.options, "-unknown", update=update)

    def watch_value(self, value: str | None) -> None:
        self._mark(value)

    def render(self) -> Content:
        text = self.prompt if self.value is None else self.value
        width = max(self.content_size.width - 2, 1)
        shown = text if len(text) <= width else text[: width - 1] + "…"
        # The arrow turns into a cursor block with the focus: a compact field has no border
        # to show it with.
        return Content.assemble(
            shown.ljust(width) + " ", ("▼", "reverse" if self.has_focus else "")
        )

    def _choices(self) -> list[str | None]:
        return [*([None] if self.allow_blank else []), *self.options]

    def action_open(self) -> None:
        choices = self._choices()
        labels = [self.prompt if c is None else c for c in choices]
        current = choices.index(self.value) if self.value in choices else None
        region = self.region
        self.app.push_screen(
            EnumPicker(labels, current, (region.x, region.y, region.width)), self._picked
        )

    def _picked(self, index: int | None) -> None:
        if index is None:
            return
        value = self._choices()[index]
        self.focus()
        if value != self.value:
            self._undo.append(self.value)
            self._redo.clear()
            self.value = value
            self.post_message(self.Changed(self, value))

    def action_undo_pick(self) -> None:
        if self._undo:
            self._redo.append(self.value)
            self.value = self._undo.pop()
            self.post_message(self.Changed(self, self.value))

    def action_redo_pick(self) -> None:
        if self._redo:
            self._undo.append(self.value)
            self.value = self._redo.pop()
            self.post_message(self.Changed(self, self.value))

    def on_key(self, event: events.Key) -> None:
        # Type-ahead, as in a native select: a letter picks the next option starting with it.
        char = event.character
        if not char or len(char) != 1 or not char.isalnum():
            return
        matches = [c for c in self.options if c.lower().startswith(char.lower())]
        if not matches:
            return
        event.stop()
        event.prevent_default()
        after = matches.index(self.value) + 1 if self.value in matches else 0
        self._picked(self._choices().index(matches[after % len(matches)]))

    def on_click(self, event: events.Click) -> None:
        event.stop()
        self.focus()
        self.action_open()
