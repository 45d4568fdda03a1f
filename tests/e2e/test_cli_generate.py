"""`patch-tui generate` as a person or a script runs it: a real subprocess, the real SDK, the fake
Messages API on 127.0.0.1 reached through ANTHROPIC_BASE_URL. No network."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from fake_anthropic import DEFAULT_MODEL_ID, Fail, FakeAnthropic, Reply, closed_port_url

from patch_tui.format import toolfile
from patch_tui.generate import engine as g
from patch_tui.lint import lint_text

TOOL = (Path(g.PROMPTS_DIR) / "example_tool.txt").read_text(encoding="utf-8")
BROKEN = TOOL.replace("    words = WORD.findall(text)\n", "    words = WORD.findall(text\n")


def run(tmp_path: Path, *args: str, base_url: str | None, key: str | None = "sk-test", **env: str):
    environ = {
        k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "PATCH_TUI_"))
    }
    environ.update(
        PATCH_TUI_CONFIG=str(tmp_path / "config.toml"),
        PATCH_TUI_TOOLBOX=str(tmp_path / "toolbox"),
        PATCH_TUI_STORE=str(tmp_path / "store.sqlite3"),
        HOME=str(tmp_path / "home"),
        **env,
    )
    if key is not None:
        environ["ANTHROPIC_API_KEY"] = key
    if base_url is not None:
        environ["ANTHROPIC_BASE_URL"] = base_url
    return subprocess.run(
        [sys.executable, "-m", "patch_tui.cli", "generate", *args],
        capture_output=True,
        text=True,
        env=environ,
        cwd=tmp_path,
        timeout=60,
    )


class Done:
    def __init__(self, returncode: int, stdout: str, stderr: str) -> None:
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


@pytest.fixture
def call(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path):
    """`patch-tui generate ...` in this process (fast); `run` above is the real subprocess."""
    from patch_tui.cli import main

    def invoke(*args: str, base_url: str | None, key: str | None = "sk-test", **env: str) -> Done:
        for name in list(os.environ):
            if name.startswith(("ANTHROPIC_", "PATCH_TUI_")):
                monkeypatch.delenv(name)
        monkeypatch.setenv("PATCH_TUI_CONFIG", str(tmp_path / "config.toml"))
        monkeypatch.setenv("PATCH_TUI_TOOLBOX", str(tmp_path / "toolbox"))
        monkeypatch.chdir(tmp_path)
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        if key is not None:
            monkeypatch.setenv("ANTHROPIC_API_KEY", key)
        if base_url is not None:
            monkeypatch.setenv("ANTHROPIC_BASE_URL", base_url)
        capsys.readouterr()
        rc = main(["generate", *args])
        captured = capsys.readouterr()
        return Done(rc, captured.out, captured.err)

    return invoke


def test_generate_writes_a_clean_tool_and_prints_its_path(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    fake.add(Reply("```python\n" + TOOL + "```\n"))
    out = tmp_path / "out"
    proc = run(tmp_path, "Count the words in a text", "--out", str(out), base_url=fake.base_url)
    assert proc.returncode == 0, proc.stderr
    path = Path(proc.stdout.strip().splitlines()[-1])
    assert path == out / "count_words.py" and path.is_file()
    text = path.read_text(encoding="utf-8")
    assert [d for d in lint_text(text) if d.severity == "error"] == []
    data = toolfile.parse(text).data
    assert data["generated_by"] == DEFAULT_MODEL_ID and data["version"] == "1.0.0"
    assert "writing the tool with" in proc.stderr and "no errors" in proc.stderr
    # The tool works: JSON on stdin, one JSON line on stdout.
    ran = subprocess.run(
        [sys.executable, str(path)],
        input='{"text": "one two three"}',
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert ran.stdout.strip() == '{"words": 3, "lines": 1, "characters": 13}'


def test_model_comes_from_flag_then_env(fake: FakeAnthropic, tmp_path: Path, call) -> None:
    fake.add(Reply(TOOL), Reply(TOOL))
    call(
        "x",
        "--out",
        str(tmp_path / "a"),
        base_url=fake.base_url,
        PATCH_TUI_MODEL="claude-haiku-4-5",
    )
    call(
        "x",
        "--out",
        str(tmp_path / "b"),
        "--model",
        "claude-opus-4-8",
        base_url=fake.base_url,
        PATCH_TUI_MODEL="claude-haiku-4-5",
    )
    assert [r.body["model"] for r in fake.requests] == ["claude-haiku-4-5", "claude-opus-4-8"]


def test_errors_left_after_repairs_exit_1_and_write_nothing(
    fake: FakeAnthropic, tmp_path: Path, call
) -> None:
    fake.add(Reply(BROKEN), Reply(BROKEN))
    out = tmp_path / "out"
    proc = call("x", "--out", str(out), "--max-repairs", "1", base_url=fake.base_url)
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert "was never closed" in proc.stderr and "nothing was written" in proc.stderr
    assert not out.exists() or list(out.iterdir()) == []
    assert len(fake.requests) == 2


def test_keep_invalid_writes_and_still_exits_1(fake: FakeAnthropic, tmp_path: Path, call) -> None:
    fake.add(Reply(BROKEN))
    proc = call(
        "x", "--out", str(tmp_path), "--max-repairs", "0", "--keep-invalid", base_url=fake.base_url
    )
    assert proc.returncode == 1
    path = Path(proc.stdout.strip().splitlines()[-1])
    assert path.is_file() and "findall(text\n" in path.read_text(encoding="utf-8")


def test_existing_tool_is_not_overwritten(fake: FakeAnthropic, tmp_path: Path, call) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "count_words.py").write_text("# mine\n", encoding="utf-8")
    fake.add(Reply(TOOL))
    proc = call("x", "--out", str(out), base_url=fake.base_url)
    assert proc.returncode == 0, proc.stderr
    assert Path(proc.stdout.strip()) == out / "count_words_2.py"
    assert (out / "count_words.py").read_text(encoding="utf-8") == "# mine\n"
    assert "count_words already exists" in proc.stderr


def test_no_key_is_a_usage_error(call) -> None:
    proc = call("x", base_url=closed_port_url(), key=None)
    assert proc.returncode == 2
    assert "ANTHROPIC_API_KEY" in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("answers", "expected"),
    [
        ([Fail(401, "authentication_error", "invalid x-api-key")], "refused the API key (401)"),
        # The SDK retries once, honouring retry-after, then we report the wait.
        (
            [Fail(429, "rate_limit_error", "slow", {"retry-after": "0.2"})] * 2,
            "try again in 0.2 seconds",
        ),
        ([Fail(529, "overloaded_error", "Overloaded")] * 2, "overloaded right now (529)"),
    ],
)
def test_api_errors_exit_2_with_one_clear_line(
    fake: FakeAnthropic, tmp_path: Path, answers: list, expected: str, call
) -> None:
    fake.add(*answers)
    proc = call("x", "--out", str(tmp_path / "out"), base_url=fake.base_url)
    assert proc.returncode == 2
    assert expected in proc.stderr and "Traceback" not in proc.stderr
    assert proc.stdout == "" and not (tmp_path / "out").exists()


def test_connection_refused_exits_2(call) -> None:
    url = closed_port_url()
    proc = call("x", base_url=url)
    assert proc.returncode == 2
    assert f"Cannot reach Claude's API at {url}" in proc.stderr and "Traceback" not in proc.stderr


def test_bad_max_repairs_is_a_usage_error(call) -> None:
    proc = call("x", "--max-repairs", "-1", base_url=None)
    assert proc.returncode == 2 and "--max-repairs" in proc.stderr


def test_a_model_id_with_escapes_never_reaches_stderr_raw(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    # The model id comes from a flag, an env var or the config file, and is echoed in every
    # progress line: its OSC 2 (window title), BEL and C1 CSI are shown as tokens.
    fake.add(Reply("```python\n" + TOOL + "```\n"))
    model = "claude\x1b]2;PWNED\x07\x9b6n"
    proc = run(
        tmp_path,
        "Count the words in a text",
        "--out",
        str(tmp_path / "o"),
        "--model",
        model,
        base_url=fake.base_url,
    )
    assert "writing the tool with claude" in proc.stderr, proc.stderr
    for raw in ("\x1b", "\x07", "\x9b"):
        assert raw not in proc.stderr, repr(raw)
    assert "⟦U+001B⟧]2;PWNED⟦U+0007⟧⟦U+009B⟧6n" in proc.stderr
