"""The caps that hold where no cgroup can be made for a run (issue 11, item 6).

This host gives runs a cgroup v1 group (memory and pids), so the fallbacks are reached by playing
a host without one (`sandbox.probe` replaced, as the no-isolation tests do): the sandbox's engine
stays the real one. What these tests cannot reach here: a cgroup v2 group (this host has cgroup
v1 only; tests/e2e/test_sandbox.py's hog and fork-bomb tests take v2 where a host delegates it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from patch_tui.runtime import sandbox
from patch_tui.runtime.runner import Isolation, run_source
from tests.runtimekit import BOMB_BODY, tool_text

HOST = sandbox.probe()
ROOT = Path(__file__).resolve().parents[2]
ENGINE = "landlock" if HOST.landlock_abi >= 1 else ("bwrap" if HOST.bwrap else None)
needs_engine = pytest.mark.skipif(ENGINE is None, reason="no Landlock and no bwrap here")

MAP_BODY = """
def main(gib: int) -> dict:
    import mmap
    try:
        # Address space only, never touched: no memory is used whether or not it is allowed.
        noreserve = getattr(mmap, "MAP_NORESERVE", 0x4000)  # (named from Python 3.12; Linux's value)
        m = mmap.mmap(-1, gib << 30, flags=mmap.MAP_PRIVATE | noreserve)
        m.close()
        return {"mapped": True}
    except OSError as exc:
        return {"mapped": False, "errno": exc.errno}
"""


@needs_engine
def test_without_a_cgroup_memory_is_capped_per_process(monkeypatch) -> None:
    import mmap

    # Outside a run the same mapping works: only the run's cap can stop the tool's.
    noreserve = getattr(mmap, "MAP_NORESERVE", 0x4000)
    mmap.mmap(-1, 5 << 30, flags=mmap.MAP_PRIVATE | noreserve).close()
    monkeypatch.setattr(sandbox, "probe", lambda: replace(HOST, cgroups=sandbox.Cgroups()))
    text = tool_text("mapper", MAP_BODY, inputs=[{"name": "gib", "type": "integer"}])
    r = run_source(text, {"gib": 5}, isolation=Isolation(engine=ENGINE))
    assert r.ok, r.error
    assert r.result == {"mapped": False, "errno": 12}  # ENOMEM: over RLIMIT_AS (4 GiB)
    assert "memory:rlimit-per-process" in r.enforced["claims"]
    assert any("capped per process only" in line for line in r.capability_assertions)
    small = run_source(text, {"gib": 1}, isolation=Isolation(engine=ENGINE))
    assert small.ok and small.result == {"mapped": True}  # the cap, not the tool


# Run in a process of its own, as a user other than root: RLIMIT_NPROC never binds root.
NPROC_HELPER = r"""
import json, os, sys, tempfile
from dataclasses import replace
from patch_tui.runtime import process, sandbox
from patch_tui.runtime.runner import Isolation, run_source
from tests.runtimekit import tool_text

engine, body = sys.argv[1], sys.argv[2]
host = replace(sandbox.probe(), cgroups=sandbox.Cgroups())
sandbox.probe = lambda: host  # a host where no cgroup can be made for the run
text = tool_text("bomb", body, inputs=[{"name": "limit", "type": "integer"}])
run_source(text, {"limit": 1}, isolation=Isolation(engine=engine))  # every lazy import, as root
if os.geteuid() == 0:
    home = tempfile.mkdtemp(prefix="nproc-test-")
    os.chown(home, 65534, 65534)
    os.setgroups([])
    os.setgid(65534)
    os.setuid(65534)  # nobody, from here on
    os.environ.update(
        HOME=home,
        PATCH_TUI_CONFIG=os.path.join(home, "config.toml"),
        PATCH_TUI_STORE=os.path.join(home, "store.sqlite3"),
        PATCH_TUI_TOOLBOX=os.path.join(home, "toolbox"),
        XDG_CACHE_HOME=os.path.join(home, "cache"),
        XDG_STATE_HOME=os.path.join(home, "state"),
        XDG_CONFIG_HOME=os.path.join(home, "config"),
    )
    # This test's interpreter lives where nobody may not go (/root): the tool runs on the
    # system's Python 3, like any standard-library tool.
    sys.executable = "/usr/bin/python3"
    process._NS_CACHE.clear()  # what namespaces work is probed again, as this user
out = {}
for name, limit, cap in (("capped", 60, 16), ("free", 30, 64)):
    r = run_source(text, {"limit": limit}, isolation=Isolation(engine=engine, max_processes=cap))
    out[name] = {"ok": r.ok, "error": r.error, "result": r.result, "claims": r.enforced["claims"]}
out["uid"] = os.geteuid()
if os.geteuid() != 0 and "home" in globals():
    import shutil

    shutil.rmtree(home, ignore_errors=True)
print(json.dumps(out))
"""


@needs_engine
def test_without_a_cgroup_rlimit_nproc_stops_a_fork_bomb() -> None:
    if os.geteuid() == 0 and not os.access("/usr/bin/python3", os.X_OK):
        pytest.skip("running as root, and no /usr/bin/python3 for the user 'nobody'")
    assert ENGINE is not None
    done = subprocess.run(
        [sys.executable, "-c", NPROC_HELPER, ENGINE, BOMB_BODY],
        cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["uid"] != 0
    capped, free = out["capped"], out["free"]
    assert capped["ok"], capped["error"]
    assert "processes:rlimit-nproc" in capped["claims"]
    assert capped["result"]["refused"] == 11 and capped["result"]["forked"] < 16, capped  # EAGAIN
    assert free["ok"] and free["result"] == {"forked": 30, "refused": None}, free
