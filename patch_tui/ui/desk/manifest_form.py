"""The manifest form: every field of the format, as a view of the parsed manifest.

The fields, their order, widgets, labels, placeholders, defaults, text <-> value conversions and
help all come from the field table (`format/fields.py`, `FIELDS` and its `widget` hints): a
field added there shows up here with no form code. The form adds only its layout (sections,
input cards, what mounts after the first frame) and the provider check under `external_auth`.

The form never owns data. It shows manifest data (`load`) and reports each edit as
`ManifestForm.Changed(path, value)`; the editor writes it into the source text, re-parses, and
calls `load` again. `load` skips the widget that has focus so the field being typed in is never
overwritten, and sets values with the change messages prevented so a load never echoes back.

While the frontmatter does not parse the form shows the last good manifest, dimmed and
read-only (an edit would replace the broken lines and lose what was typed), with the error.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.events import DescendantBlur, DescendantFocus
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Button, Input, Label, Static, Switch

from patch_tui.desk.form_values import (
    FieldPath,
    _enum_text,
    _field_value,
    _get,
    _input_text,
    _switch_flag,
    _text_of,
    _typed_value,
    doc_path,
)
from patch_tui.format import fields
from patch_tui.format.fields import AUTH_PROVIDERS, AUTH_SCOPE_RE, FieldSpec, field_doc
from patch_tui.format.toolfile import DELETE
from patch_tui.ui.desk.field_column import FieldColumn
from patch_tui.ui.first_frame import after_first_frame
from patch_tui.ui.safe_text import safe, safe_line
from patch_tui.ui.widgets.enum_field import EnumField
from patch_tui.ui.widgets.field_input import FieldInput

__all__ = ["FieldColumn", "FieldInput", "ManifestForm", "path_id"]

# Input cards built for the first frame (the rest mount right after it).
FIRST_FRAME_CARDS = 2
# Lines the form shows when nothing tells it how tall its pane is: the sections starting
# below them mount right after the first frame.
DEFAULT_FIRST_LINES = 23
# Lines of the form's layout (app.tcss): a section's title has a blank line above it; an input
# card is its head, one row per field and a blank line under it.
SECTION_LINES = 2
# The field whose scopes get a provider check under them.
AUTH_FIELD: FieldPath = ("external_auth",)


def path_id(path: FieldPath) -> str:
    """A widget id for a field path: ("inputs", 0, "type") -> "f-inputs-0-type"."""
    return "f-" + "-".join(str(p) for p in path).replace("_", "__")


def _widget(f: FieldSpec, path: FieldPath, data: dict[str, Any]) -> Widget:
    """The widget the table's hint asks for, showing the field's value in `data`. A type's
    widget edits the element type under the field: its path ends in "type"."""
    if f.widget == "type":
        path = (*path, "type")
    wid = path_id(path)
    widget: Widget
    if f.widget == "label":
        value = _get(data, path, f.default)
        widget = Label(safe_line(_text_of(value)), id=wid)
    elif f.widget == "switch":
        widget = Switch(_switch_flag(f, path, data), id=wid, animate=False)
        value = _field_value(f, path, data)
        # A new widget: styled once when it mounts, not now.
        invalid = value is not None and not isinstance(value, bool)
        widget.set_class(invalid, "-invalid", update=False)
    elif f.widget in ("choice", "type"):
        options = fields.spec("items.type").choices if f.widget == "type" else f.choices
        value = _enum_text(_field_value(f, path, data))
        widget = EnumField(options, id=wid, allow_blank=not f.required, value=value)
    else:
        text = _input_text(f, path, data)
        widget = FieldInput(text, id=wid, placeholder=f.placeholder, compact=True)
    return _tagged(widget, path, f)


def _tagged(widget: Widget, path: FieldPath, f: FieldSpec) -> Widget:
    """The field a widget shows, for the form's handlers (one attribute read per event)."""
    widget.field_path = path  # type: ignore[attr-defined]
    widget.field_spec = f  # type: ignore[attr-defined]
    return widget


def _row(f: FieldSpec, base: FieldPath, data: dict[str, Any]) -> Widget:
    """A field's widget, labelled (its FieldColumn paints the label), its doc the tooltip."""
    path = (*base, f.key)
    widget = _widget(f, path, data)
    widget.field_label = f.label or f.key  # type: ignore[attr-defined]
    # A new widget: styled once when it mounts, not now.
    widget.set_class(True, "field", update=False)
    doc = field_doc(doc_path(path))
    if doc:
        widget.tooltip = doc
    return widget


