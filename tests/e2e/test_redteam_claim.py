"""Red team (issue 28): a store that changes the call inside the claim's own transaction.

The claim checks the approval's signatures against the action as it reads it, then sets it to
`executing`. A database can answer that UPDATE with a row of its own making: a trigger (a
PostgreSQL superuser's, or any writer of a SQLite store) that swaps the args, with their sha256
to match, at the very moment the call is claimed. What runs must be the call the signatures
verified, and the runner's memory (approvals/ran_here.py) must remember the token they bound."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from patch_tui.approvals.values import args_sha256
from tests.runtimekit import cli, hold_mark, mark_box, runs_in


def _swapped(box: dict[str, Any], text: str) -> tuple[str, str]:
    args = {"marker": str(box["marker"]), "text": text}
    return json.dumps(args), args_sha256(args)


def _approve(box: dict[str, Any], token: str) -> None:
    """`inbox approve TOKEN --yes --args-sha256 HASH` with the hash the store shows."""
    from patch_tui.approvals.open_store import open_store
    from patch_tui.settings.store_location import parse_location

    with open_store(parse_location(box["env"]["PATCH_TUI_STORE"]), actor="reader@test") as store:
        held = store.get(token)
    assert held is not None
    approved = cli(
        box["env"], "inbox", "approve", token, "--yes", "--args-sha256", held.args_sha256
    )
    assert approved.returncode == 0, approved.stderr


def _memory(box: dict[str, Any]) -> list[str]:
    memory = Path(box["env"]["XDG_STATE_HOME"]) / "patch-tui" / "ran-here.sqlite3"
    if not memory.exists():
        return []
    with sqlite3.connect(memory) as db:
        return [row[0] for row in db.execute("SELECT token FROM claimed")]


def _assert_refused_as_tampered(box: dict[str, Any], token: str) -> None:
    ran = cli(box["env"], "confirm", token)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "Traceback" not in ran.stderr
    refusal = json.loads(ran.stdout)
    assert refusal["status"] == "tampered" and "changed" in refusal["message"], refusal
    assert runs_in(box["marker"]) == []


@pytest.mark.slow
def test_a_sqlite_trigger_swapping_the_args_as_the_call_is_claimed_runs_nothing(
    tmp_path: Path,
) -> None:
    box = mark_box(tmp_path)
    token = hold_mark(box, "harmless")
    _approve(box, token)
    evil_json, evil_sha = _swapped(box, "by the attacker")
    with sqlite3.connect(box["store"]) as db:
        db.execute(
            "CREATE TRIGGER swap AFTER UPDATE OF status ON actions "
            "WHEN NEW.status = 'executing' BEGIN "
            f"UPDATE actions SET args_json = '{evil_json}', args_sha256 = '{evil_sha}' "
            "WHERE id = NEW.id; END"
        )
    _assert_refused_as_tampered(box, token)


@pytest.mark.slow
@pytest.mark.parametrize(
    "rewrite",
    [
        "NEW.args_json := '{evil_json}'; NEW.args_sha256 := '{evil_sha}';",
        # A look-alike token, so the runner's memory of the claim would be kept under a name
        # no later claim of the signed token looks up.
        "NEW.token := upper(NEW.token) || chr(8203);",
    ],
    ids=["args", "token"],
)
def test_a_team_database_swapping_the_call_as_it_is_claimed_runs_nothing(
    tmp_path: Path, pg_url: str, rewrite: str
) -> None:
    """The team inbox's superuser: a BEFORE UPDATE trigger rewrites the row the claim sets to
    executing (other args with their sha256, or the token), after the signatures were checked."""
    import psycopg

    box = mark_box(tmp_path)
    box["env"]["PATCH_TUI_STORE"] = pg_url
    token = hold_mark(box, "harmless")
    _approve(box, token)
    evil_json, evil_sha = _swapped(box, "by the attacker")
    with psycopg.connect(pg_url, autocommit=True) as db:
        db.execute(
            "CREATE FUNCTION swap() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            "IF NEW.status = 'executing' THEN "
            + rewrite.format(evil_json=evil_json, evil_sha=evil_sha)
            + " END IF; RETURN NEW; END $$"
        )
        db.execute(
            "CREATE TRIGGER swap BEFORE UPDATE ON actions FOR EACH ROW EXECUTE FUNCTION swap()"
        )
    _assert_refused_as_tampered(box, token)
    assert _memory(box) in ([], [token])


@pytest.mark.slow
@pytest.mark.parametrize(
    "look_alike",
    [str.upper, lambda t: t + " ", lambda t: t + "\u200b", lambda t: "\uff21" + t[1:]],
    ids=["upper", "space", "zero-width", "fullwidth"],
)
def test_a_replay_under_a_look_alike_token_is_refused(
    tmp_path: Path, look_alike: Callable[[str], str]
) -> None:
    """The store erases the first run and renames the call, so the runner's memory (kept by
    token) would not find it; the signatures bind the token they were made for, so the renamed
    call is not the approved one."""
    box = mark_box(tmp_path)
    token = hold_mark(box, "once")
    _approve(box, token)
    assert cli(box["env"], "confirm", token).returncode == 0
    renamed = look_alike(token)
    with sqlite3.connect(box["store"]) as db:
        db.execute("DROP TRIGGER events_no_delete")
        db.execute("DELETE FROM events WHERE event = 'claimed'")
        db.execute(
            "UPDATE actions SET status = 'approved', token = ? WHERE token = ?", (renamed, token)
        )
    again = cli(box["env"], "confirm", renamed)
    assert again.returncode == 1 and "Traceback" not in again.stderr, again.stdout
    assert json.loads(again.stdout)["status"] == "tampered"
    assert runs_in(box["marker"]) == ["once"]
