"""TUI benchmarks (issue 4, item 9; issue 27).

(a) first frame, in a real terminal: tmux runs each app in a pane of 120x36 and reads its screen
    (control mode: after each output of the pane, `capture-pane`) until the frame shows:
    - bare: a bare Textual app with Header, a TextArea holding the tool's source, and Footer;
    - desk: `patch-tui TOOL` with the tool's name in the manifest form and its source shown;
    - inbox: `patch-tui inbox` on a store of --pending actions, the list and the first
      action's details shown (its args); and, in the same samples, the details' tool part
      (the capabilities from the tool's validated manifest), which follows that frame.
    Each sample is a fresh process started by tmux (imports count, as they do for a person),
    quit with ctrl+q; the three alternate so machine load hits each alike. Median of --runs,
    with the bytecode cache (as installed) and without it (every module compiled). Target:
    desk / bare and inbox / bare <= 1.5.
(imports) `python -X importtime` of the desk's start, headless, up to its first frame: what it
    imports beyond the bare app, and the ten largest single import costs; the same for
    `patch-tui inbox` on --pending actions.
(b) keystroke -> updated diagnostics on a 300-line tool, in one process with Pilot: the time from
    the debounced re-parse firing to the lint panel showing the new diagnostics (p95, target
    <= 50 ms), and the debounce itself (target <= 150 ms).
(c) outside change -> the open (clean) tool showing it: watcher + reload (target <= 250 ms).

    .venv/bin/python bench/tui_bench.py [--runs N] [--pending N] [--only PART] [--apps desk,inbox]
        [--json]

A headless child (--child bare|floor|desk PATH, for the import profile) writes READY on stdout
when the app writes its first frame with the content (`report_frames`), then SETTLED.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import select
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SIZE = (120, 36)
# A child in a real terminal (tmux) runs its app as a person does: no headless driver.
TTY = "--tty" in sys.argv


# -- children -------------------------------------------------------------------------------------


def _say(word: bytes) -> None:
    # Textual captures print() while an app runs; write to the real stdout.
    os.write(1, word + b"\n")


def report_frames(app: Any, shows_content: Any) -> None:
    """Say READY when the app writes its first frame that shows the content, then SETTLED once
    the screen has nothing left to lay out or paint, then exit.

    "Writes a frame" is `App._display`, the one call that hands a screen update to the
    terminal (headless, it stops there instead of encoding the update as escape codes, for both
    apps alike). Wrapping it catches the first frame exactly: waiting for `wait_for_refresh()`
    instead would also wait for whatever the app rightly does after that frame (sections
    mounted below the fold, the first lint in a thread)."""
    original = app._display
    said: list[bool] = []

    def display(screen: Any, renderable: Any) -> None:
        original(screen, renderable)
        if said or renderable is None or app._batch_count or screen is not app.screen:
            return
        if shows_content(app):
            said.append(True)
            _say(b"READY")
            if os.environ.get("TUI_BENCH_EXIT_AT_READY"):
                os._exit(0)  # the import profile: what was imported before the first frame
            app.call_later(settle)

    async def settle() -> None:
        await app.screen.wait_for_refresh()
        _say(b"SETTLED")
        app.exit()

    app._display = display


def child_bare() -> None:
    from textual.app import App, ComposeResult
    from textual.widgets import Footer, Header, Static

    class Bare(App[None]):
        def compose(self) -> ComposeResult:
            yield Header()
            yield Static("Hello from a bare Textual app", id="body")
            yield Footer()

    app = Bare()
    if TTY:
        app.run()
        return
    report_frames(app, lambda a: bool(a.screen.query("#body")))
    app.run(headless=True, size=SIZE)


def child_floor(path: str) -> None:
    """The least any Textual app showing this tool's source does: Header, a TextArea with the
    file and line numbers, Footer. Its ratio to the bare app is the floor under the desk's."""
    from textual.app import App, ComposeResult
    from textual.widgets import Footer, Header, TextArea

    text = Path(path).read_text(encoding="utf-8")

    class Floor(App[None]):
        def compose(self) -> ComposeResult:
            yield Header()
            yield TextArea(text, show_line_numbers=True, soft_wrap=False, id="source")
            yield Footer()

    app = Floor()
    if TTY:
        app.run()
        return
    report_frames(app, lambda a: bool(a.screen.query("#source")))
    app.run(headless=True, size=SIZE)