def _group_rows(group: str, base: FieldPath, data: dict[str, Any]) -> Iterator[Widget]:
    """A group's fields; in a section, its on/off switches come first, then the rest."""
    specs = fields.fields_of(group)
    if base and not isinstance(base[-1], int):
        specs = tuple(sorted(specs, key=lambda f: f.widget != "switch"))
    for f in specs:
        yield _row(f, base, data)


def _field_lines(f: FieldSpec, data: dict[str, Any]) -> int:
    """How many lines a top-level field takes in the first frame (its section title too)."""
    title = SECTION_LINES if f.section else 0
    if f.widget == "cards":
        cards = min(_input_count(data), FIRST_FRAME_CARDS)
        return title + cards * (2 + len(fields.fields_of(f.of)))
    if f.widget == "group":
        return title + len(fields.fields_of(f.of))
    return title + 1 + ((f.key,) == AUTH_FIELD)


def fold_index(data: dict[str, Any], lines: int) -> int:
    """The first top-level field not built for the first frame: the first whose first row
    would be below the fold of a form `lines` high (its title may just show: it follows a
    frame later, with the rest)."""
    top = fields.fields_of("")
    # The fields up to the input cards are always built: showing a manifest needs them.
    cards = next((i for i, f in enumerate(top) if f.widget == "cards"), -1)
    used = 0
    for i, f in enumerate(top):
        first_row = used + (SECTION_LINES if f.section else 0)
        if first_row >= lines and i > cards:
            return i
        used += _field_lines(f, data)
    return len(top)


def _top_level(fields_shown: tuple[FieldSpec, ...], data: dict[str, Any]) -> Iterator[Widget]:
    """The form's sections for these top-level fields."""
    for f in fields_shown:
        if f.widget == "cards":
            with Horizontal(classes="section-head"):
                yield Label(f.section, classes="section")
                yield Button("+ add input", id="input-add", compact=True)
            # Without `-problem`: each tool shown clears every field's marks (mark_problems)
            # before its first frame, and the note's was removed there, restyling it.
            yield Static("", id="inputs-note", classes="field-note")
            yield Vertical(*_first_cards(data), id="inputs-list")
            continue
        rows = (
            _group_rows(f.of, (f.key,), data) if f.widget == "group" else iter([_row(f, (), data)])
        )
        if f.section:
            yield _section_start(next(rows), f.section)
        yield from rows
        if (f.key,) == AUTH_FIELD:
            yield Static("", id="auth-check", classes="field-note")


def _section_start(widget: Widget, title: str) -> Widget:
    """A section's first field: its column paints the section's title above it."""
    widget.field_section = title  # type: ignore[attr-defined]
    widget.set_class(True, "-section-start", update=False)  # styled once, when it mounts
    return widget


def _input_count(data: dict[str, Any]) -> int:
    inputs = data.get("inputs")
    return len(inputs) if isinstance(inputs, list) else 0


def _first_cards(data: dict[str, Any]) -> list[InputCard]:
    """The input cards of the form's first frame: only the first few (the rest are below the
    fold at any usual size, and each card is a score of widgets: they mount right after it)."""
    count = _input_count(data)
    return [InputCard(i, count, data) for i in range(min(count, FIRST_FRAME_CARDS))]


class InputCard(FieldColumn):
    """One entry of `inputs`: every field of an input, with move up/down and remove. Built
    with its values (from `data`, the whole manifest) so it shows them in its first frame."""

    def __init__(self, index: int, total: int, data: dict[str, Any] | None = None) -> None:
        super().__init__(classes="input-card", id=f"input-card-{index}")
        self.index = index
        self.total = total
        self._data = data or {}

    def compose(self) -> ComposeResult:
        i = self.index
        data = self._data
        with Horizontal(classes="card-head"):
            yield Label(f"input {i + 1}", classes="card-title")
            yield Button("↑", id=f"input-up-{i}", compact=True, disabled=i == 0, tooltip="Move up")
            yield Button(
                "↓",
                id=f"input-down-{i}",
                compact=True,
                disabled=i == self.total - 1,
                tooltip="Move down",
            )
            yield Button(
                "✕", id=f"input-remove-{i}", compact=True, variant="error", tooltip="Remove"
            )
        yield from _group_rows("inputs[]", ("inputs", i), data)


class FormTail(FieldColumn):
    """The form's sections below the fold of its first frame: they mount right after it
    and fill themselves, so the first frame builds only what it shows."""

    def compose(self) -> ComposeResult:
        form = self.query_ancestor(ManifestForm)
        yield from _top_level(fields.fields_of("")[form.fold :], form.data)

    def on_mount(self) -> None:
        form = self.query_ancestor(ManifestForm)
        form.refill()


