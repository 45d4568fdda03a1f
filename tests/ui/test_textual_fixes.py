"""Fixes for Textual bugs that patch-tui works around (patch_tui/ui/textual_fixes.py)."""

from __future__ import annotations

import asyncio
import gc
import weakref

from textual.app import App, ComposeResult
from textual.containers import Vertical
from textual.widgets import Label

import patch_tui.ui  # noqa: F401  (applies the fixes, as importing any of patch-tui's screens does)


class _Cards(App[None]):
    def compose(self) -> ComposeResult:
        yield Vertical(id="cards")


async def _render_and_remove_cards() -> list[weakref.ref]:
    app = _Cards()
    async with app.run_test(size=(60, 20)) as pilot:
        cards = app.query_one("#cards")
        await cards.mount(*(Label(f"card {i}") for i in range(40)))
        await pilot.pause()
        rendered = [weakref.ref(card._styles_cache) for card in cards.children]
        await cards.remove_children()
        await pilot.pause()
    return rendered


async def test_a_removed_widget_lets_go_of_what_it_rendered() -> None:
    # Textual's StylesCache.get_inner_outer is an lru_cache on a method, so its cache kept up to
    # 1024 widgets' StylesCache (and every line they rendered) alive after the widgets and their
    # app were gone (Textualize/textual#6665). The desk builds its form anew for each tool.
    # In a task of its own, as each test's app is: Textual's active_app (a context variable)
    # keeps the app itself alive until the task that ran it ends.
    rendered = await asyncio.create_task(_render_and_remove_cards())
    gc.collect()
    assert sum(ref() is not None for ref in rendered) == 0


def _keys(*chunks: str) -> list[str]:
    from textual._xterm_parser import XTermParser

    parser = XTermParser(False)
    out: list[str] = []
    for chunk in chunks:
        out += [getattr(t, "key", type(t).__name__) for t in parser.feed(chunk)]
    return out + [getattr(t, "key", type(t).__name__) for t in parser.feed("")]


def test_alt_key_right_before_another_key_sequence_stays_alt() -> None:
    """alt+z then ctrl+Home a tenth of a second apart typed `^z` into the source (issue 25)."""
    assert _keys("\x1bz\x1b[1;5H") == ["alt+z", "ctrl+home"]
    assert _keys("\x1bz", "\x1b[1;5H") == ["alt+z", "ctrl+home"]  # across two reads
    # Nothing else changes: a lone alt key, arrows, a typed ^, escape then an arrow, F1.
    assert _keys("\x1bz") == ["alt+z"]
    assert _keys("\x1b[A\x1b[B") == ["up", "down"]
    assert _keys("^z") == ["circumflex_accent", "z"]
    assert _keys("\x1b\x1b[A") == ["escape", "up"]
    assert _keys("\x1bO", "P") == ["f1"]
