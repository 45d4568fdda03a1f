"""The team inbox's store: PostgreSQL beside SQLite, the same figures in the same run (issue 28).

    .venv/bin/python bench/store_bench.py --store postgresql://user@127.0.0.1/db   (loopback)
    .venv/bin/python bench/store_bench.py --store pgserver   (a private server from the pgserver
                                                              wheel, as the tests run it)
    .venv/bin/python bench/store_bench.py --store pgserver --only list   (inbox list --json alone)
    .venv/bin/python bench/store_bench.py --store pgserver --only list --compare-with /tmp/old
                            (and another checkout's, in the same turns: `git worktree add
                             /tmp/old <commit>`, run with this venv)
    .venv/bin/python bench/store_bench.py --store pgserver --only tui --tui-runs 5
                                                             (the TUI inbox open alone)

Figures, each for SQLite (a file in a temporary folder) and for PostgreSQL:
- approve-to-runner wake-up: a decision committed by one store until a waiter on another store
  (as `patch_confirm_action` waits: `wait_for_change`, then the row) has read it; p50 / p95.
  SQLite is polled every 250 ms; PostgreSQL wakes on NOTIFY;
- `patch-tui inbox list --json` with 10,000 pending actions: a fresh process, median of 3
  (`--runs`), its wall time and its CPU time (user + system: what other work on the machine
  cannot add to), with the baseline (`patch-tui --version`) and the two stores in turns;
- the TUI inbox opening on 10,000 pending: from pushing the screen to the first frame written
  with the newest rows and the first action's details (what a person waits for; the rest of
  the list is read after it), to the details' tool part shown too, and until the whole list is
  loaded and the app is idle;
- 1,000 actions held by 10 concurrent `patch-tui serve` processes (100 calls each through the
  MCP client on stdio): wall time, and how many calls did not answer `confirmation_required`.

PostgreSQL runs in a schema of its own (`bench_<random>`, dropped at the end), so a database
given with --store keeps nothing of it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from patch_tui.approvals.open_store import open_store  # noqa: E402
from patch_tui.approvals.records import Signature  # noqa: E402
from patch_tui.approvals.values import (  # noqa: E402
    args_sha256,
    canonical_json,
    new_token,
    now_iso,
)
from patch_tui.settings.store_location import DatabaseURL  # noqa: E402

MARK = """# ---
# name: bench_hold
# version: 1.0.0
# description: Held for a person, never run here.
# inputs:
#   - name: n
#     type: integer
#     description: A number.
# outputs:
#   type: object
# capabilities:
#   network: false
#   filesystem: none
#   human_confirm: true
# runtime:
#   language: python
#   python_version: "3.12"
#   packages: []
# ---
import json
import sys


def main(n: int) -> dict:
    return {"n": n}


if __name__ == "__main__":
    print(json.dumps(main(**json.loads(sys.stdin.read()))))
"""


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1))))]


def hold(store: Any, n: int = 0) -> Any:
    return store.create_pending("human_confirm", "bench_hold", "1.0.0", "a" * 64, {"n": n}, "bench")


def decide(store: Any, token: str) -> None:
    """Approve as the inbox does: a signed decision where the store has them, else approve()."""
    if hasattr(store, "add_decision"):
        sig = Signature("bench", "approve", now_iso(), json.dumps({"t": token}))
        store.add_decision(token, sig, complete=lambda *_: now_iso(time.time() + 300))
    else:
        store.approve(token)


# -- the figures ------------------------------------------------------------------------------


def wakeups(location: Any, n: int) -> list[float]:
    """Seconds from a decision's call to a waiter on another store having read it."""
    out: list[float] = []
    with (
        open_store(location, actor="bench@runner") as runner,
        open_store(location, actor="bench@laptop") as approver,
    ):
        runner.wait_for_change(runner.data_version(), 0)  # the feed is up before timing
        for i in range(n):
            token = hold(approver, i).token
            ready = threading.Event()
            woke: list[float] = []

            def wait(
                token: str = token, woke: list[float] = woke, ready: threading.Event = ready
            ) -> None:
                seen = runner.data_version()
                ready.set()
                while True:
                    seen = runner.wait_for_change(seen, 10)
                    got = runner.get(token)
                    if got is not None and got.status == "approved":
                        woke.append(time.perf_counter())
                        return

            thread = threading.Thread(target=wait)
            thread.start()
            ready.wait()
            time.sleep(0.02)  # the waiter is asleep in wait_for_change
            started = time.perf_counter()
            decide(approver, token)
            thread.join(15)
            out.append(woke[0] - started)
    return out


