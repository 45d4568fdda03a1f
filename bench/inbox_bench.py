"""Inbox at scale: open time and cursor latency with 10,000 pending actions.

    .venv/bin/python bench/inbox_bench.py [--n 10000] [--moves 200]

Measures, in a headless app of 100x32:
- store read: `list_actions()` of N pending actions (what the poll worker does, off the UI thread);
- open: from pushing the inbox screen to the first frame written with the newest rows and the
  first action's details, and to every row loaded and painted;
- cursor: one key press (down / pagedown / end) to its processed repaint, median / p95 / max;
  and, without Pilot's own waits, a Key event from the driver to the first frame written with
  the moved cursor;
- live: a new action created by another Store until it shows in the open list.
The actions are inserted in one transaction (one fsync), not through create_pending one by one
(10,000 fsyncs measure the disk, not the inbox).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def fill(store_path: Path, n: int) -> None:
    import sqlite3

    from patch_tui.approvals.store import Store, args_sha256, canonical_json, new_token, now_iso
    from patch_tui.format import toolfile

    tool = REPO / "sample_tools" / "delete_file.py"
    tf = toolfile.read(tool)
    Store(store_path).close()  # the schema
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
                tf.sha256,
                str(tool),
                canonical_json(args),
                args_sha256(args),
                "Tool is marked capabilities.human_confirm: true.",
                "pending",
                now_iso(now - n + i),
                now_iso(now + 3600),
            )
        )
    with sqlite3.connect(store_path) as db:
        db.executemany(
            "INSERT INTO actions (token, kind, tool, version, source_sha256, tool_path, args_json, "
            "args_sha256, reason, status, created_at, expires_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            rows,
        )


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def measure(store_path: Path, moves: int) -> dict[str, float]:
    from textual.app import App

    from patch_tui.approvals.store import Store
    from patch_tui.settings.config import Settings
    from patch_tui.ui.inbox.inbox import InboxScreen
    from patch_tui.ui.services import Services, ServicesHost

    class Host(ServicesHost, App[None]):
        """The inbox screen pushed into a running app: its own cost, not the app's start-up."""

        def __init__(self) -> None:
            super().__init__()
            self.services = Services(
                settings=Settings(watch_tools=False, watch_themes=False), store_path=store_path
            )

    out: dict[str, float] = {}
    with Store(store_path) as s:
        t = time.perf_counter()
        listed = s.list_actions()
        out["store_read_s"] = time.perf_counter() - t
        out["rows"] = len(listed)
    app = Host()
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.pause()
        screen = InboxScreen()
        painted: list[float] = []
        shown_first = app._display

        def first_frame(on: object, renderable: object) -> None:
            # The first frame written with the newest rows and the first action's args (the
            # rest of the list is read after it; Pilot's pause() would wait for that too).
            shown_first(on, renderable)  # type: ignore[arg-type]
            if renderable is None or painted or on is not screen or not screen.is_mounted:
                return
            if screen.current is not None and "canonical JSON" in str(
                screen.query_one("#detail-args").render()
            ):
                painted.append(time.perf_counter())

        app._display = first_frame  # type: ignore[method-assign]
        t = time.perf_counter()
        app.push_screen(screen)
        while not painted:
            await asyncio.sleep(0.001)
        out["open_s"] = painted[0] - t
        app._display = shown_first  # type: ignore[method-assign]
        while screen.load_count < 1:
            await asyncio.sleep(0.001)
        await pilot.pause()
        out["full_s"] = time.perf_counter() - t
        assert len(screen.list.actions) == out["rows"]
        # A key the inbox ignores: what Pilot itself costs per press on this machine.
        for key in ("noop", "down", "pagedown", "end"):
            times = []
            for i in range(moves if key in ("down", "noop") else 20):
                k = {"noop": "f20"}.get(key, key)
                if key == "end" and i % 2:
                    k = "home"
                t = time.perf_counter()
                await pilot.press(k)
                times.append(time.perf_counter() - t)
            out[f"{key}_median_ms"] = statistics.median(times) * 1000
            out[f"{key}_p95_ms"] = pct(times, 0.95) * 1000
            out[f"{key}_max_ms"] = max(times) * 1000
        # What a person waits for: a key from the terminal (a Key event from the driver, no
        # Pilot waits) to the first frame written with the moved cursor (App._display).
        from textual import events

        frames: list[float] = []
        original = app._display

        def display(screen_: object, renderable: object) -> None:
            original(screen_, renderable)  # type: ignore[arg-type]
            if renderable is not None:
                frames.append(time.perf_counter())

        app._display = display  # type: ignore[method-assign]
        painted = []
        for i in range(moves):
            key = "down" if i % 2 == 0 else "up"
            before = screen.list.cursor
            event = events.Key(key, None)
            event.set_sender(app)
            t = time.perf_counter()
            app._driver.send_message(event)  # type: ignore[union-attr]
            while screen.list.cursor == before:
                await asyncio.sleep(0)
            moved = time.perf_counter()
            while not frames or frames[-1] < moved:
                await asyncio.sleep(0.0005)
            painted.append(frames[-1] - t)
            await pilot.pause(0.01)
        app._display = original  # type: ignore[method-assign]
        out["key_to_frame_median_ms"] = statistics.median(painted) * 1000
        out["key_to_frame_p95_ms"] = pct(painted, 0.95) * 1000
        out["key_to_frame_max_ms"] = max(painted) * 1000
        # The inbox's own work for one step: move the cursor and render every visible row,
        # then (once the cursor rests) build the detail pane.
        lst = screen.list
        steps = []
        for _ in range(moves):
            t = time.perf_counter()
            lst.action_cursor(1)
            for y in range(lst.size.height):
                lst.render_line(y)
            steps.append(time.perf_counter() - t)
        out["step_median_ms"] = statistics.median(steps) * 1000
        out["step_max_ms"] = max(steps) * 1000
        details = []
        for i in range(50):
            t = time.perf_counter()
            screen._show_detail(lst.actions[i])
            details.append(time.perf_counter() - t)
        out["detail_median_ms"] = statistics.median(details) * 1000
        # Live arrival with 10,000 rows listed.
        before = len(screen.list.actions)
        from patch_tui.format import toolfile

        tf = toolfile.read(REPO / "sample_tools" / "delete_file.py")
        with Store(store_path, actor="agent") as other:
            t = time.perf_counter()
            other.create_pending(
                "human_confirm", "delete_file", "1.0.0", tf.sha256, {"path": "/new"}, "r"
            )
        while len(screen.list.actions) == before:
            await asyncio.sleep(0.005)
        out["live_arrival_s"] = time.perf_counter() - t
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--moves", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["PATCH_TUI_CONFIG"] = str(Path(tmp) / "config.toml")
        store_path = Path(tmp) / "store.sqlite3"
        t = time.perf_counter()
        fill(store_path, args.n)
        print(f"filled {args.n} pending actions in {time.perf_counter() - t:.2f} s")
        result = asyncio.run(measure(store_path, args.moves))
    print(
        f"store read (worker thread): {result['store_read_s'] * 1000:.0f} ms for {int(result['rows'])} rows"
    )
    print(
        f"open (push to the first frame with rows and details): {result['open_s'] * 1000:.0f} ms"
        "   target < 500 ms"
    )
    print(f"whole list loaded and painted: {result['full_s'] * 1000:.0f} ms")
    base = result["noop_median_ms"]
    print(f"pilot press of an ignored key (harness cost): median {base:.1f} ms")
    for key in ("down", "pagedown", "end"):
        print(
            f"cursor {key:<8} press median {result[f'{key}_median_ms']:.1f} ms"
            f" (net of harness {result[f'{key}_median_ms'] - base:.1f} ms)"
            f"  p95 {result[f'{key}_p95_ms']:.1f} ms  max {result[f'{key}_max_ms']:.1f} ms   target < 50 ms"
        )
    print(
        f"cursor key to the frame that shows it (driver Key event, no Pilot waits):"
        f" median {result['key_to_frame_median_ms']:.1f} ms, p95 {result['key_to_frame_p95_ms']:.1f} ms,"
        f" max {result['key_to_frame_max_ms']:.1f} ms   target < 50 ms"
    )
    print(
        f"cursor step + render of every visible row: median {result['step_median_ms']:.2f} ms,"
        f" max {result['step_max_ms']:.2f} ms; detail pane build: median {result['detail_median_ms']:.2f} ms"
    )
    print(
        f"live arrival with {int(result['rows'])} listed: {result['live_arrival_s'] * 1000:.0f} ms   target < 1 s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
