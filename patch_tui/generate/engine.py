"""The Claude generator: write or refine a Patch tool from a sentence, check it, repair it.

One engine serves the CLI and the TUI. `generate()` and `refine()` stream the model's answer
through `anthropic.AsyncAnthropic` and report what happens as events (text deltas, rounds,
diagnostics, token usage) to an `on_event` callback. When an answer ends, the tool file is taken
out of it (a Markdown fence is stripped), stamped with its provenance (the model id the API
reports, the UTC finish time, the version), then parsed, linted and compiled; errors go back to
the model in a follow-up turn asking for the whole corrected file, up to `max_repairs` times.

Nothing here writes a file except `save_new()`, which a caller runs only when a person (or the
CLI) accepts the result. Cancelling the task that runs `generate()` closes the stream at once.

The engine is split by concern: `results` (the result, events, errors and diffs), `prompt` (what
is said to the model), `claude` (one streamed round, API errors as sentences); this module runs
the rounds, stamps and checks the answers, and saves. Every public name of those modules is
importable from here too, as callers use it (`from patch_tui.generate import engine as g`).

`anthropic` (and its HTTP stack) is imported inside the functions that talk to the API, so
importing this module, or starting the app, never loads it.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from patch_tui.format import toolfile
from patch_tui.format.manifest import NAME_RE, bump_version
from patch_tui.format.toolfile import Span
from patch_tui.generate.claude import _emit, _one_line, _stream_round, _translate, _UnreadableAnswer
from patch_tui.generate.prompt import (
    PROMPTS_DIR,
    _new_tool_request,
    _refine_request,
    _repair_request,
    format_diagnostic,
    system_prompt,
)
from patch_tui.generate.results import (
    ErrorKind,
    Event,
    EventHandler,
    Failed,
    Finished,
    GenerateError,
    Generation,
    Notice,
    RoundChecked,
    RoundKind,
    RoundStarted,
    TextDelta,
    ToolDiff,
    Usage,
    UsageReported,
    diff_tool,
    split_sections,
)
from patch_tui.lint import Diagnostic, lint_text
from patch_tui.settings import paths

if TYPE_CHECKING:
    from patch_tui.settings.config import Settings

# The names callers reach through this module (the split modules' included).
__all__ = [
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_MAX_TOKENS",
    "NEW_TOOL_VERSION",
    "PROMPTS_DIR",
    "ErrorKind",
    "Event",
    "EventHandler",
    "Failed",
    "Finished",
    "GenerateError",
    "Generation",
    "Notice",
    "Options",
    "RoundChecked",
    "RoundKind",
    "RoundStarted",
    "TextDelta",
    "ToolDiff",
    "Usage",
    "UsageReported",
    "check",
    "diff_tool",
    "extract_tool",
    "format_diagnostic",
    "free_name",
    "generate",
    "no_key_error",
    "refine",
    "resolve_options",
    "save_new",
    "split_sections",
    "stamp",
    "system_prompt",
    "taken_names",
    "utc_now",
]

DEFAULT_MAX_TOKENS = 16_000
# The SDK retries 429/529 and connection errors itself, honouring retry-after. One retry keeps a
# blip invisible without leaving a person staring at a silent screen for minutes.
DEFAULT_MAX_RETRIES = 1
NEW_TOOL_VERSION = "1.0.0"


# --- options -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Options:
    """Where the API key, model and limits come from, resolved once for a command or screen."""

    api_key: str | None
    model: str
    max_repairs: int
    base_url: str | None = None
    max_retries: int = DEFAULT_MAX_RETRIES


def resolve_options(
    settings: Settings | None = None, *, model: str | None = None, max_repairs: int | None = None
) -> Options:
    """ANTHROPIC_API_KEY, else the config file's key; --model, else PATCH_TUI_MODEL / config.
    ANTHROPIC_BASE_URL is read by the SDK itself; it is reported here for messages only."""
    from patch_tui.settings.config import load_settings

    s = settings if settings is not None else load_settings()
    key = os.environ.get("ANTHROPIC_API_KEY") or s.anthropic_api_key or None
    return Options(
        api_key=key.strip() if key else None,
        model=(model or s.model).strip(),
        max_repairs=max(0, s.max_repairs if max_repairs is None else max_repairs),
        base_url=os.environ.get("ANTHROPIC_BASE_URL") or None,
    )


def no_key_error() -> GenerateError:
    return GenerateError(
        "no_key",
        "No API key for Claude: set ANTHROPIC_API_KEY, or anthropic_api_key in "
        f"{paths.config_file()}.",
    )


# --- taking the file out of an answer, stamping, checking ---------------------------------------

_FENCE_RE = re.compile(r"^[ \t]*(`{3,}|~{3,})[^\n]*\n(.*?)^[ \t]*\1[ \t]*$", re.M | re.S)


def extract_tool(answer: str) -> str:
    """The tool file inside a model's answer: a fenced block's content if there is one (the
    one holding the frontmatter, else the longest), without prose around the file."""
    blocks = [m.group(2) for m in _FENCE_RE.finditer(answer)]
    if blocks:
        with_marker = [
            b for b in blocks if any(ln.strip() == toolfile.MARKER for ln in b.splitlines())
        ]
        text = max(with_marker or blocks, key=len)
    else:
        text = answer
        lines = text.splitlines(keepends=True)
        if lines and lines[0].lstrip().startswith(("```", "~~~")):
            text = "".join(lines[1:])  # an opening fence never closed: a cut-off answer
        lines = text.splitlines(keepends=True)
        marker = next((i for i, ln in enumerate(lines) if ln.strip() == toolfile.MARKER), None)
        if marker:
            before = [ln for ln in lines[:marker] if ln.strip()]
            # Prose before the frontmatter ("Here is the tool:") is dropped; a shebang is kept.
            if any(not ln.lstrip().startswith("#") for ln in before):
                text = "".join(lines[marker:])
    text = text.strip("\n")
    return text.rstrip() + "\n" if text.strip() else ""


def utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _readable(tf: toolfile.ToolFile) -> bool:
    return (
        tf.has_frontmatter
        and isinstance(tf.data, dict)
        and not any(p.code in toolfile.STRUCTURE_CODES for p in tf.problems)
    )


def stamp(
    text: str,
    *,
    model_id: str,
    when: str,
    version: str | None = None,
    name: str | None = None,
) -> str:
    """The file with generated_by/generated_at (and version, name) overwritten; only the
    frontmatter lines change. A file whose frontmatter cannot be read is returned as is."""
    tf = toolfile.parse(text)
    if not _readable(tf):
        return text
    data: dict[str, Any] = tf.data
    if name is not None:
        data = toolfile.set_field(data, ("name",), name)
    if version is not None:
        data = toolfile.set_field(data, ("version",), version)
    data = toolfile.set_field(data, ("generated_by",), model_id)
    data = toolfile.set_field(data, ("generated_at",), when)
    return toolfile.with_frontmatter(tf, data)


def check(text: str) -> list[Diagnostic]:
    """Lint plus a real compile: a syntax error the linter's rules skip is still reported."""
    diagnostics = list(lint_text(text))
    problem: tuple[str, int, int] | None = None
    try:
        compile(text, "<tool>", "exec", dont_inherit=True)
    except SyntaxError as exc:
        problem = (f"Python syntax error: {exc.msg}", exc.lineno or 1, exc.offset or 1)
    except ValueError as exc:  # e.g. NUL bytes
        problem = (f"the file cannot be compiled: {exc}", 1, 1)
    if problem is not None:
        message, line, column = problem
        already = any(d.severity == "error" and d.line == line for d in diagnostics)
        if not already:
            diagnostics.append(
                Diagnostic("E999", "error", message, Span(line, column, line, column + 1))
            )
            diagnostics.sort(key=lambda d: (d.line, d.column, d.code))
    return diagnostics


