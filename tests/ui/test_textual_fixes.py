"""Fixes for Textual bugs that patch-tui works around (patch_tui/ui/textual_fixes.py)."""

from __future__ import annotations

import asyncio
import gc
import weakref

import pytest
from textual.app import App, ComposeResult
from textual.containers import Vertical
from textual.widget import Widget
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


class _Styled(App[None]):
    CSS = """
    Label.-hot { color: #ff0000; }
    Static.late { color: #00ff00; }
    """

    def compose(self) -> ComposeResult:
        yield Vertical(id="box")


async def test_a_new_widget_is_styled_once_when_it_mounts_with_the_classes_it_was_given() -> None:
    # Textual restyled a widget still being built (in no DOM) whenever a class changed: Input,
    # Button and Switch set classes in their constructors, a tenth of the desk's start-up work.
    from textual.css.stylesheet import Stylesheet

    app = _Styled()
    async with app.run_test(size=(40, 10)) as pilot:
        restyled: list[object] = []
        update_nodes = Stylesheet.update_nodes

        def spy(self: Stylesheet, nodes, animate: bool = False) -> None:  # type: ignore[no-untyped-def]
            nodes = list(nodes)
            restyled.extend(nodes)
            update_nodes(self, nodes, animate=animate)

        Stylesheet.update_nodes = spy  # type: ignore[method-assign]
        try:
            label = Label("new")
            label.add_class("-hot")
            label.remove_class("-hot")
            label.add_class("-hot")
            assert label not in restyled  # built, not mounted: nothing to restyle yet
            await app.query_one("#box").mount(label)
            await pilot.pause()
            assert label.styles.color.hex == "#FF0000"  # its classes at mount are applied
            # Mounted, a class change restyles it at once, as before.
            label.remove_class("-hot")
            assert label in restyled
            assert label.styles.color.hex != "#FF0000"
        finally:
            Stylesheet.update_nodes = update_nodes  # type: ignore[method-assign]


async def test_a_theme_switch_parses_each_stylesheet_once() -> None:
    # Stylesheet.reparse (a theme switch) dropped what it parsed: the next new widget class
    # mounted after it had every source parsed again, the app's own CSS too.
    from textual.css import stylesheet as css_stylesheet
    from textual.widgets import Static

    app = _Styled()
    async with app.run_test(size=(40, 10)) as pilot:
        parsed: list[str] = []
        parse = css_stylesheet.parse

        def spy(scope, css, read_from, **kwargs):  # type: ignore[no-untyped-def]
            parsed.append(read_from[1])
            return parse(scope, css, read_from, **kwargs)

        css_stylesheet.parse = spy
        try:
            app.theme = "textual-light"
            await pilot.pause()
            after_switch = len(parsed)
            assert "_Styled.CSS" in parsed  # the switch reparses with the new theme's colours
            await app.query_one("#box").mount(Static("late", classes="late"))
            await pilot.pause()
            assert parsed[after_switch:].count("_Styled.CSS") == 0
            assert app.query_one(".late").styles.color.hex == "#00FF00"
            assert app.screen.styles.background != app.get_theme("textual-dark").background
        finally:
            css_stylesheet.parse = parse


def _screen_lines(app) -> list[list[tuple[str, object]]]:
    """What the screen shows, cell run by cell run: the text and style of every segment."""
    strips = app.screen._compositor.render_strips()
    return [[(seg.text, seg.style) for seg in strip.simplify()] for strip in strips]


def _as_textual_paints(app) -> list[list[tuple[str, object]]]:
    from textual._compositor import Compositor

    fixed = Compositor._render_chops
    Compositor._render_chops = fixed.textual
    try:
        app.screen._compositor._cuts = None
        for widget in app.screen.walk_children(with_self=True):
            widget._styles_cache.clear()  # every line painted anew, skipped or not
        return _screen_lines(app)
    finally:
        Compositor._render_chops = fixed


@pytest.mark.usefixtures("desk_env")
@pytest.mark.parametrize("size", [(120, 36), (80, 24)])
async def test_a_widget_its_children_cover_is_not_painted_and_nothing_changes(folder, size):
    """The compositor skips rendering a widget whose every cell a widget in front of it has
    filled already (the desk's screen, main row, work column, panes): the screen is the same,
    cell for cell, as Textual paints it, on the desk and under a dialog over it."""
    from desk_helpers import make_app, ready
    from textual._compositor import Compositor

    from patch_tui.ui.dialogs.confirm import ConfirmModal

    app = make_app(folder)
    rendered: list[str] = []
    render_lines = Widget.render_lines

    def counted(widget, crop):
        rendered.append(widget.id or type(widget).__name__)
        return render_lines(widget, crop)

    async with app.run_test(size=size) as pilot:
        await ready(pilot, app)
        for widget in app.screen.query("Input, TextArea"):
            widget.cursor_blink = False
        await pilot.pause()
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(Widget, "render_lines", counted)
            app.screen._compositor._cuts = None
            for widget in app.screen.walk_children(with_self=True):
                widget._styles_cache.clear()
            ours = _screen_lines(app)
            skipped = {"main", "work", "panes"} - set(rendered)
            assert skipped == {"main", "work", "panes"}
            assert "EditorScreen" not in rendered
            assert "lint" in rendered and {"source", "form"} & set(rendered)
            assert ours == _as_textual_paints(app)

            app.push_screen(ConfirmModal("Delete the tool?", destructive=True))
            await pilot.pause(0.2)
            app.screen._compositor._cuts = None
            assert _screen_lines(app) == _as_textual_paints(app)
    assert Compositor._render_chops.textual is not None


@pytest.mark.usefixtures("desk_env")
async def test_widgets_styled_alike_share_their_component_styles_and_nothing_changes(folder):
    """Widgets mounted together that Textual would style alike (the form's inputs and
    switches) take their component styles (cursor, placeholder, slider...) from the first of
    them: each is what Textual's own styling of that widget gives."""
    from desk_helpers import make_app, ready
    from textual.css.stylesheet import Stylesheet

    textual_process = Stylesheet._process_component_classes.textual
    app = make_app(folder)
    applied: list[str] = []
    apply = Stylesheet.apply

    def counted(sheet, node, **kwargs):
        applied.append(type(node).__name__)
        return apply(sheet, node, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Stylesheet, "apply", counted)
        async with app.run_test(size=(120, 36)) as pilot:
            await ready(pilot, app)
            await pilot.pause()
            widgets = [w for w in app.screen.walk_children() if w._get_component_classes()]
            ours = {w: _component_rules(w) for w in widgets}
            patch.setattr(Stylesheet, "apply", apply)
            for widget in widgets:
                textual_process(app.stylesheet, widget)
            assert {w: _component_rules(w) for w in widgets} == ours
    assert sum(1 for w in widgets if type(w).__name__ == "FieldInput") > 5
    # Fewer made-up component nodes styled than components of the widgets on screen.
    components = sum(len(w._get_component_classes()) for w in widgets)
    assert applied.count("DOMNode") < components


def _component_rules(widget) -> dict[str, dict]:
    return {
        name: styles._base_styles.get_rules() for name, styles in widget._component_styles.items()
    }
