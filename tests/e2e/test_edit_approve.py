"""Edit, then approve (issue 17 item 1), headless: `patch-tui inbox approve TOKEN --args JSON`."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from patch_tui.approvals import decisions
from patch_tui.approvals.gate import Gate
from patch_tui.approvals.store import Store, args_sha256
from tests.runtimekit import cli, hold_mark, mark_box, runs_in


@pytest.fixture
def env(tmp_path: Path) -> dict[str, Any]:
    return mark_box(tmp_path)


def _listed(env: dict[str, Any], token: str) -> dict[str, Any]:
    r = cli(env["env"], "inbox", "list", "--json", "--all")
    return next(a for a in json.loads(r.stdout) if a["token"] == token)


@pytest.mark.slow
def test_an_edited_approval_runs_the_edited_args_and_tells_the_agent(env: dict[str, Any]) -> None:
    token = hold_mark(env, "rm -rf /")
    edited = {"marker": str(env["marker"]), "text": "rm -rf ./build"}
    r = cli(
        env["env"], "inbox", "approve", token, "--args", json.dumps(edited), "--note", "narrowed"
    )
    assert r.returncode == 0, r.stderr
    assert 'text: "rm -rf /" -> "rm -rf ./build"' in r.stdout

    listed = _listed(env, token)
    assert listed["status"] == "approved"
    assert listed["args"] == edited
    assert listed["proposed_args"] == {"marker": str(env["marker"]), "text": "rm -rf /"}

    r = cli(env["env"], "confirm", token)
    assert r.returncode == 0, r.stderr
    answer = json.loads(r.stdout)
    assert answer["result"] == {"written": "rm -rf ./build"}
    note = answer["args_changed"]
    assert note["proposed"]["text"] == "rm -rf /" and note["approved"]["text"] == "rm -rf ./build"
    assert note["changes"] == [
        {"input": "text", "change": "changed", "proposed": "rm -rf /", "approved": "rm -rf ./build"}
    ]
    assert "changed the arguments" in note["message"]
    assert runs_in(env["marker"]) == ["rm -rf ./build"]  # never the proposed args

    with Store(env["store"]) as store:
        [ev] = [e for e in store.events(token) if e.event == "approved"]
        assert ev.detail["edited"] is True
        assert ev.detail["args_sha256"] == args_sha256(edited)
        assert ev.detail["proposed_args_sha256"] == args_sha256(listed["proposed_args"])


@pytest.mark.slow
@pytest.mark.parametrize(
    ("edit", "needle", "code"),
    [
        ('{"marker": "m", "text": 5}', "text must be a string, not 5", 2),
        ('{"marker": "m"}', "needs the input 'text'", 2),
        ('{"marker": "m", "text": "x", "extra": 1}', "has no input 'extra'", 2),
        ('{"marker": "m", "text": null}', "cannot be null", 2),
        ("[1, 2]", "must be a JSON object", 2),
        ('{"marker": ', "not valid JSON", 2),
    ],
)
def test_a_bad_edit_is_refused_in_one_line_and_the_action_stays_pending(
    env: dict[str, Any], edit: str, needle: str, code: int
) -> None:
    token = hold_mark(env, "proposed")
    r = cli(env["env"], "inbox", "approve", token, "--args", edit)
    assert r.returncode == code
    assert needle in r.stderr and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    listed = _listed(env, token)
    assert listed["status"] == "pending" and listed["proposed_args"] is None
    assert listed["args"]["text"] == "proposed"


@pytest.mark.slow
def test_an_edit_is_refused_once_the_tool_changed(env: dict[str, Any]) -> None:
    token = hold_mark(env, "proposed")
    path = env["tools"] / "mark.py"
    path.write_text(path.read_text() + "\n# changed\n")
    r = cli(
        env["env"], "inbox", "approve", token, "--args", json.dumps({"marker": "m", "text": "x"})
    )
    assert r.returncode == 1 and "changed (or is gone) since the call was held" in r.stderr
    assert _listed(env, token)["status"] == "pending"


@pytest.mark.slow
def test_an_edit_of_a_decided_action_says_why_not(env: dict[str, Any]) -> None:
    token = hold_mark(env, "proposed")
    assert cli(env["env"], "inbox", "reject", token, "--reason", "no").returncode == 0
    r = cli(
        env["env"], "inbox", "approve", token, "--args", json.dumps({"marker": "m", "text": "x"})
    )
    assert r.returncode == 1 and "already rejected" in r.stderr


# -- property: an edited approval never runs the proposed args ---------------------------------

texts = st.text(
    alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), min_size=1, max_size=20
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(proposed=texts, approved=texts)
def test_an_edited_approval_never_runs_the_proposed_args(
    env: dict[str, Any], proposed: str, approved: str
) -> None:
    marker = env["marker"]
    marker.unlink(missing_ok=True)
    # A fresh store per example: an earlier example's output would make this call tainted.
    db = Path(tempfile.mkdtemp(dir=env["store"].parent)) / "store.sqlite3"
    with Store(db, actor="agent") as store:
        gate = Gate(store, workspace=marker.parent)
        held = gate.call(env["tools"] / "mark.py", {"marker": str(marker), "text": proposed})
        assert held.status == "confirmation_required" and held.action is not None
        token = held.action.token
    with Store(db, actor="person") as store:
        decision = decisions.approve(store, token, args={"marker": str(marker), "text": approved})
        assert decision.ok
    with Store(db, actor="agent") as store:
        outcome = Gate(store, workspace=marker.parent).confirm_action(token)
    assert outcome.status == "ok"
    assert runs_in(marker) == [approved]
    if proposed != approved:
        assert outcome.payload["args_changed"]["proposed"]["text"] == proposed
    else:
        assert outcome.payload == {"written": approved}  # no edit: the plain result


@pytest.mark.slow
def test_a_call_held_by_guard_for_an_upstream_server_cannot_be_edited(env: dict[str, Any]) -> None:
    """The upstream runs the args it was given when its token is confirmed: an edit would be
    recorded as approved and never be what runs."""
    with Store(env["store"], actor="guard") as store:
        held = store.create_pending(
            "human_confirm",
            "send_mail",
            "1.0.0",
            "c" * 64,
            {"to": "all@corp"},
            "upstream held it",
            upstream_token="up-123",
            details={"held_by": "guard"},
        )
        with pytest.raises(ValueError, match="cannot be edited"):
            decisions.approve(store, held.token, args={"to": "me@corp"})
    r = cli(env["env"], "inbox", "approve", held.token, "--args", '{"to": "me@corp"}')
    assert r.returncode == 1 and "held by `patch-tui guard`" in r.stderr
    listed = _listed(env, held.token)
    assert listed["status"] == "pending" and listed["args"] == {"to": "all@corp"}
