"""Every manifest rule (PT001-PT024): a realistic failing case at the right line with a message
that says what to do, a passing case, and the quick fixes where there are some."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lintkit import CLEAN, diags, edit, fixed, line_of, only

from patch_tui.format import toolfile
from patch_tui.lint.engine import RULES, fix_text, iter_codes, lint_text
from patch_tui.lint.rules.manifest.description import count_sentences


def test_clean_tool_has_no_manifest_diagnostics() -> None:
    assert diags(CLEAN) == []
    assert toolfile.parse(CLEAN).manifest is not None


# --- PT001-PT003 (from the parser) -------------------------------------------------------


def test_pt001_no_markers() -> None:
    [d] = only("import json\n", "PT001")
    assert (d.line, d.severity) == (1, "error")
    assert "# ---" in d.message


def test_pt001_unclosed() -> None:
    text = CLEAN.replace("# ---\nimport json", "import json")
    [d] = only(text, "PT001")
    assert d.line == 1 and "never closed" in d.message


def test_pt002_invalid_yaml_points_into_the_file() -> None:
    text = edit("#   filesystem: none", "#   filesystem: [none")
    [d] = only(text, "PT002")
    assert d.line >= line_of(text, "filesystem: [none")
    assert "invalid YAML" in d.message


@pytest.mark.parametrize(
    ("old", "new", "gist"),
    [
        ("# version: 1.0.0", "# version: !!timestamp 2024-01-01", "unknown tag !!timestamp"),
        ("# version: 1.0.0", "# version: !!int 1.0.0", "not a valid !!int"),
        ("# version: 1.0.0", "# version: !custom 1.0.0", "unknown tag !custom"),
        ("# version: 1.0.0", "# version: 1.0.0\n# version: 1.0.1", "duplicate key 'version'"),
    ],
)
def test_pt002_refused_constructs(old: str, new: str, gist: str) -> None:
    text = edit(old, new)
    [d] = only(text, "PT002")
    assert gist in d.message
    assert d.line == line_of(text, new.split("\n")[-1])


def test_pt003_uncommented_line() -> None:
    text = edit("#   network: false", "  network: false")
    d = only(text, "PT003")[0]
    assert d.line == line_of(text, "  network: false") and "start it with `# `" in d.message


# --- PT004 ---------------------------------------------------------------------------------


def test_pt004_unknown_field_with_suggestion_and_rename_fix() -> None:
    text = edit("#   human_confirm: false", "#   human_confrim: true")
    [d] = only(text, "PT004")
    assert d.severity == "warning"
    assert d.line == line_of(text, "human_confrim") and d.column == 5
    assert "did you mean `human_confirm`" in d.message
    assert d.fix is not None and d.fix.safe
    assert "#   human_confirm: true" in fixed(text, "PT004")


@pytest.mark.parametrize(
    ("old", "new", "where"),
    [
        ("# version: 1.0.0", "# version: 1.0.0\n# author: me", "the manifest"),
        ("#     tainted_ok: true", "#     tainted_ok: true\n#     enum: [a]", "input `text`"),
        ("#       type: string", "#       type: string\n#       format: uri", "items"),
        ("#   packages: []", "#   packages: []\n#   pip: []", "`runtime`"),
        ("#   type: object", "#   type: object\n#   schema: {}", "`outputs`"),
    ],
)
def test_pt004_unknown_field_at_every_level(old: str, new: str, where: str) -> None:
    text = edit(old, new)
    [d] = only(text, "PT004")
    assert where in d.message
    assert d.line == line_of(text, new.split("\n")[-1])


def test_pt004_no_unique_suggestion_means_no_fix() -> None:
    text = edit("# version: 1.0.0", "# version: 1.0.0\n# xyzzy: 1")
    [d] = only(text, "PT004")
    assert d.fix is None and "has only" in d.message


# --- PT010-PT013 ---------------------------------------------------------------------------


@pytest.mark.parametrize("field", ["version", "description"])
def test_pt010_missing_required_field(field: str) -> None:
    lines = [line for line in CLEAN.splitlines(keepends=True) if not line.startswith(f"# {field}:")]
    [d] = only("".join(lines), "PT010")
    assert f"`{field}` is missing" in d.message and d.line == 1


def test_pt010_missing_runtime_offers_defaults() -> None:
    start = CLEAN.index("# runtime:")
    end = CLEAN.index("# ---\nimport")
    text = CLEAN[:start] + CLEAN[end:]
    [d] = only(text, "PT010")
    assert "`runtime`" in d.message and d.fix is not None and not d.fix.safe


def test_pt010_input_without_name() -> None:
    text = edit("#   - name: text\n#     type: string", "#   - type: string")
    [d] = only(text, "PT010")
    assert "input 1 has no `name`" in d.message
    assert d.line == line_of(text, "#   - type: string")


def test_pt011_name_not_snake_case() -> None:
    text = edit("# name: word_count", "# name: Word-Count")
    [d] = only(text, "PT011")
    assert (d.line, d.column) == (2, 9)
    assert "`word_count`" in d.message
    assert d.fix is not None and not d.fix.safe  # renaming a tool is never automatic


def test_pt011_input_name() -> None:
    text = edit("#   - name: text", "#   - name: TheText")
    [d] = only(text, "PT011")
    assert "input name `TheText`" in d.message and d.line == line_of(text, "TheText")


@pytest.mark.parametrize(
    ("version", "safe"), [('"1.0"', True), ("v1.2.3", True), ("1.0.0-beta", False)]
)
def test_pt012_version_not_semver(version: str, safe: bool) -> None:
    text = edit("# version: 1.0.0", f"# version: {version}")
    [d] = only(text, "PT012")
    assert d.line == 3 and "x.y.z" in d.message
    assert d.fix is not None and d.fix.safe is safe


def test_pt012_fix_pads_the_version() -> None:
    assert "# version: 1.0.0\n" in fixed(edit("# version: 1.0.0", '# version: "1.0"'), "PT012")


def test_pt013_empty_description_is_an_error() -> None:
    for empty in ("", ' ""'):
        text = edit(
            "# description: Count the words in a text, e.g. a paragraph of 21.5 lines.",
            f"# description:{empty}",
        )
        [d] = only(text, "PT013")
        assert d.severity == "error" and "empty" in d.message and d.line == 4


def test_pt013_two_sentences_is_a_warning() -> None:
    text = edit(
        "# description: Count the words in a text, e.g. a paragraph of 21.5 lines.",
        "# description: Count the words. Use it for essays.",
    )
    [d] = only(text, "PT013")
    assert d.severity == "warning" and "2 sentences" in d.message and d.line == 4


@pytest.mark.parametrize(
    ("text", "n"),
    [
        ("Count the words in a text.", 1),
        ("Count words, e.g. in an essay.", 1),
        ("Use i.e. this, etc. and so on.", 1),
        ("Compare A vs. B quickly.", 1),
        ("Round 21.5 to the nearest integer.", 1),
        ("Works with v1.2 of the API.", 1),
        ("Sent by J. Smith's tool.", 1),
        ("Count words. Then sort them.", 2),
        ("Fetch it! Really? Yes.", 3),
        ("", 0),
    ],
)
def test_sentence_counting(text: str, n: int) -> None:
    assert count_sentences(text) == n


# --- PT014-PT016 ---------------------------------------------------------------------------


def test_pt014_python_type_name_with_safe_fix() -> None:
    text = edit(
        "#     type: string\n#     description: The text",
        "#     type: str\n#     description: The text",
    )
    [d] = only(text, "PT014")
    assert d.line == 7
    assert "did you mean `string`" in d.message
    assert d.fix is not None and d.fix.safe
    assert "#     type: string\n#     description: The text" in fixed(text, "PT014")


def test_pt014_unknown_type_suggestion_is_unsafe() -> None:
    text = edit(
        "#     type: string\n#     description: The text",
        "#     type: strng\n#     description: The text",
    )
    [d] = only(text, "PT014")
    assert d.fix is not None and not d.fix.safe


def test_pt014_items_type() -> None:
    text = edit("#       type: string", "#       type: text")
    [d] = only(text, "PT014")
    assert d.line == line_of(text, "#       type: text")


def test_pt015_array_without_items_and_fix() -> None:
    text = edit("#     items:\n#       type: string\n", "")
    [d] = only(text, "PT015")
    assert d.line == line_of(text, "type: array") and "items: {type: string}" in d.message
    assert d.fix is not None and d.fix.safe
    out = fixed(text, "PT015")
    assert "#     default: []\n#     items:\n#       type: string\n# outputs:" in out
    assert only(out, "PT015") == [] and diags(out) == []


def test_pt015_items_type_from_the_default() -> None:
    text = edit(
        "#     default: []\n#     items:\n#       type: string\n", "#     default: [1, 2]\n"
    )
    [d] = only(text, "PT015")
    assert "items: {type: integer}" in d.message


def test_pt015_flow_style_input_falls_back_to_rewriting() -> None:
    text = edit(
        "#   - name: separators\n#     type: array\n#     description: Extra characters that split words.\n"
        "#     required: false\n#     default: []\n#     items:\n#       type: string\n",
        "#   - {name: separators, type: array, description: Extra characters., required: false, default: []}\n",
    )
    out = fixed(text, "PT015")
    assert only(out, "PT015") == []
    assert toolfile.parse(out).data["inputs"][1]["items"] == {"type": "string"}
    assert out.endswith(CLEAN[CLEAN.index("# ---\nimport") :])


def test_pt016_duplicate_input() -> None:
    text = edit("#   - name: separators", "#   - name: text")
    [d] = only(text, "PT016")
    assert d.line == 10  # the second `name: text`
    assert "first on line 6" in d.message


# --- PT017-PT021 ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "safe"), [("read_only", True), ("ReadOnly", True), ("read", False)]
)
def test_pt017_filesystem(value: str, safe: bool) -> None:
    text = edit("#   filesystem: none", f"#   filesystem: {value}")
    [d] = only(text, "PT017")
    assert d.line == line_of(text, "filesystem:") and "read-only" in d.message
    assert d.fix is not None and d.fix.safe is safe


def test_pt017_fix() -> None:
    assert "#   filesystem: read-only\n" in fixed(
        edit("#   filesystem: none", "#   filesystem: read_only"), "PT017"
    )


def test_pt018_language() -> None:
    text = edit("#   language: python", "#   language: javascript")
    [d] = only(text, "PT018")
    assert (
        d.line == line_of(text, "javascript") and "language: python" in d.message and d.fix is None
    )
    assert "language: python" in fixed(
        edit("#   language: python", "#   language: Python"), "PT018"
    )


@pytest.mark.parametrize(
    "pkg", ["requests", "requests>=2.0", "requests==2.*", "git+https://x/y.git"]
)
def test_pt019_unpinned_package(pkg: str) -> None:
    text = edit("#   packages: []", f'#   packages:\n#     - "{pkg}"')
    [d] = only(text, "PT019")
    assert d.line == line_of(text, pkg) and "==x.y.z" in d.message


def test_pt019_pinned_package_passes() -> None:
    assert (
        only(edit("#   packages: []", "#   packages: [requests==2.32.3, bs4==4.12]"), "PT019") == []
    )


def test_pt020_external_auth() -> None:
    text = edit(
        "#   packages: []",
        "#   packages: []\n# external_auth:\n#   - gmail.read\n#   - slack\n#   - dropbox.read",
    )
    found = only(text, "PT020")
    assert [d.line for d in found] == [line_of(text, "- slack"), line_of(text, "dropbox")]
    assert "provider.scope" in found[0].message
    assert "unknown provider `dropbox`" in found[1].message


def test_pt020_near_miss_provider() -> None:
    text = edit("#   packages: []", "#   packages: []\n# external_auth: [gmial.read]")
    [d] = only(text, "PT020")
    assert "did you mean `gmail`" in d.message and d.fix is not None and not d.fix.safe


PROVENANCE = '#   packages: []\n# generated_by: claude-opus-4-7\n# generated_at: "{at}"'


def test_pt021_generated_at_format_and_utc_fix() -> None:
    text = edit("#   packages: []", PROVENANCE.format(at="2026-05-04T14:34:56+02:00"))
    [d] = only(text, "PT021")
    assert d.line == line_of(text, "generated_at") and "2026-05-04T12:34:56Z" in d.message
    assert d.fix is not None and d.fix.safe
    assert 'generated_at: "2026-05-04T12:34:56Z"' in fixed(text, "PT021")


def test_pt021_naive_time_has_no_fix() -> None:
    text = edit("#   packages: []", PROVENANCE.format(at="2026-05-04 12:34"))
    [d] = only(text, "PT021")
    assert d.fix is None


def test_pt021_both_or_neither() -> None:
    text = edit("#   packages: []", "#   packages: []\n# generated_by: claude-opus-4-7")
    [d] = only(text, "PT021")
    assert "without generated_at" in d.message and d.line == line_of(text, "generated_by")
    assert (
        only(edit("#   packages: []", PROVENANCE.format(at="2026-05-04T12:34:56Z")), "PT021") == []
    )


# --- PT022-PT024 ---------------------------------------------------------------------------


def test_pt022_no_is_a_string_to_the_runtime() -> None:
    text = edit("#   network: false", "#   network: no")
    [d] = only(text, "PT022")
    assert d.severity == "error" and d.line == line_of(text, "network: no")
    assert 'reads it as the string "no"' in d.message and "write false" in d.message
    assert "#   network: false\n" in fixed(text, "PT022")


def test_pt022_quoted_false() -> None:
    text = edit("#   human_confirm: false", "#   human_confirm: 'false'")
    [d] = only(text, "PT022")
    assert "in quotes" in d.message and "write false" in d.message
    assert "#   human_confirm: false\n" in fixed(text, "PT022")


def test_pt022_unquoted_version_number() -> None:
    text = edit("# version: 1.0.0", "# version: 1.10")
    [d] = only(text, "PT022")
    # 1.10 would be the number 1.1; the fix keeps the digits as written and makes it semver.
    assert d.severity == "error" and "read as a number" in d.message and "1.10.0" in d.message
    assert "# version: 1.10.0\n" in fixed(text, "PT022")


def test_pt022_other_numbers_in_string_fields_are_quoted() -> None:
    text = edit(
        "# name: word_count",
        '# name: word_count\n# generated_by: 4.5\n# generated_at: "2026-05-04T12:34:56Z"',
    )
    [d] = only(text, "PT022")
    assert 'quote it: "4.5"' in d.message
    assert '# generated_by: "4.5"' in fixed(text, "PT022")


def test_pt022_strings_the_runtime_reads_as_strings_are_fine_unquoted() -> None:
    # The runtime's own writer leaves a timestamp unquoted (and the format document's example
    # does too); `yes` in a description is the string "yes" to the runtime, as meant.
    text = edit(
        "#   packages: []",
        "#   packages: []\n# generated_by: claude-opus-4-7\n# generated_at: 2026-05-04T12:34:56Z",
    )
    assert only(text, "PT022") == []
    for value in ("yes", "off", "2026-05-04", "n"):
        assert (
            only(
                edit("#     description: The text to count.", f"#     description: {value}"),
                "PT022",
            )
            == []
        )


@pytest.mark.parametrize(
    ("value", "reading"),
    [
        ("0755", "a number"),
        ("1_000", "a number"),
        ("0x1F", "a number"),
        ("~", "null"),
        ("True", "a boolean"),
    ],
)
def test_pt022_string_fields_the_runtime_reads_as_another_type(value: str, reading: str) -> None:
    # The runtime's js-yaml (JSON schema) reads these as numbers, null or booleans: its schema
    # then refuses the tool, so this is an error, with the quoting fix.
    text = edit("#     description: The text to count.", f"#     description: {value}")
    [d] = only(text, "PT022")
    assert d.severity == "error" and reading in d.message
    assert d.fix is not None and d.fix.safe
    assert f'description: "{value}"' in fixed(text, "PT022")


@pytest.mark.parametrize(
    ("old", "new", "gist"),
    [
        ("# inputs:\n", "# inputs: {}\n# old_inputs:\n", "must be a list"),
        ("#   network: false", "#   network: 1", "must be true or false"),
        ("#   packages: []", "#   packages: requests==2.32.3", "must be a list"),
        ("# name: word_count", "# name: [a]", "must be a string"),
        ("#     default: []", "#     default: nope", "give a default of type array"),
    ],
)
def test_pt022_wrong_types(old: str, new: str, gist: str) -> None:
    text = edit(old, new)
    found = only(text, "PT022")
    assert any(gist in d.message for d in found), [d.message for d in found]


def test_pt022_single_package_string_is_wrapped() -> None:
    text = edit("#   packages: []", "#   packages: requests==2.32.3")
    out = fixed(text, "PT022")
    assert toolfile.parse(out).data["runtime"]["packages"] == ["requests==2.32.3"]


def test_pt022_empty_inputs_fix() -> None:
    start = CLEAN.index("#   - name: text")
    end = CLEAN.index("# outputs:")
    text = CLEAN[:start] + CLEAN[end:]
    [d] = only(text, "PT022")
    assert "inputs: []" in d.message
    assert toolfile.parse(fixed(text, "PT022")).data["inputs"] == []


def test_pt022_default_of_the_wrong_type() -> None:
    text = edit(
        "#     tainted_ok: true", "#     tainted_ok: true\n#     required: false\n#     default: 3"
    )
    [d] = only(text, "PT022")
    assert "quote it" in d.message  # a number in a string input
    text = edit("#     default: []", "#     default: {a: 1}")
    assert any("of type array" in d.message for d in only(text, "PT022"))


def test_pt023_unquoted_python_version() -> None:
    text = edit('#   python_version: "3.12"', "#   python_version: 3.10")
    [d] = only(text, "PT023")
    assert "which is 3.1" in d.message and '"3.10"' in d.message
    assert only(text, "PT022") == []  # reported once, by PT023
    assert '#   python_version: "3.10"\n' in fixed(text, "PT023")


def test_pt023_not_major_minor() -> None:
    text = edit('#   python_version: "3.12"', '#   python_version: "3.12.1"')
    [d] = only(text, "PT023")
    assert 'like "3.12"' in d.message and d.fix is not None and not d.fix.safe


def test_pt024_browser_without_network() -> None:
    text = edit("#   human_confirm: false", "#   human_confirm: false\n#   browser: true")
    [d] = only(text, "PT024")
    assert d.line == line_of(text, "browser: true") and "network: true" in d.message
    assert only(edit("#   network: false", "#   network: true", text), "PT024") == []


def test_fixes_keep_comments_and_body() -> None:
    text = edit("#   network: false", "#   network: no  # offline only")
    out = fixed(text, "PT022")
    assert "#   network: false  # offline only" in out
    assert out[out.index("# ---\nimport") :] == CLEAN[CLEAN.index("# ---\nimport") :]


def test_every_rule_has_docs() -> None:
    for r in iter_codes():
        if r.code.startswith(("PT00", "PT01", "PT02", "PT05")):
            doc = r.func.__doc__ or ""
            assert "Why:" in doc and "Fix:" in doc, r.code
    assert {f"PT0{n:02d}" for n in (1, 2, 3, 4, *range(10, 25), 50, 51)} <= set(RULES)


# --- robustness ------------------------------------------------------------------------------

_HEAD_END = CLEAN.index("# ---\nimport")
_BODY = CLEAN[_HEAD_END:]
_PIECES = [
    *"abc: -#'\"[]{},&*!|>?%@`~\t\n\\0123.",
    "yes",
    "no",
    "1.0",
    "\u202e",
    "é",
    "null",
    "items:",
    "- ",
]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(st.integers(6, _HEAD_END - 1), st.sampled_from(_PIECES), st.booleans()),
        min_size=1,
        max_size=4,
    )
)
def test_random_frontmatter_edits_never_crash_and_fixes_converge(edits: list) -> None:
    head = CLEAN[:_HEAD_END]
    for pos, piece, delete in edits:
        pos = min(pos, len(head))
        head = head[:pos] + head[pos + 3 :] if delete else head[:pos] + piece + head[pos:]
    text = head + _BODY
    n_lines = text.count("\n") + 1
    for d in lint_text(text):
        assert d.code != "PT000", d.message
        assert 1 <= d.line <= n_lines and d.column >= 1
    out, _ = fix_text(text)
    assert out.endswith(_BODY)  # fixes never touch the body here
    assert [d for d in lint_text(out) if d.fix is not None and d.fix.safe] == []


def test_pt025_a_tag_the_runtime_knows_loads_as_it_reads_it_with_a_warning() -> None:
    text = edit("# version: 1.0.0", "# version: !!str 1.0.0").replace(
        '#   python_version: "3.12"', "#   python_version: !!str 3.12"
    )
    [d] = only(text, "PT025")
    assert d.severity == "warning" and d.line == line_of(text, "!!str 1.0.0")
    assert "explicit YAML tag (and 1 more)" in d.message
    assert not [x for x in diags(text) if x.severity == "error"]
    tf = toolfile.parse(text)
    assert tf.manifest is not None and tf.manifest.version == "1.0.0"
    assert tf.manifest.runtime.python_version == "3.12"


def test_pt025_an_anchor_loads_as_the_runtime_reads_it_with_a_warning() -> None:
    text = edit("# capabilities:", "# capabilities: &caps")
    [d] = only(text, "PT025")
    assert d.severity == "warning" and d.line == line_of(text, "&caps")
    assert not [x for x in diags(text) if x.severity == "error"]
    assert toolfile.parse(text).manifest is not None