_found: dict[str, Any] = {}


def desk_is_ready(app: Any) -> bool:
    """The desk shows a tool: its source in the source pane and its manifest in the form.
    Widgets are looked up once and then kept, so checking does not slow the start it measures."""
    from patch_tui.ui.desk.manifest_form import ManifestForm
    from patch_tui.ui.desk.source_pane import SourceArea

    if "form" not in _found:
        screen = app.screen
        sources = screen.query(SourceArea)
        forms = screen.query(ManifestForm)
        if not sources or not forms:
            return False
        _found["source"], _found["form"] = sources.first(), forms.first()
    source, form = _found["source"], _found["form"]
    if not source.text or not form.is_populated:
        return False
    name = form.widget_for(("name",))
    return getattr(name, "value", None) == "bench_tool"


def build_desk(path: str) -> Any:
    """The app as `patch-tui PATH` builds it."""
    from patch_tui import cli  # noqa: F401  # the entry point's import cost counts too
    from patch_tui.commands import tui

    return tui.start_app(tui.parse_for_bench(path))


def child_desk(path: str) -> None:
    # Watchers are not part of the first frame (they start after it, in workers).
    os.environ["PATCH_TUI_WATCH_TOOLS"] = "false"
    os.environ["PATCH_TUI_WATCH_THEMES"] = "false"
    app = build_desk(path)
    report_frames(app, desk_is_ready)
    app.run(headless=True, size=SIZE)


def inbox_is_ready(app: Any) -> bool:
    """The inbox shows its list and the first action's args in the details."""
    from patch_tui.ui.inbox.inbox import InboxScreen

    screen = app.screen
    if not isinstance(screen, InboxScreen) or not screen.is_mounted or screen.current is None:
        return False
    return "canonical JSON" in str(screen.query_one("#detail-args").render())


def child_inbox(store: str) -> None:
    """`patch-tui inbox` as the command builds it (its settings read plainly), headless."""
    from patch_tui import cli  # noqa: F401  # the entry point's import cost counts too
    from patch_tui.commands import inboxcmd  # noqa: F401
    from patch_tui.settings.config import start_settings
    from patch_tui.ui.inbox.inbox_app import InboxApp

    app = InboxApp(store, settings=start_settings())
    report_frames(app, inbox_is_ready)
    app.run(headless=True, size=SIZE)


# -- (a) start-up, in a real terminal ------------------------------------------------------------


