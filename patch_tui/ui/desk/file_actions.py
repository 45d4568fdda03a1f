"""Saving the open tool, and what else touches its file: a new version, an earlier version
restored, the file opened in $EDITOR, the source copied.

Saving never loses work: the sha256 of the bytes loaded is compared with the disk's before every
save (`Toolbox.save_tool`); other bytes on disk open the conflict dialog instead of overwriting.
A restore keeps the current text in the history folder first, and is one undoable edit.

`FileActions` is a part of the desk's screen (a mixin): it uses the screen's buffer, source pane
and tool list.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.widgets import TextArea

from patch_tui.format import toolfile
from patch_tui.runtime.toolbox import FileChangedOnDisk, Toolbox, ToolboxError, file_sha256

if TYPE_CHECKING:
    from textual.app import App

    from patch_tui.desk.buffer import ToolBuffer
    from patch_tui.ui.desk.source_pane import SourceArea
    from patch_tui.ui.desk.tool_browser import ToolBrowser


class FileActions:
    """The desk screen's part that writes the open file (see the module docstring)."""

    if TYPE_CHECKING:
        app: App[Any]
        toolbox: Toolbox
        buffer: ToolBuffer
        dirty: bool

        @property
        def current_path(self) -> Path | None: ...
        @property
        def loaded_sha(self) -> str | None: ...
        @property
        def read_only_reason(self) -> str | None: ...

        @property
        def source(self) -> SourceArea: ...
        @property
        def browser(self) -> ToolBrowser: ...
        def _say(self, message: str, **kwargs: Any) -> None: ...
        def _hide_banner(self) -> None: ...
        def _ask_conflict(self, *, saving: bool, disk_sha: str | None = None) -> None: ...
        def _start_lint(self) -> None: ...
        def reload_from_disk(self) -> None: ...

    def action_save(self) -> None:
        self.save()

    def save(self, *, overwrite: bool = False) -> bool:
        """Save the buffer. Returns True when saved; a conflict opens the dialog instead."""
        if self.current_path is None:
            return False
        if self.read_only_reason:
            self._say(f"Not saved: {self.read_only_reason}", severity="error")
            return False
        text = self.source.text
        try:
            result = self.toolbox.save_tool(
                self.current_path,
                self.buffer.to_bytes(text),
                expected_sha256=None if overwrite else self.loaded_sha,
            )
        except FileChangedOnDisk as exc:
            self._ask_conflict(saving=True, disk_sha=exc.actual)
            return False
        except ToolboxError as exc:
            # The tool itself may be saved (an index problem): say exactly what happened.
            self._say(str(exc), severity="error", title="Save")
            self._mark_saved(text, file_sha256(self.current_path))
            return False
        except OSError as exc:
            self._say(f"Not saved: {exc.strerror or exc}", severity="error", title="Save")
            return False
        self._mark_saved(text, result.sha256)
        extra = " and index.json" if result.index_updated else ""
        self._say(f"Saved {self.current_path.name}{extra}", title="Save")
        return True

    def _mark_saved(self, text: str, sha: str | None) -> None:
        self.buffer.mark_saved(text, sha)
        self.dirty = self.source.text != text
        self._hide_banner()
        self.browser.refresh_tools()

    def action_save_version(self) -> None:
        if self.current_path is None or self.read_only_reason:
            return
        data = self.buffer.manifest_data
        version = str(data.get("version", "?")) if data is not None else "?"

        def chosen(part: str | None) -> None:
            if part in ("patch", "minor", "major"):
                self.save_new_version(part)

        from patch_tui.ui.dialogs.confirm import ChoiceModal  # loaded with the first dialog

        self.app.push_screen(
            ChoiceModal(
                f"Keep version {version} in the history and save this as a new version.",
                [
                    ("patch", "Patch", "p"),
                    ("minor", "Minor", "m"),
                    ("major", "Major", "M"),
                    ("cancel", "Cancel", "c"),
                ],
                title="Save as new version",
                focus="patch",
            ),
            chosen,
        )

    def save_new_version(self, part: str) -> bool:
        assert self.current_path is not None
        text = self.source.text
        try:
            result = self.toolbox.save_new_version(
                self.current_path,
                self.buffer.to_bytes(text),
                part,  # type: ignore[arg-type]
                expected_sha256=self.loaded_sha,
            )
        except FileChangedOnDisk:
            self._ask_conflict(saving=True)
            return False
        except (ToolboxError, OSError) as exc:
            self._say(str(exc), severity="error", title="New version")
            return False
        new_text = self.current_path.read_bytes().decode("utf-8").removeprefix(toolfile.BOM)
        self._replace_all(new_text)
        self._mark_saved(new_text, result.sha256)
        self._start_lint()  # the form shows the new version
        kept = f"; {result.history_path.name} kept in the history" if result.history_path else ""
        self._say(f"Version {result.version} saved{kept}", title="New version")
        return True

    def _replace_all(self, text: str) -> None:
        """Put new text in the source as one undoable edit (reload, new version)."""
        source = self.source
        self.buffer.text = text
        if source.text == text:
            return
        cursor = source.cursor_location
        # Callers set `dirty`, the form and the lint themselves: no Changed, so no late
        # "dirty" from a message processed after them.
        with source.prevent(TextArea.Changed):
            source.replace_as(object(), text, (0, 0), source.document.end)
        row = min(cursor[0], source.document.line_count - 1)
        source.cursor_location = (row, min(cursor[1], len(source.document.get_line(row))))

    def action_open_in_editor(self) -> None:
        if self.current_path is None:
            return
        if self.dirty:
            self._say(
                "Save first (ctrl+s): the other editor opens the file on disk", severity="warning"
            )
            return
        import shlex  # only here: the desk's first frame does not import it

        editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
        try:
            with self.app.suspend():
                subprocess.call([*shlex.split(editor), str(self.current_path)])
        except Exception as exc:  # headless, or the editor cannot start
            self._say(f"Cannot open {editor}: {exc}", severity="error")
            return
        self.app.refresh()
        if file_sha256(self.current_path) != self.loaded_sha:
            self.reload_from_disk()

    def action_copy_source(self) -> None:
        text = self.source.text
        self.app.copy_to_clipboard(text)
        self._say(f"Copied {text.count(chr(10)) + 1} lines (OSC 52)", title="Copy")

    def action_history(self) -> None:
        from patch_tui.ui.desk.history import HistoryScreen

        if self.current_path is None:
            return
        name = self.current_path.stem
        data = self.buffer.manifest_data
        if data is not None and isinstance(data.get("name"), str):
            name = data["name"]
        self.app.push_screen(
            HistoryScreen(name, self.toolbox.history(name), self.source.text), self._restore_asked
        )

    def _restore_asked(self, version: Path | None) -> None:
        if version is None or self.current_path is None:
            return
        if self.read_only_reason:
            self._say(f"Not restored: {self.read_only_reason}", severity="error")
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.restore_version(version)

        from patch_tui.ui.dialogs.confirm import ConfirmModal  # loaded with the first dialog

        self.app.push_screen(
            ConfirmModal(
                f"Replace the text with version {version.stem}? The current text is kept in the history first, and ctrl+z undoes the restore.",
                title="Restore version",
                yes="Restore",
            ),
            answered,
        )

    def restore_version(self, version: Path) -> bool:
        """Put an earlier version in the source as one undoable edit (not saved), after keeping
        the current text in the history folder: nothing is lost either way."""
        from patch_tui.runtime.toolbox import atomic_write

        try:
            old = version.read_bytes().decode("utf-8").removeprefix(toolfile.BOM)
        except (OSError, UnicodeDecodeError) as exc:
            self._say(f"Cannot read {version.name}: {exc}", severity="error")
            return False
        current = self.source.text
        if old == current:
            self._say(f"Version {version.stem} is the text you have", title="Restore")
            return False
        kept = self.buffer.kept_version_name(version.parent)
        try:
            atomic_write(kept, self.buffer.to_bytes(current))
        except OSError as exc:
            self._say(
                f"Not restored: cannot keep the current text ({exc.strerror or exc})",
                severity="error",
            )
            return False
        self.source.replace_as(object(), old, (0, 0), self.source.document.end)
        self._say(
            f"Restored version {version.stem} (not saved yet: ctrl+s saves, ctrl+z undoes); your text is kept as {kept.stem}",
            title="Restore",
        )
        return True
