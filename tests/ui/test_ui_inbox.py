"""Pilot tests of the confirmation inbox and the try-it panel, against a real store file that a
second `Store` (another process's view: an agent, another approver) writes at the same time."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import pytest
from inboxkit import (
    HOSTILE,
    hold,
    inbox_app,
    isolate,
    make_app,
    open_inbox,
    read_to_end,
    tools,
    wait_for,
)

from patch_tui.approvals import decisions
from patch_tui.approvals.store import Store
from patch_tui.ui.inbox.inbox import InboxScreen
from patch_tui.ui.inbox.inbox_badge import PendingBadge
from patch_tui.ui.inbox.inbox_dialogs import DecideModal

SIZE = (100, 32)


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> tuple[Path, Path]:
    store = isolate(monkeypatch, tmp_path)
    return tools(tmp_path), store


def _status(store: Path, token: str):
    with Store(store, actor="check") as s:
        return s.get(token)


async def _show_all(pilot, screen: InboxScreen) -> None:
    """What a person does before approving: expand what is collapsed, scroll to the end."""
    if screen.view is not None and screen.view.collapsed:
        await pilot.press("E")
        await pilot.pause()
    await read_to_end(pilot, screen, what="approve to be enabled")


# -- live list --------------------------------------------------------------------------------


async def test_clicking_the_badge_on_the_desk_opens_the_inbox(env) -> None:
    folder, store = env
    hold(store, folder / "delete_file.py", {"path": "/tmp/a.txt"})
    app = make_app(folder, store)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(
            pilot,
            lambda: any(b.display for b in app.screen.query(PendingBadge)),
            what="the badge on the editor",
        )
        badge = next(b for b in app.screen.query(PendingBadge) if b.display)
        await pilot.pause(0.2)  # placed at the right edge after its first layout
        assert await pilot.click(badge)
        await wait_for(pilot, lambda: isinstance(app.screen, InboxScreen), what="the inbox")


async def test_live_arrival_badge_on_every_screen_and_leaving(env) -> None:
    folder, store = env
    app = make_app(folder, store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.3)
        assert not app.screen.query(PendingBadge) or not app.screen.query_one(PendingBadge).display
        first = hold(store, folder / "delete_file.py", {"path": "/tmp/a.txt"})
        # The desk shows the count by itself, without a key press (how soon is the store
        # watcher's period: a wait that follows the badge, never a time asserted under load).
        await wait_for(
            pilot,
            lambda: any(
                b.display and "1 pending" in str(b.render()) for b in app.screen.query(PendingBadge)
            ),
            what="the badge on the editor",
        )
        await pilot.press("f1")  # the help screen has its own layout, and the badge too
        await wait_for(
            pilot,
            lambda: any("1 pending" in str(b.render()) for b in app.screen.query(PendingBadge)),
            what="the badge on help",
        )
        await pilot.press("escape")
        screen = await open_inbox(pilot, app)
        assert [a.token for a in screen.list.actions] == [first.token]
        second = hold(
            store, folder / "slack_send_message.py", {"channel": "#general", "text": "hi"}
        )
        await wait_for(pilot, lambda: len(screen.list.actions) == 2, what="the second action")
        assert screen.list.actions[0].token == second.token  # newest first
        # Decided elsewhere (the CLI): it leaves the list.
        with Store(store, actor="cli") as other:
            assert decisions.reject(other, second.token, reason="no").ok
        await wait_for(
            pilot,
            lambda: [a.token for a in screen.list.actions] == [first.token],
            what="the rejected one to leave",
        )
        assert app.is_running


async def test_expired_actions_leave_and_show_in_history(env) -> None:
    folder, store = env
    action = hold(store, folder / "delete_file.py", {"path": "/tmp/x"}, ttl=120)
    app = inbox_app(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_inbox(pilot, app)
        assert [a.token for a in screen.list.actions] == [action.token]
        # Its expiry comes near (set from outside, so the test does not depend on start-up time).
        from patch_tui.approvals.store import now_iso

        with sqlite3.connect(store) as db:
            db.execute(
                "UPDATE actions SET expires_at = ? WHERE token = ?",
                (now_iso(time.time() + 1.0), action.token),
            )
        await wait_for(
            pilot,
            lambda: (
                screen.list.actions
                and "in 0s" in str(screen.query_one("#detail-head").render())
                or not screen.list.actions
            ),
            what="the countdown",
        )
        # Expiry commits nothing by itself: the inbox re-reads when the first expiry is due.
        await wait_for(pilot, lambda: not screen.list.actions, timeout=15, what="expiry")
        assert screen.has_class("-empty")
        assert _status(store, action.token).status == "expired"
        await pilot.press("h")
        await wait_for(
            pilot, lambda: screen.mode == "history" and screen.list.actions, what="history"
        )
        assert screen.list.actions[0].status == "expired"


# -- deciding ---------------------------------------------------------------------------------


async def test_approve_needs_everything_shown_then_records_the_tui(env) -> None:
    folder, store = env
    long_path = "/data/" + "d" * 600
    action = hold(store, folder / "delete_file.py", {"path": long_path, "missing_ok": False})
    app = inbox_app(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_inbox(pilot, app)
        assert screen.view is not None and screen.view.collapsed == ["$.path"]
        assert not screen.can_approve
        await pilot.press("a")
        await pilot.pause()
        assert not isinstance(app.screen, DecideModal)  # disabled: nothing was decided
        assert _status(store, action.token).status == "pending"
        screen.detail.scroll_end(animate=False, immediate=True)
        await pilot.pause(0.1)
        assert not screen.can_approve  # scrolled, but a value is still collapsed
        await pilot.press("E")
        await pilot.pause()
        assert long_path in str(screen.query_one("#detail-args").render())
        await _show_all(pilot, screen)
        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(app.screen, DecideModal), what="the dialog")
        dialog = app.screen
        # delete_file is destructive: Cancel has the focus, so Enter decides nothing.
        assert app.focused is not None and app.focused.id == "decide-no"
        await pilot.press("enter")  # on Cancel: nothing is decided
        await wait_for(pilot, lambda: not isinstance(app.screen, DecideModal), what="cancel")
        assert _status(store, action.token).status == "pending"
        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(app.screen, DecideModal), what="the dialog again")
        await pilot.press("y")
        await wait_for(
            pilot, lambda: not isinstance(app.screen, DecideModal), what="the dialog to close"
        )
        del dialog
        done = _status(store, action.token)
        assert done.status == "approved"
        assert done.decided_by.endswith("@tui")
        await wait_for(pilot, lambda: not screen.list.actions, what="the approved one to leave")


async def test_reject_with_a_reason(env) -> None:
    folder, store = env
    action = hold(
        store, folder / "slack_send_message.py", {"channel": "#ops", "text": "deploy now"}
    )
    app = inbox_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await open_inbox(pilot, app)
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.screen, DecideModal), what="the dialog")
        await pilot.pause()  # laid out before a click aims at it
        await pilot.click("#decide-note")
        await pilot.press(*"not during the freeze")
        await pilot.click("#decide-yes")
        await wait_for(
            pilot, lambda: not isinstance(app.screen, DecideModal), what="the dialog to close"
        )
        done = _status(store, action.token)
        assert done.status == "rejected" and done.note == "not during the freeze"
        assert done.decided_by.endswith("@tui")


async def test_another_approver_wins_and_the_dialog_says_so(env) -> None:
    folder, store = env
    action = hold(store, folder / "delete_file.py", {"path": "/tmp/a"})
    app = inbox_app(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_inbox(pilot, app)
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.screen, DecideModal), what="the dialog")
        # Meanwhile, in another terminal, bob approves it.
        with Store(store, actor="bob@cli") as other:
            assert decisions.approve(other, action.token).ok
        await pilot.pause()  # laid out before a click aims at it
        await pilot.click("#decide-yes")
        error = app.screen.query_one("#decide-error")
        await wait_for(pilot, lambda: error.has_class("-shown"), what="the conflict message")
        text = str(error.render())
        assert "Not rejected" in text and "via bob@cli" in text
        assert isinstance(app.screen, DecideModal)  # stays open until the person closes it
        await pilot.press("escape")
        done = _status(store, action.token)
        assert done.status == "approved" and done.decided_by.endswith(" via bob@cli")
        await wait_for(pilot, lambda: not screen.list.actions, what="the list to catch up")


async def test_store_busy_is_shown_and_retried(env) -> None:
    folder, store = env
    stays = hold(store, folder / "delete_file.py", {"path": "/tmp/a"})
    due = hold(store, folder / "delete_file.py", {"path": "/tmp/b"})
    app = inbox_app(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_inbox(pilot, app)
        from patch_tui.approvals.store import now_iso

        # Due in 4 s: time for the inbox to see the new expiry and for the lock below to be
        # taken before it falls due, even on a loaded machine (1.5 s was not, once in CI-like runs).
        with sqlite3.connect(store) as db:
            db.execute(
                "UPDATE actions SET expires_at = ? WHERE token = ?",
                (now_iso(time.time() + 4), due.token),
            )
        await wait_for(pilot, lambda: screen.next_due < time.time() + 5, what="the new expiry")
        # Another process takes the write lock and holds it: expiring `due` has to wait.
        lock = sqlite3.connect(store, isolation_level=None, timeout=10)
        lock.execute("BEGIN IMMEDIATE")
        still = lock.execute("SELECT status FROM actions WHERE token = ?", (due.token,)).fetchone()[
            0
        ]
        assert still == "pending", "the machine was too slow to take the lock before the expiry"
        status = screen.query_one("#inbox-status")
        await wait_for(
            pilot, lambda: "store busy" in str(status.render()), timeout=12, what="store busy"
        )
        # The UI thread stays free meanwhile: keys are handled at once.
        screen.list.cursor = [a.token for a in screen.list.actions].index(stays.token)
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.screen, DecideModal), what="the dialog")
        await pilot.pause()  # laid out: a click goes where the button is
        await pilot.click("#decide-yes")
        error = app.screen.query_one("#decide-error")
        await wait_for(pilot, lambda: error.has_class("-shown"), timeout=8, what="the busy message")
        assert "busy" in str(error.render())
        assert _status(store, stays.token).status == "pending"
        lock.execute("ROLLBACK")
        lock.close()
        # The message pushed the buttons down: click where they are now, not where they were
        # (under load the click could land before the new layout, on the message).
        await pilot.pause()
        assert not app.screen.query_one("#decide-yes").disabled
        assert await pilot.click("#decide-yes")  # retried by the person: now it goes through
        await wait_for(
            pilot,
            lambda: not isinstance(app.screen, DecideModal),
            timeout=8,
            what="the dialog to close",
        )
        assert _status(store, stays.token).status == "rejected"
        await wait_for(
            pilot,
            lambda: "store busy" not in str(status.render()) and not screen.list.actions,
            timeout=8,
            what="recovery",
        )
        assert _status(store, due.token).status == "expired"


# -- hostile args -------------------------------------------------------------------------------


def _strips_of(widget) -> list:
    region = widget.region
    return widget.render_lines(region.reset_offset) if region.area else []


async def test_hostile_args_are_shown_plainly_and_harmlessly(env) -> None:
    folder, store = env
    args = {"path": " ".join(HOSTILE.values())}
    args.update({f"x_{k}": v for k, v in HOSTILE.items()})
    action = hold(store, folder / "delete_file.py", args)
    app = inbox_app(store)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_inbox(pilot, app)
        await pilot.press("E")
        await pilot.pause(0.2)
        shown = "".join(
            seg.text
            for w in screen.query("#detail Static, ActionList")
            for strip in _strips_of(w)
            for seg in strip
        )
        segments = [
            seg
            for w in screen.query("#detail Static, ActionList, #inbox-status")
            for strip in _strips_of(w)
            for seg in strip
        ]
        for seg in segments:
            assert "\x1b" not in seg.text and not any(0x80 <= ord(c) < 0xA0 for c in seg.text)
            assert not any(ord(c) < 0x20 for c in seg.text)
            style = seg.style
            if style is not None:
                assert not style.link, f"a link reached the screen: {style.link}"
                assert "@click" not in (style.meta or {}), "a click action reached the screen"
        # Markup is text; every hidden character is a visible code point.
        for text in ("[@click=app.quit]x[/]", "[link=https://evil.example]good[/link]", "[/]"):
            assert json.dumps(text)[1:-1] in shown
        for token in (
            "⟦U+001B⟧",
            "⟦U+009B⟧",
            "⟦U+000D⟧",
            "⟦U+0007⟧",
            "⟦U+202E⟧",
            "⟦U+200B⟧",
            "⟦U+E0041⟧",
        ):
            assert token in shown, token
        banner = str(screen.query_one("#detail-banner").render())
        assert "hidden or control characters" in banner
        # The bytes a real terminal would get for this screen: Textual's own drawing (CSI colours
        # and cursor moves) and nothing from the args: no OSC (52 clipboard, 8 link, 2 title),
        # no clear screen, no bell, no carriage return, no 8-bit C1.
        terminal = screen._compositor.render_full_update().render_segments(app.console)
        assert "\x1b[" in terminal  # it is real terminal output
        for bad in ("\x1b]", "\x1b[2J", "\x07", "\r", "\x1b\\"):
            assert bad not in terminal, repr(bad)
        assert not any(0x80 <= ord(c) < 0xA0 for c in terminal)
        # The whole screen as exported: no escape or C1 byte anywhere.
        svg = app.export_screenshot()
        assert "\x1b" not in svg and not any(0x80 <= ord(c) < 0xA0 for c in svg)
        assert "evil.example" not in "".join(s.style.link or "" for s in segments if s.style)
        # Keys and clicks on the rendered text do nothing but what the inbox does.
        await pilot.click("#detail-args", offset=(5, 3))
        await pilot.press("down", "up", "tab", "tab")
        assert app.is_running and isinstance(app.screen, InboxScreen)
        assert _status(store, action.token).status == "pending"


# -- history ------------------------------------------------------------------------------------


async def test_history_filter_and_export(env, tmp_path: Path) -> None:
    folder, store = env
    a = hold(store, folder / "delete_file.py", {"path": "/tmp/a"})
    b = hold(store, folder / "slack_send_message.py", {"channel": "#c", "text": "t"})
    c = hold(store, folder / "delete_file.py", {"path": "/tmp/c"})
    with Store(store, actor="alice@cli") as s:
        decisions.approve(s, a.token, note="fine")
        decisions.claim(s, a.token)
        s.finish(a.token, True, {"deleted": True})
        decisions.reject(s, b.token, reason="nope")
        decisions.approve(s, c.token)
        decisions.claim(s, c.token)
        s.finish(c.token, False, {"error": "permission denied"})
    app = inbox_app(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_inbox(pilot, app)
        await pilot.press("h")
        await wait_for(pilot, lambda: len(screen.list.actions) == 3, what="history rows")
        assert {x.status for x in screen.list.actions} == {"executed", "rejected", "failed"}
        await pilot.pause()  # laid out before a click aims at it
        await pilot.click("#filter-tool")
        await pilot.press(*"delete")
        await wait_for(pilot, lambda: len(screen.list.actions) == 2, what="tool filter")
        from textual.widgets import Input, Select

        screen.query_one("#filter-status", Select).value = "failed"
        await wait_for(
            pilot, lambda: [x.token for x in screen.list.actions] == [c.token], what="status filter"
        )
        detail = str(screen.query_one("#detail-result").render())
        assert "permission denied" in detail
        await wait_for(
            pilot,
            lambda: "claimed" in str(screen.query_one("#detail-result").render()),
            what="events",
        )
        head = str(screen.query_one("#detail-head").render())
        assert "alice@cli" in head
        # x writes the filtered rows as `patch-tui inbox export` writes them (JSONL)...
        target = tmp_path / "out" / "history.jsonl"
        await _export_from_history(pilot, app, screen, target)
        cli = _cli_export(store)
        lines = target.read_text().splitlines()
        assert lines == [line for line in cli.splitlines() if c.token in line]
        data = json.loads(lines[0])
        assert data["decision"] == "approved" and data["outcome"] == "failed"
        assert data["result"] == {"error": "permission denied"} and data["decided_by"].endswith(
            " via alice@cli"
        )
        assert [e["event"] for e in data["events"]] == ["created", "approved", "claimed", "failed"]
        # ...and as CSV for a .csv name; with no filter, every decided row, as the CLI's CSV.
        screen.query_one("#filter-status", Select).clear()
        screen.query_one("#filter-tool", Input).value = ""
        await wait_for(pilot, lambda: len(screen.list.actions) == 3, what="the filters cleared")
        target = tmp_path / "out" / "history.csv"
        await _export_from_history(pilot, app, screen, target)
        assert target.read_text() == _cli_export(store, "--format", "csv")


async def _export_from_history(pilot, app, screen, target: Path) -> None:
    from textual.widgets import Input

    screen.action_export()
    await wait_for(pilot, lambda: app.screen.query("#prompt-input"), what="the export prompt")
    field = app.screen.query_one("#prompt-input", Input)
    field.value = str(target)
    await pilot.press("enter")
    await wait_for(pilot, lambda: target.exists(), what="the export")


def _cli_export(store: Path, *args: str) -> str:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "patch_tui", "inbox", "export", "--store", str(store), *args],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


async def test_a_forged_approval_shows_as_tampered(env) -> None:
    # Issue 11: a call set to approved in the store without a person's recorded decision.
    folder, store = env
    forged = hold(store, folder / "delete_file.py", {"path": "/home/alice"})
    with sqlite3.connect(store) as db:
        db.execute("UPDATE actions SET status = 'approved' WHERE token = ?", (forged.token,))
    app = inbox_app(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_inbox(pilot, app)
        await pilot.press("h")
        await wait_for(pilot, lambda: len(screen.list.actions) == 1, what="history rows")
        await wait_for(pilot, lambda: screen.current is not None, what="the detail")
        head = str(screen.query_one("#detail-head").render())
        assert "TAMPERED (approved)" in head and "no one's signed approval is recorded" in head
        from patch_tui.ui.inbox.inbox_list import HISTORY_COLUMNS

        status_cell = HISTORY_COLUMNS[0][2]
        assert status_cell(screen.list.actions[0], 0.0) == "tampered"


# -- try it -------------------------------------------------------------------------------------


async def _try_it(pilot, app):
    from patch_tui.ui.desk.try_it import TryItScreen

    await pilot.press("ctrl+j")
    await wait_for(pilot, lambda: isinstance(app.screen, TryItScreen), what="try it")
    await pilot.pause(0.1)
    return app.screen


async def _run(pilot, screen) -> object:
    before = screen.run_count
    await pilot.press("f5")
    await wait_for(pilot, lambda: screen.run_count > before, timeout=30, what="the run")
    return screen.last_outcome


async def test_try_it_runs_unsaved_text_and_remembers_args(env) -> None:
    folder, store = env
    path = folder / "slugify.py"
    app = make_app(folder, store, path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.3)
        screen = await _try_it(pilot, app)
        screen.query_one("#in-text").value = "Hello Wide World"
        outcome = await _run(pilot, screen)
        assert outcome.status == "ok" and outcome.payload == "hello-wide-world"
        status = str(screen.query_one("#try-status").render())
        assert "ok" in status and "exit code 0" in status and " ms" in status
        assert "network" in str(screen.query_one("#try-enforced").render())
        assert '"hello-wide-world"' in str(screen.query_one("#try-output").render())
        await pilot.press("escape")
        # An unsaved edit of the body: try-it runs the text in the editor, not the file.
        editor = app.editor
        editor.source.load_text(
            editor.source_text.replace("    return slug\n", "    return 'EDITED'\n", 1)
        )
        assert "EDITED" not in path.read_text()
        screen = await _try_it(pilot, app)
        assert screen.query_one("#in-text").value == "Hello Wide World"  # remembered
        outcome = await _run(pilot, screen)
        assert outcome.status == "ok" and outcome.payload == "EDITED"


async def test_try_it_failure_shows_error_stderr_and_exit_code(env) -> None:
    folder, store = env
    path = folder / "word_count.py"
    text = path.read_text()
    body_start = text.index("# ---", text.index("# ---") + 1)
    broken = (
        text[:body_start]
        + "# ---\nimport sys\nsys.stderr.write('boom \\x1b[2J here\\n')\nsys.exit(3)\n"
    )
    path.write_text(broken)
    app = make_app(folder, store, path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.3)
        screen = await _try_it(pilot, app)
        for field in screen.query("InputField"):
            if field.spec.required and not field.spec.has_default:
                field.widget.value = "some words here"
        outcome = await _run(pilot, screen)
        assert outcome.status == "failed"
        status = str(screen.query_one("#try-status").render())
        assert "failed" in status and "exit code 3" in status
        stderr = str(screen.query_one("#try-stderr").render())
        assert "boom ⟦U+001B⟧[2J here" in stderr
        assert "\x1b" not in app.export_screenshot()


async def test_try_it_human_confirm_is_held_and_reaches_the_inbox(env) -> None:
    folder, store = env
    path = folder / "delete_file.py"
    victim = folder.parent / "victim.txt"
    victim.write_text("keep me")
    app = make_app(folder, store, path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.3)
        screen = await _try_it(pilot, app)
        screen.query_one("#in-path").value = str(victim)
        outcome = await _run(pilot, screen)
        assert outcome.status == "confirmation_required"
        assert victim.exists()  # held, not run
        token = outcome.payload["confirmation_token"]
        assert token in str(screen.query_one("#try-output").render())
        await pilot.press("escape")
        inbox = await open_inbox(pilot, app)
        await wait_for(
            pilot,
            lambda: [a.token for a in inbox.list.actions] == [token],
            what="the held call in the inbox",
        )
        # The optional flag went with its default, as the form showed it.
        assert inbox.list.actions[0].args == {"path": str(victim), "missing_ok": False}


async def test_try_it_validates_json_fields_and_saves_cases(env, tmp_path: Path) -> None:
    folder, store = env
    path = folder / "obj_tool.py"
    path.write_text(
        "# ---\n# name: obj_tool\n# version: 1.0.0\n# description: Echo a list and an object back.\n"
        "# inputs:\n#   - name: items\n#     type: array\n#     description: Some items.\n"
        "#     items:\n#       type: string\n#   - name: opts\n#     type: object\n#     description: Options.\n"
        "#     required: false\n#     default: {}\n#   - name: flag\n#     type: boolean\n#     description: A flag.\n"
        "#   - name: count\n#     type: integer\n#     description: How many.\n"
        "# outputs:\n#   type: object\n# capabilities:\n#   network: false\n#   filesystem: none\n"
        '#   human_confirm: false\n# runtime:\n#   language: python\n#   python_version: "3.12"\n#   packages: []\n# ---\n'
        "import json\nimport sys\n\n\ndef main(items: list, flag: bool, count: int, opts: dict | None = None) -> dict:\n"
        '    return {"items": items, "flag": flag, "count": count, "opts": opts}\n\n\n'
        'if __name__ == "__main__":\n    print(json.dumps(main(**json.loads(sys.stdin.read()))))\n'
    )
    app = make_app(folder, store, path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.3)
        screen = await _try_it(pilot, app)
        screen.query_one("#in-items").load_text('{"not": "a list"}')
        screen.query_one("#in-count").value = "3.5"

        def error(field: str) -> str:
            return str(screen.query_one(f"#field-{field} .field-error").render())

        # Said while typing, before any run.
        await wait_for(pilot, lambda: "not an integer" in error("count"), what="the count's error")
        assert "expected a JSON array" in error("items")
        screen.query_one("#in-count").value = "3"
        await wait_for(pilot, lambda: error("count") == "", what="the count's error to clear")
        outcome_before = screen.run_count
        await pilot.press("f5")
        await pilot.pause(0.2)
        assert screen.run_count == outcome_before  # refused before running
        assert "expected a JSON array" in str(
            screen.query_one("#field-items .field-error").render()
        )
        assert "choose true or false" in str(screen.query_one("#field-flag .field-error").render())
        screen.query_one("#in-items").load_text('["a", "b"]')
        screen.query_one("#in-flag").value = True
        outcome = await _run(pilot, screen)
        assert outcome.status == "ok"
        assert outcome.payload == {"items": ["a", "b"], "flag": True, "count": 3, "opts": {}}
        # Save a named case, change the form, load the case back.
        screen.action_save_case()
        await pilot.pause()
        app.screen.query_one("#prompt-input").value = "two items"
        await pilot.press("enter")
        await pilot.pause()
        screen.query_one("#in-count").value = "99"
        from patch_tui.ui.desk.try_it import TryState

        saved = TryState().cases("obj_tool")
        assert saved == {"two items": {"items": ["a", "b"], "flag": True, "count": 3, "opts": {}}}
        screen.query_one("#try-case").value = "two items"
        await pilot.pause()
        assert screen.query_one("#in-count").value == "3"


async def test_a_short_action_never_unlocks_a_long_one(env) -> None:
    folder, store = env
    long_args = {f"file_{i:02d}": f"/srv/data/{i}.csv" for i in range(40)}
    long_one = hold(
        store, folder / "slack_send_message.py", {"channel": "#c", "text": "x"} | {"thread_ts": "1"}
    )
    short = hold(store, folder / "delete_file.py", {"path": "/tmp/a"})
    tall = hold(store, folder / "delete_file.py", long_args)
    app = inbox_app(store)
    async with app.run_test(size=(100, 50)) as pilot:
        screen = await open_inbox(pilot, app)
        tokens = [a.token for a in screen.list.actions]
        assert tokens == [tall.token, short.token, long_one.token]
        screen.list.cursor = 1  # the short one: it fits the pane, so it was shown in full
        await wait_for(
            pilot,
            lambda: screen.current is not None and screen.current.token == short.token,
            what="short",
        )
        await wait_for(pilot, lambda: screen.can_approve, what="approve for a call that fits")
        screen.list.cursor = 0  # 40 args do not fit: approve waits for a scroll to the end
        await wait_for(pilot, lambda: screen.current.token == tall.token, what="tall")
        for _ in range(10):
            await pilot.pause(0.05)
            assert not screen.can_approve
        await read_to_end(pilot, screen, what="approve after scrolling")


async def test_try_it_long_output_collapses_behind_expand(env) -> None:
    folder, store = env
    path = folder / "slugify.py"
    app = make_app(folder, store, path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.3)
        editor = app.editor
        # Unsaved: the tool now returns a long string with a hidden character in it.
        editor.source.load_text(
            editor.source_text.replace(
                "    return slug\n", "    return 'y' * 3000 + '\\u202e'\n", 1
            )
        )
        screen = await _try_it(pilot, app)
        screen.query_one("#in-text").value = "x"
        outcome = await _run(pilot, screen)
        assert outcome.status == "ok"
        shown = str(screen.query_one("#try-output").render())
        assert "more characters hidden" in shown and "y" * 3000 not in shown
        assert "hidden or control character" in str(screen.query_one("#try-banner").render())
        button = screen.query_one("#try-expand")
        assert button.display
        await pilot.pause()  # laid out before a click aims at it
        await pilot.click("#try-expand")
        await wait_for(
            pilot,
            lambda: "y" * 3000 + "⟦U+202E⟧" in str(screen.query_one("#try-output").render()),
            what="the expanded output",
        )
        assert not button.display


async def test_open_source_from_the_inbox_shows_the_tool_in_the_editor(env) -> None:
    folder, store = env
    hold(store, folder / "slack_send_message.py", {"channel": "#c", "text": "t"})
    app = make_app(folder, store, folder / "delete_file.py")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.3)
        await open_inbox(pilot, app)
        await pilot.press("o")
        await wait_for(pilot, lambda: app.screen is app.editor, what="the editor")
        assert app.editor.current_path == folder / "slack_send_message.py"


async def test_standalone_inbox_shows_the_source_read_only(env) -> None:
    folder, store = env
    text = (folder / "delete_file.py").read_text()
    (folder / "delete_file.py").write_text(
        text.replace("import json", "import json  # \u202eevil", 1)
    )
    hold(store, folder / "delete_file.py", {"path": "/tmp/a"})
    app = inbox_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await open_inbox(pilot, app)
        await pilot.press("o")
        from patch_tui.ui.inbox.inbox_dialogs import SourceModal

        await wait_for(pilot, lambda: isinstance(app.screen, SourceModal), what="the source")
        shown = app.screen.query_one("#source-text").text
        assert "import json  # ⟦U+202E⟧evil" in shown
        assert app.screen.query_one("#source-text").read_only
        await pilot.press("escape")
        await pilot.press("escape")  # leaves the standalone inbox
        await wait_for(pilot, lambda: not app.is_running, what="exit")


async def test_tainted_input_names_its_origin_and_inputs(env) -> None:
    folder, store = env
    hold(
        store,
        folder / "slack_send_message.py",
        {"channel": "C0123456789", "text": "from a page"},
        kind="tainted_input",
        details={
            "tainted_inputs": [{"input": "channel", "source_tools": ["fetch_url_title"]}],
            "source_tools": ["fetch_url_title"],
        },
    )
    app = inbox_app(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_inbox(pilot, app)
        assert screen.list.actions[0].kind == "tainted_input"
        reason = str(screen.query_one("#detail-reason").render())
        assert "tainted inputs" in reason and "channel ← output of fetch_url_title" in reason
        tool = str(screen.query_one("#detail-tool").render())
        assert "external_auth scopes slack.send_message" in tool and "network true" in tool


async def test_a_damaged_row_is_reported_and_the_inbox_keeps_polling(env) -> None:
    folder, store = env
    good = hold(store, folder / "delete_file.py", {"path": "/tmp/a"})
    bad = hold(store, folder / "delete_file.py", {"path": "/tmp/b"})
    with sqlite3.connect(store) as db:
        db.execute("UPDATE actions SET args_json = '{not json' WHERE token = ?", (bad.token,))
    app = inbox_app(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        # The damaged row is listed as damaged; it never hides the others (issue 13).
        await wait_for(pilot, lambda: len(screen.list.actions) == 2, what="both rows")
        assert {a.token for a in screen.list.actions if a.damaged} == {bad.token}
        with sqlite3.connect(store) as db:  # repaired from outside
            db.execute("UPDATE actions SET args_json = '{}' WHERE token = ?", (bad.token,))
        await wait_for(
            pilot, lambda: not any(a.damaged for a in screen.list.actions), what="recovery"
        )
        assert {a.token for a in screen.list.actions} == {good.token, bad.token}
        assert app.is_running


async def test_escape_in_the_standalone_history_goes_back_to_pending(env) -> None:
    folder, store = env
    hold(store, folder / "delete_file.py", {"path": "/tmp/a"})
    app = inbox_app(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_inbox(pilot, app)
        await pilot.press("h")
        await wait_for(pilot, lambda: screen.mode == "history", what="history")
        await pilot.press("escape")  # the footer says "esc Back": back to pending, not quit
        await pilot.pause(0.2)
        assert app.is_running and screen.mode == "pending"
        await pilot.press("escape")  # from pending, the standalone inbox closes
        await wait_for(pilot, lambda: not app.is_running, what="exit")


async def test_a_call_whose_tool_file_changed_cannot_be_approved(env) -> None:
    folder, store = env
    path = folder / "delete_file.py"
    action = hold(store, path, {"path": "/tmp/a"})
    path.write_text(path.read_text() + "\n# changed after the call was held\n")
    app = inbox_app(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_inbox(pilot, app)
        await wait_for(pilot, lambda: screen.current is not None, what="the detail")
        await pilot.pause(0.2)
        screen.detail.scroll_end(animate=False, immediate=True)  # everything shown, even so
        await pilot.pause(0.2)
        assert not screen.can_approve
        gate = str(screen.query_one("#detail-gate").render())
        assert "Approve is disabled: the tool file changed since this call was held" in gate
        await pilot.press("a")
        await pilot.pause(0.2)
        assert not isinstance(app.screen, DecideModal)
        assert _status(store, action.token).status == "pending"
        await pilot.press("r")  # rejecting it still works
        await wait_for(pilot, lambda: isinstance(app.screen, DecideModal), what="reject")


# -- signed approvals (issue 23) ----------------------------------------------------------------


async def test_an_action_needing_two_approvers_shows_where_it_stands(
    env, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import os

    from patch_tui.approvals import keys

    folder, store = env
    me = keys.load_key_file(Path(os.environ["PATCH_TUI_APPROVER_KEY"]))
    bob = keys.create_key_file(tmp_path / "bob_key", "bob@desk")
    approvers = tmp_path / "approvers.toml"
    approvers.write_text(
        f'[[approver]]\nname = "alice"\nkey = "{me.public_line}"\n'
        f'[[approver]]\nname = "bob"\nkey = "{bob.public_line}"\n'
        '[[rule]]\ntools = ["delete_*"]\nrequire = 2\n'
    )
    monkeypatch.setenv("PATCH_TUI_APPROVERS_FILE", str(approvers))
    action = hold(store, folder / "delete_file.py", {"path": "/tmp/a.txt"})
    with Store(store, actor="alice@cli") as s:
        first = decisions.approve(s, action.token)
    assert first.code == "awaiting_approval"
    app = inbox_app(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_inbox(pilot, app)
        await wait_for(pilot, lambda: screen.list.actions, what="the pending action")
        await wait_for(
            pilot,
            lambda: "1 of 2: approved by alice" in str(screen.query_one("#detail-head").render()),
            what="the quorum in the detail",
        )
        assert screen.list.actions[0].status == "pending"
        with Store(store, actor="bob@cli") as s:
            assert decisions.approve(s, action.token, signer=bob).ok
        await wait_for(pilot, lambda: not screen.list.actions, what="approved by the second")
