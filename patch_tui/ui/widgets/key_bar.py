"""The footer: every key binding of the focused widget's chain, as one widget.

Textual's Footer builds a widget per key and rebuilds them all whenever the focus moves; the
desk shows sixteen keys, which made the footer the costliest part of the first frame (about
50 ms of it). KeyBar shows the same bindings (`screen.active_bindings`, so remapped keys show
their new keys) as one line of text: a click on a key presses it, the key under the mouse is
highlighted, and what does not fit is cut at a key boundary with "…" (F1 lists them all).
"""

from __future__ import annotations

from typing import NamedTuple

from rich.cells import cell_len
from textual import events
from textual.binding import Binding
from textual.content import Content
from textual.screen import Screen
from textual.style import Style
from textual.widget import Widget


class _Item(NamedTuple):  # not a frozen dataclass: a fifth of the import time
    key: str  # the key to press (the binding's first key)
    display: str
    description: str
    enabled: bool


class KeyBar(Widget):
    """A one-line footer of key bindings."""

    COMPONENT_CLASSES = {"key-bar--key", "key-bar--hover", "key-bar--disabled"}
    DEFAULT_CSS = """
    KeyBar {
        dock: bottom;
        height: 1;
        background: $footer-background;
        color: $footer-description-foreground;
    }
    KeyBar > .key-bar--key { color: $footer-key-foreground; text-style: bold; }
    KeyBar > .key-bar--hover { background: $block-hover-background; }
    KeyBar > .key-bar--disabled { text-style: dim; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._items: list[_Item] = []
        self._palette: _Item | None = None
        self._spans: list[tuple[int, int, str]] = []  # (start x, end x, key) as last rendered
        self._hover: str | None = None

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._bindings_changed)
        self._bindings_changed(self.screen)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def _bindings_changed(self, screen: Screen[object]) -> None:
        if not self.is_attached or screen is not self.screen:
            return
        items: list[_Item] = []
        palette: _Item | None = None
        seen: set[str] = set()
        app = self.app
        palette_key = app.COMMAND_PALETTE_BINDING if app.ENABLE_COMMAND_PALETTE else None
        for key, (_node, binding, enabled, _tooltip) in screen.active_bindings.items():
            if key == palette_key:
                palette = self._item(binding, enabled)
                continue
            if not binding.show or binding.action in seen:
                continue  # one entry per action, like Textual's Footer
            seen.add(binding.action)
            items.append(self._item(binding, enabled))
        if items != self._items or palette != self._palette:
            self._items, self._palette = items, palette
            self.refresh()

    def _item(self, binding: Binding, enabled: bool) -> _Item:
        return _Item(binding.key, self.app.get_key_display(binding), binding.description, enabled)

    def render(self) -> Content:
        width = self.size.width
        styles = {
            name: self.get_visual_style(f"key-bar--{name}") for name in ("key", "hover", "disabled")
        }

        def piece(item: _Item) -> list[tuple[str, Style]]:
            parts: list[tuple[str, Style]] = [(f" {item.display} ", styles["key"])]
            if item.description:
                parts.append((f"{item.description} ", Style()))
            if not item.enabled:
                parts = [(text, style + styles["disabled"]) for text, style in parts]
            if item.key == self._hover:
                parts = [(text, style + styles["hover"]) for text, style in parts]
            return parts

        tail = piece(self._palette) if self._palette else []
        tail_width = sum(cell_len(text) for text, _ in tail)
        out: list[tuple[str, Style]] = []
        spans: list[tuple[int, int, str]] = []
        x = 0
        for index, item in enumerate(self._items):
            parts = piece(item)
            w = sum(cell_len(text) for text, _ in parts)  # cells, not characters
            last = index == len(self._items) - 1
            room = width - tail_width - (0 if last else 1)
            if x + w > room:
                # The rest is in the help screen: the ellipsis opens it.
                help_key = self._help_key()
                if help_key:
                    spans.append((x, x + 1, help_key))
                out.append(("…", styles["key"]))
                x += 1
                break
            spans.append((x, x + w, item.key))
            out.extend(parts)
            x += w
        if tail:
            gap = max(width - x - tail_width, 1)
            out.append((" " * gap, Style()))
            spans.append(
                (x + gap, x + gap + tail_width, self._palette.key if self._palette else "")
            )
            out.extend(tail)
        self._spans = spans
        return Content.assemble(*out)

    def _help_key(self) -> str | None:
        for _node, binding, _enabled, _tooltip in self.screen.active_bindings.values():
            if "help" in binding.action:
                return binding.key
        return None

    def _key_at(self, x: int) -> str | None:
        for start, end, key in self._spans:
            if start <= x < end:
                return key
        return None

    def on_mouse_move(self, event: events.MouseMove) -> None:
        hover = self._key_at(event.x)
        if hover != self._hover:
            self._hover = hover
            self.refresh()

    def on_leave(self, event: events.Leave) -> None:
        if self._hover is not None:
            self._hover = None
            self.refresh()

    def on_click(self, event: events.Click) -> None:
        key = self._key_at(event.x)
        if key:
            event.stop()
            self.app.simulate_key(key)