def free_name(name: str, taken: Iterable[str]) -> str:
    """`name`, or `name_2`, `name_3`... the first that is not taken."""
    taken_set = set(taken)
    if name not in taken_set:
        return name
    n = 2
    while f"{name}_{n}" in taken_set:
        n += 1
    return f"{name}_{n}"


def taken_names(folders: Iterable[str | os.PathLike[str] | None]) -> set[str]:
    """Tool names (file stems and manifest names) in these folders or toolboxes."""
    from patch_tui.runtime.toolbox import Toolbox, ToolboxError

    names: set[str] = set()
    for folder in folders:
        if folder is None or not Path(folder).is_dir():
            continue
        try:
            box = Toolbox.open(folder)
        except ToolboxError:
            continue
        for path in box.tool_paths():
            names.add(path.stem)
            try:
                data = toolfile.read(str(path)).data
            except OSError:
                continue
            if isinstance(data, dict) and isinstance(data.get("name"), str):
                names.add(data["name"])
    return names


Finalize = Callable[[str, str, str], tuple[str, list[str]]]


async def _run(
    first_request: str,
    first_kind: RoundKind,
    finalize: Finalize,
    *,
    model: str,
    api_key: str | None,
    base_url: str | None,
    max_repairs: int,
    on_event: EventHandler | None,
    max_tokens: int,
    max_retries: int,
    timeout: float | None,
    original_text: str | None = None,
) -> Generation:
    if not api_key:
        error = no_key_error()
        await _emit(on_event, Failed(error))
        raise error
    import anthropic

    kwargs: dict[str, Any] = {"api_key": api_key, "max_retries": max_retries}
    if base_url:
        kwargs["base_url"] = base_url
    if timeout is not None:
        kwargs["timeout"] = timeout
    client = anthropic.AsyncAnthropic(**kwargs)
    messages: list[dict[str, Any]] = [{"role": "user", "content": first_request}]
    total = Usage()
    notices: list[str] = []
    try:
        round_no = 0
        while True:
            kind: RoundKind = first_kind if round_no == 0 else "repair"
            await _emit(on_event, RoundStarted(round_no, kind))
            try:
                answer = await _stream_round(
                    client,
                    model=model,
                    messages=messages,
                    max_tokens=max_tokens,
                    round_no=round_no,
                    on_event=on_event,
                )
            except Exception as exc:
                # A stream the SDK cannot make sense of (events out of order, no message) is
                # the server's problem, not a reason for a traceback.
                if _translate(exc, model, base_url) is not None:
                    raise
                detail = _one_line(str(exc), 120)
                raise _UnreadableAnswer(
                    f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__
                ) from exc
            total = total + answer.usage
            await _emit(on_event, UsageReported(round_no, answer.model, answer.usage, total))
            finished_at = utc_now()
            # Parsing, stamping and linting a long answer takes a moment: keep the loop (and a
            # TUI running on it) responsive by doing it in a thread.
            text, round_notices = await asyncio.to_thread(
                finalize, extract_tool(answer.text), answer.model, finished_at
            )
            for message in round_notices:
                if message not in notices:
                    notices.append(message)
                    await _emit(on_event, Notice(message))
            cut_off = answer.stop_reason == "max_tokens"
            if cut_off:
                await _emit(on_event, Notice("The answer hit the length limit and was cut off."))
            diagnostics = await asyncio.to_thread(check, text)
            await _emit(on_event, RoundChecked(round_no, text, tuple(diagnostics)))
            has_errors = any(d.severity == "error" for d in diagnostics)
            if not has_errors or round_no >= max_repairs:
                result = Generation(
                    text=text,
                    diagnostics=diagnostics,
                    model=answer.model,
                    generated_at=finished_at,
                    rounds=round_no + 1,
                    usage=total,
                    notices=notices,
                    original_text=original_text,
                )
                await _emit(on_event, Finished(result))
                return result
            # The assistant turn is the file as we checked it, so line numbers match.
            messages.append({"role": "assistant", "content": text.rstrip() or "(empty answer)"})
            messages.append({"role": "user", "content": _repair_request(diagnostics, cut_off)})
            round_no += 1
    except _UnreadableAnswer as exc:
        unreadable = GenerateError("api", f"Claude's answer could not be read ({exc}): try again.")
        await _emit(on_event, Failed(unreadable))
        raise unreadable from None
    except Exception as exc:
        translated = _translate(exc, model, base_url)
        if translated is None:
            raise
        await _emit(on_event, Failed(translated))
        raise translated from None
    finally:
        await client.close()


