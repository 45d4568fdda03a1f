"""What the generator says to the model: the system prompt (format rules plus example tools) and
the user turns for a new tool, a refinement and a repair."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

from patch_tui.format import toolfile
from patch_tui.lint import Diagnostic, lint_text
from patch_tui.settings import paths

PROMPTS_DIR = Path(__file__).resolve().parent / "prompts"
# How many taken names are listed in the request (a big toolbox must not bloat every prompt).
MAX_TAKEN_NAMES_IN_PROMPT = 200
# Sample tools used as examples in the system prompt, each at most this big.
MAX_EXAMPLE_CHARS = 6_000


# --- the prompt --------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def system_prompt() -> str:
    """The long, unchanging system prompt: our format rules plus example tools.

    It is built the same way on every call (sorted files, fixed text) so the API's prompt
    cache keeps hitting across generations and repair rounds.
    """
    rules = (PROMPTS_DIR / "system.md").read_text(encoding="utf-8")
    examples = _example_tools()
    parts = [rules.rstrip(), "", "# Examples of good tools", ""]
    for name, text in examples:
        parts += [f'<example file="{name}">', text.rstrip(), "</example>", ""]
    return "\n".join(parts).rstrip() + "\n"


def _example_tools() -> list[tuple[str, str]]:
    """Up to two lint-clean sample tools (a plain one and a human_confirm one), else our own."""
    found: list[tuple[str, str]] = []
    folder = paths.sample_tools_dir()
    plain: tuple[str, str] | None = None
    confirm: tuple[str, str] | None = None
    candidates = sorted(folder.glob("*.py")) if folder.is_dir() else []
    for path in candidates:
        if plain is not None and confirm is not None:
            break
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if len(text) > MAX_EXAMPLE_CHARS:
            continue
        tf = toolfile.parse(text)
        if tf.manifest is None or any(d.severity == "error" for d in lint_text(text)):
            continue
        if tf.manifest.capabilities.human_confirm:
            confirm = confirm or (path.name, text)
        else:
            plain = plain or (path.name, text)
    found = [e for e in (plain, confirm) if e is not None]
    if not found:
        found = [("count_words.py", (PROMPTS_DIR / "example_tool.txt").read_text(encoding="utf-8"))]
    return found


def _new_tool_request(prompt: str, name_hint: str | None, taken: Sequence[str]) -> str:
    lines = [
        "Write a Patch tool that does this:",
        "",
        "<request>",
        prompt.strip(),
        "</request>",
        "",
    ]
    if name_hint:
        lines.append(f"Name the tool `{name_hint.strip()}`.")
    if taken:
        shown = sorted(taken)[:MAX_TAKEN_NAMES_IN_PROMPT]
        lines.append(
            "These tool names are already taken; choose a different name: " + ", ".join(shown) + "."
        )
    lines.append("Answer with the complete tool file only.")
    return "\n".join(lines)


def _refine_request(current_text: str, request: str, name: str | None) -> str:
    lines = [
        "Here is the current tool file:",
        "",
        "<tool_file>",
        current_text.rstrip("\n"),
        "</tool_file>",
        "",
        "Change it as follows:",
        "",
        "<request>",
        request.strip(),
        "</request>",
        "",
    ]
    if name:
        lines.append(f"Keep the name `{name}`.")
    lines.append("Answer with the complete new tool file only.")
    return "\n".join(lines)


def format_diagnostic(d: Diagnostic) -> str:
    return f"line {d.line}, column {d.column}: {d.code} {d.message}"


def _repair_request(diagnostics: Sequence[Diagnostic], cut_off: bool) -> str:
    errors = [d for d in diagnostics if d.severity == "error"]
    others = [d for d in diagnostics if d.severity != "error"]
    lines = [
        "patch-tui checked the file above (with its provenance fields filled in) and found "
        f"{len(errors)} error{'s' if len(errors) != 1 else ''}:",
        "",
    ]
    lines += [f"- {format_diagnostic(d)}" for d in errors]
    if others:
        lines += ["", "Also consider these warnings:", ""]
        lines += [f"- {format_diagnostic(d)}" for d in others]
    if cut_off:
        lines += ["", "Your answer was cut off at the length limit: write a shorter file."]
    lines += ["", "Answer with the whole corrected file, nothing else."]
    return "\n".join(lines)
