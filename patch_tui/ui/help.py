"""The F1 help screen: every key binding of the screen you came from, grouped by area, with the
binding id you remap it by, and a short "how the desk works".

The bindings are read from the live widgets with the user's keymap applied (the same way Textual
resolves them), so a remap in config.toml shows here exactly as it behaves.

`audit_bindings()` checks the house rules on bindings: every one of ours has an id (so it can be
remapped) and every chord a terminal tends to swallow has an F-key twin.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from rich.table import Table
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingsMap
from textual.containers import VerticalScroll
from textual.dom import DOMNode
from textual.keys import format_key
from textual.screen import Screen
from textual.widgets import Static

from patch_tui.ui.keymap import install_keymap  # noqa: F401 - re-exported
from patch_tui.ui.widgets.key_bar import KeyBar

#: Chords many terminals never deliver, and why (flow control, or the same byte as another key).
SWALLOWED: dict[str, str] = {
    "ctrl+s": "XOFF: freezes output in terminals with flow control",
    "ctrl+q": "XON: eaten by terminals with flow control",
    "ctrl+h": "the same byte as backspace",
    "ctrl+i": "the same byte as tab",
    "ctrl+m": "the same byte as enter",
    "ctrl+left_square_bracket": "the same byte as escape",
    "ctrl+left_square_brace": "the same byte as escape",  # Textual's own spelling of ctrl+[
}

#: Binding-id prefixes -> the area heading shown in the help (ids read "area.verb").
AREAS: dict[str, str] = {
    "app": "Everywhere",
    "desk": "Authoring desk",
    "editor": "Authoring desk",
    "browser": "Tool browser",
    "source": "Source",
    "form": "Manifest form",
    "lint": "Lint panel",
    "inbox": "Inbox",
    "try": "Try it",
    "generate": "Generate",
    "interop": "Export / import",
    "help": "Help",
}

HOW_IT_WORKS = """\
The desk edits one tool file at a time. The file's text is the single source of truth:

• Tool browser (left): every tool with its version and lint state. Type to filter.
• Manifest form: a view of the YAML frontmatter. A change in the form rewrites only those
  lines of the source, so undo in the source still works.
• Source: the whole file. Edits are re-parsed after a short pause; the form follows without
  taking the focus. While the frontmatter does not parse, the form shows the last good
  manifest, dimmed.
• Lint panel: diagnostics for the file. Select one to jump to its line or form field; apply a
  quick fix with its key.
• Tab and shift+Tab move from pane to pane (tool list, form, source, problems); in the
  form they go field by field first, and Esc leaves any pane at once. In the source, Tab
  indents while text is selected or the cursor stands in a line's indentation (shift+Tab
  dedents); anywhere else it leaves. ctrl+t shows the form or the source, ctrl+l problems.
• Saving is atomic. A file changed on disk is never overwritten silently, and quitting or
  switching tools with unsaved changes asks first. A tool changed by another editor follows
  on its own while you have no unsaved changes; otherwise a banner offers to reload.

Keys can be remapped in config.toml:  [keymap]  "desk.save" = "ctrl+s,f2"
The command palette (ctrl+p) has every command, named "area: verb"."""


@dataclass
class KeyRow:
    """One action and every key that triggers it (after the keymap)."""

    area: str
    action: str
    description: str
    binding_id: str | None
    owner: str
    ours: bool
    keys: list[str] = field(default_factory=list)
    key_names: list[str] = field(default_factory=list)


#: Textual's own classes whose keys are worth listing (editing keys); the rest is scrolling.
BUILT_IN_SHOWN = {"App", "Screen", "ModalScreen", "TextArea"}
_NOISE_ACTIONS = ("scroll_", "page_")


def _declared(cls: type) -> list[tuple[str, str]]:
    raw = cls.__dict__.get("BINDINGS")
    if not raw:
        return []
    return [(b.action, b.description) for b in Binding.make_bindings(raw)]


def _declaring_class(cls: type, binding: Binding) -> type | None:
    """The class in `cls`'s MRO whose own BINDINGS declare `binding` (None: added at run time,
    like the command palette's key)."""
    for klass in cls.__mro__:
        if (binding.action, binding.description) in _declared(klass):
            return klass
    return None


def _is_ours(cls: type) -> bool:
    return not cls.__module__.startswith(("textual.", "textual_"))


def _area_of(binding: Binding, node: DOMNode) -> str:
    if binding.id and "." in binding.id:
        prefix = binding.id.split(".", 1)[0]
        return AREAS.get(prefix, prefix.replace("_", " ").capitalize())
    area = getattr(type(node), "HELP_AREA", None)
    if isinstance(area, str):
        return area
    if isinstance(node, App):
        return AREAS["app"]
    return type(node).__name__


def _nodes(app: App[object], screen: Screen[object]) -> Iterable[DOMNode]:
    yield app
    yield screen
    yield from screen.walk_children(with_self=False)


