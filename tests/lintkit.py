"""Shared test helpers for the lint tests: a clean tool and small ways to break it."""

from __future__ import annotations

from patch_tui.lint.engine import Diagnostic, fix_text, lint_text, selected_rules

CLEAN = """\
# ---
# name: word_count
# version: 1.0.0
# description: Count the words in a text, e.g. a paragraph of 21.5 lines.
# inputs:
#   - name: text
#     type: string
#     description: The text to count.
#     tainted_ok: true
#   - name: separators
#     type: array
#     description: Extra characters that split words.
#     required: false
#     default: []
#     items:
#       type: string
# outputs:
#   type: object
#   description: The number of words.
# capabilities:
#   network: false
#   filesystem: none
#   human_confirm: false
# runtime:
#   language: python
#   python_version: "3.12"
#   packages: []
# ---
import json
import sys


def main(text: str, separators: list | None = None) -> dict:
    for sep in separators or []:
        text = text.replace(sep, " ")
    return {"words": len(text.split())}


if __name__ == "__main__":
    args = json.loads(sys.stdin.read())
    print(json.dumps(main(**args)))
"""


def line_of(text: str, needle: str) -> int:
    """The 1-based line of the first line containing `needle`."""
    for n, line in enumerate(text.splitlines(), 1):
        if needle in line:
            return n
    raise AssertionError(f"{needle!r} not in text")


def edit(old: str, new: str, text: str = CLEAN) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


def diags(text: str, *codes: str) -> list[Diagnostic]:
    """Diagnostics of the manifest and text families (or only `codes`)."""
    rules = selected_rules(codes or ("PT0", "PT1", "PT2", "PT05"))
    return lint_text(text, rules=rules)


def only(text: str, code: str) -> list[Diagnostic]:
    return [d for d in diags(text, code) if d.code == code]


def fixed(text: str, *codes: str) -> str:
    return fix_text(text, selected_rules(codes or ("PT0", "PT1", "PT2", "PT05")))[0]


# --- hypothesis strategies ------------------------------------------------------------------

from hypothesis import strategies as st  # noqa: E402

from patch_tui.format.manifest import INPUT_TYPES, Manifest  # noqa: E402

names = st.from_regex(r"\A[a-z][a-z0-9_]{0,20}\Z")
# Any text a person might type, including quotes, colons, `#`, newlines and hidden characters;
# surrogates cannot be encoded as UTF-8 and never come out of a decoded file.
any_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
json_scalars = st.none() | st.booleans() | st.integers(-(10**6), 10**6) | any_text
json_values = st.recursive(
    json_scalars,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(names, children, max_size=3),
    max_leaves=6,
)


@st.composite
def inputs(draw: st.DrawFn) -> dict:
    # The runtime requires a non-empty description for every input.
    data: dict = {
        "name": draw(names),
        "type": draw(st.sampled_from(INPUT_TYPES)),
        "description": draw(any_text.filter(bool)),
    }
    if draw(st.booleans()):
        data["required"] = draw(st.booleans())
    if draw(st.booleans()):
        data["default"] = draw(json_values)
    if draw(st.booleans()):
        data["tainted_ok"] = draw(st.booleans())
    if data["type"] == "array" or draw(st.booleans()):
        data["items"] = {"type": draw(st.sampled_from(INPUT_TYPES))}
    return data


@st.composite
def manifests(draw: st.DrawFn) -> Manifest:
    data: dict = {
        "name": draw(names),
        "version": draw(
            st.from_regex(r"\A(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})\Z")
        ),
        "description": draw(any_text.filter(bool)),
        "inputs": draw(st.lists(inputs(), max_size=3)),
        "outputs": {"type": draw(st.sampled_from((*INPUT_TYPES, "null")))},
        "capabilities": {
            "network": draw(st.booleans()),
            "filesystem": draw(st.sampled_from(("none", "read-only", "read-write"))),
            "human_confirm": draw(st.booleans()),
        },
        "runtime": {
            "language": "python",
            "python_version": draw(st.from_regex(r"\A3\.[0-9]{1,2}\Z")),
            "packages": draw(
                st.lists(
                    st.from_regex(r"\A[a-z][a-z0-9._-]{0,10}==[0-9]{1,3}(\.[0-9]{1,3}){0,2}\Z"),
                    max_size=3,
                )
            ),
        },
    }
    if draw(st.booleans()):
        data["outputs"]["description"] = draw(any_text)
    if draw(st.booleans()):
        data["capabilities"]["browser"] = draw(st.booleans())
    if draw(st.booleans()):
        data["external_auth"] = draw(
            st.lists(
                st.sampled_from(
                    ["gmail.read", "slack.send_message", "github.repo", "linear.write"]
                ),
                max_size=3,
            )
        )
    if draw(st.booleans()):
        data["generated_by"] = draw(any_text)
        data["generated_at"] = "2026-05-04T12:34:56Z"
    return Manifest.model_validate(data)


bodies = st.lists(
    st.sampled_from(
        ["# ---", "# ---\r", "#", "x = 1", "\u202e", "é", "\t", " ", "'''", "\x0c", "\u2028"]
    )
    | st.text(st.characters(blacklist_categories=("Cs",)), max_size=12),
    max_size=8,
).flatmap(
    lambda parts: st.lists(
        st.sampled_from(["\n", "\r\n", "\r"]), min_size=len(parts), max_size=len(parts)
    ).map(lambda ends: "".join(p + e for p, e in zip(parts, ends, strict=True)))
) | st.text(st.characters(blacklist_categories=("Cs",)), max_size=200)
