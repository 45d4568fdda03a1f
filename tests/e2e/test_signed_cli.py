"""Signed approvals through the real CLI (issue 23): two people with their own keys, an approvers
file requiring both for `mark`, and an attacker process that can write the store and make keys
of its own but holds neither person's private key. `patch-tui confirm` is what runs the call."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from patch_tui.approvals import decisions, keys
from patch_tui.approvals.approvers import parse_approvers
from patch_tui.approvals.store import Store
from tests.runtimekit import approve_argv, cli, hold_mark, mark_box, runs_in


@pytest.fixture
def team(tmp_path: Path) -> dict[str, Any]:
    box = mark_box(tmp_path)
    people = tmp_path / "people"
    alice = keys.create_key_file(people / "alice", "alice@laptop")
    bob = keys.create_key_file(people / "bob", "bob@desk")
    approvers = tmp_path / "approvers.toml"
    approvers.write_text(
        f'[[approver]]\nname = "alice"\nkey = "{alice.public_line}"\ngrants = true\n'
        f'[[approver]]\nname = "bob"\nkey = "{bob.public_line}"\n'
        '[[rule]]\ntools = ["mark"]\nrequire = 2\n'
    )
    box["env"]["PATCH_TUI_APPROVERS_FILE"] = str(approvers)
    box.update(alice=alice, bob=bob, approvers=approvers)
    return box


def _as(team: dict[str, Any], who: str) -> dict[str, str]:
    """The CLI's environment for one person: their own key."""
    return {**team["env"], "PATCH_TUI_APPROVER_KEY": str(team[who].path)}


@pytest.mark.slow
def test_two_people_must_approve_and_the_inbox_says_where_it_stands(team) -> None:
    token = hold_mark(team, "needs two")
    first = cli(_as(team, "alice"), *approve_argv(team["env"], token))
    assert first.returncode == 0, first.stderr
    assert "1 of 2: approved by alice" in first.stdout
    listed = cli(team["env"], "inbox", "list")
    assert "approvals: 1 of 2: approved by alice" in listed.stdout
    row = json.loads(cli(team["env"], "inbox", "list", "--json").stdout)[0]
    assert row["status"] == "pending" and row["approvals"] == "1 of 2: approved by alice"
    early = cli(team["env"], "confirm", token)
    assert early.returncode == 1 and json.loads(early.stdout)["status"] == "awaiting_approval"
    # Alice again counts once.
    again = cli(_as(team, "alice"), *approve_argv(team["env"], token))
    assert again.returncode == 1 and "already approved" in again.stderr
    assert runs_in(team["marker"]) == []
    second = cli(_as(team, "bob"), *approve_argv(team["env"], token))
    assert second.returncode == 0 and f"approved {token}" in second.stdout, second.stderr
    ran = cli(team["env"], "confirm", token)
    assert ran.returncode == 0, ran.stderr
    assert runs_in(team["marker"]) == ["needs two"]


@pytest.mark.slow
def test_an_attacker_with_the_store_but_no_key_cannot_make_a_call_run(team, tmp_path) -> None:
    """The attacker writes the store and makes a key of its own (the default key file included:
    `keys new` in a config folder of its own). Nothing it signs or writes runs the call."""
    token = hold_mark(team, "wipe it all")
    intruder = keys.create_key_file(tmp_path / "intruder" / "key", "alice@laptop")
    mine = _as(team, "alice") | {"PATCH_TUI_APPROVER_KEY": str(intruder.path)}
    refused = cli(mine, *approve_argv(team["env"], token))
    assert refused.returncode == 1 and "is not an approver's" in refused.stderr
    # Its own signatures written straight into the store, in alice's and bob's names, with the
    # status set to approved: the signatures do not verify against the approvers file.
    trust = parse_approvers({"approver": [{"name": n, "key": intruder.public_line}
                                          for n in ("alice",)]})  # fmt: skip
    with Store(team["store"], actor="intruder") as store:
        assert decisions.approve(store, token, signer=intruder, approvers=trust).ok
        (forged,) = store.decisions(token)
    with sqlite3.connect(team["store"]) as db:
        db.execute(
            "INSERT INTO signatures (action_id, approver, decision, at, args_sha256, envelope) "
            "SELECT action_id, 'bob', decision, at, args_sha256, envelope FROM signatures"
        )
    ran = cli(team["env"], "confirm", token)
    assert ran.returncode == 1 and json.loads(ran.stdout)["status"] == "tampered"
    assert runs_in(team["marker"]) == []
    assert forged.approver == "alice"
    # An unsigned grant for the tool, inserted by SQL, approves nothing either.
    with sqlite3.connect(team["store"]) as db:
        db.execute(
            "INSERT INTO grants (tool, version, source_sha256, patterns_json, created_at, "
            "created_by, expires_at) SELECT tool, version, source_sha256, '[]', created_at, "
            "'alice', '2999-01-01T00:00:00.000Z' FROM actions"
        )
    held = cli(team["env"], "run", "mark", "--args",
               json.dumps({"marker": str(team["marker"]), "text": "by a fake grant"}))  # fmt: skip
    assert held.returncode == 3 and runs_in(team["marker"]) == []
    grants_listed = cli(team["env"], "inbox", "grants")
    assert "ignored: it is not signed" in grants_listed.stdout


@pytest.mark.slow
def test_keys_new_show_and_list(tmp_path: Path) -> None:
    box = mark_box(tmp_path)
    env = {k: v for k, v in box["env"].items() if k != "PATCH_TUI_APPROVER_KEY"}
    made = cli(env, "keys", "new")
    assert made.returncode == 0, made.stderr
    key_file = tmp_path / keys.KEY_FILE_NAME  # beside the test's config.toml
    assert key_file.exists() and (key_file.stat().st_mode & 0o777) == 0o600
    public = made.stdout.splitlines()[-1]
    assert public.startswith("ssh-ed25519 ")
    again = cli(env, "keys", "new")
    assert again.returncode == 1 and "already there" in again.stderr
    shown = cli(env, "keys", "show")
    assert shown.returncode == 0 and shown.stdout.strip() == public
    listed = cli(env, "keys", "list")
    assert listed.returncode == 0, listed.stderr
    assert "your own key is the one approver" in listed.stdout


@pytest.mark.slow
def test_allow_dry_run_lists_what_a_grant_would_have_approved(tmp_path: Path) -> None:
    box = mark_box(tmp_path)
    for text in ("report-1", "report-2", "other, report-3"):
        hold_mark(box, text)
    r = cli(box["env"], "inbox", "allow", "mark", "--where", "text=report-*", "--dry-run")
    assert r.returncode == 0, r.stderr
    assert "of the last 3 calls of mark, this grant would have approved 2" in r.stdout
    lines = [line for line in r.stdout.splitlines() if line.startswith("  ")]
    assert sum("would approve" in line for line in lines) == 2
    assert any("not matched" in line and "other, report-3" in line for line in lines)
    # Nothing was granted.
    assert json.loads(cli(box["env"], "inbox", "grants", "--json").stdout) == []
