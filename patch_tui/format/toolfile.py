"""Split, parse and serialize a Patch tool file without ever damaging it.

A tool file is: a preamble (shebang, encoding lines), an opening `# ---` line, commented YAML
lines, a closing `# ---` line, and the Python body. The markers are the first two lines whose
stripped text is `# ---`; inside, each line loses a leading `# ` or `#`.

Everything here works on `str` decoded from UTF-8 with newlines untouched, so the body and the line
endings survive byte for byte: `ToolFile.text` is always exactly what was read.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from patch_tui.format import yamlio
from patch_tui.format.toolfile_write import (  # noqa: F401 - the writing half, re-exported here
    DELETE,
    canonical_order,
    render_frontmatter,
    serialize,
    set_field,
    with_frontmatter,
    yaml_comment_lines,
)
from patch_tui.format.yamlio import Node, Path, Pos
from patch_tui.untrusted import files

if TYPE_CHECKING:  # pydantic is imported when a manifest is first validated, not by lint
    from pydantic import ValidationError

    from patch_tui.format.manifest import Manifest
    from patch_tui.format.plain_manifest import PlainManifest, RunManifest

MARKER = "# ---"
BOM = "\ufeff"
# Bigger frontmatter than this is refused before YAML sees it: no real manifest comes close.
MAX_FRONTMATTER_BYTES = 1 << 20
# Bigger files than this are refused before they are read: a tool file is a few kilobytes.
MAX_TOOL_FILE_BYTES = files.MAX_FILE_BYTES


class Span(NamedTuple):
    """A 1-based, inclusive-start, exclusive-end range in the file (columns count characters).
    (Named tuples here, not frozen dataclasses: a fifth of the import time, which the desk's
    first frame pays.)"""

    line: int
    column: int
    end_line: int
    end_column: int

    @classmethod
    def line_span(cls, line: int, text: str) -> Span:
        return cls(line, 1, line, max(1, len(text)) + 1)


class ProblemCode(StrEnum):
    """The public lint codes of the problems the parser finds itself. Lint's rules of these codes
    (lint/rules/) report them; codes are a public interface, never renumbered."""

    MARKERS = "PT001"  # no frontmatter markers; also a binary or non-UTF-8 file
    YAML = "PT002"  # invalid YAML, tags, duplicate keys
    UNCOMMENTED = "PT003"  # a line between the markers that is not a comment
    WRONG_TYPE = "PT022"  # a number no reader holds exactly


# The problems that mean the file's structure or YAML could not be read.
STRUCTURE_CODES: frozenset[str] = frozenset(
    {ProblemCode.MARKERS, ProblemCode.YAML, ProblemCode.UNCOMMENTED}
)


class ParseProblem(NamedTuple):
    """Why the file's structure or YAML could not be read, or a value no reader holds."""

    code: ProblemCode
    message: str
    span: Span


