"""The shipped sample tools: lint-clean, canonical, covering the format, and really working
when run the way the runtime runs them (JSON on stdin, JSON result on the last stdout line)."""

from __future__ import annotations

import ast
import http.server
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from patch_tui.format import toolfile
from patch_tui.lint.analysis import analyse, literal_value
from patch_tui.lint.engine import lint_toolfile
from patch_tui.settings.paths import sample_tools_dir

TOOLS = sorted(sample_tools_dir().glob("*.py"))


def by_name(name: str) -> Path:
    path = sample_tools_dir() / f"{name}.py"
    assert path.is_file(), path
    return path


def run_tool(name: str, args: dict, env: dict[str, str] | None = None) -> object:
    """Run a sample tool like the runtime does and return its parsed result."""
    out = subprocess.run(
        [sys.executable, str(by_name(name))],
        input=json.dumps(args),
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_there_are_enough_tools() -> None:
    assert len(TOOLS) >= 8


@pytest.mark.parametrize("path", TOOLS, ids=lambda p: p.stem)
def test_sample_tool_lints_clean_and_is_canonical(path: Path) -> None:
    tf = toolfile.read(str(path))
    assert lint_toolfile(tf) == []
    assert tf.manifest is not None and tf.manifest.name == path.stem
    assert toolfile.format_text(tf) == tf.text  # `patch-tui fmt` leaves it alone


@pytest.mark.parametrize("path", TOOLS, ids=lambda p: p.stem)
def test_manifest_defaults_match_main(path: Path) -> None:
    """An optional input's manifest default is exactly main()'s default."""
    tf = toolfile.read(str(path))
    assert tf.manifest is not None
    main = analyse(ast.parse(tf.body)).main
    assert main is not None
    for inp in tf.manifest.inputs:
        param = main.param(inp.name)
        assert param is not None
        if inp.has_default:
            ok, value = literal_value(param.default)
            assert ok and value == inp.default, inp.name


def test_samples_cover_the_format() -> None:
    manifests = [toolfile.read(str(p)).manifest for p in TOOLS]
    assert all(m is not None for m in manifests)
    caps = [m.capabilities for m in manifests]  # type: ignore[union-attr]
    assert any(c.network for c in caps)
    assert any(c.filesystem == "read-only" for c in caps)
    assert any(c.filesystem == "read-write" and c.human_confirm for c in caps)
    assert any(
        m.capabilities.human_confirm and m.external_auth == ["slack.send_message"]
        for m in manifests
    )  # type: ignore[union-attr]
    inputs = [i for m in manifests for i in m.inputs]  # type: ignore[union-attr]
    assert any(i.type == "array" and i.items is not None for i in inputs)
    assert any(i.type == "object" for i in inputs)
    assert any(not i.required and i.has_default for i in inputs)
    assert any(m.generated_by and m.generated_at for m in manifests)  # type: ignore[union-attr]
    generated = next(p for p in TOOLS if "generated_at:" in p.read_text())
    # Written as the runtime's writer writes it (unquoted: a string to the runtime's reader).
    assert "generated_at: 20" in generated.read_text()


# --- they work ----------------------------------------------------------------------------


def test_word_count() -> None:
    result = run_tool("word_count", {"text": "Don't panic.\nA well-known guide, a GUIDE."})
    assert result == {"words": 7, "lines": 2, "characters": 41, "unique_words": 5}


def test_slugify() -> None:
    assert (
        run_tool("slugify", {"text": "Héllo, Wörld: the Best of 2024!"})
        == "hello-world-the-best-of-2024"
    )
    assert (
        run_tool("slugify", {"text": "Héllo Wörld again", "separator": "_", "max_length": 11})
        == "hello_world"
    )


def test_regex_extract() -> None:
    text = "Mail bob@example.com or ALICE@example.org, or bob@example.com again."
    pattern = r"([\w.+-]+)@[\w-]+\.[\w.]+"
    assert run_tool("regex_extract", {"text": text, "pattern": pattern}) == [
        "bob@example.com",
        "ALICE@example.org",
        "bob@example.com",
    ]
    assert run_tool(
        "regex_extract", {"text": text, "pattern": pattern, "group": 1, "unique": True}
    ) == [
        "bob",
        "ALICE",
    ]
    assert run_tool(
        "regex_extract", {"text": "Cat cat CAT", "pattern": "cat", "ignore_case": True}
    ) == [
        "Cat",
        "cat",
        "CAT",
    ]


def test_json_pick() -> None:
    data = {"user": {"name": "Ada", "emails": ["a@x.org", "b@y.org"]}, "n": 0}
    result = run_tool(
        "json_pick", {"data": data, "paths": ["user.name", "user.emails.-1", "n", "user.age"]}
    )
    assert result == {"user.name": "Ada", "user.emails.-1": "b@y.org", "n": 0, "user.age": ""}


def test_dedupe_list() -> None:
    items = [" pear", "Apple", "apple ", "pear", "fig"]
    assert run_tool("dedupe_list", {"items": items}) == ["pear", "Apple", "apple", "fig"]
    assert run_tool("dedupe_list", {"items": items, "case_sensitive": False, "sort": True}) == [
        "Apple",
        "fig",
        "pear",
    ]


def test_csv_to_json() -> None:
    csv_text = "name;age;score\nAda;36;9.5\nAlan;41;x\n"
    assert run_tool("csv_to_json", {"csv_text": csv_text}) == [
        {"name": "Ada", "age": 36, "score": 9.5},
        {"name": "Alan", "age": 41, "score": "x"},
    ]
    assert run_tool(
        "csv_to_json", {"csv_text": "a,b\n1,2\n", "delimiter": ",", "numbers": False}
    ) == [{"a": "1", "b": "2"}]


def test_file_stats(tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("one two\nthree\n", encoding="utf-8")
    os.utime(target, (0, 1_700_000_000))
    result = run_tool("file_stats", {"path": str(target)})
    assert result == {
        "path": str(target.resolve()),
        "bytes": 14,
        "lines": 2,
        "words": 3,
        "modified": "2023-11-14T22:13:20Z",
    }


def test_delete_file(tmp_path: Path) -> None:
    target = tmp_path / "old.log"
    target.write_text("12345")
    assert run_tool("delete_file", {"path": str(target)}) == {
        "path": str(target),
        "deleted": True,
        "bytes": 5,
    }
    assert not target.exists()
    assert run_tool("delete_file", {"path": str(target), "missing_ok": True}) == {
        "path": str(target),
        "deleted": False,
        "bytes": 0,
    }
    folder = tmp_path / "keep"
    folder.mkdir()
    out = subprocess.run(
        [sys.executable, str(by_name("delete_file"))],
        input=json.dumps({"path": str(folder)}),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode != 0 and "refusing to delete a folder" in out.stderr
    assert folder.is_dir()


def test_slack_send_message_without_a_token_says_so() -> None:
    env = {k: v for k, v in os.environ.items() if k != "PATCH_ACCESS_TOKEN"}
    result = run_tool("slack_send_message", {"channel": "#general", "text": "hi"}, env=env)
    assert result["ok"] is False and result["error"].startswith("PATCH_ACCESS_TOKEN is not set")
    # It says how to get one, not just "connect Slack first" (issue 25).
    assert "Patch runtime" in result["error"] and "chat:write" in result["error"]


class _Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        if self.path == "/moved":
            self.send_response(302)
            self.send_header("Location", "/page")
            self.end_headers()
            return
        body = "<html><head><title>\n  Caf\u00e9 &amp; menu </title></head><body><title>no</title></body></html>"
        data = body.encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def page_server() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_fetch_url_title_against_a_local_server(page_server: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    result = run_tool("fetch_url_title", {"url": f"{page_server}/moved", "timeout": 5}, env=env)
    assert result == {"url": f"{page_server}/page", "status": 200, "title": "Café & menu"}


def test_fetch_url_title_refuses_other_schemes(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("<title>secret</title>")
    out = subprocess.run(
        [sys.executable, str(by_name("fetch_url_title"))],
        input=json.dumps({"url": secret.as_uri()}),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode != 0 and "http:// or https://" in out.stderr
