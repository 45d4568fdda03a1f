"""mkdocs hooks (mkdocs.yml `hooks:`): the command line reference is written at build time from
patch-tui's own argument parser, so docs/reference/cli.md can never list an option the program
does not have, or miss one it has.

A page holding the line `<!-- patch-tui help -->` gets, in its place, the `--help` of the TUI,
of `patch-tui` and of every command and sub-command, each under its own heading.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator
from typing import Any

MARK = "<!-- patch-tui help -->"
WIDTH = "100"  # argparse wraps to $COLUMNS


def _commands(
    parser: argparse.ArgumentParser, words: tuple[str, ...]
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Each parser below this one, depth first, in the order --help lists them."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            seen: set[int] = set()
            for name, sub in action.choices.items():
                if id(sub) in seen:  # an alias
                    continue
                seen.add(id(sub))
                yield (*words, name), sub
                yield from _commands(sub, (*words, name))


def render() -> str:
    from patch_tui.cli import _tui_parser, build_parser

    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = WIDTH
    try:
        parser = build_parser()
        parts = [
            "### patch-tui [PATH]",
            "",
            "The TUI (the default when no command is given).",
            "",
            "```text",
            _tui_parser().format_help().rstrip(),
            "```",
            "",
            "### patch-tui COMMAND",
            "",
            "```text",
            parser.format_help().rstrip(),
            "```",
        ]
        for words, sub in _commands(parser, ()):
            heading = "###" if len(words) == 1 else "####"
            parts += ["", f"{heading} patch-tui {' '.join(words)}", "", "```text"]
            parts += [sub.format_help().rstrip(), "```"]
        return "\n".join(parts) + "\n"
    finally:
        if old is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = old


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if MARK not in markdown:
        return markdown
    return markdown.replace(MARK, render())
