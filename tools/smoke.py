"""A quick smoke test of an *installed* patch-tui: `VENV/bin/python tools/smoke.py`.

`make lowest-smoke` runs it in a venv holding patch-tui built as a wheel with the lowest versions
of its direct dependencies that pyproject.toml allows, so each lower bound there is a version the
code works with. It checks what a user does first, through the installed package and its shipped
files (never the checkout): `patch-tui --version`, lint the sample tools, generate a tool (from
the tests' fake Messages API on 127.0.0.1, through the installed anthropic SDK) and say one clear
line when the API cannot be reached, serve the tools over MCP and call one, and start the desk
headless on a first-run toolbox in a shipped theme.

Everything runs in a temporary HOME; nothing leaves 127.0.0.1. Exit 0 when every check
passed, else 1 with one line per failure.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TIMEOUT = 120  # seconds for each subprocess: only a hang ever reaches it
failures: list[str] = []


def check(ok: object, what: str) -> None:
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


def run_cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("patch-tui")
    return subprocess.run(
        [str(exe), *args], env=env, capture_output=True, text=True, timeout=TIMEOUT
    )


def installed_package() -> Path:
    import patch_tui

    package = Path(patch_tui.__file__).resolve().parent
    prefix = Path(sys.prefix).resolve()
    if prefix not in package.parents:
        sys.exit(f"smoke: patch_tui is imported from {package}, not from the venv {prefix}")
    return package


def _release(version: str) -> str:
    """A version without trailing `.0`s, so 2.3 and 2.3.0 compare equal."""
    parts = version.split(".")
    while len(parts) > 1 and parts[-1] == "0":
        parts.pop()
    return ".".join(parts)


def check_bounds() -> None:
    """Each direct dependency is installed at its lower bound: a bound that other packages'
    requirements lift (so it is never what gets installed) says less than it seems to."""
    import importlib.metadata
    import re
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    for requirement in project["dependencies"]:
        match = re.fullmatch(r"([A-Za-z0-9_.-]+)(?:\[[^]]*\])?\s*>=\s*([^,;\s]+).*", requirement)
        if match is None:
            check(False, f"{requirement}: no lower bound")
            continue
        name, bound = match.groups()
        installed = importlib.metadata.version(name)
        check(
            _release(installed) == _release(bound),
            f"{name} installed at its lower bound {bound}"
            + ("" if installed == bound else f" (got {installed}: raise the bound to it)"),
        )


def check_cli(env: dict[str, str], samples: Path) -> None:
    import patch_tui

    version = run_cli(env, "--version")
    check(version.stdout.strip() == f"patch-tui {patch_tui.__version__}", "patch-tui --version")
    lint = run_cli(env, "lint", str(samples))
    check(lint.returncode == 0 and "Traceback" not in lint.stderr, "patch-tui lint <samples>")
    if lint.returncode != 0:
        print(lint.stdout[-2000:], lint.stderr[-2000:], sep="\n")


def check_generate(env: dict[str, str], package: Path, home: Path) -> None:
    sys.path.append(str(REPO / "tests"))  # the fake API only (stdlib); patch_tui stays the venv's
    from fake_anthropic import FakeAnthropic, Reply, closed_port_url

    tool = (package / "generate" / "prompts" / "example_tool.txt").read_text(encoding="utf-8")
    out = home / "generated"
    with FakeAnthropic(Reply(tool, chunk=200)) as fake:
        key = {"ANTHROPIC_API_KEY": "sk-smoke", "ANTHROPIC_BASE_URL": fake.base_url}
        made = run_cli({**env, **key}, "generate", "Count the words", "--out", str(out))
    path = made.stdout.strip().splitlines()[-1] if made.stdout.strip() else ""
    check(
        made.returncode == 0 and path and Path(path).is_file(),
        f"generate: a tool written ({made.stderr.strip()[-300:]})",
    )
    gone = {"ANTHROPIC_API_KEY": "sk-smoke", "ANTHROPIC_BASE_URL": closed_port_url()}
    refused = run_cli({**env, **gone}, "generate", "Count the words", "--out", str(out))
    check(
        refused.returncode == 2
        and "Cannot reach Claude's API" in refused.stderr
        and "Traceback" not in refused.stderr,
        f"generate: one clear line when the API is unreachable ({refused.stderr.strip()[-300:]})",
    )


async def check_serve(env: dict[str, str], toolbox: Path, errlog: Path) -> None:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    exe = Path(sys.executable).with_name("patch-tui")
    params = StdioServerParameters(
        command=str(exe), args=["serve", "--toolbox", str(toolbox)], env=env
    )
    with open(errlog, "a") as log:
        async with Client(stdio_client(params, errlog=log), mode="legacy", cache=None) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            check({"word_count", "patch_confirm_action"} <= names, "serve: tools/list")
            result = await client.call_tool("word_count", {"text": "hello tool world"})
            text = result.content[0].text if result.content else ""
            check(
                not result.is_error and json.loads(text).get("words") == 3,
                f"serve: call word_count ({text[:200]})",
            )


async def check_desk(home: Path) -> None:
    import argparse

    from patch_tui.commands.tui import build_app

    args = argparse.Namespace(path=None, toolbox=None, theme="patch-light", store=None)
    app = build_app(args)  # the first run copies the shipped samples into the toolbox
    check(app.notice and "sample tools copied" in app.notice, f"desk: first run ({app.notice})")
    async with app.run_test(size=(120, 36)) as pilot:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + TIMEOUT
        while app.editor.lint_count == 0 and loop.time() < deadline:
            await pilot.pause(0.05)
        check(app.editor.lint_count > 0, "desk: a tool open and linted")
        check(app.theme == "patch-light", f"desk: the shipped theme patch-light ({app.theme})")
        await pilot.press("ctrl+q")


def main() -> int:
    package = installed_package()
    samples = package / "sample_tools"
    check((package / "themes" / "patch-light.toml").is_file(), "the package ships its themes")
    check((samples / "word_count.py").is_file(), "the package ships its sample tools")
    if os.environ.get("SMOKE_AT_BOUNDS") == "1":  # make lowest-smoke: lowest-direct versions
        check_bounds()
    with tempfile.TemporaryDirectory(prefix="patch-tui-smoke-") as tmp:
        home = Path(tmp)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / "config"),
            "XDG_STATE_HOME": str(home / "state"),
            "XDG_CACHE_HOME": str(home / "cache"),
            "PATCH_CAT_TOOLBOX_DIR": str(home / "toolbox"),
            "PATCH_TUI_SERVE_WORKSPACE": str(home),
        }
        os.environ.update(env)
        check_cli(env, samples)
        check_generate(env, package, home)
        errlog = home / "serve.log"
        served = home / "tools"  # a copy: serve writes its run records beside the tools
        shutil.copytree(samples, served)
        try:
            asyncio.run(check_serve(env, served, errlog))
        except Exception as exc:  # noqa: BLE001 - the smoke reports, the log says why
            check(False, f"serve: {type(exc).__name__}: {exc}")
            print(errlog.read_text()[-2000:] if errlog.exists() else "")
        asyncio.run(check_desk(home))
    print(f"smoke: {len(failures)} failed" if failures else "smoke: every check passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
