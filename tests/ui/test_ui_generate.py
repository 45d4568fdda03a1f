"""The generate screen (Pilot), against the fake Messages API on 127.0.0.1: streaming preview,
rounds, usage, cancel, accept, discard, refine with a diff, and one notification per error."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
from fake_anthropic import DEFAULT_MODEL_ID, Fail, FakeAnthropic, Reply
from pilotkit import until as pilot_until
from textual.app import App
from textual.widgets import RichLog, Static

from patch_tui.format import toolfile
from patch_tui.generate import engine as g
from patch_tui.ui.desk.generate import Accepted, GenerateScreen

TOOL = (Path(g.PROMPTS_DIR) / "example_tool.txt").read_text(encoding="utf-8")
BROKEN = TOOL.replace("    words = WORD.findall(text)\n", "    words = WORD.findall(text\n")


# No key, base URL or model from the environment; config and toolbox in tmp_path; `fake` is the
# fake Messages API on 127.0.0.1 (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("generate_env")


class Host(App[None]):
    def __init__(self, screen: GenerateScreen) -> None:
        super().__init__()
        self.gen_screen = screen
        self.outcome: list[Accepted | None] = []

    def on_mount(self) -> None:
        self.push_screen(self.gen_screen, callback=self.outcome.append)


def options(base_url: str, *, key: str | None = "sk-test", max_repairs: int = 2) -> g.Options:
    # No SDK retries here: test_generate.py covers them; these tests are about the screen.
    return g.Options(
        api_key=key,
        model="claude-sonnet-5-5",
        max_repairs=max_repairs,
        base_url=base_url,
        max_retries=0,
    )


def preview_text(screen: GenerateScreen) -> str:
    content = screen.query_one("#gen-preview", Static).content
    return content.plain if hasattr(content, "plain") else str(content)


def rounds_text(screen: GenerateScreen) -> str:
    return "\n".join(strip.text for strip in screen.query_one("#gen-rounds", RichLog).lines)


async def until(pilot, predicate, timeout: float = 15.0) -> None:
    def what() -> str:
        screen = pilot.app.screen
        status = (
            screen.query_one("#gen-status").content if isinstance(screen, GenerateScreen) else ""
        )
        return f"{screen!r} ({status})"

    await pilot_until(pilot, predicate, timeout, what)


async def start(pilot, screen: GenerateScreen, prompt: str) -> None:
    prompt_input = screen.query_one("#gen-prompt")
    assert prompt_input.has_focus  # typing starts in the prompt
    prompt_input.value = prompt
    await pilot.press("enter")


async def test_generate_streams_then_accept_saves_and_dismisses(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    # The first answer holds after 60 characters, until the test has seen it streaming.
    fake.add(Reply(BROKEN, chunk=20, hold_after=3), Reply(TOOL, cache_read_input_tokens=2000))
    out = tmp_path / "out"
    screen = GenerateScreen(out_dir=out, options=options(fake.base_url))
    app = Host(screen)
    async with app.run_test(size=(120, 36)) as pilot:
        await start(pilot, screen, "Count the words in a text")
        await until(
            pilot,
            lambda: screen.state == "running" and "# name: count_words" in preview_text(screen),
        )
        assert "if __name__" not in preview_text(screen)  # part of the answer, as it streams
        fake.release()
        await until(pilot, lambda: screen.state == "done")
        assert screen.result is not None and screen.result.ok
        assert "def main(text: str" in preview_text(screen)
        assert f"generated_by: {DEFAULT_MODEL_ID}" in preview_text(screen)
        log = rounds_text(screen)
        assert "first answer" in log and "repair 1" in log
        assert re.search(r"lint: 1 error\(s\).*\n    (PT030|E999) line \d+: ", log)
        usage = screen.query_one("#gen-usage", Static).content.plain
        assert "cache 2000 read" in usage and DEFAULT_MODEL_ID in usage
        assert not out.exists()  # nothing is written before accepting
        await pilot.press("ctrl+s")
        await pilot.pause()
        saved = out / "count_words.py"
        assert saved.read_text(encoding="utf-8") == screen.result.text
        assert app.outcome == [Accepted(screen.result.text, saved, False)]


async def test_cancel_stops_the_stream_and_writes_nothing(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    fake.add(Reply(TOOL, chunk=5, hold_after=5))  # streams 25 characters, then holds
    screen = GenerateScreen(out_dir=tmp_path / "out", options=options(fake.base_url))
    app = Host(screen)
    async with app.run_test(size=(120, 36)) as pilot:
        await start(pilot, screen, "Count words")
        await until(pilot, lambda: len(preview_text(screen)) > 20)
        await pilot.press("escape")
        await pilot.pause()
        assert screen.state == "cancelled"
        assert await asyncio.to_thread(fake.wait_for, lambda f: f.disconnects == 1, 15)
        assert fake.completed == 0 and screen.result is None
        await pilot.press("ctrl+s")  # nothing to accept
        assert app.screen is screen and not (tmp_path / "out").exists()
        await pilot.press("escape")  # now escape discards
        await pilot.pause()
        assert app.outcome == [None]


async def test_discard_after_a_result_writes_nothing(fake: FakeAnthropic, tmp_path: Path) -> None:
    fake.add(Reply(TOOL))
    screen = GenerateScreen(out_dir=tmp_path, options=options(fake.base_url))
    app = Host(screen)
    async with app.run_test(size=(120, 36)) as pilot:
        await start(pilot, screen, "Count words")
        await until(pilot, lambda: screen.state == "done")
        await pilot.pause()  # laid out before a click aims at it
        await pilot.click("#gen-discard")
        await pilot.pause()
        assert app.outcome == [None]
        assert list(tmp_path.glob("*.py")) == []


async def test_escape_on_a_finished_generation_asks_before_discarding(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    from patch_tui.ui.dialogs.confirm import ConfirmModal

    fake.add(Reply(TOOL))
    screen = GenerateScreen(out_dir=tmp_path, options=options(fake.base_url))
    app = Host(screen)
    async with app.run_test(size=(120, 36)) as pilot:
        await start(pilot, screen, "Count words")
        await until(pilot, lambda: screen.state == "done")
        await pilot.press("escape")
        await pilot_until(pilot, lambda: isinstance(app.screen, ConfirmModal), what="question")
        await pilot.press("escape")  # no: the generated tool stays
        await pilot_until(pilot, lambda: app.screen is screen, what="back to the result")
        assert app.outcome == [] and screen.result is not None
        await pilot.press("escape")
        await pilot_until(pilot, lambda: isinstance(app.screen, ConfirmModal), what="question")
        await pilot.press("y")
        await pilot_until(pilot, lambda: app.outcome == [None], what="discarded")
        assert list(tmp_path.glob("*.py")) == []


async def test_errors_still_left_need_a_second_accept(fake: FakeAnthropic, tmp_path: Path) -> None:
    fake.add(Reply(BROKEN))
    screen = GenerateScreen(out_dir=tmp_path, options=options(fake.base_url, max_repairs=0))
    app = Host(screen)
    async with app.run_test(size=(120, 36)) as pilot:
        await start(pilot, screen, "Count words")
        await until(pilot, lambda: screen.state == "done")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert list(tmp_path.glob("*.py")) == [] and app.outcome == []
        assert any("press ctrl+s again" in n.message for n in app._notifications)
        await pilot.press("f2")  # the F-key twin of ctrl+s
        await pilot.pause()
        assert (tmp_path / "count_words.py").is_file()


async def test_llm_text_is_never_markup(fake: FakeAnthropic, tmp_path: Path) -> None:
    evil = TOOL.replace(
        "# description: Count the words", "# description: [bold red]Count[/] \u202ethe words"
    )
    fake.add(Reply(evil))
    screen = GenerateScreen(out_dir=tmp_path, options=options(fake.base_url, max_repairs=0))
    app = Host(screen)
    async with app.run_test(size=(120, 36)) as pilot:
        await start(pilot, screen, "Count words")
        await until(pilot, lambda: screen.state == "done")
        shown = preview_text(screen)
        assert "[bold red]Count[/]" in shown
        assert "\u202e" not in shown and "U+202E" in shown


async def test_each_error_is_one_notification_and_never_a_crash(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    cases = [
        (
            [Fail(401, "authentication_error", "bad key")],
            options(fake.base_url),
            "refused the API key (401)",
        ),
        (
            [Fail(429, "rate_limit_error", "slow", {"retry-after": "12"})],
            options(fake.base_url),
            "try again in 12 seconds",
        ),
        (
            [Fail(529, "overloaded_error", "Overloaded")],
            options(fake.base_url),
            "overloaded right now (529)",
        ),
        (
            [Reply(TOOL, chunk=10, drop_after=3)],
            options(fake.base_url),
            "dropped in the middle of the answer",
        ),
        ([], options(fake.base_url, key=None), "ANTHROPIC_API_KEY"),
    ]
    first = GenerateScreen(out_dir=tmp_path, options=options(fake.base_url))
    app = Host(first)
    async with app.run_test(size=(120, 36)) as pilot:
        for answers, opts, expected in cases:
            fake.add(*answers)
            screen = GenerateScreen(out_dir=tmp_path, options=opts)
            await app.push_screen(screen)
            seen = {n.identity for n in app._notifications}
            await start(pilot, screen, "Count words")
            await until(pilot, lambda s=screen: s.state == "failed")

            def errors(seen: set[str] = seen) -> list:
                return [
                    n
                    for n in app._notifications
                    if n.identity not in seen and n.severity == "error"
                ]

            # The notification can follow the state change by a frame or two under load.
            await until(pilot, lambda: bool(errors()))
            await pilot.pause()
            assert len(errors()) == 1 and expected in errors()[0].message, expected
            assert app.is_running and app.screen is screen
            await pilot.press("escape")
            await pilot.pause()
        assert list(tmp_path.glob("*.py")) == []
    assert fake.script == []  # every scripted answer was asked for


async def test_refine_shows_the_diff_and_returns_the_new_text(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    current = g.stamp(TOOL, model_id="claude-old", when="2020-01-01T00:00:00Z", version="1.2.3")
    changed = TOOL.replace(
        '        "characters": len(text),\n',
        '        "characters": len(text),\n        "tabs": text.count("\\t"),\n',
    )
    fake.add(Reply(changed))
    screen = GenerateScreen(
        options=options(fake.base_url), refine_text=current, refine_label="count_words.py"
    )
    app = Host(screen)
    async with app.run_test(size=(120, 36)) as pilot:
        assert "def main" in preview_text(screen)  # the current file before anything runs
        await start(pilot, screen, "Also count tabs")
        await until(pilot, lambda: screen.state == "done")
        shown = preview_text(screen)
        assert "Manifest" in shown and "Body" in shown
        assert "-# version: 1.2.3" in shown and "+# version: 1.3.0" in shown
        assert '+        "tabs": text.count' in shown
        await pilot.press("ctrl+t")  # the refined file itself
        assert preview_text(screen).startswith("# ---")
        await pilot.press("ctrl+s")
        await pilot.pause()
        (outcome,) = app.outcome
        assert outcome is not None and outcome.refined and outcome.path is None
        data = toolfile.parse(outcome.text).data
        assert data["version"] == "1.3.0" and data["generated_by"] == DEFAULT_MODEL_ID
    assert "Also count tabs" in fake.requests[0].text_of(0)


async def palette(pilot, command: str) -> None:
    from textual.command import CommandPalette
    from textual.widgets import Input

    await pilot.press("ctrl+p")
    await until(pilot, lambda: isinstance(pilot.app.screen, CommandPalette))
    pilot.app.screen.query_one(Input).value = command  # one search, not one per keystroke
    await pilot.pause(0.3)
    await pilot.press("enter")
    await pilot.pause()


async def test_in_the_app_generate_opens_the_tool_and_refine_fills_the_editor(
    fake: FakeAnthropic, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from desk_helpers import make_app

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
    folder = tmp_path / "tools"
    folder.mkdir()
    changed = TOOL.replace(
        '        "characters": len(text),\n',
        '        "characters": len(text),\n        "tabs": text.count("\\t"),\n',
    )
    fake.add(Reply(TOOL), Reply(changed))
    app = make_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        await palette(pilot, "generate: new tool")
        screen = app.screen
        assert type(screen) is GenerateScreen
        await start(pilot, screen, "Count the words in a text")
        await until(pilot, lambda: screen.state == "done")
        await pilot.press("ctrl+s")
        await pilot.pause()
        path = folder / "count_words.py"
        assert path.read_text(encoding="utf-8") == screen.result.text
        assert app.editor.current_path == path and app.screen is app.editor
        assert app.editor.source_text == path.read_text(encoding="utf-8")

        await palette(pilot, "generate: refine this tool")
        refine = app.screen
        assert type(refine).__name__ == "RefineScreen"
        await start(pilot, refine, "Also count tabs")
        await until(pilot, lambda: refine.state == "done")
        assert "+# version: 1.1.0" in preview_text(refine)
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.screen is app.editor
        assert '"tabs": text.count' in app.editor.source_text
        assert app.editor.dirty  # applied to the editor, saved only when the person saves
        assert "tabs" not in path.read_text(encoding="utf-8")
    sent = fake.requests[1].text_of(0)
    assert "Also count tabs" in sent and "def main(text: str" in sent


async def test_round_labels_say_how_each_round_ended(fake: FakeAnthropic, tmp_path: Path) -> None:
    """A round's label says "streaming…" only while it streams (issue 12: it stayed for good)."""
    # The first answer holds after its first delta until the test has seen its round streaming.
    fake.add(Reply(BROKEN, chunk=20, hold_after=1), Reply(TOOL, chunk=20))
    screen = GenerateScreen(out_dir=tmp_path / "out", options=options(fake.base_url))
    app = Host(screen)
    async with app.run_test(size=(120, 36)) as pilot:
        await start(pilot, screen, "Count the words in a text")
        await until(pilot, lambda: "first answer: streaming…" in rounds_text(screen))
        fake.release()
        await until(pilot, lambda: screen.state == "done")
        await pilot.pause()
        log = rounds_text(screen)
        assert "streaming…" not in log
        assert re.search(r"▸ first answer: answered \(\d+\.\d s\)\n  lint: 1 error", log)
        assert re.search(r"▸ repair 1: answered \(\d+\.\d s\)\n  lint: 0 error", log)


