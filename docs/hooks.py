"""mkdocs hooks (mkdocs.yml `hooks:`): the command line reference is written at build time from
patch-tui's own argument parser, so docs/reference/cli.md can never list an option the program
does not have, or miss one it has.

A page holding the line `<!-- patch-tui help -->` gets, in its place, the `--help` of the TUI,
of `patch-tui` and of every command and sub-command, each under its own heading; one holding
`<!-- patch-tui settings -->` gets the table of every setting, from settings/schema.py (the one
home of their names, defaults, ranges and docs).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator
from typing import Any

MARK = "<!-- patch-tui help -->"
SETTINGS_MARK = "<!-- patch-tui settings -->"
WIDTH = "100"  # argparse wraps to $COLUMNS


def _commands(
    parser: argparse.ArgumentParser, words: tuple[str, ...]
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Each parser below this one, depth first, in the order --help lists them. argparse has no
    public way to reach its sub-parsers; _actions and _SubParsersAction are how tools such as
    sphinx-argparse read them too."""
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


def _toml(value: Any) -> str:
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return "`true`" if value else "`false`"
    if isinstance(value, str):
        return f'`"{value}"`'
    if isinstance(value, dict):
        return "`{}`" if not value else f"`{value}`"
    return f"`{value}`"


def render_settings() -> str:
    from patch_tui.settings.schema import SETTINGS

    rows = ["| key | default | allowed | what it does |", "|---|---|---|---|"]
    for s in SETTINGS:
        allowed = f"{s.bounds[0]} to {s.bounds[1]}" if s.bounds else ""
        doc = s.doc.replace("|", "\\|")
        rows.append(f"| `{s.name}` | {_toml(s.fresh_default())} | {allowed} | {doc} |")
    return "\n".join(rows) + "\n"


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if MARK in markdown:
        markdown = markdown.replace(MARK, render())
    if SETTINGS_MARK in markdown:
        markdown = markdown.replace(SETTINGS_MARK, render_settings())
    return markdown
