"""What `patch-tui run` costs over running the tool by hand (issue 11, item 8), and what a
sandboxed call costs through `serve` (issue 27).

    .venv/bin/python bench/run_bench.py [--runs 15] [--engine auto|landlock|bwrap|none]
                                        [--baseline CHECKOUT] [--no-bytecode-cache]
                                        [--calls 40] [--serve-engines landlock,bwrap]

One trivial standard-library tool (filesystem: none, network: false), the same args, the same
stdin; two commands timed in alternation, each a fresh process as a person or an agent runs them:
- `patch-tui run tool.py --args '{"n": 7}'` (the whole CLI: start-up, store, gate, sandbox, audit);
- `python3 tool.py` with `{"n": 7}` on its stdin.
Reported: the median wall time of each and their ratio. `--engine` picks the sandbox engine
through PATCH_TUI_SANDBOX_ENGINE (`none` is the knowingly unisolated setting, for comparison).
`--baseline DIR` times a third command in the same alternation: `python -m patch_tui run` from
another checkout (e.g. `git archive <commit> | tar -x -C DIR` of the code before a change), so
both ratios are measured under the same load.
Bytecode: every command reads and writes its compiled modules in a temporary PYTHONPYCACHEPREFIX
(warmed before timing), as an installed package reads its .pyc files, even where the environment
sets PYTHONDONTWRITEBYTECODE (this project's container does). `--no-bytecode-cache` times them
with that variable set instead: every module of patch-tui compiled from source on every run.
Everything happens in a temporary folder: a temporary HOME, store, config and toolbox.

`--packages` (issue 22) times a tool that pins one small wheel, served by a package index on
127.0.0.1 (tests/pkgindex.py), in the same alternation:
- the install alone: patch-tui's (runtime/venvs.ensure_venv, pip inside the sandbox) against the
  same install done bare (`python -m venv --without-pip`, pip with the same options, unconfined);
- first run: `patch-tui run` with an empty venv cache (the install, then the run) against the bare
  install followed by the venv's `python tool.py`;
- second run: `patch-tui run` with the venv cached against the venv's `python tool.py`.

serve: one MCP session (the mcp SDK's client over stdio) per engine calls the sample tool
`word_count` `--calls` times after one warm-up call; reported: the per-call median and p95 with
serve's warm sandboxed processes (the default), and without them (`serve --no-warm`: a new
sandbox per call) for comparison. Engines not available here are skipped with one line.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

TOOL = """# ---
# name: bench_echo
# version: 1.0.0
# description: Echoes a number, quickly.
# inputs:
#   - name: n
#     type: integer
#     description: A number.
# outputs:
#   type: object
# capabilities:
#   network: false
#   filesystem: none
#   human_confirm: false
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


def _time(cmd: list[str], env: dict[str, str], stdin: bytes, cwd: Path) -> float:
    started = time.perf_counter()
    done = subprocess.run(cmd, env=env, input=stdin, capture_output=True, cwd=cwd)
    elapsed = time.perf_counter() - started
    if done.returncode != 0 or b'"n": 7' not in done.stdout:
        sys.exit(f"bench: {cmd[0]} failed: {done.stderr.decode(errors='replace')[-400:]}")
    return elapsed


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


