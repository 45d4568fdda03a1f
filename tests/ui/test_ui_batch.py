"""Batches in the inbox (issue 17 item 3), tried with real keystrokes: select with space / ctrl+a /
* / esc, then approve or reject together through a dialog that lists every item, never deciding
one that was not in it; and the standing grants screen (G)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from inboxkit import hold, inbox_app, isolate, open_grants, open_inbox, tools, wait_for

from patch_tui.approvals import decisions
from patch_tui.approvals.store import Store
from patch_tui.ui.inbox.batch import BatchDialog

SIZE = (120, 36)


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> tuple[Path, Path]:
    store = isolate(monkeypatch, tmp_path)
    return tools(tmp_path), store


def _get(store: Path, token: str):
    with Store(store, actor="check") as s:
        return s.get(token)


def _events(store: Path, token: str):
    with Store(store, actor="check") as s:
        return s.events(token)


def _dialog_text(app) -> str:
    return str(app.screen.query_one("#batch-list").render())


async def _open_batch(pilot, app, key: str) -> BatchDialog:
    await pilot.press(key)
    await wait_for(
        pilot,
        lambda: isinstance(app.screen, BatchDialog) and app.screen.is_active,
        what="the batch dialog",
    )
    await pilot.pause()
    return app.screen


async def _held_by_another_process(store: Path, tool: Path, args: dict):
    """`patch-tui run TOOL --args ...` in its own process: held (exit 3), as an agent's call."""
    import asyncio
    import sys

    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "patch_tui",
        "run",
        str(tool),
        "--args",
        json.dumps(args),
        "--store",
        str(store),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await proc.communicate()
    assert proc.returncode == 3, err.decode()
    token = json.loads(out)["confirmation_token"]
    return _get(store, token)


