"""The `patch-tui` script's entry: the cycle collector paused only for commands that end at once."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from patch_tui.__main__ import ENDS_AT_ONCE, collector_for
from patch_tui.cli import main


@pytest.fixture
def collector_paused() -> Iterator[None]:
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


@pytest.mark.parametrize("command", sorted(ENDS_AT_ONCE))
def test_a_command_that_ends_at_once_keeps_the_collector_paused(
    collector_paused: None, command: str
) -> None:
    collector_for(command)
    assert not gc.isenabled()


@pytest.mark.parametrize("command", ["tui", "serve", "guard", "inbox watch", "inbox approve"])
def test_a_command_that_lives_on_gets_the_collector_back(
    collector_paused: None, command: str
) -> None:
    collector_for(command)
    assert gc.isenabled()


def test_main_says_which_command_it_dispatches_before_running_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PATCH_TUI_STORE", str(tmp_path / "store.sqlite3"))
    monkeypatch.setenv("PATCH_TUI_CONFIG", str(tmp_path / "config.toml"))
    heard: list[str] = []
    assert main(["inbox", "list", "--json"], on_dispatch=heard.append) == 0
    assert heard == ["inbox list"]
    assert capsys.readouterr().out.strip() == "[]"
