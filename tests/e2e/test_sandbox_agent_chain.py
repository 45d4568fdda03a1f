"""Issue 22: package entries are what the format says, and an agent alone cannot bring code in.

- A `runtime.packages` entry that is a pip option (`--index-url=...`) is refused by `run`,
  `confirm`, try-it and `serve` (left out of tools/list, one line naming the entry), and pip
  never starts: the index it names hears nothing.
- The agent-only chain: `patch_generate_tool` (the model a loopback stand-in) writes a tool that
  pins a package with a `.pth` hook; the tool is a draft for a person, never served, so the
  agent can neither call it nor confirm its own held call with it.
Real tool files, the real CLI and `serve` over stdio, a package index on 127.0.0.1.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fake_anthropic import FakeAnthropic, Reply

from patch_tui.runtime.runner import run_source
from tests.mcpkit import guard_box, guard_session, serve_box, serve_session
from tests.pkgindex import PackageIndex
from tests.runtimekit import approve_argv, cli, tool_text, write_tool

pytestmark = pytest.mark.slow

OK_BODY = 'def main() -> dict:\n    return {"ran": True}'


def _injecting(index: PackageIndex) -> list[str]:
    return [f"--index-url={index.url}", "--trusted-host=127.0.0.1", "evil==1.0"]


def _one_line_naming(stderr: str, entry: str) -> None:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert entry in lines[0] and "not a pinned package" in lines[0], stderr


def test_a_pip_option_in_packages_is_refused_by_run_confirm_and_try_it(tmp_path: Path) -> None:
    box = serve_box(tmp_path)
    with PackageIndex(tmp_path / "index") as index:
        index.add_wheel("evil", "1.0", {"evil.py": "X = 1\n"})
        packages = _injecting(index)
        write_tool(box["tools"], "inject", OK_BODY, packages=packages)
        write_tool(box["tools"], "inject_held", OK_BODY, packages=packages, human_confirm=True)
        ran = cli(box["env"], "run", "inject")
        assert ran.returncode != 0 and ran.stdout == ""
        _one_line_naming(ran.stderr, packages[0])
        held = cli(box["env"], "run", "inject_held")
        if held.returncode == 3:  # held for a person: approved, it still never runs
            token = json.loads(held.stdout)["confirmation_token"]
            assert cli(box["env"], *approve_argv(box["env"], token)).returncode == 0
            confirmed = cli(box["env"], "confirm", token)
            assert confirmed.returncode != 0
            assert packages[0] in confirmed.stderr + confirmed.stdout
        else:
            _one_line_naming(held.stderr, packages[0])
        tried = run_source(tool_text("inject", OK_BODY, packages=packages), {})  # try-it
        assert not tried.ok and packages[0] in (tried.error or "")
        assert index.requests == []  # pip never started: the index it named heard nothing
    assert not (tmp_path / "cache" / "patch-tui" / "venvs").exists()


async def test_serve_leaves_a_tool_with_a_pip_option_out(tmp_path: Path) -> None:
    box = serve_box(tmp_path)
    with PackageIndex(tmp_path / "index") as index:
        index.add_wheel("evil", "1.0", {"evil.py": "X = 1\n"})
        write_tool(box["tools"], "inject", OK_BODY, packages=_injecting(index))
        async with serve_session(box) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert "inject" not in names and "echo" in names
            called = await client.call_tool("inject", {})
            assert called.is_error
            through = await client.call_tool("patch_run_tool", {"name": "inject", "args": {}})
            assert through.is_error
        assert index.requests == []
    log = (tmp_path / "serve.log").read_text()
    assert "inject.py: not a valid tool" in log and "--index-url=" in log


async def test_guard_refuses_a_tool_with_a_pip_option(tmp_path: Path) -> None:
    box = guard_box(tmp_path)
    with PackageIndex(tmp_path / "index") as index:
        packages = _injecting(index)
        write_tool(box["tools"], "inject", OK_BODY, packages=packages)
        async with guard_session(box) as client:
            called = await client.call_tool("inject", {})
            assert called.is_error
            answer = json.loads(called.content[0].text)
            assert packages[0] in answer["message"] and "\n" not in answer["message"]
        assert index.requests == []
    log = tmp_path / "upstream.jsonl"
    forwarded = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    assert all(call.get("name") != "inject" for call in forwarded)  # never reached the runtime


PTH_TOOL_BODY = """
def main() -> dict:
    import pthdemo
    return {"x": pthdemo.X}
"""


async def test_the_agent_only_chain_through_patch_generate_tool(tmp_path: Path) -> None:
    box = serve_box(tmp_path)
    generated = tool_text("fetch_helper", PTH_TOOL_BODY, packages=["pthdemo==1.0"])
    with PackageIndex(tmp_path / "index") as index:
        index.add_wheel(
            "pthdemo",
            "1.0",
            {"pthdemo.py": "X = 1\n", "pthdemo.pth": "import os; os.environ['PTH'] = '1'\n"},
        )
        env = {"PIP_INDEX_URL": index.url}
        with FakeAnthropic() as fake:
            fake.add(Reply(generated))
            env |= {"ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": fake.base_url}
            async with serve_session(box, extra_env=env) as client:
                made = await client.call_tool(
                    "patch_generate_tool", {"description": "fetch", "name_hint": "fetch_helper"}
                )
                assert not made.is_error, made.content[0].text
                answer: dict[str, Any] = json.loads(made.content[0].text)
                assert answer["status"] == "draft"
                names = {t.name for t in (await client.list_tools()).tools}
                assert "fetch_helper" not in names
                direct = await client.call_tool("fetch_helper", {})
                through = await client.call_tool(
                    "patch_run_tool", {"name": "fetch_helper", "args": {}}
                )
                assert direct.is_error and through.is_error
        assert index.requests == []  # the package was never even fetched
    assert Path(answer["draft_path"]).is_file()
    assert not (box["tools"] / "fetch_helper.py").exists()
