"""Alerts when an action arrives: the terminal bell, a desktop notification (OSC 9 / OSC 777
escape sequences for terminals that show them, `notify-send` where it is installed).

    notification(actions)             -> (title, body)  safe text: no control characters
    osc_sequences(title, body, mode)  -> list[str]      what to write to the terminal
    osc_mode(enabled, env)            -> "9" | "777" | None
    notify_send_argv(title, body)     -> list[str] | None   None when notify-send is missing
    send_notify(argv)                                   runs it (from a worker thread)

Nothing here imports Textual: the UI writes the sequences through its driver
(patch_tui/ui/alerts.py).

Why the text is cleaned twice over: a tool's name and args come from an agent. Written into an
escape sequence, an ESC or BEL inside them would end the sequence early and make the rest
ordinary terminal output (a cursor move, a title change, an OSC 52 clipboard write). So every
control and hidden character is replaced by its visible `⟦U+XXXX⟧` name (untrusted/text_safety.py)
before anything is built, the separators of OSC 777 (`;`) are replaced in the title, and the
freedesktop notification body, which some servers read as markup, gets `&`, `<`, `>` escaped.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from typing import Any

from patch_tui.untrusted.text_safety import visible

MAX_BODY = 200
ESC, BEL = "\x1b", "\x07"


def _clean(text: str, limit: int) -> str:
    # Newlines and tabs are "ordinary" for visible(); in a one-line notification they are not.
    safe = visible(text).replace("\n", " ").replace("\t", " ").replace("\r", " ")
    return safe if len(safe) <= limit else safe[: limit - 1] + "\u2026"


def notification(actions: Sequence[Any]) -> tuple[str, str]:
    """Title and body for newly arrived actions (objects with .tool and .args)."""
    if len(actions) == 1:
        action = actions[0]
        title = f"patch-tui: {_clean(action.tool, 60)} waits for approval"
        args = json.dumps(action.args, ensure_ascii=False, sort_keys=True)
        return title, _clean(f"{action.tool} {args}", MAX_BODY)
    title = f"patch-tui: {len(actions)} actions wait for approval"
    return title, _clean(", ".join(a.tool for a in actions), MAX_BODY)


def osc_mode(enabled: bool, env: Mapping[str, str]) -> str | None:
    """Which desktop-notification sequence the terminal understands, by what it says it is:
    OSC 9 for iTerm2, WezTerm, ghostty, Windows Terminal and ConEmu; OSC 777 for rxvt-unicode and
    foot; nothing otherwise (an unknown terminal may print it), and nothing inside tmux or screen
    (they drop or garble sequences they do not pass through). `PATCH_TUI_OSC=9` or `777` forces
    one, for a terminal this list does not know."""
    if not enabled:
        return None
    forced = env.get("PATCH_TUI_OSC", "")
    if forced in ("9", "777"):
        return forced
    if env.get("TMUX") or env.get("STY"):
        return None
    program = env.get("TERM_PROGRAM", "").lower()
    term = env.get("TERM", "").lower()
    if (
        program in ("iterm.app", "wezterm", "ghostty")
        or env.get("WT_SESSION")
        or env.get("ConEmuPID")
    ):
        return "9"
    if term.startswith("rxvt") or term.startswith("foot"):
        return "777"
    return None


def osc_sequences(title: str, body: str, mode: str | None) -> list[str]:
    """The escape sequence(s) for one notification. Title and body must come from
    notification() (already free of control characters); checked again here, because a control
    character inside would break out of the sequence."""
    for text in (title, body):
        if any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in text):
            raise ValueError("notification text holds a control character")
    if mode == "9":
        return [f"{ESC}]9;{title}: {body}{BEL}"]
    if mode == "777":
        return [f"{ESC}]777;notify;{title.replace(';', ',')};{body}{BEL}"]
    return []


def notify_send_argv(title: str, body: str) -> list[str] | None:
    exe = shutil.which("notify-send")
    if exe is None:
        return None
    escaped = body.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    # `--` so a title starting with `-` is never read as an option.
    return [exe, "--app-name=patch-tui", "--urgency=normal", "--", title, escaped]


def send_notify(argv: list[str]) -> bool:
    """Runs notify-send (never through a shell); False when it failed or hung."""
    try:
        done = subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=5,
            env=dict(os.environ),
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0
