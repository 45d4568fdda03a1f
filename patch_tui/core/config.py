"""User settings: env `PATCH_TUI_*`, then the config file (TOML), then defaults.

The config file is `config.toml` in the user config folder, or `PATCH_TUI_CONFIG` (tests point it
at a temporary file so they never read or write the real one).

Two ways to read them:
- `load_settings()`: the validated `Settings` (pydantic-settings, in core/settings.py): the
  source of truth for every setting, imported on first use;
- `start_settings()`: what the desk needs before its first frame (theme, keymap, watch_tools,
  watch_themes), read with tomllib alone, because importing pydantic and pydantic-settings
  costs more than a tenth of a second. It takes a value only where it reads it exactly as
  pydantic-settings does, and hands anything else to `load_settings()`: the two never disagree,
  and a broken config file gives the same ConfigError (tests/test_config.py holds them to it).
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from patch_tui.core import paths

if TYPE_CHECKING:
    from patch_tui.core.settings import Settings

DEFAULT_MODEL = "claude-sonnet-5-5"


def __getattr__(name: str) -> Any:
    # `from patch_tui.core.config import Settings` keeps working; pydantic loads only then.
    if name == "Settings":
        from patch_tui.core.settings import Settings

        return Settings
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class ConfigError(Exception):
    """The config file cannot be read; the message says where and why."""


def load_settings(**overrides: Any) -> Settings:
    """Settings from env and the config file. A broken file raises ConfigError, not a traceback."""
    from patch_tui.core.settings import Settings

    try:
        return Settings(**overrides)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{paths.config_file()}: not valid TOML: {exc}") from None
    except ValueError as exc:  # pydantic's ValidationError is a ValueError
        raise ConfigError(f"{paths.config_file()}: {exc}") from None


# -- start-up settings, without pydantic ------------------------------------------------------


@dataclass
class StartSettings:
    """The settings the desk needs before its first frame. Any other one (`model`,
    `confirm_ttl`, ...) is read from the validated Settings on first use, so code that takes
    the app's settings never needs to know which kind it holds."""

    theme: str = "patch-dark"
    keymap: dict[str, str] = field(default_factory=dict)
    watch_tools: bool = True
    watch_themes: bool = True

    def __getattr__(self, name: str) -> Any:
        # Called only for names the dataclass lacks: the other settings.
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.full(), name)

    def full(self) -> Settings:
        """The validated settings. A config file broken since start-up gives the defaults
        here (the app reports the file once, after its first frame)."""
        try:
            return load_settings()
        except ConfigError:
            from patch_tui.core.settings import Settings

            return Settings.model_construct()


START_FIELDS = ("theme", "keymap", "watch_tools", "watch_themes")
# Every field of Settings and how start_settings() reads it (a test keeps the two in step).
# Fields it does not return are still read, so that a bad value anywhere is never let through.
_KINDS: dict[str, str] = {
    "theme": "str",
    "model": "str",
    "anthropic_api_key": "str",
    "max_repairs": "int",
    "confirm_ttl": "int",
    "confirm_wait": "int",
    "keymap": "keymap",
    "watch_tools": "bool",
    "watch_themes": "bool",
    "sandbox_engine": "str",
    "sandbox_allow_unisolated": "bool",
    "serve_workspace": "str",
    "alert_bell": "bool",
    "alert_osc": "bool",
    "alert_notify_send": "bool",
}
_ENV_PREFIX = "patch_tui_"  # pydantic-settings matches env names without regard to case
# pydantic's spellings of a boolean in text (any case; no spaces).
_BOOL_WORDS = {w: True for w in ("1", "on", "t", "true", "y", "yes")} | {
    w: False for w in ("0", "off", "f", "false", "n", "no")
}
_INT_TEXT = re.compile(r"[0-9]{1,18}")


class _Unsure(Exception):
    """A value start_settings() cannot read exactly as pydantic-settings: it decides."""


def start_settings() -> StartSettings:
    """The start-up settings from env and the config file, without importing pydantic.
    Anything unusual (a value of another type, a spelling pydantic might read otherwise, an
    unreadable file) goes to `load_settings()`, which raises ConfigError for a broken file."""
    try:
        values = _read_plainly()
    except (_Unsure, OSError, ValueError, RecursionError):  # TOML / UTF-8 / JSON errors too
        full = load_settings()
        return StartSettings(**{name: getattr(full, name) for name in START_FIELDS})
    return StartSettings(**{name: values[name] for name in START_FIELDS if name in values})


def _read_plainly() -> dict[str, Any]:
    from_file: dict[str, Any] = {}
    path = paths.config_file().expanduser()  # what pydantic-settings' TOML source opens
    if path.is_file():
        with path.open("rb") as fh:
            data = tomllib.load(fh)
        for key, value in data.items():
            name = key.lower()
            if name not in _KINDS:
                continue  # unknown keys are ignored (extra="ignore")
            if key != name:
                raise _Unsure(key)  # matched regardless of case; which wins is pydantic's call
            from_file[name] = _file_value(_KINDS[name], value)
    from_env: dict[str, Any] = {}
    for key, text in os.environ.items():
        lowered = key.lower()
        name = lowered[len(_ENV_PREFIX) :]
        if not lowered.startswith(_ENV_PREFIX) or name not in _KINDS:
            continue
        if name in from_env:
            raise _Unsure(key)  # two spellings of one name
        from_env[name] = _env_value(_KINDS[name], text)
    values = {**from_file, **from_env}
    if "keymap" in from_file and "keymap" in from_env:
        values["keymap"] = {**from_file["keymap"], **from_env["keymap"]}  # sources deep-merge
    return values


def _text(value: Any) -> str:
    if type(value) is not str:
        raise _Unsure(value)
    value.encode("utf-8")  # a lone surrogate (an undecodable env byte) raises: pydantic refuses it
    return value


def _keymap(value: Any) -> dict[str, str]:
    if type(value) is not dict:
        raise _Unsure(value)
    return {_text(k): _text(v) for k, v in value.items()}


def _file_value(kind: str, value: Any) -> Any:
    if kind == "bool":
        if type(value) is not bool:
            raise _Unsure(value)
        return value
    if kind == "int":
        if type(value) is not int or not -(2**63) < value < 2**63:
            raise _Unsure(value)
        return value
    if kind == "keymap":
        return _keymap(value)
    return _text(value)


def _env_value(kind: str, text: str) -> Any:
    text = _text(text)
    if kind == "bool":
        word = text.lower() if text.isascii() else ""
        if word not in _BOOL_WORDS:
            raise _Unsure(text)
        return _BOOL_WORDS[word]
    if kind == "int":
        if not _INT_TEXT.fullmatch(text):
            raise _Unsure(text)
        return int(text)
    if kind == "keymap":
        return _keymap(json.loads(text))  # pydantic-settings reads a dict from env as JSON
    return text


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