class TmuxTerminal:
    """A real terminal: one tmux pane of SIZE, its screen read through tmux's control mode (the
    pane's output arrives as `%output` lines; after each, `capture-pane` reads the screen as a
    person sees it). No polling process is spawned, so the measuring costs both apps alike."""

    def __init__(self, workdir: Path) -> None:
        # A server of its own each time: the previous one (the same process's) may still be
        # ending after kill-server, and a new session of the same name on it fails.
        self.sock = f"tui-bench-{os.getpid()}-{time.monotonic_ns()}"
        conf = workdir / "tmux.conf"
        # remain-on-exit: the pane (and the server) outlive the app between samples.
        conf.write_text("set -g status off\nset -g remain-on-exit on\n", encoding="utf-8")
        self.base = ["tmux", "-L", self.sock, "-f", str(conf)]
        width, height = SIZE
        # The pane starts in this checkout: `python -m patch_tui` puts the working folder first
        # on sys.path, so a bench started from another checkout's folder ran that one's code.
        subprocess.run(
            [*self.base, "new-session", "-d", "-c", str(REPO), "-x", str(width), "-y", str(height)]
            + ["-s", "bench"],
            check=True,
        )
        self.ctl = subprocess.Popen(
            [*self.base, "-C", "attach", "-t", "bench"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            bufsize=0,
        )
        self.pending = b""
        self.command(f"refresh-client -C {width}x{height}")

    def _lines(self, deadline: float) -> Iterator[bytes]:
        assert self.ctl.stdout is not None
        while True:
            while b"\n" in self.pending:
                line, self.pending = self.pending.split(b"\n", 1)
                yield line
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.ctl.stdout], [], [], left)[0]:
                return
            chunk = os.read(self.ctl.stdout.fileno(), 65536)
            if not chunk:
                raise SystemExit("tui_bench: the tmux server ended")
            self.pending += chunk

    def command(self, line: str, deadline: float | None = None) -> list[bytes]:
        """Run one tmux command; its output lines (between %begin and %end)."""
        assert self.ctl.stdin is not None
        self.ctl.stdin.write(line.encode() + b"\n")
        out: list[bytes] = []
        inside = False
        for got in self._lines(deadline or time.monotonic() + 10):
            if got.startswith(b"%begin"):
                inside, out = True, []
            elif inside and got.startswith((b"%end", b"%error")):
                return out
            elif inside:
                out.append(got)
        raise SystemExit(f"tui_bench: tmux did not answer {line!r}")

    def screen(self, deadline: float) -> str:
        lines = self.command("capture-pane -p -t bench", deadline)
        return b"\n".join(lines).decode(errors="replace")

    def first_frame(self, command: str, shows: Callable[[str], bool], timeout: float = 60) -> float:
        """Seconds from starting `command` in the pane to the screen showing what `shows`
        looks for; then the app is quit with ctrl+q, as a person quits it."""
        return self.frames(command, [shows], timeout)[0]

    def frames(
        self, command: str, stages: list[Callable[[str], bool]], timeout: float = 60
    ) -> list[float]:
        """Seconds from starting `command` in the pane to the screen showing what each stage
        looks for, in turn (a later stage may hold on the same screen); then ctrl+q."""
        start = time.perf_counter()
        self.command(
            f"respawn-pane -k -c {shlex.quote(str(REPO))} -t bench " + shlex.quote(command)
        )
        deadline = time.monotonic() + timeout
        elapsed: list[float] = []
        while True:
            screen = self.screen(deadline)
            while len(elapsed) < len(stages) and stages[len(elapsed)](screen):
                elapsed.append(time.perf_counter() - start)
            if len(elapsed) == len(stages):
                break
            if time.monotonic() > deadline:
                raise SystemExit(f"tui_bench: no first frame from {command!r}:\n{screen}")
            for got in self._lines(deadline):  # until the pane writes again
                if got.startswith(b"%output"):
                    break
        self.quit(deadline)
        return elapsed

    def quit(self, deadline: float) -> None:
        # Killing a Textual app's pane (respawn-pane -k) crashes tmux 3.3a: quit it instead.
        self.command("send-keys -t bench C-q")
        while self.command('display -p -t bench "#{pane_dead}"') != [b"1"]:
            if time.monotonic() > deadline:
                raise SystemExit("tui_bench: the app did not quit on ctrl+q")
            time.sleep(0.02)

    def close(self) -> None:
        subprocess.run([*self.base, "kill-server"], capture_output=True)
        self.ctl.kill()
        self.ctl.wait()


def _shell(env: dict[str, str], argv: list[str]) -> str:
    """The pane's command: `env` (what differs from the tmux server's) and the app."""
    assignments = [f"{k}={v}" for k, v in env.items() if os.environ.get(k) != v]
    unset = [f"-u{k}" for k in ("PYTHONDONTWRITEBYTECODE",) if k in os.environ and k not in env]
    return shlex.join(["env", *unset, *assignments, *argv])


