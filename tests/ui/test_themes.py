"""Theme files: validation, loading, one notification for every failure, switching remembered in
the config file, live reload."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.widgets import Footer, Header, Static

from patch_tui.settings import paths
from patch_tui.ui.theming.themes import (
    SHIPPED_THEMES,
    ThemeCommands,
    ThemeError,
    install_themes,
    load_theme_file,
    load_themes,
)

GOOD = """name = "{name}"
dark = {dark}
primary = "{primary}"
background = "#101010"
[variables]
footer-key-foreground = "{primary}"
input-selection-background = "{primary} 30%"
block-cursor-text-style = "bold"
"""


def write_theme(folder: Path, name: str, primary: str = "#3366FF", dark: str = "true") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.toml"
    path.write_text(GOOD.format(name=name, primary=primary, dark=dark), encoding="utf-8")
    return path


@pytest.fixture
def user_dirs(tmp_path, monkeypatch) -> Path:
    """Config file and config folder in tmp: nothing touches the real user folders."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("PATCH_TUI_CONFIG", str(tmp_path / "config.toml"))
    for var in ("PATCH_TUI_THEME", "PATCH_TUI_WATCH_THEMES"):
        monkeypatch.delenv(var, raising=False)
    themes = paths.config_dir() / "themes"
    assert str(themes).startswith(str(tmp_path))
    return themes


def test_shipped_themes_load_cleanly() -> None:
    found = load_themes([paths.themes_dir()])
    assert found.errors == []
    assert set(SHIPPED_THEMES) <= set(found.themes)
    assert found.themes["patch-light"].dark is False
    assert found.themes["patch-contrast"].background == "#000000"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('name = "x"\nprimary = "#12"\n', "primary: '#12' is not a colour"),
        ('name = "x"\nprimary = "red"\nbackgroud = "#000000"\n', "backgroud: unknown key"),
        ('name = "x"\nprimary = "red"\n[variables]\nborder = "red 50"\n', "border"),
        (
            'name = "x"\nprimary = "red"\n[variables]\nlink-style = "wavy"\n',
            "'wavy' is not a text style",
        ),
        (
            'name = "x"\nprimary = "red"\n[variables]\nlink-style-hover = "red"\n',
            "not a text style",
        ),
        ('name = "x"\nprimary = "red"\n[variables]\nborder = "auto 50%"\n', "'auto' only works"),
        (
            'name = "x"\nprimary = "red"\n[variables]\nerror = "red"\n',
            "set `error` at the top level",
        ),
        ('name = "x"\nprimary = \n', "not valid TOML"),
        ('name = "bad name!"\nprimary = "red"\n', "name"),
        ('name = "x"\n', "primary: Field required"),
    ],
)
def test_broken_theme_file_says_which_file_and_why(tmp_path, text: str, reason: str) -> None:
    path = tmp_path / "x.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ThemeError) as info:
        load_theme_file(path)
    assert str(path) in str(info.value)
    assert reason in str(info.value)


def test_every_textual_builtin_theme_passes_our_validation() -> None:
    """The validator refuses what would break the stylesheet, not what Textual itself ships."""
    import dataclasses

    from textual.theme import BUILTIN_THEMES

    from patch_tui.ui.theming.themes import ThemeFile

    for theme in BUILTIN_THEMES.values():
        data = {f.name: getattr(theme, f.name) for f in dataclasses.fields(theme)}
        assert ThemeFile.model_validate(data).to_theme() == theme


def test_name_defaults_to_file_name(tmp_path) -> None:
    path = tmp_path / "ocean.toml"
    path.write_text('primary = "#0077BE"\n', encoding="utf-8")
    assert load_theme_file(path).name == "ocean"


