"""What keeps the first frame of a screen light (docs/guide/performance.md).

Textual restyles every widget of a screen each time it is resumed (`ScreenResume` with
`refresh_styles=True`), so that a screen that was suspended under another one catches up with
what changed meanwhile. The first resume of a pushed screen comes right after its widgets were
mounted, each styled against the stylesheet of that moment; a later change of the stylesheet
(`App.refresh_css`, a theme switch) restyles every screen on the stack itself. Restyling them all
again there was a third of the desk's CSS work before its first frame. Every later resume
restyles as Textual does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual import events
from textual.app import App
from textual.screen import Screen
from textual.widget import Widget

# The whole config file is validated (pydantic-settings) this long after the first frame, in a
# thread: its import (about 140 ms of CPU) would otherwise compete with the first frame.
CONFIG_CHECK_DELAY = 0.5


class StyledOnMount(Screen[Any]):
    """A screen whose first resume, right after its mount, does not restyle every widget again."""

    _resumed_once = False

    def _on_screen_resume(self, event: events.ScreenResume) -> None:
        # Textual calls the handler of every class in the MRO, this one before Screen's; a
        # prevented default stops it there.
        if self._resumed_once:
            return
        self._resumed_once = True
        if event.refresh_styles:
            event.prevent_default()
            Screen._on_screen_resume(self, events.ScreenResume(refresh_styles=False))


def after_first_frame(widget: Widget, callback: Callable[[], Any]) -> None:
    """Run `callback` as soon as the widget's screen has drawn a frame (its next layout
    refresh), for work that must follow the first frame by no more than a moment.

    `call_after_refresh` waits until the screen has nothing left to refresh, and a fresh
    screen settles over several more frames after its first (sizes known after the first
    layout, scroll bars): the form's lower sections waited for all of them, hundreds of
    milliseconds on a loaded machine."""
    screen = widget.screen
    signal = screen.screen_layout_refresh_signal

    def drawn(_screen: Screen[Any]) -> None:
        signal.unsubscribe(widget)
        if widget.is_attached:
            widget.call_later(callback)

    signal.subscribe(widget, drawn, immediate=True)


def check_config_later(app: App[Any]) -> None:
    """Validate the whole config file after the first frame: one notification if it is broken
    (start-up read only what it needed, without pydantic, and the app runs on)."""

    def check() -> None:
        from patch_tui.settings.config import ConfigError, load_settings

        try:
            load_settings()
        except ConfigError as exc:
            try:
                app.call_from_thread(
                    app.notify,
                    str(exc),
                    title="Config file",
                    severity="error",
                    timeout=12,
                    markup=False,
                )
            except RuntimeError:
                pass  # the app is closing

    def start() -> None:
        app.run_worker(check, thread=True, exclusive=True, group="config", exit_on_error=False)

    app.set_timer(CONFIG_CHECK_DELAY, start)


# Modules that neither the desk nor `patch-tui inbox` imports before its first frame: each is
# needed only by something that starts after it (the first lint and the highlighting, the
# watchers, the config check) or by a screen opened later. tests/unit/test_headless_imports.py
# checks that both first frames leave every one of them unimported.
LAZY_MODULES: dict[str, str] = {
    "pydantic": "the config and the manifest model are validated after the first frame",
    "pydantic_settings": "the whole config file is checked after the first frame",
    "pygments": "highlighting follows the first paint",
    "anthropic": "generate only",
    "mcp": "serve and guard only",
    "watchfiles": "the tool and theme watchers start after the first frame",
    "patch_tui.settings.model": "the whole config file is checked after the first frame",
    "patch_tui.format.manifest": "the pydantic manifest model, for lint",
    "patch_tui.lint.diagnostic": "lint's types come with the first lint, after the first paint",
    "patch_tui.lint.registry": "the first lint runs after the first paint",
    "patch_tui.lint.rules": "the first lint runs after the first paint",
    "patch_tui.runtime.catalog": "the tool list and the inbox's tool part read tool files later",
    "patch_tui.runtime.runner": "Try it and the inbox's approve run tools, later",
    "patch_tui.runtime.sandbox": "Try it and the inbox's approve run tools, later",
    "patch_tui.generate": "the generate screen only",
    "patch_tui.interop": "the export / import screen only",
    "patch_tui.ui.desk.try_it": "opened with ctrl+j",
    "patch_tui.ui.desk.generate": "opened from the palette",
    "patch_tui.ui.desk.export": "opened from the palette",
    "patch_tui.ui.help": "opened with F1",
    "patch_tui.ui.dialogs.confirm": "the desk's dialogs (save as, new, rename, delete) open on a key",
    "shlex": "the desk's $EDITOR key only",
}

# And the inbox's first frame, which shows held calls and no tool file, leaves these too: the
# details' tool part (the tool file read and its manifest checked) follows the first frame, read
# by the list's reading thread (ui/inbox/inbox.py), and so does the store watch.
INBOX_LAZY_MODULES: dict[str, str] = {
    "yaml": "tool files are read for the details' tool part, after the first frame",
    "patch_tui.format.toolfile": "tool files are read for the details' tool part, later",
    "patch_tui.approvals.review": "the details' tool part follows the first frame",
    "patch_tui.approvals.push": "the store watch (push failures) starts after the first frame",
    "patch_tui.ui.inbox.inbox_dialogs": "the decide dialog opens with a or r",
    "textual.widgets._text_area": "no text area before the first frame (dialogs have them)",
}

# What the inbox's details' tool part still leaves unimported with an ordinary tool file: its
# manifest is read without pydantic (format/plain_manifest.py, as `patch-tui run` reads it); the
# model is imported only for a manifest the plain reading leaves to it (an invalid one among
# them), or by something later that needs it (the config check, lint).
TOOL_PART_LAZY_MODULES: dict[str, str] = {
    "pydantic": "an ordinary tool file's manifest is read without the model",
    "patch_tui.format.manifest": "the pydantic manifest model, for what the plain reading leaves",
}
