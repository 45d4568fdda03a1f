"""What a generation produces and reports: the result, the events streamed to the caller, the
error kinds, and the manifest/body diff a refinement is reviewed with."""

from __future__ import annotations

import difflib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal

from patch_tui.format import toolfile
from patch_tui.lint import Diagnostic

RoundKind = Literal["initial", "repair", "refine"]


# --- results and events ------------------------------------------------------------------------


@dataclass(frozen=True)
class Usage:
    """Token counts the API reported (summed over rounds when added)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_creation_input_tokens + other.cache_creation_input_tokens,
            self.cache_read_input_tokens + other.cache_read_input_tokens,
        )

    def summary(self) -> str:
        return (
            f"{self.input_tokens} in, {self.output_tokens} out, "
            f"{self.cache_read_input_tokens} cached read, {self.cache_creation_input_tokens} cache write"
        )


@dataclass
class Generation:
    """A finished generation or refinement: the stamped file and what the checks found."""

    text: str
    diagnostics: list[Diagnostic]
    model: str  # the model id the API reported, e.g. claude-sonnet-5-5-20260101
    generated_at: str
    rounds: int  # answers received (1 = no repair was needed)
    usage: Usage
    notices: list[str] = field(default_factory=list)
    original_text: str | None = None  # the file that was refined

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def name(self) -> str | None:
        data = toolfile.parse(self.text).data
        value = data.get("name") if isinstance(data, dict) else None
        return value if isinstance(value, str) else None

    @property
    def version(self) -> str | None:
        data = toolfile.parse(self.text).data
        value = data.get("version") if isinstance(data, dict) else None
        return value if isinstance(value, str) else None

    def diff(self, label: str = "tool") -> ToolDiff:
        """The change from the refined file (empty for a new tool)."""
        return diff_tool(self.original_text or "", self.text, label)


@dataclass(frozen=True)
class RoundStarted:
    round: int  # 0 for the first answer, n for the n-th repair
    kind: RoundKind


@dataclass(frozen=True)
class TextDelta:
    round: int
    text: str


@dataclass(frozen=True)
class RoundChecked:
    round: int
    text: str  # the stamped file that was checked
    diagnostics: tuple[Diagnostic, ...]

    @property
    def error_count(self) -> int:
        return sum(1 for d in self.diagnostics if d.severity == "error")


@dataclass(frozen=True)
class UsageReported:
    round: int
    model: str
    usage: Usage  # this round
    total: Usage  # all rounds so far


@dataclass(frozen=True)
class Notice:
    message: str


@dataclass(frozen=True)
class Finished:
    result: Generation


@dataclass(frozen=True)
class Failed:
    error: GenerateError


Event = RoundStarted | TextDelta | RoundChecked | UsageReported | Notice | Finished | Failed
EventHandler = Callable[[Event], Awaitable[None] | None]

ErrorKind = Literal[
    "no_key",
    "auth",
    "rate_limit",
    "overloaded",
    "connection",
    "dropped",
    "model",
    "api",
    "exists",
    "invalid",
]


class GenerateError(Exception):
    """Generation failed; `str()` is one sentence for a person, `kind` is for code."""

    def __init__(self, kind: ErrorKind, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.retry_after = retry_after


# --- diffs -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ToolDiff:
    """A change to a tool as two unified diffs: the manifest (frontmatter) and the body."""

    manifest: str
    body: str

    @property
    def empty(self) -> bool:
        return not self.manifest and not self.body

    def __str__(self) -> str:
        return self.manifest + self.body


def _split(text: str) -> tuple[list[str], list[str]]:
    tf = toolfile.parse(text)
    if tf.close_index is None:
        return [], tf.lines
    return tf.lines[: tf.close_index + 1], tf.lines[tf.close_index + 1 :]


def split_sections(text: str) -> tuple[str, str]:
    """(manifest, body): the lines up to the closing `# ---`, and everything after it."""
    manifest, body = _split(text)
    return "".join(manifest), "".join(body)


def diff_tool(old: str, new: str, label: str = "tool") -> ToolDiff:
    old_fm, old_body = _split(old)
    new_fm, new_body = _split(new)

    def udiff(a: list[str], b: list[str], part: str) -> str:
        # Lines without a final newline would glue onto the next diff line.
        a = [x if x.endswith(("\n", "\r")) else x + "\n" for x in a]
        b = [x if x.endswith(("\n", "\r")) else x + "\n" for x in b]
        return "".join(
            difflib.unified_diff(
                a, b, fromfile=f"{label} ({part}, current)", tofile=f"{label} ({part}, new)"
            )
        )

    return ToolDiff(udiff(old_fm, new_fm, "manifest"), udiff(old_body, new_body, "body"))
