"""`o` in the inbox: open the current call's tool file, in the desk when the inbox was opened
from it (asking before an unsaved tool is left), else read-only. A part of the inbox screen, as
claims, batch and history are."""

from __future__ import annotations

from patch_tui.ui.desk.host import desk_editor
from patch_tui.ui.inbox.detail import app_catalog, tool_info
from patch_tui.ui.inbox.parts import InboxParts


class SourcePart(InboxParts):
    def action_open_source(self) -> None:
        action = self.current
        if action is None:
            return
        info = tool_info(action, app_catalog(self))
        if info.path is None or not info.path.is_file():
            self.notify(
                info.problem or "The tool file is not known", severity="warning", markup=False
            )
            return
        editor = desk_editor(self.app)
        if editor is None:  # `patch-tui inbox` alone: show it read-only
            from patch_tui.ui.inbox.inbox_dialogs import SourceModal

            try:
                text = info.path.read_bytes().decode("utf-8", errors="replace")
            except OSError as exc:
                self.notify(
                    f"Cannot read {info.path}: {exc.strerror or exc}",
                    severity="error",
                    markup=False,
                )
                return
            self.app.push_screen(SourceModal(str(info.path), text))
            return
        path = info.path

        def show() -> None:
            editor.open_tool(path)
            while self.app.screen is not editor and len(self.app.screen_stack) > 1:
                self.app.pop_screen()

        editor.confirm_discard(show, what="opening a tool from the inbox")
