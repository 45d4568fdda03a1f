"""Pilot tests of the modal input rule and the inbox's decisions, as a person types them: a call
that arrives while the inbox is open, sentences typed into every dialog, Esc in the history."""

from __future__ import annotations

from pathlib import Path

import pytest
from inboxkit import hold, inbox_app, isolate, open_inbox, tools, wait_for
from textual.widgets import Input

from patch_tui.approvals import grants
from patch_tui.approvals.store import Store
from patch_tui.ui.inbox.inbox_dialogs import DecideModal

SIZE = (120, 36)


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> tuple[Path, Path]:
    store = isolate(monkeypatch, tmp_path)
    return tools(tmp_path), store


@pytest.fixture
def long_bursts(monkeypatch: pytest.MonkeyPatch) -> None:
    """A typed sentence stays one burst even when a loaded machine delays Pilot's keys (each
    key's timestamp is taken after the previous one was handled)."""
    from patch_tui.ui.dialogs import dialog

    monkeypatch.setattr(dialog, "TYPING_PAUSE", 3.0)


def _status(store: Path, token: str):
    with Store(store, actor="check") as s:
        return s.get(token)


async def test_a_call_arriving_while_the_inbox_is_open_is_approved_with_a_y(env) -> None:
    folder, store = env
    app = inbox_app(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_inbox(pilot, app)
        assert not screen.list.actions and screen.has_class("-empty")
        action = hold(store, folder / "delete_file.py", {"path": "/tmp/a.txt"})
        await wait_for(pilot, lambda: screen.current is not None, what="the live call")
        # Its details fit the pane: everything is shown, approve is enabled by itself.
        await wait_for(pilot, lambda: screen.can_approve, what="approve to be enabled")
        assert screen.detail.max_scroll_y == 0
        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(app.screen, DecideModal), what="the dialog")
        await pilot.press("y")
        await wait_for(
            pilot, lambda: not isinstance(app.screen, DecideModal), what="the dialog to close"
        )
        assert _status(store, action.token).status == "approved"


async def test_a_live_call_taller_than_a_small_pane_is_approved_after_reading_on(env) -> None:
    folder, store = env
    app = inbox_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_inbox(pilot, app)
        action = hold(store, folder / "delete_file.py", {"path": "/tmp/a.txt"})
        await wait_for(
            pilot,
            lambda: screen.current is not None and screen.detail.max_scroll_y > 0,
            what="the live call laid out",
        )
        assert not screen.can_approve  # at 80x24 it does not fit: d reads it on
        for _ in range(10):
            if screen.can_approve:
                break
            await pilot.press("d")
            await pilot.pause(0.05)
        assert screen.can_approve
        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(app.screen, DecideModal), what="the dialog")
        await pilot.press("y")
        await wait_for(
            pilot, lambda: not isinstance(app.screen, DecideModal), what="the dialog to close"
        )
        assert _status(store, action.token).status == "approved"


# -- one rule for modal input: a sentence typed into every dialog ------------------------------

SENTENCE = "nay, please do not approve this yes"


def _spy_keys(app) -> list:
    """Every key the app routes (after the after-dialog guard), with the screen it goes to."""
    seen: list = []
    route = app._check_bindings

    async def spy(key: str, priority: bool = False) -> bool:
        if priority:
            seen.append((key, app.screen))
        return await route(key, priority)

    app._check_bindings = spy
    return seen


async def _type_into(pilot, dialog) -> list:
    """Type SENTENCE at `dialog` as a person does; returns the keys that went anywhere else."""
    app = pilot.app
    seen = _spy_keys(app)
    await pilot.press(*SENTENCE)
    await pilot.pause(0.2)
    return [(key, screen) for key, screen in seen if screen is not dialog]


