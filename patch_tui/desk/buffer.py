"""The open tool's buffer: everything the desk knows about the file being edited, without a screen.

A `ToolBuffer` holds the text, the text last saved, the sha256 of the bytes on disk, the BOM,
whether it is read-only and why, the last parse, the last good manifest, the diagnostics and
the lint generation. It turns a form edit into a frontmatter patch (the few lines that change),
and a quick fix into text edits, without a widget in sight: the desk's screen only applies them
to its text area and shows the results.

Why a package of its own (`patch_tui/desk/`) rather than `format/`: the buffer lints, and the
lint engine sits above the file format (it reads `format/`); the buffer is the desk's model, one
layer above both and still below `ui/`, so it never imports Textual.

A form edit reuses the last parse. The parse of text T is valid for any text that starts with
the same lines as T up to and including the closing `# ---` marker: nothing after it changes
what the frontmatter holds. After a patch the buffer knows the new frontmatter exactly (the data
it rendered, the lines it wrote), so keystroke after keystroke in a form field needs no parse.
Only when the text changed elsewhere since the last parse (a source edit not yet linted) does a
form edit need a fresh parse first (`FormEdit.needs_parse`), which the screen gets from its lint
thread.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from patch_tui.format import toolfile
from patch_tui.runtime.toolbox import sha256_bytes

if TYPE_CHECKING:  # lint's types load with the first lint, after the desk's first frame
    from patch_tui.lint.diagnostic import Diagnostic, Edit


def lint_toolfile(tf: toolfile.ToolFile) -> list[Diagnostic]:
    """The lint engine's `lint_toolfile`, imported with the first lint: the engine and its rule
    registry are not needed for the desk's first frame (the first lint follows the first paint)."""
    from patch_tui.lint.engine import lint_toolfile as lint

    return lint(tf)


# Parse problems that mean the frontmatter's structure cannot be read (no markers, not a mapping).
STRUCTURE_CODES = toolfile.STRUCTURE_CODES
# A text position as the text area counts it: 0-based (row, column).
Location = tuple[int, int]


# Named tuples, not frozen dataclasses: a fifth of the import time (the desk's first frame
# imports this module).
class TextEdit(NamedTuple):
    """Replace the text between two 0-based (row, column) locations with `text`."""

    start: Location
    end: Location
    text: str


class FormEdit(NamedTuple):
    """What a form edit asks of the text: `edit` (None: nothing changes), `refused` (one line
    saying why not), or `needs_parse` (the text moved on since the last parse: parse, then ask
    again)."""

    edit: TextEdit | None = None
    refused: str | None = None
    needs_parse: bool = False


class _Frontmatter(NamedTuple):
    """The last good parse, as far as a frontmatter patch needs it: the data, the lines from the
    top of the file through the closing marker (endings kept), and where the markers are."""

    data: dict[str, Any]
    head_lines: tuple[str, ...]
    open_index: int
    close_index: int
    newline: str  # the file's line ending: patched lines get it too
    head: str  # "".join(head_lines): the text a later text must start with for this to hold


def structure_broken(tf: toolfile.ToolFile) -> bool:
    """True when the frontmatter cannot be read as a manifest mapping (the form cannot edit it)."""
    return not isinstance(tf.data, dict) or any(p.code in STRUCTURE_CODES for p in tf.problems)


def _frontmatter_of(tf: toolfile.ToolFile) -> _Frontmatter | None:
    if not tf.has_frontmatter or structure_broken(tf):
        return None
    assert tf.open_index is not None and tf.close_index is not None
    head_lines = tuple(tf.lines[: tf.close_index + 1])
    return _Frontmatter(
        tf.data, head_lines, tf.open_index, tf.close_index, tf.newline, "".join(head_lines)
    )


def _splice(text: str, edits: list[TextEdit]) -> str:
    """Apply edits given in text-area locations (later edits first, as the desk applies them)."""
    lines = toolfile._split_lines(text)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(location: Location) -> int:
        row, column = location
        if row >= len(lines):
            return len(text)
        return starts[row] + column

    for e in edits:
        a, b = offset(e.start), offset(e.end)
        text = text[:a] + e.text + text[b:]
    return text


