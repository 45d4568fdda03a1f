"""Hostile input, through the real CLI (`python -m patch_tui ...` in a subprocess) and the real
MCP client: every case of issue 13 ends in one clear line and an exit code, never a traceback,
a hang, a dead server or a lost list. Plus property tests (random bytes and random YAML) over the
toolfile parser, lint and fmt, and Pilot tests of the desk and the inbox on hostile files/rows.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.runtimekit import (
    MARK_BODY,
    MARK_INPUTS,
    PATCH_TUI,
    REPO,
    approve_argv,
    cli_env,
    runs_in,
    write_tool,
)

SAMPLES = REPO / "sample_tools"
BIG = "9" * 4301  # one digit past Python's int-string limit


def run_cli(env: dict[str, str], *args: str, stdin: str | None = None, timeout: float = 60):
    """The CLI in a subprocess. A hang fails the test (TimeoutExpired), never the suite."""
    return subprocess.run(
        [*PATCH_TUI, *args],
        env=env,
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def no_traceback(proc: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    assert "Error:" not in proc.stderr.replace("PermissionError", ""), proc.stderr


def one_line(proc: subprocess.CompletedProcess[str], *needles: str) -> str:
    """The process said what is wrong in exactly one stderr line, holding every needle."""
    no_traceback(proc)
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    box = tmp_path / "box"
    (box / "tools").mkdir(parents=True)
    (box / "index.json").write_text('{"tools": []}\n')
    return cli_env(tmp_path, tmp_path / "store.sqlite3", box)


def sample(name: str, folder: Path, **replace: str) -> Path:
    text = (SAMPLES / f"{name}.py").read_text()
    for old, new in replace.items():
        assert old in text
        text = text.replace(old, new, 1)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.py"
    path.write_text(text)
    return path


# -- numbers beyond every reader's range --------------------------------------------------------


def test_a_4301_digit_integer_is_pt022_in_lint_fmt_and_run(env, tmp_path: Path) -> None:
    tool = sample("slugify", tmp_path, **{"# version: 1.0.0": f"# version: 1.0.0\n# x_big: {BIG}"})
    before = tool.read_bytes()

    lint = run_cli(env, "lint", "--format", "json", str(tool))
    no_traceback(lint)
    assert lint.returncode == 1
    found = [d for d in json.loads(lint.stdout) if d["code"] == "PT022"]
    assert len(found) == 1 and found[0]["line"] == 4 and "4301 digits" in found[0]["message"]

    fmt = run_cli(env, "fmt", str(tool))
    assert fmt.returncode == 1
    one_line(fmt, "PT022", "not formatted")
    assert tool.read_bytes() == before

    # The runtime reads the tool (the number is in a field it ignores): it runs.
    ran = run_cli(env, "run", str(tool), "--args", '{"text": "Hello World"}')
    no_traceback(ran)
    assert ran.returncode == 0 and json.loads(ran.stdout) == "hello-world"


@pytest.mark.parametrize("value", ["1e400", "-1e400"])
def test_fmt_refuses_numbers_it_cannot_write_back(env, tmp_path: Path, value: str) -> None:
    tool = sample(
        "word_count", tmp_path, **{"# version: 1.0.0": f"# version: 1.0.0\n# x_limit: {value}"}
    )
    before = tool.read_bytes()
    for args in (("fmt", str(tool)), ("fmt", "--check", str(tool))):
        proc = run_cli(env, *args)
        assert proc.returncode == 1
        one_line(proc, "PT022", value, "not formatted")
        assert tool.read_bytes() == before  # untouched, so never `.inf`


@pytest.mark.parametrize("spelled", ["0x" + "f" * 5000, "-" + BIG, "1" + "0" * 400 + ".5e9"])
def test_every_spelling_of_an_out_of_range_number_is_pt022(spelled: str) -> None:
    from patch_tui.format import toolfile
    from patch_tui.lint.engine import lint_toolfile

    text = (
        (SAMPLES / "slugify.py")
        .read_text()
        .replace("# version: 1.0.0", f"# version: 1.0.0\n# x_n: {spelled}")
    )
    tf = toolfile.parse(text)
    found = [d for d in lint_toolfile(tf) if d.code == "PT022"]
    assert len(found) == 1 and found[0].line == 4 and found[0].severity == "error"
    assert toolfile.format_text(tf) is None  # fmt refuses; nothing raised anywhere


def test_fmt_refuses_any_rewrite_that_reads_back_differently(tmp_path: Path, monkeypatch) -> None:
    """Whatever the writer does, fmt checks what it wrote reads back as the same data."""
    from patch_tui.format import toolfile, yamlio

    tf = toolfile.read(str(SAMPLES / "slugify.py"))
    lossy = yamlio.dump

    def dump(data: Any) -> str:
        text = lossy(data)
        return text.replace("max_length", "max_len")  # a writer that changes a key

    monkeypatch.setattr(yamlio, "dump", dump)
    with pytest.raises(toolfile.NotExact, match="cannot be written back exactly"):
        toolfile.format_text(tf)


# -- special files -----------------------------------------------------------------------------


@pytest.fixture
def specials(tmp_path: Path) -> dict[str, Path]:
    fifo = tmp_path / "pipe.py"
    os.mkfifo(fifo)
    zero = tmp_path / "zero.py"
    zero.symlink_to("/dev/zero")
    return {"fifo": fifo, "zero": zero}


@pytest.mark.parametrize("which", ["fifo", "zero"])
@pytest.mark.parametrize("command", ["lint", "fmt", "run"])
def test_fifo_and_dev_zero_are_refused_by_type(env, specials, which: str, command: str) -> None:
    path = specials[which]
    proc = run_cli(env, command, str(path), timeout=30)  # a hang would time out
    assert proc.returncode == 2
    kind = "named pipe" if which == "fifo" else "character device"
    line = one_line(proc, str(path)) if command == "run" else one_line(proc, str(path), kind)
    assert "not a regular file" in line


def test_the_toolbox_scan_skips_special_files_and_keeps_every_tool(env, specials) -> None:
    tools = Path(env["PATCH_TUI_TOOLBOX"]) / "tools"
    sample("slugify", tools)
    os.mkfifo(tools / "pipe.py")
    (tools / "zero.py").symlink_to("/dev/zero")
    proc = run_cli(env, "run", "slugify", "--args", '{"text": "A B"}', timeout=30)
    no_traceback(proc)
    assert proc.returncode == 0 and json.loads(proc.stdout) == "a-b"
    lint = run_cli(env, "lint", str(tools), timeout=30)  # the folder: only regular *.py files
    no_traceback(lint)
    assert lint.returncode == 0


# -- a damaged store row ----------------------------------------------------------------------


def _hold_two(env: dict[str, str], tmp_path: Path) -> tuple[str, str]:
    tools = Path(env["PATCH_TUI_TOOLBOX"]) / "tools"
    write_tool(
        tools, "mark", MARK_BODY, inputs=MARK_INPUTS, human_confirm=True, filesystem="read-write"
    )
    marker = tmp_path / "marker.txt"
    tokens = []
    for text in ("first", "second"):
        held = run_cli(
            env, "run", "mark", "--args", json.dumps({"marker": str(marker), "text": text})
        )
        assert held.returncode == 3, held.stderr
        tokens.append(json.loads(held.stdout)["confirmation_token"])
    return tokens[0], tokens[1]


# Not JSON, or no JSON the store writes (allow_nan=False): json.loads would take the last three,
# as NaN, infinity and infinity.
@pytest.mark.parametrize(
    "stored", ["{not json", '{"text": "x"} {}', '{"n": NaN}', '{"n": -Infinity}', '{"n": 1e400}']
)
def test_a_row_with_invalid_json_is_shown_damaged_and_can_only_be_rejected(
    env, tmp_path: Path, stored: str
) -> None:
    damaged, good = _hold_two(env, tmp_path)
    conn = sqlite3.connect(env["PATCH_TUI_STORE"])
    conn.execute("UPDATE actions SET args_json = ? WHERE token = ?", (stored, damaged))
    conn.commit()
    conn.close()

    text = run_cli(env, "inbox", "list")
    no_traceback(text)
    assert text.returncode == 0
    assert good in text.stdout and "second" in text.stdout  # the others keep working
    assert damaged in text.stdout and "DAMAGED" in text.stdout

    listed = run_cli(env, "inbox", "list", "--json")
    no_traceback(listed)
    rows = {row["token"]: row for row in json.loads(listed.stdout)}
    assert rows[good]["args"]["text"] == "second" and "damaged" not in rows[good]
    assert rows[damaged]["args"] is None and "not valid JSON" in rows[damaged]["damaged"]

    approve = run_cli(env, "inbox", "approve", damaged)
    assert approve.returncode == 1
    one_line(approve, "cannot be approved", "reject it")
    reject = run_cli(env, "inbox", "reject", damaged, "--reason", "damaged")
    no_traceback(reject)
    assert reject.returncode == 0
    assert run_cli(env, *approve_argv(env, good)).returncode == 0  # the other one still works


# -- settings -------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["-5", "999999999999"])
def test_confirm_ttl_out_of_range_is_one_line_naming_the_variable(
    env, tmp_path: Path, value: str
) -> None:
    bad = {**env, "PATCH_TUI_CONFIRM_TTL": value}
    tools = Path(env["PATCH_TUI_TOOLBOX"]) / "tools"
    write_tool(
        tools, "mark", MARK_BODY, inputs=MARK_INPUTS, human_confirm=True, filesystem="read-write"
    )
    held = run_cli(
        bad, "run", "mark", "--args", json.dumps({"marker": str(tmp_path / "m"), "text": "x"})
    )
    no_traceback(held)
    assert held.returncode == 3  # held with the default TTL, after saying what is wrong
    first = held.stderr.splitlines()[0]
    assert f"PATCH_TUI_CONFIRM_TTL={value}" in first and "from 1 to 2592000" in first
    token = json.loads(held.stdout)["confirmation_token"]
    approve = run_cli(bad, *approve_argv(bad, token))
    no_traceback(approve)
    assert approve.returncode == 0 and "PATCH_TUI_CONFIRM_TTL" in approve.stderr


def test_numeric_settings_in_the_config_file_name_the_file_and_key(env) -> None:
    config = Path(env["PATCH_TUI_CONFIG"])
    config.write_text("max_repairs = -1\n")
    proc = run_cli(env, "inbox", "list")
    assert proc.returncode == 0
    one_line(proc, str(config), "max_repairs = -1", "from 0 to 10")


def test_the_validated_settings_check_every_numeric_setting(monkeypatch, tmp_path: Path) -> None:
    from patch_tui.settings import config
    from patch_tui.settings.model import Settings

    numeric = {n for n, f in Settings.model_fields.items() if f.annotation in (int, float)}
    assert numeric == set(config.RANGES)  # a new numeric setting needs its range

    monkeypatch.setenv("PATCH_TUI_CONFIG", str(tmp_path / "none.toml"))
    for name, (low, high) in config.RANGES.items():
        for value in (low - 1, high + 1):
            monkeypatch.setenv(f"PATCH_TUI_{name.upper()}", str(value))
            with pytest.raises(config.ConfigError) as caught:
                config.load_settings()
            message = str(caught.value)
            assert "\n" not in message and f"PATCH_TUI_{name.upper()}" in message
            assert f"from {low} to {high}" in message
        monkeypatch.delenv(f"PATCH_TUI_{name.upper()}")


# -- nesting in TOML ------------------------------------------------------------------------------

DEEP_TOML = "theme = " + "[" * 5000 + "]" * 5000 + "\n"


@pytest.mark.parametrize(
    "text",
    [
        DEEP_TOML,
        "theme = " + "{a = " * 5000 + "1" + "}" * 5000 + "\n",
        "a" + ".a" * 5000 + " = 1\n",
    ],
    ids=["arrays", "inline-tables", "dotted-keys"],
)
def test_a_config_file_nested_5000_deep_is_one_line(env, text: str) -> None:
    Path(env["PATCH_TUI_CONFIG"]).write_text(text)
    proc = run_cli(env, "inbox", "list")
    assert proc.returncode == 0
    one_line(proc, "nested deeper than 32 levels")


def test_a_theme_file_nested_5000_deep_is_a_theme_error(tmp_path: Path) -> None:
    from patch_tui.ui.theming.themes import ThemeError, load_theme_file

    theme = tmp_path / "deep.toml"
    theme.write_text(
        'name = "deep"\nprimary = "#ffffff"\n' + "x = " + "[" * 5000 + "]" * 5000 + "\n"
    )
    with pytest.raises(ThemeError, match="nested deeper than 32 levels"):
        load_theme_file(theme)


async def test_a_deep_theme_saved_while_the_tui_runs_is_a_notification(
    tmp_path: Path, monkeypatch
) -> None:
    from desk_helpers import make_app, ready, tool_folder

    from patch_tui.ui.theming import themes

    user_themes = tmp_path / "themes"
    user_themes.mkdir()
    monkeypatch.setattr(themes, "user_themes_dir", lambda: user_themes)
    app = make_app(tool_folder(tmp_path))
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        (user_themes / "deep.toml").write_text(DEEP_TOML)
        errors = app.theme_manager.reload()  # what the theme watcher does on a save
        await pilot.pause()
        assert any("nested deeper than 32 levels" in e for e in errors)
        assert app.is_running


# -- an unreadable toolbox folder ------------------------------------------------------------------

# Root reads anything, so `chmod 000` proves nothing here: this sitecustomize makes the process
# see the folder as a non-root user sees a mode-000 folder (it can stat the folder itself, and
# nothing inside: no listing, no stat, no open). It only runs in the subprocesses given it.
DENY = """
import builtins, errno, io, os
_deny = os.path.abspath(os.environ["PATCH_TUI_TEST_DENY"])
def _inside(p, self_too):
    if isinstance(p, int):
        return False
    p = os.path.abspath(os.fsdecode(p))
    return p.startswith(_deny + os.sep) or (self_too and p == _deny)
