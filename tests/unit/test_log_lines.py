"""serve's and guard's log lines quote tool names, file names and upstream errors: each line goes
through the one display rule, so none of it can drive the host's terminal (issue 24)."""

from __future__ import annotations

import pytest

from patch_tui.mcp_server import catalog, guard_protocol

HOSTILE = "send\x1b]52;c;ZXZpbA==\x07_mail\x9b\u202e\u034f\nforged: line"


@pytest.mark.parametrize("log", [catalog.log, guard_protocol.log])
def test_a_log_line_shows_every_control_and_invisible_character_escaped(
    log, capsys: pytest.CaptureFixture[str]
) -> None:
    log(f"{HOSTILE}: held")
    err = capsys.readouterr().err
    assert err.count("\n") == 1  # one line: a newline in the name cannot forge a second one
    for raw in ("\x1b", "\x07", "\x9b", "\u202e", "\u034f"):
        assert raw not in err
    assert "send⟦U+001B⟧]52;c;ZXZpbA==⟦U+0007⟧_mail⟦U+009B⟧⟦U+202E⟧⟦U+034F⟧⟦U+000A⟧forged" in err
