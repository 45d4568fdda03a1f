"""patch-tui reads, checks and writes tool files as the Patch runtime does (issue 15).

The expected values here were taken from the real runtime (`make interop` checks the same facts
against it on every sample); these tests keep them without node.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lintkit import CLEAN, edit, line_of

from patch_tui.format import runtime_format, toolfile, yamlio
from patch_tui.lint import apply_edits, lint_text
from patch_tui.runtime.runner import run_source, runtime_source_sha256

RUNTIME_WRITTEN = """\
# ---
# name: word_count
# version: 1.0.0
# description: >-
#   Count words, characters, and lines in a text string, and say which word comes most often in it, if
#   there is one at all.
# inputs:
#   - name: text
#     type: string
#     description: The text to count.
#     required: true
#     tainted_ok: true
#   - name: 'n'
#     type: integer
#     description: 'yes'
#     required: false
#     default: 3
#     tainted_ok: false
# outputs:
#   type: object
#   description: '{words, characters, lines}'
# capabilities:
#   network: false
#   filesystem: none
#   human_confirm: false
#   browser: false
# runtime:
#   language: python
#   python_version: '3.12'
#   packages: []
# external_auth: []
# generated_by: claude-opus-4-7
# generated_at: 2026-05-04T12:34:56.789Z
# ---

import json
import sys


def main(text: str, n: int = 3) -> dict:
    return {"words": len(text.split()), "characters": len(text), "lines": n}


if __name__ == "__main__":
    print(json.dumps(main(**json.loads(sys.stdin.read()))))
