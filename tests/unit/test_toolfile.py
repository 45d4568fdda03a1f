"""The tool-file parser and writer: spans, round trips, bodies kept byte for byte, hostile files."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
from hypothesis import HealthCheck, given, settings
from lintkit import CLEAN, bodies, line_of, manifests

from patch_tui.format import toolfile
from patch_tui.format.manifest import Manifest
from patch_tui.lint.engine import lint_toolfile


def test_clean_file_parses_to_a_manifest() -> None:
    tf = toolfile.parse(CLEAN)
    assert tf.problems == [] and tf.manifest is not None
    assert tf.manifest.name == "word_count"
    assert tf.manifest.inputs[1].items is not None
    assert tf.body.startswith("import json\n")
    assert tf.body_start_line == line_of(CLEAN, "import json")


@pytest.mark.parametrize(
    ("path", "key", "where"),
    [
        (("name",), False, (2, 9, 2, 19)),
        (("inputs", 1, "type"), False, (11, 13, 11, 18)),
        (("inputs", 1, "type"), True, (11, 7, 11, 11)),
        (("capabilities", "filesystem"), False, (22, 17, 22, 21)),
        (("runtime", "python_version"), False, (26, 21, 26, 27)),
    ],
)
def test_every_field_has_a_span(path: tuple, key: bool, where: tuple) -> None:
    span = toolfile.parse(CLEAN).span_of(path, key=key)
    assert span is not None
    assert (span.line, span.column, span.end_line, span.end_column) == where
    line = CLEAN.splitlines()[span.line - 1]
    assert line[span.column - 1 : span.end_column - 1] in (
        "word_count",
        "array",
        "type",
        "none",
        '"3.12"',
    )


def test_nearest_span_of_a_missing_field_is_its_parent() -> None:
    tf = toolfile.parse(CLEAN)
    assert tf.nearest_span(("inputs", 0, "default")).line == line_of(CLEAN, "#   - name: text")


def test_preamble_and_crlf_are_kept() -> None:
    text = "#!/usr/bin/env python3\r\n# -*- coding: utf-8 -*-\r\n" + CLEAN.replace("\n", "\r\n")
    tf = toolfile.parse(text)
    assert tf.manifest is not None and tf.newline == "\r\n"
    assert tf.preamble.startswith("#!/usr/bin/env")
    out = toolfile.with_frontmatter(tf, tf.data)
    assert out.count("\r\n") == out.count("\n") and out.startswith("#!/usr/bin/env python3\r\n")


def test_bom_is_remembered() -> None:
    tf = toolfile.parse_bytes(b"\xef\xbb\xbf" + CLEAN.encode())
    assert tf.bom and tf.manifest is not None and tf.to_bytes().startswith(b"\xef\xbb\xbf")


def test_yaml_is_read_with_the_json_schema() -> None:
    text = CLEAN.replace("#   network: false", "#   network: no").replace('"3.12"', "3.12")
    tf = toolfile.parse(text)
    assert tf.data["capabilities"]["network"] == "no"
    assert tf.data["runtime"]["python_version"] == 3.12
    stamp = toolfile.parse("# ---\n# generated_at: 2026-05-04T12:34:56Z\n# ---\n").data
    assert stamp == {"generated_at": "2026-05-04T12:34:56Z"}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(manifests(), bodies)
def test_round_trip(m: Manifest, body: str) -> None:
    text = toolfile.serialize(m, body)
    tf = toolfile.parse(text)
    assert tf.problems == []
    assert tf.manifest == m
    assert tf.body == body
    assert tf.text == text


@settings(max_examples=60, deadline=None)
@given(bodies)
def test_any_body_survives_a_frontmatter_rewrite(body: str) -> None:
    head = CLEAN[: CLEAN.index("import json")]
    tf = toolfile.parse(head + body)
    out = toolfile.with_frontmatter(tf, tf.data)
    assert toolfile.parse(out).body == body
    assert out.endswith(body)


# --- hostile files -------------------------------------------------------------------------


def _alias_bomb() -> bytes:
    lines = ["# ---", '# a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 9):
        prev, cur = chr(ord("a") + i - 1), chr(ord("a") + i)
        lines.append(f"# {cur}: &{cur} [" + ",".join(["*" + prev] * 9) + "]")
    return ("\n".join(lines) + "\n# ---\n").encode()


HOSTILE: dict[str, bytes] = {
    "empty": b"",
    "binary": bytes(range(256)) * 4,
    "nul": b"# ---\n# name: a\x00b\n# ---\n",
    "invalid_utf8": b"# ---\n# name: caf\xe9\n# ---\n",
    "bom_only": b"\xef\xbb\xbf",
    "alias_bomb": _alias_bomb(),
    "ten_mb_frontmatter": b"# ---\n"
    + (b"# description: " + b"x" * 1000 + b"\n") * 10_000
    + b"# ---\n",
    "deep_flow": b"# ---\n# a: " + b"[" * 5000 + b"]" * 5000 + b"\n# ---\n",
    "deep_block": b"# ---\n"
    + b"".join(b"# " + b" " * i + b"k:\n" for i in range(5000))
    + b"# ---\n",
    "python_tag": b'# ---\n# name: !!python/object/apply:os.system ["echo pwned"]\n# ---\n',
    "control_chars": b"# ---\n# name: x\x1b[31m\n# ---\n",
    "scalar_frontmatter": b"# ---\n# hello\n# ---\n",
    "list_frontmatter": b"# ---\n# - a\n# ---\n",
    "only_markers": b"# ---\n# ---\n",
    "lone_cr": b"# ---\r# name: x\r# ---\rprint(1)\r",
    "body_syntax_error": CLEAN.replace("def main(", "def main((").encode(),
    "two_documents": b"# ---\n# name: x\n# ---\n# ---\n",
    "yaml_doc_marker": b"# ---\n# name: x\n# --- \n# ...\n# ---\n",
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_file_gives_diagnostics_not_a_traceback(name: str) -> None:
    start = time.monotonic()
    tf = toolfile.parse_bytes(HOSTILE[name], path=f"{name}.py")
    diags = lint_toolfile(tf)
    assert time.monotonic() - start < 10
    assert not any(d.code == "PT000" for d in diags), [d.message for d in diags]
    if name not in (
        "only_markers",
        "lone_cr",
        "yaml_doc_marker",
        "body_syntax_error",
        "two_documents",
    ):
        assert any(
            d.severity == "error" and d.code in ("PT001", "PT002", "PT003") for d in diags
        ), name
    for d in diags:
        assert d.line >= 1 and d.column >= 1
        assert "\x1b" not in d.message and "\x00" not in d.message


def test_hostile_files_through_the_cli(tmp_path) -> None:
    for name, raw in HOSTILE.items():
        (tmp_path / f"{name}.py").write_bytes(raw)
    proc = subprocess.run(
        [sys.executable, "-m", "patch_tui", "lint", str(tmp_path), "--format", "json"],
        capture_output=True,
        timeout=120,
    )
    assert proc.returncode == 1, proc.stderr
    assert b"Traceback" not in proc.stderr
    import json

    found = json.loads(proc.stdout)
    assert {d["path"].rsplit("/", 1)[-1] for d in found} >= {
        f"{n}.py" for n in ("empty", "alias_bomb", "python_tag")
    }
    proc = subprocess.run(
        [sys.executable, "-m", "patch_tui", "lint", str(tmp_path)], capture_output=True, timeout=120
    )
    assert b"Traceback" not in proc.stderr and b"\x1b" not in proc.stdout


@pytest.mark.parametrize(
    "name", ["clean", "deep_flow", "alias_bomb", "python_tag", "control_chars"]
)
def test_pure_python_yaml_reads_like_libyaml(monkeypatch, name: str) -> None:
    """Without libyaml the parser falls back to PyYAML's pure-Python one: the same data and the
    same problems on the same lines. Where in a line each parser gives up (a 5,000-deep flow is
    too deep for both, at different columns) is theirs to choose, not ours to promise."""
    import yaml

    from patch_tui.format import yamlio

    raw = CLEAN.encode() if name == "clean" else HOSTILE[name]
    with_c = toolfile.parse_bytes(raw)
    monkeypatch.setattr(yamlio, "_BaseLoader", yaml.SafeLoader)
    pure = toolfile.parse_bytes(raw)
    assert pure.data == with_c.data
    assert pure.nodes == with_c.nodes

    def problems(tf: toolfile.ToolFile) -> list[tuple[str, int]]:
        return [(p.code, p.span.line) for p in tf.problems]

    assert problems(pure) == problems(with_c)
    if name == "deep_flow":  # the flow is on the manifest's first line, the file's second
        assert ("PT002", 2) in problems(pure)