def _deny_it(p):
    raise PermissionError(errno.EACCES, "Permission denied", os.fsdecode(p))
def _wrap(fn, self_too):
    def inner(path=".", *a, **k):
        if _inside(path, self_too):
            _deny_it(path)
        return fn(path, *a, **k)
    return inner
os.stat, os.lstat = _wrap(os.stat, False), _wrap(os.lstat, False)
os.scandir, os.listdir = _wrap(os.scandir, True), _wrap(os.listdir, True)
os.open = _wrap(os.open, True)
builtins.open = io.open = _wrap(builtins.open, True)
"""


@pytest.fixture
def denied(env, tmp_path: Path) -> dict[str, str]:
    box = Path(env["PATCH_TUI_TOOLBOX"])
    sample("slugify", box / "tools")
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(DENY)
    return {**env, "PYTHONPATH": str(site), "PATCH_TUI_TEST_DENY": str(box)}


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (("run", "slugify", "--args", '{"text": "a"}'), 1),
        (("confirm", "A" * 32), 1),
        (("serve",), 2),
        (("lint",), 2),
        ((), 2),  # the TUI says it before it takes the terminal
    ],
)
def test_an_unreadable_toolbox_is_one_line_everywhere(
    denied, args: tuple[str, ...], code: int
) -> None:
    box = denied["PATCH_TUI_TOOLBOX"]
    if args == ("lint",):
        args = ("lint", box + "/tools")
    proc = run_cli(denied, *args, timeout=30)
    assert proc.returncode == code, proc.stderr
    one_line(proc, box, "Permission denied")


def test_an_unreadable_toolbox_as_another_user(env, tmp_path: Path) -> None:
    """The same through a real non-root process, where the machine allows one."""
    setpriv = shutil.which("setpriv")
    drop = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"] if setpriv else []
    if os.geteuid() != 0 or not drop:
        pytest.skip("needs root and setpriv to become another user")
    probe = subprocess.run(
        [*drop, sys.executable, "-c", "import patch_tui.cli"], capture_output=True, timeout=30
    )
    if probe.returncode != 0:
        pytest.skip("the interpreter or the checkout is not readable by another user here")
    box = Path(env["PATCH_TUI_TOOLBOX"])
    sample("slugify", box / "tools")
    tmp_path.chmod(0o755)
    box.chmod(0o000)
    try:
        proc = subprocess.run(
            [*drop, *PATCH_TUI, "run", "slugify"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        box.chmod(0o755)
    assert proc.returncode == 1
    one_line(proc, str(box), "Permission denied")


# -- lint's blind spots ------------------------------------------------------------------------

BLIND = """
import importlib

