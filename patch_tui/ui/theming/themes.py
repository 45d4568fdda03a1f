"""Themes: TOML data files validated with pydantic, turned into Textual `Theme` objects.

What a theme file may hold is one table (`THEME_KEYS`, ui/theming/theme_schema.py). An ordinary
file (known keys, values of the right types, passing the checks) is read by the table's plain
reader without importing pydantic, which would slow every start; anything else is validated by
the model built from the same table (`ThemeFile`, ui/theming/theme_file.py), which also words
what is wrong.

Where they come from, later folders winning on a name clash:
1. the themes shipped with the app (`paths.themes_dir()`: patch-dark, patch-light, patch-contrast);
2. the user's own, in `<config folder>/themes/*.toml`.

Every file that fails to load is collected and reported in ONE notification; the app keeps
running with whatever loaded (at worst Textual's own themes). Theme files reload live while the
app runs (`Settings.watch_themes`), and a theme chosen in the app is remembered in the config file.

Wiring from the app (a few lines):  `install_themes(self, choice=args.theme)` in
`on_mount`, and `ThemeCommands` in the app's `COMMANDS`; and, so that the app's stylesheet is
parsed once, with the chosen theme, `theme = Reactive(Initialize(start_theme))` in the app's
class with its `theme_choice` set before `App.__init__` (see `start_theme`).
"""

from __future__ import annotations

import dataclasses
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from textual.color import ColorParseError
from textual.theme import Theme

from patch_tui.settings import paths
from patch_tui.ui.commands import CommandList
from patch_tui.ui.theming.theme_schema import plain_theme

if TYPE_CHECKING:
    from textual.app import App

    from patch_tui.runtime.watch import FileChange

DEFAULT_THEME = "patch-dark"
SHIPPED_THEMES = ("patch-dark", "patch-light", "patch-contrast")


class ThemeError(Exception):
    """A theme file that cannot be used; the message names the file and says why."""


def load_theme_file(path: Path) -> Theme:
    """Read and validate one theme file. Raises ThemeError with a one-line reason."""
    from patch_tui.settings.toml_file import read_toml

    try:
        # By type, size and nesting depth first: a FIFO, /dev/zero or `[[[[…]]]]` saved as a
        # theme is one line in the notification, never a hang or a RecursionError.
        data: dict[str, Any] = read_toml(path)
    except OSError as exc:
        raise ThemeError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ThemeError(f"{path}: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise ThemeError(f"{path}: not valid TOML: {exc}") from None
    data.setdefault("name", path.stem)  # a file without a name is named after itself
    theme = plain_theme(data)
    if theme is not None:
        return theme
    from pydantic import ValidationError

    from patch_tui.ui.theming.theme_file import ThemeFile, describe

    try:
        return ThemeFile.model_validate(data).to_theme()
    except ValidationError as exc:
        raise ThemeError(f"{path}: {describe(exc)}") from None


def __getattr__(name: str) -> Any:
    # `from patch_tui.ui.theming.themes import ThemeFile` keeps working; pydantic loads only then.
    if name == "ThemeFile":
        from patch_tui.ui.theming.theme_file import ThemeFile

        return ThemeFile
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def user_themes_dir() -> Path:
    return paths.config_dir() / "themes"


def theme_folders() -> list[Path]:
    return [paths.themes_dir(), user_themes_dir()]


@dataclass
class ThemeSet:
    """What a load found: usable themes (by name), where each came from, and every failure."""

    themes: dict[str, Theme] = field(default_factory=dict)
    sources: dict[str, Path] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)


def load_themes(folders: Iterable[Path]) -> ThemeSet:
    """Load every `*.toml` in `folders` (missing folders are fine). Never raises for a bad file."""
    result = ThemeSet()
    for folder in folders:
        try:
            files = sorted(p for p in folder.glob("*.toml") if not p.name.startswith("."))
        except OSError as exc:
            result.errors.append(f"{folder}: cannot list the folder: {exc}")
            continue
        seen_here: dict[str, Path] = {}
        for path in files:
            try:
                theme = load_theme_file(path)
            except ThemeError as exc:
                result.errors.append(str(exc))
                continue
            if theme.name in seen_here:
                result.errors.append(
                    f"{path}: the name {theme.name!r} is already used by {seen_here[theme.name].name}"
                )
                continue
            seen_here[theme.name] = path
            # A later folder (the user's) overrides a shipped theme of the same name on purpose.
            result.themes[theme.name] = theme
            result.sources[theme.name] = path
    return result


def failure_message(errors: Sequence[str]) -> str:
    """All failures in one message (plain text: it quotes file content and paths)."""
    if len(errors) == 1:
        return errors[0]
    return "\n".join(f"• {e}" for e in errors)


