"""The desk's view keys: show or hide the tool list, form or source, soft wrap, Tab in the form.

`ViewActions` is a part of the desk's screen (a mixin): it changes the screen's one layout
reactive (`DeskLayout`, ui/desk/layout.py) and moves the focus.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.actions import SkipAction

if TYPE_CHECKING:
    from patch_tui.ui.desk.layout import DeskLayout
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
        def _set_layout(self, **changes: Any) -> None: ...
        def _say(self, message: str, **kwargs: Any) -> None: ...

    def action_toggle_browser(self) -> None:
        wanted = not self.browser.display
        # Asked for explicitly: show it even when narrow.
        tiny = self.desk_layout.tiny and not wanted
        self._set_layout(browser_wanted=wanted, tiny=tiny)
        if self.browser.display:
            self.browser.query_one("#browser-filter").focus()

    def action_form_tab(self, step: int) -> None:
        """Tab between form fields, as a priority binding: a non-priority Tab is handled in the
        focused field's message queue, after the app has already sent the keys typed right
        behind it to that same field (a fast burst after Tab landed in the previous field).
        Here the focus moves before the next key is read. Elsewhere Tab does what it does."""
        screen: Any = self  # the Screen this part belongs to
        focused = screen.focused
        if focused is None or not (focused is self.form or self.form in focused.ancestors):
            raise SkipAction()
        screen.focus_next() if step > 0 else screen.focus_previous()

    def action_toggle_wrap(self) -> None:
        """Soft wrap in the source pane (on by default: no line hides past the right edge)."""
        self.source.soft_wrap = not self.source.soft_wrap
        self._say(f"Soft wrap {'on' if self.source.soft_wrap else 'off'} (alt+z)", title="Source")

    def action_toggle_view(self) -> None:
        view = "source" if self.desk_layout.view == "form" else "form"
        self._set_layout(view=view)
        (self.source if view == "source" else self.form).focus()