@dataclass
class ToolFile:
    """A parsed tool file. `text` is the file exactly as read; nothing here rewrites it."""

    text: str
    path: str | None = None
    bom: bool = False
    newline: str = "\n"
    lines: list[str] = field(default_factory=list)  # text split with line endings kept
    open_index: int | None = None  # 0-based line index of the opening marker
    close_index: int | None = None
    prefix_lengths: dict[int, int] = field(default_factory=dict)  # line index -> stripped chars
    yaml_text: str = ""
    data: Any = None
    nodes: dict[Path, Node] = field(default_factory=dict)
    problems: list[ParseProblem] = field(default_factory=list)
    anchors: list[Pos] = field(default_factory=list)  # YAML anchors and aliases (lint warns)
    tags: list[Pos] = field(default_factory=list)  # explicit YAML tags, `!!str` (lint warns)
    # Validated on first use: lint reads the raw data and never needs the model.
    _validation: tuple[Manifest | None, ValidationError | None] | None = field(
        default=None, repr=False, compare=False
    )
    # The plain reading a run takes (run_manifest); False: the data needs the model.
    _plain: PlainManifest | Literal[False] | None = field(default=None, repr=False, compare=False)

    @property
    def manifest(self) -> Manifest | None:
        """The validated manifest, or None (see `manifest_error` and `problems`)."""
        return self._validate()[0]

    @property
    def manifest_error(self) -> ValidationError | None:
        return self._validate()[1]

    @property
    def run_manifest(self) -> RunManifest | None:
        """The manifest as a run reads it: the model when it was already validated, else the
        plain reading when the data is one the model certainly reads the same way (pydantic
        not imported: format/plain_manifest.py), else the model's answer (None: invalid)."""
        if self._validation is None and self._plain is None and isinstance(self.data, dict):
            from patch_tui.format.plain_manifest import plain_manifest

            self._plain = plain_manifest(self.data) or False
        return self._plain or self.manifest

    def _validate(self) -> tuple[Manifest | None, ValidationError | None]:
        if self._validation is None:
            from pydantic import ValidationError

            from patch_tui.format.manifest import Manifest

            if isinstance(self.data, dict):
                try:
                    self._validation = (Manifest.model_validate(self.data), None)
                except ValidationError as exc:
                    self._validation = (None, exc)
            else:
                self._validation = (None, None)
        return self._validation

    # -- structure -------------------------------------------------------------------------

    @property
    def has_frontmatter(self) -> bool:
        return self.open_index is not None and self.close_index is not None

    @property
    def preamble(self) -> str:
        end = self.open_index if self.open_index is not None else 0
        return "".join(self.lines[:end])

    @property
    def body(self) -> str:
        """Everything after the closing marker line, byte for byte (the whole text if none)."""
        if self.close_index is None:
            return "" if self.open_index is not None else self.text
        return "".join(self.lines[self.close_index + 1 :])

    @property
    def body_start_line(self) -> int:
        """1-based file line where the body starts."""
        return (self.close_index + 2) if self.close_index is not None else 1

    @property
    def frontmatter_lines(self) -> range:
        """0-based indexes of the lines between the markers."""
        if self.open_index is None:
            return range(0)
        end = self.close_index if self.close_index is not None else len(self.lines)
        return range(self.open_index + 1, end)

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.to_bytes()).hexdigest()

    def to_bytes(self) -> bytes:
        return ((BOM if self.bom else "") + self.text).encode("utf-8")

    # -- spans -----------------------------------------------------------------------------

    def yaml_pos_to_file(self, pos: Pos) -> tuple[int, int]:
        """A 0-based YAML position as a 1-based file (line, column)."""
        assert self.open_index is not None
        index = self.open_index + 1 + pos.line
        return index + 1, pos.column + self.prefix_lengths.get(index, 0) + 1

    def span_of(self, path: Path, *, key: bool = False) -> Span | None:
        """Where a manifest value (or its key) sits in the file, if it is there."""
        node = self.nodes.get(tuple(path))
        if node is None or self.open_index is None:
            return None
        if key and node.key_start is not None and node.key_end is not None:
            start, end = node.key_start, node.key_end
        else:
            start, end = node.start, node.end
        line, col = self.yaml_pos_to_file(start)
        end_line, end_col = self.yaml_pos_to_file(end)
        if (end_line, end_col) <= (line, col):
            end_line, end_col = line, col + 1
        # A block value ends at the start of the next line; point at the end of the last one.
        if end_col == 1 + self.prefix_lengths.get(end_line - 1, 0) and end_line > line:
            end_line -= 1
            end_col = len(self.lines[end_line - 1].rstrip("\r\n")) + 1
        return Span(line, col, end_line, end_col)

    def nearest_span(self, path: Path) -> Span:
        """The span of a path, or of its closest ancestor that exists, or of the markers."""
        p = tuple(path)
        while p:
            span = self.span_of(p, key=True)
            if span is not None:
                return span
            p = p[:-1]
        return self.frontmatter_span()

    def frontmatter_span(self) -> Span:
        if self.open_index is None:
            return Span(1, 1, 1, 2)
        line = self.open_index + 1
        return Span(line, 1, line, len(MARKER) + 1)

    def line_text(self, line: int) -> str:
        """A 1-based line without its ending."""
        if 1 <= line <= len(self.lines):
            return self.lines[line - 1].rstrip("\r\n")
        return ""


def _split_lines(text: str) -> list[str]:
    """Lines with their endings kept, split as the Patch runtime splits them (`/\r?\n/`): only
    \n and \r\n end a line. A lone \r stays inside its line (the runtime, and so lint, see one
    line there, where old-Mac editors see two); str.splitlines would also split on \x0b, \x1c,
    U+2028..., which the runtime does not either."""
    parts = text.split("\n")
    last = parts.pop()
    lines = [part + "\n" for part in parts]
    if last:
        lines.append(last)
    return lines


def _detect_newline(lines: list[str]) -> str:
    for line in lines:
        if line.endswith("\r\n"):
            return "\r\n"
        if line.endswith("\n"):
            return "\n"
    return "\n"


