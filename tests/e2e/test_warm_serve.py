"""serve's warm sandboxed processes (runtime/warm.py): calls of one tool are forks of one warm,
already confined interpreter, and nothing of a call reaches the next: not its memory (a global,
a module attribute), its files (temporary folder, HOME, working folder), its environment, nor a
process it left running. Real `patch-tui serve`, the mcp SDK's client, under each engine."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.mcpkit import serve_box, serve_session
from tests.runtimekit import write_tool

pytestmark = pytest.mark.slow

# Call 1 leaves everything it can behind; every call reports what it finds of an earlier one.
REMEMBER_BODY = """
import os
import subprocess
import tempfile

LEFT = []  # a module global: call 1 appends to it


IPC_KEY = 0x5A7C4  # a System V shared memory segment, by a fixed key


def _processes() -> list[int]:
    return sorted(int(p) for p in os.listdir("/proc") if p.isdigit())


def _shm(create: bool) -> bool:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    return libc.shmget(IPC_KEY, 4096, (0o1600 if create else 0)) >= 0


def _in_dev() -> list[str]:
    names = ("/dev/shm/left-by-call-one", "/dev/left-by-call-one")
    return [name for name in names if os.path.exists(name)]


def _leave_in_dev() -> None:
    for folder in ("/dev/shm", "/dev"):
        try:
            with open(os.path.join(folder, "left-by-call-one"), "w") as fh:
                fh.write("call one")
        except OSError:
            pass


def main(leave: str) -> dict:
    found = {
        "global": list(LEFT),
        "module": getattr(json, "left_by_a_call", None),
        "env": os.environ.get("LEFT_BY_A_CALL"),
        "tmp": sorted(os.listdir(tempfile.gettempdir())),
        "home": sorted(os.listdir(os.path.expanduser("~"))),
        "work": sorted(os.listdir(".")),
        "pid": os.getpid(),
        "processes": _processes(),
        "dev": _in_dev(),
        "shm": _shm(create=False),
    }
    if leave == "yes":
        LEFT.append("call one")
        json.left_by_a_call = "call one"
        os.environ["LEFT_BY_A_CALL"] = "call one"
        for folder in (tempfile.gettempdir(), os.path.expanduser("~"), "."):
            with open(os.path.join(folder, "left-by-call-one"), "w") as fh:
                fh.write("call one")
        _leave_in_dev()
        _shm(create=True)
        # A process that would outlive the call (its own session, stdio let go).
        subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(60)"],
            start_new_session=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        found["left"] = {"dev": _in_dev(), "shm": _shm(create=False)}
    return found
"""


def _engines() -> list[Any]:
    from patch_tui.runtime import sandbox

    host = sandbox.probe()
    return [
        pytest.param(
            "landlock",
            marks=pytest.mark.skipif(host.landlock_abi < 1, reason="no Landlock on this kernel"),
        ),
        pytest.param(
            "bwrap",
            marks=pytest.mark.skipif(
                host.bwrap is None or shutil.which("bwrap") is None,
                reason="bubblewrap (bwrap) is not installed or cannot work here",
            ),
        ),
    ]


@pytest.mark.parametrize("engine", _engines())
async def test_a_call_finds_nothing_of_the_call_before(tmp_path: Path, engine: str) -> None:
    box = serve_box(tmp_path)
    write_tool(box["tools"], "remember", REMEMBER_BODY, inputs=[{"name": "leave"}])
    env = {"PATCH_TUI_SANDBOX_ENGINE": engine}
    async with serve_session(box, extra_env=env) as client:
        first = (await client.call_tool("remember", {"leave": "yes"})).structured_content
        second = (await client.call_tool("remember", {"leave": "no"})).structured_content
    assert first is not None and second is not None, "the calls failed"
    # Call one did leave them (so finding none is the sandbox's doing, not a failed write).
    assert first["left"]["shm"] is True
    if engine == "bwrap":
        assert first["left"]["dev"] != []
    # The same warm process served both (one PID namespace: PIDs go on counting), so what
    # follows is about forks of one interpreter, not two separate sandboxes.
    assert second["pid"] > first["pid"]
    assert second["global"] == []
    assert second["module"] is None
    assert second["env"] is None
    assert second["tmp"] == []
    assert second["home"] == []
    assert second["work"] == ["tool.py"]
    assert second["dev"] == []  # bwrap's own /dev is a tmpfs the calls share: cleared
    assert second["shm"] is False  # System V IPC: the call's own namespace, or cleared
    # Only the warm process (PID 1) and the call itself: call one's sleeper is gone.
    assert second["processes"] == [1, second["pid"]]


async def test_a_changed_tool_gets_a_new_warm_process(tmp_path: Path) -> None:
    """Another source is another warm process: the edited tool's code runs, never the old."""
    box = serve_box(tmp_path)
    path = write_tool(box["tools"], "version", 'def main() -> dict:\n    return {"v": 1}\n')
    async with serve_session(box) as client:
        before = (await client.call_tool("version", {})).structured_content
        write_tool(box["tools"], "version", 'def main() -> dict:\n    return {"v": 2}\n')
        after = (await client.call_tool("version", {})).structured_content
    assert path.exists()
    assert before == {"v": 1}
    assert after == {"v": 2}


@pytest.mark.parametrize("engine", _engines())
async def test_what_calls_write_in_the_workspace_stays(tmp_path: Path, engine: str) -> None:
    """Clearing a call's files never reaches the workspace: a read-write tool's writes there
    are the user's, and so is a file another program made there between two calls."""
    from tests.runtimekit import runs_in

    box = serve_box(tmp_path)
    marker = box["marker"]
    neighbour = marker.parent / "made-by-someone-else.txt"
    env = {"PATCH_TUI_SANDBOX_ENGINE": engine}
    async with serve_session(box, extra_env=env) as client:
        first = await client.call_tool("sink", {"marker": str(marker), "text": "one"})
        neighbour.write_text("mine")
        second = await client.call_tool("sink", {"marker": str(marker), "text": "two"})
    assert not first.is_error and not second.is_error
    assert runs_in(marker) == ["one", "two"]
    assert neighbour.read_text() == "mine"
