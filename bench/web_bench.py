"""Web inbox benchmarks (issue 29, item 6).

    .venv/bin/python bench/web_bench.py [--rounds 50] [--arrivals 10]

Figures, on loopback, with `patch-tui web` running as a real process (uvicorn) and a session
opened by a real passkey (chromium's virtual authenticator):
- the action page's time to first byte (a session's GET /actions/TOKEN: the store read, the
  review of the tool file, the diff, the template), median and p95, against the same server's
  first byte for a static file in the same run (the floor: HTTP, uvicorn, the middleware);
  budget 50 ms;
- a live arrival: from the commit of a held call (the agent's side) to the row on an open list
  page (the store watcher's poll, the SSE event, the fragment fetched and drawn), measured in the
  browser with a MutationObserver on the same clock; against the watcher alone seeing the same
  commit in process (the floor: the poll interval); budget 500 ms.

Needs Debian's chromium (`apt-get install chromium`) and the dev tools (`make test` installs
them). Everything happens in a temporary folder.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from patch_tui.approvals.store import Store  # noqa: E402
from patch_tui.approvals.watcher import StoreWatcher  # noqa: E402
from tests.runtimekit import hold_mark, mark_box  # noqa: E402
from tests.webkit import (  # noqa: E402
    Phone,
    browser,
    browser_missing,
    enroll_link,
    ssh_key,
    web_server,
    write_approvers,
)

OBSERVER = """
() => { window.__arrival = new Promise((resolve) => {
  const holder = document.getElementById("live-list");
  const before = holder.querySelectorAll(".action-row").length;
  const seen = new MutationObserver(() => {
    if (holder.querySelectorAll(".action-row").length > before) {
      seen.disconnect();
      resolve(performance.timeOrigin + performance.now());
    }
  });
  seen.observe(holder, { childList: true, subtree: true });
}); return true; }
"""


def ms(seconds: float) -> float:
    return round(seconds * 1000, 2)


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1))))]


def first_byte(client: object, path: str, rounds: int) -> list[float]:
    import httpx

    assert isinstance(client, httpx.Client)
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        with client.stream("GET", path) as answer:
            next(answer.iter_raw(1))
            times.append(time.perf_counter() - t0)
            assert answer.status_code == 200, (path, answer.status_code)
    return times


def watcher_floor(store_path: Path, n: int, interval: float) -> list[float]:
    """How long the store watcher alone takes to see a commit when it polls on a fixed tick, as
    the web app's does, the commit landing at every phase of the tick in turn."""
    with Store(store_path) as store:
        watcher = StoreWatcher(lambda: store)
        watcher.poll()
        delays = []
        for i in range(n):
            tick = time.monotonic()
            time.sleep(interval * (i % 5) / 5)
            committed = time.monotonic()
            store.create_pending("human_confirm", "mark", "1", "0" * 64, {"i": i}, "bench")
            while True:
                tick += interval
                time.sleep(max(0.0, tick - time.monotonic()))
                changed = watcher.poll()
                if changed is not None and changed.arrived:
                    delays.append(time.monotonic() - committed)
                    break
    return delays


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--arrivals", type=int, default=10)
    opts = parser.parse_args()
    missing = browser_missing()
    if missing is not None:
        print(f"web_bench: skipped: {missing}")
        return 0
    import httpx

    with tempfile.TemporaryDirectory(prefix="patch-tui-web-bench-") as tmp_name:
        tmp = Path(tmp_name)
        box = mark_box(tmp)
        key, pub = ssh_key(tmp / "keys", "alice")
        approvers = tmp / "approvers.toml"
        write_approvers(approvers, [("alice", pub)])
        token = hold_mark(box, "bench " * 40)
        with web_server(box["env"], approvers, store=box["store"]) as server, browser() as b:
            phone = Phone(b)
            phone.enroll(enroll_link(server, "alice", key))
            [cookie] = phone.context.cookies()
            with httpx.Client(base_url=server.url, timeout=10) as client:
                client.cookies.set(cookie["name"], cookie["value"])
                first_byte(client, f"/actions/{token}", 5)  # warm: imports, catalog
                page = first_byte(client, f"/actions/{token}", opts.rounds)
                static = first_byte(client, "/static/icon.svg", opts.rounds)

            arrivals = []
            phone.page.goto(server.url + "/")
            for _ in range(opts.arrivals):
                phone.page.evaluate(OBSERVER)
                committed = time.time()
                with Store(box["store"], actor="agent") as store:
                    store.create_pending("human_confirm", "mark", "1", "0" * 64, {}, "bench")
                arrivals.append(phone.page.evaluate("window.__arrival") / 1000 - committed)
                time.sleep(0.05)
        floor = watcher_floor(tmp / "floor.sqlite3", opts.arrivals, 0.2)

    page_median, static_median = statistics.median(page), statistics.median(static)
    arrival_median, floor_median = statistics.median(arrivals), statistics.median(floor)
    report = {
        "action_page_first_byte": {
            "rounds": opts.rounds,
            "median_ms": ms(page_median),
            "p95_ms": ms(pct(page, 95)),
            "static_file_median_ms": ms(static_median),
            "ratio_to_static": round(page_median / static_median, 2),
            "budget_ms": 50,
        },
        "live_arrival": {
            "arrivals": opts.arrivals,
            "median_ms": ms(arrival_median),
            "max_ms": ms(max(arrivals)),
            "watcher_alone_median_ms": ms(floor_median),
            "ratio_to_watcher": round(arrival_median / floor_median, 2),
            "budget_ms": 500,
        },
    }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