def fill(location: Any, n: int) -> None:
    """n pending actions in one transaction (one commit: the figure is the inbox's, not the
    disk's fsyncs)."""
    now = time.time()
    rows = []
    for i in range(n):
        args = {"path": f"/srv/data/file-{i:05d}.csv", "missing_ok": i % 2 == 0}
        rows.append(
            (
                new_token(),
                "human_confirm",
                "delete_file",
                "1.0.0",
                "a" * 64,
                str(ROOT / "sample_tools" / "delete_file.py"),
                canonical_json(args),
                args_sha256(args),
                "Tool is marked capabilities.human_confirm: true.",
                "pending",
                now_iso(now - n + i),
                now_iso(now + 3600),
            )
        )
    sql = (
        "INSERT INTO actions (token, kind, tool, version, source_sha256, tool_path, args_json, "
        "args_sha256, reason, status, created_at, expires_at) VALUES ({})"
    )
    open_store(location).close()  # the schema
    if isinstance(location, DatabaseURL):
        import psycopg

        with psycopg.connect(location.secret_url) as conn, conn.cursor() as cur:
            cur.executemany(sql.format(", ".join(["%s"] * 12)).encode(), rows)
    else:
        import sqlite3

        with sqlite3.connect(location) as db:
            db.executemany(sql.format(", ".join("?" * 12)), rows)


def list_json(
    locations: dict[str, Any], runs: int = 3, compare_with: Path | None = None
) -> dict[str, dict[str, float]]:
    """For each store: median wall and CPU time (user + system) of a fresh
    `patch-tui inbox list --json` process, and of the baseline `patch-tui --version` beside
    it. The runs are interleaved (baseline, then each store, then again): this machine's
    speed drifts by a third within seconds, and interleaving gives every figure the same
    drift. One untimed round first (it compiles what the next ones import).
    `compare_with`: another checkout of patch-tui (an older commit, say) whose listing is run
    in the same turns, from that folder (`python -m` imports the code of the folder it starts
    in; the venv is this one's)."""
    listing = ("inbox", "list", "--json")
    commands = {"start": (ROOT, ("--version",)), "list_json": (ROOT, listing)}
    if compare_with is not None:
        commands["list_json_compared"] = (compare_with, listing)
    times: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for round_ in range(runs + 1):
        for backend, location in locations.items():
            env = {
                **_cached_bytecode(),
                "PATCH_TUI_STORE": getattr(location, "secret_url", str(location)),
            }
            for figure, (checkout, args) in commands.items():
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                started = time.perf_counter()
                done = subprocess.run(
                    [sys.executable, "-m", "patch_tui", *args],
                    capture_output=True,
                    env=env,
                    timeout=120,
                    cwd=checkout,
                )
                wall = time.perf_counter() - started
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
                assert done.returncode == 0, done.stderr[-500:]
                if round_:
                    times.setdefault((backend, figure), []).append((wall, cpu))
    out: dict[str, dict[str, float]] = {}
    for (backend, figure), measured in times.items():
        out.setdefault(backend, {})[f"{figure}_s"] = statistics.median(w for w, _ in measured)
        out[backend][f"{figure}_cpu_s"] = statistics.median(c for _, c in measured)
    return out


