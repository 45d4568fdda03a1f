"""The TUI inbox shows every character for what it is and never lets an unseen call be approved
(issue 24), read off the rendered screen with Pilot."""

from __future__ import annotations

from pathlib import Path

import pytest
from inboxkit import hold, inbox_app, isolate, open_inbox, tools, wait_for

from patch_tui.approvals.store import Store

SIZE = (120, 40)
LOOK_ALIKES = {
    "to": "payments@асе.com",  # all-Cyrillic domain
    "cc": "billing@pаypal.com",  # Cyrillic а in a Latin word
}
INVISIBLES = ["\u034f", "\u180b", "\u17b5", "\u2800", "\U0001d173"]


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> tuple[Path, Path]:
    store = isolate(monkeypatch, tmp_path)
    return tools(tmp_path), store


def screen_text(screen) -> str:
    """The detail pane as drawn: the text of every segment of every line on screen."""
    out: list[str] = []
    for widget in screen.query("#detail Static"):
        region = widget.region
        if not region.area:
            continue
        for strip in widget.render_lines(region.reset_offset):
            out.append("".join(seg.text for seg in strip))
    return "\n".join(out)


async def test_look_alikes_get_a_plain_words_banner_and_invisibles_are_escaped(env) -> None:
    folder, store = env
    args = dict(LOOK_ALIKES)
    args["path"] = "a" + "".join(INVISIBLES) + "b"
    hold(store, folder / "delete_file.py", args)
    app = inbox_app(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_inbox(pilot, app)
        await pilot.pause(0.2)
        drawn = screen_text(screen)
        banner = " ".join(str(screen.query_one("#detail-banner").render()).split())
        for ch in INVISIBLES:
            assert ch not in drawn, f"U+{ord(ch):04X} drawn raw"
            assert f"⟦U+{ord(ch):04X}⟧" in drawn
        assert '"асе" is written in Cyrillic letters inside a Latin address' in banner
        assert 'it looks like "ace" but is not' in banner
        assert '"pаypal" mixes Latin and Cyrillic letters in one word' in banner
        assert "check it letter by letter" in banner
        assert "5 hidden or control characters" in banner
        # Where the decision is made, the look-alikes are said again.
        from inboxkit import read_to_end

        from patch_tui.ui.inbox.inbox_dialogs import DecideModal

        await read_to_end(pilot, screen)
        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(app.screen, DecideModal), what="approve dialog")
        question = " ".join(str(app.screen.query_one("#decide-question").render()).split())
        assert '⚠ "асе" is written in Cyrillic letters inside a Latin address' in question
        assert '⚠ "pаypal" mixes Latin and Cyrillic letters' in question
        await pilot.press("n")


async def test_args_guard_could_not_recover_are_said_and_approve_stays_disabled(env) -> None:
    folder, store = env
    unknown = "the upstream holds send_mail args that match no step the agent sent"
    action = hold(
        store,
        folder / "delete_file.py",
        {},
        details={"held_by": "guard", "args_known": False, "args_unknown": unknown},
    )
    app = inbox_app(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_inbox(pilot, app)

        def said() -> bool:  # scrolled to its end as the detail grows, as a person reads on
            screen.detail.scroll_end(animate=False, immediate=True)
            drawn = " ".join(screen_text(screen).split())
            return "NOT KNOWN:" in drawn and "Approve is disabled" in drawn

        await wait_for(pilot, said, what="the detail, read to its end")
        drawn = " ".join(screen_text(screen).split())
        assert "NOT KNOWN:" in drawn and "match no step the agent sent" in drawn
        assert "{}" not in drawn  # never shown as "no args"
        assert "Approve is disabled: its exact args are not known" in drawn
        assert not screen.can_approve
        await pilot.press("a")
        await pilot.pause(0.3)
        with Store(store, actor="check") as s:
            assert s.get(action.token).status == "pending"
        # Rejecting it works.
        await pilot.press("r")
        await wait_for(pilot, lambda: app.screen is not screen, what="the reject dialog")
        await pilot.press("enter")
        await wait_for(
            pilot,
            lambda: _status(store, action.token) == "rejected",
            what="the rejection",
        )


def _status(store: Path, token: str) -> str:
    with Store(store, actor="check") as s:
        found = s.get(token)
        return found.status if found is not None else "gone"


async def test_a_batch_never_approves_args_guard_could_not_recover(env) -> None:
    from patch_tui.ui.inbox.batch import BatchDialog

    folder, store = env
    good = hold(store, folder / "delete_file.py", {"path": "/tmp/ok.txt"})
    unknown = hold(
        store,
        folder / "delete_file.py",
        {},
        details={"held_by": "guard", "args_known": False, "args_unknown": "no step matches"},
    )
    app = inbox_app(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_inbox(pilot, app)
        await wait_for(pilot, lambda: len(screen.list.actions) == 2, what="two pending")
        await pilot.press("ctrl+a")
        await pilot.press("a")
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, BatchDialog) and app.screen.is_active,
            what="the batch dialog",
        )
        dialog = app.screen
        text = " ".join(str(dialog.query_one("#batch-list").render()).split())
        assert "its exact args are not known (no step matches)" in text
        assert str(dialog.query_one("#batch-yes").label).startswith("Approve 1")
        await pilot.press("end")
        await wait_for(pilot, lambda: dialog.seen_end, what="the list read")
        await pilot.press("y")
        await wait_for(pilot, lambda: dialog.done, what="the batch decided")
    assert _status(store, good.token) == "approved"
    assert _status(store, unknown.token) == "pending"