@dataclass
class ToolBuffer:
    """The open tool file and what is known about it (see the module docstring)."""

    path: Path | None = None
    text: str = ""
    saved_text: str = ""
    disk_sha: str | None = None  # sha256 of the bytes on disk when loaded or saved
    bom: bool = False
    read_only_reason: str | None = None
    lone_cr_line: int | None = None  # read-only for lone \r's only: the first one's line
    tf: toolfile.ToolFile | None = None  # the last parse (for the text `linted_text`, or older)
    last_good: dict[str, Any] | None = None  # the last manifest whose structure parsed
    diagnostics: list[Diagnostic] = field(default_factory=list)
    linted_text: str | None = None  # the text `diagnostics` are for
    lint_generation: int = 0
    _frontmatter: _Frontmatter | None = field(default=None, repr=False)

    # -- loading ------------------------------------------------------------------------------

    @classmethod
    def from_bytes(cls, path: Path, raw: bytes) -> ToolBuffer:
        """A buffer for a file's bytes. A file that is not UTF-8 text, or holds a value no writer
        can put back exactly, is read-only (with the reason): saving it would mangle it."""
        buffer = cls(path=Path(path))
        buffer.load_bytes(raw)
        return buffer

    def load_bytes(self, raw: bytes) -> None:
        tf = toolfile.parse_bytes(raw, path=str(self.path) if self.path else None)
        self.read_only_reason = None
        self.lone_cr_line = None
        if not tf.text and raw:
            # Invalid UTF-8 or binary: show what we can, but never save it back mangled. Bytes
            # that are not UTF-8 show as \xNN: a replacement character can be drawn two cells
            # wide by the terminal while counted as one, which broke the pane's borders.
            text = raw.replace(b"\x00", b"\\0").decode("utf-8", errors="backslashreplace")
            self.read_only_reason = "not a UTF-8 text file"
        else:
            text = tf.text
            hostile = next((p for p in tf.problems if p.code not in STRUCTURE_CODES), None)
            if hostile is not None:
                # A value no writer can put back exactly (a number beyond every reader's
                # range): a form edit would rewrite it, so the file is shown, not edited here.
                self.read_only_reason = (
                    f"line {hostile.span.line} holds a value that cannot be written back exactly"
                )
            elif (cr := toolfile.lone_carriage_return(text)) is not None:
                # The editor would end a line at a lone \r (and save it as a line break); the
                # runtime and lint do not: editing here would change what the runtime reads.
                self.lone_cr_line = cr
                self.read_only_reason = (
                    f"line {cr} holds a lone carriage return (\\r): the Patch runtime does not end "
                    "a line there, this editor would; its lint problem's quick fix ends them"
                )
        self.bom = tf.bom
        self.text = self.saved_text = text
        self.disk_sha = sha256_bytes(raw)
        self.last_good = None  # another file's manifest is no "last good" one of this file
        self.diagnostics = []
        self.linted_text = None
        self.lint_generation += 1
        self.accept_parse(tf)

    def reload_bytes(self, raw: bytes) -> bool:
        """Take the disk's bytes as the buffer's text (the last good manifest stays: it is the
        same file). False when they are not text (the caller opens the file afresh)."""
        tf = toolfile.parse_bytes(raw, path=str(self.path) if self.path else None)
        if not tf.text and raw:
            return False
        self.bom = tf.bom
        self.text = self.saved_text = tf.text
        self.disk_sha = sha256_bytes(raw)
        self.lint_generation += 1
        self.accept_parse(tf)
        return True

    def end_lone_carriage_returns(self) -> int:
        """For a buffer read-only only for its lone \\r's: turn each into the file's line ending
        (PT027's fix, for the whole file), after which it is an ordinary unsaved buffer. Returns
        how many there were; 0, and nothing changes, for any other buffer."""
        if self.lone_cr_line is None:
            return 0
        newline = self.tf.newline if self.tf is not None else "\n"
        text, count = toolfile.end_lone_carriage_returns(self.text, newline)
        self.text = text
        self.lone_cr_line = None
        self.read_only_reason = None
        return count

    def close(self) -> None:
        self.path = None
        self.text = self.saved_text = ""
        self.disk_sha = None
        self.tf = None
        self.diagnostics = []
        self.linted_text = None
        self._frontmatter = None
        self.lint_generation += 1

    @property
    def dirty(self) -> bool:
        # Exact, not just "something changed": an undo back to the saved text is clean again.
        return self.text != self.saved_text

    @property
    def manifest_data(self) -> dict[str, Any] | None:
        """The manifest of the last parse, when it is a mapping."""
        data = self.tf.data if self.tf is not None else None
        return data if isinstance(data, dict) else None

    # -- parsing and linting --------------------------------------------------------------------

    def accept_parse(self, tf: toolfile.ToolFile) -> None:
        """Remember a parse of (some version of) the text: the form edits build on it."""
        self.tf = tf
        fm = _frontmatter_of(tf)
        if fm is not None:
            self._frontmatter = fm
            self.last_good = fm.data
        elif tf.text == self.text:
            self._frontmatter = None  # the current text's frontmatter is broken

    def begin_lint(self) -> tuple[int, str]:
        """A new lint of the current text: its generation, and the text to lint."""
        self.lint_generation += 1
        return self.lint_generation, self.text

    def invalidate_lint(self) -> None:
        """The text changed: a lint still running is for older text and must not be applied."""
        self.lint_generation += 1

    def accept_lint(
        self, generation: int, text: str, tf: toolfile.ToolFile, diagnostics: list[Diagnostic]
    ) -> bool:
        """Take a lint result if it is for the current text and the newest lint; False drops it
        (the lint for the newer text is coming)."""
        if generation != self.lint_generation or text != self.text:
            return False
        self.accept_parse(tf)
        self.diagnostics = diagnostics
        self.linted_text = text
        return True

    def lint_now(self) -> list[Diagnostic]:
        """Parse and lint the current text here and now (tests, and files that are read-only)."""
        generation, text = self.begin_lint()
        tf = toolfile.parse(text, path=str(self.path) if self.path else None)
        self.accept_lint(generation, text, tf, lint_toolfile(tf))
        return self.diagnostics

    # -- form edits ---------------------------------------------------------------------------

    def form_edit(self, path: tuple[str | int, ...], value: Any) -> FormEdit:
        """Set one manifest field (`toolfile.DELETE` removes it) as a frontmatter patch on the
        last parse; the buffer's text and frontmatter follow the patch at once."""
        if self.read_only_reason:
            return FormEdit(refused=f"read-only: {self.read_only_reason}")
        fm = self._frontmatter
        if fm is None or not self.text.startswith(fm.head):
            if self.tf is not None and self.tf.text == self.text:
                # The current text's own parse: its frontmatter cannot be edited.
                return FormEdit(refused="Fix the frontmatter in the source first")
            return FormEdit(needs_parse=True)
        data = toolfile.set_field(fm.data, path, value)
        if data == fm.data:
            return FormEdit()
        return FormEdit(edit=self._patch_frontmatter(fm, data))

    def _patch_frontmatter(self, fm: _Frontmatter, data: dict[str, Any]) -> TextEdit | None:
        """Rewrite the frontmatter for `data`, touching only the lines that change."""
        new_lines = toolfile.render_frontmatter(data, "\n").splitlines()
        first = fm.open_index + 1
        old_lines = [line.rstrip("\r\n") for line in fm.head_lines[first : fm.close_index]]
        # Common head and tail lines stay as they are: the cursor and the undo step stay small.
        head = 0
        while head < min(len(old_lines), len(new_lines)) and old_lines[head] == new_lines[head]:
            head += 1
        tail = 0
        while (
            tail < min(len(old_lines), len(new_lines)) - head
            and old_lines[-1 - tail] == new_lines[-1 - tail]
        ):
            tail += 1
        old_mid = old_lines[head : len(old_lines) - tail]
        new_mid = new_lines[head : len(new_lines) - tail]
        if not old_mid and not new_mid:
            return None
        start_row, end_row = first + head, first + len(old_lines) - tail
        edit = TextEdit((start_row, 0), (end_row, 0), "".join(line + "\n" for line in new_mid))
        # Follow the patch: the text and the frontmatter are known exactly without a parse. The
        # new lines take the file's own line ending (the text area writes its own for "\n").
        head_lines = (
            *fm.head_lines[:start_row],
            *(line + fm.newline for line in new_mid),
            *fm.head_lines[end_row:],
        )
        new_head = "".join(head_lines)
        self.text = new_head + self.text[len(fm.head) :]
        close = fm.close_index + len(new_mid) - len(old_mid)
        self._frontmatter = _Frontmatter(
            data, head_lines, fm.open_index, close, fm.newline, new_head
        )
        return edit

    # -- fixes --------------------------------------------------------------------------------

    def current_fix(self, diagnostic: Diagnostic) -> Diagnostic | None:
        """The same problem's diagnostic in the current text (the text may have moved on since
        the lint that found it), or None when it is gone."""
        if diagnostic.fix is None or self.read_only_reason:
            return None
        if self.text == self.linted_text:
            return diagnostic
        fresh = lint_toolfile(toolfile.parse(self.text, path=str(self.path) if self.path else None))
        same = [
            d
            for d in fresh
            if d.code == diagnostic.code and d.fix is not None and d.field == diagnostic.field
        ]
        return same[0] if same else None

    def text_edits(self, edits: tuple[Edit, ...] | list[Edit]) -> list[TextEdit]:
        """A fix's edits (1-based line and column) as text-area edits, last first, so each one
        applies to text the earlier ones have not moved."""
        lines = toolfile._split_lines(self.text)

        def location(line: int, column: int) -> Location:
            row = line - 1
            if row >= len(lines):
                # The end of the text, as the text area counts it.
                if not lines:
                    return (0, 0)
                last = lines[-1]
                if last.endswith(("\n", "\r")):
                    return (len(lines), 0)
                return (len(lines) - 1, len(last))
            width = len(lines[row].rstrip("\r\n")) if row >= 0 else 0
            return (max(row, 0), min(max(column - 1, 0), width))

        ordered = sorted(edits, key=lambda e: (e.line, e.column), reverse=True)
        return [
            TextEdit(location(e.line, e.column), location(e.end_line, e.end_column), e.new_text)
            for e in ordered
        ]

    def apply_text_edits(self, edits: list[TextEdit]) -> None:
        """Apply edits to the buffer's own text (the screen applies the same to its text area)."""
        self.text = _splice(self.text, edits)

    def apply_fix(self, diagnostic: Diagnostic) -> list[TextEdit] | None:
        """A diagnostic's quick fix applied to the text; the edits made, or None when there is
        nothing to fix (read-only, no fix, or the problem is gone)."""
        found = self.current_fix(diagnostic)
        if found is None or found.fix is None:
            return None
        edits = self.text_edits(found.fix.edits)
        self.apply_text_edits(edits)
        return edits

    # -- saving -------------------------------------------------------------------------------

    def to_bytes(self, text: str | None = None) -> bytes:
        """The bytes to write for `text` (the buffer's by default): the BOM is kept."""
        return ((toolfile.BOM if self.bom else "") + (self.text if text is None else text)).encode(
            "utf-8"
        )

    def mark_saved(self, text: str, sha: str | None) -> None:
        self.saved_text = text
        self.disk_sha = sha

    def kept_version_name(self, folder: Path) -> Path:
        """Where a restore keeps the current text first (in the history folder)."""
        label = "current"
        data = self.manifest_data
        if data is not None and isinstance(data.get("version"), str):
            label = data["version"]
        return folder / f"{label}+kept-{time.strftime('%Y%m%dT%H%M%S')}.py"
