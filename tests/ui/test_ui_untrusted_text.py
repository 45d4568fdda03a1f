"""No byte of a tool file's escape sequences reaches the terminal (issue 12, Deliver 3).

Tool files carry OSC 52 (write the clipboard), OSC 2 (set the window title), a CSI that makes
the terminal answer (`ESC [ 21 t` reports the title back as input) and C1 controls (`\\x9b` is
CSI, `\\x9d` OSC in one byte) in each manifest field (as YAML escapes, so the parsed value holds
the raw characters) and raw in the body. The real app opens each; what it would write to the
terminal is rendered from its compositor (the bytes `App._display` hands the driver; the
headless driver used by Pilot writes nothing itself), and must hold none of them.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from desk_helpers import make_app, ready
from inboxkit import hold, inbox_app, isolate, open_inbox, wait_for

SIZE = (160, 120)  # tall enough that every field of the form is on screen
# YAML double-quoted escapes: the parsed values hold raw ESC, BEL and C1 characters.
YAML_PAYLOAD = r"\e]52;c;UFdORUQ=\a \e]2;PWNED-TITLE\a \e[21t \x9b6n \x9d2;PWNED\x9c"
RAW_PAYLOAD = "\x1b]52;c;UFdORUQ=\x07 \x1b]2;PWNED-TITLE\x07 \x1b[21t \x9b6n \x9d2;PWNED\x9c"
FIELDS = [
    "description",
    "name",
    "version",
    "input_name",
    "input_description",
    "packages",
    "external_auth",
    "python_version",
    "body",
]


def tool_text(field: str | None) -> str:
    v = {
        "name": "hostile_tool",
        "version": "1.0.0",
        "description": "A tool.",
        "input_name": "text",
        "input_description": "Some text.",
        "packages": "[]",
        "external_auth": "[]",
        "python_version": '"3.12"',
    }
    if field in ("packages", "external_auth"):
        v[field] = f'["{YAML_PAYLOAD}"]'
    elif field is not None and field != "body":
        v[field] = f'"{YAML_PAYLOAD}"'
    body = f"# {RAW_PAYLOAD}\nBANNER = '{RAW_PAYLOAD}'\n" if field == "body" else ""
    return f"""# ---
# name: {v["name"]}
# version: {v["version"]}
# description: {v["description"]}
# inputs:
#   - name: {v["input_name"]}
#     type: string
#     description: {v["input_description"]}
# outputs:
#   type: string
#   description: The text.
# capabilities:
#   network: false
#   filesystem: none
#   human_confirm: true
# runtime:
#   language: python
#   python_version: {v["python_version"]}
#   packages: {v["packages"]}
# external_auth: {v["external_auth"]}
# ---
import json
import sys
{body}

def main() -> None:
    print(json.dumps(json.load(sys.stdin)["text"]))


if __name__ == "__main__":
    main()
"""


def terminal_output(app) -> str:
    """What the app would write to the terminal for its whole screen now (toasts included)."""
    update = app.screen._compositor.render_full_update()
    return update.render_segments(app.console)


def leaks(out: str) -> list[str]:
    found = []
    if "\x1b]" in out:
        found.append("OSC (ESC ])")
    if "\x07" in out:
        found.append("BEL")
    if "\x1b[21t" in out:
        found.append("CSI 21 t")
    if re.search("[\x80-\x9f]", out):
        found.append("C1")
    if re.search("\x1b[P_^X]", out):
        found.append("DCS/APC/PM/SOS")
    return found


@pytest.fixture
def hostile_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    isolate(monkeypatch, tmp_path)
    folder = tmp_path / "tools"
    folder.mkdir()
    (folder / "a_clean.py").write_text(tool_text(None))
    for field in FIELDS:
        (folder / f"h_{field}.py").write_text(tool_text(field))
    # A file name is untrusted too: the header's title and the tool list show it.
    (folder / f"h_file_name{RAW_PAYLOAD}.py").write_text(tool_text(None))
    return folder


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in _strings(k) + _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def test_the_payload_is_what_the_fields_hold(hostile_folder: Path) -> None:
    # The test is about raw control characters reaching widgets: check they do get there.
    from patch_tui.format import toolfile

    for field in FIELDS:
        tf = toolfile.read(hostile_folder / f"h_{field}.py")
        if field == "body":
            assert RAW_PAYLOAD in tf.text
        else:
            assert isinstance(tf.data, dict) and "\x1b]52;c;" in "".join(_strings(tf.data)), field


async def test_no_escape_sequence_of_a_tool_file_reaches_the_terminal(hostile_folder: Path) -> None:
    folder = hostile_folder
    app = make_app(folder, folder / "a_clean.py")
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot, app)
        assert leaks(terminal_output(app)) == []  # the check itself sees nothing in a clean tool
        found: dict[str, list[str]] = {}
        for field in [*FIELDS, f"file_name{RAW_PAYLOAD}"]:
            count = screen.lint_count
            screen.open_tool(folder / f"h_{field}.py")
            await wait_for(
                pilot,
                lambda count=count: screen.lint_count > count,
                timeout=20,
                what=f"{field[:9]} linted",
            )
            await pilot.pause(0.2)
            # At this size the form (every field) and the source pane are both on screen.
            bad = leaks(terminal_output(app))
            if bad:
                found[field[:9]] = bad
        assert found == {}


async def test_no_escape_sequence_of_a_held_call_reaches_the_terminal(
    hostile_folder: Path, tmp_path: Path
) -> None:
    store = tmp_path / "store.sqlite3"
    hold(store, hostile_folder / "h_description.py", {"text": RAW_PAYLOAD, RAW_PAYLOAD: "key"})
    app = inbox_app(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_inbox(pilot, app)
        await wait_for(pilot, lambda: screen.current is not None, what="the detail")
        await pilot.pause(0.2)
        assert leaks(terminal_output(app)) == []
        await pilot.press("o")  # the read-only source
        await pilot.pause(0.3)
        assert leaks(terminal_output(app)) == []


@pytest.mark.parametrize("which", ["desk", "inbox"])
async def test_a_title_with_escapes_reaches_the_terminal_as_tokens(
    hostile_folder: Path, tmp_path: Path, which: str
) -> None:
    # Titles are built from file names and read-only reasons (an OS error's text): whatever a
    # screen puts there, the header shows its control characters as tokens (SafeTitles).
    app = (
        make_app(hostile_folder, hostile_folder / "a_clean.py")
        if which == "desk"
        else inbox_app(tmp_path / "s.db")
    )
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause(0.5)
        app.screen.title = "title " + RAW_PAYLOAD
        app.screen.sub_title = "sub " + RAW_PAYLOAD
        await pilot.pause(0.3)
        assert leaks(terminal_output(app)) == []
        assert "⟦U+001B⟧]2;PWNED-TITLE" in str(
            app.format_title(app.screen.title, app.screen.sub_title)
        )
