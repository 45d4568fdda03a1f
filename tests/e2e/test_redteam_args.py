"""Red team (issue 28): a store writer that has a person approve args they did not see.

An approval signs the args sha256 stored beside the args (what `inbox show` prints, and what a
script passes back with `--args-sha256`). A writer that leaves another call's hash beside
harmless args, then swaps those other args in, would run a call no one saw; a string no UTF-8
can hold (a lone surrogate) has no hash at all. Both are rows that can only be rejected, each
said in one line, and nothing runs."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from patch_tui.approvals.values import args_sha256, canonical_json
from tests.runtimekit import cli, hold_mark, mark_box, runs_in


def _sql(box: dict[str, Any], statement: str, *params: Any) -> None:
    with sqlite3.connect(box["store"]) as db:
        db.execute(statement, params)


def _listed(box: dict[str, Any], token: str) -> dict[str, Any]:
    listed = cli(box["env"], "inbox", "list", "--all", "--json")
    assert listed.returncode == 0 and "Traceback" not in listed.stderr, listed.stderr
    return next(row for row in json.loads(listed.stdout) if row["token"] == token)


@pytest.mark.slow
def test_args_stored_beside_another_calls_hash_cannot_be_approved_or_run(tmp_path: Path) -> None:
    box = mark_box(tmp_path)
    token = hold_mark(box, "harmless")
    evil = {"marker": str(box["marker"]), "text": "by the attacker"}
    _sql(box, "UPDATE actions SET args_sha256 = ? WHERE token = ?", args_sha256(evil), token)

    shown = cli(box["env"], "inbox", "show", token)
    assert '"harmless"' in shown.stdout and "approvable:    NO" in shown.stdout, shown.stdout
    assert _listed(box, token)["not_approvable"]["code"] == "damaged"
    approved = cli(
        box["env"], "inbox", "approve", token, "--yes", "--args-sha256", args_sha256(evil)
    )
    assert approved.returncode != 0 and "do not match the sha256" in approved.stderr
    assert "Traceback" not in approved.stderr and len(approved.stderr.splitlines()) == 1

    # The swap the hash was left for: nothing anyone signed names these args.
    _sql(
        box,
        "UPDATE actions SET args_json = ?, status = 'approved' WHERE token = ?",
        canonical_json(evil),
        token,
    )
    ran = cli(box["env"], "confirm", token)
    assert ran.returncode == 1 and "Traceback" not in ran.stderr, ran.stdout
    assert runs_in(box["marker"]) == []


@pytest.mark.slow
def test_a_lone_surrogate_in_args_is_one_damaged_row_never_a_traceback(tmp_path: Path) -> None:
    box = mark_box(tmp_path)
    other = hold_mark(box, "still listed")
    token = hold_mark(box, "x")
    marker = json.dumps(str(box["marker"]))
    text = '{"marker":' + marker + ',"text":"\\ud800"}'
    # Whatever hash the writer puts beside it: none is the sha256 of any UTF-8.
    _sql(box, "UPDATE actions SET args_json = ? WHERE token = ?", text, token)

    row = _listed(box, token)
    assert row["not_approvable"]["code"] == "damaged" and "lone surrogate" in row["damaged"]
    assert _listed(box, other)["not_approvable"] is None
    stored_sha = row["args_sha256"]
    approved = cli(box["env"], "inbox", "approve", token, "--yes", "--args-sha256", stored_sha)
    assert approved.returncode != 0 and "cannot be approved" in approved.stderr
    assert "Traceback" not in approved.stderr
    assert cli(box["env"], "inbox", "reject", token).returncode == 0
