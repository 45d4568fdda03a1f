"""`patch-tui guard` end to end: the mcp SDK's client over stdio -> `patch-tui guard` in a
subprocess -> a real upstream MCP server over stdio (tests/fake_runtime.py, on the mcp SDK,
speaking the Patch runtime's confirmation protocol). People decide through the store from this
process (another process than guard's), as the inbox does."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from patch_tui.approvals import decisions
from patch_tui.approvals.store import Store
from tests.mcpkit import decide_here, guard_box, guard_session
from tests.runtimekit import runs_in

pytestmark = pytest.mark.slow


@pytest.fixture
def box(tmp_path: Path) -> dict[str, Any]:
    return guard_box(tmp_path)


guarded = guard_session


def data(result: Any) -> Any:
    return json.loads(result.content[0].text)


def upstream_calls(box: dict[str, Any]) -> list[dict[str, Any]]:
    path = box["tmp"] / "upstream.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def decide(box: dict[str, Any], token: str, verb: str = "approve", why: str | None = None) -> bool:
    return decide_here(box["store"], token, verb, why)


def action(box: dict[str, Any], token: str) -> Any:
    with Store(box["store"]) as store:
        return store.get(token)


async def test_pass_through_approve_reject_and_the_runtime_token_never_reaches_the_agent(
    box: dict[str, Any],
) -> None:
    marker = box["marker"]
    messages: list[Any] = []
    async with guarded(box, messages=messages) as client:
        # tools/list passes through unchanged: the upstream's own tools and meta tool.
        listed = {t.name: t for t in (await client.list_tools()).tools}
        assert {"patch_confirm_action", "echo", "mark", "note"} <= set(listed)
        assert listed["mark"].description == "Test tool mark."
        # A call it does not gate: the upstream's answer, as is.
        echo = await client.call_tool("echo", {"text": "hi"})
        assert not echo.is_error and data(echo) == {"echo": "hi"}

        # A human_confirm call: the runtime holds it; guard records it and answers its own.
        held = await client.call_tool("mark", {"marker": str(marker), "text": "one"})
        payload = data(held)
        assert payload["status"] == "confirmation_required" and payload["tool"] == "mark"
        assert "patch-tui inbox" in payload["instruction"]
        token = payload["confirmation_token"]
        pending = action(box, token)
        assert pending.status == "pending" and pending.args == {
            "marker": str(marker),
            "text": "one",
        }
        assert pending.version == "1.0.0" and pending.tool_path == str(box["tools"] / "mark.py")
        assert pending.reason.startswith("Tool is marked capabilities.human_confirm")
        upstream_token = pending.upstream_token
        assert upstream_token and upstream_token != token
        assert upstream_token not in held.content[0].text
        # The agent cannot use the runtime's token, nor confirm before a person decided.
        stolen = await client.call_tool(
            "patch_confirm_action", {"confirmation_token": upstream_token}
        )
        assert stolen.is_error and data(stolen)["status"] == "unknown_token"
        early = await client.call_tool("patch_confirm_action", {"confirmation_token": token})
        assert data(early)["status"] == "awaiting_approval" and runs_in(marker) == []
        assert [c["name"] for c in upstream_calls(box)] == ["echo", "mark"]  # nothing forwarded

        assert decide(box, token)
        ran = await client.call_tool("patch_confirm_action", {"confirmation_token": token})
        assert not ran.is_error and data(ran) == {"written": "one"}
        assert runs_in(marker) == ["one"]
        done = action(box, token)
        assert done.status == "executed" and done.result == {"written": "one"}
        again = await client.call_tool("patch_confirm_action", {"confirmation_token": token})
        assert again.is_error and data(again)["status"] == "already_used"
        assert runs_in(marker) == ["one"]

        # Rejected: never forwarded; the agent hears the person's reason.
        held = await client.call_tool("mark", {"marker": str(marker), "text": "two"})
        token2 = data(held)["confirmation_token"]
        assert decide(box, token2, "reject", "wrong file")
        answer = await client.call_tool("patch_confirm_action", {"confirmation_token": token2})
        assert answer.is_error and data(answer)["status"] == "rejected"
        assert data(answer)["reason"] == "wrong file"
        assert runs_in(marker) == ["one"]
        confirms = [c for c in upstream_calls(box) if c["name"] == "patch_confirm_action"]
        assert confirms == [
            {"name": "patch_confirm_action", "arguments": {"confirmation_token": upstream_token}}
        ]

        # A list-changed notification from the upstream reaches the agent.
        messages.clear()
        await client.call_tool("fake_notify", {})
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not messages:
            await anyio.sleep(0.05)
        assert "notifications/tools/list_changed" in [getattr(m, "method", None) for m in messages]


async def test_an_expired_upstream_token_is_renewed_with_the_same_call(box: dict[str, Any]) -> None:
    """The runtime forgets tokens after 60 s (1 s here); a person approving minutes later still
    gets the call run once, through a fresh upstream token for the same tool and args."""
    marker = box["marker"]
    async with guarded(box, extra_env={"FAKE_CONFIRM_TTL": "1"}) as client:
        held = await client.call_tool("mark", {"marker": str(marker), "text": "late"})
        token = data(held)["confirmation_token"]
        await anyio.sleep(1.3)
        assert decide(box, token)
        ran = await client.call_tool("patch_confirm_action", {"confirmation_token": token})
        assert not ran.is_error, ran.content[0].text
        assert data(ran) == {"written": "late"} and runs_in(marker) == ["late"]
        names = [c["name"] for c in upstream_calls(box)]
        # the first confirm (refused: expired), the same call again, its fresh token confirmed
        assert names == ["mark", "patch_confirm_action", "mark", "patch_confirm_action"]
        calls = upstream_calls(box)
        assert calls[2]["arguments"] == {"marker": str(marker), "text": "late"}
        assert calls[3]["arguments"] != calls[1]["arguments"]
        assert action(box, token).status == "executed"


async def test_a_tool_changed_after_approval_is_not_run(box: dict[str, Any]) -> None:
    marker = box["marker"]
    async with guarded(box) as client:
        held = await client.call_tool("mark", {"marker": str(marker), "text": "x"})
        token = data(held)["confirmation_token"]
        assert decide(box, token)
        tool = box["tools"] / "mark.py"
        tool.write_text(tool.read_text().replace('fh.write(text + "\\n")', 'fh.write("EVIL\\n")'))
        refused = await client.call_tool("patch_confirm_action", {"confirmation_token": token})
        assert refused.is_error and data(refused)["status"] == "tool_changed"
        assert runs_in(marker) == []
        assert "patch_confirm_action" not in [c["name"] for c in upstream_calls(box)]
        assert action(box, token).status == "failed"


async def test_concurrent_confirms_run_it_once(box: dict[str, Any]) -> None:
    """Two hosts (two guard processes, each with its own runtime) and two calls in each, all
    confirming one approved action at once: one run."""
    marker = box["marker"]
    async with guarded(box) as one, guarded(box) as two:
        held = await one.call_tool("mark", {"marker": str(marker), "text": "once"})
        token = data(held)["confirmation_token"]
        assert decide(box, token)
        answers: list[Any] = []

        async def confirm(client: Any) -> None:
            answers.append(
                await client.call_tool("patch_confirm_action", {"confirmation_token": token})
            )

        async with anyio.create_task_group() as tg:
            for client in (one, two, one, two):
                tg.start_soon(confirm, client)
        ok = [a for a in answers if not a.is_error]
        assert len(ok) == 1 and data(ok[0]) == {"written": "once"}
        assert sorted(data(a)["status"] for a in answers if a.is_error) == ["already_used"] * 3
        assert runs_in(marker) == ["once"]


async def test_an_upstream_that_dies(box: dict[str, Any]) -> None:
    marker = box["marker"]
    async with guarded(box) as client:
        held = await client.call_tool("mark", {"marker": str(marker), "text": "after"})
        token = data(held)["confirmation_token"]
        died = await client.call_tool("fake_exit", {})
        assert died.is_error
        assert decide(box, token)
        later = await client.call_tool("echo", {"text": "anyone?"})
        assert later.is_error and data(later)["error"] == "UpstreamGone"
        answer = await client.call_tool("patch_confirm_action", {"confirmation_token": token})
        assert answer.is_error and data(answer)["error"] == "UpstreamGone"
        assert runs_in(marker) == []
        assert action(box, token).status == "failed"  # recorded, never re-run by itself
    log = (box["tmp"] / "guard.log").read_text()
    assert "Traceback" not in log


async def test_hold_glob_and_destructive_hint_for_servers_without_confirmations(
    box: dict[str, Any],
) -> None:
    """A server that is not the Patch runtime: guard holds `--hold note` and the tools it marks
    destructiveHint (mark, in plain mode) before forwarding anything."""
    marker = box["marker"]
    async with guarded(box, extra_env={"FAKE_PLAIN": "1"}, options=("--hold", "no*")) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert "patch_confirm_action" in names  # added: the upstream has none
        for tool, text in (("note", "glob"), ("mark", "hint")):
            held = await client.call_tool(tool, {"marker": str(marker), "text": text})
            payload = data(held)
            assert payload["status"] == "confirmation_required", payload
            assert "patch-tui guard" in payload["reason"]
            assert tool not in [c["name"] for c in upstream_calls(box)]
            token = payload["confirmation_token"]
            early = await client.call_tool("patch_confirm_action", {"confirmation_token": token})
            assert data(early)["status"] == "awaiting_approval"
            assert decide(box, token)
            ran = await client.call_tool("patch_confirm_action", {"confirmation_token": token})
            assert not ran.is_error and data(ran) == {"written": text}
        assert runs_in(marker) == ["glob", "hint"]
        echo = await client.call_tool("echo", {"text": "free"})
        assert data(echo) == {"echo": "free"}


def test_usage_and_an_upstream_that_cannot_start(box: dict[str, Any]) -> None:
    from tests.runtimekit import cli

    bare = cli(box["env"], "guard")
    assert bare.returncode == 2 and "command after --" in bare.stderr
    missing = cli(box["env"], "guard", "--", str(box["tmp"] / "no-such-server"))
    assert missing.returncode == 1 and "cannot start the upstream server" in missing.stderr
    assert "Traceback" not in missing.stderr


async def test_edited_approvals(box: dict[str, Any]) -> None:
    """A call the runtime holds cannot be edited (its token carries the agent's args: the store
    refuses the edit, the action stays pending); a call guard holds itself can, and the upstream
    gets the approved args, the agent hears that they changed."""
    marker = box["marker"]
    async with guarded(box, options=("--hold", "note")) as client:
        held = await client.call_tool("mark", {"marker": str(marker), "text": "proposed"})
        token = data(held)["confirmation_token"]
        with Store(box["store"], actor="person@test") as store:
            with pytest.raises(ValueError, match="cannot be edited"):
                decisions.approve(store, token, args={"marker": str(marker), "text": "edited"})
            assert store.get(token).status == "pending"

        held = await client.call_tool("note", {"marker": str(marker), "text": "proposed"})
        token = data(held)["confirmation_token"]
        with Store(box["store"], actor="person@test") as store:
            assert decisions.approve(
                store, token, args={"marker": str(marker), "text": "approved"}
            ).ok
        ran = await client.call_tool("patch_confirm_action", {"confirmation_token": token})
        assert not ran.is_error, ran.content[0].text
        assert data(ran)["result"] == {"written": "approved"}
        assert data(ran)["args_changed"]["proposed"]["text"] == "proposed"
        assert runs_in(marker) == ["approved"]
        notes = [c["arguments"] for c in upstream_calls(box) if c["name"] == "note"]
        assert notes == [{"marker": str(marker), "text": "approved"}]


async def test_a_standing_grant_confirms_at_once(box: dict[str, Any]) -> None:
    from patch_tui.approvals import grants

    marker = box["marker"]
    from patch_tui.format import toolfile

    sha = toolfile.parse_bytes((box["tools"] / "mark.py").read_bytes()).sha256
    with Store(box["store"], actor="person@test") as store:
        pattern = grants.parse_pattern(f"marker={marker}")
        grants.create(store, "mark", "1.0.0", sha, [pattern], 600)
    async with guarded(box) as client:
        ran = await client.call_tool("mark", {"marker": str(marker), "text": "granted"})
        assert not ran.is_error and data(ran) == {"written": "granted"}
        other = await client.call_tool("mark", {"marker": str(marker) + ".x", "text": "no"})
        assert data(other)["status"] == "confirmation_required"  # outside the grant's pattern
    assert runs_in(marker) == ["granted"]


TAINT = "a string the agent read from a tool's output"  # 16+ characters: taint-tracked


async def test_approving_tainted_input_never_runs_a_human_confirm_tool_by_itself(
    box: dict[str, Any],
) -> None:
    """The attack: data from a tool's output flows into `mark` (human_confirm). The runtime holds
    it as tainted_input (its taint gate comes first); confirming that token upstream skips the
    runtime's human_confirm gate too. So one approval of the taint must not run the irreversible
    call: guard opens the human_confirm action (a second inbox item, a new token), and only its
    approval runs the call, once."""
    marker = box["marker"]
    async with guarded(box) as client:
        assert data(await client.call_tool("echo", {"text": TAINT})) == {"echo": TAINT}
        held = await client.call_tool("mark", {"marker": str(marker), "text": TAINT})
        first = data(held)
        assert first["status"] == "confirmation_required" and first["kind"] == "tainted_input"
        assert first["tainted_inputs"] == [{"inputName": "text", "matchedTools": ["echo"]}]
        taint_token = first["confirmation_token"]
        assert decide(box, taint_token)  # the person approves the taint only

        answer = await client.call_tool("patch_confirm_action", {"confirmation_token": taint_token})
        second = data(answer)
        assert not answer.is_error, second
        assert second["status"] == "confirmation_required" and second["kind"] == "human_confirm"
        assert second["tool"] == "mark" and second["confirmation_token"] != taint_token
        assert runs_in(marker) == []  # the irreversible call did not run
        assert "patch_confirm_action" not in [c["name"] for c in upstream_calls(box)]
        hc_token = second["confirmation_token"]
        taint = action(box, taint_token)
        assert taint.status == "executed"
        assert taint.result == {"status": "passed_to_human_confirm", "confirmation_token": hc_token}
        pending = action(box, hc_token)
        assert pending.status == "pending" and pending.kind == "human_confirm"
        assert pending.args == {"marker": str(marker), "text": TAINT}
        assert pending.details["after_tainted_input"] == taint_token
        assert pending.upstream_token == taint.upstream_token

        # The taint's token is spent; the new one waits for the person.
        spent = await client.call_tool("patch_confirm_action", {"confirmation_token": taint_token})
        assert data(spent)["status"] == "already_used" and runs_in(marker) == []
        early = await client.call_tool("patch_confirm_action", {"confirmation_token": hc_token})
        assert data(early)["status"] == "awaiting_approval" and runs_in(marker) == []

        assert decide(box, hc_token)  # the person approves the irreversible call itself
        ran = await client.call_tool("patch_confirm_action", {"confirmation_token": hc_token})
        assert not ran.is_error and data(ran) == {"written": TAINT}
        assert runs_in(marker) == [TAINT]
        assert action(box, hc_token).status == "executed"
        again = await client.call_tool("patch_confirm_action", {"confirmation_token": hc_token})
        assert data(again)["status"] == "already_used" and runs_in(marker) == [TAINT]


async def test_a_rejected_second_approval_runs_nothing(box: dict[str, Any]) -> None:
    marker = box["marker"]
    async with guarded(box) as client:
        await client.call_tool("echo", {"text": TAINT})
        held = await client.call_tool("mark", {"marker": str(marker), "text": TAINT})
        taint_token = data(held)["confirmation_token"]
        assert decide(box, taint_token)
        second = data(
            await client.call_tool("patch_confirm_action", {"confirmation_token": taint_token})
        )
        assert decide(box, second["confirmation_token"], "reject", "not that file")
        no = await client.call_tool(
            "patch_confirm_action", {"confirmation_token": second["confirmation_token"]}
        )
        assert data(no)["status"] == "rejected" and data(no)["reason"] == "not that file"
    assert runs_in(marker) == []


async def test_tainted_input_to_a_tool_that_is_not_human_confirm_needs_one_approval(
    box: dict[str, Any],
) -> None:
    marker = box["marker"]
    async with guarded(box) as client:
        await client.call_tool("echo", {"text": TAINT})
        held = await client.call_tool("note", {"marker": str(marker), "text": TAINT})
        token = data(held)["confirmation_token"]
        assert data(held)["kind"] == "tainted_input"
        assert decide(box, token)
        ran = await client.call_tool("patch_confirm_action", {"confirmation_token": token})
        assert not ran.is_error and data(ran) == {"written": TAINT}
    assert runs_in(marker) == [TAINT]


async def test_a_taint_approval_for_a_tool_guard_cannot_read_asks_for_the_second_too(
    box: dict[str, Any],
) -> None:
    """Without the tool file guard cannot tell whether the tool is human_confirm: it assumes it
    is (the runtime would skip that gate on confirm), so the person approves the call itself."""
    marker = box["marker"]
    elsewhere = box["tmp"] / "elsewhere"
    (box["root"]).rename(elsewhere)
    box["root"].mkdir()  # guard's toolbox: empty; the upstream's: the real one
    async with guarded(box, extra_env={"FAKE_TOOLBOX": str(elsewhere)}) as client:
        await client.call_tool("echo", {"text": TAINT})
        held = await client.call_tool("note", {"marker": str(marker), "text": TAINT})
        token = data(held)["confirmation_token"]
        assert decide(box, token)
        second = data(await client.call_tool("patch_confirm_action", {"confirmation_token": token}))
        assert second["status"] == "confirmation_required" and second["kind"] == "human_confirm"
        assert "cannot read" in second["reason"]
        assert runs_in(marker) == []
        assert decide(box, second["confirmation_token"])
        ran = await client.call_tool(
            "patch_confirm_action", {"confirmation_token": second["confirmation_token"]}
        )
        assert data(ran) == {"written": TAINT}
    assert runs_in(marker) == [TAINT]


async def test_a_renewed_token_for_a_gate_the_person_did_not_pass_is_not_confirmed(
    box: dict[str, Any],
) -> None:
    """An approved human_confirm call whose upstream token expired is made again; when the
    runtime now holds it for tainted input (the agent read the same text from a tool since),
    confirming that fresh token would skip the taint gate: it becomes a new inbox item."""
    marker = box["marker"]
    async with guarded(box, extra_env={"FAKE_CONFIRM_TTL": "1"}) as client:
        held = await client.call_tool("mark", {"marker": str(marker), "text": TAINT})
        token = data(held)["confirmation_token"]
        assert data(held)["kind"] == "human_confirm"
        await client.call_tool("echo", {"text": TAINT})  # the text is now a tool's output
        await anyio.sleep(1.5)
        assert decide(box, token)
        answer = data(await client.call_tool("patch_confirm_action", {"confirmation_token": token}))
        assert answer["status"] == "confirmation_required" and answer["kind"] == "tainted_input"
        assert answer["confirmation_token"] != token
        assert runs_in(marker) == []
        confirms = [c for c in upstream_calls(box) if c["name"] == "patch_confirm_action"]
        assert len(confirms) == 1  # the expired token only; the fresh one was never confirmed


async def test_a_tool_swapped_after_guards_check_is_caught_by_the_runtimes_audit(
    box: dict[str, Any],
) -> None:
    """The file changes after guard's check, before the runtime reads it (FAKE_SWAP does it at
    the upstream's confirm). Guard cannot stop that run; it reads the runtime's audit record,
    sees a source hash other than the approved one, withholds the output and records it."""
    marker = box["marker"]
    evil = box["tmp"] / "evil.py"
    tool = box["tools"] / "mark.py"
    evil.write_text(tool.read_text().replace('fh.write(text + "\\n")', 'fh.write("EVIL\\n")'))
    async with guarded(box, extra_env={"FAKE_SWAP": str(evil)}) as client:
        held = await client.call_tool("mark", {"marker": str(marker), "text": "one"})
        token = data(held)["confirmation_token"]
        assert decide(box, token)
        answer = await client.call_tool("patch_confirm_action", {"confirmation_token": token})
        payload = data(answer)
        assert answer.is_error and payload["status"] == "ran_other_source", payload
        assert "written" not in answer.content[0].text  # the output is withheld
        assert runs_in(marker) == ["EVIL"]  # it did run: detected, not prevented
        done = action(box, token)
        assert done.status == "failed" and done.result["run_id"] == payload["run_id"]
        with Store(box["store"]) as store:
            failed = [e for e in store.events(token) if e.event == "failed"]
        assert failed[0].detail["source_sha256"] == payload["ran_source_sha256"]
        assert payload["approved_source_sha256"] != payload["ran_source_sha256"]
    assert "its output is withheld" in (box["tmp"] / "guard.log").read_text()


async def test_a_confirmed_run_records_the_runtimes_run_id_and_source(box: dict[str, Any]) -> None:
    marker = box["marker"]
    async with guarded(box) as client:
        held = await client.call_tool("mark", {"marker": str(marker), "text": "one"})
        token = data(held)["confirmation_token"]
        assert decide(box, token)
        ran = await client.call_tool("patch_confirm_action", {"confirmation_token": token})
        assert data(ran) == {"written": "one"}
    with Store(box["store"]) as store:
        executed = [e for e in store.events(token) if e.event == "executed"][0]
    record = json.loads((box["root"] / "runs" / f"{executed.detail['run_id']}.json").read_text())
    assert executed.detail["source_sha256"] == record["tool"]["source_sha256"]
