"""The theme file model (pydantic), built from the theme table (theme_schema.THEME_KEYS): how a
theme file the plain reader is not sure of is validated, and its errors worded.

Imported only then (importing pydantic would slow every start); it imports the table and its
checks, never themes.py.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, field_validator
from textual.theme import Theme

from patch_tui.ui.theming.theme_schema import (
    _NAME,
    COLOURS,
    REQUIRED,
    THEME_KEYS,
    ThemeKey,
    _check_colour,
    _check_variable,
)


class ThemeFileBase(BaseModel):
    """One theme file. Colours are anything Textual understands: `#rrggbb`, `#rrggbbaa`,
    `rgb(…)`, `hsl(…)`, colour names, `ansi_*`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    @field_validator(*COLOURS, check_fields=False)
    @classmethod
    def _colour(cls, value: str | None) -> str | None:
        return None if value is None else _check_colour(value)

    @field_validator("variables", check_fields=False)
    @classmethod
    def _variables(cls, value: dict[str, str]) -> dict[str, str]:
        for name, var in value.items():
            _check_variable(name, var)
        return value

    def to_theme(self) -> Theme:
        return Theme(**self.model_dump())


def _field(key: ThemeKey) -> tuple[Any, Any]:
    """A model field for a table key: its type and default, bounds and doc."""
    doc = key.doc or None
    if key.kind == "name":
        return str, Field(pattern=_NAME.pattern, description=doc)
    if key.kind == "colour":
        if key.default is REQUIRED:
            return str, Field(description=doc)
        return str | None, Field(default=key.default, description=doc)
    if key.kind == "bool":
        return bool, Field(default=key.default, description=doc)
    if key.kind == "fraction":
        return float, Field(default=key.default, ge=0.0, le=1.0, description=doc)
    return dict[str, str], Field(default_factory=dict, description=doc)


ThemeFile: type[ThemeFileBase] = create_model(  # type: ignore[call-overload]
    "ThemeFile", __base__=ThemeFileBase, **{key.name: _field(key) for key in THEME_KEYS}
)


def describe(exc: ValidationError) -> str:
    """A ValidationError in one line: `where: what; where: what`."""
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "file"
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            msg = "unknown key"
        parts.append(f"{where}: {msg}")
    return "; ".join(parts)
