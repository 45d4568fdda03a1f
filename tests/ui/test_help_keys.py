"""The F1 help screen lists the live bindings (keymap applied), and the binding audit catches
bindings without ids and swallowed chords without an F-key twin."""

from __future__ import annotations

import io

from rich.console import Console
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Footer, Static, TextArea

from patch_tui.ui.help import (
    HelpScreen,
    audit_bindings,
    collect_bindings,
    install_keymap,
)


class Pane(Static, can_focus=True):
    BINDINGS = [Binding("ctrl+s,f6", "noop", "Hide the pane", id="desk.hide")]

    def action_noop(self) -> None:
        pass


class Shell(App[None]):
    BINDINGS = [
        Binding("ctrl+s,f2", "noop", "Save", id="app.save"),
        Binding("f1", "help", "Help", id="app.help"),
        Binding("ctrl+h", "noop", "Jump"),  # no id, no F-key twin: the audit must say so
    ]

    def compose(self) -> ComposeResult:
        yield Pane("pane")
        yield TextArea("text")
        yield Footer()

    def action_noop(self) -> None:
        pass

    def action_help(self) -> None:
        self.push_screen(HelpScreen())


def help_text(app: App) -> str:
    """What the help screen shows, as plain text."""
    console = Console(width=120, record=True, file=io.StringIO())
    for static in app.screen.query(Static):
        console.print(static.content)
    return console.export_text()


async def test_f1_opens_help_with_every_binding_and_escape_closes_it() -> None:
    app = Shell()
    async with app.run_test(size=(100, 50)) as pilot:
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        rows = collect_bindings(app, app.screen_stack[0])
        by_id = {r.binding_id: r for r in rows if r.binding_id}
        assert by_id["app.save"].key_names == ["ctrl+s", "f2"]
        assert by_id["desk.hide"].area == "Authoring desk"
        assert "Jump" in {r.description for r in rows}
        # TextArea's own editing keys are listed as built in; scrolling keys are not.
        assert any(r.area == "TextArea (built in)" and r.action == "undo" for r in rows)
        assert not any(r.action.startswith("scroll_") for r in rows)
        shown = help_text(app)
        for words in ("ctrl+s F2", "app.save", "desk.hide", "How the desk works"):
            assert words in shown
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, HelpScreen)


async def test_remapped_key_shows_in_help() -> None:
    app = Shell()
    async with app.run_test(size=(100, 50)) as pilot:
        assert install_keymap(app, {"app.save": " ctrl+w , f3 ", "desk.nothing": ""}) == {
            "app.save": "ctrl+w,f3"
        }
        await pilot.press("f1")
        await pilot.pause()
        rows = collect_bindings(app, app.screen_stack[0])
        save = next(r for r in rows if r.binding_id == "app.save")
        assert save.key_names == ["ctrl+w", "f3"]
        assert "ctrl+w F3" in help_text(app)


async def test_audit_reports_missing_ids_and_f_key_twins() -> None:
    app = Shell()
    async with app.run_test() as pilot:
        await pilot.pause()
        problems = audit_bindings(collect_bindings(app, app.screen))
        joined = "\n".join(problems)
        assert "'Jump' (ctrl+h) has no id" in joined
        assert "ctrl+h is often swallowed" in joined
        # Textual's own ctrl+q quit has no F-key twin: people on flow-control terminals are stuck.
        assert "ctrl+q is often swallowed" in joined
        # ctrl+s has F2 (and F6 on the pane): fine.
        assert "Save" not in joined and "Hide the pane" not in joined


async def test_real_desk_f1_help_and_binding_audit(tmp_path, monkeypatch) -> None:
    """The desk: F1 opens the help with the desk's keys, a remap from the config file shows,
    and every binding has an id and an F-key twin where terminals swallow the chord."""
    from desk_helpers import make_app, ready, tool_folder

    config = tmp_path / "config.toml"
    config.write_text('[keymap]\n"desk.save" = "ctrl+s,f2,f11"\n', encoding="utf-8")
    monkeypatch.setenv("PATCH_TUI_CONFIG", str(config))
    from patch_tui.settings.config import load_settings

    app = make_app(tool_folder(tmp_path))
    app.settings = load_settings(watch_tools=False, watch_themes=False)
    async with app.run_test(size=(120, 50)) as pilot:
        await ready(pilot, app)
        desk = app.screen
        assert audit_bindings(collect_bindings(app, desk)) == []
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        shown = help_text(app)
        assert "Authoring desk" in shown and "Tool browser" in shown and "Lint panel" in shown
        assert "ctrl+s F2 F11" in shown  # the remap from config.toml
        await pilot.press("f1")
        await pilot.pause()
        assert app.screen is desk


async def test_every_registered_screen_passes_the_binding_audit(tmp_path, monkeypatch) -> None:
    """Each screen the app can open (SCREENS_LAZY) is opened for real and its keys audited."""
    from desk_helpers import make_app, ready, tool_folder
    from pilotkit import until

    from patch_tui.ui.app import SCREENS_LAZY

    monkeypatch.setenv("PATCH_TUI_CONFIG", str(tmp_path / "config.toml"))
    monkeypatch.setenv("PATCH_TUI_STORE", str(tmp_path / "store.sqlite3"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    app = make_app(tool_folder(tmp_path))
    problems: dict[str, list[str]] = {}
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        for name in SCREENS_LAZY:
            app.action_open_screen(name)
            await until(
                pilot,
                lambda: app.screen is not app.editor and app.screen.is_mounted,
                what=f"{name} to open",
            )
            problems[name] = audit_bindings(collect_bindings(app, app.screen))
            while app.screen is not app.editor:
                app.pop_screen()
                await pilot.pause()
    assert {name: p for name, p in problems.items() if p} == {}


async def test_help_in_tiny_terminal_does_not_crash() -> None:
    app = Shell()
    async with app.run_test(size=(20, 5)) as pilot:
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert "Save" in help_text(app)
