"""Regenerate the docs' edit-then-approve, allow-like-this, batch and grants screenshots:
`.venv/bin/python docs/screenshots_grants.py`.

The inbox on its own, over a temporary store holding one held delete_file call, at 120x36 in the
default theme: `e` with the path edited, then `g` with the path widened to a glob; then three more
calls (one a tainted_input hold), all selected (ctrl+a) and `a`: the batch dialog; then four
grants (one revoked, one whose tool file was edited after, one bob made for a tool whose calls
need two approvers) and `G`, `a`: the grants screen with the ended ones; then `s` on bob's: the
dialog that signs it (the inbox is alice's, with her key)."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
from pathlib import Path

DOCS = Path(__file__).resolve().parent
REPO = DOCS.parent
sys.path.insert(0, str(REPO / "tests"))


async def shots(tmp: Path) -> None:
    from inboxkit import hold, inbox_app, open_inbox, wait_for
    from textual.widgets import Input

    from patch_tui.ui.inbox.allow_dialog import AllowDialog
    from patch_tui.ui.inbox.edit_args_dialog import EditArgsDialog

    tools = tmp / "tools"
    tools.mkdir()
    shutil.copy(REPO / "sample_tools" / "delete_file.py", tools / "delete_file.py")
    hold(tmp / "store.sqlite3", tools / "delete_file.py", {"path": "/srv/app", "missing_ok": False})
    app = inbox_app(tmp / "store.sqlite3")
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_inbox(pilot, app)
        screen.detail.scroll_end(animate=False, immediate=True)
        await wait_for(pilot, lambda: screen.can_approve, what="everything shown")
        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(app.screen, EditArgsDialog), what="edit")
        dialog = app.screen
        await wait_for(pilot, lambda: bool(dialog.baseline), what="the form")
        dialog.query_one("#in-path", Input).value = "/srv/app/cache/old.log"
        await pilot.pause(0.3)
        for widget in app.screen.query("Input"):
            widget.cursor_blink = False  # type: ignore[attr-defined]
        await pilot.pause(0.1)
        app.save_screenshot(filename="screenshot-inbox-edit.svg", path=str(DOCS))
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, EditArgsDialog), what="back")
        await pilot.press("g")
        await wait_for(pilot, lambda: isinstance(app.screen, AllowDialog), what="allow")
        await pilot.pause(0.2)
        app.screen.query_one("#allow-glob-0", Input).value = "/srv/app/cache/*"
        await pilot.pause(0.3)
        for widget in app.screen.query("Input"):
            widget.cursor_blink = False  # type: ignore[attr-defined]
        await pilot.pause(0.1)
        app.save_screenshot(filename="screenshot-inbox-allow.svg", path=str(DOCS))
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is screen, what="back")
        await batch_and_grants(pilot, app, screen, tmp, tools)


async def batch_and_grants(pilot, app, screen, tmp: Path, tools: Path) -> None:
    from inboxkit import hold, wait_for

    from patch_tui.approvals import grants, keys
    from patch_tui.approvals.grants import Pattern
    from patch_tui.approvals.store import Store
    from patch_tui.format import toolfile
    from patch_tui.ui.dialogs.confirm import ConfirmModal
    from patch_tui.ui.inbox.batch import BatchDialog
    from patch_tui.ui.inbox.grants_view import GrantsScreen

    store = tmp / "store.sqlite3"
    shutil.copy(REPO / "sample_tools" / "slack_send_message.py", tools / "slack_send_message.py")
    hold(store, tools / "delete_file.py", {"path": "/srv/app/cache/a.log", "missing_ok": True})
    hold(store, tools / "delete_file.py", {"path": "/srv/app/cache/b.log", "missing_ok": True})
    hold(
        store,
        tools / "slack_send_message.py",
        {"channel": "#ops", "text": "deploy token: ghp_0123456789abcdef0123"},
        kind="tainted_input",
        details={"tainted_inputs": [{"inputName": "text", "matchedTools": ["read_env"]}]},
    )
    await wait_for(pilot, lambda: len(screen.list.actions) == 4, what="four pending")
    await pilot.press("ctrl+a", "a")
    await wait_for(pilot, lambda: isinstance(app.screen, BatchDialog), what="the batch dialog")
    await pilot.pause(0.3)
    app.save_screenshot(filename="screenshot-inbox-batch.svg", path=str(DOCS))
    await pilot.press("escape")
    await wait_for(pilot, lambda: app.screen is screen, what="back")
    sha = toolfile.read(tools / "delete_file.py").sha256
    slack = tools / "slack_send_message.py"
    slack_tf = toolfile.read(slack)
    assert slack_tf.manifest is not None
    with Store(store, actor="alice@tui") as s:
        grants.create(
            s,
            "slack_send_message",
            slack_tf.manifest.version,
            slack_tf.sha256,
            [Pattern("channel", "#ops")],
            3600,
        )
        grants.create(s, "delete_file", "1.0.0", sha, [Pattern("path", "/srv/app/cache/*")], 7200)
        old = grants.create(s, "delete_file", "1.0.0", sha, [Pattern("path", "/tmp/*")], 3600)
        grants.revoke(s, old.id)
    slack.write_text(slack.read_text() + "# edited after the grant\n")  # ends that grant
    edited = toolfile.read(slack)
    with Store(store, actor="bob@desk") as s:
        grants.create(
            s,
            "slack_send_message",
            slack_tf.manifest.version,
            edited.sha256,
            [Pattern("channel", "#ops"), Pattern("text", "deploy * finished")],
            4 * 3600,
            tool_path=str(slack.resolve()),
            signer=keys.load_key_file(tmp / "keys" / "bob"),
        )
    await pilot.press("escape", "G")
    await wait_for(
        pilot,
        lambda: isinstance(app.screen, GrantsScreen) and app.screen.load_count > 0,
        what="grants",
    )
    await pilot.press("a")
    await wait_for(pilot, lambda: len(app.screen.grants) == 4, what="every grant")
    await pilot.pause(0.2)
    app.save_screenshot(filename="screenshot-inbox-grants.svg", path=str(DOCS))
    await pilot.press("s")  # bob's, the newest: awaiting a second approver
    await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal), what="the sign dialog")
    await pilot.pause(0.3)
    app.save_screenshot(filename="screenshot-inbox-grants-sign.svg", path=str(DOCS))


def team(tmp: Path) -> None:
    """Two approvers allowed to grant, alice (this inbox's key) and bob; slack_send_message's
    calls need both."""
    from patch_tui.approvals import keys

    alice = keys.create_key_file(tmp / "keys" / "alice", "alice@laptop")
    bob = keys.create_key_file(tmp / "keys" / "bob", "bob@desk")
    approvers = tmp / "approvers.toml"
    approvers.write_text(
        f'[[approver]]\nname = "alice"\nkey = "{alice.public_line}"\ngrants = true\n'
        f'[[approver]]\nname = "bob"\nkey = "{bob.public_line}"\ngrants = true\n'
        '[[rule]]\ntools = ["slack_send_message"]\nrequire = 2\n'
    )
    os.environ["PATCH_TUI_APPROVER_KEY"] = str(alice.path)
    os.environ["PATCH_TUI_APPROVERS_FILE"] = str(approvers)


def main() -> None:
    # A fixed folder, so the store path the inbox shows is the same in every regeneration.
    tmp = Path(tempfile.gettempdir()) / "patch-tui-demo"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        os.environ["PATCH_TUI_CONFIG"] = str(tmp / "config.toml")
        os.environ["PATCH_TUI_STORE"] = str(tmp / "store.sqlite3")
        for var in ("XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME"):
            os.environ[var] = str(tmp / var.lower())
        team(tmp)
        asyncio.run(shots(tmp))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    names = ("edit", "allow", "batch", "grants", "grants-sign")
    print("wrote " + ", ".join(str(DOCS / f"screenshot-inbox-{n}.svg") for n in names))


if __name__ == "__main__":
    main()
