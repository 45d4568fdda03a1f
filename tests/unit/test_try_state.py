"""The try-it panel's memory: last args per tool and named cases, in one JSON file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from inboxkit import isolate

from patch_tui.ui.desk.try_it import MAX_CASES, TryState, state_path


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate(monkeypatch, tmp_path)


def test_default_file_is_in_the_state_folder(tmp_path: Path) -> None:
    assert state_path() == tmp_path / "xdg_state_home" / "patch-tui" / "try_it.json"


def test_remember_and_cases_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "state" / "try_it.json"
    state = TryState(path)
    assert state.last("slugify") is None and state.cases("slugify") == {}
    state.remember("slugify", {"text": "Hello"})
    state.save_case("slugify", "long", {"text": "x" * 100, "max_length": 10})
    again = TryState(path)
    assert again.last("slugify") == {"text": "Hello"}
    assert again.cases("slugify") == {"long": {"text": "x" * 100, "max_length": 10}}
    again.delete_case("slugify", "long")
    assert TryState(path).cases("slugify") == {}
    assert not list(path.parent.glob(".*.tmp"))  # atomic writes leave no temp file


def test_a_broken_file_is_read_as_empty_and_replaced(tmp_path: Path) -> None:
    path = tmp_path / "try_it.json"
    for junk in (
        "{not json",
        "[1, 2]",
        '{"tools": 3}',
        '{"tools": {"t": {"cases": 5, "last": 1}}}',
    ):
        path.write_text(junk)
        state = TryState(path)
        assert state.last("t") is None and state.cases("t") == {}
        state.remember("t", {"a": 1})
        assert json.loads(path.read_text())["tools"]["t"]["last"] == {"a": 1}


def test_cases_are_bounded(tmp_path: Path) -> None:
    state = TryState(tmp_path / "s.json")
    for i in range(MAX_CASES + 5):
        state.save_case("t", f"case {i}", {"i": i})
    cases = TryState(tmp_path / "s.json").cases("t")
    assert len(cases) == MAX_CASES and "case 0" not in cases and f"case {MAX_CASES + 4}" in cases
