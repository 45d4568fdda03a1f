"""THE helper for untrusted text in the UI (docs/architecture.md, Untrusted text): args, reasons, descriptions, tool
output, LLM text. Every widget that shows such text builds it here.

    safe("text")                      -> Content   never markup; hidden characters as ⟦U+XXXX⟧
    safe("text", report=r)            -> Content   and counts what it revealed into `r`
    safe_line("a\\nb")                 -> Content   one line: newlines and tabs become tokens too
    SafeReport().banner()             -> Content | None   "⚠ 3 hidden characters (...) ..."
    json_view(value, ...)             -> JsonView  pretty canonical JSON, highlighted, safe,
                                                   long strings collapsed behind an expand

Why a Content built here and not `Content(visible(text))`: the code-point tokens must look unlike
the text around them (a person must not read `⟦U+202E⟧` typed by an attacker as a real reveal),
so a token is a styled span, and the report counts only real reveals. A literal `⟦` typed in the
text stays plain. What is revealed is untrusted/text_safety's one display rule (`find_hidden`: controls, bidi,
every default-ignorable, format, private-use and unassigned code point, lone surrogates, the
Braille blank, lone combining marks), so the TUI, the CLI, the logs and the exports agree on every
character. Look-alikes (`look_alikes`: words mixing scripts, address components wholly in another
script) are underlined, and the report's banner says each in plain words.

Content never interprets markup (`[link=...]`, `[@click=...]` stay text) and carries no link
unless one is added in code; tokens replace every control character, so no escape sequence can
reach the terminal.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from rich.cells import cell_len, get_character_cell_size
from rich.text import Text
from textual.content import Content, Span
from textual.expand_tabs import expand_tabs_inline
from textual.widgets import Input

from patch_tui.untrusted.text_safety import KIND_WORDS, find_hidden, hidden_kind, look_alikes

TOKEN_STYLE = "bold $text-warning on $warning-muted"
MIXED_STYLE = "underline $text-warning"
# JSON highlighting: keys, strings, numbers, literals and punctuation.
KEY_STYLE = "bold $text-primary"
STRING_STYLE = "$text-success"
NUMBER_STYLE = "$text-accent"
LITERAL_STYLE = "italic $text-accent"
PUNCT_STYLE = "$text-muted"
COLLAPSED_STYLE = "reverse $text-warning"

# How long a string value may be before the JSON view collapses it behind an explicit expand.
COLLAPSE_CHARS = 240
COLLAPSE_LINES = 6


def kind_of(ch: str) -> str | None:
    """The family of a character shown as a token (one character alone: a combining mark is
    only hidden by what precedes it, see `find_hidden`), or None for one shown as itself."""
    return hidden_kind(ch)


def token(ch: str) -> str:
    return f"⟦U+{ord(ch):04X}⟧"


@dataclass
class SafeReport:
    """What was revealed: hidden characters by family, and look-alikes (each in plain words)."""

    hidden: Counter[str] = field(default_factory=Counter)
    mixed: int = 0
    mixed_words: list[str] = field(default_factory=list)
    look_alikes: list[str] = field(default_factory=list)

    @property
    def hidden_total(self) -> int:
        return sum(self.hidden.values())

    def __bool__(self) -> bool:
        return bool(self.hidden_total or self.mixed)

    def add(self, other: SafeReport) -> None:
        self.hidden.update(other.hidden)
        self.mixed += other.mixed
        self.mixed_words.extend(other.mixed_words)
        self.look_alikes.extend(other.look_alikes)

    def summary(self) -> str:
        """One paragraph for a banner (plain text; the caller styles it)."""
        parts: list[str] = []
        if self.hidden_total:
            kinds = ", ".join(
                f"{n} {KIND_WORDS.get(k, k.replace('_', ' '))}{'s' if n != 1 else ''}"
                for k, n in self.hidden.most_common()
            )
            noun = "character" if self.hidden_total == 1 else "characters"
            parts.append(f"{self.hidden_total} hidden or control {noun} ({kinds}) shown as ⟦U+…⟧")
        if self.mixed:
            said = list(dict.fromkeys(self.look_alikes))
            noun = "look-alike" if self.mixed == 1 else "look-alikes"
            parts.append(
                f"{self.mixed} {noun} (underlined): "
                + "; ".join(said)
                + ": check it letter by letter"
            )
        return "; ".join(parts)

    def banner(self) -> Content | None:
        if not self:
            return None
        return Content.assemble(("⚠ ", "bold $text-warning"), (self.summary(), "$text-warning"))


def _needs_scan(text: str) -> bool:
    # Plain printable ASCII (the common case) needs no per-character pass.
    return not (text.isascii() and text.isprintable())


def safe(
    text: str,
    style: str = "",
    *,
    report: SafeReport | None = None,
    single_line: bool = False,
) -> Content:
    """Untrusted `text` as Content: plain (no markup), every hidden or control character a
    styled `⟦U+XXXX⟧` token, mixed-script words underlined. `single_line`: newline and tab are
    tokens too (a list row must stay one row). Counts go into `report` when given."""
    text = str(text)
    if not _needs_scan(text):
        return Content.styled(text, style) if style else Content(text, strip_control_codes=False)
    hidden_at = {h.index: h.kind for h in find_hidden(text)}
    out: list[str] = []
    spans: list[Span] = []
    pos = 0  # offset in the output
    # Map input offsets to output offsets for the mixed-script spans.
    offsets: list[int] = []
    for index, ch in enumerate(text):
        offsets.append(pos)
        kind: str | None = hidden_at.get(index)
        if kind is None and single_line and ch in "\n\t":
            kind = "control"
        if kind is None:
            out.append(ch)
            pos += 1
            continue
        tok = token(ch)
        out.append(tok)
        spans.append(Span(pos, pos + len(tok), TOKEN_STYLE))
        pos += len(tok)
        if report is not None and ch not in "\n\t":
            report.hidden[kind] += 1
    offsets.append(pos)
    for alike in look_alikes(text):
        spans.append(Span(offsets[alike.start], offsets[alike.end], MIXED_STYLE))
        if report is not None:
            report.mixed += 1
            report.mixed_words.append(alike.text)
            report.look_alikes.append(alike.sentence())
    if style:
        spans.insert(0, Span(0, pos, style))
    # strip_control_codes=False: nothing is left to strip, and stripping would shift the spans.
    return Content("".join(out), spans=spans, strip_control_codes=False)


def safe_line(text: str, style: str = "", *, report: SafeReport | None = None) -> Content:
    return safe(text, style, report=report, single_line=True)


# -- editable text: one visible character for each hidden one ---------------------------------
#
# A field or an editor keeps the text as it is (nothing a person typed or a file holds is lost)
# and must keep its cursor offsets, so it cannot show a ten-character token. It shows one
# visible character in place of each hidden one, at the same index: a C0 control as its control
# picture (ESC as ␛), DEL as ␡, every other hidden or format character as ⍰. Styled like a token.

REPLACEMENT = "\u2370"  # ⍰


def one_for_one(text: str, *, keep: str = "\n\t") -> str:
    """`text` with each hidden or control character (but those in `keep`) replaced by one
    visible character, so every index still points at the same character."""
    if not _needs_scan(text):
        return text
    hidden = {h.index for h in find_hidden(text)}
    out: list[str] = []
    for index, ch in enumerate(text):
        shown_as_itself = index not in hidden and not (ch in "\n\t" and ch not in keep)
        if ch in keep or shown_as_itself:
            out.append(ch)
            continue
        cp = ord(ch)
        if cp < 0x20:
            out.append(chr(0x2400 + cp))
        elif cp == 0x7F:
            out.append("\u2421")
        else:
            out.append(REPLACEMENT)
    return "".join(out)


def safe_text(text: str, *, keep: str = "\n\t") -> Text:
    """A rich Text for a widget that indexes its text (an Input, a TextArea line): the
    characters of `one_for_one`, each replaced one styled as a token would be."""
    shown = one_for_one(text, keep=keep)
    rich = Text(shown, end="", no_wrap=True)
    if shown is not text:
        for i, (a, b) in enumerate(zip(text, shown, strict=True)):
            if a != b:
                rich.stylize(RICH_TOKEN_STYLE, i, i + 1)
    return rich


# Rich styles cannot use theme variables: a fixed reverse, seen on every theme.
RICH_TOKEN_STYLE = "bold reverse"


class SafeInput(Input):
    """An Input that never sends the control characters of its value to the terminal: each
    hidden character shows as one visible character (see `one_for_one`), the value itself is
    untouched. Every Input that shows text from a file, args or a model is one of these."""

    @property
    def _value(self) -> Text:  # type: ignore[override]
        if self.password:
            return super()._value
        text = safe_text(self.value, keep="")
        if self.highlighter is not None:
            text = self.highlighter(text)
        return text

    def _position_to_cell(self, position: int) -> int:
        return cell_len(expand_tabs_inline(one_for_one(self.value[:position], keep=""), 4))

    def _cell_offset_to_index(self, offset: int) -> int:
        # The cell widths of what is shown, not of the raw value (a raw ESC is zero cells wide).
        shown = one_for_one(self.value, keep="")
        offset += self.scroll_offset.x
        cells = 0
        for index, ch in enumerate(shown):
            width = get_character_cell_size(ch)
            if cells <= offset < cells + width:
                return index
            cells += width
        return max(0, min(offset, len(shown)))


class SafeTitles:
    """Mixed into every App of patch-tui (before `App`): the header's title and subtitle (a tool
    file's name, say) through `safe_line`. Textual's own `format_title` sends their control
    characters to the terminal as they are."""

    def format_title(self, title: str, sub_title: str) -> Content:
        if not sub_title:
            return safe_line(title)
        return Content.assemble(safe_line(title), (" — ", "dim"), safe_line(sub_title, "dim"))


def scan(text: str) -> SafeReport:
    """Only the counts (for a banner computed before rendering)."""
    report = SafeReport()
    safe(text, report=report)
    return report


# -- JSON --------------------------------------------------------------------------------------


@dataclass
class JsonView:
    """Pretty canonical JSON as Content, with the paths of collapsed strings."""

    content: Content
    report: SafeReport
    collapsed: list[str]  # JSON paths of values shown shortened, e.g. "$.text"
    expanded_all: bool  # True when nothing is hidden behind a collapse


def _path_str(path: tuple[str | int, ...]) -> str:
    out = "$"
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def _escape_json_string(text: str) -> str:
    """The JSON escapes a reader needs to see the structure (quote, backslash, newline, tab);
    every other hidden character is left for `safe` to show as a token."""
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")


def json_view(
    value: Any,
    *,
    expanded: set[str] | frozenset[str] = frozenset(),
    collapse_chars: int = COLLAPSE_CHARS,
    collapse_lines: int = COLLAPSE_LINES,
    indent: int = 2,
    expand_hint: str = "press e to expand",
) -> JsonView:
    """`value` as pretty JSON with sorted keys (the canonical form the approval binds), each
    string passed through `safe`. A string longer than `collapse_chars` (or with more than
    `collapse_lines` lines) whose path is not in `expanded` shows its start and a marker saying
    how much is hidden; never a silent cut."""
    report = SafeReport()
    collapsed: list[str] = []
    parts: list[Content] = []

    def emit(text: str, style: str = "") -> None:
        parts.append(Content.styled(text, style) if style else Content(text))

    def string(s: str, path: tuple[str | int, ...], style: str) -> None:
        where = _path_str(path)
        long = len(s) > collapse_chars or s.count("\n") >= collapse_lines
        shown = s
        if long and where not in expanded:
            collapsed.append(where)
            cut = s[:collapse_chars]
            lines = cut.split("\n")
            if len(lines) > collapse_lines:
                cut = "\n".join(lines[:collapse_lines])
            shown = cut
        emit('"', style)
        # Count hidden characters over the whole value, even the collapsed part, so the banner
        # warns before the person expands it.
        if shown is not s:
            safe(s, report=report)
            parts.append(safe(_escape_json_string(shown), style))
        else:
            parts.append(safe(_escape_json_string(s), style, report=report))
        emit('"', style)
        if shown is not s:
            rest = len(s) - len(shown)
            emit(f" ⟪{rest:,} more characters hidden: {expand_hint} {where}⟫", COLLAPSED_STYLE)

    def walk(v: Any, path: tuple[str | int, ...], depth: int) -> None:
        pad = " " * (indent * (depth + 1))
        end_pad = " " * (indent * depth)
        if isinstance(v, dict):
            if not v:
                emit("{}", PUNCT_STYLE)
                return
            emit("{", PUNCT_STYLE)
            items = sorted(v.items(), key=lambda kv: str(kv[0]))
            for i, (k, item) in enumerate(items):
                emit("\n" + pad)
                emit('"', KEY_STYLE)
                parts.append(safe(_escape_json_string(str(k)), KEY_STYLE, report=report))
                emit('"', KEY_STYLE)
                emit(": ", PUNCT_STYLE)
                walk(item, (*path, str(k)), depth + 1)
                if i < len(items) - 1:
                    emit(",", PUNCT_STYLE)
            emit("\n" + end_pad)
            emit("}", PUNCT_STYLE)
        elif isinstance(v, list):
            if not v:
                emit("[]", PUNCT_STYLE)
                return
            emit("[", PUNCT_STYLE)
            for i, item in enumerate(v):
                emit("\n" + pad)
                walk(item, (*path, i), depth + 1)
                if i < len(v) - 1:
                    emit(",", PUNCT_STYLE)
            emit("\n" + end_pad)
            emit("]", PUNCT_STYLE)
        elif isinstance(v, str):
            string(v, path, STRING_STYLE)
        elif v is None or isinstance(v, bool):
            emit(json.dumps(v), LITERAL_STYLE)
        elif isinstance(v, int | float):
            emit(json.dumps(v), NUMBER_STYLE)
        else:  # not JSON (cannot come from the store): shown, never trusted
            parts.append(safe(repr(v), report=report))

    walk(value, (), 0)
    return JsonView(Content("").join(parts), report, collapsed, not collapsed)
