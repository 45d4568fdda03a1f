"""Try it's input rows: one labelled field per manifest input, checked as typed.

Strings and numbers are text fields, booleans a true/false choice, arrays and objects JSON
fields; `InputField.value()` returns (present, value, error). The inbox's edit-args dialog uses
the same rows.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any, cast

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Input, Select, Static, TextArea

from patch_tui.ui.safe_text import SafeInput, safe, safe_line

if TYPE_CHECKING:  # the inbox's edit dialog builds its rows from a run's reading, no pydantic
    from patch_tui.format import manifest, plain_manifest

    ManifestInput = manifest.Input | plain_manifest.Input


def _type_ok(value: Any, kind: str) -> bool:
    if kind == "array":
        return isinstance(value, list)
    if kind == "object":
        return isinstance(value, dict)
    return True


class InputField(Vertical):
    """A labelled field for one manifest input; `value()` returns (present, value, error)."""

    DEFAULT_CSS = """
    InputField { height: auto; margin-bottom: 1; }
    InputField .field-label { height: auto; }
    InputField .field-error { color: $text-error; height: auto; }
    InputField TextArea { height: 5; }
    """

    def __init__(self, spec: ManifestInput) -> None:
        super().__init__(id=f"field-{spec.name}")
        self.spec = spec

    def compose(self) -> ComposeResult:
        spec = self.spec
        label = Content.assemble(
            safe_line(spec.name, "bold"),
            (f"  {spec.type}", "$text-accent"),
            (
                "  required" if spec.required and not spec.has_default else "  optional",
                "$text-muted",
            ),
        )
        if spec.type == "array" and spec.items is not None:
            label = label + Content.styled(f" of {spec.items.type}", "$text-accent")
        if spec.description:
            label = Content.assemble(label, "\n", safe(spec.description, "$text-muted"))
        yield Static(label, classes="field-label")
        yield self._widget()
        yield Static("", classes="field-error")

    def _widget(self) -> Widget:
        spec = self.spec
        wid = f"in-{spec.name}"
        if spec.type == "boolean":
            # Blank allowed even when required: a required flag must be chosen, not defaulted to
            # whichever option comes first.
            return Select(
                [("true", True), ("false", False)], allow_blank=True, id=wid, prompt="(not given)"
            )
        if spec.type in ("array", "object"):
            return TextArea("", id=wid, soft_wrap=True, tab_behavior="focus")
        kind = {"integer": "integer", "number": "number"}.get(spec.type, "text")
        placeholder = "(not given)" if not spec.required or spec.has_default else ""
        return SafeInput("", id=wid, type=kind, placeholder=placeholder)  # type: ignore[arg-type]

    @property
    def widget(self) -> Widget:
        return self.query_one(f"#in-{self.spec.name}")

    def set_value(self, present: bool, value: Any) -> None:
        w = self.widget
        if isinstance(w, Select):
            if present and isinstance(value, bool):
                w.value = value
            else:
                w.clear()
        elif isinstance(w, TextArea):
            w.load_text(json.dumps(value, ensure_ascii=False, indent=2) if present else "")
        elif isinstance(w, Input):
            if not present or value is None:
                w.value = ""
            elif isinstance(value, str):
                w.value = value
            else:
                w.value = json.dumps(value, ensure_ascii=False)

    def value(self) -> tuple[bool, Any, str | None]:
        spec = self.spec
        optional = not spec.required or spec.has_default
        w = self.widget
        if isinstance(w, Select):
            v = w.value
            if isinstance(v, bool):
                return True, v, None
            return (False, None, None) if optional else (False, None, "choose true or false")
        if isinstance(w, TextArea):
            text = w.text.strip()
            if not text:
                return (
                    (False, None, None)
                    if optional
                    else (False, None, f"a JSON {spec.type} is required")
                )
            try:
                parsed = json.loads(text)
            except ValueError as exc:
                return False, None, f"not JSON: {exc}"
            if not _type_ok(parsed, spec.type):
                return False, None, f"expected a JSON {spec.type}"
            return True, parsed, None
        assert isinstance(w, Input)
        text = w.value
        if spec.type in ("integer", "number"):
            if not text.strip():
                return (
                    (False, None, None) if optional else (False, None, f"a {spec.type} is required")
                )
            try:
                num: float | int = int(text) if spec.type == "integer" else float(text)
            except ValueError:
                return False, None, f"not a{'n integer' if spec.type == 'integer' else ' number'}"
            if isinstance(num, float) and not math.isfinite(num):
                return False, None, "must be a finite number"
            if (
                isinstance(num, float)
                and num.is_integer()
                and "." not in text
                and "e" not in text.lower()
            ):
                num = int(num)
            return True, num, None
        if not text and optional:
            return False, None, None
        return True, text, None

    @on(TextArea.Changed)
    @on(Input.Changed)
    def _check_as_typed(self, event: TextArea.Changed | Input.Changed) -> None:
        # JSON and number fields say what is wrong while typing, not only at run time. A field
        # left empty is not nagged about until the run.
        event.stop()
        if self.spec.type in ("array", "object", "integer", "number"):
            _present, _value, error = self.value()
            widget = self.widget
            empty = not (
                widget.text if isinstance(widget, TextArea) else cast(Input, widget).value
            ).strip()
            self.show_error(None if empty else error)

    def show_error(self, error: str | None) -> None:
        self.query_one(".field-error", Static).update(safe_line(error) if error else "")


# -- the screen ---------------------------------------------------------------------------------