async def _serve_calls(
    env: dict[str, str], toolbox: Path, calls: int, warm: bool, tool: str = "word_count"
) -> list[float]:
    """Seconds per `tools/call` of `tool` over one serve session (after one warm-up).
    `patch_list_tools` runs nothing: serve's own round trip, the floor under a tool call."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    args = ["-m", "patch_tui", "serve", "--toolbox", str(toolbox)]
    if not warm:
        args.append("--no-warm")
    params = StdioServerParameters(command=sys.executable, args=args, env=env)
    times: list[float] = []
    text = (
        {"text": "The quick brown fox jumps over the lazy dog. " * 4}
        if tool == "word_count"
        else {}
    )
    with open(os.devnull, "w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode="legacy", cache=None) as c:
            first = await c.call_tool(tool, text)
            if first.is_error:
                sys.exit(f"bench: serve's call failed: {first.content}")
            for _ in range(calls):
                started = time.perf_counter()
                done = await c.call_tool(tool, text)
                times.append(time.perf_counter() - started)
                if done.is_error:
                    sys.exit(f"bench: serve's call failed: {done.content}")
    return times


def bench_serve(env: dict[str, str], home: Path, calls: int, engines: list[str]) -> None:
    import anyio

    from patch_tui.runtime import sandbox

    toolbox = home / "serve-box"
    (toolbox / "tools").mkdir(parents=True)
    shutil.copy(ROOT / "sample_tools" / "word_count.py", toolbox / "tools" / "word_count.py")
    print(f"serve: {calls} calls of word_count per session, after one warm-up call")
    floor = anyio.run(_serve_calls, env, toolbox, calls, True, "patch_list_tools")
    print(
        f"  {'no run':9} {'patch_list_tools':17} median {statistics.median(floor) * 1000:6.1f} ms"
        f"   p95 {_percentile(floor, 0.95) * 1000:6.1f} ms   (serve's own round trip)"
    )
    for engine in engines:
        if sandbox.choose_engine(engine) != engine:
            print(f"  {engine:9} not available here ({sandbox.why_unisolated(engine) or 'no'})")
            continue
        run_env = dict(env, PATCH_TUI_SANDBOX_ENGINE=engine)
        for warm in (True, False):
            times = anyio.run(_serve_calls, run_env, toolbox, calls, warm)
            kind = "warm fork" if warm else "cold (--no-warm)"
            print(
                f"  {engine:9} {kind:17} median {statistics.median(times) * 1000:6.1f} ms"
                f"   p95 {_percentile(times, 0.95) * 1000:6.1f} ms"
            )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--engine", default=None, help="auto, landlock, bwrap or none")
    ap.add_argument("--baseline", type=Path, default=None, help="another checkout to time too")
    ap.add_argument("--calls", type=int, default=40, help="serve calls per session")
    ap.add_argument(
        "--serve-engines",
        default="landlock,bwrap",
        help="engines to time serve under (comma-separated; empty: skip serve)",
    )
    ap.add_argument(
        "--no-bytecode-cache",
        action="store_true",
        help="compile every module from source on every run (PYTHONDONTWRITEBYTECODE=1)",
    )
    ap.add_argument(
        "--packages", action="store_true", help="time a tool with one wheel (install, cached)"
    )
    opts = ap.parse_args()
    if opts.packages:
        return bench_packages(opts)
    with tempfile.TemporaryDirectory(prefix="run-bench-") as tmp:
        base = Path(tmp)
        home = base / "home"
        home.mkdir()
        tool = base / "work" / "bench_echo.py"
        tool.parent.mkdir()
        tool.write_text(TOOL)
        env = dict(os.environ)
        env.update(
            HOME=str(home),
            PATCH_TUI_CONFIG=str(home / "config.toml"),
            PATCH_TUI_STORE=str(home / "state" / "store.sqlite3"),
            PATCH_TUI_TOOLBOX=str(home / "toolbox"),
            XDG_CACHE_HOME=str(home / "cache"),
            XDG_STATE_HOME=str(home / "state"),
        )
        if opts.engine:
            env["PATCH_TUI_SANDBOX_ENGINE"] = opts.engine
        if opts.no_bytecode_cache:
            env["PYTHONDONTWRITEBYTECODE"] = "1"
        else:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = str(base / "pycache")
        cli = [sys.executable, "-m", "patch_tui", "run", str(tool), "--args", '{"n": 7}']
        env["PYTHONPATH"] = str(ROOT)
        base_env = None
        if opts.baseline:  # its own store: another version may not read ours
            base_env = dict(env, PYTHONPATH=str(opts.baseline.resolve()))
            base_env["PATCH_TUI_STORE"] = str(home / "state" / "baseline.sqlite3")
        plain = ["python3", str(tool)]
        stdin = b'{"n": 7}'
        _time(cli, env, b"", tool.parent)  # warm the page cache and the store's first creation
        _time(plain, env, stdin, tool.parent)
        if base_env is not None:
            _time(cli, base_env, b"", tool.parent)
        ours: list[float] = []
        theirs: list[float] = []
        before: list[float] = []
        for _ in range(opts.runs):
            ours.append(_time(cli, env, b"", tool.parent))
            theirs.append(_time(plain, env, stdin, tool.parent))
            if base_env is not None:
                before.append(_time(cli, base_env, b"", tool.parent))
        a, b = statistics.median(ours), statistics.median(theirs)
        engine = opts.engine or env.get("PATCH_TUI_SANDBOX_ENGINE") or "default"
        cache = "none (compiled every run)" if opts.no_bytecode_cache else "cached"
        print(f"engine: {engine}   runs: {opts.runs}   bytecode: {cache}")
        print(f"patch-tui run:  median {a * 1000:7.1f} ms   (min {min(ours) * 1000:.1f})")
        print(f"python3 tool:   median {b * 1000:7.1f} ms   (min {min(theirs) * 1000:.1f})")
        print(f"ratio:          {a / b:.2f}x")
        if before:
            c = statistics.median(before)
            print(f"baseline run:   median {c * 1000:7.1f} ms   ({opts.baseline})")
            print(f"baseline ratio: {c / b:.2f}x   isolation adds {(a / b) / (c / b) - 1:+.0%}")
        engines = [e for e in opts.serve_engines.split(",") if e]
        if engines:
            bench_serve(env, base, opts.calls, engines)
    return 0


PKG_TOOL = TOOL.replace("#   packages: []", '#   packages: ["benchdemo==1.0"]').replace(
    '    return {"n": n}', '    import benchdemo\n\n    return {"n": n * benchdemo.ONE}'
)


def _bare_install(venv: Path, index: str, cache: Path) -> None:
    """The same install as patch-tui's, unconfined: an empty venv, then pip with its options."""
    from patch_tui.runtime.venvs import pip_location

    subprocess.run([sys.executable, "-I", "-m", "venv", "--without-pip", str(venv)], check=True)
    run_pip = (
        "import sys, runpy; sys.path.insert(0, sys.argv.pop(1)); "
        "runpy.run_module('pip', run_name='__main__', alter_sys=True)"
    )
    args = ["--python", str(venv / "bin" / "python"), "install", "--no-input"]
    args += ["--disable-pip-version-check", "--quiet", "--index-url", index]
    args += ["--only-binary", ":all:", "--cache-dir", str(cache), "benchdemo==1.0"]
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": str(venv.parent)}
    env["PIP_CONFIG_FILE"] = os.devnull
    # -I -S as patch-tui starts its confined pip: the two differ only by the sandbox.
    cmd = [sys.executable, "-I", "-S", "-c", run_pip, pip_location(), *args]
    subprocess.run(cmd, check=True, env=env)


