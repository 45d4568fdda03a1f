"""`serve` speaks the runtime's whole meta surface: each meta tool through the mcp SDK's client
over stdio against `patch-tui serve` in a subprocess (generation against the fake Messages API
on 127.0.0.1)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fake_anthropic import FakeAnthropic, Reply

from patch_tui.approvals import decisions
from patch_tui.approvals.store import Store
from patch_tui.generate import engine as g
from tests.mcpkit import RUNTIME_META, serve_box, serve_session
from tests.runtimekit import runs_in, write_tool

pytestmark = pytest.mark.slow


@pytest.fixture
def box(tmp_path: Path) -> dict[str, Any]:
    return serve_box(tmp_path)  # a toolbox, a store, the env


connect = serve_session

FLAKY_BODY = """
def main(counter: str) -> dict:
    with open(counter, "a+") as fh:
        fh.seek(0)
        seen = len(fh.read().splitlines())
        fh.write("x\\n")
    if seen == 0:
        raise RuntimeError("first attempt fails")
    return {"attempt": seen + 1}
"""


def data(result: Any) -> Any:
    return json.loads(result.content[0].text)


def approve(box: dict[str, Any], token: str) -> None:
    with Store(box["store"], actor="person@test") as store:
        assert decisions.approve(store, token).ok


async def test_listing_and_run_tool(box: dict[str, Any]) -> None:
    marker = box["marker"]
    async with connect(box) as client:
        listed = (await client.list_tools()).tools
        names = [t.name for t in listed]
        assert names[:9] == RUNTIME_META  # the runtime's meta tools, in its order, first
        schemas = {t.name: t.input_schema for t in listed}
        assert schemas["patch_run_tool"]["required"] == ["name"]
        assert schemas["patch_compose"]["properties"]["steps"]["items"]["required"] == [
            "id",
            "tool",
        ]
        assert schemas["patch_replay"]["required"] == ["run_id"]
        assert schemas["patch_generate_tool"]["required"] == ["description"]

        ran = await client.call_tool(
            "patch_run_tool", {"name": "echo", "args": {"text": "via run"}}
        )
        assert not ran.is_error and data(ran) == {"echo": "via run"}
        held = await client.call_tool(
            "patch_run_tool", {"name": "mark", "args": {"marker": str(marker), "text": "r"}}
        )
        assert data(held)["status"] == "confirmation_required" and runs_in(marker) == []
        missing = await client.call_tool("patch_run_tool", {"name": "nope", "args": {}})
        assert missing.is_error and data(missing) == {
            "error": "ToolNotFoundError",
            "message": 'Tool "nope" not found in toolbox.',
        }
        meta = await client.call_tool("patch_run_tool", {"name": "patch_confirm_action"})
        assert meta.is_error and data(meta)["error"] == "ToolNotFoundError"
        bad = await client.call_tool("patch_run_tool", {"args": {}})
        assert bad.is_error and data(bad) == {
            "error": "PatchError",
            "message": "Missing required string argument: name",
        }

        # auth: no registry here, said plainly; nothing pretends to sign in.
        register = await client.call_tool("patch_auth_register", {})
        assert register.is_error and "no tool registry" in data(register)["message"]
        status = await client.call_tool("patch_auth_status", {})
        assert not status.is_error
        assert {k: v for k, v in data(status).items() if k != "message"} == {
            "registry_url": None,
            "read_enabled": False,
            "contribute_enabled": False,
            "has_contribute_token": False,
        }


async def test_compose(box: dict[str, Any]) -> None:
    marker = box["marker"]
    write_tool(
        box["tools"], "flaky", FLAKY_BODY, inputs=[{"name": "counter"}], filesystem="read-write"
    )
    async with connect(box) as client:
        seq = await client.call_tool(
            "patch_compose",
            {
                "steps": [
                    {"id": "a", "tool": "echo", "args": {"text": "hi"}},
                    {"id": "b", "tool": "echo", "args": {"text": "$a.echo"}},
                    {"id": "c", "tool": "echo", "args": {"text": "say $b.echo and $a"}},
                ]
            },
        )
        out = data(seq)
        assert not seq.is_error and out["status"] == "ok"
        assert out["results"] == {
            "a": {"echo": "hi"},
            "b": {"echo": "hi"},
            "c": {"echo": 'say hi and {"echo":"hi"}'},
        }
        assert [s["status"] for s in out["steps"]] == ["ok"] * 3
        assert set(out["steps"][0]) == {"id", "tool", "status", "result", "attempts", "duration_ms"}

        # A held step pauses the workflow: nothing after it runs; its confirmation is the inbox's.
        paused = data(
            await client.call_tool(
                "patch_compose",
                {
                    "steps": [
                        {"id": "first", "tool": "echo", "args": {"text": "before"}},
                        {
                            "id": "hold",
                            "tool": "mark",
                            "args": {"marker": str(marker), "text": "c"},
                        },
                        {"id": "after", "tool": "echo", "args": {"text": "never"}},
                    ]
                },
            )
        )
        assert paused["status"] == "paused" and [s["id"] for s in paused["steps"]] == [
            "first",
            "hold",
        ]
        assert paused["paused"]["status"] == "confirmation_required" and runs_in(marker) == []
        token = paused["paused"]["confirmation_token"]
        approve(box, token)
        ran = await client.call_tool("patch_confirm_action", {"confirmation_token": token})
        assert data(ran) == {"written": "c"} and runs_in(marker) == ["c"]

        # Errors: abort (default) stops; continue goes on (partial); retries re-run the step.
        aborted = data(
            await client.call_tool(
                "patch_compose",
                {
                    "steps": [
                        {"id": "x", "tool": "echo", "args": {"nope": 1}},
                        {"id": "y", "tool": "echo", "args": {"text": "y"}},
                    ]
                },
            )
        )
        assert aborted["status"] == "failed" and [s["id"] for s in aborted["steps"]] == ["x"]
        assert "no input 'nope'" in aborted["steps"][0]["error"]["message"]
        partial = data(
            await client.call_tool(
                "patch_compose",
                {
                    "on_error": "continue",
                    "steps": [
                        {"id": "x", "tool": "missing_tool"},
                        {"id": "y", "tool": "echo", "args": {"text": "y"}},
                    ],
                },
            )
        )
        assert partial["status"] == "partial" and partial["results"] == {"y": {"echo": "y"}}
        assert partial["steps"][0]["error"]["name"] == "ToolNotFoundError"
        counter = (
            box["tmp"] / "ws" / "counter.txt"
        )  # the workspace: read-write tools write only there
        retried = data(
            await client.call_tool(
                "patch_compose",
                {
                    "steps": [
                        {
                            "id": "f",
                            "tool": "flaky",
                            "args": {"counter": str(counter)},
                            "retries": 2,
                        }
                    ]
                },
            )
        )
        assert retried["status"] == "ok" and retried["steps"][0]["attempts"] == 2
        assert retried["results"]["f"] == {"attempt": 2}

        # Parallel: independent steps, references refused before anything runs.
        par = data(
            await client.call_tool(
                "patch_compose",
                {
                    "parallel": True,
                    "steps": [
                        {"id": "p", "tool": "echo", "args": {"text": "1"}},
                        {"id": "q", "tool": "echo", "args": {"text": "2"}},
                    ],
                },
            )
        )
        assert par["status"] == "ok" and par["results"] == {"p": {"echo": "1"}, "q": {"echo": "2"}}
        refused = await client.call_tool(
            "patch_compose",
            {
                "parallel": True,
                "steps": [
                    {"id": "p", "tool": "echo", "args": {"text": "1"}},
                    {"id": "q", "tool": "echo", "args": {"text": "$p.echo"}},
                ],
            },
        )
        assert refused.is_error and "parallel mode forbids" in data(refused)["message"]
        forward = await client.call_tool(
            "patch_compose", {"steps": [{"id": "a", "tool": "echo", "args": {"text": "$b"}}]}
        )
        assert forward.is_error and "not an earlier step id" in data(forward)["message"]


async def test_replay(box: dict[str, Any]) -> None:
    async with connect(box) as client:
        await client.call_tool("echo", {"text": "again"})
        runs = data(await client.call_tool("patch_list_runs", {"limit": 1}))
        runs = runs["result"] if isinstance(runs, dict) else runs
        run_id = runs[0]["run_id"]
        replayed = data(await client.call_tool("patch_replay", {"run_id": run_id}))
        assert replayed["replay_status"] == "replayed" and replayed["source_match"] is True
        assert replayed["output_match"] == "yes" and replayed["replay_output"] == {"echo": "again"}
        assert replayed["sandbox_config_match"] is True
        assert replayed["sandbox_match"]["capabilities"]["network"] is False
        # An edited tool: not replayed, and the answer says why.
        tool = box["tools"] / "echo.py"
        tool.write_text(tool.read_text().replace('{"echo": text}', '{"echo": text.upper()}'))
        changed = data(await client.call_tool("patch_replay", {"run_id": run_id}))
        assert changed["replay_status"] == "source_changed"
        assert changed["original"]["source_sha256"] != changed["current"]["source_sha256"]
        unknown = await client.call_tool("patch_replay", {"run_id": "../../etc/passwd"})
        assert unknown.is_error and "No audit blob found" in data(unknown)["message"]


async def test_replay_of_a_human_confirm_run_is_held(box: dict[str, Any]) -> None:
    marker = box["marker"]
    async with connect(box) as client:
        held = await client.call_tool("mark", {"marker": str(marker), "text": "once"})
        token = data(held)["confirmation_token"]
        approve(box, token)
        await client.call_tool("patch_confirm_action", {"confirmation_token": token})
        runs = data(await client.call_tool("patch_list_runs", {"tool_name": "mark"}))
        runs = runs["result"] if isinstance(runs, dict) else runs
        again = data(await client.call_tool("patch_replay", {"run_id": runs[0]["run_id"]}))
        assert (
            again["status"] == "confirmation_required" and again["replay_of"] == runs[0]["run_id"]
        )
        assert runs_in(marker) == ["once"]  # the runtime would have run it again unasked


async def test_generate_tool(box: dict[str, Any]) -> None:
    tool_text = (Path(g.PROMPTS_DIR) / "example_tool.txt").read_text(encoding="utf-8")
    broken = tool_text.replace(
        "    words = WORD.findall(text)\n", "    words = WORD.findall(text\n"
    )
    with FakeAnthropic() as fake:
        # The first answer has a syntax error: lint sends it back, the repair is saved.
        fake.add(Reply(broken), Reply(tool_text))
        env = {"ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": fake.base_url}
        async with connect(box, extra_env=env) as client:
            made = await client.call_tool(
                "patch_generate_tool", {"description": "count words", "name_hint": "count_words"}
            )
            assert not made.is_error, made.content[0].text
            draft = box["root"] / "drafts" / "count_words.py"
            answer = data(made)
            assert answer.pop("message").startswith("Saved as a draft for a person to review")
            assert answer == {
                "name": "count_words",
                "version": "1.0.0",
                "description": "Count the words, lines and characters in a text.",
                "status": "draft",
                "source": "generated",
                "draft_path": str(draft),
            }
            assert len(fake.requests) == 2
            # A draft for a person to review: not in the toolbox, not served, not callable.
            assert draft.is_file() and not (box["tools"] / "count_words.py").exists()
            names = {t.name for t in (await client.list_tools()).tools}
            assert "count_words" not in names
            refused = await client.call_tool("count_words", {"text": "a b c"})
            assert refused.is_error
            # Once a person moves it into the toolbox, it is served.
            draft.rename(box["tools"] / "count_words.py")
            names = {t.name for t in (await client.list_tools()).tools}
            assert "count_words" in names
            index = json.loads((box["root"] / "index.json").read_text())
            listed = index["tools"] if isinstance(index, dict) and "tools" in index else index
            assert "count_words" in json.dumps(listed)
            counted = await client.call_tool("count_words", {"text": "a b c"})
            assert not counted.is_error
            fake.add(Reply(broken), Reply(broken), Reply(broken))
            failed = await client.call_tool("patch_generate_tool", {"description": "again"})
            assert failed.is_error and data(failed)["error"] == "GeneratorError"
            assert "nothing was saved" in data(failed)["message"]