def lone_carriage_return(text: str) -> int | None:
    """The 1-based line (as the runtime counts lines) of the first \r not followed by \n, or
    None. The runtime does not end a line there; a text editor (the desk's too) would."""
    if "\r" not in text:
        return None
    found = _LONE_CR.search(text)
    return None if found is None else text.count("\n", 0, found.start()) + 1


_LONE_CR = re.compile(r"\r(?!\n)")


def end_lone_carriage_returns(text: str, newline: str) -> tuple[str, int]:
    """`text` with each lone \r turned into `newline`, and how many there were."""
    return _LONE_CR.subn(newline, text) if "\r" in text else (text, 0)


def decode(raw: bytes) -> tuple[str, bool]:
    """UTF-8 text and whether it had a BOM. Raises UnicodeDecodeError for invalid UTF-8."""
    text = raw.decode("utf-8")
    if text.startswith(BOM):
        return text[1:], True
    return text, False


# PT001 for a text file with no marker at all (lint offers a starter manifest for it).
NO_FRONTMATTER = "no `# ---` frontmatter: start the file with `# ---`, the manifest as `# ` comments, and `# ---`"


def parse_bytes(raw: bytes, path: str | None = None) -> ToolFile:
    """Parse raw file contents. Invalid UTF-8 and NUL bytes become PT001-family problems."""
    if b"\x00" in raw:
        tf = ToolFile(text="", path=path)
        tf.problems.append(
            ParseProblem(
                ProblemCode.MARKERS,
                "the file holds NUL bytes: it is binary, not a tool file",
                Span(1, 1, 1, 2),
            )
        )
        return tf
    try:
        text, bom = decode(raw)
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        tf = ToolFile(text="", path=path)
        tf.problems.append(
            ParseProblem(
                ProblemCode.MARKERS,
                f"the file is not valid UTF-8 (byte 0x{raw[exc.start]:02x}): save it as UTF-8",
                Span(line, column, line, column + 1),
            )
        )
        return tf
    return parse(text, path=path, bom=bom)


def read_bytes(path: str | os.PathLike[str]) -> bytes:
    """A tool file's bytes; FIFOs, devices, folders and huge files are refused by type and size
    before anything is read (OSError, see untrusted/files.py)."""
    return files.read_bytes(path, limit=MAX_TOOL_FILE_BYTES)


def read(path: str) -> ToolFile:
    """Read and parse a file (OSError propagates: callers report unreadable paths)."""
    return parse_bytes(read_bytes(path), path=path)


