"""Holds a person understands (issue 25), in the TUI: a call the gate held with a path outside
the workspace says it will fail in its row, in the detail and in the approve dialog, before the
person presses y; a value the person typed into try-it is never taken for a tool's output."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from inboxkit import inbox_app, isolate, open_inbox, read_to_end, tools, wait_for

from patch_tui.approvals.gate import Gate
from patch_tui.approvals.store import Store
from patch_tui.ui.desk.try_it import TryItScreen
from patch_tui.ui.inbox.inbox_dialogs import DecideModal


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> tuple[Path, Path, Path]:
    store = isolate(monkeypatch, tmp_path)
    ws = tmp_path / "ws"
    ws.mkdir()
    return tools(tmp_path, "delete_file"), store, ws


def _held_by_the_gate(folder: Path, store: Path, ws: Path, path: str) -> str:
    with Store(store, actor="agent") as s:
        outcome = Gate(s, workspace=ws).call(folder / "delete_file.py", {"path": path})
    assert outcome.status == "confirmation_required"
    return outcome.payload["confirmation_token"]


async def test_the_row_detail_and_dialog_say_the_call_will_fail(env) -> None:
    folder, store, ws = env
    _held_by_the_gate(folder, store, ws, "/tmp/victim.txt")
    app = inbox_app(store)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_inbox(pilot, app)
        row = "".join(seg.text for seg in screen.list.render_line(0))
        assert "⚠ will fail: outside workspace" in row
        reason = str(screen.query_one("#detail-reason").render())
        assert "path=/tmp/victim.txt lies outside the workspace" in reason
        assert str(ws) in reason and "serve_workspace" in reason
        await read_to_end(pilot, screen)
        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(app.screen, DecideModal), what="the dialog")
        question = str(app.screen.query_one("#decide-question").render())
        assert "will fail (Read-only file system)" in question
        await pilot.press("escape")


async def test_a_call_inside_the_workspace_has_no_warning(env) -> None:
    folder, store, ws = env
    _held_by_the_gate(folder, store, ws, str(ws / "victim.txt"))
    app = inbox_app(store)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_inbox(pilot, app)
        row = "".join(seg.text for seg in screen.list.render_line(0))
        assert "will fail" not in row
        assert "workspace" not in str(screen.query_one("#detail-reason").render())


async def test_a_path_typed_into_try_it_is_never_another_tools_output(env) -> None:
    """An earlier run of file_stats printed the path; the person then types the same path into
    try-it for delete_file: held for human_confirm only, never as file_stats' output."""
    from inboxkit import SAMPLES, make_app

    folder, store, ws = env
    shutil.copy(SAMPLES / "file_stats.py", folder / "file_stats.py")
    victim = ws / "typed-by-hand-victim.txt"
    victim.write_text("keep me")
    with Store(store, actor="agent") as s:
        stats = Gate(s, workspace=ws).call(folder / "file_stats.py", {"path": str(victim)})
        assert stats.status == "ok" and str(victim) in json.dumps(stats.payload)
    app = make_app(folder, store, folder / "delete_file.py")
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause(0.3)
        await pilot.press("ctrl+j")
        await wait_for(pilot, lambda: isinstance(app.screen, TryItScreen), what="try it")
        screen = app.screen
        field = screen.query_one("#in-path")
        field.focus()
        await pilot.pause()
        await pilot.press(*str(victim))  # typed, key by key
        assert field.value == str(victim)
        before = screen.run_count
        await pilot.press("f5")
        await wait_for(pilot, lambda: screen.run_count > before, timeout=30, what="the run")
    with Store(store, actor="check") as s:
        [held] = s.list_actions(statuses=("pending",))
    assert held.kind == "human_confirm" and "tainted_inputs" not in (held.details or {})
    assert victim.read_text() == "keep me"
