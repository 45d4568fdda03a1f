"""The Textual app: wiring only (docs/architecture.md, Layers). Screens and widgets live in their own modules.

Adding a screen from another area is one line in `SCREENS_LAZY` (imported when first shown, so
start-up stays light) and, for a key, one Binding in `BINDINGS`:

    "inbox": ("patch_tui.ui.inbox.inbox:InboxScreen", "inbox: open", "The confirmation inbox"),
    Binding("i", "open_screen('inbox')", "Inbox", id="app.inbox"),

Each entry also becomes a palette command under its "area: verb" name. The screen class is
built with no arguments; it finds what it needs in the app's services (ui/services.py:
`services(app)`: settings, toolbox, the confirmation store and its watch) and, over the desk,
its editor screen (ui/desk/host.py: `desk_editor(app)`, None where there is no desk).
"""

from __future__ import annotations

import gc
import importlib
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual.app import App
from textual.binding import Binding
from textual.reactive import Initialize, Reactive
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from patch_tui.runtime.toolbox import Toolbox
from patch_tui.settings.config import StartSettings, start_settings
from patch_tui.ui.commands import Command, CommandList
from patch_tui.ui.desk.editor import EditorCommands, EditorScreen
from patch_tui.ui.desk.host import DeskHost
from patch_tui.ui.dialogs.dialog import DialogKeyGuard
from patch_tui.ui.first_frame import (  # noqa: F401 - CONFIG_CHECK_DELAY: tests wait on it
    CONFIG_CHECK_DELAY,
    check_config_later,
)
from patch_tui.ui.safe_text import SafeTitles
from patch_tui.ui.services import Services, ServicesHost
from patch_tui.ui.theming.themes import ThemeCommands, start_theme

if TYPE_CHECKING:
    from patch_tui.settings.model import Settings

# name -> ("module:Class", palette command, palette help). Other areas add their line here.
SCREENS_LAZY: dict[str, tuple[str, str, str]] = {
    "help": ("patch_tui.ui.help:HelpScreen", "help: keys", "Every key of this screen (F1)"),
    "inbox": (
        "patch_tui.ui.inbox.inbox:InboxScreen",
        "inbox: open",
        "Pending confirmations and history (ctrl+r)",
    ),
    "try": (
        "patch_tui.ui.desk.try_it:TryItScreen",
        "tool: try it",
        "Run the open tool with a form, unsaved text too (ctrl+j)",
    ),
    "generate": (
        "patch_tui.ui.desk.generate:GenerateScreen",
        "generate: new tool",
        "Write a new tool with Claude from a sentence",
    ),
    "refine": (
        "patch_tui.ui.desk.generate:RefineScreen",
        "generate: refine this tool",
        "Change the open tool with Claude; review the diff first",
    ),
    "interop": (
        "patch_tui.ui.desk.export:InteropScreen",
        "tool: export / import",
        "Export the open tool to Arcade, spec 1.0, MCP or Shinkai, or import theirs",
    ),
}


def _load(target: str) -> type[Screen[Any]]:
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


class ScreenCommands(CommandList):
    """Palette commands that open the registered screens."""

    def _commands(self) -> list[Command]:
        app = self.app
        if not isinstance(app, DeskHost):
            return []
        return [
            (cmd, help_text, partial(app.action_open_screen, name))
            for name, (_t, cmd, help_text) in SCREENS_LAZY.items()
        ]