class ThemeManager:
    """Registers our themes with an app, applies the chosen one, reloads them live and
    remembers a theme the user picks in the app."""

    def __init__(
        self, app: App[Any], folders: Sequence[Path] | None = None, *, remember: bool = True
    ) -> None:
        self.app = app
        self.folders = list(folders) if folders is not None else theme_folders()
        self.remember = remember
        self.sources: dict[str, Path] = {}
        self._applied: str | None = None
        # What `preload` found wrong, for `start` to report (None: `start` registers them).
        self._preload_errors: list[str] | None = None

    @property
    def preloaded(self) -> bool:
        """`preload` registered the themes and `start` has not run yet."""
        return self._preload_errors is not None

    @property
    def names(self) -> list[str]:
        """Our themes (shipped and user), in load order."""
        return list(self.sources)

    def css_problem(self, theme: Theme) -> str | None:
        """Why `theme` would break the app's styles, or None. The data checks catch most bad
        values; this is the last word: the app's own stylesheet parsed with the theme's
        variables, in a copy, so a bad theme is reported instead of crashing the app later."""
        if not theme.variables:
            return None
        from textual.css.stylesheet import StylesheetError

        def breaks(variables: dict[str, str]) -> bool:
            sheet = self.app.stylesheet.copy()
            try:
                # What Textual does when the theme is applied: generate the colour system (it
                # reads some variables as colours), then parse every style with the result.
                trial = dataclasses.replace(theme, variables=variables)
                generated = trial.to_color_system().generate()
                sheet.set_variables(
                    {**self.app.get_theme_variable_defaults(), **generated, **variables}
                )
                sheet.reparse()
            except (StylesheetError, ColorParseError, ValueError):
                return True
            return False

        if not breaks(theme.variables):
            return None
        culprits = [k for k, v in list(theme.variables.items())[:40] if breaks({k: v})]
        which = ", ".join(culprits[:5]) or "its [variables]"
        return f"the app's styles cannot use {which} with the value given"

    def register(self) -> list[str]:
        """(Re)load every theme file and register the results. Returns the failures."""
        found = load_themes(self.folders)
        shipped = paths.themes_dir().resolve()
        for name, source in list(found.sources.items()):
            if source.resolve().parent == shipped:
                continue  # tested (tests/test_themes.py); checking them would slow every start
            problem = self.css_problem(found.themes[name])
            if problem is not None:
                found.errors.append(f"{source}: {problem}")
                del found.themes[name], found.sources[name]
                original = shipped / f"{name}.toml"  # a broken override: the shipped one stays
                if original.is_file():
                    found.themes[name], found.sources[name] = load_theme_file(original), original
        for gone in set(self.sources) - set(found.themes):
            # A deleted theme file: drop the theme, unless it is on screen right now (Textual
            # needs the current theme registered; it goes away when the user switches).
            if gone != self.app.theme:
                self.app.unregister_theme(gone)
        for theme in found.themes.values():
            self.app.register_theme(theme)
        self.sources = found.sources
        return found.errors

    def apply(self, name: str) -> str | None:
        """Switch to `name`; returns a problem (unknown name) instead of raising."""
        if name not in self.app.available_themes:
            known = ", ".join(sorted(self.app.available_themes))
            return f"Unknown theme {name!r}; the themes are: {known}"
        self._applied = name
        self.app.theme = name
        return None

    def notify_errors(self, errors: Sequence[str], title: str = "Theme problems") -> None:
        if errors:
            self.app.notify(
                failure_message(errors), title=title, severity="warning", timeout=12, markup=False
            )

    def preload(self, choice: str | None) -> str | None:
        """Register the themes before the app has a stylesheet, and return the one it starts
        with: `choice`, else the default (`start` reports an unknown choice). None when a user's
        theme file is among them: its check (`css_problem`) parses the app's stylesheet, which
        does not exist yet, so `start` registers them as it always did and switches to the
        chosen theme, which parses the stylesheet once more."""
        found = load_themes(self.folders)
        shipped = paths.themes_dir().resolve()
        if any(source.resolve().parent != shipped for source in found.sources.values()):
            return None
        for theme in found.themes.values():
            self.app.register_theme(theme)
        self.sources = found.sources
        self._preload_errors = found.errors
        for name in (choice or DEFAULT_THEME, DEFAULT_THEME):
            if name in self.app.available_themes:
                return name
        return None

    def start(self, choice: str | None, *, watch: bool) -> None:
        """Register (unless `preload` did), apply `choice` (else the config's theme), report
        all problems at once, remember later switches, and start the live reload when `watch`
        is on."""
        errors, self._preload_errors = self._preload_errors, None
        if errors is None:
            errors = self.register()
        wanted = choice or DEFAULT_THEME
        problem = self.apply(wanted)
        if problem is not None:
            errors.append(problem)
            fallback = (
                DEFAULT_THEME if DEFAULT_THEME in self.app.available_themes else "textual-dark"
            )
            self.apply(fallback)
        self.notify_errors(errors)
        self.app.theme_changed_signal.subscribe(self.app, self._on_theme_changed)
        if watch:
            self.app.call_after_refresh(self.watch)  # after the first frame, like the tool watch

    def _on_theme_changed(self, theme: Theme) -> None:
        # Any switch the user makes (our palette command, Textual's own theme picker) lands here;
        # start-up and live reloads re-apply the same name and are not a choice to remember.
        if theme.name == self._applied:
            return
        self._applied = theme.name
        if self.remember:
            self.persist(theme.name)

    def persist(self, name: str) -> None:
        from patch_tui.settings.config import ConfigError, save_setting

        try:
            save_setting("theme", name)
        except (ConfigError, OSError) as exc:
            self.app.notify(
                f"Theme {name!r} is on, but could not be remembered: {exc}",
                severity="warning",
                markup=False,
            )

    def reload(self) -> list[str]:
        """Re-read every theme file, re-apply the current theme (its colours may have changed),
        and report any failures in one notification."""
        errors = self.register()
        current = self.app.theme
        if current in self.app.available_themes:
            # Same name, new colours: the reactive would not fire on an equal value.
            self.app.mutate_reactive(type(self.app).theme)
        self.notify_errors(errors)
        return errors

    def watch(self) -> None:
        self.app.run_worker(
            self._watch_files(), name="theme watcher", group="watch-themes", exclusive=True
        )

    async def _watch_files(self) -> None:
        from patch_tui.runtime.watch import FolderWatcher

        watcher = FolderWatcher(self.folders, patterns=("*.toml",))
        batch: list[FileChange]
        async for batch in watcher.changes():
            if batch:
                self.reload()