async def test_a_cancelled_round_says_cancelled(fake: FakeAnthropic, tmp_path: Path) -> None:
    fake.add(Reply(TOOL, chunk=5, hold_after=5))  # streams 25 characters, then holds
    screen = GenerateScreen(out_dir=tmp_path / "out", options=options(fake.base_url))
    app = Host(screen)
    async with app.run_test(size=(120, 36)) as pilot:
        await start(pilot, screen, "Count words")
        await until(pilot, lambda: len(preview_text(screen)) > 20)
        await pilot.press("escape")
        await pilot.pause()
        assert screen.state == "cancelled"
        log = rounds_text(screen)
        assert "streaming…" not in log and re.search(
            r"▸ first answer: cancelled \(\d+\.\d s\)", log
        )


async def test_a_failed_round_says_failed(fake: FakeAnthropic, tmp_path: Path) -> None:
    fake.add(Reply(TOOL, chunk=5, delay=0.01, drop_after=3))
    screen = GenerateScreen(out_dir=tmp_path / "out", options=options(fake.base_url))
    app = Host(screen)
    async with app.run_test(size=(120, 36)) as pilot:
        await start(pilot, screen, "Count words")
        await until(pilot, lambda: screen.state == "failed")
        await pilot.pause()
        log = rounds_text(screen)
        assert "streaming…" not in log and "▸ first answer: failed" in log