def _shows_source(screen: str) -> bool:
    # Two lines of the source that both apps show in their first frame: at 120x36 the desk's
    # source pane shows the first 22 lines until its first lint shrinks the problems panel
    # (the body's `def main`, line 26, showed only then, so the desk was timed to its lint).
    return "# name: bench_tool" in screen and "# runtime:" in screen


def _shows_desk(screen: str) -> bool:
    # The form's name field (`name   bench_tool`, unlike the source's `# name: bench_tool`).
    return _shows_source(screen) and re.search(r"\bname +bench_tool\b", screen) is not None


def _shows_inbox(first_path: str) -> Callable[[str], bool]:
    def shows(screen: str) -> bool:
        # The list's first row and the first action's args in the detail below it.
        return screen.count(first_path) >= 2 and "args (canonical JSON" in screen

    return shows


def _shows_inbox_tool(screen: str) -> bool:
    # The details' tool part: the capabilities of the validated manifest (delete_file's).
    return "human_confirm true" in screen


def bench_startup(
    runs: int,
    tool: Path,
    inbox_store: Path,
    first_path: str,
    env: dict[str, str],
    tmp: Path,
    apps: tuple[str, ...] = ("desk", "inbox"),
) -> dict[str, Any]:
    """First frame in tmux, median of `runs`: the bare app (Header, TextArea with the tool,
    Footer), the desk on the tool, and `patch-tui inbox` on a store of pending actions. The
    three alternate so that the machine's load hits each alike."""
    me = [sys.executable, __file__]
    commands: dict[str, tuple[str, Callable[[str], bool]]] = {
        "bare": (_shell(env, [*me, "--child", "floor", str(tool), "--tty"]), _shows_source),
        "desk": (_shell(env, [sys.executable, "-m", "patch_tui", str(tool)]), _shows_desk),
        "inbox": (
            _shell(
                dict(env, PATCH_TUI_STORE=str(inbox_store)),
                [sys.executable, "-m", "patch_tui", "inbox"],
            ),
            _shows_inbox(first_path),
        ),
    }
    commands = {name: c for name, c in commands.items() if name == "bare" or name in apps}
    samples: dict[str, list[float]] = {name: [] for name in commands}
    # The inbox's details are complete once their tool part (which follows its first frame) is
    # in: timed in the same samples, so it can be held against the first frame before.
    tool_part: list[float] = []
    term = TmuxTerminal(tmp)
    try:
        for command, shows in commands.values():  # warm the page cache and the bytecode cache
            term.first_frame(command, shows)
        for _ in range(runs):
            for name, (command, shows) in commands.items():
                if name == "inbox":
                    first, complete = term.frames(command, [shows, _shows_inbox_tool])
                    samples[name].append(first)
                    tool_part.append(complete)
                else:
                    samples[name].append(term.first_frame(command, shows))
    finally:
        term.close()
    med = {name: statistics.median(xs) for name, xs in samples.items()}
    return {
        "runs": runs,
        **{f"{name}_median_ms": round(m * 1000, 1) for name, m in med.items()},
        **(
            {"inbox_tool_part_median_ms": round(statistics.median(tool_part) * 1000, 1)}
            if tool_part
            else {}
        ),
        **{f"{name}_ratio": round(m / med["bare"], 2) for name, m in med.items() if name != "bare"},
        "target_ratio": 1.5,
        **{f"{name}_ms": [round(x * 1000) for x in xs] for name, xs in samples.items()},
    }


# -- helpers --------------------------------------------------------------------------------------


def tool_of(lines: int) -> str:
    """A lint-clean tool of about `lines` lines: the `patch-tui new` template with a longer body."""
    from patch_tui.runtime.toolbox import new_tool_text

    head, _, tail = new_tool_text("bench_tool", "A tool used to measure the desk.").partition(
        'def main(text: str) -> dict:\n    return {"text": text}\n'
    )
    body = ["def main(text: str) -> dict:\n", "    total = 0\n"]
    n = 0
    while len((head + tail).splitlines()) + len(body) < lines - 1:
        body.append(f"    total += len(text) * {n}  # step {n}\n")
        n += 1
    body.append('    return {"text": text, "total": total}\n')
    return head + "".join(body) + tail