async def test_an_action_arriving_while_the_batch_dialog_is_open_is_not_decided(env) -> None:
    folder, store = env
    a = hold(store, folder / "delete_file.py", {"path": "/tmp/a.txt"})
    b = hold(store, folder / "delete_file.py", {"path": "/tmp/b.txt"})
    app = inbox_app(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_inbox(pilot, app)
        await wait_for(pilot, lambda: len(screen.list.actions) == 2, what="two pending")
        await pilot.press("ctrl+a")  # select all: the two listed
        assert screen.list.selected == {a.token, b.token}
        dialog = await _open_batch(pilot, app, "a")
        # The dialog lists every item it will decide: tool, args, source.
        text = _dialog_text(app)
        for action in (a, b):
            assert action.args["path"] in text and action.token[:8] in text
        assert text.count("delete_file") >= 2 and str(folder / "delete_file.py") in text
        # A call arrives while it is open, from an agent's process (`patch-tui run` holds it);
        # the inbox behind lists it.
        c = await _held_by_another_process(store, folder / "delete_file.py", {"path": "/tmp/c.txt"})
        await wait_for(
            pilot, lambda: len(screen.list.actions) == 3, what="the new call listed behind"
        )
        assert c.token not in screen.list.selected and c.token not in _dialog_text(app)
        await pilot.press("y")
        await wait_for(pilot, lambda: dialog.done, what="the batch decided")
        assert _get(store, a.token).status == "approved"
        assert _get(store, b.token).status == "approved"
        assert _get(store, c.token).status == "pending"
        await pilot.press("enter")  # Close
        await wait_for(pilot, lambda: app.screen is screen, what="the dialog closed")
        await wait_for(
            pilot, lambda: [x.token for x in screen.list.actions] == [c.token], what="the list"
        )
        assert not screen.list.selected


async def test_each_action_of_a_batch_is_its_own_signed_decision(env) -> None:
    folder, store = env
    held = [hold(store, folder / "delete_file.py", {"path": f"/tmp/{n}.txt"}) for n in range(3)]
    app = inbox_app(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_inbox(pilot, app)
        await wait_for(pilot, lambda: len(screen.list.actions) == 3, what="three pending")
        await pilot.press("space", "space", "space")
        assert screen.list.selected == {x.token for x in held}
        dialog = await _open_batch(pilot, app, "a")
        await pilot.press("y")
        await wait_for(pilot, lambda: dialog.done, what="the batch decided")
    with Store(store, actor="agent") as s:
        for action in held:
            approved = [e for e in s.events(action.token) if e.event == "approved"]
            assert len(approved) == 1 and approved[0].actor.endswith("@tui")
            # Signed over that one call, as a single approval is.
            (signature,) = s.decisions(action.token)
            assert action.token in json.loads(signature.envelope)["statement"]
            assert decisions.claim(s, action.token).ok  # and confirm takes it as genuine


async def test_refused_items_are_reported_per_item_and_stay_undecided(env) -> None:
    folder, store = env
    good = hold(store, folder / "delete_file.py", {"path": "/tmp/ok.txt"})
    tainted = hold(
        store,
        folder / "slugify.py",
        {"text": "x" * 20},
        kind="tainted_input",
        details={"tainted_inputs": [{"inputName": "text", "matchedTools": ["fetch"]}]},
    )
    changed = hold(store, folder / "word_count.py", {"text": "a b"})
    short = hold(store, folder / "delete_file.py", {"path": "/tmp/soon.txt"}, ttl=4)
    long = hold(store, folder / "delete_file.py", {"path": "/tmp/" + "x" * 700})
    app = inbox_app(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_inbox(pilot, app)
        await wait_for(pilot, lambda: len(screen.list.actions) == 5, what="five pending")
        # The tool file changes after the call was held: its approval could never run.
        path = folder / "word_count.py"
        path.write_text(path.read_text() + "\n# changed\n")
        await pilot.press("ctrl+a")
        dialog = await _open_batch(pilot, app, "a")
        text = _dialog_text(app)
        assert "tainted_input hold is decided on its own" in text
        assert "tool file changed" in text
        assert "too long to show here in full" in text
        assert str(dialog.query_one("#batch-yes").label).startswith("Approve 2")
        # The short one expires while the dialog is open.
        await wait_for(
            pilot,
            lambda: _get(store, short.token).expires_at < _now_iso(),
            timeout=8,
            what="expiry",
        )
        await pilot.press("end")  # five items: read to the end first
        await wait_for(pilot, lambda: dialog.seen_end, what="the list read")
        await pilot.press("y")
        await wait_for(pilot, lambda: dialog.done, what="the batch decided")
        text = _dialog_text(app)
        assert "✓ approved" in text and "not approved: expired" in text
        assert text.count("✗") == 4
        state = str(dialog.query_one("#batch-state").render())
        assert "1 of 5 approved" in state
    assert _get(store, good.token).status == "approved"
    assert _get(store, tainted.token).status == "pending"
    assert _get(store, changed.token).status == "pending"
    assert _get(store, short.token).status == "expired"
    assert _get(store, long.token).status == "pending"


def _now_iso() -> str:
    import time

    from patch_tui.approvals.store import now_iso

    return now_iso(time.time())


async def test_a_batch_reject_gives_every_item_the_typed_reason(env) -> None:
    folder, store = env
    a = hold(store, folder / "delete_file.py", {"path": "/tmp/a.txt"})
    b = hold(store, folder / "slack_send_message.py", {"channel": "#c", "text": "t"})
    app = inbox_app(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_inbox(pilot, app)
        await wait_for(pilot, lambda: len(screen.list.actions) == 2, what="two pending")
        await pilot.press("space", "space")
        dialog = await _open_batch(pilot, app, "r")
        assert app.focused is dialog.query_one("#batch-note")  # the reason field has the focus
        await pilot.press(*"wrong target, ask again", "enter")
        await wait_for(pilot, lambda: dialog.done, what="the batch rejected")
    for action in (a, b):
        got = _get(store, action.token)
        assert got.status == "rejected" and got.note == "wrong target, ask again"
        assert [
            e.detail.get("reason") for e in _events(store, action.token) if e.event == "rejected"
        ] == ["wrong target, ask again"]


async def test_selection_keys_space_ctrl_a_star_and_esc(env) -> None:
    folder, store = env
    for n in range(3):
        hold(store, folder / "delete_file.py", {"path": f"/tmp/{n}.txt"})
    app = inbox_app(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_inbox(pilot, app)
        await wait_for(pilot, lambda: len(screen.list.actions) == 3, what="three pending")
        rows = [x.token for x in screen.list.actions]
        await pilot.press("space")  # selects the row under the cursor and moves down
        assert screen.list.selected == {rows[0]} and screen.list.cursor == 1
        await pilot.press("asterisk")  # invert
        assert screen.list.selected == {rows[1], rows[2]}
        await pilot.press("up", "space")  # back to the first row, selected again
        assert screen.list.selected == set(rows)
        assert "3 selected" in screen.query_one("#list-box").border_title
        # The detail pane says what a and r do now: the selection, not the row under the cursor.
        assert "3 selected: a / r decide them" in screen.detail.border_subtitle
        # A row decided elsewhere leaves the selection; a new one never joins it.
        with Store(store, actor="bob@cli") as s:
            decisions.reject(s, rows[2])
        new = hold(store, folder / "delete_file.py", {"path": "/tmp/new.txt"})
        await wait_for(
            pilot, lambda: new.token in {x.token for x in screen.list.actions}, what="the new row"
        )
        assert screen.list.selected == {rows[0], rows[1]}
        await pilot.press("escape")  # clears the selection, stays in the inbox
        assert not screen.list.selected and app.screen is screen and app.is_running
        await pilot.press("escape")  # nothing selected: back (the standalone inbox quits)
        await wait_for(pilot, lambda: not app.is_running, what="the app to quit")
    assert {_get(store, t).status for t in rows[:2]} == {"pending"}  # selecting decides nothing


async def test_a_long_batch_is_approved_only_after_reading_it_to_the_end(env) -> None:
    folder, store = env
    held = [
        hold(store, folder / "delete_file.py", {"path": f"/tmp/file-{n}.txt"}) for n in range(8)
    ]
    app = inbox_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_inbox(pilot, app)
        await wait_for(pilot, lambda: len(screen.list.actions) == 8, what="eight pending")
        await pilot.press("ctrl+a")
        dialog = await _open_batch(pilot, app, "a")
        box = dialog.query_one("#batch-items")
        assert box.max_scroll_y > 0 and not dialog.seen_end
        assert dialog.query_one("#batch-yes").disabled
        await pilot.press("y")
        await pilot.pause(0.3)
        assert not dialog.done and {_get(store, x.token).status for x in held} == {"pending"}
        await pilot.press("end")
        await wait_for(pilot, lambda: dialog.seen_end, what="the end of the list")
        await pilot.pause(0.7)  # the y above was a command, not typing; a pause either way
        await pilot.press("y")
        await wait_for(pilot, lambda: dialog.done, what="the batch decided")
    assert {_get(store, x.token).status for x in held} == {"approved"}


# -- the grants screen ---------------------------------------------------------------------------


async def test_the_grants_screen_lists_active_and_ended_grants_and_revokes(env) -> None:
    from patch_tui.approvals import grants
    from patch_tui.approvals.grants import Pattern
    from patch_tui.ui.dialogs.confirm import ConfirmModal
    from patch_tui.ui.inbox.grants_view import GrantsScreen

    folder, store = env
    with Store(store, actor="alice@cli") as s:
        g1 = grants.create(
            s, "delete_file", "1.0.0", "a" * 64, [Pattern("path", "/tmp/build/*")], 3600
        )
        g2 = grants.create(
            s, "slugify", "1.0.0", "b" * 64, [Pattern("text", "\x1b]52;c;ZXZpbA==\x07*")], 3600
        )
        grants.revoke(s, g2.id)
    app = inbox_app(store)
    async with app.run_test(size=SIZE) as pilot:
        view = await open_grants(pilot, app)
        assert [g.id for g in view.grants] == [g1.id]
        await pilot.press("a")  # the ended ones too
        await wait_for(
            pilot, lambda: [g.id for g in view.grants] == [g2.id, g1.id], what="every grant"
        )
        text = "".join(
            str(view.query_one("OptionList").get_option_at_index(i).prompt) for i in range(2)
        )
        assert "revoked" in text and "path=/tmp/build/*" in text and "\x1b" not in text
        assert "⟦U+001B⟧" in text or "␛" in text  # the hostile glob shown, never obeyed
        await pilot.press("down")  # g1 (newest first: g2, then g1)
        await pilot.press("r")
        await wait_for(
            pilot, lambda: isinstance(app.screen, ConfirmModal), what="the revoke dialog"
        )
        await pilot.press("y")
        await wait_for(pilot, lambda: app.screen is view, what="back to the grants")
        with Store(store, actor="check") as s:
            await wait_for(
                pilot, lambda: grants.get(s, g1.id).revoked_at is not None, what="revoked"
            )
        await wait_for(
            pilot,
            lambda: "revoked" in str(view.query_one("OptionList").get_option_at_index(1).prompt),
            what="shown revoked",
        )
        await pilot.press("escape")
        await wait_for(
            pilot, lambda: not isinstance(app.screen, GrantsScreen), what="back to the inbox"
        )


async def test_the_grants_screen_says_a_grant_ended_when_its_tool_changed(env) -> None:
    """The grant stays in the store (it no longer matches any call), but the screen must not
    call it active. Revoking is still offered: the granted bytes put back would revive it."""
    from patch_tui.approvals import grants
    from patch_tui.approvals.grants import Pattern
    from patch_tui.format import toolfile
    from patch_tui.ui.dialogs.confirm import ConfirmModal

    folder, store = env
    path = folder / "delete_file.py"
    action = hold(store, path, {"path": "/tmp/build/a"})  # the file the grant is about
    tf = toolfile.read(path)
    with Store(store, actor="alice@cli") as s:
        grant = grants.create(
            s, action.tool, action.version, tf.sha256, [Pattern("path", "/tmp/build/*")], 3600
        )
    path.write_text(path.read_text() + "# edited after the grant\n")
    app = inbox_app(store)
    async with app.run_test(size=SIZE) as pilot:
        view = await open_grants(pilot, app)
        assert [g.id for g in view.grants] == [grant.id]
        row = str(view.query_one("OptionList").get_option_at_index(0).prompt)
        assert "ended: the tool changed since it was granted" in row and "active" not in row
        status = str(view.query_one("#grants-status").render())
        assert status.startswith("0 active, 1 ended"), status

        path.unlink()
        view.reload()
        await wait_for(
            pilot,
            lambda: (
                "the tool file is gone"
                in str(view.query_one("OptionList").get_option_at_index(0).prompt)
            ),
            what="shown gone",
        )
        await pilot.press("r")
        await wait_for(
            pilot, lambda: isinstance(app.screen, ConfirmModal), what="the revoke dialog"
        )
        await pilot.press("y")
        await wait_for(pilot, lambda: app.screen is view, what="back to the grants")
        with Store(store, actor="check") as s:
            await wait_for(
                pilot, lambda: grants.get(s, grant.id).revoked_at is not None, what="revoked"
            )


async def test_typed_text_never_approves_a_batch(env, monkeypatch) -> None:
    """A sentence with no "n" in front (so nothing cancels first): its "y" is text, not a yes."""
    from patch_tui.ui.dialogs import dialog as dialog_mod

    monkeypatch.setattr(
        dialog_mod, "TYPING_PAUSE", 3.0
    )  # a loaded machine's slow keys stay one burst
    folder, store = env
    held = [hold(store, folder / "delete_file.py", {"path": f"/tmp/{n}.txt"}) for n in range(2)]
    app = inbox_app(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_inbox(pilot, app)
        await wait_for(pilot, lambda: len(screen.list.actions) == 2, what="two pending")
        await pilot.press("ctrl+a")
        dialog = await _open_batch(pilot, app, "a")
        await pilot.press(*"okay, yes, approve them all y", "enter")
        await pilot.pause(0.3)
        assert app.screen is dialog and not dialog.done
    assert {_get(store, x.token).status for x in held} == {"pending"}


async def test_at_80x24_a_reason_and_enter_reject_only_after_the_list_was_read(env) -> None:
    """The reject dialog's reason field leaves two lines to the list at 80x24: Enter after the
    reason rejects nothing until the list was read to its end (found by hand in tmux)."""
    folder, store = env
    held = [
        hold(store, folder / "delete_file.py", {"path": f"/tmp/inbox-demo/{n}.txt"})
        for n in range(2)
    ]
    app = inbox_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_inbox(pilot, app)
        await wait_for(pilot, lambda: len(screen.list.actions) == 2, what="two pending")
        await pilot.press("ctrl+a")
        dialog = await _open_batch(pilot, app, "r")
        await pilot.pause(0.3)
        assert not dialog.seen_end and dialog.query_one("#batch-yes").disabled
        await pilot.press(*"not now", "enter")
        await pilot.pause(0.3)
        assert not dialog.done and {_get(store, x.token).status for x in held} == {"pending"}
        for _ in range(10):  # pgdn pages the list from the reason field (End is the field's)
            if dialog.seen_end:
                break
            await pilot.press("pagedown")
            await pilot.pause(0.05)
        assert dialog.seen_end
        await pilot.pause(0.7)  # after the typing burst
        await pilot.press("enter")  # in the reason field: rejects, with the reason
        await wait_for(pilot, lambda: dialog.done, what="the batch rejected")
    assert {_get(store, x.token).note for x in held} == {"not now"}


async def test_shift_down_and_up_extend_the_selection(env) -> None:
    folder, store = env
    for n in range(4):
        hold(store, folder / "delete_file.py", {"path": f"/tmp/{n}.txt"})
    app = inbox_app(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_inbox(pilot, app)
        await wait_for(pilot, lambda: len(screen.list.actions) == 4, what="four pending")
        rows = [x.token for x in screen.list.actions]
        await pilot.press("shift+down", "shift+down")
        assert screen.list.selected == set(rows[:3]) and screen.list.cursor == 2
        await pilot.press("escape", "down", "shift+up")
        assert screen.list.selected == {rows[3], rows[2]} and screen.list.cursor == 2
