"""The footer (KeyBar): what it shows, and that clicking a key presses it."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Input, Static

from patch_tui.ui.widgets.key_bar import KeyBar


class Keys(App[None]):
    BINDINGS = [
        Binding("ctrl+s,f2", "count('save')", "Save", id="t.save"),
        Binding("f3", "count('hidden')", "Hidden", show=False),
        Binding("f1", "count('help')", "Help"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.counts: dict[str, int] = {}

    def compose(self) -> ComposeResult:
        yield Static("body")
        yield Input(id="field")
        yield KeyBar()

    def action_count(self, name: str) -> None:
        self.counts[name] = self.counts.get(name, 0) + 1


def bar_text(app: App[None]) -> str:
    return str(app.screen.query_one(KeyBar).render())


async def test_shows_the_shown_bindings_and_the_palette_key() -> None:
    app = Keys()
    async with app.run_test(size=(100, 10)) as pilot:
        await pilot.pause()
        text = bar_text(app)
        assert "^s Save" in text and "f1 Help" in text
        assert "Hidden" not in text
        assert text.rstrip().endswith("^p palette")  # the palette key sits on the right


async def test_follows_the_focus_and_a_remapped_key() -> None:
    app = Keys()
    async with app.run_test(size=(100, 10)) as pilot:
        app.set_keymap({"t.save": "f5"})
        app.query_one("#field", Input).focus()
        await pilot.pause()
        text = bar_text(app)
        assert "f5 Save" in text and "^s Save" not in text


async def test_clicking_a_key_presses_it() -> None:
    app = Keys()
    async with app.run_test(size=(100, 10)) as pilot:
        await pilot.pause()
        bar = app.screen.query_one(KeyBar)
        x = bar_text(app).index("Save")
        assert await pilot.click(KeyBar, offset=(x, 0))
        await pilot.pause()
        assert app.counts == {"save": 1}
        assert await pilot.click(KeyBar, offset=(bar.size.width - 3, 0))  # the palette key
        await pilot.pause()
        assert app.screen is not app.screen_stack[0]  # the command palette opened


async def test_what_does_not_fit_ends_in_an_ellipsis_that_opens_help() -> None:
    app = Keys()
    async with app.run_test(size=(26, 10)) as pilot:
        await pilot.pause()
        text = bar_text(app)
        assert "…" in text and len(text) <= 26
        assert "^p palette" in text
        assert await pilot.click(KeyBar, offset=(text.index("…"), 0))
        await pilot.pause()
        assert app.counts.get("help") == 1