class ManifestForm(VerticalScroll):
    """Every manifest field as a form."""

    class Changed(Message):
        """A field was edited: set `path` to `value` (`toolfile.DELETE` removes it)."""

        def __init__(self, path: FieldPath, value: Any) -> None:
            self.path = path
            self.value = value
            super().__init__()

    def __init__(
        self,
        data: dict[str, Any] | None = None,
        *,
        first_lines: int = DEFAULT_FIRST_LINES,
        **kwargs: Any,
    ) -> None:
        """`data`: the manifest the form will show first (`load`), to build its fields with
        their values and its first input cards: they join the first frame, with no second
        layout pass after it. `first_lines`: how many lines the form shows in that frame; the
        sections below them mount right after it."""
        super().__init__(**kwargs)
        self._built_for: dict[str, Any] = data or {}
        self.fold = fold_index(self._built_for, first_lines)
        self.data: dict[str, Any] = {}
        self.stale = False
        self._input_count = -1
        self._problems: dict[FieldPath, str] = {}
        self._focus_after_rebuild: FieldPath | None = None

    def compose(self) -> ComposeResult:
        yield Static("", id="form-error", classes="form-error")
        with FieldColumn(id="form-fields"):
            yield from _top_level(fields.fields_of("")[: self.fold], self._built_for)
            # The sections below the fold mount right after the first frame (on_mount).
        yield Static("", id="field-help", classes="field-help")

    def on_mount(self) -> None:
        after_first_frame(self, self._mount_tail)

    def _mount_tail(self) -> None:
        self.query_one("#form-fields").mount(FormTail(id="form-tail"))

    @property
    def is_populated(self) -> bool:
        """True once the form shows a manifest (the start-up benchmark waits for this)."""
        return bool(self.data) and self._input_count >= 0

    def shows(self, data: dict[str, Any] | None) -> bool:
        """True when the form already shows exactly this (None: the stale state)."""
        if data is None:
            return self.stale
        inputs = data.get("inputs") if isinstance(data, dict) else None
        count = len(inputs) if isinstance(inputs, list) else 0
        return not self.stale and data == self.data and self._input_count == count

    # -- showing data -----------------------------------------------------------------------

    def load(self, data: dict[str, Any] | None, *, error: str | None = None) -> None:
        """Show manifest data; with `error`, keep the last good data, dimmed, read-only."""
        error_box = self.query_one("#form-error", Static)
        fields = self.query_one("#form-fields")
        if error is not None:
            self.stale = True
            self.add_class("-stale")
            error_box.update(safe(error))
            fields.disabled = True
            fields.display = bool(self.data)  # no last good manifest: no fields, no fake values
            return
        self.stale = False
        self.remove_class("-stale")
        error_box.update("")
        fields.disabled = False
        fields.display = True
        self.data = data if isinstance(data, dict) else {}
        count = _input_count(self.data)
        # `inputs` that is not a list cannot be edited here without losing it: say so.
        odd = "inputs" in self.data and not isinstance(self.data.get("inputs"), list)
        self.query_one("#input-add", Button).disabled = odd
        note = self.query_one("#inputs-note", Static)
        note.display = odd
        note.update(
            "inputs must be a list (`- name: ...` entries): fix it in the source" if odd else ""
        )
        first = self._input_count < 0
        if not (first and data is self._built_for):
            # (The manifest the form was built with, shown first: its fields show it already.)
            self._fill()
        if count != self._input_count:
            self._input_count = count
            holder = self.query_one("#inputs-list", Vertical)
            head = min(count, FIRST_FRAME_CARDS)
            if first and len(holder.children) == head:
                # The first manifest shown, the one the form was built for: its first cards
                # are there, with their values; the rest mount right after the first frame.
                if count > head:
                    after_first_frame(self, lambda: self._mount_more_cards(head))
            else:
                self.call_later(self._rebuild_inputs, count)

    def forget(self) -> None:
        """Drop the manifest shown (another file is opened: it is no "last good" one of it)."""
        self.data = {}

    def _mount_more_cards(self, start: int) -> None:
        holder = self.query_one("#inputs-list", Vertical)
        if len(holder.children) != start:
            return  # a rebuild since then made every card already
        count = self._input_count
        holder.mount_all([InputCard(i, count, self.data) for i in range(start, count)])
        self.refill()

    async def _rebuild_inputs(self, count: int) -> None:
        # Loads can queue several rebuilds: only the latest count matters.
        count = self._input_count
        holder = self.query_one("#inputs-list", Vertical)
        if len(holder.children) == count:
            self._fill()
            return
        focused = self.app.focused
        refocus = getattr(focused, "field_path", None) if focused is not None else None
        await holder.remove_children()
        await holder.mount_all([InputCard(i, count, self.data) for i in range(count)])
        self._fill()
        self.mark_problems(self._problems)  # the new cards get their marks too
        wanted, self._focus_after_rebuild = self._focus_after_rebuild, None
        # Only if the focus is still on "+ add input": a person who moved on keeps their place.
        on_add = focused is None or getattr(focused, "id", None) == "input-add"
        if wanted is not None and on_add and self.widget_for(wanted) is not None:
            self.focus_field(wanted)  # "+ add input": type the new input's name next
        elif refocus is not None and isinstance(focused, Widget) and not focused.is_attached:
            self.focus_field(refocus)

    def _fill(self) -> None:
        data = self.data
        focused = self.app.focused
        for widget in self.query("#form-fields Input, #form-fields EnumField, #form-fields Switch"):
            path = getattr(widget, "field_path", None)
            if path is None:
                continue
            if widget is focused and not isinstance(widget, EnumField):
                continue  # never clobber what is being typed
            self._set_widget(widget, path, data)
        for label in self.query("#form-fields Label"):
            f = getattr(label, "field_spec", None)
            if f is not None:
                label.update(safe_line(_text_of(_get(data, label.field_path, f.default))))  # type: ignore[attr-defined]
        if self.query("#auth-check"):  # mounted just after the first frame
            self._check_auth(_get(data, AUTH_FIELD))

    def refill(self) -> None:
        """Show the data again, with its problem marks (the lazy sections call this)."""
        self._fill()
        self.mark_problems(self._problems)

    def _set_widget(self, widget: Widget, path: FieldPath, data: dict[str, Any]) -> None:
        f: FieldSpec = widget.field_spec  # type: ignore[attr-defined]
        if isinstance(widget, Input):
            text = _input_text(f, path, data)
            if widget.value != text:
                with widget.prevent(Input.Changed):
                    widget.value = text
                if isinstance(widget, FieldInput):
                    widget.show_start()
        elif isinstance(widget, Switch):
            value = _field_value(f, path, data)
            flag = _switch_flag(f, path, data)
            widget.set_class(value is not None and not isinstance(value, bool), "-invalid")
            if widget.value != flag:
                with widget.prevent(Switch.Changed):
                    widget.value = flag
        elif isinstance(widget, EnumField):
            # Set quietly: an EnumField reports only what a person picks.
            widget.value = _enum_text(_field_value(f, path, data))

    def _check_auth(self, scopes: Any) -> None:
        note = self.query_one("#auth-check", Static)
        problems: list[str] = []
        for scope in scopes if isinstance(scopes, list) else []:
            match = AUTH_SCOPE_RE.match(str(scope))
            if not match:
                problems.append(f"{scope}: not provider.scope")
            elif match.group(1) not in AUTH_PROVIDERS:
                problems.append(f"{match.group(1)}: unknown provider")
        if problems:
            note.update(
                safe("; ".join(problems) + " (known: " + ", ".join(AUTH_PROVIDERS) + ")", "bold")
            )
            note.add_class("-problem")
        else:
            note.update(Text("providers: " + ", ".join(AUTH_PROVIDERS)))
            note.remove_class("-problem")

    def mark_problems(self, problems: dict[FieldPath, str]) -> None:
        """Tint the fields lint complains about, with the message as their tooltip."""
        self._problems = problems
        for widget in self.query(".-problem"):
            widget.remove_class("-problem")
            path = getattr(widget, "field_path", None)
            widget.tooltip = field_doc(doc_path(path)) if path else None
        for path, message in problems.items():
            target = self.widget_for(path)
            if target is None or getattr(target, "field_path", None) is None:
                continue
            target.add_class("-problem")
            doc = field_doc(doc_path(target.field_path))  # type: ignore[attr-defined]
            target.tooltip = message + (f"\n\n{doc}" if doc else "")

    # -- finding fields ----------------------------------------------------------------------

    def widget_for(self, path: FieldPath) -> Widget | None:
        """The widget showing a field, or its closest ancestor's."""
        p = tuple(path)
        while p:
            candidates = [p]
            if p[-1] == "items":
                candidates.append((*p, "type"))
            for c in candidates:
                found = self.query(f"#{path_id(c)}")
                if found:
                    return found.first()
            p = p[:-1]
        return None

    def focus_field(self, path: FieldPath) -> bool:
        widget = self.widget_for(path)
        if widget is None or not widget.focusable:
            return False
        widget.focus()
        widget.scroll_visible()
        return True

    # -- edits -------------------------------------------------------------------------------

    def _emit(self, path: FieldPath, value: Any, widget: Widget | None = None) -> None:
        # Only a person changes a field, and a person's field has the focus: value changes
        # without it come from mounting or from `load` and must never be written back.
        if widget is not None and not (widget.has_focus or widget.has_focus_within):
            return
        if not self.stale:
            self.post_message(self.Changed(path, value))

    @on(Input.Changed)
    def _input_changed(self, event: Input.Changed) -> None:
        event.stop()
        path = getattr(event.input, "field_path", None)
        if path is not None:
            self._emit(path, _typed_value(event.input.field_spec, event.value), event.input)  # type: ignore[attr-defined]

    @on(Switch.Changed)
    def _switch_changed(self, event: Switch.Changed) -> None:
        event.stop()
        path = getattr(event.switch, "field_path", None)
        if path is not None:
            self._emit(path, event.value, event.switch)

    @on(EnumField.Changed)
    def _enum_changed(self, event: EnumField.Changed) -> None:
        event.stop()
        path = getattr(event.field, "field_path", None)
        if path is None:
            return
        # An EnumField posts Changed only for a person's pick: no focus check needed (the
        # picker had the focus when the choice was made).
        if event.field.field_spec.widget == "type":  # type: ignore[attr-defined]
            self._emit(path[:-1], DELETE if event.value is None else {"type": event.value})
        elif event.value is not None:
            self._emit(path, event.value)

    @on(Button.Pressed)
    def _button(self, event: Button.Pressed) -> None:
        event.stop()
        bid = event.button.id or ""
        inputs = self.data.get("inputs")
        items = list(inputs) if isinstance(inputs, list) else []
        if bid == "input-add":
            taken = {i.get("name") for i in items if isinstance(i, dict)}
            n = len(items) + 1
            while f"arg{n}" in taken:
                n += 1
            # An empty description, its hint a placeholder: text typed there is all that is
            # written (a template sentence left in the field ran on into what was typed).
            items.append({"name": f"arg{n}", "type": "string", "description": ""})
            self._focus_after_rebuild = ("inputs", len(items) - 1, "name")
        elif bid.startswith(("input-up-", "input-down-", "input-remove-")):
            index = int(bid.rsplit("-", 1)[1])
            if not 0 <= index < len(items):
                return
            if bid.startswith("input-remove-"):
                del items[index]
            else:
                other = index - 1 if bid.startswith("input-up-") else index + 1
                if not 0 <= other < len(items):
                    return
                items[index], items[other] = items[other], items[index]
        else:
            return
        if self.stale:
            return
        # Build the next structural edit on this one, before the re-parse catches up (two
        # quick clicks on "add" make two inputs).
        self.data = {**self.data, "inputs": items}
        # The form now claims to show this data (the re-parse will find nothing to load), so
        # show it: a move keeps the card count, and its cards must swap their values now.
        self._fill()
        self._emit(("inputs",), items)

    # -- help --------------------------------------------------------------------------------

    @on(DescendantFocus)
    @on(DescendantBlur)
    def _focus_moved(self, event: DescendantFocus | DescendantBlur) -> None:
        # Settled after the move: a blur comes before the next focus, which may be outside the
        # form (the source pane, the problems), and the help of a field no longer focused must
        # not stay on screen.
        self.call_after_refresh(self._show_help)

    def _show_help(self) -> None:
        """The doc of the focused field, whole (it wraps), or nothing when no field is focused."""
        if not self.is_attached:
            return
        focused = self.screen.focused
        path = getattr(focused, "field_path", None) if focused is not None else None
        if path is not None and focused is not None and self not in focused.ancestors:
            path = None
        help_box = self.query_one("#field-help", Static)
        help_box.set_class(path is not None, "-shown")
        if path is None or focused is None:
            help_box.update("")
            return
        if focused.field_spec.widget == "type":  # type: ignore[attr-defined]
            path = path[:-1]  # the help of the field, not of its element type's own `type`
        name = doc_path(path)
        help_box.update(Content.assemble((name, "bold"), ": ", field_doc(name)))
        # The help line docks over the bottom of the form: keep the focused field above it.
        self.call_after_refresh(focused.scroll_visible, animate=False)
