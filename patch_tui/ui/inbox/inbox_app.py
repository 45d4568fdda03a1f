"""`patch-tui inbox`: the inbox on its own, without the desk.

InboxApp(store_path, settings=..., theme=..., toolbox=...)    (opened by commands/inboxcmd.py)
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, ClassVar

from textual.app import App
from textual.binding import Binding
from textual.reactive import Initialize, Reactive
from textual.screen import Screen

from patch_tui.ui.dialogs.dialog import DialogKeyGuard
from patch_tui.ui.safe_text import SafeTitles
from patch_tui.ui.services import Services, ServicesHost
from patch_tui.ui.theming.themes import start_theme


class InboxApp(ServicesHost, SafeTitles, DialogKeyGuard, App[None]):
    """`patch-tui inbox`: the inbox on its own, so it opens fast (no desk to build behind it).
    The desk's app reaches the same screen with ctrl+r."""

    TITLE = "patch-tui"
    BINDINGS: ClassVar[list[Any]] = [
        Binding("ctrl+q,f12", "quit", "Quit", id="app.quit", priority=True),
    ]
    # The theme the stylesheet is first parsed with is the chosen one (themes.start_theme).
    theme: Reactive[str] = Reactive(Initialize(start_theme))

    def __init__(
        self,
        store_path: str | os.PathLike[str] | None = None,
        *,
        settings: Any = None,
        theme: str | None = None,
        toolbox: Any = None,
    ) -> None:
        self.theme_choice = theme  # before App.__init__, which reads the theme (start_theme)
        super().__init__()
        if settings is None:
            from patch_tui.settings.config import Settings

            settings = Settings(watch_themes=False, watch_tools=False)
        self.services = Services(
            settings=settings,
            # Kept as given: a postgresql:// URL is no Path (Path would fold its `//`).
            store_path=(
                (store_path if isinstance(store_path, Path) else os.fspath(store_path))
                if store_path
                else None
            ),
            # The grants screen compares a grant with its tool file, found here by name too.
            toolbox=toolbox,
        )

    def get_default_screen(self) -> Screen[Any]:
        # The inbox is the app's first screen: no empty screen is mounted and styled under it.
        from patch_tui.ui.inbox.inbox import InboxScreen

        return InboxScreen()

    def on_mount(self) -> None:
        from patch_tui.settings.config import StartSettings
        from patch_tui.ui.first_frame import check_config_later
        from patch_tui.ui.inbox.inbox_badge import pending_watch
        from patch_tui.ui.theming.themes import install_themes

        install_themes(self, self.theme_choice, watch=False)
        # The app's one store watch, started by the inbox once its first rows are painted (its
        # reads would compete with that frame).
        pending_watch(self)
        if isinstance(self.settings, StartSettings):  # a Settings given was validated already
            self.call_after_refresh(check_config_later, self)

    def on_worker_state_changed(self, event: Any) -> None:
        # As the desk does: a failed worker is a notification, never a crash.
        from textual.worker import WorkerState

        if event.state == WorkerState.ERROR:
            self.notify(
                f"{event.worker.name or 'background task'} failed: {event.worker.error}",
                severity="error",
                markup=False,
            )
