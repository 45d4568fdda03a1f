"""patch_confirm_action waits for the person, in `serve` and in `guard`: one call, sent before
anyone decided, completes with the decision, with MCP progress notifications meanwhile (the
client sent a progress token: the SDK does when given a progress callback)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from patch_tui.approvals import decisions
from patch_tui.approvals.store import Store
from patch_tui.settings.model import Settings
from tests.mcpkit import guard_box, guard_session, serve_session
from tests.runtimekit import runs_in

pytestmark = pytest.mark.slow


@pytest.fixture
def box(tmp_path: Path) -> dict[str, Any]:
    return guard_box(tmp_path)  # serve's is built below from the same files


WAIT = "40"


def test_the_default_wait_is_below_common_host_timeouts() -> None:
    assert 0 < Settings.model_construct().confirm_wait < 60


def _data(result: Any) -> Any:
    return json.loads(result.content[0].text)


async def _confirm_while_a_person_decides(
    client: Any, store_path: Path, marker: Path, verb: str
) -> tuple[Any, list[tuple[float, float | None, str | None]]]:
    held = await client.call_tool("mark", {"marker": str(marker), "text": "waited"})
    token = _data(held)["confirmation_token"]
    before = runs_in(marker)
    progress: list[tuple[float, float | None, str | None]] = []
    answer: list[Any] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total, message))

    async def confirm() -> None:
        answer.append(
            await client.call_tool(
                "patch_confirm_action", {"confirmation_token": token}, progress_callback=on_progress
            )
        )

    async with anyio.create_task_group() as tg:
        tg.start_soon(confirm)
        # The person decides only after the call is waiting (its first progress arrived).
        with anyio.fail_after(20):
            while not progress:
                await anyio.sleep(0.05)
        assert not answer and runs_in(marker) == before
        with Store(store_path, actor="person@test") as store:
            if verb == "approve":
                assert decisions.approve(store, token).ok
            else:
                assert decisions.reject(store, token, reason="not today").ok
    return answer[0], progress


@pytest.mark.parametrize("server", ["serve", "guard"])
async def test_one_confirm_call_completes_when_the_person_decides(
    box: dict[str, Any], server: str
) -> None:
    env = {"PATCH_TUI_CONFIRM_WAIT": WAIT}
    marker = box["marker"]
    if server == "guard":
        connect = guard_session(box, extra_env=env)
    else:
        serve_box = {**box, "env": {**box["env"], "PATCH_TUI_TOOLBOX": str(box["root"])}}
        connect = serve_session(serve_box, extra_env=env)
    async with connect as client:
        ran, progress = await _confirm_while_a_person_decides(
            client, box["store"], marker, "approve"
        )
        assert not ran.is_error, ran.content[0].text
        assert _data(ran) == {"written": "waited"} and runs_in(marker) == ["waited"]
        assert progress[0][1] == float(WAIT) and "patch-tui inbox" in (progress[0][2] or "")
        assert [p[0] for p in progress] == sorted(p[0] for p in progress)

        rejected, _ = await _confirm_while_a_person_decides(client, box["store"], marker, "reject")
        assert rejected.is_error and _data(rejected)["status"] == "rejected"
        assert _data(rejected)["reason"] == "not today" and runs_in(marker) == ["waited"]


async def test_nobody_decides_within_the_wait(box: dict[str, Any]) -> None:
    async with guard_session(box, extra_env={"PATCH_TUI_CONFIRM_WAIT": "1"}) as client:
        held = await client.call_tool("mark", {"marker": str(box["marker"]), "text": "no"})
        token = _data(held)["confirmation_token"]
        answer = await client.call_tool("patch_confirm_action", {"confirmation_token": token})
        assert not answer.is_error and _data(answer)["status"] == "awaiting_approval"
        assert runs_in(box["marker"]) == []
