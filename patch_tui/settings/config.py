"""User settings: env `PATCH_TUI_*`, then the config file (TOML), then defaults.

The config file is `config.toml` in the user config folder, or `PATCH_TUI_CONFIG` (tests point it
at a temporary file so they never read or write the real one).

Every setting is described once, in settings/schema.py (name, kind, default, range, doc). Two
ways to read them:
- `start_settings()`: what the desk needs before its first frame (the table's start-up
  settings), read by the table's kinds with tomllib alone, because importing pydantic and
  pydantic-settings costs more than a tenth of a second. It takes a value only where it reads
  it exactly as pydantic-settings does, and hands anything else to `load_settings()`: the two
  never disagree, and a broken config file gives the same ConfigError (tests/test_config.py);
- `load_settings()`: the validated `Settings` (pydantic-settings, settings/model.py, over the
  same table), imported on first use: it decides unusual input and words what is wrong.
This module imports the model, never the other way round.
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

from patch_tui.settings import paths
from patch_tui.settings.schema import (  # noqa: F401 - DEFAULT_MODEL and RANGES are read from here too
    BY_NAME,
    DEFAULT_MODEL,
    ENV_PREFIX,
    KINDS,
    RANGES,
    START_FIELDS,
)
from patch_tui.settings.toml_file import (  # noqa: F401 - the config file's reader, re-exported
    MAX_TOML_BYTES,
    MAX_TOML_DEPTH,
    loads_toml,
    read_toml,
)

if TYPE_CHECKING:
    from patch_tui.settings.model import Settings


def __getattr__(name: str) -> Any:
    # `from patch_tui.settings.config import Settings` keeps working; pydantic loads only then.
    if name == "Settings":
        from patch_tui.settings.model import Settings

        return Settings
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class ConfigError(Exception):
    """The config file cannot be read; the message says where and why."""


def load_settings(**overrides: Any) -> Settings:
    """Settings from env and the config file. A broken file or a bad value raises ConfigError
    with one line naming the variable (or the file and key) and what is allowed."""
    from pydantic import ValidationError

    from patch_tui.settings.model import Settings

    try:
        return Settings(**overrides)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{paths.config_file()}: not valid TOML: {exc}") from None
    except ValidationError as exc:
        raise ConfigError(describe_settings_error(exc)) from None
    except OSError as exc:
        raise ConfigError(f"{paths.config_file()}: cannot read: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise ConfigError(f"{paths.config_file()}: {str(exc).splitlines()[0]}") from None


def _env_name(field_name: str) -> str | None:
    """The environment variable that set a field, as spelled in the environment, if any."""
    wanted = _ENV_PREFIX + field_name
    return next((key for key in os.environ if key.lower() == wanted), None)


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)[:60]
    text = text if len(text) <= 40 else text[:37] + "..."
    return json.dumps(text)[1:-1]  # control characters escaped: the line stays one line


def describe_settings_error(exc: Any) -> str:
    """A pydantic ValidationError of Settings in one line: where each bad value came from (the
    env variable, or the config file and key) and what the setting allows."""
    parts = []
    for err in exc.errors():
        name = str(err["loc"][0]) if err["loc"] else "?"
        env = _env_name(name)
        where = (
            f"{env}={_short(os.environ[env])}"
            if env
            else f"{paths.config_file()}: {name} = {_short(err.get('input'))}"
        )
        if name in RANGES:
            low, high = RANGES[name]
            what = f"must be a whole number from {low} to {high}"
        else:
            what = str(err["msg"]).removeprefix("Value error, ")
        parts.append(f"{where}: {what}")
    return "; ".join(parts)


# -- start-up settings, without pydantic ------------------------------------------------------


def _start_default(name: str) -> Any:
    return field(default_factory=BY_NAME[name].fresh_default)


@dataclass
class StartSettings:
    """The settings the desk needs before its first frame (the table's `at_start` ones, with
    its defaults). Any other one (`model`, `confirm_ttl`, ...) is read from the validated
    Settings on first use, so code that takes the app's settings never needs to know which
    kind it holds."""

    theme: str = _start_default("theme")
    keymap: dict[str, str] = _start_default("keymap")
    watch_tools: bool = _start_default("watch_tools")
    watch_themes: bool = _start_default("watch_themes")

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
            from patch_tui.settings.model import Settings

            return Settings.model_construct()


# How start_settings() reads each setting: the table's kinds. Settings it does not return are
# still read, so that a bad value anywhere is never let through.
_KINDS = KINDS
_ENV_PREFIX = ENV_PREFIX.lower()  # pydantic-settings matches env names without regard to case
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


def plain_setting(name: str, default: Any) -> Any:
    """One setting, read as start_settings() reads them (without pydantic: a tool run reads its
    sandbox settings on every run), else by load_settings(). A broken config file gives
    `default`: it is reported where the user reads their settings."""
    try:
        return _read_plainly().get(name, default)
    except (_Unsure, OSError, ValueError, RecursionError):
        pass
    try:
        return getattr(load_settings(), name, default)
    except ConfigError:
        return default


def read_setting(name: str, default: Any) -> Any:
    """One setting as `plain_setting` reads it, but a config file it cannot read plainly is
    validated whole (pydantic-settings) and a broken one raises ConfigError: for commands that
    start many times a minute (`run`), which must still say when the file is broken."""
    try:
        return _read_plainly().get(name, default)
    except (_Unsure, OSError, ValueError, RecursionError):
        return getattr(load_settings(), name, default)


def _read_plainly() -> dict[str, Any]:
    from_file: dict[str, Any] = {}
    path = paths.config_file().expanduser()  # what pydantic-settings' TOML source opens
    if path.is_file():
        data = read_toml(path)
        for key, value in data.items():
            name = key.lower()
            if name not in _KINDS:
                continue  # unknown keys are ignored (extra="ignore")
            if key != name:
                raise _Unsure(key)  # matched regardless of case; which wins is pydantic's call
            from_file[name] = _file_value(_KINDS[name], value)
            if _KINDS[name] == "int":
                _in_range(name, from_file[name])
    from_env: dict[str, Any] = {}
    for key, text in os.environ.items():
        lowered = key.lower()
        name = lowered[len(_ENV_PREFIX) :]
        if not lowered.startswith(_ENV_PREFIX) or name not in _KINDS:
            continue
        if name in from_env:
            raise _Unsure(key)  # two spellings of one name
        from_env[name] = _env_value(_KINDS[name], text)
        if _KINDS[name] == "int":
            _in_range(name, from_env[name])
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


def _in_range(name: str, value: int) -> int:
    low, high = RANGES.get(name, (-(2**63), 2**63))
    if not low <= value <= high:
        raise _Unsure(value)  # the validated reader words the error
    return value


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
            current = read_toml(path)
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
