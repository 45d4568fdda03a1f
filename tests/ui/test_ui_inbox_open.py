"""Opening the inbox on more held calls than its first page (ui/inbox/inbox.py `_first_page`):
the newest are shown at once with how many there are, the tool part of the details and Approve
follow once the tool file was read, and then every action is listed and the list stays live."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from inboxkit import hold, inbox_app, isolate, read_to_end, tools, wait_for
from pilotkit import HANG

from patch_tui.approvals.store import Store
from patch_tui.format import toolfile
from patch_tui.ui.inbox.inbox import FIRST_PAGE, InboxScreen
from patch_tui.ui.inbox.inbox_dialogs import DecideModal

SIZE = (100, 32)
HELD = FIRST_PAGE + 5


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> tuple[Path, Path]:
    store = isolate(monkeypatch, tmp_path)
    return tools(tmp_path), store


def hold_many(store_path: Path, tool_file: Path, n: int) -> list[str]:
    """n pending calls of the tool, oldest first, as an agent's process holds them."""
    tf = toolfile.read(tool_file)
    assert tf.manifest is not None
    with Store(store_path, actor="agent") as store:
        return [
            store.create_pending(
                "human_confirm",
                tf.manifest.name,
                tf.manifest.version,
                tf.sha256,
                {"path": f"/srv/data/file-{i:04d}.csv"},
                "Tool is marked capabilities.human_confirm: true (irreversible action).",
                tool_path=str(tool_file),
            ).token
            for i in range(n)
        ]


def _text(screen: InboxScreen, selector: str) -> str:
    return str(screen.query_one(selector).render())


async def test_a_long_inbox_shows_its_newest_first_then_every_action(
    env, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder, store = env
    tokens = hold_many(store, folder / "delete_file.py", HELD)
    # The reading thread is held after the first frame (before the tool file and the rest of
    # the list), so the test sees that frame as a person does on a slow store.
    go = threading.Event()
    read_tool = InboxScreen._read_first_tool

    def held_back(self: InboxScreen, action: object) -> None:
        go.wait(HANG)
        read_tool(self, action)  # type: ignore[arg-type]

    monkeypatch.setattr(InboxScreen, "_read_first_tool", held_back)
    app = inbox_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, InboxScreen) and bool(app.screen.list.actions),
            what="the first page",
        )
        screen = app.screen
        assert isinstance(screen, InboxScreen)
        # The newest page, newest first, and the count of all of them.
        assert [a.token for a in screen.list.actions] == tokens[::-1][:FIRST_PAGE]
        assert screen.query_one("#list-box").border_title == f"Pending ({HELD})"
        assert f"{FIRST_PAGE} newest of {HELD} shown" in _text(screen, "#inbox-status")
        assert f"/srv/data/file-{HELD - 1:04d}.csv" in _text(screen, "#detail-args")
        # The tool part follows: until its file was read, nothing can be approved.
        assert "reading the tool file" in _text(screen, "#detail-tool")
        assert not screen.can_approve
        assert "until the tool file was read" in _text(screen, "#detail-gate")
        await pilot.press("a")
        await pilot.pause()
        assert not isinstance(app.screen, DecideModal)

        go.set()
        await wait_for(pilot, lambda: screen.load_count > 0, what="the whole list")
        assert [a.token for a in screen.list.actions] == tokens[::-1]  # every one reachable
        assert screen.query_one("#list-box").border_title == f"Pending ({HELD})"
        assert _text(screen, "#inbox-status").startswith(f"{HELD} pending")
        tool = _text(screen, "#detail-tool")
        assert "reading the tool file" not in tool
        assert "human_confirm true" in tool and "delete_file.py" in tool
        await read_to_end(pilot, screen)
        assert screen.can_approve
        await pilot.press("end")
        await wait_for(
            pilot,
            lambda: screen.current is not None and screen.current.token == tokens[0],
            what="the oldest action's details",
        )

        # Live: a call held now is listed without a key press.
        new = hold(store, folder / "delete_file.py", {"path": "/srv/data/new.csv"})
        await wait_for(
            pilot,
            lambda: screen.list.actions[0].token == new.token,
            what="the new call in the list",
        )
        assert screen.query_one("#list-box").border_title == f"Pending ({HELD + 1})"
