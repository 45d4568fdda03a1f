"""What a theme file may hold, in one table (`THEME_KEYS`), the checks of its values, and the
plain reader that turns an ordinary theme file into a Textual `Theme` without pydantic.

Plain Python (Textual's colour parser only): every start reads the shipped themes, and importing
pydantic would slow it. A file the plain reader is not sure of goes to the pydantic model
(theme_file.py, built from the same table), which decides and words what is wrong.
"""

from __future__ import annotations

import re
from typing import Any, Literal, NamedTuple

from textual.color import Color, ColorParseError
from textual.theme import Theme

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
_VARIABLE_NAME = re.compile(r"^[a-z][a-z0-9-]*$")
# Text-style variables (`block-cursor-text-style = "bold"`) take style flags, not colours.
_STYLE_FLAGS = frozenset(
    "bold b dim italic i underline u uu overline o strike reverse blink not none".split()
)
_PERCENT = re.compile(r"^\d{1,3}(\.\d+)?%$")
_BASE_COLOURS = frozenset(
    "primary secondary accent foreground background surface panel boost warning error success".split()
)
# Where Textual itself uses "auto" (a contrasting text colour); elsewhere it breaks the CSS.
_AUTO_OK = frozenset(
    "text text-muted text-disabled block-cursor-foreground link-color link-color-hover "
    "button-color-foreground".split()
)


def _check_colour(value: str) -> str:
    try:
        Color.parse(value)
    except ColorParseError as exc:
        raise ValueError(f"{value!r} is not a colour ({exc})") from None
    return value


def _check_variable(name: str, value: str) -> None:
    """A theme variable ends up inside the app's stylesheet: a bad one would break CSS parsing
    for the whole app later, so it is refused here, where we can still say which file is wrong."""
    if not _VARIABLE_NAME.match(name):
        raise ValueError(f"variable name {name!r}: use lower-case letters, digits and '-'")
    if name in _BASE_COLOURS:
        # Our widgets read these as plain colours; the top-level field is the place for them.
        raise ValueError(f"variable {name!r}: set `{name}` at the top level, not in [variables]")
    words = value.split()
    if not words:
        raise ValueError(f"variable {name!r} is empty")
    if "-style" in name:  # block-cursor-text-style, link-style-hover…
        bad = [w for w in words if w.lower() not in _STYLE_FLAGS]
        if bad:
            raise ValueError(
                f"variable {name!r}: {' '.join(bad)!r} is not a text style "
                f"(use {', '.join(sorted(_STYLE_FLAGS))})"
            )
        return
    # A colour, optionally followed by an alpha percentage ("#81a1c1 35%", "auto 90%").
    if len(words) > 2 or (len(words) == 2 and not _PERCENT.match(words[1])):
        raise ValueError(f"variable {name!r}: expected a colour and an optional percentage")
    if words[0] == "auto":
        if name not in _AUTO_OK:
            raise ValueError(f"variable {name!r}: 'auto' only works for text colours")
        return
    try:
        Color.parse(words[0])
    except ColorParseError:
        raise ValueError(f"variable {name!r}: {words[0]!r} is not a colour") from None


REQUIRED: Any = object()  # the default of a key every theme file must have

ThemeKind = Literal["name", "colour", "bool", "fraction", "variables"]


class ThemeKey(NamedTuple):  # not a frozen dataclass: a fifth of the import time
    """One key of a theme file: `colour`s are optional unless REQUIRED, `fraction`s are floats
    from 0 to 1, `variables` a table of Textual theme variables."""

    name: str
    kind: ThemeKind
    default: Any = None
    doc: str = ""


THEME_KEYS: tuple[ThemeKey, ...] = (
    ThemeKey(
        "name",
        "name",
        REQUIRED,
        'The name you pick it by (`--theme NAME`, `theme = "NAME"` in config.toml).',
    ),
    ThemeKey("dark", "bool", True, "A dark theme (light text on a dark background)?"),
    ThemeKey(
        "primary",
        "colour",
        REQUIRED,
        "The main accent: borders of focused widgets, the cursor, highlights.",
    ),
    ThemeKey("secondary", "colour"),
    ThemeKey("accent", "colour"),
    ThemeKey("foreground", "colour", doc="Default text colour."),
    ThemeKey("background", "colour", doc="The screen's background."),
    ThemeKey("surface", "colour", doc="The background of widgets (inputs, lists)."),
    ThemeKey("panel", "colour", doc="The background of panels and the lint list."),
    ThemeKey("boost", "colour"),
    ThemeKey("warning", "colour"),
    ThemeKey("error", "colour"),
    ThemeKey("success", "colour"),
    ThemeKey("luminosity_spread", "fraction", 0.15),
    ThemeKey("text_alpha", "fraction", 0.95),
    ThemeKey(
        "variables",
        "variables",
        {},
        'Textual theme variables, e.g. `footer-key-foreground = "#4FA3F7"`.',
    ),
    ThemeKey(
        "ansi", "bool", False, "Use the terminal's own ANSI palette (colours given as `ansi_*`)."
    ),
)
KEYS: dict[str, ThemeKey] = {k.name: k for k in THEME_KEYS}
COLOURS: tuple[str, ...] = tuple(k.name for k in THEME_KEYS if k.kind == "colour")


def plain_theme(data: dict[str, Any]) -> Theme | None:
    """The Theme of an ordinary theme file, read without pydantic: only known keys, each value
    of exactly the type the table wants and passing the same checks as the model. Anything else
    gives None, and the model (theme_file.ThemeFile) validates the file and words what is
    wrong. tests/test_themes.py holds the two to the same themes."""
    values: dict[str, Any] = {
        k.name: dict(k.default) if isinstance(k.default, dict) else k.default
        for k in THEME_KEYS
        if k.default is not REQUIRED
    }
    for name, value in data.items():
        key = KEYS.get(name)
        if key is None or not _fits(key.kind, value):
            return None  # an unknown key (the model forbids extras), or an unusual value
        values[name] = dict(value) if key.kind == "variables" else value
    if any(k.default is REQUIRED and k.name not in data for k in THEME_KEYS):
        return None
    return Theme(**values)


def _fits(kind: ThemeKind, value: Any) -> bool:
    if kind == "name":
        return type(value) is str and _NAME.fullmatch(value) is not None
    if kind == "colour":
        return type(value) is str and _is_colour(value)
    if kind == "bool":
        return type(value) is bool
    if kind == "fraction":
        return type(value) is float and 0.0 <= value <= 1.0
    return type(value) is dict and all(_is_variable(k, v) for k, v in value.items())


def _is_colour(value: str) -> bool:
    try:
        _check_colour(value)
    except ValueError:
        return False
    return True


def _is_variable(name: Any, value: Any) -> bool:
    if type(name) is not str or type(value) is not str:
        return False
    try:
        _check_variable(name, value)
    except ValueError:
        return False
    return True
