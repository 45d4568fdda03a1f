"""The app's services and its one store watch: the badge and the inbox share one Store and one
poller (approvals/watcher.py), and a quiet store is read once per tick, never written."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from inboxkit import hold, inbox_app, isolate, make_app, open_inbox, tools, wait_for

from patch_tui.ui.inbox.inbox_badge import PendingBadge
from patch_tui.ui.services import services

SIZE = (100, 32)


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> tuple[Path, Path]:
    store = isolate(monkeypatch, tmp_path)
    return tools(tmp_path), store


async def test_the_open_inbox_and_the_badge_read_a_quiet_store_through_one_poller(env) -> None:
    folder, store = env
    hold(store, folder / "delete_file.py", {"path": "/tmp/a"})
    app = inbox_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await open_inbox(pilot, app)
        svc = services(app)
        watch = svc.watch
        assert watch is not None
        await wait_for(pilot, lambda: watch.last is not None and watch.count == 1, what="the watch")
        db = svc.store()
        statements: list[str] = []
        polls = watch.watcher.polls
        db._conn.set_trace_callback(statements.append)
        # Three ticks (about a second at 300 ms, longer on a loaded machine: counted, not timed).
        await wait_for(pilot, lambda: watch.watcher.polls - polls >= 3, what="three polls")
        db._conn.set_trace_callback(None)
        ticks = watch.watcher.polls - polls
        # Each tick is one data_version read, and nothing else reads (the inbox has no poller of
        # its own) or writes.
        assert statements == ["PRAGMA data_version"] * ticks


async def test_the_desk_app_hands_its_services_to_the_badge_and_the_inbox(env) -> None:
    folder, store = env
    app = make_app(folder, store)
    async with app.run_test(size=SIZE) as pilot:
        svc = services(app)
        assert svc.store_path == store and svc.toolbox is not None
        await wait_for(
            pilot, lambda: svc.watch is not None and svc.watch.last is not None, what="the watch"
        )
        assert not store.exists()  # watching never creates the store
        action = hold(store, folder / "delete_file.py", {"path": "/tmp/a"})
        await wait_for(
            pilot, lambda: svc.watch is not None and svc.watch.count == 1, what="the arrival"
        )
        badge = app.screen.query_one(PendingBadge)
        assert "1 pending" in str(badge.render())
        # The tool browser read the toolbox into the app's catalog...
        tool = folder / "delete_file.py"
        await wait_for(pilot, lambda: tool in svc.catalog._entries, what="the browser's scan")
        listed = svc.catalog.read(tool)
        screen = await open_inbox(pilot, app)
        assert [a.token for a in screen.list.actions] == [action.token]
        assert svc.opened_store is svc.store()  # one Store for the watch and the inbox
        # ...and the inbox describes an action's tool from that same catalog: a tool outside
        # the toolbox lands in it once the inbox showed its action.
        assert svc.catalog.read(tool) is listed
        elsewhere = folder.parent / "elsewhere"
        elsewhere.mkdir()
        outside = elsewhere / "delete_file.py"
        shutil.copy(tool, outside)
        other = hold(store, outside, {"path": "/tmp/b"})
        await wait_for(pilot, lambda: len(screen.list.actions) == 2, what="the second action")
        screen.list.cursor = [a.token for a in screen.list.actions].index(other.token)
        await wait_for(pilot, lambda: outside in svc.catalog._entries, what="the inbox's read")
