"""Where things live: the user's folders (platformdirs) and the files shipped with the package."""

from __future__ import annotations

import os
from collections.abc import Mapping
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


# The approver's key file and the approvers file sit beside the config file (PATCH_TUI_CONFIG moves
# them): named here, below both approvals/ (which uses them) and runtime/ (which hides them).
APPROVER_KEY_FILE_NAME = "approver_ed25519"
APPROVERS_FILE_NAME = "approvers.toml"
AGENT_KEY_PREFIX = "ssh-agent:"


def approval_identity_files(approver_key: str | None, approvers_file: str | None) -> list[Path]:
    """Every file that decides who may approve, as the settings name them now: the key file and
    the approvers file beside the config file (present or not: a tool must not create one),
    the `approver_key` file and the `approvers_file`. No tool may read a private key (it would
    hand it to the agent in its output) or write an approvers file (it would list the agent's
    key), wherever the user keeps them: the config folder alone is not enough, since the
    config file itself may live in a project (red team, issue 23)."""
    beside = config_file().expanduser().parent
    out = [beside / APPROVER_KEY_FILE_NAME, beside / APPROVERS_FILE_NAME]
    choice = (approver_key or "").strip()
    if choice and not choice.startswith(AGENT_KEY_PREFIX):
        out.append(Path(choice).expanduser())
    if approvers_file:
        out.append(Path(approvers_file).expanduser())
    return out


def default_store(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The confirmation store: `--store`, then `PATCH_TUI_STORE`, then the user state folder."""
    if explicit:
        return Path(explicit)
    env = os.environ.get("PATCH_TUI_STORE")
    if env:
        return Path(env)
    return state_dir() / "confirmations.sqlite3"


def runtime_config_dir(
    platform: str | None = None, env: Mapping[str, str] | None = None, home: str | None = None
) -> str:
    """Where the Patch runtime keeps its toolbox when PATCH_CAT_TOOLBOX_DIR is not set: the
    node package env-paths' `envPaths("patch-cat", {suffix: ""}).config`, which the runtime
    uses (mcp/src/toolbox.ts). Not platformdirs: on macOS and Windows they disagree.
      macOS    ~/Library/Preferences/patch-cat
      Windows  %APPDATA%\\patch-cat\\Config   (APPDATA unset: ~\\AppData\\Roaming)
      other    $XDG_CONFIG_HOME/patch-cat   (unset or empty: ~/.config/patch-cat)
    `platform`, `env` and `home` default to this machine's (tests fake them)."""
    import ntpath
    import posixpath
    import sys

    platform = sys.platform if platform is None else platform
    env = os.environ if env is None else env
    home = os.path.expanduser("~") if home is None else home
    if platform == "darwin":
        return posixpath.join(home, "Library", "Preferences", "patch-cat")
    if platform == "win32":
        app_data = env.get("APPDATA") or ntpath.join(home, "AppData", "Roaming")
        return ntpath.join(app_data, "patch-cat", "Config")
    return posixpath.join(
        env.get("XDG_CONFIG_HOME") or posixpath.join(home, ".config"), "patch-cat"
    )


def patch_runtime_dir() -> Path:
    """The Patch runtime's own folder: `PATCH_CAT_TOOLBOX_DIR`, else where the runtime keeps
    it on this platform (runtime_config_dir)."""
    env = os.environ.get("PATCH_CAT_TOOLBOX_DIR")
    if env:
        return Path(env)
    return Path(runtime_config_dir())


def default_toolbox(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The toolbox: `--toolbox`, then `PATCH_TUI_TOOLBOX`, then the Patch runtime's toolbox."""
    if explicit:
        return Path(explicit)
    env = os.environ.get("PATCH_TUI_TOOLBOX")
    if env:
        return Path(env)
    return patch_runtime_dir()
