"""The user's keymap (`[keymap]` in config.toml) applied to the app.

Apart from the help screen (help.py re-exports it) because the app applies the keymap
before its first frame, and the help screen is not needed until F1.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from textual.app import App


def install_keymap(app: App[Any], keymap: dict[str, str] | None = None) -> dict[str, str]:
    """Apply the user's keymap (`[keymap]` in config.toml: binding id -> "key,key"). Reads the
    settings when `keymap` is None; a broken config file leaves the default keys."""
    if keymap is None:
        from patch_tui.settings.config import ConfigError, start_settings

        try:
            keymap = start_settings().keymap
        except ConfigError:
            keymap = {}
    cleaned = {k: ",".join(p.strip() for p in v.split(",") if p.strip()) for k, v in keymap.items()}
    cleaned = {k: v for k, v in cleaned.items() if v}
    if cleaned:
        app.set_keymap(cleaned)
    return cleaned
