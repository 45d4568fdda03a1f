"""Where things live: the user's folders (platformdirs) and the files shipped with the package."""

from __future__ import annotations

import os
from pathlib import Path

APP_NAME = "patch-tui"
_PACKAGE_DIR = Path(__file__).resolve().parent.parent  # patch_tui/
_REPO_DIR = _PACKAGE_DIR.parent


def _shipped(name: str) -> Path:
    """A folder shipped with the app: inside the installed package, or at the repo's top level
    (an editable install or a checkout)."""
    inside = _PACKAGE_DIR / name
    return inside if inside.is_dir() else _REPO_DIR / name


def sample_tools_dir() -> Path:
    return _shipped("sample_tools")


def themes_dir() -> Path:
    return _shipped("themes")


def config_dir() -> Path:
    from platformdirs import user_config_path

    return user_config_path(APP_NAME, appauthor=False)


def state_dir() -> Path:
    from platformdirs import user_state_path

    return user_state_path(APP_NAME, appauthor=False)


def cache_dir() -> Path:
    from platformdirs import user_cache_path

    return user_cache_path(APP_NAME, appauthor=False)


def config_file() -> Path:
    """The config file; `PATCH_TUI_CONFIG` points elsewhere (tests use it)."""
    override = os.environ.get("PATCH_TUI_CONFIG")
    return Path(override) if override else config_dir() / "config.toml"


def default_store(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The confirmation store: `--store`, then `PATCH_TUI_STORE`, then the user state folder."""
    if explicit:
        return Path(explicit)
    env = os.environ.get("PATCH_TUI_STORE")
    if env:
        return Path(env)
    return state_dir() / "confirmations.sqlite3"


def patch_runtime_dir() -> Path:
    """The Patch runtime's own folder: `PATCH_CAT_TOOLBOX_DIR`, else its config folder."""
    env = os.environ.get("PATCH_CAT_TOOLBOX_DIR")
    if env:
        return Path(env)
    from platformdirs import user_config_path

    return user_config_path("patch-cat", appauthor=False)


def default_toolbox(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The toolbox: `--toolbox`, then `PATCH_TUI_TOOLBOX`, then the Patch runtime's toolbox."""
    if explicit:
        return Path(explicit)
    env = os.environ.get("PATCH_TUI_TOOLBOX")
    if env:
        return Path(env)
    return patch_runtime_dir()
