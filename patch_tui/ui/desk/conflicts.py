"""The open file changed on disk: follow it, or ask (banner and conflict dialog).

A clean buffer follows the disk silently; unsaved edits get a non-blocking banner (Reload / Keep
mine / Diff); a save that finds other bytes on disk than were loaded opens the conflict dialog.
Nothing is decided for the person, and nothing they wrote is lost: a reload is one undoable edit.

`ConflictHandling` is a part of the desk's screen (a mixin): it uses the screen's buffer,
source pane and tool list.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.containers import Horizontal
from textual.content import Content
from textual.message import Message
from textual.widgets import Button, Static

from patch_tui.runtime.toolbox import file_sha256
from patch_tui.ui.safe_text import safe_line

if TYPE_CHECKING:
    from textual.app import App

    from patch_tui.desk.buffer import ToolBuffer
    from patch_tui.ui.desk.source_pane import SourceArea
    from patch_tui.ui.desk.tool_browser import ToolBrowser


class ChangeBanner(Horizontal):
    """The non-blocking notice that the open file changed on disk under unsaved edits, with
    Reload / Keep mine / Diff. Its widgets are built the first time it shows: most sessions
    never need it, and every widget costs start-up time."""

    class Chosen(Message):
        """A banner button was pressed: "reload", "keep" or "diff"."""

        def __init__(self, choice: str) -> None:
            self.choice = choice
            super().__init__()

    def show(self, text: Content, *, deleted: bool) -> None:
        if not self.children:
            self.mount_all(
                [
                    Static("", id="banner-text"),
                    Button("Reload", id="banner-reload", compact=True),
                    Button("Keep mine", id="banner-keep", compact=True),
                    Button("Diff", id="banner-diff", compact=True),
                ]
            )
        self.query_one("#banner-text", Static).update(text)
        # A deleted file has nothing to reload or diff against.
        self.query_one("#banner-reload", Button).display = not deleted
        self.query_one("#banner-diff", Button).display = not deleted
        self.add_class("-shown")

    def hide(self) -> None:
        self.remove_class("-shown")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        choice = (event.button.id or "").removeprefix("banner-")
        if choice in ("reload", "keep", "diff"):
            self.post_message(self.Chosen(choice))


class ConflictHandling:
    """The desk screen's part that follows the disk (see the module docstring)."""

    if TYPE_CHECKING:
        app: App[Any]
        buffer: ToolBuffer
        dirty: bool

        @property
        def current_path(self) -> Path | None: ...

        @property
        def source(self) -> SourceArea: ...
        @property
        def browser(self) -> ToolBrowser: ...
        def query_one(self, selector: Any, expect_type: Any = None) -> Any: ...
        def _say(self, message: str, **kwargs: Any) -> None: ...
        def open_tool(self, path: Path) -> None: ...
        def save(self, *, overwrite: bool = False) -> bool: ...
        def _replace_all(self, text: str) -> None: ...
        def _load_form(self, tf: Any, *, fresh: bool = False) -> None: ...
        def _start_lint(self) -> None: ...

    def on_file_changed_outside(self, path: Path) -> None:
        """The watcher saw `path` change (or vanish) outside the app."""
        if self.current_path is None or os.path.realpath(path) != os.path.realpath(
            self.current_path
        ):
            self.on_tools_changed()
            return
        disk_sha = file_sha256(self.current_path)
        if disk_sha == self.buffer.disk_sha:
            return  # same bytes as we know: not a change (e.g. our own save)
        if disk_sha is None:
            self._show_banner(
                "was deleted on disk; save (ctrl+s) to keep your version", deleted=True
            )
            self.browser.refresh_tools()
            return
        if not self.dirty and self.source.text == self.buffer.saved_text:
            self.reload_from_disk()
            self._say(f"{self.current_path.name} changed on disk: reloaded", title="Reloaded")
        else:
            self._show_banner("changed on disk while you have unsaved edits")
        self.browser.refresh_tools()

    def on_tools_changed(self) -> None:
        """Tools were added, renamed or deleted outside: refresh the list."""
        self.browser.refresh_tools()

    def reload_from_disk(self) -> None:
        if self.current_path is None:
            return
        try:
            raw = self.current_path.read_bytes()
        except OSError as exc:
            self._say(f"Cannot reload: {exc.strerror or exc}", severity="error")
            return
        if not self.buffer.reload_bytes(raw):
            self.open_tool(self.current_path)
            return
        self._replace_all(self.buffer.text)
        self._hide_banner()
        self.dirty = False
        assert self.buffer.tf is not None
        self._load_form(self.buffer.tf)
        self._start_lint()

    def _show_banner(self, message: str, *, deleted: bool = False) -> None:
        name = self.current_path.name if self.current_path else "the file"
        banner = self.query_one("#banner", ChangeBanner)
        banner.show(Content.assemble("⚠ ", safe_line(name), f" {message}"), deleted=deleted)

    def _hide_banner(self) -> None:
        self.query_one("#banner", ChangeBanner).hide()

    def _banner_chosen(self, choice: str) -> None:
        if choice == "reload":
            self.reload_from_disk()
        elif choice == "keep":
            self.keep_mine()
        else:
            self._ask_conflict(saving=False)

    def keep_mine(self) -> None:
        """Keep editing this version; the next save overwrites the disk's knowingly."""
        self.buffer.disk_sha = file_sha256(self.current_path) if self.current_path else None
        self.dirty = True
        self._hide_banner()

    def _ask_conflict(self, *, saving: bool, disk_sha: str | None = None) -> None:
        from patch_tui.ui.dialogs.conflict import ConflictModal

        assert self.current_path is not None
        try:
            disk: str | None = self.current_path.read_bytes().decode("utf-8", errors="replace")
        except OSError:
            disk = None

        def decided(choice: str | None) -> None:
            if choice == "reload":
                self.reload_from_disk()
            elif choice == "keep":
                if saving:
                    self.save(overwrite=True)
                else:
                    self.keep_mine()

        self.app.push_screen(
            ConflictModal(self.current_path.name, self.source.text, disk, saving=saving), decided
        )