async def generate(
    prompt: str,
    *,
    model: str,
    api_key: str | None,
    base_url: str | None = None,
    name_hint: str | None = None,
    max_repairs: int = 2,
    existing_names: Iterable[str] = (),
    on_event: EventHandler | None = None,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    max_retries: int = DEFAULT_MAX_RETRIES,
    timeout: float | None = None,
) -> Generation:
    """Write a new tool. Raises GenerateError (after a Failed event) for key and API problems.

    The result is version 1.0.0, stamped with the model id the API reported and the finish
    time; a name already in `existing_names` gets a `_2`-style suffix (and a Notice says so).
    """
    if not prompt.strip():
        raise GenerateError("invalid", "The prompt is empty: describe the tool in a sentence.")
    taken = set(existing_names)

    def finalize(text: str, model_id: str, when: str) -> tuple[str, list[str]]:
        notes: list[str] = []
        tf = toolfile.parse(text)
        name = tf.data.get("name") if _readable(tf) else None
        new_name = None
        if isinstance(name, str) and NAME_RE.match(name) and name in taken:
            new_name = free_name(name, taken)
            notes.append(f"A tool named {name} already exists, so this one is named {new_name}.")
        return stamp(
            text, model_id=model_id, when=when, version=NEW_TOOL_VERSION, name=new_name
        ), notes

    return await _run(
        _new_tool_request(prompt, name_hint, sorted(taken)),
        "initial",
        finalize,
        model=model,
        api_key=api_key,
        base_url=base_url,
        max_repairs=max_repairs,
        on_event=on_event,
        max_tokens=max_tokens,
        max_retries=max_retries,
        timeout=timeout,
    )