def parse(text: str, path: str | None = None, *, bom: bool = False) -> ToolFile:
    """Parse tool-file text. Never raises for bad content: problems are recorded instead."""
    if text.startswith(BOM):
        text, bom = text[1:], True
    lines = _split_lines(text)
    tf = ToolFile(text=text, path=path, bom=bom, lines=lines, newline=_detect_newline(lines))
    markers: list[int] = []
    for i, row in enumerate(lines):
        # The substring test runs in C and skips nearly every body line without a strip().
        if MARKER in row and row.strip() == MARKER:
            markers.append(i)
            if len(markers) == 2:
                break
    if not markers:
        tf.problems.append(ParseProblem(ProblemCode.MARKERS, NO_FRONTMATTER, Span(1, 1, 1, 2)))
        return tf
    tf.open_index = markers[0]
    if len(markers) < 2:
        line = markers[0] + 1
        tf.problems.append(
            ParseProblem(
                ProblemCode.MARKERS,
                "the frontmatter is never closed: add a `# ---` line after the manifest",
                Span.line_span(line, lines[markers[0]].rstrip("\r\n")),
            )
        )
        return tf
    tf.close_index = markers[1]

    yaml_lines: list[str] = []
    size = 0
    for index in tf.frontmatter_lines:
        raw_line = lines[index].rstrip("\r\n")
        size += len(raw_line) + 1
        stripped = raw_line.lstrip(" \t")
        lead = len(raw_line) - len(stripped)
        if stripped.startswith("# "):
            tf.prefix_lengths[index] = lead + 2
            yaml_lines.append(stripped[2:])
        elif stripped.startswith("#"):
            tf.prefix_lengths[index] = lead + 1
            yaml_lines.append(stripped[1:])
        else:
            yaml_lines.append("")
            if stripped:
                tf.problems.append(
                    ParseProblem(
                        ProblemCode.UNCOMMENTED,
                        "a line inside the frontmatter is not a comment: start it with `# `",
                        Span.line_span(index + 1, raw_line),
                    )
                )
    if size > MAX_FRONTMATTER_BYTES:
        tf.problems.append(
            ParseProblem(
                ProblemCode.YAML,
                f"the frontmatter is {size // 1024} KiB; a manifest is a few lines: remove what is not the manifest",
                tf.frontmatter_span(),
            )
        )
        return tf
    tf.yaml_text = "\n".join(yaml_lines) + "\n"
    try:
        loaded = yamlio.load(tf.yaml_text)
    except yamlio.YamlError as exc:
        _explain_yaml_error(exc, yaml_lines)
        if exc.pos is not None and yaml_lines:
            if exc.pos.line >= len(yaml_lines):  # the error is at the end of the YAML
                last = len(yaml_lines) - 1
                exc.pos = Pos(last, len(yaml_lines[last]))
                exc.end = None
            line, col = tf.yaml_pos_to_file(exc.pos)
            if exc.end is not None:
                end_line, end_col = tf.yaml_pos_to_file(exc.end)
            else:
                end_line, end_col = line, col + 1
            span = Span(line, col, end_line, max(end_col, col + 1) if end_line == line else end_col)
        else:
            span = tf.frontmatter_span()
        tf.problems.append(
            ParseProblem(ProblemCode.YAML, f"invalid YAML in the frontmatter: {exc.message}", span)
        )
        return tf
    tf.data, tf.nodes, tf.anchors = loaded.data, loaded.nodes, loaded.anchors
    tf.tags = loaded.tags
    for start, end, raw in loaded.out_of_range:
        tf.problems.append(_out_of_range_problem(tf, start, end, raw))
    if tf.data is None:
        tf.data = {}
    if not isinstance(tf.data, dict):
        tf.problems.append(
            ParseProblem(
                ProblemCode.YAML,
                "the frontmatter must be a mapping of fields (`name: ...`), not a single value or list",
                tf.frontmatter_span(),
            )
        )
        tf.data = None
        return tf
    return tf


_QUOTED_VALUE = re.compile(r"""^\s*(?:-\s+|[^\s#'"][^:]*:\s+)(['"])""")


def _closes(text: str, quote: str) -> bool:
    if quote == "'":
        return text.replace("''", "").find("'") >= 0
    return re.search(r'(?<!\\)(?:\\\\)*"', text) is not None


def _unclosed_quote(line: str, after: list[str]) -> int | None:
    """The column of a value's opening quote that is never closed, else None. A quoted value
    may go on over more-indented lines; a line back at the key's indentation ends it."""
    found = _QUOTED_VALUE.match(line)
    if found is None:
        return None
    quote = found.group(1)
    if _closes(line[found.end() :], quote):
        return None
    indent = len(line) - len(line.lstrip(" "))
    for more in after:
        if more.strip() and len(more) - len(more.lstrip(" ")) <= indent:
            return found.end() - 1  # the next key came first
        if _closes(more, quote):
            return None
    return found.end() - 1


def _explain_yaml_error(exc: yamlio.YamlError, yaml_lines: list[str]) -> None:
    """PyYAML's words, with what a person can do about the two common slips (issue 25): a
    quote opened and never closed is reported where it opens (PyYAML finds out lines later), and
    a `: ` inside a value asks for quotes."""
    last = exc.pos.line if exc.pos is not None else len(yaml_lines) - 1
    for index, line in enumerate(yaml_lines[: last + 1]):
        column = _unclosed_quote(line, yaml_lines[index + 1 : last + 1])
        if column is not None:
            quote = line[column]
            kind = "single" if quote == "'" else "double"
            exc.message = (
                f"the {kind} quote opened here is never closed: end the value with {quote} "
                "(or remove the quote)"
            )
            exc.pos, exc.end = Pos(index, column), Pos(index, column + 1)
            return
    if "mapping values are not allowed" in exc.message:
        exc.message += (
            ': a value containing ": " must be quoted, e.g. description: "Count words: '
            'lines and characters."'
        )


