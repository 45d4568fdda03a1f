"""approvals.approvable: what no one can have seen is never approved, by any path (issue 24),
and guard's recovery of a held call's exact args from what the agent sent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from patch_tui.approvals import approvable, decisions, grants
from patch_tui.approvals.store import Store
from patch_tui.mcp_server.guard_protocol import held_args, js_summary

EXFIL = "exfil@attacker.example"
BODY = "b" * 240


@pytest.fixture
def store(tmp_path: Path):
    with Store(tmp_path / "store.sqlite3", actor="person@test") as s:
        yield s


def _hold(store: Store, args: dict, **details) -> object:
    return store.create_pending(
        "human_confirm", "send_mail", "1.0.0", "a" * 64, args, "irreversible", details=details
    )


def test_unknown_args_are_refused_by_the_store_and_by_a_grant(store: Store) -> None:
    action = _hold(store, {}, args_known=False, args_unknown="no step matches")
    problem = approvable.check(action)
    assert problem is not None and problem.code == "args_unknown"
    assert "no step matches" in problem.why
    decision = decisions.approve(store, action.token)
    assert (decision.ok, decision.code) == (False, "args_unknown")
    # A standing grant for every call of the tool approves nothing it cannot show.
    grants.create(store, "send_mail", "1.0.0", "a" * 64, [], 3600)
    assert grants.apply(store, store.get(action.token)) is None
    assert store.get(action.token).status == "pending"
    assert decisions.reject(store, action.token, reason="unknown").ok


def test_args_past_the_display_limit_are_refused(store: Store) -> None:
    action = _hold(store, {"body": "x" * (approvable.ARGS_DISPLAY_LIMIT + 1), "to": EXFIL})
    assert approvable.check(action).code == "args_too_long"
    assert decisions.approve(store, action.token).code == "args_too_long"
    fits = _hold(store, {"body": "x" * 100, "to": EXFIL})
    assert approvable.check(fits) is None and decisions.approve(store, fits.token).ok


def test_the_display_limit_counts_the_canonical_json_to_the_character() -> None:
    """The size an approver must be able to read is the canonical JSON's (sorted keys, no
    spaces, UTF-8 kept), exactly: one character under, at, and over the limit; and args that
    are no plain JSON are refused as damaged, never a traceback."""
    from dataclasses import replace

    from patch_tui.approvals.values import (
        Action,
        ActionKind,
        ActionStatus,
        args_sha256,
        canonical_json,
    )

    base = Action(
        token="t", kind=ActionKind.HUMAN_CONFIRM, tool="send_mail", version="1", source_sha256="a",
        args={}, args_sha256="", reason="", status=ActionStatus.PENDING, created_at="",
        expires_at="",
    )  # fmt: skip
    limit = approvable.ARGS_DISPLAY_LIMIT
    shell = {"z": [1, 2.5, None, True], "é": {"b": "\u202e", "a": "caf\u00e9"}, "body": ""}
    room = limit - len(canonical_json(shell))
    for extra, ok in ((-1, True), (0, True), (1, False)):
        args = {**shell, "body": "\u00e9" * (room + extra)}
        assert len(canonical_json(args)) == limit + extra
        problem = approvable.check(replace(base, args=args, args_sha256=args_sha256(args)))
        assert (problem is None) == ok, extra
        if not ok:
            assert problem is not None and problem.code == "args_too_long"
    looped: dict[str, object] = {}
    looped["self"] = looped
    for bad in ({"n": float("nan")}, {"o": object()}, looped):
        problem = approvable.check(replace(base, args=bad))
        assert problem is not None and problem.code == "damaged", bad


def test_a_changed_tool_file_is_said_only_when_the_caller_compared_it(store: Store) -> None:
    action = _hold(store, {"to": EXFIL})
    assert approvable.check(action) is None
    assert approvable.check(action, "a" * 64) is None
    assert approvable.check(action, None) is None  # no file found: not compared
    assert approvable.check(action, "b" * 64).code == "tool_changed"


def _held(args: dict) -> dict:
    return {"status": "confirmation_required", "args_summary": js_summary(args)}


def test_guard_takes_nested_args_from_the_step_the_agent_sent() -> None:
    sent = {"body": BODY, "to": EXFIL}
    steps = [
        {"id": "note", "tool": "note", "args": {"text": "x"}},
        {"id": "mail", "tool": "send_mail", "args": sent},
    ]
    summary = js_summary(sent)
    assert summary.endswith("\u2026") and EXFIL not in summary  # what the runtime shows
    exact, why = held_args(_held(sent), "send_mail", "patch_compose", {"steps": steps})
    assert (exact, why) == (sent, "")


@pytest.mark.parametrize(
    ("steps", "held", "said"),
    [
        # the upstream holds other args than any step sent
        (
            [{"id": "m", "tool": "send_mail", "args": {"to": "boss@corp"}}],
            {"to": EXFIL},
            "none of the steps that were sent",
        ),
        # no step calls the held tool
        ([{"id": "m", "tool": "note", "args": {"to": EXFIL}}], {"to": EXFIL}, "no step"),
        # two steps with different args fit a summary cut before they differ
        (
            [
                {"id": "a", "tool": "send_mail", "args": {"body": BODY, "to": "boss@corp"}},
                {"id": "b", "tool": "send_mail", "args": {"body": BODY, "to": EXFIL}},
            ],
            {"body": BODY, "to": EXFIL},
            "two send_mail steps",
        ),
        # the runtime filled in an earlier step's result
        (
            [{"id": "m", "tool": "send_mail", "args": {"to": "$lookup.address"}}],
            {"to": EXFIL},
            "refer to earlier steps",
        ),
    ],
)
def test_guard_says_why_when_it_cannot_know_the_args(steps, held, said) -> None:
    exact, why = held_args(_held(held), "send_mail", "patch_compose", {"steps": steps})
    assert exact is None and said in why, why


def test_the_step_the_upstream_paused_at_picks_between_steps_of_one_tool() -> None:
    from patch_tui.mcp_server.guard_protocol import compose_step_ids

    first = {"body": BODY, "to": "boss@corp"}
    second = {"body": BODY, "to": EXFIL}
    steps = [
        {"id": "a", "tool": "send_mail", "args": first},
        {"id": "b", "tool": "send_mail", "args": second},
    ]
    held = {**_held(second), "confirmation_token": "T" * 32, "tool": "send_mail"}
    answer = {"status": "paused", "steps": [{"id": "b", "result": held}], "paused": held}
    assert compose_step_ids(answer) == {"T" * 32: "b"}
    call = {"steps": steps}
    assert held_args(held, "send_mail", "patch_compose", call, step_id="b") == (second, "")
    # Named the wrong step, the summary must still fit it: here it does (the cut hides the `to`),
    # so the step's own args are taken, the ones that step sent.
    assert held_args(held, "send_mail", "patch_compose", call, step_id="a") == (first, "")
    # Without the step, both fit the cut summary: not known.
    unknown, why = held_args(held, "send_mail", "patch_compose", call)
    assert unknown is None and "two send_mail steps" in why


def test_a_direct_call_and_patch_run_tool_are_what_was_sent() -> None:
    args = {"to": EXFIL}
    assert held_args(_held(args), "send_mail", "send_mail", args) == (args, "")
    run = {"name": "send_mail", "args": args}
    assert held_args(_held(args), "send_mail", "patch_run_tool", run) == (args, "")
    other, why = held_args(_held(args), "send_mail", "read_page", {"url": "x"})
    assert other is None and json.dumps(why)
