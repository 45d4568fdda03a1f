"""Holds that can run (issue 25): a read-write call whose path lies outside the workspace is
flagged when it is held, in every place a person looks before approving, and the flag is true:
approved anyway, the call fails; a path inside the workspace is not flagged and runs.

The tool is the shipped sample `delete_file.py` (the README's walkthrough), run by the real CLI
from a workspace folder, as a person does."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from patch_tui.approvals import workspace
from patch_tui.format import toolfile
from tests.runtimekit import REPO, approve_argv, cli, cli_env

pytestmark = pytest.mark.slow

SAMPLE = REPO / "sample_tools" / "delete_file.py"


@pytest.fixture
def box(tmp_path: Path) -> dict[str, Any]:
    tool = tmp_path / "box" / "tools" / "delete_file.py"
    tool.parent.mkdir(parents=True)
    shutil.copy(SAMPLE, tool)
    env = cli_env(tmp_path, tmp_path / "store.sqlite3", tmp_path / "box")
    return {"env": env, "tool": tool, "ws": tmp_path / "ws", "tmp": tmp_path}


def _held(box: dict[str, Any], path: Path) -> tuple[dict[str, Any], str]:
    r = cli(box["env"], "run", str(box["tool"]), "--args", json.dumps({"path": str(path)}))
    assert r.returncode == 3, r.stderr
    return json.loads(r.stdout), r.stderr


def test_a_path_outside_the_workspace_is_flagged_everywhere_and_the_flag_is_true(
    box: dict[str, Any],
) -> None:
    victim = box["tmp"] / "elsewhere" / "victim.txt"
    victim.parent.mkdir()
    victim.write_text("keep me")
    payload, stderr = _held(box, victim)
    # The held answer (what the agent and `run` print) says it before anyone approves.
    warning = payload["workspace_warning"]
    assert f"path={victim}" in warning and f"outside the workspace {box['ws']}" in warning
    assert "will fail" in warning and "serve_workspace" in warning
    assert "warning: path=" in stderr  # the person at the CLI reads it too
    token = payload["confirmation_token"]
    listed = cli(box["env"], "inbox", "list")
    assert "WARNING: path=" in listed.stdout and "outside the workspace" in listed.stdout
    approved = cli(box["env"], *approve_argv(box["env"], token))
    assert approved.returncode == 0 and "warning: path=" in approved.stderr
    # True: the sandbox lets the tool read the file but not delete it.
    ran = cli(box["env"], "confirm", token)
    assert ran.returncode != 0
    assert victim.read_text() == "keep me"


def test_a_path_inside_the_workspace_is_not_flagged_and_runs(box: dict[str, Any]) -> None:
    target = box["ws"] / "demo" / "victim.txt"
    target.parent.mkdir()
    target.write_text("delete me")
    payload, stderr = _held(box, target)
    assert "workspace_warning" not in payload and "warning" not in stderr
    token = payload["confirmation_token"]
    assert "WARNING" not in cli(box["env"], "inbox", "list").stdout
    assert cli(box["env"], *approve_argv(box["env"], token)).returncode == 0
    ran = cli(box["env"], "confirm", token)
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["deleted"] is True and not target.exists()


def test_serve_without_a_workspace_flags_every_absolute_path(tmp_path: Path) -> None:
    manifest = toolfile.read(str(SAMPLE)).manifest
    assert manifest is not None
    flag = workspace.check({"path": "/srv/data/old.log"}, manifest, None)
    assert flag is not None
    text = workspace.describe(flag)
    assert text is not None and "none is set" in text and "serve_workspace" in text
    # A relative path runs in the tool's own folder: never flagged; a read-only tool never is.
    assert workspace.check({"path": "old.log"}, manifest, None) is None


def test_path_args_are_found_by_name_description_or_absolute_value(tmp_path: Path) -> None:
    text = SAMPLE.read_text().replace("name: path", "name: target")
    text = text.replace("The path of the file to delete; folders are refused.", "What to remove.")
    manifest = toolfile.parse(text).manifest
    assert manifest is not None
    ws = tmp_path / "ws"
    # Neither the name nor the description says path: an absolute value still counts.
    assert workspace.outside_workspace({"target": "/etc/hosts"}, manifest, ws) == [
        {"input": "target", "path": "/etc/hosts"}
    ]
    assert workspace.outside_workspace({"target": "~/notes.txt"}, manifest, ws) == [
        {"input": "target", "path": "~/notes.txt"}
    ]
    assert workspace.outside_workspace({"target": f"{ws}/a.txt"}, manifest, ws) == []


def test_landlock_top_level_entries_of_a_folder_holding_tool_files_are_flagged(
    tmp_path: Path,
) -> None:
    """Under Landlock a workspace holding protected files is granted entry by entry: nothing can
    be made or removed at its top level (runtime/sandbox_exec.py `expand`). Said at hold time."""
    manifest = toolfile.read(str(SAMPLE)).manifest
    assert manifest is not None
    ws = tmp_path / "clone"
    (ws / "sample_tools").mkdir(parents=True)
    protected = [ws / "sample_tools" / "delete_file.py"]
    top = {"path": str(ws / "new.txt")}
    flag = workspace.check(top, manifest, ws, engine="landlock", protected=protected)
    assert flag is not None and flag["landlock_top_level"] == [
        {"input": "path", "path": str(ws / "new.txt")}
    ]
    text = workspace.describe(flag)
    assert text is not None and "Landlock" in text and "subfolder" in text
    # A subfolder with nothing protected in it is granted whole: fine. So is bwrap.
    (ws / "out").mkdir()
    assert (
        workspace.check(
            {"path": str(ws / "out" / "new.txt")},
            manifest,
            ws,
            engine="landlock",
            protected=protected,
        )
        is None
    )
    assert workspace.check(top, manifest, ws, engine="bwrap", protected=protected) is None


def test_an_unheld_run_says_it_before_the_run(box: dict[str, Any]) -> None:
    """A read-write tool without human_confirm runs at once: the warning comes first, on its own
    line, before the run's own failure."""
    from tests.runtimekit import write_tool

    touch = write_tool(
        box["tool"].parent,
        "touch_file",
        'def main(path: str) -> dict:\n    open(path, "w").close()\n    return {"path": path}',
        inputs=[{"name": "path"}],
        filesystem="read-write",
    )
    outside = box["tmp"] / "elsewhere" / "new.txt"
    outside.parent.mkdir()
    r = cli(box["env"], "run", str(touch), "--args", json.dumps({"path": str(outside)}))
    assert r.returncode != 0 and not outside.exists()
    lines = r.stderr.splitlines()
    assert lines[0].startswith(f"patch-tui: warning: path={outside} lies outside the workspace")
    assert "this run will fail" in lines[0] and "approval" not in lines[0]
    inside = box["ws"] / "new.txt"
    ok = cli(box["env"], "run", str(touch), "--args", json.dumps({"path": str(inside)}))
    assert ok.returncode == 0 and "warning" not in ok.stderr and inside.exists()