def _files(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def _desk_openers():
    from textual.widgets import Input

    def delete(app, screen, folder):
        screen._delete(folder / "word_total.py")

    def new_tool(app, screen, folder):
        screen.action_new_tool()

    def rename(app, screen, folder):
        screen._rename(folder / "word_total.py")

    def duplicate(app, screen, folder):
        screen._duplicate(folder / "word_total.py")

    def new_version(app, screen, folder):
        screen.action_save_version()

    async def unsaved_switch(app, screen, folder, pilot):
        screen.source.insert("# unsaved\n", screen.source.document.end)
        await pilot.pause()
        screen.confirm_discard(lambda: screen.open_tool(folder / "word_total.py"))

    async def quit_unsaved(app, screen, folder, pilot):
        screen.source.insert("# unsaved\n", screen.source.document.end)
        await pilot.pause()
        await pilot.press("ctrl+q")

    async def conflict(app, screen, folder, pilot):
        screen.source.insert("# mine\n", screen.source.document.end)
        path = folder / "echo_text.py"
        path.write_text(path.read_text() + "# theirs\n")
        await pilot.pause()
        await pilot.press("ctrl+s")

    def history(app, screen, folder):
        screen.action_history()

    def interop(app, screen, folder):
        app.action_open_screen("interop")

    def generate(app, screen, folder):
        app.action_open_screen("generate")

    async def enum_picker(app, screen, folder, pilot):
        screen.form.query_one("#f-outputs-type").focus()
        await pilot.press("enter")

    del Input
    return {
        "delete tool": delete,
        "new tool": new_tool,
        "rename tool": rename,
        "duplicate tool": duplicate,
        "new version": new_version,
        "unsaved changes (switching)": unsaved_switch,
        "quit with unsaved changes": quit_unsaved,
        "conflict": conflict,
        "history": history,
        "export / import": interop,
        "generate": generate,
        "enum picker": enum_picker,
    }


DESK_DIALOGS = _desk_openers()


@pytest.mark.parametrize("which", list(DESK_DIALOGS))
async def test_a_sentence_typed_into_a_desk_dialog_decides_nothing(
    tmp_path: Path, monkeypatch, long_bursts, which: str
) -> None:
    import inspect

    from desk_helpers import make_app, ready, tool_folder

    from patch_tui.ui.dialogs.dialog import Dialog

    isolate(monkeypatch, tmp_path)
    folder = tool_folder(tmp_path)
    app = make_app(folder, folder / "echo_text.py")
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot, app)
        opener = DESK_DIALOGS[which]
        result = (
            opener(app, screen, folder, pilot)
            if len(inspect.signature(opener).parameters) == 4
            else opener(app, screen, folder)
        )
        if inspect.isawaitable(result):
            await result
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, Dialog) and app.screen.is_active,
            what=f"the {which} dialog",
        )
        await pilot.pause()
        dialog = app.screen
        files = _files(folder)
        buffer = screen.source.text
        leaked = await _type_into(pilot, dialog)
        assert leaked == [], f"{which}: keys reached the screen behind: {[k for k, _ in leaked]}"
        assert app.is_running, f"{which}: the app quit"
        assert _files(folder) == files, f"{which}: a file was written, renamed or deleted"
        assert screen.source.text == buffer, f"{which}: the buffer changed"
        # Still open (the text went into its field, or was ignored), or closed by its first
        # key "n" (No): never anything else on top.
        assert app.screen is dialog or app.screen is screen, f"{which}: {app.screen} opened"
        fields = [w for w in dialog.query("Input") if w.has_focus]
        if app.screen is dialog and dialog.first_text_field() is not None:
            assert fields and SENTENCE in fields[0].value, (
                f"{which}: the text did not land in the field"
            )


def _open_inbox_dialog(which: str):
    async def approve(pilot, screen):
        await wait_for(pilot, lambda: screen.can_approve, what="approve to be enabled")
        await pilot.press("a")

    async def reject(pilot, screen):
        await pilot.press("r")

    async def source(pilot, screen):
        await pilot.press("o")

    async def edit(pilot, screen):
        await pilot.press("e")  # edit the args, then approve them (a button only)

    async def allow(pilot, screen):
        await wait_for(pilot, lambda: screen.can_approve, what="allow to be enabled")
        await pilot.press("g")  # allow calls like this for... (a button only)

    async def batch_approve(pilot, screen):
        await pilot.press("ctrl+a", "a")  # the selection, approved together

    async def batch_reject(pilot, screen):
        await pilot.press("ctrl+a", "r")

    return {
        "approve": approve,
        "reject": reject,
        "source": source,
        "edit": edit,
        "allow": allow,
        "batch approve": batch_approve,
        "batch reject": batch_reject,
    }[which]