def _out_of_range_problem(tf: ToolFile, start: Pos, end: Pos, raw: str) -> ParseProblem:
    line, col = tf.yaml_pos_to_file(start)
    end_line, end_col = tf.yaml_pos_to_file(end)
    if end_line != line:
        end_line, end_col = line, col + 1
    digits = sum(c.isdigit() for c in raw)
    decimal = not raw.lstrip("+-").lower().startswith(("0x", "0o", "0b"))
    shown = raw if len(raw) <= 24 else f"{raw[:12]}\u2026{raw[-6:]}"
    if not decimal:
        why = f"is bigger than {yamlio.MAX_INT_DIGITS} decimal digits: no reader holds it exactly"
    elif any(c in raw for c in ".eE"):
        why = "is beyond the largest number a reader can hold (about 1.8e308): readers make it infinity"
    else:
        why = (
            f"has {digits} digits: no reader holds it exactly (Python stops at "
            f"{yamlio.MAX_INT_DIGITS} digits, JSON readers round it)"
        )
    return ParseProblem(
        ProblemCode.WRONG_TYPE,
        f"the number {shown} {why}: quote it as a string or write a smaller number",
        Span(line, col, end_line, max(end_col, col + 1)),
    )


# --- fmt: a rewrite that must read back as the same data -----------------------------------


class NotExact(ValueError):
    """Rewriting the frontmatter would change a value (the message says which and how)."""


def format_text(tf: ToolFile) -> str | None:
    """The file with canonical frontmatter, or None when its frontmatter cannot be read (or
    holds a value no reader reads exactly: the problems say where).

    Raises NotExact when the rewritten frontmatter would not read back as the same data: fmt
    must never change what a manifest means, whatever the writer does with odd values."""
    if tf.data is None or tf.problems:
        return None
    # Numbers are written as the runtime's writer writes them (`1.50` as `1.5`), except where
    # the field must be a string: there a number is an error whose fix quotes the digits as
    # written, so `python_version: 3.10` must not turn into `3.1` first.
    new = with_frontmatter(tf, _raw_only_in_strings(yamlio.keep_number_text(tf.data, tf.nodes)))
    check_exact(tf, new)
    return new


# Fields whose value must be a string (by path, `[]` for any list index).
_STRING_FIELDS = frozenset(
    {
        ("name",), ("version",), ("description",), ("generated_by",), ("generated_at",),
        ("inputs", "[]", "name"), ("inputs", "[]", "type"), ("inputs", "[]", "description"),
        ("inputs", "[]", "items", "type"), ("outputs", "type"), ("outputs", "description"),
        ("runtime", "language"), ("runtime", "python_version"), ("runtime", "packages", "[]"),
        ("external_auth", "[]"),
    }
)  # fmt: skip


def _raw_only_in_strings(data: Any, path: tuple[str, ...] = ()) -> Any:
    if isinstance(data, dict):
        return {k: _raw_only_in_strings(v, (*path, k)) for k, v in data.items()}
    if isinstance(data, list):
        return [_raw_only_in_strings(v, (*path, "[]")) for v in data]
    if isinstance(data, yamlio.RawFloat | yamlio.RawInt) and path not in _STRING_FIELDS:
        return float(data) if isinstance(data, float) else int(data)
    return data


def check_exact(tf: ToolFile, new_text: str) -> None:
    """Raise NotExact unless `new_text`'s manifest reads back as exactly `tf`'s data (the same
    values of the same types: `1` and `1.0` and `true` differ)."""
    from patch_tui.format.toolfile import parse

    again = parse(new_text)
    if again.problems or again.data is None:
        first = again.problems[0].message if again.problems else "the frontmatter cannot be read"
        raise NotExact(f"the rewritten frontmatter would not read back ({first})")
    where = _first_difference(tf.data, again.data)
    if where is not None:
        label = ".".join(str(p) for p in where) or "the manifest"
        raise NotExact(f"`{label}` cannot be written back exactly")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _first_difference(a: Any, b: Any, path: Path = ()) -> Path | None:
    if _is_number(a) and _is_number(b):
        # The runtime has one number type: its writer spells 0.0 as 0, which reads back equal.
        # Compared as the runtime's doubles (JavaScript reads every number as one).
        try:
            same = a == b or float(a) == float(b) or (a != a and b != b)
        except OverflowError:
            same = False
        return None if same else path
    if type(a) is not type(b) and not (isinstance(a, str) and isinstance(b, str)):
        return path
    if isinstance(a, dict):
        if a.keys() != b.keys():  # the order may change (canonical order), the keys may not
            return path
        for key in a:
            found = _first_difference(a[key], b[key], (*path, key))
            if found is not None:
                return found
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return path
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            found = _first_difference(x, y, (*path, i))
            if found is not None:
                return found
        return None
    if isinstance(a, float) and a != a and b != b:  # NaN is not equal to itself
        return None
    return None if a == b else path