def test_load_collects_every_failure_and_keeps_good_themes(tmp_path) -> None:
    write_theme(tmp_path, "good")
    (tmp_path / "bad1.toml").write_text("primary = = \n", encoding="utf-8")
    (tmp_path / "bad2.toml").write_text('primary = "blurple"\n', encoding="utf-8")
    found = load_themes([tmp_path, tmp_path / "missing"])
    assert list(found.themes) == ["good"]
    assert len(found.errors) == 2
    assert any("bad1.toml" in e for e in found.errors)
    assert any("bad2.toml" in e and "blurple" in e for e in found.errors)


def test_user_theme_overrides_shipped_one_of_the_same_name(tmp_path) -> None:
    write_theme(tmp_path, "patch-dark", primary="#FF0000")
    found = load_themes([paths.themes_dir(), tmp_path])
    assert found.errors == []
    assert found.themes["patch-dark"].primary == "#FF0000"
    assert found.sources["patch-dark"] == tmp_path / "patch-dark.toml"


class ShellApp(App[None]):
    """A stand-in shell: the same wiring the real app does (install in on_mount, palette)."""

    COMMANDS = App.COMMANDS | {ThemeCommands}

    def __init__(self, choice: str | None = None, watch: bool = False) -> None:
        super().__init__()
        self.choice = choice
        self.watch = watch

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("hello")
        yield Footer()

    def on_mount(self) -> None:
        install_themes(self, self.choice, watch=self.watch)


def messages(app: App) -> list[str]:
    return [str(n.message) for n in app._notifications]


async def test_shipped_theme_from_config_is_applied(user_dirs, tmp_path) -> None:
    (tmp_path / "config.toml").write_text('theme = "patch-contrast"\n', encoding="utf-8")
    app = ShellApp()
    async with app.run_test() as pilot:
        await pilot.pause()
        assert app.theme == "patch-contrast"
        assert app.theme_variables["background"] == "#000000"
        assert messages(app) == []


async def test_broken_themes_give_one_notification_and_no_crash(user_dirs) -> None:
    write_theme(user_dirs, "fine")
    (user_dirs / "one.toml").write_text("primary = [\n", encoding="utf-8")
    (user_dirs / "two.toml").write_text(
        'primary = "red"\n[variables]\nborder = "nope"\n', encoding="utf-8"
    )
    app = ShellApp(choice="nosuch")
    async with app.run_test() as pilot:
        await pilot.pause()
        notes = messages(app)
        assert len(notes) == 1
        assert "one.toml" in notes[0] and "two.toml" in notes[0]
        assert "Unknown theme 'nosuch'" in notes[0]
        assert app.theme == "patch-dark"  # the fallback
        assert "fine" in app.available_themes


