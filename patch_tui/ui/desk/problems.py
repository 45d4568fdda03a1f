"""Quick fixes and moving between problems on the desk.

A fix is applied to the source pane as one undoable step; when the text moved on since the lint
that found the problem, the buffer finds the same problem in the current text first (or says it
is gone).

`ProblemActions` is a part of the desk's screen (a mixin): it uses the screen's buffer, source
pane and lint panel.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text

from patch_tui.format.templates import template_text
from patch_tui.ui.desk.lint_panel import LintPanel
from patch_tui.ui.widgets.field_input import FieldInput
from patch_tui.untrusted.text_safety import visible

if TYPE_CHECKING:
    from patch_tui.desk.buffer import ToolBuffer
    from patch_tui.lint.diagnostic import Diagnostic, Edit
    from patch_tui.ui.desk.manifest_form import ManifestForm
    from patch_tui.ui.desk.source_pane import SourceArea


def is_template_text(d: Diagnostic) -> bool:
    """A PT052 problem: template text in a description, which `f` selects in the form. (The rule
    is imported when a problem is looked at, not with the desk: the rules load with the lint.)"""
    from patch_tui.lint.rules.text.template_text import PT052

    return d.code == PT052.code


def problem_detail(d: Diagnostic) -> Text:
    """The line under the problems table: the whole message (the table cuts long ones) and what
    `f` does with it."""
    text = Text()
    text.append(f"{d.code} {d.line}:{d.column}  ", style="bold")
    text.append(visible(d.message))
    if d.fix is not None:
        text.append(f"  · f: {visible(d.fix.title)}", style="italic")
    elif is_template_text(d) and d.field:
        text.append("  · Enter or f: select it in the form, then type", style="italic")
    return text


class ProblemActions:
    """The desk screen's part that fixes problems and moves between them."""

    if TYPE_CHECKING:
        buffer: ToolBuffer

        @property
        def read_only_reason(self) -> str | None: ...
        @property
        def diagnostics(self) -> list[Diagnostic]: ...

        @property
        def source(self) -> SourceArea: ...
        @property
        def lint_panel(self) -> LintPanel: ...
        def _say(self, message: str, **kwargs: Any) -> None: ...
        def _show_buffer_text(self) -> None: ...
        def post_message(self, message: Any) -> bool: ...
        @property
        def form(self) -> ManifestForm: ...
        def _set_layout(self, **changes: Any) -> None: ...

    def apply_fix(self, diagnostic: Diagnostic) -> bool:
        """Apply a diagnostic's quick fix through the TextArea (one undo step). Template text
        (PT052) has no text edit for a fix: what replaces it is the person's to write, so its
        "fix" selects it in the form's field."""
        if diagnostic.fix is None:
            if is_template_text(diagnostic) and diagnostic.field:
                return self.select_template_text(diagnostic.field)
            return False
        if self.read_only_reason:
            return self._fix_read_only(diagnostic)
        self.buffer.text = self.source.text
        # The text may have moved on since that lint: the same problem in the current text.
        found = self.buffer.current_fix(diagnostic)
        if found is None or found.fix is None:
            self._say(f"{diagnostic.code} is already gone", severity="information")
            return False
        self.apply_edits(found.fix.edits)
        self._say(f"Fixed: {found.fix.title}", title=found.code)
        return True

    def _fix_read_only(self, diagnostic: Diagnostic) -> bool:
        """A read-only file takes one fix: PT027's, which ends its lone \\r's (all of them, so
        the editor can show the text as the runtime reads it) and makes it editable."""
        from patch_tui.lint.rules.structure.lone_cr import PT027  # the rules load with the lint

        if diagnostic.code != PT027.code or not (count := self.buffer.end_lone_carriage_returns()):
            self._say(f"Read-only: {self.read_only_reason}", severity="warning")
            return False
        self._show_buffer_text()
        self._say(
            f"Turned {count} lone carriage return{'s' if count != 1 else ''} into line ends: "
            "the file is editable now (not saved yet)",
            title=diagnostic.code,
        )
        return True

    def apply_edits(self, edits: tuple[Edit, ...] | list[Edit]) -> None:
        group = object()  # every edit of one fix undoes as one step
        for e in self.buffer.text_edits(edits):
            self.source.replace_as(group, e.text, e.start, e.end)

    def select_template_text(self, field: tuple[str | int, ...]) -> bool:
        """Focus a description field of the form with its template text selected (PT052), so
        typing replaces it. False when the form cannot show it."""
        if self.form.stale or self.form.widget_for(field) is None:
            return False
        self._set_layout(view="form")
        widget = self.form.widget_for(field)
        found = template_text(widget.value) if isinstance(widget, FieldInput) else None
        if isinstance(widget, FieldInput) and found is not None:
            widget.select_span(found[0], found[1])
        return self.form.focus_field(field)

    def action_apply_fix(self) -> None:
        """Fix the selected problem in the lint panel, or the first fixable one at the cursor."""
        panel = self.lint_panel
        target = panel.current if panel.has_focus else None
        if target is not None and is_template_text(target):
            self.apply_fix(target)
            return
        if target is None or target.fix is None:
            row = self.source.cursor_location[0] + 1
            fixable = [d for d in self.diagnostics if d.fix is not None]
            here = [d for d in fixable if d.span.line <= row <= d.span.end_line]
            target = (here or fixable)[0] if (here or fixable) else None
        if target is None:
            self._say("Nothing to fix here")
            return
        self.apply_fix(target)

    def action_focus_lint(self) -> None:
        self.lint_panel.focus()

    def action_next_problem(self) -> None:
        if not self.diagnostics:
            self._say("No problems")
            return
        row = self.source.cursor_location[0] + 1
        after = [d for d in self.diagnostics if d.span.line > row]
        target = (after or self.diagnostics)[0]
        self.post_message(LintPanel.Jump(target, to_source=True))