def _sandboxed_install(root: Path, engine: str | None) -> float:
    """The install as `patch-tui run` does it (runtime/venvs.ensure_venv), timed in-process: an
    empty venv, then pip inside the sandbox, with the run's protected set."""
    from patch_tui.runtime import sandbox
    from patch_tui.runtime.protected import protected_paths
    from patch_tui.runtime.venvs import InstallSandbox, ensure_venv

    guard = protected_paths(
        store=None, toolbox=None, tool_path=None, runs_dir=None, run_root=sandbox.runs_root()
    )
    box = InstallSandbox(guard.hidden, guard.frozen, guard.sealed, engine)
    started = time.perf_counter()
    ensure_venv(["benchdemo==1.0"], allow_install=True, venv_root=root / "venvs", sandbox=box)
    return time.perf_counter() - started


def _medians(rows: dict[str, list[float]]) -> dict[str, float]:
    return {k: statistics.median(v) for k, v in rows.items()}


def bench_packages(opts: argparse.Namespace) -> int:
    sys.path.insert(0, str(ROOT))
    from tests.pkgindex import PackageIndex

    rows: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="run-bench-pkg-") as tmp:
        base = Path(tmp)
        home = base / "home"
        home.mkdir()
        tool = base / "work" / "bench_pkg.py"
        tool.parent.mkdir()
        tool.write_text(PKG_TOOL)
        pip_cache = base / "pip-cache"  # shared by every install on both sides
        pip_cache.mkdir()
        with PackageIndex(base / "index") as index:
            index.add_wheel("benchdemo", "1.0", {"benchdemo.py": "ONE = 1\n"})
            env = dict(os.environ)
            env.update(
                HOME=str(home),
                PATCH_TUI_CONFIG=str(home / "config.toml"),
                PATCH_TUI_STORE=str(home / "state" / "store.sqlite3"),
                PATCH_TUI_TOOLBOX=str(home / "toolbox"),
                XDG_STATE_HOME=str(home / "state"),
                PATCH_TUI_PACKAGES_INDEX_URL=index.url,
                PYTHONPATH=str(ROOT),
            )
            if opts.engine:
                env["PATCH_TUI_SANDBOX_ENGINE"] = opts.engine
            for name in ("PATCH_TUI_CONFIG", "XDG_STATE_HOME", "PATCH_TUI_PACKAGES_INDEX_URL"):
                os.environ[name] = env[name]  # for the in-process install
            cli = [sys.executable, "-m", "patch_tui", "run", str(tool), "--args", '{"n": 7}']
            stdin = b'{"n": 7}'
            for i in range(opts.runs + 1):  # the first round warms the page and pip caches
                root = base / f"install-{i}"
                root.mkdir()
                (root / "pip").symlink_to(pip_cache, target_is_directory=True)
                sandboxed = _sandboxed_install(root, opts.engine)
                started = time.perf_counter()
                _bare_install(base / f"bare-{i}" / "venv", index.url, pip_cache)
                bare = time.perf_counter() - started
                cache = base / f"cache-{i}"
                (cache / "patch-tui").mkdir(parents=True)
                (cache / "patch-tui" / "pip").symlink_to(pip_cache, target_is_directory=True)
                ours = _time(cli, dict(env, XDG_CACHE_HOME=str(cache)), b"", tool.parent)
                venv_python = str(base / f"bare-{i}" / "venv" / "bin" / "python")
                plain = _time([venv_python, str(tool)], env, stdin, tool.parent)
                if i:
                    for key, value in (
                        ("install.sandboxed", sandboxed),
                        ("install.bare", bare),
                        ("first.ours", ours),
                        ("first.bare", bare + plain),
                    ):
                        rows.setdefault(key, []).append(value)
            warm = dict(env, XDG_CACHE_HOME=str(base / "cache-0"))
            venv_python = str(base / "bare-0" / "venv" / "bin" / "python")
            for _ in range(opts.runs):
                rows.setdefault("second.ours", []).append(_time(cli, warm, b"", tool.parent))
                plain = _time([venv_python, str(tool)], env, stdin, tool.parent)
                rows.setdefault("second.plain", []).append(plain)
    m = _medians(rows)
    ratio = m["install.sandboxed"] / m["install.bare"]
    print(f"engine: {opts.engine or 'default'}   runs: {opts.runs}   one wheel from 127.0.0.1")
    for label, key in (
        ("install, sandboxed (ensure_venv)", "install.sandboxed"),
        ("install, bare (venv + pip, unconfined)", "install.bare"),
        ("first run, patch-tui run", "first.ours"),
        ("first run, bare install + python tool.py", "first.bare"),
        ("second run, patch-tui run (venv cached)", "second.ours"),
        ("second run, venv python tool.py", "second.plain"),
    ):
        print(f"{label:42} median {m[key] * 1000:7.1f} ms")
    print(f"install ratio:     {ratio:.2f}x   (the sandbox adds {ratio - 1:+.0%} to the install)")
    print(f"first-run ratio:   {m['first.ours'] / m['first.bare']:.2f}x")
    print(f"second-run ratio:  {m['second.ours'] / m['second.plain']:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