async def test_switch_in_palette_is_remembered(user_dirs, tmp_path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('model = "m"\n', encoding="utf-8")
    app = ShellApp(choice="patch-dark")
    async with app.run_test() as pilot:
        await pilot.pause()
        await pilot.press("ctrl+p")
        await pilot.press(*"theme: use patch-light")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await pilot.pause()
        assert app.theme == "patch-light"
        assert app.current_theme.dark is False
    saved = tomllib.loads(config.read_text(encoding="utf-8"))
    assert saved == {"model": "m", "theme": "patch-light"}


async def test_reload_in_palette_reads_a_theme_file_written_since(user_dirs) -> None:
    """Without a watch, "theme: reload" is how a new theme file gets in (the palette finds the
    manager install_themes left on the app)."""
    app = ShellApp(choice="patch-dark")
    async with app.run_test() as pilot:
        await pilot.pause()
        write_theme(user_dirs, "later")
        await pilot.pause(0.2)
        assert "later" not in app.available_themes
        await pilot.press("ctrl+p")
        await pilot.press(*"theme: reload")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await pilot.pause()
        assert "later" in app.available_themes


async def test_theme_given_on_command_line_is_not_remembered(user_dirs, tmp_path) -> None:
    app = ShellApp(choice="patch-light")
    async with app.run_test() as pilot:
        await pilot.pause()
        assert app.theme == "patch-light"
    assert not (tmp_path / "config.toml").exists()


async def test_theme_files_reload_live(user_dirs) -> None:
    path = write_theme(user_dirs, "mine", primary="#3366FF")
    app = ShellApp(choice="mine", watch=True)
    async with app.run_test() as pilot:
        await pilot.pause()
        before = app.theme_variables["primary"]
        write_theme(user_dirs, "mine", primary="#22AA44")
        for _ in range(100):
            await pilot.pause(0.05)
            if app.current_theme.primary == "#22AA44":
                break
        assert app.current_theme.primary == "#22AA44"
        await pilot.pause()
        after = app.theme_variables["primary"]
        assert after != before and after.startswith("#2")  # the stylesheet follows too
        # A new file appears in the picker; a broken edit is reported, the last good one kept.
        write_theme(user_dirs, "another")
        path.write_text('primary = "not a colour"\n', encoding="utf-8")
        for _ in range(100):
            await pilot.pause(0.05)
            if "another" in app.available_themes and messages(app):
                break
        assert "another" in app.available_themes
        assert any("mine.toml" in m for m in messages(app))
        assert app.theme == "mine"
        assert app.current_theme.primary == "#22AA44"


# -- the real app ---------------------------------------------------------------------------------


def _real_app(tmp_path: Path, theme: str | None = None):
    from desk_helpers import make_app, tool_folder

    app = make_app(tool_folder(tmp_path))
    app.theme_choice = theme
    return app


async def test_real_app_theme_switch_from_palette_is_remembered(user_dirs, tmp_path) -> None:
    from desk_helpers import ready

    app = _real_app(tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        assert app.theme == "patch-dark"
        await pilot.press("ctrl+p")
        await pilot.press(*"theme: use patch-contrast")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await pilot.pause()
        assert app.theme == "patch-contrast"
        assert app.theme_variables["background"] == "#000000"
    saved = tomllib.loads((tmp_path / "config.toml").read_text(encoding="utf-8"))
    assert saved["theme"] == "patch-contrast"


async def test_real_app_broken_user_theme_is_one_notification(user_dirs, tmp_path) -> None:
    from desk_helpers import ready

    (user_dirs).mkdir(parents=True)
    (user_dirs / "a.toml").write_text('primary = "#zzz"\n', encoding="utf-8")
    (user_dirs / "b.toml").write_text("this is not toml\n", encoding="utf-8")
    app = _real_app(tmp_path, theme="a")
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        theme_notes = [m for m in messages(app) if "toml" in m]
        assert len(theme_notes) == 1
        assert "a.toml" in theme_notes[0] and "b.toml" in theme_notes[0]
        assert "Unknown theme 'a'" in theme_notes[0]
        assert app.theme == "patch-dark"
        assert app.screen is app.editor  # the desk is up and usable


async def test_theme_switch_picker_lists_ours_and_remembers(user_dirs, tmp_path) -> None:
    app = ShellApp(choice="patch-dark")
    async with app.run_test() as pilot:
        await pilot.pause()
        await pilot.press("ctrl+p", *"theme: switch")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await pilot.pause(0.3)
        await pilot.press(*"patch-light")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await pilot.pause()
        assert app.theme == "patch-light"
    saved = tomllib.loads((tmp_path / "config.toml").read_text(encoding="utf-8"))
    assert saved["theme"] == "patch-light"


async def test_theme_option_on_the_command_line(user_dirs, tmp_path) -> None:
    """`patch-tui --theme patch-light PATH` as the CLI parses it: used, not remembered."""
    from desk_helpers import ready, tool_folder

    from patch_tui.cli import _tui_parser
    from patch_tui.commands.tui import build_app

    folder = tool_folder(tmp_path)
    args = _tui_parser().parse_args(["--theme", "patch-light", str(folder)])
    app = build_app(args)
    app.settings.watch_tools = False
    app.settings.watch_themes = False
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        assert app.theme == "patch-light"
        assert app.current_theme.dark is False
    assert not (tmp_path / "config.toml").exists()


def _count_reparses(monkeypatch) -> list[str]:
    """Every time the app's stylesheet is parsed again (a theme applied after it was parsed)."""
    from textual.css.stylesheet import Stylesheet

    reparses: list[str] = []
    reparse = Stylesheet.reparse

    def counted(self: Stylesheet) -> None:
        reparses.append(str(self._variables.get("background")))
        reparse(self)

    monkeypatch.setattr(Stylesheet, "reparse", counted)
    return reparses


@pytest.mark.parametrize("given", ["config", "--theme"])
async def test_desk_starts_with_the_chosen_theme_parsed_once(
    user_dirs, tmp_path, monkeypatch, given: str
) -> None:
    """The theme from the config file or `--theme` is the one the app's stylesheet is first
    parsed with (themes.start_theme): nothing is parsed a second time for it before the desk
    is up, and the app is light all through, as the theme says (its classes and colours)."""
    from desk_helpers import ready, tool_folder

    from patch_tui.cli import _tui_parser
    from patch_tui.commands.tui import build_app

    light = load_theme_file(paths.themes_dir() / "patch-light.toml")
    argv = [str(tool_folder(tmp_path))]
    if given == "config":
        (tmp_path / "config.toml").write_text('theme = "patch-light"\n', encoding="utf-8")
    else:
        argv = ["--theme", "patch-light", *argv]
    reparses = _count_reparses(monkeypatch)
    app = build_app(_tui_parser().parse_args(argv))
    app.settings.watch_tools = False
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        assert app.theme == "patch-light"
        assert app.has_class("-light-mode") and not app.has_class("-dark-mode")
        assert app.theme_variables["background"] == light.background
        assert messages(app) == []
    assert reparses == []


async def test_inbox_app_starts_with_the_chosen_theme_parsed_once(
    user_dirs, tmp_path, monkeypatch
) -> None:
    from patch_tui.settings.config import Settings
    from patch_tui.ui.inbox.inbox_app import InboxApp

    reparses = _count_reparses(monkeypatch)
    settings = Settings(watch_tools=False, watch_themes=False)
    app = InboxApp(tmp_path / "store.sqlite3", settings=settings, theme="patch-contrast")
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        assert app.theme == "patch-contrast"
        assert app.theme_variables["background"] == "#000000"
    assert reparses == []


async def test_desk_starts_with_a_user_theme_checked_as_before(user_dirs, tmp_path) -> None:
    """A theme file of the user's is checked against the app's stylesheet, which does not exist
    when the app first reads its theme: the desk starts on the default theme and switches to
    the user's once the stylesheet is there, as it always did."""
    from desk_helpers import ready, tool_folder

    from patch_tui.cli import _tui_parser
    from patch_tui.commands.tui import build_app

    write_theme(user_dirs, "mine", primary="#AA3366", dark="false")
    app = build_app(_tui_parser().parse_args(["--theme", "mine", str(tool_folder(tmp_path))]))
    app.settings.watch_tools = False
    app.settings.watch_themes = False
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        assert app.theme == "mine"
        assert app.current_theme.primary == "#AA3366"
        assert app.has_class("-light-mode")
        assert messages(app) == []


async def test_theme_that_would_break_the_stylesheet_is_refused_not_fatal(user_dirs) -> None:
    """Values that pass the data checks but no stylesheet accepts (an alpha on a colour the CSS
    already fades) are caught by parsing the app's styles in a copy: one notification, no crash."""
    user_dirs.mkdir(parents=True)
    (user_dirs / "faded.toml").write_text(
        'primary = "#3366FF"\n[variables]\nprimary-lighten-1 = "#ff0000 50%"\n', encoding="utf-8"
    )
    (user_dirs / "patch-dark.toml").write_text(
        'primary = "#FF0000"\n[variables]\nbackground-darken-1 = "#000000 50%"\n', encoding="utf-8"
    )
    app = ShellApp(choice="faded")
    async with app.run_test() as pilot:
        await pilot.pause()
        notes = messages(app)
        assert len(notes) == 1
        assert "faded.toml" in notes[0] and "primary-lighten-1" in notes[0]
        assert "patch-dark.toml" in notes[0] and "background-darken-1" in notes[0]
        # The broken override of patch-dark leaves the shipped patch-dark in place.
        assert app.theme == "patch-dark"
        assert app.current_theme.primary == "#4FA3F7"
        assert "faded" not in app.available_themes


PLAIN_CASES = [
    {"name": "minimal", "primary": "#3366FF"},
    {
        "name": "full",
        "dark": False,
        "primary": "red",
        "secondary": "rgb(1,2,3)",
        "accent": "hsl(10,50%,50%)",
        "foreground": "#eee",
        "background": "#101010",
        "surface": "#202020",
        "panel": "#303030",
        "boost": "#ffffff10",
        "warning": "ansi_yellow",
        "error": "#f00",
        "success": "green",
        "luminosity_spread": 0.2,
        "text_alpha": 1.0,
        "ansi": True,
        "variables": {
            "footer-key-foreground": "#4FA3F7",
            "input-selection-background": "#4FA3F7 30%",
            "block-cursor-text-style": "bold",
            "text-muted": "auto 90%",
        },
    },
    # Unusual: each goes to the model, which must then say the same (or refuse it).
    {"name": "no-primary"},
    {"name": "bad name!", "primary": "red"},
    {"name": "x" * 65, "primary": "red"},
    {"name": "nl\n", "primary": "red"},
    {"name": 3, "primary": "red"},
    {"name": "c", "primary": "not-a-colour"},
    {"name": "c", "primary": "red", "secondary": None},
    {"name": "c", "primary": "red", "dark": "false"},
    {"name": "c", "primary": "red", "dark": 0},
    {"name": "c", "primary": "red", "text_alpha": 1},
    {"name": "c", "primary": "red", "text_alpha": 1.5},
    {"name": "c", "primary": "red", "luminosity_spread": float("nan")},
    {"name": "c", "primary": "red", "luminosity_spread": -0.0},
    {"name": "c", "primary": "red", "variables": {"primary": "red"}},
    {"name": "c", "primary": "red", "variables": {"text": "auto"}},
    {"name": "c", "primary": "red", "variables": {"border": "auto"}},
    {"name": "c", "primary": "red", "variables": {"Bad": "red"}},
    {"name": "c", "primary": "red", "variables": {"x": 1}},
    {"name": "c", "primary": "red", "variables": [["x", "red"]]},
    {"name": "c", "primary": "red", "variables": "x"},
    {"name": "c", "primary": "red", "unknown": 1},
]


@pytest.mark.parametrize("data", PLAIN_CASES)
def test_plain_reader_agrees_with_the_model(data: dict) -> None:
    """Theme files are read without pydantic at start-up only when the model would give the
    very same Theme; anything unusual is left to the model."""
    from pydantic import ValidationError

    from patch_tui.ui.theming.theme_file import ThemeFile
    from patch_tui.ui.theming.theme_schema import plain_theme as _plain_theme

    plain = _plain_theme(dict(data))
    try:
        model = ThemeFile.model_validate(data).to_theme()
    except ValidationError:
        model = None
    if plain is not None:
        assert plain == model
    if data["name"] in ("minimal", "full"):
        assert plain is not None


def test_shipped_and_builtin_themes_are_read_plainly() -> None:
    import dataclasses

    from textual.theme import BUILTIN_THEMES

    from patch_tui.ui.theming.theme_file import ThemeFile
    from patch_tui.ui.theming.theme_schema import plain_theme as _plain_theme

    for path in sorted(paths.themes_dir().glob("*.toml")):
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        data.setdefault("name", path.stem)
        plain = _plain_theme(data)
        assert plain is not None, path
        assert plain == ThemeFile.model_validate(data).to_theme()
    for theme in BUILTIN_THEMES.values():
        data = {f.name: getattr(theme, f.name) for f in dataclasses.fields(theme)}
        plain = _plain_theme({k: v for k, v in data.items() if v is not None})
        assert plain is None or plain == theme