def importtime(kind: str, path: str | None, env: dict[str, str]) -> dict[str, float]:
    """`python -X importtime` of a headless child up to its first frame: milliseconds of
    import per module (its own time, not its imports')."""
    cmd = [sys.executable, "-X", "importtime", __file__, "--child", kind]
    if path:
        cmd.append(path)
    env = dict(env, TUI_BENCH_EXIT_AT_READY="1")
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=REPO, timeout=60)
    per_module: dict[str, float] = {}
    for line in out.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line or "self [us]" in line:
            continue
        self_us, _cumulative, name = (x.strip() for x in line.split(":", 1)[1].split("|"))
        per_module[name] = per_module.get(name, 0.0) + int(self_us) / 1000
    return per_module


def _imports_beyond_floor(app: str, target: str, tool: Path, env: dict[str, str]) -> dict[str, Any]:
    """What `app` (desk or inbox, opened on `target`) imports before its first frame that the
    bare app does not, and the ten largest of those imports (each module's own time,
    `-X importtime`'s "self")."""
    importtime(app, target, env)  # warm the bytecode cache
    bare = importtime("floor", str(tool), env)
    own = importtime(app, target, env)
    # The app's own: what the bare app (the same headless child, Textual itself) does not import.
    extra = {k: v for k, v in own.items() if k not in bare}
    top = sorted(extra.items(), key=lambda kv: -kv[1])[:10]
    return {
        "bare_import_ms": round(sum(bare.values()), 1),
        f"{app}_import_ms": round(sum(own.values()), 1),
        f"{app}_extra_import_ms": round(sum(extra.values()), 1),
        "top_ten_ms": {k: round(v, 1) for k, v in top},
    }


def bench_imports(tool: Path, env: dict[str, str]) -> dict[str, Any]:
    """What the desk imports before its first frame beyond the bare app."""
    return _imports_beyond_floor("desk", str(tool), tool, env)


def bench_inbox_imports(store: Path, tool: Path, env: dict[str, str]) -> dict[str, Any]:
    """As bench_imports, for `patch-tui inbox` on `store` up to its first frame."""
    return _imports_beyond_floor("inbox", str(store), tool, env)


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]


