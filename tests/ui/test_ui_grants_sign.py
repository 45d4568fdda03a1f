"""Co-signing a grant in the TUI (issue 28, team semantics): the grants view's `s` signs a grant
that awaits more approvers, through approvals/grants.cosign, after a dialog saying what it grants.

Three people, each with a real key file: bob and carol may make grants, dave may not; the
approvers file requires two approvers for `mark`. Bob makes the grant (the real CLI, his key);
this process is carol's laptop (her key), running the inbox; the calls are `patch-tui run` in
their own processes, as an agent's are."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from inboxkit import HOSTILE, inbox_app, isolate, open_grants, wait_for

from patch_tui.approvals import grants, keys
from patch_tui.approvals.grants import Pattern
from patch_tui.approvals.store import Store
from patch_tui.format import toolfile
from patch_tui.ui.dialogs.confirm import ConfirmModal
from patch_tui.ui.dialogs.dialog import TYPING_PAUSE
from patch_tui.ui.inbox.grants_view import GrantsScreen
from tests.runtimekit import cli, mark_box, runs_in

SIZE = (120, 36)
# What this process shares with the CLIs it starts: one store, config, state and toolbox.
SHARED = (
    "PATCH_TUI_CONFIG",
    "PATCH_TUI_STORE",
    "PATCH_TUI_TOOLBOX",
    "PATCH_TUI_SERVE_WORKSPACE",
    "XDG_CACHE_HOME",
    "XDG_STATE_HOME",
)


@pytest.fixture
def team(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    isolate(monkeypatch, tmp_path)
    box = mark_box(tmp_path)
    people = tmp_path / "people"
    who = {n: keys.create_key_file(people / n, f"{n}@test") for n in ("bob", "carol", "dave")}
    approvers = tmp_path / "approvers.toml"
    approvers.write_text(
        f'[[approver]]\nname = "bob"\nkey = "{who["bob"].public_line}"\ngrants = true\n'
        f'[[approver]]\nname = "carol"\nkey = "{who["carol"].public_line}"\ngrants = true\n'
        f'[[approver]]\nname = "dave"\nkey = "{who["dave"].public_line}"\n'
        '[[rule]]\ntools = ["mark"]\nrequire = 2\n'
    )
    box["env"]["PATCH_TUI_APPROVERS_FILE"] = str(approvers)
    for name in SHARED:
        monkeypatch.setenv(name, box["env"][name])
    monkeypatch.setenv("PATCH_TUI_APPROVERS_FILE", str(approvers))
    monkeypatch.setenv("PATCH_TUI_APPROVER_KEY", str(who["carol"].path))  # the TUI is carol's
    box.update(who)
    return box


def _as(team: dict[str, Any], name: str) -> dict[str, str]:
    return {**team["env"], "PATCH_TUI_APPROVER_KEY": str(team[name].path)}


def _run_mark(team: dict[str, Any], text: str) -> Any:
    args = json.dumps({"marker": str(team["marker"]), "text": text})
    return cli(team["env"], "run", "mark", "--args", args)


def _signers(team: dict[str, Any], grant_id: int) -> list[str]:
    with Store(team["store"], actor="check") as s:
        grant = s.get_grant(grant_id)
        assert grant is not None
        return [sig.approver for sig in grant.signatures]


def _listed(team: dict[str, Any]) -> list[tuple[int, str, int, int]]:
    """`patch-tui inbox grants --json`: (id, state, needs, awaiting) of each grant."""
    r = cli(team["env"], "inbox", "grants", "--json")
    assert r.returncode == 0, r.stderr
    return [(g["id"], g["state"], g["needs"], g["awaiting"]) for g in json.loads(r.stdout)]


def _made_by_bob(team: dict[str, Any], *patterns: Pattern) -> int:
    """A grant bob made and signed (in this process, with his key)."""
    path = team["tools"] / "mark.py"
    tf = toolfile.read(path)
    assert tf.manifest is not None
    with Store(team["store"], actor="bob@test") as s:
        made = grants.create(s, "mark", tf.manifest.version, tf.sha256, list(patterns), 3600,
                             tool_path=str(path.resolve()), signer=team["bob"])  # fmt: skip
    return made.id


def _row(view: GrantsScreen, index: int = 0) -> str:
    return str(view.query_one("OptionList").get_option_at_index(index).prompt)


def _dialog_text(app: Any) -> str:
    return "\n".join(str(w.render()) for w in app.screen.query("Static"))


def _notes(app: Any) -> list[str]:
    return [str(n.message) for n in app._notifications]


async def _press_sign(pilot: Any, app: Any) -> ConfirmModal:
    await pilot.press("s")
    await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal), what="the sign dialog")
    await pilot.pause()
    return app.screen


@pytest.mark.slow
async def test_a_grant_made_by_bob_signed_by_carol_in_the_tui_approves_a_matching_call(
    team,
) -> None:
    made = cli(_as(team, "bob"), "inbox", "allow", "mark", "--where", "text=hello *", "--for", "1h")
    assert made.returncode == 0, made.stderr
    grant_id = int(made.stdout.split()[1].rstrip(":"))
    held = _run_mark(team, "hello before")  # one signer of two: the call still waits
    assert held.returncode == 3 and runs_in(team["marker"]) == []
    assert _listed(team) == [(grant_id, "awaiting", 2, 1)]  # the CLI says so too

    app = inbox_app(team["store"])
    async with app.run_test(size=SIZE) as pilot:
        view = await open_grants(pilot, app)
        row = _row(view)
        assert "awaiting" in row and "not active yet: needs 1 more signature" in row
        assert "signed by bob" in row and "(1 of 2)" in row
        assert "1 awaiting more signatures" in str(view.query_one("#grants-status").render())

        dialog = await _press_sign(pilot, app)
        shown = _dialog_text(app)
        with Store(team["store"], actor="check") as s:
            grant = grants.get(s, grant_id)
        assert grant is not None
        for part in (
            f"Sign grant {grant_id} with your key?",
            "Tool: mark",
            "  text=hello *",
            f"Expires: {grant.expires_at}",
            "Signed so far: bob",
            "Needs 1 more signature (yours makes it active",
        ):
            assert part in shown, (part, shown)
        await pilot.press("y")
        await wait_for(pilot, lambda: app.screen is view, what="back to the grants")
        assert dialog is not app.screen
        await wait_for(
            pilot, lambda: _signers(team, grant_id) == ["bob", "carol"], what="carol's signature"
        )
        await wait_for(pilot, lambda: _row(view).split()[1] == "active", what="shown active")
        await wait_for(
            pilot,
            lambda: any(f"Signed grant {grant_id} (mark): active now" in n for n in _notes(app)),
            what="the signed line",
        )

        # Signing twice is refused in one line, without a dialog. (A pause first, as a person
        # reads: keys right after a letter closed a dialog are dropped as one burst of typing.)
        await pilot.pause(TYPING_PAUSE + 0.1)
        await pilot.press("s")
        await wait_for(
            pilot,
            lambda: any("carol already signed grant" in n for n in _notes(app)),
            what=lambda: f"the refusal, among {_notes(app)} on {app.screen}",
        )
        assert app.screen is view
        [refusal] = [n for n in _notes(app) if "already signed" in n]
        assert refusal == f"Grant {grant_id} not signed: carol already signed grant {grant_id}"

    assert _listed(team) == [(grant_id, "active", 2, 0)]
    ran = _run_mark(team, "hello world")  # A's run, its own process: approved by the grant
    assert ran.returncode == 0, ran.stderr
    assert f"standing grant {grant_id}" in ran.stderr
    assert runs_in(team["marker"]) == ["hello world"]
    assert _run_mark(team, "goodbye").returncode == 3  # outside the pattern: held as before


async def test_nothing_is_signed_without_the_yes_keystroke(team) -> None:
    hostile = HOSTILE["osc52_bel"] + HOSTILE["click"]
    grant_id = _made_by_bob(team, Pattern("text", f"{hostile}*"))
    app = inbox_app(team["store"])
    async with app.run_test(size=SIZE) as pilot:
        view = await open_grants(pilot, app)
        await _press_sign(pilot, app)
        shown = _dialog_text(app)
        assert "\x1b" not in shown and "\x07" not in shown  # the glob shown, never obeyed
        assert "⟦U+001B⟧" in shown and "[@click=app.quit]x[/]" in shown  # text, not markup
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is view, what="cancelled")
        await _press_sign(pilot, app)
        await pilot.press("enter")  # Cancel has the focus: a stray Enter signs nothing
        await wait_for(pilot, lambda: app.screen is view, what="cancelled by enter")
        await _press_sign(pilot, app)
        await pilot.press("n")
        await wait_for(pilot, lambda: app.screen is view, what="cancelled by n")
        await pilot.pause(0.3)
        assert _signers(team, grant_id) == ["bob"]
        assert "awaiting" in _row(view)
        assert not any("Signed grant" in n for n in _notes(app))


@pytest.mark.parametrize(
    ("who", "says"),
    [
        ("bob", "bob already signed grant {id}"),
        ("dave", "dave may not make standing grants (approvers file: grants = true)"),
    ],
)
async def test_a_refusal_is_one_line_and_opens_no_dialog(
    team, monkeypatch: pytest.MonkeyPatch, who: str, says: str
) -> None:
    grant_id = _made_by_bob(team, Pattern("text", "hello *"))
    monkeypatch.setenv("PATCH_TUI_APPROVER_KEY", str(team[who].path))
    app = inbox_app(team["store"])
    async with app.run_test(size=SIZE) as pilot:
        view = await open_grants(pilot, app)
        await pilot.press("s")
        await wait_for(pilot, lambda: any("not signed" in n for n in _notes(app)), what="why")
        assert app.screen is view
        assert _notes(app) == [f"Grant {grant_id} not signed: {says.format(id=grant_id)}"]
    assert _signers(team, grant_id) == ["bob"]


async def test_a_revoked_grant_is_not_signed(team) -> None:
    grant_id = _made_by_bob(team, Pattern("text", "hello *"))
    app = inbox_app(team["store"])
    async with app.run_test(size=SIZE) as pilot:
        view = await open_grants(pilot, app)
        await _press_sign(pilot, app)
        with Store(team["store"], actor="bob@test") as s:  # revoked while the dialog is open
            grants.revoke(s, grant_id, signer=team["bob"])
        await pilot.press("y")
        await wait_for(pilot, lambda: any("not signed" in n for n in _notes(app)), what="why")
        [line] = [n for n in _notes(app) if "not signed" in n]
        assert line.startswith(f"Grant {grant_id} not signed: ") and "\n" not in line
        assert "revoked by bob" in line
        assert app.screen is view
    assert _signers(team, grant_id) == ["bob"]


async def test_a_grant_whose_tool_file_changed_is_not_signed(team) -> None:
    grant_id = _made_by_bob(team, Pattern("text", "hello *"))
    tool = team["tools"] / "mark.py"
    tool.write_text(tool.read_text() + "# edited after the grant\n")
    app = inbox_app(team["store"])
    async with app.run_test(size=SIZE) as pilot:
        view = await open_grants(pilot, app)
        assert "ended: the tool changed since it was granted" in _row(view)
        await pilot.press("s")
        await wait_for(pilot, lambda: any("not signed" in n for n in _notes(app)), what="why")
        assert app.screen is view
        assert _notes(app) == [
            f"Grant {grant_id} not signed: ended: the tool changed since it was granted"
        ]
    assert _signers(team, grant_id) == ["bob"]