def _cached_bytecode() -> dict[str, str]:
    """The environment of a measured process: Python may keep its bytecode (an environment with
    PYTHONDONTWRITEBYTECODE compiles every module in every process), in the venv as make test
    keeps it."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.setdefault("PYTHONPYCACHEPREFIX", str(ROOT / ".venv" / "pycache"))
    return env


async def tui_open(location: Any) -> tuple[float, float, float]:
    """Seconds from pushing the inbox screen to: the first frame with the newest rows and the
    first action's details, the frame with the details' tool part too (its capabilities), and
    the whole list loaded with the app idle."""
    from textual.app import App

    from patch_tui.settings.config import Settings
    from patch_tui.ui.inbox.inbox import InboxScreen
    from patch_tui.ui.services import Services, ServicesHost

    where = getattr(location, "secret_url", location)

    class Host(ServicesHost, App[None]):
        def __init__(self) -> None:
            super().__init__()
            self.services = Services(
                settings=Settings(watch_tools=False, watch_themes=False), store_path=where
            )

    app = Host()
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.pause()
        screen = InboxScreen()
        painted: list[float] = []
        tool_part: list[float] = []
        display = app._display

        def shown(on: Any, renderable: Any) -> None:
            # `App._display` hands each screen update to the terminal (headless: it stops
            # there): the first one after the rows and the first action's details were set,
            # and the first with the details' tool part (which may follow that frame).
            display(on, renderable)
            if renderable is None or tool_part or on is not screen or not screen.is_mounted:
                return
            args = str(screen.query_one("#detail-args").render())
            if not (
                screen.list.actions and screen.current is not None and "canonical JSON" in args
            ):
                return
            if not painted:
                painted.append(time.perf_counter())
            if "human_confirm" in str(screen.query_one("#detail-tool").render()):
                tool_part.append(time.perf_counter())

        app._display = shown  # type: ignore[method-assign]
        started = time.perf_counter()
        app.push_screen(screen)
        while not tool_part:
            await asyncio.sleep(0.001)
        while screen.load_count < 1:
            await asyncio.sleep(0.001)
        await pilot.pause()
        full = time.perf_counter() - started
        return painted[0] - started, tool_part[0] - started, full


async def serves(location: Any, tmp: Path, processes: int, calls: int) -> tuple[float, int, int]:
    """`processes` serve processes, `calls` held calls each, all at once: (wall s, calls that
    did not answer confirmation_required, actions in the store)."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    box = tmp / "box"
    (box / "tools").mkdir(parents=True, exist_ok=True)
    (box / "tools" / "bench_hold.py").write_text(MARK)
    env = {
        **_cached_bytecode(),
        "PATCH_TUI_STORE": getattr(location, "secret_url", str(location)),
        "PATCH_TUI_TOOLBOX": str(box),
        "PATCH_TUI_CONFIG": str(tmp / "config.toml"),
        "PATCH_TUI_CONFIRM_WAIT": "0",
    }
    failures = 0

    async def one() -> None:
        nonlocal failures
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "patch_tui", "serve"], env=env
        )
        with open(os.devnull, "w") as errlog:
            async with Client(
                stdio_client(params, errlog=errlog), mode="legacy", cache=None
            ) as client:
                for i in range(calls):
                    result = await client.call_tool("bench_hold", {"n": i})
                    answer = result.structured_content or {}
                    if answer.get("status") != "confirmation_required":
                        failures += 1
                        if os.environ.get("BENCH_DEBUG"):
                            print(result, file=sys.stderr)

    with open_store(location) as store:
        before = len(store.list_actions(statuses=None))
    started = time.perf_counter()
    async with asyncio.TaskGroup() as group:
        for _ in range(processes):
            group.create_task(one())
    wall = time.perf_counter() - started
    with open_store(location) as store:
        held = len(store.list_actions(statuses=None)) - before
    return wall, failures, held


# -- the stores -------------------------------------------------------------------------------


@contextmanager
def pg_schema(url: str) -> Any:
    """A schema of its own in the given database, dropped afterwards."""
    import psycopg

    name = "bench_" + uuid.uuid4().hex[:10]
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {name}".encode())
    sep = "&" if "?" in url else "?"
    try:
        yield DatabaseURL(f"{url}{sep}options=-csearch_path%3D{name}")
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {name} CASCADE".encode())


@contextmanager
def pg_url(given: str) -> Any:
    if given != "pgserver":
        yield given
        return
    from pgkit import PgServer

    server = PgServer.create()
    try:
        server.start()
        yield server.url("postgres")
    finally:
        server.remove()


