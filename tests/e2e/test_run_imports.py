"""`patch-tui run` imports none of commands/runtime.py RUN_LAZY_MODULES for a call that is not
held (issue 27: its own import path trimmed), in a real process running the real command: the
tool runs sandboxed and answers, and only then is sys.modules read. A human_confirm tool is still
held (exit 3), whatever it imports for that."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from patch_tui.commands.runtime import RUN_LAZY_MODULES
from patch_tui.runtime import sandbox
from tests.runtimekit import cli, cli_env, write_tool

# The real command, as `python -m patch_tui run ...` dispatches it; then what it imported.
_PROBE = """
import json, sys
from patch_tui.cli import main
code = main(sys.argv[1:])
sys.stdout.flush()
print("\\n" + json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""

ENGINES = [
    pytest.param(
        engine,
        marks=pytest.mark.skipif(
            sandbox.choose_engine(engine) != engine, reason=f"{engine} is not available here"
        ),
    )
    for engine in ("landlock", "bwrap")
]


def _imported(modules: list[str], name: str) -> bool:
    return any(m == name or m.startswith(name + ".") for m in modules)


def _run_probe(env: dict[str, str], *args: str) -> tuple[int, str, list[str]]:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=env["PATCH_TUI_SERVE_WORKSPACE"],
    )
    assert out.returncode == 0, out.stderr[-3000:]
    *printed, last = out.stdout.rstrip("\n").split("\n")
    report = json.loads(last)
    return report["code"], "\n".join(printed), report["modules"]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_plain_run_imports_none_of_the_lazy_modules(tmp_path: Path, engine: str) -> None:
    env = dict(
        cli_env(tmp_path / "home", tmp_path / "store.sqlite3"), PATCH_TUI_SANDBOX_ENGINE=engine
    )
    tool = write_tool(
        tmp_path / "tools",
        "shout",
        'def main(text: str) -> dict:\n    return {"shout": text.upper() + "!"}',
        inputs=[{"name": "text"}],
    )
    args = json.dumps({"text": "a long enough text to be recorded"})
    code, stdout, modules = _run_probe(env, "run", str(tool), "--args", args)
    assert code == 0, stdout
    assert json.loads(stdout) == {"shout": "A LONG ENOUGH TEXT TO BE RECORDED!"}
    loaded = [name for name in RUN_LAZY_MODULES if _imported(modules, name)]
    assert loaded == [], f"`run` imported what it should not: {loaded}"
    # ...and the same call through `python -m patch_tui` answers the same, and is recorded
    # for the taint gate (the store is still opened and written when it must be).
    done = cli(env, "run", str(tool), "--args", args)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"shout": "A LONG ENOUGH TEXT TO BE RECORDED!"}
    from patch_tui.approvals.store import Store

    with Store(env["PATCH_TUI_STORE"], actor="reader@test") as store:
        assert any("A LONG ENOUGH TEXT" in output for _tool, output in store.recent_outputs())


@pytest.mark.parametrize("engine", ENGINES)
def test_a_human_confirm_tool_is_still_held(tmp_path: Path, engine: str) -> None:
    env = dict(
        cli_env(tmp_path / "home", tmp_path / "store.sqlite3"), PATCH_TUI_SANDBOX_ENGINE=engine
    )
    tool = write_tool(
        tmp_path / "tools",
        "send_it",
        'def main(text: str) -> dict:\n    return {"sent": text}',
        inputs=[{"name": "text"}],
        human_confirm=True,
    )
    code, stdout, _modules = _run_probe(env, "run", str(tool), "--args", '{"text": "hi"}')
    assert code == 3
    assert json.loads(stdout)["status"] == "confirmation_required"
    done = cli(env, "run", str(tool), "--args", '{"text": "hi"}')
    assert done.returncode == 3
    assert json.loads(done.stdout)["kind"] == "human_confirm"
    assert "held for a person's approval" in done.stderr
    assert "sent" not in done.stdout  # not run