def collect_bindings(app: App[object], screen: Screen[object]) -> list[KeyRow]:
    """Every binding of the app, `screen` and all widgets on it, with the app's keymap applied.

    A binding declared by one of our classes (or added to our app) is always listed, so nothing
    hides from the audit; of Textual's own, only the editing and focus keys are (scrolling keys
    are what anyone expects).
    """
    rows: dict[tuple[str, str, str], KeyRow] = {}
    keymap = app._keymap  # what Screen._binding_chain applies; there is no public getter
    seen_classes: set[type[DOMNode]] = set()
    for node in _nodes(app, screen):
        cls = type(node)
        if cls in seen_classes:
            continue  # ten Inputs have the same bindings
        seen_classes.add(cls)
        bindings: BindingsMap = node._bindings.copy()
        if keymap:
            bindings.apply_keymap(keymap)
        for key, binding in bindings:
            if binding.system:
                continue
            origin = _declaring_class(cls, binding)
            ours = _is_ours(origin if origin is not None else cls) or (
                origin is None and isinstance(node, App)
            )
            if ours:
                area = _area_of(binding, node)
            else:
                name = origin.__name__ if origin is not None else cls.__name__
                if (
                    name not in BUILT_IN_SHOWN
                    or not binding.description
                    or binding.action.startswith(_NOISE_ACTIONS)
                    or (name == "TextArea" and "+" not in key)  # arrows, home, end: known
                ):
                    continue
                area = (
                    AREAS["app"]
                    if name in {"App", "Screen", "ModalScreen"}
                    else f"{name} (built in)"
                )
            ident = (area, binding.action, binding.description)
            row = rows.get(ident)
            if row is None:
                row = rows[ident] = KeyRow(
                    area=area,
                    action=binding.action,
                    description=binding.description or binding.action.replace("_", " "),
                    binding_id=binding.id,
                    owner=cls.__name__,
                    ours=ours,
                )
            if key not in row.key_names:
                row.key_names.append(key)
                row.keys.append(binding.key_display or _key_label(key))
    return list(rows.values())


def _key_label(key: str) -> str:
    """`ctrl+left_square_bracket` -> `ctrl+[`, `f1` -> `F1`: spelled out, unlike the footer's `^s`,
    because the help is where people learn the keys."""
    *mods, last = key.split("+")
    label = format_key(last)
    if _is_fkey(last):
        label = last.upper()
    return "+".join([*mods, label])


def _is_fkey(key: str) -> bool:
    return key.startswith("f") and key[1:].isdigit()


def audit_bindings(rows: Iterable[KeyRow]) -> list[str]:
    """House rules: our bindings have ids; every swallowed chord has an F-key twin."""
    problems = []
    for row in rows:
        # Textual's app-wide keys (ctrl+q quit) count too: people need them in every terminal.
        if not row.ours and row.area != AREAS["app"]:
            continue
        label = f"{row.owner}: {row.description!r} ({', '.join(row.key_names)})"
        if row.ours and row.binding_id is None:
            problems.append(f"{label} has no id, so it cannot be remapped")
        swallowed = [k for k in row.key_names if k in SWALLOWED]
        if swallowed and not any(_is_fkey(k) for k in row.key_names):
            problems.append(
                f"{label}: {swallowed[0]} is often swallowed ({SWALLOWED[swallowed[0]]}) and has no F-key twin"
            )
    return problems


def _area_order(area: str) -> tuple[int, str]:
    order = list(dict.fromkeys(AREAS.values()))
    if area in order:
        return (order.index(area), area)
    if area.endswith("(built in)"):
        return (len(order) + 1, area)
    return (len(order), area)


def _table(rows: list[KeyRow]) -> Table:
    # Fixed widths, so the columns line up from one area to the next.
    table = Table.grid(padding=(0, 2))
    table.add_column("keys", width=18, overflow="fold")
    table.add_column("action", width=28, overflow="fold")
    table.add_column("id", no_wrap=True, style="dim")
    for row in rows:
        table.add_row(
            Text(" ".join(row.keys), style="bold"),
            Text(row.description),
            Text(row.binding_id or ""),
        )
    return table


class HelpScreen(Screen[None]):
    """F1: the keys of the screen underneath, grouped by area, and how the desk works."""

    HELP_AREA = "Help"
    BINDINGS = [
        Binding("escape,f1,q", "close", "Close help", id="help.close"),
    ]
    DEFAULT_CSS = """
    HelpScreen { background: $background; }
    HelpScreen #help-body { padding: 0 2; }
    HelpScreen .help-title { text-style: bold; color: $primary; margin-top: 1; }
    HelpScreen .help-how { color: $text-muted; margin-top: 1; }
    HelpScreen .help-problem { color: $warning; }
    """

    def __init__(self, target: Screen[object] | None = None) -> None:
        super().__init__()
        # Built before it is pushed, so `app.screen` is still the screen the user came from.
        self._target = target or self.app.screen

    def compose(self) -> ComposeResult:
        target = self._target
        rows = collect_bindings(self.app, target)
        # The keymap names bindings by id: an entry that matches nothing here is probably a typo.
        known_ids = {r.binding_id for r in rows if r.binding_id}
        stray = sorted(set(self.app._keymap) - known_ids)
        areas: dict[str, list[KeyRow]] = {}
        for row in rows:
            areas.setdefault(row.area, []).append(row)
        with VerticalScroll(id="help-body"):
            yield Static(Text("Keys  (F1 / escape closes)"), classes="help-title")
            for area in sorted(areas, key=_area_order):
                yield Static(Text(area), classes="help-title")
                yield Static(_table(areas[area]), classes="help-keys")
            if stray:
                yield Static(
                    Text(
                        "Keymap entries that match no binding on this screen: " + ", ".join(stray)
                    ),
                    classes="help-problem",
                )
            yield Static(Text("How the desk works"), classes="help-title")
            yield Static(Text(HOW_IT_WORKS), classes="help-how")
        yield KeyBar()

    def action_close(self) -> None:
        self.dismiss()