def make_env(tmp: Path, *, bytecode_cache: bool = True) -> dict[str, str]:
    env = dict(os.environ)
    env["PATCH_TUI_CONFIG"] = str(tmp / "config.toml")
    env["XDG_CONFIG_HOME"] = str(tmp / "xdg-config")
    env["XDG_STATE_HOME"] = str(tmp / "xdg-state")
    env["PATCH_TUI_STORE"] = str(tmp / "store.sqlite3")
    env["PATCH_TUI_WATCH_THEMES"] = "false"
    env["PYTHONPATH"] = str(REPO)
    if bytecode_cache:
        # Like an installed app: every module's bytecode is cached (the warm-up run writes it).
        # With PYTHONDONTWRITEBYTECODE set (some sandboxes do), every start would recompile
        # the sources and measure the compiler instead of the app.
        # The parsed stylesheets (ui/css_cache.py) are kept in the same way, by the warm-up run.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
        env["XDG_CACHE_HOME"] = str(tmp / "cache")
    else:
        # A first start after installing without compiling: every module (Textual's too, for
        # both apps alike) compiled from source, every stylesheet parsed, nothing written.
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env["PYTHONPYCACHEPREFIX"] = str(tmp / "no-pycache")
        env["XDG_CACHE_HOME"] = str(tmp / "no-cache")
    return env


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--keys", type=int, default=40, help="keystrokes for (b)")
    parser.add_argument("--pending", type=int, default=1000, help="pending actions in the inbox")
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--only", choices=["startup", "imports", "keystroke", "follow"], default=None
    )
    parser.add_argument(
        "--apps",
        default="desk,inbox",
        help="the first frames measured against the bare app (startup): desk, inbox or both",
    )
    parser.add_argument(
        "--child", choices=["bare", "desk", "floor", "inbox"], help=argparse.SUPPRESS
    )
    parser.add_argument("path", nargs="?", help=argparse.SUPPRESS)
    parser.add_argument("--tty", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child == "bare":
        child_bare()
        return 0
    if args.child == "desk":
        child_desk(args.path)
        return 0
    if args.child == "floor":
        child_floor(args.path)
        return 0
    if args.child == "inbox":
        child_inbox(args.path)
        return 0

    apps = tuple(a for a in args.apps.split(",") if a in ("desk", "inbox"))
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="tui-bench-") as tmpdir:
        tmp = Path(tmpdir)
        env = make_env(tmp)
        for key in ("PATCH_TUI_CONFIG", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "PATCH_TUI_STORE"):
            os.environ[key] = env[key]
        tools = tmp / "tools"
        tools.mkdir()
        tool = tools / "bench_tool.py"
        tool.write_text(tool_of(300), encoding="utf-8")
        sys.path.insert(0, str(Path(__file__).parent))
        from inbox_bench import fill

        store = tmp / "inbox.sqlite3"
        if args.only in (None, "startup", "imports") and "inbox" in apps:
            fill(store, args.pending)
        if args.only in (None, "startup"):
            # The newest action is listed (and detailed) first.
            first_path = f"/srv/data/file-{args.pending - 1:05d}.csv"
            for cache in (True, False):
                key = "startup" if cache else "startup_no_bytecode_cache"
                run_env = make_env(tmp, bytecode_cache=cache)
                results[key] = bench_startup(args.runs, tool, store, first_path, run_env, tmp, apps)
        if args.only in (None, "imports"):
            results["imports"] = bench_imports(tool, env)
            if "inbox" in apps:
                results["inbox_imports"] = bench_inbox_imports(store, tool, env)
        if args.only in (None, "keystroke"):
            results["keystroke"] = asyncio.run(bench_keystroke(tool, args.keys))
        if args.only in (None, "follow"):
            results["follow"] = asyncio.run(bench_follow(tool))
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        for name, figures in results.items():
            shown = {k: v for k, v in figures.items() if not isinstance(v, (list, dict))}
            print(f"{name}: " + ", ".join(f"{k}={v}" for k, v in shown.items()))
            for k, v in figures.items():
                if isinstance(v, dict):
                    print(f"  {k}:")
                    for mod, ms in v.items():
                        print(f"    {ms:7.1f} ms  {mod}")
    return 0


def _desk_app(tool: Path, *, watch_tools: bool = False) -> Any:
    from patch_tui.runtime.toolbox import Toolbox
    from patch_tui.settings.config import Settings
    from patch_tui.ui.app import PatchApp

    _found.clear()  # a new app: look its widgets up again
    settings = Settings(watch_tools=watch_tools, watch_themes=False)
    return PatchApp(Toolbox.open(tool), tool, settings=settings)


async def _until(check: Any, timeout: float = 5.0, step: float = 0.001) -> bool:
    deadline = time.perf_counter() + timeout
    while not check():
        if time.perf_counter() > deadline:
            return False
        await asyncio.sleep(step)
    return True


