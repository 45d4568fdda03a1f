"""`patch-tui fmt`: canonical frontmatter, same meaning for every reader, body and line endings
untouched, idempotent; `--check` and `--diff` write nothing."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lintkit import CLEAN, any_text, bodies, names

from patch_tui.cli import main as cli
from patch_tui.format import toolfile

MESSY = """\
#!/usr/bin/env python3
# ---
# version: "1.0.0"
# name: word_count
# runtime: {language: python, python_version: "3.12", packages: []}
# capabilities: {network: false, filesystem: none, human_confirm: false}
# outputs: {type: object}
# description: 'Count the words in a text.'
# inputs:
# - {name: text, type: string, description: The text., tainted_ok: true}
# generated_by: claude-opus-4-7
# generated_at: 2026-05-04T12:34:56Z
# ---
import json  # the body is never touched:   spacing kept
"""

CANONICAL = """\
#!/usr/bin/env python3
# ---
# name: word_count
# version: 1.0.0
# description: Count the words in a text.
# inputs:
#   - name: text
#     type: string
#     description: The text.
#     tainted_ok: true
# outputs:
#   type: object
# capabilities:
#   network: false
#   filesystem: none
#   human_confirm: false
# runtime:
#   language: python
#   python_version: '3.12'
#   packages: []
# generated_by: claude-opus-4-7
# generated_at: 2026-05-04T12:34:56Z
# ---
import json  # the body is never touched:   spacing kept
"""


def _js(value: object) -> object:
    """Data as JavaScript holds it: an integral float is the same number as the integer."""
    if isinstance(value, dict):
        return {k: _js(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_js(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 2**53:
        return int(float(value))  # the double JavaScript reads these digits as
    return value


def _yaml_of(text: str) -> str:
    tf = toolfile.parse(text)
    return tf.yaml_text


def test_fmt_writes_the_canonical_style(tmp_path, capsys) -> None:
    path = tmp_path / "t.py"
    path.write_text(MESSY)
    assert cli(["fmt", str(path)]) == 0
    assert path.read_text() == CANONICAL
    assert "1 file reformatted" in capsys.readouterr().out
    assert cli(["fmt", str(path)]) == 0  # idempotent
    assert path.read_text() == CANONICAL


def test_fmt_keeps_crlf_bom_and_mode(tmp_path) -> None:
    path = tmp_path / "t.py"
    path.write_bytes(b"\xef\xbb\xbf" + MESSY.replace("\n", "\r\n").encode())
    os.chmod(path, 0o750)
    assert cli(["fmt", str(path)]) == 0
    assert path.read_bytes() == b"\xef\xbb\xbf" + CANONICAL.replace("\n", "\r\n").encode()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o750


def test_fmt_check_writes_nothing_and_exits_1(tmp_path, capsys) -> None:
    messy, clean = tmp_path / "a.py", tmp_path / "b.py"
    messy.write_text(MESSY)
    clean.write_text(CANONICAL)
    assert cli(["fmt", "--check", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert f"Would reformat: {messy}" in out and str(clean) not in out.replace("1 file already", "")
    assert messy.read_text() == MESSY
    assert cli(["fmt", "--check", str(clean)]) == 0


def test_fmt_diff_prints_a_unified_diff(tmp_path, capsys) -> None:
    path = tmp_path / "t.py"
    path.write_text(MESSY)
    assert cli(["fmt", "--diff", str(path)]) == 1
    out = capsys.readouterr().out
    assert '-# version: "1.0.0"\n' in out and "+#   - name: text\n" in out
    assert path.read_text() == MESSY


def test_fmt_skips_unreadable_frontmatter(tmp_path, capsys) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("# ---\n# name: [unclosed\n# ---\nprint(1)\n")
    good = tmp_path / "good.py"
    good.write_text(MESSY)
    assert cli(["fmt", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "bad.py:2:" in err and "PT002" in err and "not formatted" in err
    assert bad.read_text() == "# ---\n# name: [unclosed\n# ---\nprint(1)\n"
    assert good.read_text() == CANONICAL


def test_fmt_missing_path_exits_2(tmp_path, capsys) -> None:
    assert cli(["fmt", str(tmp_path / "nope.py")]) == 2
    assert "no such file" in capsys.readouterr().err


# Strings that YAML 1.1 and the JSON schema read differently, or that need quoting at all.
TRICKY = st.sampled_from(
    [
        "yes",
        "no",
        "on",
        "Off",
        "y",
        "N",
        "true",
        "False",
        "null",
        "~",
        "Null",
        "",
        " ",
        "2026-05-04",
        "2026-05-04T12:34:56Z",
        "2026-05-04 12:34:56",
        "0755",
        "0x1F",
        "0b101",
        "1_000",
        "1:30",
        "3.12",
        "1.0",
        "1e3",
        ".inf",
        ".NaN",
        "-0",
        "+1",
        "#x",
        "a: b",
        "- x",
        "[x]",
        "{x}",
        "&a",
        "*a",
        "!tag",
        "%x",
        "@x",
        "`x",
        "'x'",
        '"x"',
        "x #y",
        "line\nbreak",
        "trail ",
        " lead",
        "\u202eRTL",
        "tab\there",
        "é",
        "日本語",
        "---",
        "...",
        "? x",
        "| x",
        "> x",
    ]
)
values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**9), 10**9)
    | st.floats(allow_nan=False, allow_infinity=False, width=32)
    | TRICKY
    | any_text,
    lambda c: st.lists(c, max_size=3) | st.dictionaries(names | TRICKY, c, max_size=3),
    max_leaves=8,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.dictionaries(names | TRICKY, values, min_size=1, max_size=6),
    bodies,
    st.sampled_from(["\n", "\r\n"]),
)
def test_fmt_output_means_the_same_to_the_runtime(data: dict, body: str, newline: str) -> None:
    # Start from JSON (which is YAML) on one commented line: about as far from canonical as it gets.
    flow = re.sub(
        "[\x7f-\x9f\ufffe\uffff\u2028\u2029]",
        lambda m: f"\\u{ord(m.group()):04x}",
        json.dumps(data, ensure_ascii=False),
    )
    text = f"# ---{newline}# {flow}{newline}# ---{newline}{body}"
    tf = toolfile.parse(text)
    assert tf.problems == [] and tf.data == data
    out = toolfile.format_text(tf)
    assert out is not None
    again = toolfile.parse(out)
    # The Patch runtime's reading (js-yaml, JSON schema) is unchanged (JavaScript has one
    # number type: 1e16 and 10000000000000000 are the same number there) ...
    assert again.problems == [] and _js(again.data) == _js(data)
    # ... the body and line endings are untouched, and fmt is idempotent.
    assert again.body == body
    assert (
        out[: out.index(body)].count("\n") == out[: out.index(body)].count(newline)
        if body
        else True
    )
    assert toolfile.format_text(again) == out


def test_fmt_via_subprocess_is_silent_about_tracebacks(tmp_path) -> None:
    (tmp_path / "a.py").write_bytes(b"\xff\xfe not utf8")
    canonical = toolfile.format_text(toolfile.parse(CLEAN))
    (tmp_path / "b.py").write_text(canonical)
    proc = subprocess.run(
        [sys.executable, "-m", "patch_tui", "fmt", str(tmp_path)], capture_output=True, timeout=60
    )
    assert proc.returncode == 1 and b"Traceback" not in proc.stderr
    assert b"not valid UTF-8" in proc.stderr
    assert (tmp_path / "b.py").read_text() == canonical


def test_fmt_writes_numbers_as_the_runtime_does_but_keeps_digits_meant_as_text() -> None:
    text = "# ---\n# version: 1.10\n# runtime:\n#   python_version: 3.10\n# a: [0.50, -0, 7]\n# b: 1e3\n# ---\n"
    out = toolfile.format_text(toolfile.parse(text))
    assert out is not None
    # Where a string is needed, 3.10 stays 3.10 (lint's quoting fix keeps the digits), not 3.1 ...
    assert "# version: 1.10\n" in out and "#   python_version: 3.10\n" in out
    # ... elsewhere numbers are written as the runtime's writer writes them: the same numbers.
    assert "#   - 0.5\n" in out and "#   - 0\n" in out and "# b: 1000\n" in out
    again = toolfile.parse(out)
    assert again.data == toolfile.parse(text).data


def test_fmt_refuses_to_drop_comments(tmp_path, capsys) -> None:
    text = MESSY.replace("# outputs: {type: object}", "# outputs: {type: object}  # JSON out")
    path = tmp_path / "t.py"
    path.write_text(text)
    assert cli(["fmt", str(path)]) == 1
    err = capsys.readouterr().err
    assert f"{path}:7: the frontmatter has comments that fmt would drop" in err
    assert path.read_text() == text
    # `#` inside a value is not a comment.
    path.write_text(MESSY.replace("'Count the words in a text.'", "'Count #tags, e.g. in a text.'"))
    assert cli(["fmt", str(path)]) == 0
    assert "# description: 'Count #tags, e.g. in a text.'\n" in path.read_text()


def test_fmt_standard_input_to_standard_output() -> None:
    def fmt(*extra: str, text: str = MESSY) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            [sys.executable, "-m", "patch_tui", "fmt", *extra, "-"],
            input=text.encode(),
            capture_output=True,
            timeout=60,
        )

    proc = fmt()
    assert proc.returncode == 0 and proc.stdout.decode() == CANONICAL
    proc = fmt("--check")
    assert proc.returncode == 1 and b"Would reformat: -" in proc.stdout
    proc = fmt(text="# ---\n# name: [\n# ---\nprint(1)\n")
    assert proc.returncode == 1 and proc.stdout == b"# ---\n# name: [\n# ---\nprint(1)\n"
    assert b"cannot be formatted" in proc.stderr and b"Traceback" not in proc.stderr
