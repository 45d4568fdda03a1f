"""Live reload of tool files: a worker runs `runtime.watch.FolderWatcher` over the folders the desk
shows and hands each batch of outside changes to the screens as a `ToolFilesChanged` message.

The message goes to every screen on the stack (not bubbling), so a desk screen under a dialog or
the help screen still hears about it. What to do with it is the screen's business: follow a clean
buffer, show a banner over a dirty one, update the browser.

Wiring from the app (one line, after the desk's folders are known):
    self.tool_watch = install_tool_watch(self, [toolbox.tools_dir])
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.message import Message

if TYPE_CHECKING:
    from textual.app import App
    from textual.worker import Worker

    from patch_tui.runtime.watch import FileChange, FolderWatcher


class ToolFilesChanged(Message, bubble=False):
    """Tool files changed outside the app (our own saves are never in here)."""

    def __init__(self, changes: list[FileChange]) -> None:
        super().__init__()
        self.changes = changes

    def for_path(self, path: str | Path) -> FileChange | None:
        """The change that concerns `path` (a rename concerns its old path too)."""
        import os

        key = Path(os.path.realpath(path))
        for change in self.changes:
            if change.path == key or change.old_path == key:
                return change
        return None


class ToolWatch:
    """Owns the watcher worker; `retarget()` when the desk opens another folder."""

    def __init__(self, app: App[Any], folders: Iterable[str | Path]) -> None:
        self.app = app
        self.folders = [Path(f) for f in folders]
        self.worker: Worker[None] | None = None
        self.watcher: FolderWatcher | None = None

    @property
    def watching(self) -> bool:
        """The watch is up and has taken its first look at the folders."""
        return self.watcher is not None and self.watcher.watching

    def start(self) -> None:
        self.worker = self.app.run_worker(
            self._run(),
            name="tool watcher",
            group="watch-tools",
            exclusive=True,
            exit_on_error=False,
        )

    def stop(self) -> None:
        if self.worker is not None:
            self.worker.cancel()
            self.worker = None

    def retarget(self, folders: Iterable[str | Path]) -> None:
        self.folders = [Path(f) for f in folders]
        self.start()  # exclusive: the old worker is cancelled

    async def _run(self) -> None:
        from patch_tui.runtime.watch import FolderWatcher

        watcher = self.watcher = FolderWatcher(self.folders, patterns=("*.py",))
        try:
            async for batch in watcher.changes():
                self.deliver(batch)
        except OSError as exc:
            # The folder vanished or inotify ran out of watches: say so once, keep the app up.
            self.app.notify(
                f"Stopped following outside changes: {exc}", severity="warning", markup=False
            )

    def deliver(self, batch: list[FileChange]) -> None:
        """Hand a batch to every screen: the desk's hooks when it has them (`on_file_changed_outside`
        for the open tool, `on_tools_changed` for the browser), else a `ToolFilesChanged` message."""
        for screen in list(self.app.screen_stack):
            if hasattr(screen, "on_file_changed_outside"):
                self._to_desk(screen, batch)
            else:
                screen.post_message(ToolFilesChanged(batch))

    @staticmethod
    def _to_desk(screen: Any, batch: list[FileChange]) -> None:
        import os

        current = getattr(screen, "current_path", None)
        current_key = Path(os.path.realpath(current)) if current is not None else None
        browser_news = False
        for change in batch:
            if (
                current_key is not None
                and change.kind == "renamed"
                and change.old_path == current_key
            ):
                if not getattr(screen, "dirty", True):
                    # Renamed outside with nothing unsaved: follow the file to its new name.
                    screen.open_tool(change.path)
                    screen.on_tools_changed()
                else:
                    screen.on_file_changed_outside(change.old_path)  # "deleted": keep yours
                continue
            if current_key is not None and change.path == current_key:
                screen.on_file_changed_outside(change.path)  # follows, or banners a dirty buffer
                continue
            browser_news = True
        if browser_news:
            screen.on_tools_changed()


def install_tool_watch(
    app: App[Any], folders: Iterable[str | Path], *, enabled: bool | None = None
) -> ToolWatch | None:
    """Start following the folders when `Settings.watch_tools` (or `enabled`) says so."""
    if enabled is None:
        from patch_tui.settings.config import ConfigError, load_settings

        try:
            enabled = load_settings().watch_tools
        except ConfigError:
            enabled = True
    if not enabled:
        return None
    watch = ToolWatch(app, folders)
    # After the first frame: importing watchfiles and hashing the folder must not delay it.
    app.call_after_refresh(watch.start)
    return watch
