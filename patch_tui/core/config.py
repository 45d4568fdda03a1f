"""User settings: env `PATCH_TUI_*`, then the config file (TOML), then defaults.

The config file is `config.toml` in the user config folder, or `PATCH_TUI_CONFIG` (tests point it
at a temporary file so they never read or write the real one).
"""

from __future__ import annotations

import json
import os
import tempfile
import tomllib
from pathlib import Path
from typing import Any

from pydantic import Field
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from patch_tui.core import paths

DEFAULT_MODEL = "claude-sonnet-5-5"


class Settings(BaseSettings):
    """patch-tui's settings. Each one can be set in config.toml or as PATCH_TUI_<NAME>."""

    model_config = SettingsConfigDict(
        env_prefix="PATCH_TUI_",
        extra="ignore",
        use_attribute_docstrings=True,
    )

    theme: str = "patch-dark"
    """The theme's name: a shipped one (patch-dark, patch-light, patch-contrast) or your own."""

    model: str = DEFAULT_MODEL
    """The Claude model used to generate and refine tools."""

    anthropic_api_key: str | None = Field(default=None, repr=False)
    """An API key for Claude, used when ANTHROPIC_API_KEY is not set."""

    max_repairs: int = 2
    """How many times the generator sends lint errors back to the model for a fix."""

    confirm_ttl: int = 300
    """Seconds a pending confirmation stays approvable before it expires."""

    keymap: dict[str, str] = Field(default_factory=dict)
    """Binding id -> keys, e.g. {"desk.save" = "ctrl+s,f2"}: remaps the app's bindings."""

    watch_tools: bool = True
    """Follow tool files changed outside the app (live reload)."""

    watch_themes: bool = True
    """Reload theme files when they change."""

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (
            init_settings,
            env_settings,
            TomlConfigSettingsSource(settings_cls, toml_file=paths.config_file()),
        )


class ConfigError(Exception):
    """The config file cannot be read; the message says where and why."""


def load_settings(**overrides: Any) -> Settings:
    """Settings from env and the config file. A broken file raises ConfigError, not a traceback."""
    try:
        return Settings(**overrides)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{paths.config_file()}: not valid TOML: {exc}") from None
    except ValueError as exc:  # pydantic's ValidationError is a ValueError
        raise ConfigError(f"{paths.config_file()}: {exc}") from None


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, dict):
        inner = ", ".join(f"{json.dumps(str(k))} = {_toml_value(v)}" for k, v in value.items())
        return "{ " + inner + " }" if inner else "{}"
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return json.dumps(str(value))  # a JSON string is a valid TOML basic string


def save_setting(key: str, value: Any) -> Path:
    """Remember one setting in the config file (atomically), keeping the others."""
    path = paths.config_file()
    current: dict[str, Any] = {}
    if path.exists():
        try:
            current = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path}: cannot update the config file: {exc}") from None
    current[key] = value
    text = "".join(f"{k} = {_toml_value(v)}\n" for k, v in current.items())
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".config-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
