"""Pilot tests of Try it's run control (issue 12): a run can be cancelled (key and button), has a
timeout field and shows its elapsed time; closing the panel cancels it, so there are never two
runs; a traceback shows once."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from inboxkit import isolate, make_app, tools, wait_for

SIZE = (100, 32)


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> tuple[Path, Path]:
    store = isolate(monkeypatch, tmp_path)
    return tools(tmp_path, "slugify"), store


def _with_body(path: Path, body: str) -> None:
    text = path.read_text()
    body_start = text.index("# ---", text.index("# ---") + 1)
    path.write_text(text[:body_start] + "# ---\n" + body)


async def _try_it(pilot, app):
    from patch_tui.ui.desk.try_it import TryItScreen

    await pilot.press("ctrl+j")
    await wait_for(pilot, lambda: isinstance(app.screen, TryItScreen), what="try it")
    await pilot.pause(0.1)
    return app.screen


def _status(screen) -> str:
    return str(screen.query_one("#try-status").render())


SLOW = "import time\ntime.sleep(60)\n"


async def test_a_run_shows_its_time_and_cancels_with_the_key_and_the_button(env) -> None:
    folder, store = env
    path = folder / "slugify.py"
    _with_body(path, SLOW)
    app = make_app(folder, store, path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.3)
        screen = await _try_it(pilot, app)
        screen.query_one("#in-text").value = "x"
        for how in ("key", "button"):
            before = screen.run_count
            started = time.monotonic()
            await pilot.press("f5")
            await wait_for(pilot, lambda: screen.running, what="the run to start")
            await wait_for(
                pilot,
                lambda: "1." in _status(screen) or "2." in _status(screen),
                timeout=10,
                what="the elapsed time",
            )
            assert "Running" in _status(screen) and " s" in _status(screen)
            cancel = screen.query_one("#try-cancel")
            assert cancel.display and not cancel.disabled
            if how == "key":
                await pilot.press("f6")
            else:
                cancel.press()
            await wait_for(
                pilot,
                lambda b=before: screen.run_count > b,
                timeout=15,
                what="the cancelled run to end",
            )
            assert time.monotonic() - started < 20  # stopped, not left to sleep its 60 s
            assert "cancelled" in _status(screen)
            assert not screen.running


async def test_closing_the_panel_cancels_the_run_so_there_are_never_two(env) -> None:
    folder, store = env
    path = folder / "slugify.py"
    _with_body(path, SLOW)
    app = make_app(folder, store, path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.3)
        first = await _try_it(pilot, app)
        first.query_one("#in-text").value = "x"
        await pilot.press("f5")
        await wait_for(pilot, lambda: first.running, what="the run to start")
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is app.editor, what="the panel to close")
        await wait_for(
            pilot,
            lambda: first.last_outcome is not None,
            timeout=15,
            what="the run to be cancelled",
        )
        assert first.last_outcome.run is not None and "cancelled" in (
            first.last_outcome.run.error or ""
        )
        second = await _try_it(pilot, app)
        assert second is not first and not second.running


async def test_the_timeout_field_bounds_the_run(env) -> None:
    folder, store = env
    path = folder / "slugify.py"
    _with_body(path, SLOW)
    app = make_app(folder, store, path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.3)
        screen = await _try_it(pilot, app)
        screen.query_one("#in-text").value = "x"
        timeout = screen.query_one("#try-timeout")
        assert timeout.value == "60"
        timeout.value = "1"
        started = time.monotonic()
        await pilot.press("f5")
        await wait_for(pilot, lambda: screen.run_count > 0, timeout=20, what="the run")
        assert time.monotonic() - started < 15
        assert "timed out" in _status(screen)
        timeout.value = "soon"
        await pilot.press("f5")
        await pilot.pause()
        assert not screen.running and "timeout" in _status(screen)


async def test_a_traceback_shows_once(env) -> None:
    folder, store = env
    path = folder / "slugify.py"
    _with_body(
        path,
        "def deep_marker_function():\n    raise ValueError('the marker')\n\ndeep_marker_function()\n",
    )
    app = make_app(folder, store, path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.3)
        screen = await _try_it(pilot, app)
        screen.query_one("#in-text").value = "x"
        await pilot.press("f5")
        await wait_for(pilot, lambda: screen.run_count > 0, timeout=30, what="the run")
        shown = str(screen.query_one("#try-output").render()) + str(
            screen.query_one("#try-stderr").render()
        )
        assert shown.count("deep_marker_function") == 2  # the traceback's two frames, once
        # The traceback once, under stderr; its last line also names the exception in the
        # error summary (issue 25), so it shows twice, the frames once.
        assert shown.count("ValueError: the marker") == 2
        assert "exited with code 1" in str(screen.query_one("#try-output").render())
