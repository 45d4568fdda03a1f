"""Every setting in one table: name, kind, default, allowed range, doc, and whether the desk
needs it before its first frame. Plain data, no pydantic (start-up reads it).

The start-up reader (config.start_settings) reads by these kinds; the validated model
(model.Settings, pydantic-settings) takes its defaults, bounds and docs from here and declares
the types, and `model.schema_disagreements()` (tests/test_config.py) holds the two together.
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

DEFAULT_MODEL = "claude-sonnet-5-5"

Kind = Literal["str", "int", "bool", "keymap"]


# Named tuples, not frozen dataclasses, for the tables start-up builds: a fifth of the import
# time (the desk's first frame imports them).
class Setting(NamedTuple):
    """One setting. `kind` is how it is read ("str" with a None default may be unset);
    `bounds` the inclusive range of a number; `at_start`: the desk's first frame needs it;
    `secret`: never shown in a repr."""

    name: str
    kind: Kind
    default: Any
    doc: str
    bounds: tuple[int, int] | None = None
    at_start: bool = False
    secret: bool = False

    def fresh_default(self) -> Any:
        """The default, a new copy of a mutable one."""
        return dict(self.default) if isinstance(self.default, dict) else self.default


SETTINGS: tuple[Setting, ...] = (
    Setting(
        "theme",
        "str",
        "patch-dark",
        at_start=True,
        doc="The theme's name: a shipped one (patch-dark, patch-light, patch-contrast) or your own.",
    ),
    Setting(
        "model", "str", DEFAULT_MODEL, doc="The Claude model used to generate and refine tools."
    ),
    Setting(
        "anthropic_api_key",
        "str",
        None,
        secret=True,
        doc="An API key for Claude, used when ANTHROPIC_API_KEY is not set.",
    ),
    Setting(
        "max_repairs",
        "int",
        2,
        bounds=(0, 10),
        doc="How many times the generator sends lint errors back to the model for a fix.",
    ),
    Setting(
        "confirm_ttl",
        "int",
        300,
        bounds=(1, 30 * 24 * 3600),  # seconds: up to 30 days
        doc="Seconds a pending confirmation stays approvable before it expires.",
    ),
    Setting(
        "confirm_wait",
        "int",
        50,
        bounds=(0, 3600),
        doc="Seconds patch_confirm_action waits for a person's decision before answering "
        "awaiting_approval (serve and guard; 0: at once). Kept below common MCP host request "
        "timeouts (60 s).",
    ),
    Setting(
        "keymap",
        "keymap",
        {},
        at_start=True,
        doc='Binding id -> keys, e.g. {"desk.save" = "ctrl+s,f2"}: remaps the app\'s bindings.',
    ),
    Setting(
        "watch_tools",
        "bool",
        True,
        at_start=True,
        doc="Follow tool files changed outside the app (live reload).",
    ),
    Setting(
        "watch_themes", "bool", True, at_start=True, doc="Reload theme files when they change."
    ),
    Setting(
        "sandbox_engine",
        "str",
        "auto",
        doc="What isolates tool runs: auto (bubblewrap where installed, else Landlock), bwrap, "
        "landlock, or none (no filesystem isolation; gated calls are then refused).",
    ),
    Setting(
        "sandbox_allow_unisolated",
        "bool",
        False,
        doc="Run gated calls (human_confirm, tainted input) even where nothing can isolate them.",
    ),
    Setting(
        "store",
        "str",
        None,
        secret=True,
        doc="The confirmation store: a file path (SQLite, the default in the user state folder) "
        "or a PostgreSQL URL (`postgresql://user@host/db`, the team inbox). `--store` and "
        "PATCH_TUI_STORE come first.",
    ),
    Setting(
        "sandbox_allow_abstract_unix",
        "bool",
        False,
        doc="Let tools with network: true reach abstract unix sockets (D-Bus, X11). Off: "
        "Landlock's scope keeps them out (Linux 6.12+).",
    ),
    Setting(
        "packages_index_url",
        "str",
        None,
        doc="The package index a tool's runtime.packages are installed from (unset: "
        "PIP_INDEX_URL, else https://pypi.org/simple). The install inside the sandbox reaches "
        "only this index's port.",
    ),
    Setting(
        "packages_allow_sdist",
        "bool",
        False,
        doc="Install packages that have no wheel by building their source distribution (still "
        "inside the sandbox). Off: wheels only (pip --only-binary :all:), so no package code "
        "runs at install time.",
    ),
    Setting(
        "serve_workspace",
        "str",
        None,
        doc="The folder read-write tools may write when called through `patch-tui serve` (unset: "
        "none, only their own run folder). `run`, `confirm` and try-it use the folder they are "
        "started from.",
    ),
    Setting(
        "approver_key",
        "str",
        None,
        doc="The key your approvals are signed with: unset, the key file in the config folder "
        "(created on first use); `ssh-agent:SHA256:...`, that key in the running ssh-agent (a "
        "FIDO security key asks for a touch per approval); or the path of an Ed25519 key file.",
    ),
    Setting(
        "approvers_file",
        "str",
        None,
        doc="The trusted approvers (unset: approvers.toml in the config folder; without one, "
        "your own key is the one approver). /etc/patch-tui/approvers.toml, when present, wins.",
    ),
    Setting(
        "alert_bell",
        "bool",
        True,
        doc="Ring the terminal bell when an action arrives in the confirmation inbox.",
    ),
    Setting(
        "alert_osc",
        "bool",
        True,
        doc="Send a desktop notification through the terminal (OSC 9 or OSC 777) when an action "
        "arrives, in terminals known to show them (iTerm2, WezTerm, ghostty, Windows Terminal, "
        "foot, rxvt-unicode; not inside tmux or screen).",
    ),
    Setting(
        "alert_notify_send",
        "bool",
        True,
        doc="Send a desktop notification with `notify-send` when an action arrives, if it is installed.",
    ),
    Setting(
        "serve_max_args_bytes",
        "int",
        1 << 20,
        bounds=(1024, 64 << 20),
        doc="The largest arguments (JSON, in bytes) `patch-tui serve` accepts for one tool call.",
    ),
)

BY_NAME: dict[str, Setting] = {s.name: s for s in SETTINGS}
KINDS: dict[str, Kind] = {s.name: s.kind for s in SETTINGS}
# Every numeric setting's allowed range, inclusive.
RANGES: dict[str, tuple[int, int]] = {s.name: s.bounds for s in SETTINGS if s.bounds is not None}
START_FIELDS: tuple[str, ...] = tuple(s.name for s in SETTINGS if s.at_start)
ENV_PREFIX = "PATCH_TUI_"
