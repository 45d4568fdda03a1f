"""Snapshot tests of the inbox at 100x32: the pending list with a detail pane, hostile args, and
the history. Times, tokens and paths are fixed (the clock is set to 2099-01-01T00:01:00Z and the
store rows are given fixed tokens), so the pictures do not move.

Update with `pytest tests/ui/test_ui_snapshots_inbox.py --snapshot-update`, and look at the SVGs in
tests/__snapshots__/test_ui_snapshots_inbox/ before committing them.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from inboxkit import HOSTILE, hold, inbox_app, isolate, read_to_end, tools, wait_for

from patch_tui.approvals import decisions
from patch_tui.approvals.store import Store, parse_iso
from patch_tui.ui.inbox import inbox_list

NOW = "2099-01-01T00:01:00.000Z"
SIZE = (100, 32)


@pytest.fixture
def store(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    path = isolate(monkeypatch, tmp_path)
    tools(tmp_path)
    monkeypatch.chdir(tmp_path)  # relative tool and store paths: the same in every run
    monkeypatch.setattr(inbox_list, "clock", lambda: parse_iso(NOW))
    return Path(path.name)


def _fix(store: Path, token: str, new_token: str, created: str, **extra: str) -> None:
    sets = {
        "token": new_token,
        "created_at": created,
        "expires_at": "2099-01-01T00:05:00.000Z",
        **extra,
    }
    with sqlite3.connect(store) as db:
        db.execute(
            f"UPDATE actions SET {', '.join(f'{k} = ?' for k in sets)} WHERE token = ?",
            (*sets.values(), token),
        )


def _pending(store: Path) -> None:
    tool = Path("tools/delete_file.py")
    a = hold(store, tool, {"path": "/srv/reports/2026-q3.csv", "missing_ok": False})
    _fix(store, a.token, "A" * 32, "2099-01-01T00:00:00.000Z")
    b = hold(
        store,
        Path("tools/slack_send_message.py"),
        {"channel": "#general", "text": "Deploy finished: all green"},
        kind="tainted_input",
        details={
            "tainted_inputs": [{"input": "channel", "source_tools": ["fetch_url_title"]}],
            "source_tools": ["fetch_url_title"],
        },
    )
    _fix(store, b.token, "B" * 32, "2099-01-01T00:00:30.000Z")
    c = hold(
        store,
        tool,
        {
            "path": " ".join(list(HOSTILE.values())[:6]),
            "note": "invoice\u202etxt.exe pay\u200bpal pаypal",
        },
    )
    _fix(store, c.token, "C" * 32, "2099-01-01T00:00:45.000Z")


def app_workers(app) -> list:
    return list(app.workers)


async def _steady(pilot) -> None:
    app = pilot.app
    screen = app.screen
    await wait_for(pilot, lambda: getattr(screen, "load_count", 0) > 0, what="the inbox")
    # The header's "⚑ N pending" comes from its own poll (inbox/inbox_badge.py), not the
    # inbox's: under load it could still be on its way when the picture was taken.
    await wait_for(
        pilot,
        lambda: (
            getattr(app, "_pending_watch", None) is not None
            and app._pending_watch._last_read > 0
            and not app._pending_watch._running
        ),
        what="the pending badge's first read",
    )
    await pilot.pause(0.2)
    for widget in screen.query("Input"):
        widget.cursor_blink = False
    app.clear_notifications()
    await pilot.pause(0.1)


def test_inbox_list_and_detail(store: Path, snap_compare) -> None:
    _pending(store)

    async def run_before(pilot) -> None:
        await _steady(pilot)
        await pilot.press("end")  # the oldest: the plain delete_file call
        screen = pilot.app.screen
        await wait_for(
            pilot,
            lambda: screen.current is not None and screen.current.token == "A" * 32,
            what="the detail",
        )
        await pilot.pause(0.3)

    assert snap_compare(inbox_app(store), terminal_size=SIZE, run_before=run_before)


def test_inbox_hostile_args(store: Path, snap_compare) -> None:
    _pending(store)

    async def run_before(pilot) -> None:
        await _steady(pilot)  # the newest, hostile one is selected first
        screen = pilot.app.screen
        detail = screen.query_one("#detail")
        await wait_for(pilot, lambda: detail.max_scroll_y > 0, what="the laid-out details")
        await read_to_end(pilot, screen, what="approve enabled after scrolling")
        await pilot.pause(0.3)

    assert snap_compare(inbox_app(store), terminal_size=SIZE, run_before=run_before)


def test_inbox_history(store: Path, snap_compare) -> None:
    _pending(store)
    with Store(store, actor="alice@cli") as s:
        decisions.reject(s, "B" * 32, reason="not from a fetched page")
        decisions.approve(s, "A" * 32, note="quarterly cleanup")
        decisions.claim(s, "A" * 32)
        s.finish(
            "A" * 32, True, {"path": "/srv/reports/2026-q3.csv", "deleted": True, "bytes": 5120}
        )
    with sqlite3.connect(store) as db:
        db.execute(
            # Decided by "alice" whatever the OS user running the tests is called.
            "UPDATE actions SET decided_at = '2099-01-01T00:00:50.000Z', finished_at = NULL, "
            "decided_by = 'alice via alice@cli' WHERE token = ?",
            ("B" * 32,),
        )
        db.execute(
            "UPDATE actions SET decided_at = '2099-01-01T00:00:55.000Z', "
            "decided_by = 'alice via alice@cli', "
            "finished_at = '2099-01-01T00:00:56.000Z', claimed_at = '2099-01-01T00:00:56.000Z' WHERE token = ?",
            ("A" * 32,),
        )

    async def run_before(pilot) -> None:
        await _steady(pilot)
        await pilot.press("h")
        screen = pilot.app.screen
        await wait_for(
            pilot,
            lambda: screen.mode == "history" and len(screen.list.actions) == 2,
            what="history",
        )
        await pilot.press("end")
        # The last row is the oldest change (B, rejected at :50; A finished at :56 is first).
        # Waiting for A instead held only while the cursor had not yet moved: under load the
        # wait began after it had, and timed out.
        await wait_for(
            pilot,
            lambda: (
                screen.current is not None
                and screen.current.token == "B" * 32
                and screen.events
                and screen.events[0].token == "B" * 32
            ),
            what="the events of the selected action",
        )
        for widget in screen.query("Input"):
            widget.cursor_blink = False
        # Event times are real (the append-only events table cannot be edited): hide them, once
        # no events read is still on its way.
        await wait_for(
            pilot,
            lambda: (
                not [
                    w
                    for w in app_workers(pilot.app)
                    if w.group == "inbox-events" and not w.is_finished
                ]
            ),
            what="the events reads",
        )
        await pilot.pause(0.1)
        screen.events = []
        screen._show_detail(screen.current)
        # The shorter details laid out and painted (their scrollbar too) before the picture.
        await screen.detail.wait_for_refresh()
        await screen.wait_for_refresh()
        await pilot.pause(0.2)

    assert snap_compare(inbox_app(store), terminal_size=SIZE, run_before=run_before)