def measure(location: Any, tmp: Path, args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if args.only == "all":
        woke = wakeups(location, args.wakeups)
        out["wake_p50_ms"], out["wake_p95_ms"] = pct(woke, 50) * 1000, pct(woke, 95) * 1000
        wall, failures, held = asyncio.run(serves(location, tmp, args.serves, args.calls))
        out["serve_wall_s"], out["serve_failures"], out["serve_held"] = wall, failures, held
    fill(location, args.pending)
    if args.only in ("all", "tui"):
        runs = [asyncio.run(tui_open(location)) for _ in range(args.tui_runs)]
        out["tui_first_s"] = statistics.median(first for first, _, _ in runs)
        out["tui_tool_s"] = statistics.median(tool for _, tool, _ in runs)
        out["tui_full_s"] = statistics.median(full for _, _, full in runs)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", required=True, help="postgresql://… (loopback) or pgserver")
    parser.add_argument("--pending", type=int, default=10_000)
    parser.add_argument("--wakeups", type=int, default=40)
    parser.add_argument("--serves", type=int, default=10)
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3, help="fresh processes per list figure")
    parser.add_argument(
        "--only",
        choices=("all", "list", "tui"),
        default="all",
        help="list: only `inbox list --json` (and its baseline); tui: only the TUI inbox open",
    )
    parser.add_argument(
        "--tui-runs", type=int, default=1, help="TUI inbox openings measured (their median)"
    )
    parser.add_argument(
        "--compare-with",
        type=Path,
        metavar="CHECKOUT",
        help="another checkout of patch-tui (e.g. `git worktree add /tmp/old <commit>`): its "
        "`inbox list --json` measured in the same turns",
    )
    args = parser.parse_args(argv)
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["PATCH_TUI_CONFIG"] = str(Path(tmp) / "config.toml")
        os.environ["XDG_STATE_HOME"] = str(Path(tmp) / "state")
        (Path(tmp) / "sqlite").mkdir()
        results["SQLite"] = measure(
            Path(tmp) / "sqlite" / "store.sqlite3", Path(tmp) / "sqlite", args
        )
        with pg_url(args.store) as url, pg_schema(url) as location:
            (Path(tmp) / "pg").mkdir()
            results["PostgreSQL"] = measure(location, Path(tmp) / "pg", args)
            if args.only in ("all", "list"):
                # Both stores filled: `inbox list --json` on each, and the baseline, in turns.
                listed = list_json(
                    {"SQLite": Path(tmp) / "sqlite" / "store.sqlite3", "PostgreSQL": location},
                    args.runs,
                    args.compare_with,
                )
                for backend, figures in listed.items():
                    results[backend].update(figures)
    rows = [
        ("approve-to-runner wake-up p50", "wake_p50_ms", "{:.1f} ms"),
        ("approve-to-runner wake-up p95 (target <= 100 ms)", "wake_p95_ms", "{:.1f} ms"),
        ("baseline: `patch-tui --version`, a fresh process", "start_s", "{:.2f} s"),
        ("  ... its CPU time", "start_cpu_s", "{:.2f} s"),
        (f"inbox list --json, {args.pending:,} pending (<= 0.5 s)", "list_json_s", "{:.2f} s"),
        ("  ... its CPU time (user + system)", "list_json_cpu_s", "{:.2f} s"),
        ("  ... the same from --compare-with's checkout", "list_json_compared_s", "{:.2f} s"),
        ("  ... its CPU time", "list_json_compared_cpu_s", "{:.2f} s"),
        (
            f"TUI inbox open, first frame, {args.pending:,} pending (<= 0.5 s)",
            "tui_first_s",
            "{:.2f} s",
        ),
        ("  ... the details' tool part shown too", "tui_tool_s", "{:.2f} s"),
        (f"TUI inbox, whole list loaded, {args.pending:,}", "tui_full_s", "{:.2f} s"),
        (
            f"{args.serves} serve processes x {args.calls} held calls: wall",
            "serve_wall_s",
            "{:.1f} s",
        ),
        ("  ... actions recorded", "serve_held", "{}"),
        ("  ... calls that failed", "serve_failures", "{}"),
    ]
    load = os.getloadavg()
    print(f"load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} on {os.cpu_count()} cores")
    print(f"{'':<62}{'SQLite':>12}{'PostgreSQL':>14}")
    for label, key, fmt in rows:
        if key not in results["SQLite"]:
            continue  # not measured (--only)
        cells = [fmt.format(results[b][key]) for b in ("SQLite", "PostgreSQL")]
        print(f"{label:<62}{cells[0]:>12}{cells[1]:>14}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