async def bench_keystroke(tool: Path, keys: int) -> dict[str, Any]:
    """Type in the body of a 300-line tool; per keystroke: the echo (key event -> the text
    changed), the debounce (key -> re-parse starts), and the re-parse + lint + lint panel and
    form update (start -> applied; the next screen refresh paints it)."""
    from patch_tui.ui.desk.editor import LINT_DEBOUNCE

    app = _desk_app(tool)
    echo: list[float] = []
    debounce: list[float] = []
    lint: list[float] = []
    worker: list[float] = []  # parse + lint in the thread worker, and the hop back
    ui: list[float] = []  # lint panel, form and browser updated on the UI thread
    async with app.run_test(size=SIZE) as pilot:
        editor = app.editor
        assert await _until(lambda: desk_is_ready(app) and editor.lint_count >= 1), "desk not ready"
        marks: dict[str, float] = {}
        start_lint, apply_lint = editor._start_lint, editor._apply_lint

        def timed_start() -> None:
            marks["start"] = time.perf_counter()
            start_lint()

        def timed_apply(*a: Any) -> None:
            marks["linted"] = time.perf_counter()
            apply_lint(*a)
            marks["applied"] = time.perf_counter()

        # Instrumentation only: the screen looks these up when the timer fires / the worker ends.
        editor._start_lint = timed_start
        editor._apply_lint = timed_apply
        source = editor.source
        source.focus()
        row = source.document.line_count - 12  # a body line: `total += ...  # step N`
        source.cursor_location = (row, len(source.document.get_line(row)))
        await pilot.pause()
        from textual import events

        driver = app._driver
        for i in range(keys):
            marks.clear()
            before = source.text
            key = "x" if i % 2 == 0 else "backspace"
            event = events.Key(key, "x" if key == "x" else None)
            event.set_sender(app)
            t0 = time.perf_counter()
            # What a terminal keystroke becomes: a Key event from the driver (pilot.press would
            # add its own waits for the whole app to go idle).
            driver.send_message(event)
            if not await _until(lambda before=before: source.text != before, step=0):
                raise SystemExit("the keystroke did not reach the source pane")
            echo.append(time.perf_counter() - t0)
            if not await _until(lambda: "applied" in marks):
                raise SystemExit("no lint after a keystroke")
            debounce.append(marks["start"] - t0)
            lint.append(marks["applied"] - marks["start"])
            worker.append(marks["linted"] - marks["start"])
            ui.append(marks["applied"] - marks["linted"])
            await pilot.pause(0.02)
    ms = lambda xs: round(1000 * xs, 1)  # noqa: E731
    return {
        "keys": keys,
        "lines": len(tool.read_text(encoding="utf-8").splitlines()),
        "echo_p95_ms": ms(p95(echo)),
        "debounce_setting_ms": ms(LINT_DEBOUNCE),
        "debounce_median_ms": ms(statistics.median(debounce)),
        "lint_to_applied_p95_ms": ms(p95(lint)),
        "lint_to_applied_median_ms": ms(statistics.median(lint)),
        "of_which_worker_p95_ms": ms(p95(worker)),
        "of_which_ui_update_p95_ms": ms(p95(ui)),
        "target_p95_ms": 50,
        "target_debounce_ms": 150,
    }


async def bench_follow(tool: Path, rounds: int = 5) -> dict[str, Any]:
    """An outside editor rename-saves the open, clean tool: time until the source pane shows it."""
    app = _desk_app(tool, watch_tools=True)
    times: list[float] = []
    original = tool.read_text(encoding="utf-8")
    async with app.run_test(size=SIZE) as pilot:
        editor = app.editor
        assert await _until(lambda: desk_is_ready(app) and editor.lint_count >= 1), "desk not ready"
        assert await _until(lambda: app.tool_watch is not None and app.tool_watch.watching)
        if editor.dirty:
            return {"error": "the buffer is dirty right after opening; nothing to follow"}
        for i in range(rounds):
            marker = f"# outside edit {i}"
            scratch = tool.with_name(f".{tool.name}.swp")
            scratch.write_text(original + marker + "\n", encoding="utf-8")
            t0 = time.perf_counter()
            os.replace(scratch, tool)
            if not await _until(lambda m=marker: m in editor.source_text, timeout=3):
                return {"error": "the open tool did not follow the outside change", "ms": times}
            times.append(time.perf_counter() - t0)
            await pilot.pause(0.2)
    return {
        "rounds": rounds,
        "median_ms": round(1000 * statistics.median(times), 1),
        "max_ms": round(1000 * max(times), 1),
        "target_ms": 250,
    }


if __name__ == "__main__":
    sys.exit(main())
