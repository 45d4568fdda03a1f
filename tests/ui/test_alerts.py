"""Alerts when an action arrives (issue 17 item 4): the bell and desktop notifications, written
through the app's driver or sent with a real `notify-send` process (a recording stand-in on
PATH), and never a raw escape sequence from a tool's name or args."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from inboxkit import HOSTILE, hold, isolate, make_app, tools, wait_for

from patch_tui.approvals import alerts

SIZE = (100, 32)
CONTROL = {chr(c) for c in [*range(0x20), *range(0x7F, 0xA0)]}


def _fake_notify_send(folder: Path) -> Path:
    """A `notify-send` that records its argv (one JSON line per call)."""
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "calls.jsonl"
    exe = folder / "notify-send"
    exe.write_text(
        "#!/usr/bin/env python3\nimport json, sys\n"
        f"open({str(log)!r}, 'a').write(json.dumps(sys.argv[1:]) + '\\n')\n"
    )
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return log


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_names_and_args_never_reach_the_terminal_raw(name: str) -> None:
    action = SimpleNamespace(tool=f"tool{HOSTILE[name]}", args={"text": HOSTILE[name], "n": 1})
    title, body = alerts.notification([action])
    for text in (title, body):
        assert not (set(text) & CONTROL), (name, text)
        assert "\u202e" not in text and "\u200b" not in text and "\U000e0041" not in text
    for mode in ("9", "777"):
        [seq] = alerts.osc_sequences(title, body, mode)
        # One sequence: it starts with the only ESC and ends with the only BEL.
        assert seq.startswith(f"\x1b]{mode};") and seq.endswith("\x07")
        assert seq.count("\x1b") == 1 and seq.count("\x07") == 1 and "\x9c" not in seq
        if mode == "777":
            assert seq.count(";") >= 3 and seq.split(";")[1] == "notify"


def test_the_osc_goes_only_to_terminals_that_show_it() -> None:
    assert alerts.osc_mode(True, {"TERM_PROGRAM": "WezTerm"}) == "9"
    assert alerts.osc_mode(True, {"TERM_PROGRAM": "iTerm.app"}) == "9"
    assert alerts.osc_mode(True, {"WT_SESSION": "x"}) == "9"
    assert alerts.osc_mode(True, {"TERM": "foot"}) == "777"
    assert alerts.osc_mode(True, {"TERM": "rxvt-unicode-256color"}) == "777"
    assert alerts.osc_mode(True, {"TERM": "xterm-256color"}) is None  # unknown: it might print it
    assert alerts.osc_mode(True, {"TERM_PROGRAM": "WezTerm", "TMUX": "/tmp/t,1,0"}) is None
    assert alerts.osc_mode(True, {"TERM": "xterm", "PATCH_TUI_OSC": "777"}) == "777"
    assert alerts.osc_mode(False, {"TERM_PROGRAM": "WezTerm"}) is None


def test_notify_send_runs_without_a_shell_and_escapes_markup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = _fake_notify_send(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    action = SimpleNamespace(tool="-rm", args={"html": "<a href='x'>&</a>; $(id)"})
    argv = alerts.notify_send_argv(*alerts.notification([action]))
    assert argv is not None and alerts.send_notify(argv)
    [call] = [json.loads(line) for line in log.read_text().splitlines()]
    assert call[:3] == ["--app-name=patch-tui", "--urgency=normal", "--"]
    assert call[3].startswith("patch-tui: -rm")
    assert "&lt;a href='x'&gt;&amp;&lt;/a&gt;; $(id)" in call[4]


def test_no_notify_send_no_notification(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert alerts.notify_send_argv("t", "b") is None


# -- in the app -------------------------------------------------------------------------------


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[str, Any]:
    store = isolate(monkeypatch, tmp_path)
    log = _fake_notify_send(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("TMUX", raising=False)
    monkeypatch.delenv("STY", raising=False)
    monkeypatch.setenv("TERM_PROGRAM", "WezTerm")
    return {"folder": tools(tmp_path), "store": store, "log": log}


def _capture(app: Any) -> list[str]:
    written: list[str] = []
    driver = app._driver
    original = driver.write

    def write(data: str) -> None:
        written.append(data)
        original(data)

    driver.write = write
    return written


async def test_an_arrival_rings_and_notifies_with_safe_text(env: dict[str, Any]) -> None:
    folder, store = env["folder"], env["store"]
    early = hold(store, folder / "delete_file.py", {"path": "/tmp/waiting-before-start"})
    app = make_app(folder, store)
    async with app.run_test(size=SIZE) as pilot:
        written = _capture(app)
        watch = await _watching(pilot, app)
        assert early.token in (watch._known or set())  # waiting at start-up: no alert for it
        hostile = HOSTILE["osc52_bel"] + HOSTILE["clear"] + HOSTILE["rlo"]
        hold(store, folder / "slack_send_message.py", {"channel": "#general", "text": hostile})
        await wait_for(pilot, lambda: "\a" in written, timeout=15, what="the bell")
        [osc] = [w for w in written if w.startswith("\x1b]9;")]
        assert osc.count("\x1b") == 1 and osc.count("\x07") == 1
        assert "slack_send_message" in osc and "\\u001b]52;c;" in osc and "⟦U+202E⟧" in osc
        await wait_for(pilot, lambda: env["log"].exists(), timeout=15, what="notify-send")
        [call] = [json.loads(line) for line in env["log"].read_text().splitlines()]
        assert "slack_send_message" in call[-1] and not (set(call[-1]) & CONTROL)
        assert "waiting-before-start" not in "".join(written)


async def test_each_alert_can_be_turned_off(
    env: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from patch_tui.runtime.toolbox import Toolbox
    from patch_tui.settings.config import Settings
    from patch_tui.ui.app import PatchApp

    folder, store = env["folder"], env["store"]
    settings = Settings(
        watch_tools=False,
        watch_themes=False,
        alert_bell=False,
        alert_osc=False,
        alert_notify_send=False,
    )
    app = PatchApp(Toolbox.open(folder), None, settings=settings, store_path=store)
    async with app.run_test(size=SIZE) as pilot:
        written = _capture(app)
        watch = await _watching(pilot, app)
        hold(store, folder / "delete_file.py", {"path": "/tmp/x"})
        await wait_for(pilot, lambda: watch.count == 1, timeout=15, what="the arrival")
        await pilot.pause(0.3)
        assert "\a" not in written and not any(w.startswith("\x1b]") for w in written)
        assert not env["log"].exists()


async def _watching(pilot: Any, app: Any) -> Any:
    await wait_for(
        pilot, lambda: getattr(app, "_pending_watch", None) is not None, what="the watch"
    )
    watch = app._pending_watch
    await wait_for(pilot, lambda: watch._known is not None, what="the first read")
    return watch
