"""The Claude generator, driven through the real anthropic SDK against a fake Messages API on
127.0.0.1 (tests/fake_anthropic.py) that speaks the real SSE protocol. No network."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from fake_anthropic import DEFAULT_MODEL_ID, Fail, FakeAnthropic, Reply, closed_port_url

from patch_tui.format import toolfile
from patch_tui.generate import engine as g
from patch_tui.lint import lint_text

TOOL = (Path(g.PROMPTS_DIR) / "example_tool.txt").read_text(encoding="utf-8")
ALIAS = "claude-sonnet-5-5"
STAMP_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")


# No key, base URL or model from the environment; config and toolbox in tmp_path; `fake` is the
# fake Messages API on 127.0.0.1 (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("generate_env")


class Recorder:
    def __init__(self) -> None:
        self.events: list[g.Event] = []

    def __call__(self, event: g.Event) -> None:
        self.events.append(event)

    def of(self, kind: type) -> list:
        return [e for e in self.events if isinstance(e, kind)]


async def run_generate(fake: FakeAnthropic, prompt: str = "Count the words in a text", **kw):
    rec = kw.pop("on_event", None) or Recorder()
    kw.setdefault("max_repairs", 2)
    result = await g.generate(
        prompt,
        model=kw.pop("model", ALIAS),
        api_key="sk-test",
        base_url=fake.base_url,
        max_retries=kw.pop("max_retries", 0),
        on_event=rec,
        **kw,
    )
    return result, rec


def body_of(text: str) -> str:
    return toolfile.parse(text).body


# --- the fallback example and the prompt -----------------------------------------------------


def test_builtin_example_tool_is_lint_clean() -> None:
    assert [d for d in lint_text(TOOL) if d.severity == "error"] == []


def test_system_prompt_holds_the_rules_and_an_example() -> None:
    prompt = g.system_prompt()
    for needle in (
        "# ---",
        "tainted_ok",
        "human_confirm",
        "json.loads(sys.stdin.read())",
        "==",
        "import time",
    ):
        assert needle in prompt
    assert "<example file=" in prompt
    assert prompt == g.system_prompt()  # same text every time, so the prompt cache can hit


# --- happy path --------------------------------------------------------------------------------


async def test_happy_path_streams_and_stamps(fake: FakeAnthropic) -> None:
    # The model writes its own (wrong) provenance and version: both are overwritten.
    answer = TOOL.replace("# version: 1.0.0", "# version: 3.4.5").replace(
        "#   packages: []\n",
        "#   packages: []\n# generated_by: some-other-model\n# generated_at: yesterday\n",
    )
    fake.add(Reply(answer, chunk=17, cache_read_input_tokens=1800, input_tokens=40))
    before = datetime.now(UTC).replace(microsecond=0)
    result, rec = await run_generate(fake)
    after = datetime.now(UTC)

    assert result.ok and result.rounds == 1
    assert "".join(e.text for e in rec.of(g.TextDelta)) == answer  # streamed as it came
    assert len(rec.of(g.TextDelta)) > 10
    data = toolfile.parse(result.text).data
    assert data["generated_by"] == DEFAULT_MODEL_ID != ALIAS  # what the API reported
    assert STAMP_RE.match(data["generated_at"])
    stamped = datetime.strptime(data["generated_at"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    assert before <= stamped <= after
    assert data["version"] == "1.0.0"
    assert result.model == DEFAULT_MODEL_ID and result.generated_at == data["generated_at"]
    assert body_of(result.text) == body_of(answer)  # only frontmatter lines changed
    assert result.usage.cache_read_input_tokens == 1800 and result.usage.input_tokens == 40
    assert [type(e).__name__ for e in rec.events if not isinstance(e, g.TextDelta)] == [
        "RoundStarted",
        "UsageReported",
        "RoundChecked",
        "Finished",
    ]

    (req,) = fake.requests
    assert req.path == "/v1/messages" and req.body["stream"] is True
    assert req.body["model"] == ALIAS
    system = req.body["system"]
    assert system[-1]["cache_control"] == {"type": "ephemeral"}
    assert "stdin" in system[-1]["text"]
    assert "Count the words in a text" in req.text_of(0)


async def test_fenced_answer_with_prose_is_unwrapped(fake: FakeAnthropic) -> None:
    fake.add(Reply("Here is your tool:\n\n```python\n" + TOOL + "```\n\nIt counts words."))
    result, _ = await run_generate(fake)
    assert result.ok
    assert result.text.startswith("# ---\n")
    assert "```" not in result.text and "It counts words" not in result.text
    assert body_of(result.text) == body_of(TOOL)


@pytest.mark.parametrize(
    "answer",
    [
        "~~~py\n" + TOOL + "~~~\n",
        "```\n" + TOOL,  # an opening fence never closed
        "Sure! Here it is.\n" + TOOL,
        "\n\n" + TOOL + "\n\n\n",
    ],
)
def test_extract_tool_variants(answer: str) -> None:
    assert g.extract_tool(answer) == TOOL


def test_extract_tool_keeps_a_shebang() -> None:
    assert g.extract_tool("#!/usr/bin/env python3\n" + TOOL) == "#!/usr/bin/env python3\n" + TOOL


# --- lint-gated repair ---------------------------------------------------------------------


BROKEN = TOOL.replace(
    "# description: Count the words, lines and characters in a text.\n", ""
).replace("    words = WORD.findall(text)\n", "    words = WORD.findall(text\n")


async def test_lint_errors_are_sent_back_and_the_repair_is_used(fake: FakeAnthropic) -> None:
    fake.add(Reply(BROKEN), Reply(TOOL, model="claude-sonnet-5-5-20260202"))
    result, rec = await run_generate(fake)

    assert result.ok and result.rounds == 2
    assert toolfile.parse(result.text).data["generated_by"] == "claude-sonnet-5-5-20260202"
    assert [(e.round, e.kind) for e in rec.of(g.RoundStarted)] == [(0, "initial"), (1, "repair")]
    first, second = rec.of(g.RoundChecked)
    errors = [d for d in first.diagnostics if d.severity == "error"]
    broken_line = next(i for i, ln in enumerate(first.text.splitlines(), 1) if "findall(text" in ln)
    assert "PT010" in {d.code for d in errors}  # the missing description
    assert any(
        d.line == broken_line for d in errors
    )  # the syntax error (PT030, or our compile's E999)
    assert second.error_count == 0

    assert len(fake.requests) == 2
    repair = fake.requests[1]
    roles = [m["role"] for m in repair.messages]
    assert roles == ["user", "assistant", "user"]
    # The assistant turn is the file as checked; the follow-up names every error with its line.
    assert repair.text_of(1) == first.text.rstrip()
    feedback = repair.text_of(2)
    for d in first.diagnostics:
        if d.severity == "error":
            assert f"line {d.line}, column {d.column}: {d.code} {d.message}" in feedback
    assert "whole corrected file" in feedback
    # The long system prompt is identical in both turns, so the second one reads the cache.
    assert repair.body["system"] == fake.requests[0].body["system"]


async def test_result_with_errors_after_max_repairs_is_not_saved(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    fake.add(Reply(BROKEN), Reply(BROKEN))
    result, _ = await run_generate(fake, max_repairs=1)
    assert not result.ok and result.rounds == 2 and len(fake.requests) == 2
    with pytest.raises(g.GenerateError) as info:
        g.save_new(result, tmp_path / "out")
    assert info.value.kind == "invalid"
    assert not (tmp_path / "out").exists()
    path = g.save_new(result, tmp_path / "out", keep_invalid=True)
    assert path.read_text(encoding="utf-8") == result.text


async def test_max_repairs_zero_makes_one_request(fake: FakeAnthropic) -> None:
    fake.add(Reply(BROKEN))
    result, _ = await run_generate(fake, max_repairs=0)
    assert not result.ok and len(fake.requests) == 1


# --- names and saving ----------------------------------------------------------------------------


async def test_existing_name_is_never_overwritten(fake: FakeAnthropic, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    existing = out / "count_words.py"
    existing.write_text("# mine\n", encoding="utf-8")
    taken = g.taken_names([out])
    assert "count_words" in taken
    fake.add(Reply(TOOL))
    result, rec = await run_generate(fake, existing_names=taken)
    assert result.name == "count_words_2" and result.ok
    assert any("count_words already exists" in n.message for n in rec.of(g.Notice))
    assert "count_words" in fake.requests[0].text_of(0).split("already taken")[1]
    path = g.save_new(result, out)
    assert path == out / "count_words_2.py"
    assert existing.read_text(encoding="utf-8") == "# mine\n"


async def test_save_refuses_an_existing_file(fake: FakeAnthropic, tmp_path: Path) -> None:
    fake.add(Reply(TOOL))
    result, _ = await run_generate(fake)
    (tmp_path / "count_words.py").write_text("# keep me\n", encoding="utf-8")
    with pytest.raises(g.GenerateError) as info:
        g.save_new(result, tmp_path)
    assert info.value.kind == "exists"
    assert (tmp_path / "count_words.py").read_text(encoding="utf-8") == "# keep me\n"


# --- refine --------------------------------------------------------------------------------------


async def test_refine_bumps_version_keeps_name_and_shows_a_diff(fake: FakeAnthropic) -> None:
    current = g.stamp(TOOL, model_id="claude-old-1", when="2020-01-01T00:00:00Z", version="1.2.3")
    changed = TOOL.replace("count_words", "word_counter").replace(
        '        "characters": len(text),\n',
        '        "characters": len(text),\n        "blank_lines": text.count("\\n\\n"),\n',
    )
    fake.add(Reply(changed, model="claude-sonnet-5-5-20260303"))
    rec = Recorder()
    result = await g.refine(
        current,
        "Also count blank lines",
        model=ALIAS,
        api_key="k",
        base_url=fake.base_url,
        max_retries=0,
        on_event=rec,
    )
    data = toolfile.parse(result.text).data
    assert data["version"] == "1.3.0"
    assert data["name"] == "count_words"
    assert data["generated_by"] == "claude-sonnet-5-5-20260303"
    assert data["generated_at"] != "2020-01-01T00:00:00Z"
    assert any("renamed" in n.message for n in rec.of(g.Notice))
    assert rec.of(g.RoundStarted)[0].kind == "refine"

    sent = fake.requests[0].text_of(0)
    assert current.rstrip("\n") in sent and "Also count blank lines" in sent

    diff = result.diff("count_words.py")
    assert "-# version: 1.2.3" in diff.manifest and "+# version: 1.3.0" in diff.manifest
    assert '+        "blank_lines"' in diff.body
    assert "version" not in diff.body


async def test_refine_goes_through_the_repair_loop(fake: FakeAnthropic) -> None:
    fake.add(Reply(BROKEN), Reply(TOOL))
    result = await g.refine(
        TOOL, "tidy it", model=ALIAS, api_key="k", base_url=fake.base_url, max_retries=0
    )
    assert result.ok and result.rounds == 2
    assert toolfile.parse(result.text).data["version"] == "1.1.0"


# --- errors ----------------------------------------------------------------------------------------


async def _error_of(fake: FakeAnthropic, **kw) -> tuple[g.GenerateError, Recorder]:
    rec = Recorder()
    with pytest.raises(g.GenerateError) as info:
        await run_generate(fake, on_event=rec, **kw)
    error = info.value
    # One clear sentence: no newline, no traceback, and the same error as the Failed event.
    assert "\n" not in str(error) and str(error).endswith(".")
    assert rec.of(g.Failed) == [g.Failed(error)] or rec.of(g.Failed)[0].error is error
    return error, rec


async def test_no_api_key_fails_before_any_request(fake: FakeAnthropic) -> None:
    rec = Recorder()
    with pytest.raises(g.GenerateError) as info:
        await g.generate("x", model=ALIAS, api_key=None, base_url=fake.base_url, on_event=rec)
    assert info.value.kind == "no_key" and "ANTHROPIC_API_KEY" in str(info.value)
    assert fake.requests == []


async def test_401(fake: FakeAnthropic) -> None:
    fake.add(Fail(401, "authentication_error", "invalid x-api-key"))
    error, _ = await _error_of(fake)
    assert error.kind == "auth" and "401" in str(error)


async def test_429_reports_retry_after(fake: FakeAnthropic) -> None:
    fake.add(Fail(429, "rate_limit_error", "slow down", {"retry-after": "17"}))
    error, _ = await _error_of(fake)
    assert error.kind == "rate_limit" and error.retry_after == 17
    assert "17 seconds" in str(error)


async def test_429_is_retried_by_the_sdk_when_allowed(fake: FakeAnthropic) -> None:
    fake.add(Fail(429, "rate_limit_error", "slow down", {"retry-after": "0.1"}), Reply(TOOL))
    result, _ = await run_generate(fake, max_retries=1)
    assert result.ok and len(fake.requests) == 2


async def test_529_overloaded(fake: FakeAnthropic) -> None:
    fake.add(Fail(529, "overloaded_error", "Overloaded"))
    error, _ = await _error_of(fake)
    assert error.kind == "overloaded" and "529" in str(error)


async def test_overloaded_error_event_mid_stream(fake: FakeAnthropic) -> None:
    fake.add(Reply(TOOL, chunk=10, error_after=3))
    error, rec = await _error_of(fake)
    assert error.kind == "overloaded"
    assert len(rec.of(g.TextDelta)) == 3 and not rec.of(g.Finished)


async def test_connection_dropped_mid_stream(fake: FakeAnthropic) -> None:
    fake.add(Reply(TOOL, chunk=10, drop_after=4))
    error, rec = await _error_of(fake)
    assert error.kind == "dropped"
    assert rec.of(g.TextDelta) and not rec.of(g.Finished)


async def test_connection_refused() -> None:
    url = closed_port_url()
    rec = Recorder()
    with pytest.raises(g.GenerateError) as info:
        await g.generate("x", model=ALIAS, api_key="k", base_url=url, max_retries=0, on_event=rec)
    assert info.value.kind == "connection" and url in str(info.value)
    assert "\n" not in str(info.value)


async def test_unknown_model_404(fake: FakeAnthropic) -> None:
    fake.add(Fail(404, "not_found_error", "model: claude-nope"))
    error, _ = await _error_of(fake, model="claude-nope")
    assert error.kind == "model" and "claude-nope" in str(error)


# --- cancellation --------------------------------------------------------------------------------


async def test_cancel_mid_stream_stops_the_stream(fake: FakeAnthropic) -> None:
    fake.add(Reply(TOOL, chunk=5, hold_after=1))  # held after its first delta, never released
    rec = Recorder()
    started = asyncio.Event()

    def on_event(event: g.Event) -> None:
        rec(event)
        if isinstance(event, g.TextDelta):
            started.set()

    task = asyncio.create_task(
        g.generate(
            "x", model=ALIAS, api_key="k", base_url=fake.base_url, max_retries=0, on_event=on_event
        )
    )
    # The first generation imports the SDK (seconds on a loaded machine): only a hang may end this.
    await asyncio.wait_for(started.wait(), 60)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # The server sees the client go away while the rest of the answer is held (it would never end).
    assert await asyncio.to_thread(fake.wait_for, lambda f: f.disconnects == 1, 30)
    assert fake.completed == 0
    assert not rec.of(g.Finished) and not rec.of(g.RoundChecked)


# --- options ---------------------------------------------------------------------------------------


def test_resolve_options_precedence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('model = "from-config"\nanthropic_api_key = "cfg-key"\n')
    opts = g.resolve_options()
    assert (opts.model, opts.api_key) == ("from-config", "cfg-key")
    monkeypatch.setenv("PATCH_TUI_MODEL", "from-env")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "env-key")
    opts = g.resolve_options()
    assert (opts.model, opts.api_key) == ("from-env", "env-key")
    assert g.resolve_options(model="from-flag").model == "from-flag"


def test_default_model_is_a_current_sdk_model(tmp_path: Path) -> None:
    from typing import get_args

    from anthropic.types import Model

    from patch_tui.settings.config import DEFAULT_MODEL

    literal = get_args(Model)[0]
    assert DEFAULT_MODEL in get_args(literal)
    assert g.resolve_options().model == DEFAULT_MODEL


# --- start-up stays light --------------------------------------------------------------------------


def _modules_after(code: str) -> set[str]:
    probe = code + "\nimport sys\nprint(','.join(sorted({m.split('.')[0] for m in sys.modules})))"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    return set(out.stdout.strip().splitlines()[-1].split(","))


def test_anthropic_not_imported_before_generation_starts(tmp_path: Path) -> None:
    tool = tmp_path / "t.py"
    tool.write_text(TOOL, encoding="utf-8")
    path = str(tool)
    loaded = _modules_after(
        "import patch_tui.cli, patch_tui.commands.generate, patch_tui.generate.engine\n"
        "import patch_tui.ui.desk.generate\n"
        "from patch_tui.generate import engine as g\n"
        f"g.system_prompt(); g.check(open({path!r}).read())\n"
        "from patch_tui.cli import main\n"
        f"main(['lint', {path!r}])\n"
    )
    assert "anthropic" not in loaded and "httpx2" not in loaded
    assert "patch_tui" in loaded


async def test_saving_into_a_patch_toolbox_updates_its_index(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    import json

    root = tmp_path / "toolbox"
    (root / "tools").mkdir(parents=True)
    (root / "tools" / "count_words.py").write_text(TOOL, encoding="utf-8")
    (root / "index.json").write_text(
        json.dumps({"tools": [{"name": "count_words", "version": "1.0.0"}]})
    )
    taken = g.taken_names([root])
    assert "count_words" in taken
    fake.add(Reply(TOOL))
    result, _ = await run_generate(fake, existing_names=taken)
    path = g.save_new(result, root)
    assert path == root / "tools" / "count_words_2.py"
    index = json.loads((root / "index.json").read_text())
    assert list(index) == ["count_words", "count_words_2"]
    assert index["count_words_2"]["filePath"] == str(path)
    assert (root / "tools" / "count_words.py").read_text(encoding="utf-8") == TOOL


async def test_a_malformed_stream_is_a_clear_error(fake: FakeAnthropic) -> None:
    fake.add(Reply(TOOL, omit_message_start=True))
    error, _ = await _error_of(fake)
    assert error.kind == "api" and "could not be read" in str(error)