@pytest.mark.parametrize(
    "which", ["approve", "reject", "source", "edit", "allow", "batch approve", "batch reject"]
)
async def test_a_sentence_typed_into_an_inbox_dialog_decides_nothing(
    env, long_bursts, which: str
) -> None:
    from patch_tui.ui.dialogs.dialog import Dialog

    folder, store = env
    action = hold(store, folder / "delete_file.py", {"path": "/tmp/a.txt"})
    app = inbox_app(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_inbox(pilot, app)
        await _open_inbox_dialog(which)(pilot, screen)
        await wait_for(
            pilot, lambda: isinstance(app.screen, Dialog) and app.screen.is_active, what=which
        )
        await pilot.pause()
        dialog = app.screen
        leaked = await _type_into(pilot, dialog)
        assert leaked == [], f"{which}: keys reached the inbox: {[k for k, _ in leaked]}"
        assert _status(store, action.token).status == "pending"
        assert app.is_running
        with Store(store, actor="check") as s:
            assert grants.list_grants(s, ended=True) == [], f"{which}: a grant was made"
        if which in ("approve", "batch approve"):
            # No text field, first focus on Cancel; "n" is Cancel, and the rest of the sentence
            # ("a" would open the dialog again, "y" approve) was dropped, not sent to the inbox.
            assert app.screen is screen
        elif which == "reject":
            # The reason field has the focus: the sentence is the reason, nothing more.
            assert app.screen is dialog and dialog.query_one("#decide-note").value == SENTENCE
        elif which == "batch reject":
            assert app.screen is dialog and dialog.query_one("#batch-note").value == SENTENCE
        elif which in ("edit", "allow"):
            # The first field has the focus: the sentence is an edited value, nothing approved.
            assert app.screen is dialog
            assert isinstance(app.focused, Input) and SENTENCE in app.focused.value
        else:
            assert app.screen is dialog  # read-only source: typed text, its "q" too, is ignored


async def test_the_approve_dialog_ignores_every_other_key_and_typed_y(env, long_bursts) -> None:
    import string

    folder, store = env
    action = hold(store, folder / "delete_file.py", {"path": "/tmp/a.txt"})
    app = inbox_app(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_inbox(pilot, app)
        await wait_for(pilot, lambda: screen.can_approve, what="approve to be enabled")
        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(app.screen, DecideModal), what="approve")
        dialog = app.screen
        # Every other printable key, then space and Enter: typing. A "y" in that burst is text.
        others = [c for c in string.printable if c.isprintable() and c not in "yn"]
        await pilot.press(*others, "space", "enter", "y")
        await pilot.pause(0.2)
        assert app.screen is dialog and _status(store, action.token).status == "pending"


async def test_the_approve_dialog_approves_with_enter_on_approve_only(env) -> None:
    folder, store = env
    action = hold(store, folder / "delete_file.py", {"path": "/tmp/a.txt"})
    app = inbox_app(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_inbox(pilot, app)
        await wait_for(pilot, lambda: screen.can_approve, what="approve to be enabled")
        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(app.screen, DecideModal), what="approve")
        await pilot.press("enter")  # on Cancel, its first focus
        await wait_for(pilot, lambda: app.screen is screen, what="cancel")
        assert _status(store, action.token).status == "pending"
        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(app.screen, DecideModal), what="approve again")
        await pilot.press("shift+tab")
        assert app.focused.id == "decide-yes"
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen is screen, what="the dialog to close")
        assert _status(store, action.token).status == "approved"