"""


def errors(text: str) -> list[str]:
    return [d.code for d in lint_text(text) if d.severity == "error"]


# --- reading as the runtime reads ----------------------------------------------------------


@pytest.mark.parametrize(
    ("plain", "value"),
    [
        ("True", True),
        ("FALSE", False),
        ("Null", None),
        ("~", None),
        ("0x1F", 31),
        ("0o17", 15),
        ("1_000", 1000),
        ("+1", 1),
        (".5", 0.5),
        ("1e3", 1000.0),
        ("yes", "yes"),
        ("01.0.0", "01.0.0"),
        ("2026-05-04", "2026-05-04"),
        ("3.12.1", "3.12.1"),
    ],
)
def test_plain_scalars_read_as_js_yaml_json_schema(plain: str, value: object) -> None:
    assert yamlio.load(f"k: {plain}\n").data == {"k": value}


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ('#   python_version: "3.12"', '#   python_version: "3.12.1"'),
        ("# version: 1.0.0", "# version: 01.0.0"),
        ("#   - name: text", "#   - name: Text"),
        ("#   type: object", "#   type: str"),
        ("#     tainted_ok: true", "#     tainted_ok: true\n#     items:\n#       type: str"),
        ("# capabilities:", "# capabilities: &caps"),
        ("#   network: false", "#   network: False"),
    ],
)
def test_the_model_loads_every_manifest_the_runtime_loads(old: str, new: str) -> None:
    text = edit(old, new)
    assert runtime_format.accepts(text)
    assert toolfile.parse(text).manifest is not None


def test_the_runtime_manifest_has_its_defaults_and_order() -> None:
    parsed = runtime_format.parse(CLEAN)
    m = parsed.manifest
    assert list(m) == [
        "name", "version", "description", "inputs", "outputs", "capabilities", "runtime",
        "external_auth",
    ]  # fmt: skip
    assert m["capabilities"]["browser"] is False and m["external_auth"] == []
    assert list(m["inputs"][0]) == ["name", "type", "description", "required", "tainted_ok"]
    assert not parsed.body.startswith("\n")


def test_the_runtime_input_schema() -> None:
    m = runtime_format.parse(RUNTIME_WRITTEN).manifest
    assert runtime_format.input_schema(m) == {
        "type": "object",
        "properties": {
            "text": {"type": "string", "description": "The text to count.", "x-tainted-ok": True},
            "n": {"type": "integer", "description": "yes", "default": 3},
        },
        "required": ["text"],
        "additionalProperties": False,
    }


# --- writing as the runtime writes -----------------------------------------------------------


def test_the_writer_is_byte_for_byte_the_runtimes() -> None:
    # RUNTIME_WRITTEN is the runtime's own serializeManifest output: folded long description,
    # single quotes, 'n' and 'yes' quoted (js-yaml's compat mode), the timestamp unquoted.
    parsed = runtime_format.parse(RUNTIME_WRITTEN)
    assert runtime_format.serialize(parsed.manifest, parsed.body) == RUNTIME_WRITTEN


@pytest.mark.parametrize(
    ("value", "written"),
    [
        ("plain text", "plain text"),
        ("", "''"),
        ("it's", "it's"),
        ("a: b", "'a: b'"),
        ("# hash", "'# hash'"),
        ("1.0", "'1.0'"),
        ("null", "'null'"),
        ("on", "'on'"),
        ("1:30", "'1:30'"),
        ("tab\there", '"tab\\there"'),
        ("two\nlines", "|-\n  two\n  lines"),
        (" lead", "' lead'"),
        ("trail:", "'trail:'"),
    ],
)
def test_js_yaml_scalar_styles(value: str, written: str) -> None:
    assert runtime_format.dump_yaml({"k": value}) == f"k: {written}\n"


@pytest.mark.parametrize(
    ("number", "written"),
    [
        (3, "3"),
        (1.5, "1.5"),
        (5.0, "5"),
        (1e21, "1e+21"),
        (1e-7, "1.e-7"),
        (-0.0, "-0.0"),
        (float("inf"), ".inf"),
    ],
)
def test_js_yaml_numbers(number: float, written: str) -> None:
    assert runtime_format.dump_yaml({"k": number}) == f"k: {written}\n"


# --- lint errors where the runtime refuses ------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "code"),
    [
        ("#     description: The text to count.\n", "", "PT010"),
        ("#     description: The text to count.", '#     description: ""', "PT010"),
        ("#   language: python\n", "", "PT010"),
        ("#   packages: []", "#   packages: []\n# external_auth: [gmail.read.all]", "PT020"),
        ("#   network: false", "#   network: no", "PT022"),
        ("# description: Count", "# description: 0755 Count", None),
    ],
)
def test_lint_errors_where_the_runtime_refuses(old: str, new: str, code: str | None) -> None:
    text = edit(old, new)
    if code is None:  # a control: still a string to the runtime
        assert runtime_format.accepts(text)
        return
    assert not runtime_format.accepts(text)
    assert code in errors(text)


def test_code_above_the_marker_is_an_error_and_does_not_run() -> None:
    text = "import json\n" + CLEAN.replace("import json\n", "", 1)
    assert "PT026" in errors(text)
    # A shebang, an encoding line and comments are fine there.
    assert "PT026" not in errors("#!/usr/bin/env python3\n# -*- coding: utf-8 -*-\n\n" + CLEAN)
    # The runtime runs only the body: `json` is not imported there, so the run fails.
    run = run_source(text, {"text": "a b"}, timeout=30)
    assert not run.ok and "NameError" in (run.stderr + (run.error or ""))
    ok = run_source(CLEAN, {"text": "a b"}, timeout=30)
    assert ok.ok, ok.error


def test_nothing_the_runtime_writes_is_flagged_as_style() -> None:
    assert [d for d in lint_text(RUNTIME_WRITTEN) if d.code == "PT022"] == []
    assert errors(RUNTIME_WRITTEN) == []


# --- run records -------------------------------------------------------------------------------


def test_run_records_hash_the_source_as_the_runtime_does(tmp_path: Path) -> None:
    run = run_source(CLEAN, {"text": "a b"}, timeout=30, runs_dir=tmp_path)
    assert run.ok, run.error
    record = json.loads(next(tmp_path.glob("*.json")).read_text())
    parsed = runtime_format.parse(CLEAN)
    expected = runtime_format.source_sha256(parsed.manifest, parsed.body)
    assert (
        record["tool"]["source_sha256"] == expected == runtime_source_sha256(toolfile.parse(CLEAN))
    )
    assert record["sandbox"]["capabilities"] == parsed.manifest["capabilities"]
    for key in ("schema_version", "run_id", "ran_at", "trigger", "inputs", "output", "stdout_sha256",
                "stderr_sha256", "network", "exit_code", "duration_ms", "capability_assertions"):  # fmt: skip
        assert key in record


# --- the default toolbox -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("platform", "env", "home", "expected"),
    [
        ("linux", {}, "/home/ann", "/home/ann/.config/patch-cat"),
        ("linux", {"XDG_CONFIG_HOME": "/cfg"}, "/home/ann", "/cfg/patch-cat"),
        ("linux", {"XDG_CONFIG_HOME": ""}, "/home/ann", "/home/ann/.config/patch-cat"),
        ("freebsd13", {}, "/home/ann", "/home/ann/.config/patch-cat"),
        (
            "darwin",
            {"XDG_CONFIG_HOME": "/cfg"},
            "/Users/ann",
            "/Users/ann/Library/Preferences/patch-cat",
        ),
        (
            "win32",
            {"APPDATA": r"C:\Users\ann\AppData\Roaming"},
            r"C:\Users\ann",
            r"C:\Users\ann\AppData\Roaming\patch-cat\Config",
        ),
        ("win32", {}, r"C:\Users\ann", r"C:\Users\ann\AppData\Roaming\patch-cat\Config"),
    ],
)
def test_the_default_toolbox_is_where_the_runtime_keeps_it(
    platform: str, env: dict, home: str, expected: str
) -> None:
    from patch_tui.settings.paths import runtime_config_dir

    assert runtime_config_dir(platform, env, home) == expected


def test_the_toolbox_env_overrides(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from patch_tui.settings.paths import default_toolbox

    monkeypatch.delenv("PATCH_TUI_TOOLBOX", raising=False)
    monkeypatch.setenv("PATCH_CAT_TOOLBOX_DIR", str(tmp_path / "cat"))
    assert default_toolbox() == tmp_path / "cat"
    monkeypatch.delenv("PATCH_CAT_TOOLBOX_DIR")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr("sys.platform", "linux")
    assert default_toolbox() == tmp_path / "xdg" / "patch-cat"


# --- lint --fix never writes a key twice ---------------------------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from patch_tui.lint.engine import fix_text  # noqa: E402

# Breakages whose safe fixes add, rename or rewrite manifest keys, several in one mapping.
_BREAKS = [
    ("#   human_confirm: false", "#   human_confirn: false"),  # PT004: rename to human_confirm
    ("#   network: false", "#   network: no"),  # PT022: write false
    ("#   filesystem: none", "#   filesystem: none\n#   netwrk: true"),  # PT004 did-you-mean
    ("#   language: python\n", ""),  # PT010: add language
    ('#   python_version: "3.12"', "#   python_version: 3.12"),  # PT023: quote it
    ("#     tainted_ok: true", "#     tainted_ok: 'true'"),  # PT022: unquote
    ("# version: 1.0.0", "# version: 1.0"),  # PT022: x.y.z
    ("#     items:\n#       type: string\n", ""),  # PT015: add items
    ("    return", "    import shutil\n    shutil.rmtree('/tmp/x')\n    return"),  # PT045
]


def _keys_once(text: str) -> None:
    tf = toolfile.parse(text)
    assert not [p for p in tf.problems if p.code == "PT002"], (tf.problems, text)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.sampled_from(range(len(_BREAKS))), unique=True, min_size=1, max_size=len(_BREAKS))
)
def test_fix_never_writes_a_key_twice(picked: list[int]) -> None:
    text = CLEAN
    for i in sorted(picked):
        old, new = _BREAKS[i]
        if old in text:
            text = text.replace(old, new, 1)
    fixed_text, _ = fix_text(text)
    _keys_once(fixed_text)
    # And the fixed file reads as the runtime reads it, where nothing needs a person.
    assert toolfile.parse(fixed_text).data is not None


def test_fix_of_pt004_and_pt045_together_writes_human_confirm_once() -> None:
    text = CLEAN.replace("#   human_confirm: false", "#   human_confirn: false").replace(
        "    return", "    import shutil\n    shutil.rmtree('/tmp/x')\n    return", 1
    )
    fixed_text, _ = fix_text(text)
    _keys_once(fixed_text)
    assert fixed_text.count("human_confirm:") == 1


# -- a lone carriage return: one line to the runtime, so one line to lint and the model --------


_PIECES = ["# ---", "# ---\r", "# name: x", "#   type: string", "x = 1", "", "# a: 1\r# b: 2"]


@given(
    st.lists(
        st.tuples(st.sampled_from(_PIECES), st.sampled_from(["\n", "\r\n", "\r"])), max_size=10
    )
)
@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
def test_lines_and_markers_are_the_runtimes_whatever_the_line_endings(
    parts: list[tuple[str, str]],
) -> None:
    text = "".join(piece + end for piece, end in parts)
    tf = toolfile.parse(text)
    runtime_lines = runtime_format.split_lines(text)
    ours = [
        line.removesuffix("\n").removesuffix("\r") if line.endswith("\n") else line
        for line in tf.lines
    ]
    assert ours == runtime_lines[: len(ours)] and len(runtime_lines) - len(ours) in (0, 1)
    start, end = runtime_format.find_markers(runtime_lines)
    assert (tf.open_index, tf.close_index) == (start, end if start is not None else None)


def test_a_lone_carriage_return_is_not_a_line_end() -> None:
    # Old-Mac line endings throughout: one line to the runtime, so no frontmatter at all.
    old_mac = CLEAN.replace("\n", "\r")
    assert not runtime_format.accepts(old_mac)
    assert "PT001" in {d.code for d in lint_text(old_mac)}
    assert toolfile.parse(old_mac).manifest is None
    assert toolfile.lone_carriage_return(old_mac) == 1
    # A stray \r inside a frontmatter line: the runtime keeps it in the line, its YAML reads a
    # line break there, and what follows has no `# ` stripped: a YAML comment, dropped.
    stray = CLEAN.replace(
        "# description: Count the words", "# description: Count\r# version: 9.9.9\r# the words"
    )
    parsed = runtime_format.parse(stray)
    tf = toolfile.parse(stray)
    assert tf.manifest is not None and tf.manifest.version == parsed.manifest["version"] == "1.0.0"
    assert len(tf.lines) == len(CLEAN.splitlines())  # the same line count: the same line numbers
    assert tf.manifest.description == parsed.manifest["description"] == "Count"
    assert toolfile.lone_carriage_return(stray) == 4  # the description's line
    assert toolfile.lone_carriage_return(CLEAN.replace("\n", "\r\n")) is None


# -- explicit YAML tags: read as the runtime's js-yaml reads them --------------------------------


@pytest.mark.parametrize(
    ("written", "value"),
    [
        ("!!str 3.12", "3.12"),
        ("! 3.12", "3.12"),
        ("!!int '5'", 5),
        ("!!float 1", 1.0),
        ("!!bool True", True),
        ("!!null", None),
        ("!!null ~", None),
        ("!!str", ""),
        ("!!seq", []),
        ("!!map", {}),
        ("!!int 0x1F", 31),
        ("!<tag:yaml.org,2002:str> 7", "7"),
    ],
)
def test_tags_the_runtime_knows(written: str, value: object) -> None:
    assert yamlio.load(f"a: {written}").data == {"a": value}


@pytest.mark.parametrize(
    "written",
    ["!!timestamp 2024-01-01", "!!binary aGk=", "!!int x", "!!bool ''", "!!str [1]", "!!map ''",
     "!custom x", "!!python/object/apply:os.system ['id']", "!!set {a}"],
)  # fmt: skip
def test_tags_the_runtime_refuses(written: str) -> None:
    with pytest.raises(yamlio.YamlError):
        yamlio.load(f"a: {written}")


def test_a_tag_on_the_first_key_of_a_block_mapping_is_refused_as_the_runtime_does() -> None:
    with pytest.raises(yamlio.YamlError, match="first key"):
        yamlio.load("x:\n  !!str b: 1")
    assert yamlio.load("x: 1\n!!str b: 1").data == {"x": 1, "b": 1}
    assert yamlio.load("? !!str b\n: 1").data == {"b": 1}


def test_a_tagged_manifest_is_served_as_the_runtime_lists_it() -> None:
    tagged = (
        CLEAN.replace("# version: 1.0.0", "# version: !!str 1.0.0")
        .replace('#   python_version: "3.12"', "#   python_version: !!str 3.12")
        .replace("#   human_confirm: false", "#   human_confirm: !!bool false")
    )
    assert tagged != CLEAN
    parsed = runtime_format.parse(tagged)
    assert parsed.manifest == runtime_format.parse(CLEAN).manifest
    assert toolfile.parse(tagged).manifest is not None  # serve and the desk load it


def test_outputs_compare_as_javascript_json() -> None:
    """patch_replay compares outputs as the runtime does (JSON.stringify): a Python tool's 2.0
    and the runtime's recorded 2 are one number (compared with node's own output)."""
    value = {
        "a": 2.0,
        "b": [1.0, 1e21, 1e-7, 0.1, 2**60, True, None, float("nan")],
        "c": 'é\n\u2028"',
        "d": {},
    }
    assert (
        runtime_format.js_json(value)
        == '{"a":2,"b":[1,1e+21,1e-7,0.1,1152921504606847000,true,null,null],"c":"é\\n\u2028\\"","d":{}}'
    )
    assert runtime_format.js_json({"scaled": 2.0}) == runtime_format.js_json({"scaled": 2})
    assert runtime_format.js_json({"a": 1, "b": 2}) != runtime_format.js_json({"b": 2, "a": 1})


# -- PT027: a lone \r is reported, with what the runtime does with it ---------------------------


def _lone_cr(text: str) -> list:
    return [d for d in lint_text(text) if d.code == "PT027"]


def test_a_lone_carriage_return_in_the_body_is_a_warning_with_a_safe_exact_fix() -> None:
    # Python ends a line at a lone \r, so the body runs as shown; the runtime and lint count
    # one line there. Turning it into the file's line end changes nothing the runtime runs.
    stray = edit("import json\nimport sys", "import json\rimport sys")
    (found,) = _lone_cr(stray)
    line = line_of(CLEAN, "import json")
    assert (found.severity, found.line, found.column) == ("warning", line, len("import json") + 1)
    assert "Python" in found.message and "`import sys`" in found.message
    assert found.fix is not None and found.fix.safe
    fixed, applied = fix_text(stray)
    assert fixed == CLEAN and applied == 1
    before, after = runtime_format.parse(stray), runtime_format.parse(fixed)
    assert before.manifest == after.manifest
    assert before.body.replace("\r", "\n") == after.body
    # A CRLF file gets CRLF.
    crlf = CLEAN.replace("\n", "\r\n")
    assert _lone_cr(crlf) == []
    stray_crlf = crlf.replace("import json\r\nimport sys", "import json\rimport sys")
    assert fix_text(stray_crlf)[0] == crlf


def test_a_lone_carriage_return_in_the_frontmatter_is_an_error_naming_what_the_runtime_drops() -> (
    None
):
    stray = edit(
        "# description: Count the words", "# description: Count\r# version: 9.9.9\r# the words"
    )
    (found,) = _lone_cr(stray)
    assert (found.severity, found.line, found.column) == (
        "error",
        4,
        len("# description: Count") + 1,
    )
    # Concretely: the runtime reads `# version: 9.9.9` as a YAML comment, and drops it.
    assert "`# version: 9.9.9`" in found.message and "comment" in found.message
    assert "2 lone carriage returns" in found.message
    # Turning them into line ends would change the manifest (a second `version`): offered in
    # the TUI, never applied by `lint --fix`.
    assert found.fix is not None and not found.fix.safe
    assert fix_text(stray)[0].count("\r") == 2


def test_a_marker_after_a_lone_carriage_return_is_not_a_marker() -> None:
    stray = "# a comment\r" + CLEAN  # the opening `# ---` now shares line 1 with the comment
    assert not runtime_format.accepts(stray)
    (found,) = _lone_cr(stray)
    assert (found.severity, found.line, found.column) == ("error", 1, len("# a comment") + 1)
    assert "`# ---`" in found.message and "not" in found.message and "marker" in found.message
    assert found.fix is not None and not found.fix.safe  # it changes what the runtime reads
    # Old-Mac line endings: one line to the runtime; the fix gives every line back, exactly.
    old_mac = CLEAN.replace("\n", "\r")
    (found,) = _lone_cr(old_mac)
    assert (found.severity, found.line, found.column) == ("error", 1, len("# ---") + 1)
    assert f"{CLEAN.count(chr(10))} lone carriage returns" in found.message
    assert found.fix is not None and not found.fix.safe
    assert apply_edits(old_mac, found.fix.edits) == CLEAN


def test_body_checks_name_the_runtimes_lines_after_a_lone_carriage_return() -> None:
    # Python ends a line at the lone \r, so its line numbers run one ahead of the file's after
    # it: body diagnostics are given back in the file's lines (the runtime's) and columns.
    text = edit("import json\nimport sys", "import json\rimport sys")
    text = text.replace(
        'if __name__ == "__main__":', 'CLIENT = open("x")\n\n\nif __name__ == "__main__":'
    )
    line = text.split("\n").index('CLIENT = open("x")') + 1
    (work,) = [d for d in lint_text(text) if d.code == "PT037"]
    assert (work.line, work.column) == (line, 1)
    assert '`CLIENT = open("x")`' in work.message
    # A statement that starts after the \r, on the \r's own line: its column in that line.
    sys_line = text.split("\n").index("import json\rimport sys") + 1
    imports = text.replace("import json\rimport sys", "import json\rimport requests")
    (undeclared,) = [d for d in lint_text(imports) if d.code == "PT043"]
    assert (undeclared.line, undeclared.column) == (sys_line, len("import json\r") + 1)
    assert undeclared.span.end_column == len("import json\rimport requests") + 1
    # A syntax error after it, too.
    broken = text.replace('CLIENT = open("x")', "CLIENT = (")
    (error,) = [d for d in lint_text(broken) if d.code == "PT030"]
    assert error.line == line
