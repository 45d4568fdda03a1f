"""The inbox on a PostgreSQL store (the team inbox): live without polling, and honest about a
lost connection (a real server from tests/pgkit.py, stopped and started by the test)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from inboxkit import inbox_app, isolate, open_inbox, tools, wait_for
from storekit import pending

from patch_tui.approvals.open_store import open_store
from patch_tui.approvals.records import Signature
from patch_tui.approvals.values import now_iso
from patch_tui.settings.store_location import DatabaseURL
from patch_tui.ui.services import services

pytestmark = pytest.mark.slow
SIZE = (100, 32)


def _status(screen: Any) -> str:
    from textual.widgets import Static

    return str(screen.query_one("#inbox-status", Static).render())


async def test_the_inbox_follows_the_database_and_says_when_it_is_gone(
    own_pg: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    isolate(monkeypatch, tmp_path)
    tools(tmp_path)
    url = own_pg.create_database()
    with open_store(DatabaseURL(url), actor="agent@build") as agent:
        first = pending(agent)
    app = inbox_app(url)  # type: ignore[arg-type]  # `patch-tui inbox --store postgresql://…`
    said: list[str] = []
    notify = app.notify
    app.notify = lambda message, **kw: (said.append(str(message)), notify(message, **kw))[1]  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_inbox(pilot, app)
        await wait_for(pilot, lambda: [a.token for a in screen.actions] == [first.token])
        watch = services(app).watch
        assert watch is not None
        # Quiet: the watch sleeps on the change feed and reads nothing.
        polls = watch.watcher.polls
        await pilot.pause(1.0)
        assert watch.watcher.polls == polls
        # Another machine's agent holds a call: it shows at once, woken by NOTIFY.
        with open_store(DatabaseURL(url), actor="agent@build") as agent:
            second = pending(agent, tool="slugify")
        await wait_for(pilot, lambda: second.token in [a.token for a in screen.actions])
        assert watch.count == 2

        own_pg.kill()
        await wait_for(
            pilot, lambda: "cannot reach" in _status(screen), timeout=30, what="the outage"
        )
        assert "postgres@127.0.0.1" in _status(screen)
        own_pg.start()
        # Held while it was down: read once it is back.
        with open_store(DatabaseURL(url), actor="agent@build") as agent:
            third = pending(agent, tool="word_count")
        await wait_for(
            pilot,
            lambda: (
                third.token in [a.token for a in screen.actions]
                and "cannot reach" not in _status(screen)
            ),
            timeout=30,
            what="the store back",
        )
        await wait_for(pilot, lambda: any("The store is back" in m for m in said), what="a toast")


async def test_c_claims_a_call_and_everyone_sees_who_reads_what(
    pg_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    isolate(monkeypatch, tmp_path)
    tools(tmp_path)
    with open_store(DatabaseURL(pg_url), actor="agent@build") as agent:
        mine = pending(agent, tool="send_mail")
        theirs = pending(agent, tool="slugify")
    app = inbox_app(pg_url)  # type: ignore[arg-type]
    said: list[str] = []
    notify = app.notify
    app.notify = lambda message, **kw: (said.append(str(message)), notify(message, **kw))[1]  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_inbox(pilot, app)
        await wait_for(pilot, lambda: len(screen.actions) == 2)
        # Bob, on another laptop, claims one: it shows here with his name.
        with open_store(DatabaseURL(pg_url), actor="bob@laptop") as bob:
            assert bob.claim_reading(theirs.token).ok
        await wait_for(pilot, lambda: screen.list.readers.get(theirs.token) == "bob@laptop")
        # `c` on Bob's: refused, saying who has it.
        screen.list.cursor = [a.token for a in screen.actions].index(theirs.token)
        await wait_for(
            pilot, lambda: screen.current is not None and screen.current.token == theirs.token
        )
        await pilot.press("c")
        await wait_for(pilot, lambda: any("bob@laptop is reading it" in m for m in said))
        # `c` on the free one: it is ours, and Bob's store sees it.
        screen.list.cursor = [a.token for a in screen.actions].index(mine.token)
        await wait_for(
            pilot, lambda: screen.current is not None and screen.current.token == mine.token
        )
        await pilot.press("c")
        await wait_for(pilot, lambda: any("You are reading" in m for m in said))
        with open_store(DatabaseURL(pg_url), actor="bob@laptop") as bob:
            assert bob.readings()[mine.token].by.endswith("@tui")
            assert bob.claim_reading(mine.token).code == "being_read"
            # Bob decides the one he read: it leaves this inbox, and a note says how and by whom.
            rejected = bob.add_decision(
                theirs.token,
                Signature("bob", "reject", now_iso(), "{}", "not this one"),
                complete=lambda *_: None,
            )
            assert rejected.ok
        await wait_for(pilot, lambda: [a.token for a in screen.actions] == [mine.token])
        await wait_for(
            pilot, lambda: any("rejected by bob via bob@laptop" in m for m in said), what="a note"
        )
