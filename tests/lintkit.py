"""Shared test helpers for the lint tests: a clean tool and small ways to break it."""

from __future__ import annotations

from patch_tui.core.lint.engine import Diagnostic, fix_text, lint_text, selected_rules

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
