"""Taint where it belongs (issue 25): values a person typed (try-it, `run --as-person`) are never
taken for another tool's output; an agent's call carrying the same value still is, and its hold
names the output it matched and when."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from patch_tui.approvals.gate import Gate
from patch_tui.approvals.store import Store
from patch_tui.runtime.toolbox import Toolbox
from tests.runtimekit import MARK_BODY, MARK_INPUTS, PATCH_TUI, cli_env, runs_in, write_tool

PATH_TEXT = "/home/alice/projects/report-2026.txt"


@pytest.fixture
def box(tmp_path: Path):
    tools = tmp_path / "box" / "tools"
    # A tool whose output names a path, as file_stats does.
    stats = write_tool(
        tools, "stats", f'def main() -> dict:\n    return {{"path": {PATH_TEXT!r}, "bytes": 12}}'
    )
    sink = write_tool(tools, "sink", MARK_BODY, inputs=MARK_INPUTS, filesystem="read-write")
    ws = tmp_path / "ws"
    ws.mkdir()
    return {"tmp": tmp_path, "stats": stats, "sink": sink, "ws": ws, "marker": ws / "m.txt"}


def test_an_agents_call_is_held_naming_the_output_and_a_persons_is_not(box) -> None:
    with Store(box["tmp"] / "s.db", actor="test") as store:
        gate = Gate(store, toolbox=Toolbox.open(box["tmp"] / "box"), workspace=box["ws"])
        assert gate.call(box["stats"], {}).status == "ok"
        args = {"marker": str(box["marker"]), "text": PATH_TEXT}
        held = gate.call(box["sink"], args)
        assert held.status == "confirmation_required" and held.action.kind == "tainted_input"
        [origin] = held.action.details["tainted_inputs"][0]["matchedOutputs"]
        assert origin["tool"] == "stats" and PATH_TEXT in origin["excerpt"]
        assert f"stats (its output of {origin['at']})" in held.action.reason
        # The same value typed by a person: it runs, nothing is held.
        typed = gate.call(box["sink"], args, by_person=True)
        assert typed.status == "ok", typed.payload
        assert runs_in(box["marker"]) == [PATH_TEXT]
        assert [a.kind for a in store.list_actions(statuses=None)] == ["tainted_input"]


def test_a_person_typing_still_meets_human_confirm(box) -> None:
    sink = write_tool(
        box["sink"].parent,
        "guarded",
        MARK_BODY,
        inputs=MARK_INPUTS,
        filesystem="read-write",
        human_confirm=True,
    )
    with Store(box["tmp"] / "s.db", actor="test") as store:
        gate = Gate(store, workspace=box["ws"])
        out = gate.call(sink, {"marker": str(box["marker"]), "text": "x"}, by_person=True)
        assert out.status == "confirmation_required" and out.action.kind == "human_confirm"


def test_run_as_person_from_the_cli(box) -> None:
    env = cli_env(box["tmp"], box["tmp"] / "s.db", box["tmp"] / "box")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*PATCH_TUI, "run", *args], env=env, capture_output=True, text=True, cwd=box["ws"]
        )

    assert run("stats").returncode == 0
    args = json.dumps({"marker": str(box["marker"]), "text": PATH_TEXT})
    held = run("sink", "--args", args)
    assert held.returncode == 3 and json.loads(held.stdout)["kind"] == "tainted_input"
    typed = run("sink", "--args", args, "--as-person")
    assert typed.returncode == 0, typed.stderr
    assert runs_in(box["marker"]) == [PATH_TEXT]
