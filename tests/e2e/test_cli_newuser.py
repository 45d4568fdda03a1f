"""The command line as a newcomer meets it (issue 25): a mistyped command gets a did-you-mean,
`patch-tui help` answers, each command lists only the options it takes, every option says what
it does. Through the real CLI in a subprocess."""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

import pytest

from patch_tui.cli import SUBCOMMANDS, _tui_parser, build_parser
from tests.runtimekit import PATCH_TUI


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*PATCH_TUI, *args], capture_output=True, text=True, cwd=cwd, timeout=60)


@pytest.mark.parametrize(
    ("typed", "meant"), [("lnit", "lint"), ("sevre", "serve"), ("confrim", "confirm")]
)
def test_a_mistyped_command_gets_a_did_you_mean(tmp_path: Path, typed: str, meant: str) -> None:
    r = cli(typed, "x.py", cwd=tmp_path)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1, r.stderr  # one line, no usage dump, no traceback
    assert f"did you mean `patch-tui {meant}`?" in r.stderr


def test_an_unknown_word_names_the_commands_and_help(tmp_path: Path) -> None:
    r = cli("frobnicate", cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert "neither a command nor a tool file or folder" in r.stderr
    assert "`patch-tui help`" in r.stderr and all(c in r.stderr for c in SUBCOMMANDS)


def test_a_folder_with_a_command_like_name_is_still_a_path(tmp_path: Path) -> None:
    (tmp_path / "frobnicate").mkdir()
    import os

    from patch_tui.cli import _looks_like_a_command

    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert not _looks_like_a_command("frobnicate")
        assert _looks_like_a_command("lnit")
    finally:
        os.chdir(here)


def test_help_lists_every_command_and_help_command_its_options(tmp_path: Path) -> None:
    r = cli("help", cwd=tmp_path)
    assert r.returncode == 0
    for name in SUBCOMMANDS:
        assert f"    {name} " in r.stdout or f"    {name}\n" in r.stdout, name
    run = cli("help", "run", cwd=tmp_path)
    assert run.returncode == 0 and "--as-person" in run.stdout and "--timeout S" in run.stdout
    assert cli("help", "nope", cwd=tmp_path).returncode == 2


def test_store_and_toolbox_only_where_they_apply(tmp_path: Path) -> None:
    lint = cli("lint", "--help", cwd=tmp_path).stdout
    assert "--store" not in lint and "--toolbox" not in lint
    new = cli("new", "--help", cwd=tmp_path).stdout
    assert "--toolbox" in new and "--store" not in new
    run = cli("run", "--help", cwd=tmp_path).stdout
    assert "--store" in run and "--toolbox" in run
    # Still accepted before any command, as before.
    (tmp_path / "t.py").write_text("# ---\n")
    r = cli("--store", str(tmp_path / "s.db"), "lint", str(tmp_path / "t.py"), cwd=tmp_path)
    assert r.returncode == 1 and "unrecognized" not in r.stderr


def test_every_option_says_what_it_does() -> None:
    missing: list[str] = []

    def walk(parser: argparse.ArgumentParser, name: str) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub, subparser in action.choices.items():
                    walk(subparser, f"{name} {sub}")
            elif not action.help:
                missing.append(f"{name}: {action.option_strings or action.dest}")

    walk(build_parser(), "patch-tui")
    walk(_tui_parser(), "patch-tui (TUI)")
    assert missing == []
