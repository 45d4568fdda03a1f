"""`patch-tui inbox export` (issue 17 item 5): every action, its decision and outcome, refusals
included, as JSONL or CSV, through the real CLI."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest

from tests.runtimekit import approve_argv, cli, hold_mark, mark_box

pytestmark = pytest.mark.slow


def _env(tmp_path: Path) -> dict[str, Any]:
    return mark_box(tmp_path)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, Any]:
    return _env(tmp_path)


def _ok(r: Any) -> Any:
    assert r.returncode == 0, r.stderr
    return r


def _history(env: dict[str, Any]) -> dict[str, str]:
    """One action of each fate; returns label -> token."""
    e = env["env"]
    tokens = {}
    tokens["rejected"] = hold_mark(env, '=HYPERLINK("http://evil.example")')
    _ok(cli(e, "inbox", "reject", tokens["rejected"], "--reason", "looks like an injection"))
    tokens["edited"] = hold_mark(env, "proposed")
    _ok(
        cli(
            e,
            "inbox",
            "approve",
            tokens["edited"],
            "--args",
            json.dumps({"marker": str(env["marker"]), "text": "approved"}),
            "--note",
            "fixed it",
        )
    )
    _ok(cli(e, "confirm", tokens["edited"]))
    tokens["changed"] = hold_mark(env, "before change")
    _ok(cli(e, *approve_argv(e, tokens["changed"])))
    path = env["tools"] / "mark.py"
    path.write_text(path.read_text() + "\n# changed\n")
    assert cli(e, "confirm", tokens["changed"]).returncode == 1  # refused: tool_changed
    gid = (
        _ok(cli(e, "inbox", "allow", "mark", "--where", "text=granted*"))
        .stdout.split()[1]
        .rstrip(":")
    )
    r = _ok(
        cli(
            e,
            "run",
            "mark",
            "--args",
            json.dumps({"marker": str(env["marker"]), "text": "granted_call"}),
        )
    )
    tokens["granted"] = gid
    tokens["pending"] = hold_mark(env, "still waiting")
    del r
    return tokens


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], dict[str, str]]:
    """The history, made once (a dozen CLI runs) for the tests that only export it."""
    env = _env(tmp_path_factory.mktemp("audit"))
    return env, _history(env)


def test_jsonl_has_every_action_with_its_decision_and_outcome(
    history: tuple[dict[str, Any], dict[str, str]],
) -> None:
    env, tokens = history
    r = _ok(cli(env["env"], "inbox", "export"))
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert len(rows) == 5
    assert [row["created_at"] for row in rows] == sorted(row["created_at"] for row in rows)
    by = {row["token"]: row for row in rows}

    rej = by[tokens["rejected"]]
    assert (rej["decision"], rej["outcome"], rej["note"]) == (
        "rejected",
        "not_run",
        "looks like an injection",
    )
    assert rej["decided_by"].endswith("@cli") and rej["decided_at"]

    ed = by[tokens["edited"]]
    assert (ed["decision"], ed["outcome"], ed["edited"], ed["note"]) == (
        "approved",
        "executed",
        True,
        "fixed it",
    )
    assert ed["proposed_args"]["text"] == "proposed" and ed["args"]["text"] == "approved"
    assert ed["result"]["result"] == {"written": "approved"}
    assert [ev["event"] for ev in ed["events"]] == ["created", "approved", "claimed", "executed"]

    ch = by[tokens["changed"]]
    assert (ch["decision"], ch["outcome"]) == ("approved", "tool_changed")

    [granted] = [row for row in rows if row["grant"] is not None]
    assert granted["grant"] == int(tokens["granted"]) and granted["outcome"] == "executed"
    assert granted["decided_by"].startswith(f"grant {tokens['granted']} ")

    pend = by[tokens["pending"]]
    assert (pend["decision"], pend["outcome"], pend["decided_by"]) == ("pending", "pending", None)


def test_csv_is_one_row_per_action_and_defuses_formulas(
    history: tuple[dict[str, Any], dict[str, str]],
) -> None:
    env, tokens = history
    out = env["tmp"] / "audit.csv"
    r = _ok(cli(env["env"], "inbox", "export", "--format", "csv", "--out", str(out)))
    assert "5 actions written" in r.stderr
    rows = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"), newline="")))
    assert len(rows) == 5
    rej = next(row for row in rows if row["token"] == tokens["rejected"])
    assert rej["decision"] == "rejected" and rej["note"] == "looks like an injection"
    # The args cell is JSON text starting with `{`: harmless. A note or reason starting with `=`
    # would be a formula; the agent's text inside the args stays exact.
    assert json.loads(rej["args"])["text"].startswith("=HYPERLINK")
    ed = next(row for row in rows if row["token"] == tokens["edited"])
    assert ed["edited"] == "true" and json.loads(ed["proposed_args"])["text"] == "proposed"


def test_a_formula_in_a_reason_is_defused_in_csv(env: dict[str, Any]) -> None:
    token = hold_mark(env, "x")
    _ok(cli(env["env"], "inbox", "reject", token, "--reason", "=1+1"))
    r = _ok(cli(env["env"], "inbox", "export", "--format", "csv"))
    [row] = list(csv.DictReader(io.StringIO(r.stdout)))
    assert row["note"] == "'=1+1"
    jl = json.loads(_ok(cli(env["env"], "inbox", "export")).stdout)
    assert jl["note"] == "=1+1"  # the JSONL record is exact


def test_since_filters_by_creation_time(env: dict[str, Any]) -> None:
    hold_mark(env, "one")
    assert len(_ok(cli(env["env"], "inbox", "export", "--since", "1h")).stdout.splitlines()) == 1
    assert _ok(cli(env["env"], "inbox", "export", "--since", "2999-01-01")).stdout == ""
    assert (
        len(
            _ok(
                cli(env["env"], "inbox", "export", "--since", "2000-01-01T00:00Z")
            ).stdout.splitlines()
        )
        == 1
    )
    bad = cli(env["env"], "inbox", "export", "--since", "yesterday")
    assert (
        bad.returncode == 2
        and "expected a date or time" in bad.stderr
        and bad.stderr.count("\n") == 1
    )