@runtime_checkable
class ThemedApp(Protocol):
    """An App that install_themes ran on (any App: the desk, the standalone inbox, test hosts):
    it keeps the manager, which the palette's "theme: reload" calls."""

    theme_manager: ThemeManager


def _configured() -> tuple[str, bool]:
    """The config's theme and whether theme files are watched."""
    from patch_tui.settings.config import ConfigError, start_settings

    try:
        settings = start_settings()
    except ConfigError:
        return DEFAULT_THEME, False  # the app reports a broken config itself
    return settings.theme, settings.watch_themes


def start_theme(app: App[Any]) -> str:
    """The theme an app starts with, as the default of its `theme` reactive
    (`Reactive(Initialize(start_theme))`): the app's `theme_choice` (`--theme`, set before
    `App.__init__`), else the config's theme, with our themes registered (`preload`).

    Textual reads the theme first in `App.__init__`, for the variables its stylesheet is parsed
    with; a theme applied later (in on_mount) parsed the whole stylesheet once more, and
    restyled the app, before the first frame (about 12 ms of the desk's start). Where the
    preload cannot choose (a user's theme file, see `preload`), this is Textual's default and
    `install_themes` switches to the chosen theme as before."""
    from textual import constants

    manager = ThemeManager(app)
    name = manager.preload(getattr(app, "theme_choice", None) or _configured()[0])
    if name is None:
        return constants.DEFAULT_THEME
    app.theme_manager = manager  # type: ignore[attr-defined]  # install_themes starts it
    return name


def install_themes(
    app: App[Any], choice: str | None = None, *, watch: bool | None = None
) -> ThemeManager:
    """The one call the app makes (in on_mount): `choice` is `--theme`, else the config's theme."""
    configured, watch_default = _configured()
    manager = getattr(app, "theme_manager", None)
    if not isinstance(manager, ThemeManager) or not manager.preloaded:  # see start_theme
        manager = ThemeManager(app)
    manager.start(choice or configured, watch=watch_default if watch is None else watch)
    app.theme_manager = manager  # type: ignore[attr-defined]  # the palette provider finds it here
    return manager


class ThemeCommands(CommandList):
    """Palette commands: "theme: switch" (a picker of every registered theme — ours and
    Textual's), "theme: reload", and "theme: use NAME" for each theme directly."""

    discover_limit = 2  # the picker and reload; "use NAME" appears as you type

    def _commands(self) -> list[tuple[str, str, Any]]:
        app = self.app
        commands: list[tuple[str, str, Any]] = [
            (
                "theme: switch",
                "Pick a colour theme (remembered in the config file)",
                app.search_themes,
            ),
        ]
        if isinstance(app, ThemedApp):
            commands.append(("theme: reload", "Re-read the theme files", app.theme_manager.reload))
        for name in sorted(app.available_themes):
            commands.append((f"theme: use {name}", "", partial(setattr, app, "theme", name)))
        return commands