__name__ = "__main__"


def main(table: str) -> dict:
    db = __import__("sq" + "lite3")
    other = importlib.import_module(table)
    return {"n": len(dir(db)) + len(dir(other))}
"""


def test_lint_flags_dynamic_imports_and_module_dunders(env, tmp_path: Path) -> None:
    tool = write_tool(tmp_path, "blind", BLIND, inputs=[{"name": "table", "tainted_ok": True}])
    proc = run_cli(env, "lint", "--format", "json", str(tool))
    no_traceback(proc)
    found = {(d["code"], d["line"]) for d in json.loads(proc.stdout)}
    body_line = tool.read_text().splitlines().index('__name__ = "__main__"') + 1
    assert ("PT049", body_line) in found
    assert ("PT048", body_line + 4) in found and ("PT048", body_line + 5) in found
    messages = " ".join(d["message"] for d in json.loads(proc.stdout))
    assert "computed at run time" in messages and "cannot be trusted" in messages


# -- serve: JSON-RPC, schema, size, concurrency --------------------------------------------------


@pytest.fixture
def serve_box(env, tmp_path: Path) -> dict[str, Any]:
    tools = Path(env["PATCH_TUI_TOOLBOX"]) / "tools"
    write_tool(
        tools,
        "echo",
        'def main(text: str) -> dict:\n    return {"echo": text}',
        inputs=[{"name": "text"}],
    )
    write_tool(
        tools, "mark", MARK_BODY, inputs=MARK_INPUTS, human_confirm=True, filesystem="read-write"
    )
    # Waits until the test releases it (or 30 s): calls that are surely still running.
    write_tool(
        tools,
        "wait",
        "def main(release: str) -> dict:\n"
        "    import os, time\n"
        "    end = time.monotonic() + 30\n"
        "    while not os.path.exists(release) and time.monotonic() < end:\n"
        "        time.sleep(0.05)\n"
        "    return {'released': os.path.exists(release)}",
        inputs=[{"name": "release"}],
        filesystem="read-only",
    )
    (tools / "big.py").write_text(
        (SAMPLES / "slugify.py")
        .read_text()
        .replace("# name: slugify", f"# name: big\n# x_big: {BIG}")
    )
    return {"env": env, "tools": tools, "tmp": tmp_path}


def test_malformed_json_rpc_gets_protocol_errors_and_serving_goes_on(serve_box) -> None:
    """A raw peer over stdio: what the SDK client cannot send."""
    env = serve_box["env"]
    proc = subprocess.Popen(
        [*PATCH_TUI, "serve"],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None

    def ask(line: str) -> dict[str, Any]:
        proc.stdin.write(line + "\n")
        proc.stdin.flush()
        return json.loads(proc.stdout.readline())

    try:
        assert ask("{not json")["error"]["code"] == -32700
        assert ask("[1, 2]")["error"]["code"] == -32600
        wrong = ask('{"jsonrpc": "2.0", "id": 7, "method": 3}')
        assert wrong["id"] == 7 and wrong["error"]["code"] == -32600
        init = ask(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {},
                        "clientInfo": {"name": "t", "version": "1"},
                    },
                }
            )
        )
        assert init["result"]["serverInfo"]["name"] == "patch-tui"
        proc.stdin.write('{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        listed = ask('{"jsonrpc": "2.0", "id": 2, "method": "tools/list"}')
        names = {t["name"] for t in listed["result"]["tools"]}
        assert {"echo", "mark", "wait", "big"} <= names  # the 4301-digit number broke nothing
        assert ask("\x00\x01garbage")["error"]["code"] == -32700
        assert ask('{"jsonrpc": "2.0", "id": 3, "method": "ping"}') == {
            "jsonrpc": "2.0",
            "id": 3,
            "result": {},
        }
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
        err = proc.stderr.read() if proc.stderr else ""
    assert "Traceback" not in err


async def _client(serve_box: dict[str, Any], extra_env: dict[str, str] | None = None):
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "patch_tui", "serve"],
        env={**serve_box["env"], **(extra_env or {})},
    )
    errlog = open(serve_box["tmp"] / "serve.log", "a")  # noqa: SIM115 - the test reads it after
    return Client(stdio_client(params, errlog=errlog), mode="legacy", cache=None), errlog


def _said(result: Any) -> str:
    return json.dumps(result.structured_content)


async def test_serve_checks_args_before_holding_and_caps_their_size(serve_box) -> None:
    client_cm, errlog = await _client(serve_box, {"PATCH_TUI_SERVE_MAX_ARGS_BYTES": "2048"})
    marker = serve_box["tmp"] / "marker.txt"
    try:
        async with client_cm as client:
            wrong = await client.call_tool("echo", {"text": 123})
            # The error's words, whichever shape the answer has ({error} or {error, message}).
            assert wrong.is_error and "'text' must be a string, not an integer" in _said(wrong)
            bad_hold = await client.call_tool("mark", {"marker": str(marker), "text": ["x"]})
            assert bad_hold.is_error and "'text'" in _said(bad_hold)
            huge = await client.call_tool("mark", {"marker": str(marker), "text": "x" * 4096})
            assert huge.is_error and "2048 bytes" in _said(huge)
            assert "serve_max_args_bytes" in _said(huge)
            ok = await client.call_tool("echo", {"text": "fine"})
            assert not ok.is_error and ok.structured_content == {"echo": "fine"}
    finally:
        errlog.close()
    listed = run_cli(serve_box["env"], "inbox", "list", "--json")
    assert json.loads(listed.stdout) == []  # nothing was held for the refused calls
    assert runs_in(marker) == []
    assert "Traceback" not in (serve_box["tmp"] / "serve.log").read_text()


async def test_tools_list_and_ping_never_wait_behind_tool_calls(serve_box) -> None:
    """More slow calls than anyio's default thread pool (40): while every one of them is still
    running, tools/list and ping answer. No timing is asserted: the calls wait for a file the
    test writes only after tools/list answered, so a list stuck behind them never answers."""
    release = serve_box["tmp"] / "release"
    client_cm, errlog = await _client(serve_box)
    results: list[Any] = []
    try:
        async with client_cm as client:

            async def slow() -> None:
                results.append(await client.call_tool("wait", {"release": str(release)}))

            async with anyio.create_task_group() as tg:
                for _ in range(42):
                    tg.start_soon(slow)
                await anyio.sleep(1.0)  # let the calls reach the server
                with anyio.fail_after(25):
                    listed = await client.list_tools()
                    await client.send_ping()
                assert not results  # the calls are all still waiting
                assert "wait" in {t.name for t in listed.tools}
                release.write_text("go")
    finally:
        errlog.close()
    assert len(results) == 42 and all(not r.is_error for r in results)


# -- property tests: random bytes and random YAML never break the parser, lint or fmt ------------

_json_leaf = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=20)
)
_json_value = st.recursive(
    _json_leaf,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
_yaml_noise = st.lists(
    st.sampled_from(
        [
            "&a x",
            "*a",
            "!!python/object:os.system",
            "[",
            "{",
            "'",
            '"',
            "? x",
            "- -",
            "1e400",
            BIG,
            "-0",
            "0o17",
            ".inf",
            "yes",
            "~",
            "\t",
            "\x85",
            "\u2028",
            "#",
            ": :",
            "|",
            ">-",
        ]
    ),
    max_size=4,
)


def _check_file(raw: bytes) -> None:
    from patch_tui.format import toolfile
    from patch_tui.lint.engine import lint_toolfile

    tf = toolfile.parse_bytes(raw)
    diags = lint_toolfile(tf)
    assert all(d.code != "PT000" for d in diags), [d.message for d in diags if d.code == "PT000"]
    try:
        new = toolfile.format_text(tf)
    except toolfile.NotExact:
        return
    if new is not None:
        again = toolfile.parse(new)
        assert toolfile.format_text(again) == new  # idempotent
        assert toolfile._first_difference(tf.data, again.data) is None  # exact


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=400))
def test_random_bytes_never_break_the_parser_lint_or_fmt(raw: bytes) -> None:
    _check_file(b"# ---\n" + raw)
    _check_file(raw)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_json_value, _yaml_noise)
def test_random_yaml_never_breaks_the_parser_lint_or_fmt(value: Any, noise: list[str]) -> None:
    import yaml

    base = (SAMPLES / "word_count.py").read_text()
    head, _, body = base.partition("# ---\n")[2].partition("# ---\n")
    text = yaml.safe_dump({"x_extra": value}, allow_unicode=True) + " ".join(noise) + "\n"
    fm = "".join(f"# {line}\n" for line in text.splitlines())
    _check_file(("# ---\n" + head + fm + "# ---\n" + body).encode("utf-8", "surrogatepass"))


# -- the desk and the inbox on hostile files and rows ------------------------------------------------


async def test_the_desk_lists_every_tool_and_opens_a_hostile_one_read_only(tmp_path: Path) -> None:
    from desk_helpers import make_app, ready, tool_folder

    from patch_tui.ui.desk.tool_browser import ToolBrowser

    folder = tool_folder(tmp_path)
    regular = sorted(p for p in folder.glob("*.py"))
    hostile = folder / "zz_big.py"
    hostile.write_text(
        (SAMPLES / "slugify.py")
        .read_text()
        .replace("# name: slugify", f"# name: zz_big\n# x_big: {BIG}")
    )
    os.mkfifo(folder / "pipe.py")
    (folder / "zero.py").symlink_to("/dev/zero")
    app = make_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot, app)
        browser = app.screen.query_one(ToolBrowser)
        for _ in range(250):
            if len(browser.entries) >= len(regular) + 1:
                break
            await pilot.pause(0.02)
        listed = {e.path.name for e in browser.entries}
        assert listed == {p.name for p in regular} | {"zz_big.py"}  # every tool, no special file
        screen.open_tool(hostile)
        await pilot.pause()
        assert (
            screen.read_only_reason is not None
            and "cannot be written back" in screen.read_only_reason
        )
        assert screen.source.read_only
        assert any(d.code == "PT022" for d in screen.diagnostics)
        before = hostile.read_bytes()
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert hostile.read_bytes() == before and app.is_running


async def test_the_inbox_shows_a_damaged_row_and_every_other_one(
    tmp_path: Path, monkeypatch
) -> None:
    from inboxkit import hold, isolate, make_app, open_inbox, tools, wait_for

    from patch_tui.approvals.store import Store
    from patch_tui.ui.inbox.inbox_dialogs import DecideModal

    store = isolate(monkeypatch, tmp_path)
    folder = tools(tmp_path)
    good = hold(store, folder / "delete_file.py", {"path": "/tmp/a.txt"})
    bad = hold(store, folder / "slack_send_message.py", {"channel": "#x", "text": "hi"})
    conn = sqlite3.connect(store)
    conn.execute("UPDATE actions SET args_json = '{broken' WHERE token = ?", (bad.token,))
    conn.commit()
    conn.close()
    app = make_app(folder, store)
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.pause(0.3)
        screen = await open_inbox(pilot, app)
        await wait_for(pilot, lambda: len(screen.list.actions) == 2, what="both actions")
        damaged = next(a for a in screen.list.actions if a.token == bad.token)
        assert (
            damaged.damaged
            and not next(a for a in screen.list.actions if a.token == good.token).damaged
        )
        while screen.current is None or screen.current.token != bad.token:
            await pilot.press("down")
            await pilot.pause()
        assert not screen.can_approve
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.screen, DecideModal), what="the dialog")
        await pilot.pause()  # laid out before a click aims at it
        await pilot.click("#decide-yes")
        await wait_for(
            pilot,
            lambda: Store(store, actor="check").get(bad.token).status == "rejected",
            what="the damaged action to be rejected",
        )
        assert app.is_running
