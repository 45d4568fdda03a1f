"""What `patch-tui`'s argument parsing does to argv before argparse reads it (cli.py): a
confirmation token may start with `-`, which argparse would take for an option. Standard library
only, as cli.py is (start-up stays light)."""

from __future__ import annotations

_TOKEN_COMMANDS = ("confirm", "approve", "reject", "claim")
_VALUED_TOKEN_OPTIONS = ("--store", "--toolbox", "--note", "--reason", "--args", "--for")
_TOKEN_OPTIONS = (*_VALUED_TOKEN_OPTIONS, "-h", "--help")


def protect_dash_token(args: list[str]) -> list[str]:
    """Let a confirmation token that starts with `-` (or `--`) through argparse, which would
    read it as an option: the first long argument that is neither one of our options nor an
    option's value moves after a `--`."""
    if not any(a in _TOKEN_COMMANDS for a in args) or "--" in args:
        return args
    skip = False
    for i, arg in enumerate(args):
        if skip:
            skip = False
            continue
        name = arg.split("=", 1)[0]
        if name in _TOKEN_OPTIONS:
            skip = name in _VALUED_TOKEN_OPTIONS and "=" not in arg
            continue
        if len(arg) >= 16 and arg.startswith("-"):
            return [*args[:i], *args[i + 1 :], "--", arg]
    return args
