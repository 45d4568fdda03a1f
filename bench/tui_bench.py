"""TUI benchmarks (issue 4, item 9).

(a) start-up: from spawning `python` to the first frame that shows a tool's manifest form and
    source, against a bare Textual app (Header, Static, Footer) measured in the same run. Each
    sample is a fresh interpreter (so imports count, as they do for a user); the two kinds are
    interleaved so machine load hits both alike. Target: desk / bare median <= 1.3.
(b) keystroke -> updated diagnostics on a 300-line tool, in one process with Pilot: the time from
    the debounced re-parse firing to the lint panel showing the new diagnostics (p95, target
    <= 50 ms), and the debounce itself (target <= 150 ms).
(c) outside change -> the open (clean) tool showing it: watcher + reload (target <= 250 ms).

    .venv/bin/python bench/tui_bench.py [--runs N] [--json]

A child process is this file with `--child bare|desk PATH`: it runs the app headless and writes
READY on stdout once the first frame with the content is painted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SIZE = (120, 36)


# -- children -------------------------------------------------------------------------------------


def _ready_line() -> None:
    # Textual captures print() while an app runs; write to the real stdout.
    os.write(1, b"READY\n")


def child_bare() -> None:
    from textual.app import App, ComposeResult
    from textual.widgets import Footer, Header, Static

    class Bare(App[None]):
        def compose(self) -> ComposeResult:
            yield Header()
            yield Static("Hello from a bare Textual app", id="body")
            yield Footer()

    async def pilot(p: Any) -> None:
        await p.pause()  # the first frame with the Static painted
        _ready_line()
        p.app.exit()

    Bare().run(headless=True, size=SIZE, auto_pilot=pilot)


def desk_is_ready(app: Any) -> bool:
    """The desk shows a tool: its source in the source pane and its name in the form."""
    from patch_tui.ui.widgets.manifest_form import ManifestForm
    from patch_tui.ui.widgets.source_pane import SourceArea

    screen = app.screen
    sources = screen.query(SourceArea)
    forms = screen.query(ManifestForm)
    if not sources or not forms:
        return False
    return bool(sources.first().text) and forms.first().is_populated


def child_desk(path: str) -> None:
    # The same path a user takes: the CLI parses args and builds the app.
    from patch_tui.commands import tui

    async def pilot(p: Any) -> None:
        while not desk_is_ready(p.app):
            await asyncio.sleep(0.002)
        await p.pause()
        _ready_line()
        p.app.exit()

    os.environ["PATCH_TUI_WATCH_TOOLS"] = "false"
    os.environ["PATCH_TUI_WATCH_THEMES"] = "false"
    app = tui.build_app(tui.parse_for_bench(path))
    app.run(headless=True, size=SIZE, auto_pilot=pilot)


# -- (a) start-up ---------------------------------------------------------------------------------


def spawn(kind: str, path: str | None, env: dict[str, str]) -> float:
    cmd = [sys.executable, __file__, "--child", kind]
    if path:
        cmd.append(path)
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=REPO)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    elapsed = time.perf_counter() - start
    _out, err = proc.communicate(timeout=30)
    if line.strip() != b"READY":
        raise SystemExit(f"{kind} child failed:\n{err.decode(errors='replace')[-3000:]}")
    return elapsed


def bench_startup(runs: int, tool: Path, env: dict[str, str]) -> dict[str, Any]:
    bare: list[float] = []
    desk: list[float] = []
    spawn("bare", None, env)  # warm the OS file cache and .pyc files for both
    spawn("desk", str(tool), env)
    for _ in range(runs):
        bare.append(spawn("bare", None, env))
        desk.append(spawn("desk", str(tool), env))
    b, d = statistics.median(bare), statistics.median(desk)
    return {
        "runs": runs,
        "bare_median_ms": round(b * 1000, 1),
        "desk_median_ms": round(d * 1000, 1),
        "ratio": round(d / b, 3),
        "target_ratio": 1.3,
        "bare_ms": [round(x * 1000, 1) for x in bare],
        "desk_ms": [round(x * 1000, 1) for x in desk],
    }


# -- helpers --------------------------------------------------------------------------------------


def tool_of(lines: int) -> str:
    """A lint-clean tool of about `lines` lines (the body grows with small helper functions)."""
    head = (
        "# ---\n"
        "# name: bench_tool\n"
        '# version: "1.0.0"\n'
        "# description: A tool used to measure the desk.\n"
        "# inputs:\n"
        "#   text:\n"
        "#     type: string\n"
        "#     description: The text to count.\n"
        "# ---\n"
        "\n\n"
        "def main(text: str) -> dict:\n"
        '    """Count things in the text."""\n'
        "    total = 0\n"
    )
    body: list[str] = []
    n = 0
    while len(head.splitlines()) + len(body) < lines - 2:
        body.append(f"    total += len(text) * {n}  # step {n}\n")
        n += 1
    return head + "".join(body) + '    return {"total": total}\n'


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]


def make_env(tmp: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PATCH_TUI_CONFIG"] = str(tmp / "config.toml")
    env["XDG_CONFIG_HOME"] = str(tmp / "xdg-config")
    env["XDG_STATE_HOME"] = str(tmp / "xdg-state")
    env["PATCH_TUI_STORE"] = str(tmp / "store.sqlite3")
    env["PYTHONPATH"] = str(REPO)
    return env


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--keys", type=int, default=40, help="keystrokes for (b)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--only", choices=["startup", "keystroke", "follow"], default=None)
    parser.add_argument("--child", choices=["bare", "desk"], help=argparse.SUPPRESS)
    parser.add_argument("path", nargs="?", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child == "bare":
        child_bare()
        return 0
    if args.child == "desk":
        child_desk(args.path)
        return 0

    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="tui-bench-") as tmpdir:
        tmp = Path(tmpdir)
        env = make_env(tmp)
        os.environ.update({k: env[k] for k in ("PATCH_TUI_CONFIG", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "PATCH_TUI_STORE")})
        tools = tmp / "tools"
        tools.mkdir()
        tool = tools / "bench_tool.py"
        tool.write_text(tool_of(300), encoding="utf-8")
        if args.only in (None, "startup"):
            results["startup"] = bench_startup(args.runs, tool, env)
        if args.only in (None, "keystroke"):
            results["keystroke"] = asyncio.run(bench_keystroke(tool, args.keys))
        if args.only in (None, "follow"):
            results["follow"] = asyncio.run(bench_follow(tool))
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        for name, figures in results.items():
            shown = {k: v for k, v in figures.items() if not isinstance(v, list)}
            print(f"{name}: " + ", ".join(f"{k}={v}" for k, v in shown.items()))
    return 0


async def bench_keystroke(tool: Path, keys: int) -> dict[str, Any]:
    raise NotImplementedError


async def bench_follow(tool: Path) -> dict[str, Any]:
    raise NotImplementedError


if __name__ == "__main__":
    sys.exit(main())
