"""The runner's memory of the approvals it claimed (approvals/ran_here.py): a token is recorded
once, by exactly one of any number of processes, kept as long as an approval can live, and a
memory that cannot be written runs nothing."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import pytest

from patch_tui.approvals import ran_here
from patch_tui.approvals.values import StoreError


def test_a_token_is_new_once_then_says_when_it_was_first_claimed(tmp_path: Path) -> None:
    memory = tmp_path / "state" / "ran-here.sqlite3"
    assert ran_here.record_claim("tok-a", memory, clock=1_800_000_000) is None
    assert ran_here.record_claim("tok-b", memory, clock=1_800_000_001) is None
    assert ran_here.record_claim("tok-a", memory, clock=1_800_000_500) == "2027-01-15T08:00:00.000Z"
    assert memory.parent.stat().st_mode & 0o077 == 0  # the user's alone


def _record(memory: str, token: str, start: object, out: object) -> None:
    start.wait()  # type: ignore[attr-defined]
    out.put(ran_here.record_claim(token, Path(memory)))  # type: ignore[attr-defined]


def test_of_many_processes_recording_one_token_exactly_one_is_first(tmp_path: Path) -> None:
    memory = tmp_path / "ran-here.sqlite3"
    ctx = multiprocessing.get_context("spawn")
    start, out = ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=_record, args=(str(memory), "tok", start, out)) for _ in range(8)]
    for proc in procs:
        proc.start()
    start.set()
    answers = [out.get(timeout=60) for _ in procs]
    for proc in procs:
        proc.join(30)
    assert answers.count(None) == 1 and all(isinstance(a, str) for a in answers if a is not None)


def test_a_token_is_kept_as_long_as_an_approval_can_live_then_let_go(tmp_path: Path) -> None:
    memory = tmp_path / "ran-here.sqlite3"
    first = 1_800_000_000
    assert ran_here.record_claim("old", memory, clock=first) is None
    # Thirty days on (the longest confirm_ttl): still remembered.
    later = first + 30 * 24 * 3600
    assert ran_here.record_claim("other", memory, clock=later) is None
    assert ran_here.record_claim("old", memory, clock=later) is not None
    # Past the retention, a later write lets it go.
    assert ran_here.record_claim("newer", memory, clock=first + ran_here.RETENTION_S + 1) is None
    assert ran_here.record_claim("old", memory, clock=first + ran_here.RETENTION_S + 2) is None


def test_a_memory_that_cannot_be_written_is_one_clear_error(tmp_path: Path) -> None:
    blocked = tmp_path / "state"
    blocked.write_text("a file where the folder should be")
    with pytest.raises(StoreError, match="cannot record that this machine ran") as caught:
        ran_here.record_claim("tok", blocked / "ran-here.sqlite3")
    assert "it was not run" in str(caught.value)
