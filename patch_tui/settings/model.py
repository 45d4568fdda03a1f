"""The validated settings: a pydantic-settings class, the source of truth for every setting.

Imported by `config.load_settings()` on first use, never at start-up: pydantic and
pydantic-settings take a tenth of a second and more to import, and the desk's first frame needs
only four settings (`config.start_settings()` reads those without them).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from patch_tui.settings import paths
from patch_tui.settings.config import DEFAULT_MODEL, RANGES, read_toml


def _bounded(name: str, default: int) -> Any:
    low, high = RANGES[name]
    return Field(default=default, ge=low, le=high, strict=False)


class _TomlSource(TomlConfigSettingsSource):
    """The config file read by type, size and nesting depth first (config.read_toml)."""

    def _read_file(self, file_path: Path) -> dict[str, Any]:  # type: ignore[override]
        return read_toml(file_path)


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

    max_repairs: int = _bounded("max_repairs", 2)
    """How many times the generator sends lint errors back to the model for a fix."""

    confirm_ttl: int = _bounded("confirm_ttl", 300)
    """Seconds a pending confirmation stays approvable before it expires."""

    confirm_wait: int = _bounded("confirm_wait", 50)
    """Seconds patch_confirm_action waits for a person's decision before answering
    awaiting_approval (serve and guard; 0: at once). Kept below common MCP host request
    timeouts (60 s)."""

    keymap: dict[str, str] = Field(default_factory=dict)
    """Binding id -> keys, e.g. {"desk.save" = "ctrl+s,f2"}: remaps the app's bindings."""

    watch_tools: bool = True
    """Follow tool files changed outside the app (live reload)."""

    watch_themes: bool = True
    """Reload theme files when they change."""

    sandbox_engine: str = "auto"
    """What isolates tool runs: auto (bubblewrap where installed, else Landlock), bwrap,
    landlock, or none (no filesystem isolation; gated calls are then refused)."""

    sandbox_allow_unisolated: bool = False
    """Run gated calls (human_confirm, tainted input) even where nothing can isolate them."""

    serve_workspace: str | None = None
    """The folder read-write tools may write when called through `patch-tui serve` (unset: none,
    only their own run folder). `run`, `confirm` and try-it use the folder they are started from."""

    alert_bell: bool = True
    """Ring the terminal bell when an action arrives in the confirmation inbox."""

    alert_osc: bool = True
    """Send a desktop notification through the terminal (OSC 9 or OSC 777) when an action
    arrives, in terminals known to show them (iTerm2, WezTerm, ghostty, Windows Terminal, foot,
    rxvt-unicode; not inside tmux or screen)."""

    alert_notify_send: bool = True
    """Send a desktop notification with `notify-send` when an action arrives, if it is installed."""

    serve_max_args_bytes: int = _bounded("serve_max_args_bytes", 1 << 20)
    """The largest arguments (JSON, in bytes) `patch-tui serve` accepts for one tool call."""

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
            _TomlSource(settings_cls, toml_file=paths.config_file()),
        )
