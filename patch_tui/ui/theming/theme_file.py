"""The theme file model (pydantic): how a theme file is validated and its errors worded.

themes.py reads an ordinary theme file without it (importing pydantic would slow every start);
anything unusual comes here, so what is refused, and why, is this model's word.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from textual.theme import Theme

from patch_tui.ui.theming.themes import _NAME, _check_colour, _check_variable


class ThemeFile(BaseModel):
    """One theme file. Colours are anything Textual understands: `#rrggbb`, `#rrggbbaa`,
    `rgb(…)`, `hsl(…)`, colour names, `ansi_*`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=_NAME.pattern)
    """The name you pick it by (`--theme NAME`, `theme = "NAME"` in config.toml)."""
    dark: bool = True
    """A dark theme (light text on a dark background)?"""
    primary: str
    """The main accent: borders of focused widgets, the cursor, highlights."""
    secondary: str | None = None
    accent: str | None = None
    foreground: str | None = None
    """Default text colour."""
    background: str | None = None
    """The screen's background."""
    surface: str | None = None
    """The background of widgets (inputs, lists)."""
    panel: str | None = None
    """The background of panels and the lint list."""
    boost: str | None = None
    warning: str | None = None
    error: str | None = None
    success: str | None = None
    luminosity_spread: float = Field(default=0.15, ge=0.0, le=1.0)
    text_alpha: float = Field(default=0.95, ge=0.0, le=1.0)
    variables: dict[str, str] = Field(default_factory=dict)
    """Textual theme variables, e.g. `footer-key-foreground = "#4FA3F7"`."""
    ansi: bool = False
    """Use the terminal's own ANSI palette (colours given as `ansi_*`)."""

    @field_validator(
        "primary", "secondary", "accent", "foreground", "background", "surface", "panel",
        "boost", "warning", "error", "success",
    )
    @classmethod
    def _colour(cls, value: str | None) -> str | None:
        return None if value is None else _check_colour(value)

    @field_validator("variables")
    @classmethod
    def _variables(cls, value: dict[str, str]) -> dict[str, str]:
        for name, var in value.items():
            _check_variable(name, var)
        return value

    def to_theme(self) -> Theme:
        return Theme(**self.model_dump())


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
