"""What a lint run produces: diagnostics, the quick fixes they carry, and how edits apply.

Plain data, shared by the engine, every rule and the front ends (the CLI's JSON, the editor's
lint panel and quick-fix menu).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from patch_tui.format import toolfile as tfmod
from patch_tui.format.toolfile import Span
from patch_tui.format.yamlio import Path

Severity = Literal["error", "warning", "info"]
SEVERITY_RANK: dict[str, int] = {"error": 0, "warning": 1, "info": 2}


@dataclass(frozen=True)
class Edit:
    """Replace the text between two 1-based (line, column) positions of the file."""

    line: int
    column: int
    end_line: int
    end_column: int
    new_text: str


@dataclass(frozen=True)
class Fix:
    """A quick fix: what it does, and the edits that do it.

    `safe` fixes keep the tool's meaning (or only make a declaration honest) and are applied by
    `patch-tui lint --fix`; unsafe ones are offered in the TUI only.
    """

    title: str
    edits: tuple[Edit, ...]
    safe: bool = True


@dataclass(frozen=True)
class Diagnostic:
    code: str
    severity: Severity
    message: str
    span: Span
    fix: Fix | None = None
    field: Path | None = None  # the manifest field concerned, for the form to focus
    path: str | None = None  # the file, filled in by lint_file

    @property
    def line(self) -> int:
        return self.span.line

    @property
    def column(self) -> int:
        return self.span.column

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": self.path,
            "code": self.code,
            "severity": self.severity,
            "line": self.span.line,
            "column": self.span.column,
            "end_line": self.span.end_line,
            "end_column": self.span.end_column,
            "message": self.message,
        }
        if self.fix is not None:
            out["fix"] = {
                "title": self.fix.title,
                "safe": self.fix.safe,
                "edits": [
                    {
                        "line": e.line,
                        "column": e.column,
                        "end_line": e.end_line,
                        "end_column": e.end_column,
                        "new_text": e.new_text,
                    }
                    for e in self.fix.edits
                ],
            }
        return out


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    """Apply non-overlapping edits (1-based positions) to text; later edits first."""
    lines = tfmod._split_lines(text)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(line: int, column: int) -> int:
        if line - 1 >= len(lines):
            return len(text)
        return min(starts[line - 1] + column - 1, starts[line])

    ordered = sorted(edits, key=lambda e: (e.line, e.column), reverse=True)
    for e in ordered:
        a, b = offset(e.line, e.column), offset(e.end_line, e.end_column)
        text = text[:a] + e.new_text + text[b:]
    return text
