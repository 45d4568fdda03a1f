"""Managing tools from the desk: new, rename, duplicate, delete, and "unsaved edits?" first.

Each asks in a dialog, then calls the toolbox (which keeps index.json in step); an error is one
line, never a traceback. Switching away from unsaved edits always asks Save / Discard / Cancel.

`ToolActions` is a part of the desk's screen (a mixin): it uses the screen's toolbox, tool list
and open file.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from patch_tui.runtime.toolbox import Toolbox, ToolboxError

if TYPE_CHECKING:
    from textual.app import App

    from patch_tui.ui.desk.tool_browser import ToolBrowser


class ToolActions:
    """The desk screen's part that creates, renames, duplicates and deletes tools."""

    if TYPE_CHECKING:
        app: App[Any]
        toolbox: Toolbox
        dirty: bool
        _select_template_of: Path | None

        @property
        def current_path(self) -> Path | None: ...

        @property
        def browser(self) -> ToolBrowser: ...
        def _say(self, message: str, **kwargs: Any) -> None: ...
        def open_tool(self, path: Path) -> None: ...
        def save(self, *, overwrite: bool = False) -> bool: ...
        def _close_tool(self) -> None: ...

    def confirm_discard(
        self,
        then: Callable[[], None],
        *,
        what: str = "switching",
        title: str | None = None,
        labels: tuple[str, str] = ("Save", "Discard"),
    ) -> None:
        """Run `then` once unsaved edits are saved or knowingly dropped. `labels` name the
        save and discard choices (quitting says "Save and quit", "Quit without saving")."""
        if not self.dirty or self.current_path is None:
            then()
            return

        def decided(choice: str | None) -> None:
            if choice == "save":
                if self.save():
                    then()
            elif choice == "discard":
                then()

        save, discard = labels
        from patch_tui.ui.dialogs.confirm import ChoiceModal  # loaded with the first dialog

        self.app.push_screen(
            ChoiceModal(
                f"{self.current_path.name} has unsaved changes.",
                [("save", save, "s"), ("discard", discard, "d"), ("cancel", "Cancel", "c")],
                title=title or f"Unsaved changes ({what})",
                focus="cancel",
            ),
            decided,
        )

    def _tool_action(self, action: str, path: Path | None) -> None:
        """A command from the tool list."""
        {
            "new": lambda: self.action_new_tool(),
            "rename": lambda: self._rename(path),
            "duplicate": lambda: self._duplicate(path),
            "delete": lambda: self._delete(path),
        }[action]()

    def _name_check(self, name: str) -> str | None:
        """Why a new tool cannot have this name, offering the snake_case one it probably means."""
        from patch_tui.format.fields import NAME_RE, name_hint

        if not NAME_RE.match(name):
            return name_hint(name)
        if self.toolbox.find(name) is not None:
            return f"a tool named {name} already exists"
        return None

    def action_new_tool(self) -> None:
        def named(name: str | None) -> None:
            if not name:
                return
            try:
                path = self.toolbox.create_tool(name)
            except (ToolboxError, OSError) as exc:
                self._say(str(exc), severity="error")
                return
            self.browser.clear_filter()  # an active filter would hide the new tool
            self.browser.refresh_tools()
            self._select_template_of = path  # its description: selected, to be typed over
            self.confirm_discard(lambda: self.open_tool(path))

        from patch_tui.ui.dialogs.confirm import PromptModal  # loaded with the first dialog

        self.app.push_screen(
            PromptModal(
                "The new tool's name (snake_case):", title="New tool", check=self._name_check
            ),
            named,
        )

    def _rename(self, path: Path | None) -> None:
        if path is None:
            return
        if path == self.current_path and self.dirty:
            self._say("Save or discard your edits before renaming", severity="warning")
            return

        def named(name: str | None) -> None:
            if not name:
                return
            if name == path.stem:
                self._say(f"{name}: same name, nothing to rename", title="Rename")
                return
            try:
                new = self.toolbox.rename_tool(path, name)
            except (ToolboxError, OSError) as exc:
                self._say(str(exc), severity="error")
                return
            self.browser.refresh_tools()
            if path == self.current_path:
                self.open_tool(new)

        from patch_tui.ui.dialogs.confirm import PromptModal  # loaded with the first dialog

        self.app.push_screen(
            PromptModal(
                f"New name for {path.stem}:",
                title="Rename tool",
                value=path.stem,
                # The same name is no clash with another tool: it is a no-op.
                check=lambda name: None if name == path.stem else self._name_check(name),
            ),
            named,
        )

    def _duplicate(self, path: Path | None) -> None:
        if path is None:
            return

        def named(name: str | None) -> None:
            if not name:
                return
            try:
                new = self.toolbox.duplicate_tool(path, name)
            except (ToolboxError, OSError) as exc:
                self._say(str(exc), severity="error")
                return
            self.browser.clear_filter()
            self.browser.refresh_tools()
            self.confirm_discard(lambda: self.open_tool(new))

        from patch_tui.ui.dialogs.confirm import PromptModal  # loaded with the first dialog

        self.app.push_screen(
            PromptModal(
                f"Name of the copy of {path.stem}:",
                title="Duplicate tool",
                value=f"{path.stem}_copy",
                check=self._name_check,
            ),
            named,
        )

    def _delete(self, path: Path | None) -> None:
        if path is None:
            return

        # The list as the person sees it: after a delete, its neighbour opens (the next one,
        # or the one before at the end of the list), not the first tool.
        shown = [e.path for e in self.browser.entries]

        def answered(yes: bool | None) -> None:
            if not yes:
                return
            try:
                where = self.toolbox.delete_tool(path)
            except (ToolboxError, OSError) as exc:
                self._say(str(exc), severity="error")
                return
            self._say(f"Moved to {where}", title="Deleted")
            self.browser.refresh_tools()
            if path == self.current_path:
                try:
                    rest = self.toolbox.tool_paths()
                except ToolboxError as exc:
                    self._say(str(exc), severity="error")
                    rest = []
                if rest:
                    self.open_tool(_neighbour(shown, path, rest))
                else:
                    self._close_tool()

        from patch_tui.ui.dialogs.confirm import ConfirmModal  # loaded with the first dialog

        self.app.push_screen(
            ConfirmModal(
                f"Delete {path.name}? It moves to the toolbox's {self.toolbox.trash_dir.name} folder; nothing is erased.",
                title="Delete tool",
                yes="Delete",
                destructive=True,
            ),
            answered,
        )


def _neighbour(shown: list[Path], gone: Path, rest: list[Path]) -> Path:
    """The tool next to `gone` in the list as shown (after it, else before it), among `rest`."""
    if gone in shown:
        at = shown.index(gone)
        for candidate in [*shown[at + 1 :], *reversed(shown[:at])]:
            if candidate in rest:
                return candidate
    return rest[0]