async def refine(
    current_text: str,
    request: str,
    *,
    model: str,
    api_key: str | None,
    base_url: str | None = None,
    max_repairs: int = 2,
    bump: Literal["major", "minor", "patch"] = "minor",
    on_event: EventHandler | None = None,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    max_retries: int = DEFAULT_MAX_RETRIES,
    timeout: float | None = None,
) -> Generation:
    """Change an existing tool as asked. The result keeps the tool's name, has its version
    bumped (`bump`, minor by default) from the current one and fresh provenance stamps;
    `result.diff()` shows the change for review."""
    if not request.strip():
        raise GenerateError("invalid", "The request is empty: say what to change.")
    current = toolfile.parse(current_text)
    data = current.data if _readable(current) else {}
    raw_name, raw_version = data.get("name"), data.get("version")
    name = raw_name if isinstance(raw_name, str) else None
    old_version = raw_version if isinstance(raw_version, str) else "0.0.0"
    new_version = bump_version(old_version, bump) if old_version != "0.0.0" else NEW_TOOL_VERSION

    def finalize(text: str, model_id: str, when: str) -> tuple[str, list[str]]:
        notes: list[str] = []
        tf = toolfile.parse(text)
        answered = tf.data.get("name") if _readable(tf) else None
        if name and isinstance(answered, str) and answered != name:
            notes.append(f"The model renamed the tool to {answered}; the name {name} was kept.")
        return stamp(text, model_id=model_id, when=when, version=new_version, name=name), notes

    return await _run(
        _refine_request(current_text, request, name),
        "refine",
        finalize,
        model=model,
        api_key=api_key,
        base_url=base_url,
        max_repairs=max_repairs,
        on_event=on_event,
        max_tokens=max_tokens,
        max_retries=max_retries,
        timeout=timeout,
        original_text=current_text,
    )


# --- saving ------------------------------------------------------------------------------------


def save_new(
    result: Generation,
    folder: str | os.PathLike[str],
    *,
    keep_invalid: bool = False,
) -> Path:
    """Write a new tool as `<name>.py` in `folder`, atomically. Never overwrites: an existing
    file is an error. A result with errors is refused unless `keep_invalid`."""
    from patch_tui.runtime.toolbox import Toolbox, ToolboxError, atomic_write

    if result.errors and not keep_invalid:
        raise GenerateError(
            "invalid",
            f"The tool still has {len(result.errors)} error(s), so nothing was written "
            "(use --keep-invalid to write it anyway).",
        )
    name = result.name if result.name and NAME_RE.match(result.name) else "generated_tool"
    target = Path(folder).expanduser()
    # A Patch toolbox gets the file in its tools/ folder and an index.json entry.
    box = Toolbox.open(target) if target.is_dir() else None
    path = (box.tools_dir if box is not None else target) / f"{name}.py"
    if path.exists() or path.is_symlink():
        raise GenerateError("exists", f"{path} already exists: nothing was written.")
    try:
        if box is not None:
            box.save_tool(path, result.text, expected_sha256=None)
        else:
            atomic_write(path, result.text.encode("utf-8"))
    except ToolboxError as exc:
        raise GenerateError("invalid", f"Cannot save {path}: {exc}") from None
    except OSError as exc:
        raise GenerateError("invalid", f"Cannot write {path}: {exc.strerror or exc}.") from None
    return path
