"""The validated settings: a pydantic-settings class over the settings table (settings/schema.py).

Imported by `config.load_settings()` on first use, never at start-up: pydantic and
pydantic-settings take a tenth of a second and more to import, and the desk's first frame needs
only the table's start-up settings (`config.start_settings()` reads those without them). The
defaults, bounds and docs come from the table; the types are declared here, and
`schema_disagreements()` holds them to the table's kinds.
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
from patch_tui.settings.schema import BY_NAME, ENV_PREFIX, SETTINGS, Setting
from patch_tui.settings.toml_file import read_toml


def _setting(name: str) -> Any:
    """A field's default, bounds and doc from the table."""
    s = BY_NAME[name]
    extra: dict[str, Any] = {}
    if s.bounds is not None:
        extra = {"ge": s.bounds[0], "le": s.bounds[1], "strict": False}
    if s.secret:
        extra["repr"] = False
    if isinstance(s.default, dict):
        return Field(default_factory=s.fresh_default, description=s.doc, **extra)
    return Field(default=s.default, description=s.doc, **extra)


class _TomlSource(TomlConfigSettingsSource):
    """The config file read by type, size and nesting depth first (toml_file.read_toml)."""

    def _read_file(self, file_path: Path) -> dict[str, Any]:  # type: ignore[override]
        return read_toml(file_path)


class Settings(BaseSettings):
    """patch-tui's settings. Each one can be set in config.toml or as PATCH_TUI_<NAME>."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="ignore")

    theme: str = _setting("theme")
    model: str = _setting("model")
    anthropic_api_key: str | None = _setting("anthropic_api_key")
    max_repairs: int = _setting("max_repairs")
    confirm_ttl: int = _setting("confirm_ttl")
    confirm_wait: int = _setting("confirm_wait")
    keymap: dict[str, str] = _setting("keymap")
    watch_tools: bool = _setting("watch_tools")
    watch_themes: bool = _setting("watch_themes")
    sandbox_engine: str = _setting("sandbox_engine")
    sandbox_allow_unisolated: bool = _setting("sandbox_allow_unisolated")
    store: str | None = _setting("store")
    sandbox_allow_abstract_unix: bool = _setting("sandbox_allow_abstract_unix")
    packages_index_url: str | None = _setting("packages_index_url")
    packages_allow_sdist: bool = _setting("packages_allow_sdist")
    serve_workspace: str | None = _setting("serve_workspace")
    approver_key: str | None = _setting("approver_key")
    approvers_file: str | None = _setting("approvers_file")
    alert_bell: bool = _setting("alert_bell")
    alert_osc: bool = _setting("alert_osc")
    alert_notify_send: bool = _setting("alert_notify_send")
    serve_max_args_bytes: int = _setting("serve_max_args_bytes")

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


_TYPES: dict[str, Any] = {"str": str, "int": int, "bool": bool, "keymap": dict[str, str]}


def _expected(s: Setting) -> Any:
    base = _TYPES[s.kind]
    return base | None if s.default is None else base


def schema_disagreements() -> list[str]:
    """Where Settings and the settings table differ (names, order, types, defaults, bounds,
    docs). [] when they agree."""
    problems: list[str] = []
    declared = Settings.model_fields
    if list(declared) != [s.name for s in SETTINGS]:
        problems.append(f"Settings has {list(declared)}, the table {[s.name for s in SETTINGS]}")
    for s in SETTINGS:
        info = declared.get(s.name)
        if info is None:
            continue
        default = info.default_factory() if info.default_factory is not None else info.default  # type: ignore[call-arg]
        if info.annotation != _expected(s):
            problems.append(f"{s.name}: {info.annotation} in Settings, {_expected(s)} in the table")
        if default != s.default:
            problems.append(
                f"{s.name}: default {default!r} in Settings, {s.default!r} in the table"
            )
        if (info.description or "") != s.doc:
            problems.append(f"{s.name}: Settings' doc is not the table's")
        bounds = [getattr(m, "ge", None) for m in info.metadata] + [
            getattr(m, "le", None) for m in info.metadata
        ]
        found = tuple(b for b in bounds if b is not None) or None
        if found != s.bounds:
            problems.append(f"{s.name}: bounds {found} in Settings, {s.bounds} in the table")
    return problems