class PatchApp(ServicesHost, DeskHost, SafeTitles, DialogKeyGuard, App[None]):
    """patch-tui: the authoring desk and, through SCREENS_LAZY, everything else."""

    CSS_PATH = "app.tcss"
    TITLE = "patch-tui"
    COMMANDS = App.COMMANDS | {EditorCommands, ScreenCommands, ThemeCommands}
    BINDINGS: ClassVar[list[Any]] = [
        Binding("ctrl+q,f12", "quit", "Quit", id="app.quit", priority=True),
        Binding("f1", "open_screen('help')", "Help", id="app.help"),
        Binding("ctrl+r", "open_screen('inbox')", "Inbox", id="app.inbox"),
        Binding("ctrl+j", "open_screen('try')", "Try it", id="app.try_it"),
        # Declared here (Textual adds its own otherwise) so the palette key has an id to remap.
        Binding(
            "ctrl+p", "command_palette", "Commands", id="app.palette", show=False, priority=True
        ),
    ]
    # The theme the stylesheet is first parsed with is the chosen one (themes.start_theme).
    theme: Reactive[str] = Reactive(Initialize(start_theme))

    def __init__(
        self,
        toolbox: Toolbox,
        path: Path | None = None,
        *,
        settings: Settings | StartSettings | None = None,
        theme: str | None = None,
        store_path: Path | str | None = None,
        notice: str | None = None,
    ) -> None:
        self.theme_choice = theme  # before App.__init__, which reads the theme (start_theme)
        super().__init__()
        self.notice = notice  # shown once the desk is up (the first run says where the tools are)
        # Start-up reads four settings without pydantic; the rest load on first use.
        self.services = Services(
            settings=settings if settings is not None else start_settings(),
            toolbox=toolbox,
            store_path=store_path,
        )
        self.editor = EditorScreen(toolbox, path)
        self.tool_watch: Any = None
        # Set by the `patch-tui` command, which pauses the garbage collector for start-up.
        self.resume_gc_after_first_frame = False

    def on_mount(self) -> None:
        from patch_tui.ui.keymap import install_keymap
        from patch_tui.ui.theming.themes import install_themes

        install_themes(self, self.theme_choice, watch=self.settings.watch_themes)
        install_keymap(self, self.settings.keymap)
        # The desk is pushed once the app's own start has ended. Textual paints nothing while
        # the app starts (its start-up batch lasts until every screen pushed in this handler is
        # mounted): pushed here, the desk's first frame was computed and dropped, and what
        # follows it (the lower sections, the input cards, the first lint) ran before the
        # first frame a person saw.
        self.call_later(self._show_desk)

    def _show_desk(self) -> None:
        self.push_screen(self.editor)
        if self.notice:
            # Long enough to read, short enough not to sit over the problems' header.
            self.notify(self.notice, title="Your toolbox", timeout=10, markup=False)
        # What is not needed for the first frame starts right after it.
        self.call_after_refresh(self._install_background)

    def _install_background(self) -> None:
        from patch_tui.ui.inbox.inbox_badge import install_pending_watch

        if self.resume_gc_after_first_frame:
            self.resume_gc_after_first_frame = False
            # What start-up built lives for the whole session: freeze it so that no collection
            # scans it again, then collect as usual from here on.
            gc.freeze()
            gc.enable()
        if not self.is_running:
            return  # quit before its first frame was done: nothing to start any more

        install_pending_watch(self)  # the pending count, on every screen
        toolbox = self.services.toolbox
        if self.settings.watch_tools and toolbox is not None:
            from patch_tui.ui.watching import install_tool_watch

            self.tool_watch = install_tool_watch(self, [toolbox.tools_dir], enabled=True)
        if isinstance(self.settings, StartSettings):  # a Settings given was validated already
            check_config_later(self)

    def get_system_commands(self, screen: Screen[Any]) -> Any:
        """Textual's own commands, less its "Theme": "theme: switch" is ours (one way to do it,
        which also remembers the choice)."""
        for command in super().get_system_commands(screen):
            if command.title != "Theme":
                yield command

    def action_open_screen(self, name: str) -> None:
        entry = SCREENS_LAZY.get(name)
        if entry is None:
            self.notify(f"No screen called {name}", severity="error")
            return
        if isinstance(self.screen, _load(entry[0])):
            return
        self.push_screen(_load(entry[0])())

    async def action_quit(self) -> None:
        """Quitting with unsaved edits asks first."""
        self.editor.confirm_discard(
            self.exit, title="Quit", labels=("Save and quit", "Quit without saving")
        )

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        # The one place a failed worker becomes a notification (docs/architecture.md, Workers).
        if event.state == WorkerState.ERROR:
            error = event.worker.error
            self.notify(
                f"{event.worker.name or 'background task'} failed: {error}",
                severity="error",
                markup=False,
            )
