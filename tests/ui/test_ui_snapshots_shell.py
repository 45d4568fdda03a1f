"""Snapshots of the shell: each shipped theme on a sampler of the widgets the desk is made of,
and the F1 help screen over a fixed set of bindings (both stable while the desk evolves).

Fixed terminal size, watchers off, cursors not blinking, fixed content. Regenerate with
`.venv/bin/pytest tests/ui/test_ui_snapshots_shell.py --snapshot-update` and look at the SVGs.
"""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import (
    Button,
    DataTable,
    Footer,
    Header,
    Input,
    Label,
    Select,
    Switch,
    TextArea,
)

from patch_tui.ui.desk.source_pane import SourceArea
from patch_tui.ui.theming.themes import install_themes

SOURCE = '''# ---
# name: echo_text
# version: 1.0.0
# description: Return the text it is given.
# inputs:
#   - name: text
#     type: string
#     tainted_ok: true
# ---
def main(text: str) -> dict:
    """Echo."""
    return {"text": text, "length": len(text)}  # a comment
'''


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("PATCH_TUI_CONFIG", str(tmp_path / "config.toml"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))


class ThemeSampler(App[None]):
    """The desk's building blocks in one screen: form fields, buttons, switches, a select, the
    lint table, the source pane with its highlighting, and the three severity colours."""

    TITLE = "patch-tui"
    CSS = """
    #row { height: auto; }
    #form { width: 1fr; height: auto; border: round $primary; }
    #source { width: 1fr; height: 16; }
    .field { height: 3; }
    .field Label { width: 12; padding: 1 1 0 0; }
    .field Input, .field Select { width: 1fr; }
    #sev Label { width: auto; margin-right: 2; }
    .error { color: $text-error; } .warning { color: $text-warning; } .success { color: $text-success; }
    DataTable { height: 5; }
    """

    def __init__(self, theme: str) -> None:
        super().__init__()
        self.choice = theme

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="row"):
            with Vertical(id="form"):
                with Horizontal(classes="field"):
                    yield Label("name")
                    yield Input("echo_text", id="name")
                with Horizontal(classes="field"):
                    yield Label("type")
                    yield Select(
                        [("string", "string"), ("object", "object")],
                        value="string",
                        allow_blank=False,
                    )
                with Horizontal(classes="field"):
                    yield Label("tainted_ok")
                    yield Switch(value=True)
                    yield Switch(value=False)
                with Horizontal(classes="field"):
                    yield Button("Save", variant="primary")
                    yield Button("Delete", variant="error")
                    yield Button("Keep")
            yield SourceArea(SOURCE, id="source")
        with Horizontal(id="sev"):
            yield Label("✗ error", classes="error")
            yield Label("! warning", classes="warning")
            yield Label("✓ no problems", classes="success")
        yield DataTable(id="lint")
        yield Footer()

    def on_mount(self) -> None:
        install_themes(self, self.choice, watch=False)
        table = self.query_one(DataTable)
        table.add_columns("severity", "code", "at", "message")
        table.add_row("error", "PT001", "2:9", "name must be snake_case")
        table.add_row("warning", "PT046", "6:13", "input `text` carries outside content")
        for widget in self.query("Input, TextArea"):
            if isinstance(widget, Input | TextArea):
                widget.cursor_blink = False
        self.query_one("#name", Input).focus()


@pytest.mark.parametrize("theme", ["patch-dark", "patch-light", "patch-contrast"])
def test_theme(snap_compare, theme: str) -> None:
    async def settle(pilot) -> None:
        await pilot.pause(0.2)  # the source pane's highlighting follows the theme

    assert snap_compare(ThemeSampler(theme), terminal_size=(110, 32), run_before=settle)


class KeysShell(App[None]):
    """A fixed set of bindings (the real desk's keys change as the app grows; its help content
    is asserted in tests/ui/test_help_keys.py). Areas come from the binding ids."""

    BINDINGS = [
        Binding("ctrl+q,f12", "quit", "Quit", id="app.quit"),
        Binding("f1", "help", "Help", id="app.help"),
        Binding("ctrl+s,f2", "noop", "Save", id="desk.save"),
        Binding("ctrl+b,f3", "noop", "Tools", id="desk.browser"),
        Binding("n", "noop", "New", id="browser.new"),
        Binding("delete,x", "noop", "Delete", id="browser.delete"),
        Binding("ctrl+l,f5", "noop", "Lint", id="lint.focus"),
        Binding("f", "noop", "Quick fix", id="lint.fix"),
    ]

    def compose(self) -> ComposeResult:
        yield Header()
        yield Input("name")
        yield Footer()

    def action_noop(self) -> None:
        pass

    def action_help(self) -> None:
        from patch_tui.ui.help import HelpScreen

        self.push_screen(HelpScreen())


def test_help_screen(snap_compare) -> None:
    async def open_help(pilot) -> None:
        await pilot.pause()
        await pilot.press("f1")
        await pilot.pause()

    assert snap_compare(KeysShell(), terminal_size=(100, 40), run_before=open_help)
