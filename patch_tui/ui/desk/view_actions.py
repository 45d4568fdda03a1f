"""The desk's view keys: show or hide the tool list, form or source, soft wrap, Tab from pane to pane.

`ViewActions` is a part of the desk's screen (a mixin): it changes the screen's one layout
reactive (`DeskLayout`, ui/desk/layout.py) and moves the focus.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from textual.widget import Widget

    from patch_tui.ui.desk.layout import DeskLayout
    from patch_tui.ui.desk.lint_panel import LintPanel
    from patch_tui.ui.desk.manifest_form import ManifestForm
    from patch_tui.ui.desk.source_pane import SourceArea
    from patch_tui.ui.desk.tool_browser import ToolBrowser


class ViewActions:
    """The desk screen's part that answers the view keys."""

    if TYPE_CHECKING:
        desk_layout: DeskLayout

        @property
        def browser(self) -> ToolBrowser: ...
        @property
        def form(self) -> ManifestForm: ...
        @property
        def source(self) -> SourceArea: ...
        @property
        def lint_panel(self) -> LintPanel: ...
        def _set_layout(self, **changes: Any) -> None: ...
        def _shown(self, widget: Widget) -> bool: ...
        def _say(self, message: str, **kwargs: Any) -> None: ...

    def action_toggle_browser(self) -> None:
        wanted = not self.browser.display
        # Asked for explicitly: show it even when narrow.
        tiny = self.desk_layout.tiny and not wanted
        self._set_layout(browser_wanted=wanted, tiny=tiny)
        if self.browser.display:
            self.browser.query_one("#browser-filter").focus()

    def action_cycle_focus(self, step: int) -> None:
        """Tab / shift+Tab: the next (previous) field in the form, else the next visible pane
        (tool list, form, source, problems, round again). In the source pane Tab indents while
        text is selected or the cursor stands in a line's indentation (source_pane.py
        `tab_indents`); elsewhere there it leaves the pane, so the pane is never a trap.

        A priority binding: a non-priority Tab is handled in the focused field's message queue,
        after the app has already sent the keys typed right behind it to that same field (a fast
        burst after Tab landed in the previous field). Here the focus moves before the next key
        is read."""
        screen: Any = self  # the Screen this part belongs to
        focused = screen.focused
        if focused is None:
            self._focus_pane(self._panes()[0] if step > 0 else self._panes()[-1], step)
            return
        if focused is self.source and self.source.tab_indents(step):
            self.source.indent_or_dedent(step)
            return
        panes = self._panes()
        current = self._pane_of(focused)
        if current == "form" and self._move_in_form(focused, step):
            return
        if current not in panes:
            self._focus_pane(panes[0], step)
            return
        self._focus_pane(panes[(panes.index(current) + step) % len(panes)], step)

    def action_leave_pane(self) -> None:
        """Esc: the next visible pane, from anywhere in this one."""
        screen: Any = self
        panes = self._panes()
        current = self._pane_of(screen.focused) if screen.focused is not None else None
        nxt = panes[(panes.index(current) + 1) % len(panes)] if current in panes else panes[0]
        self._focus_pane(nxt, 1)

    def _panes(self) -> list[str]:
        """The desk's panes a person can see right now, in Tab's order."""
        order = [
            ("browser", self.browser),
            ("form", self.form),
            ("source", self.source),
            ("lint", self.lint_panel),
        ]
        return [name for name, widget in order if self._shown(widget)] or ["browser"]

    def _pane_of(self, widget: Widget) -> str | None:
        for name, pane in (
            ("browser", self.browser),
            ("form", self.form),
            ("source", self.source),
            ("lint", self.lint_panel),
        ):
            if widget is pane or pane in widget.ancestors:
                return name
        return None

    def _form_fields(self) -> list[Widget]:
        return [w for w in self.form.query("*") if w.focusable and self._shown(w)]

    def _move_in_form(self, focused: Widget, step: int) -> bool:
        """The next field of the form; False at its end (Tab then leaves the form)."""
        fields = self._form_fields()
        if focused is self.form:
            index = -1 if step > 0 else len(fields)
        elif focused in fields:
            index = fields.index(focused)
        else:
            return False
        index += step
        if 0 <= index < len(fields):
            self._set_focus(fields[index])
            return True
        return False

    def _set_focus(self, widget: Widget) -> None:
        # At once, not after a refresh (Widget.focus): the keys typed right behind Tab must land
        # in the widget it moved to.
        screen: Any = self
        screen.set_focus(widget)

    def _focus_pane(self, name: str, step: int) -> None:
        if name == "browser":
            self._set_focus(self.browser.query_one("#browser-list"))
        elif name == "form":
            fields = self._form_fields()
            # Coming back with shift+Tab lands on the form's last field, as in any form.
            self._set_focus(fields[0 if step > 0 else -1] if fields else self.form)
        elif name == "source":
            self._set_focus(self.source)
        else:
            self._set_focus(self.lint_panel)

    def action_toggle_wrap(self) -> None:
        """Soft wrap in the source pane (on by default: no line hides past the right edge)."""
        self.source.soft_wrap = not self.source.soft_wrap
        self._say(f"Soft wrap {'on' if self.source.soft_wrap else 'off'} (alt+z)", title="Source")

    def action_toggle_view(self) -> None:
        view = "source" if self.desk_layout.view == "form" else "form"
        self._set_layout(view=view)
        (self.source if view == "source" else self.form).focus()
