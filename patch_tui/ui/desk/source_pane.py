"""The source pane: an editable TextArea with the body highlighted as Python and the
frontmatter highlighted as YAML (not as one grey comment).

Textual's TextArea highlights through tree-sitter, which is not installed (and cannot highlight
two languages in one file). We keep TextArea's rendering and feed its highlight map from
pygments instead: `_build_highlight_map` is TextArea's one hook for that, called after every edit.

Cost control (a 5,000-line tool must echo keystrokes in well under 50 ms):
- a keystroke re-lexes only the edited lines (line-local, well under a millisecond) and shifts
  the rest; a full pass runs in a thread worker once typing pauses (multi-line strings and the
  frontmatter's YAML need the whole text), and its result is dropped if the text moved on;
- loading a file, or an undo, re-lexes the whole file at once up to SYNC_LINES lines;
- above MAX_LINES, highlighting is off and the pane says so once.
Colours come from the app theme (a TextAreaTheme derived from it), never from literals.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

from rich.style import Style
from rich.text import Text
from textual import work
from textual._text_area_theme import TextAreaTheme
from textual.binding import Binding
from textual.color import Color
from textual.geometry import Region
from textual.message import Message
from textual.widgets import TextArea
from textual.widgets.text_area import Edit, EditResult, Selection

from patch_tui.ui.safe_text import safe_text

SYNC_LINES = 1500
MAX_LINES = 20_000
FULL_PASS_DELAY = 0.15
POST_PAINT_DELAY = 0.05  # a loaded file is coloured this long after its first paint
MARKER = "# ---"

Highlight = tuple[int, int | None, str]
HighlightMap = dict[int, list[Highlight]]

_lexers: dict[str, Any] = {}
_NUMBER_RE = re.compile(r"^[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$")


def _lexer(name: str) -> Any:
    # Lexers are built lazily and once: pygments' import is the slow part.
    if name not in _lexers:
        from pygments.lexers import PythonLexer, YamlLexer

        cls = PythonLexer if name == "python" else YamlLexer
        _lexers[name] = cls(stripnl=False, ensurenl=False, stripall=False)
    return _lexers[name]


def _python_name(ttype: Any, value: str) -> str | None:
    from pygments import token as T

    if ttype in T.Comment:
        return "comment"
    if ttype in T.String:
        return "string"
    if ttype in T.Number:
        return "number"
    if ttype in T.Keyword.Constant:
        return "constant"
    if ttype in T.Keyword:
        return "keyword"
    if ttype in T.Operator.Word:
        return "keyword"
    if ttype in T.Name.Function or ttype in T.Name.Function.Magic:
        return "function"
    if ttype in T.Name.Class:
        return "class"
    if ttype in T.Name.Decorator:
        return "decorator"
    if ttype in T.Name.Builtin:
        return "builtin"
    if ttype in T.Operator:
        return "operator"
    return None


def _yaml_name(ttype: Any, value: str) -> str | None:
    from pygments import token as T

    if ttype in T.Name.Tag:
        return "yaml.key"
    if ttype in T.Comment:
        return "comment"
    if ttype in T.Literal.Scalar.Plain:
        if value in ("true", "false", "null", "~"):
            return "constant"
        if _NUMBER_RE.match(value):
            return "number"
        return "yaml.value"
    if ttype in T.String or ttype in T.Literal:
        return "string"
    if ttype in T.Punctuation:
        return "operator"
    return None


def _byte_col(line: str, col: int) -> int:
    return col if line.isascii() else len(line[:col].encode("utf-8"))


def _lex_into(
    out: HighlightMap,
    lines: list[str],
    first: int,
    last: int,
    language: str,
    prefixes: dict[int, int] | None = None,
) -> None:
    """Highlight lines[first:last] as one block of `language`. With `prefixes` (frontmatter),
    each line's comment prefix is stripped before lexing and shown as a comment."""
    if first >= last:
        return
    namer = _python_name if language == "python" else _yaml_name
    if prefixes is not None:
        chunk = []
        for row in range(first, last):
            n = prefixes.get(row, 0)
            if n:
                out[row].append((0, _byte_col(lines[row], n), "comment.marker"))
            chunk.append(lines[row][n:])
    else:
        chunk = lines[first:last]
    text = "\n".join(chunk)
    row = first
    col = 0
    for _index, ttype, value in _lexer(language).get_tokens_unprocessed(text):
        name = namer(ttype, value)
        parts = value.split("\n")
        for i, part in enumerate(parts):
            if i:
                row += 1
                col = 0
            if name and part and row < last:
                offset = prefixes.get(row, 0) if prefixes is not None else 0
                line = lines[row]
                start = col + offset
                out[row].append((_byte_col(line, start), _byte_col(line, start + len(part)), name))
            col += len(part)


def frontmatter_bounds(lines: list[str]) -> tuple[int | None, int | None]:
    """0-based indexes of the two marker lines (the same rule as toolfile.parse)."""
    found: list[int] = []
    for i, line in enumerate(lines):
        if line.strip() == MARKER:
            found.append(i)
            if len(found) == 2:
                break
    return (found[0] if found else None), (found[1] if len(found) > 1 else None)


def _prefix_length(line: str) -> int:
    stripped = line.lstrip(" \t")
    lead = len(line) - len(stripped)
    if stripped.startswith("# "):
        return lead + 2
    if stripped.startswith("#"):
        return lead + 1
    return 0


def compute_highlights(lines: list[str]) -> HighlightMap:
    """The highlight map (TextArea's shape: row -> (start byte, end byte or None, name))."""
    out: HighlightMap = defaultdict(list)
    open_i, close_i = frontmatter_bounds(lines)
    if open_i is None:
        _lex_into(out, lines, 0, len(lines), "python")
        return out
    _lex_into(out, lines, 0, open_i, "python")
    end = close_i if close_i is not None else len(lines)
    for marker in (open_i, close_i):
        if marker is not None:
            out[marker].append((0, None, "comment.marker"))
    prefixes = {row: _prefix_length(lines[row]) for row in range(open_i + 1, end)}
    _lex_into(out, lines, open_i + 1, end, "yaml", prefixes)
    if close_i is not None:
        _lex_into(out, lines, close_i + 1, len(lines), "python")
    return out


def text_area_theme(variables: dict[str, str]) -> TextAreaTheme:
    """A TextAreaTheme whose syntax colours come from the app theme's CSS variables."""

    def colour(name: str, fallback: str = "foreground") -> Color:
        value = variables.get(name) or variables.get(fallback) or "ansi_default"
        try:
            return Color.parse(value)
        except Exception:  # a theme value Color cannot read: fall back, never crash
            return Color.parse(variables.get("foreground", "ansi_default"))

    def c(name: str, bold: bool | None = None) -> Style:
        return Style(color=colour(name).rich_color, bold=bold)

    muted = colour("foreground").blend(colour("background", "surface"), 0.45)
    return TextAreaTheme(
        name="patch",
        syntax_styles={
            "comment": Style(color=muted.rich_color, italic=True),
            "comment.marker": Style(color=muted.rich_color),
            "keyword": c("primary", bold=True),
            "constant": c("warning"),
            "number": c("warning"),
            "string": c("success"),
            "function": c("secondary"),
            "class": c("secondary", bold=True),
            "decorator": c("accent"),
            "builtin": c("accent"),
            "operator": c("accent"),
            "yaml.key": c("primary", bold=True),
            "yaml.value": c("foreground"),
        },
    )


class SourceArea(TextArea):
    """The editable source of the open tool."""

    BINDINGS = [
        Binding("ctrl+home", "document_start", "Start of file", id="source.start", show=False),
        Binding("ctrl+end", "document_end", "End of file", id="source.end", show=False),
        Binding(
            "ctrl+shift+home",
            "document_start(True)",
            "Select to start",
            id="source.select_start",
            show=False,
        ),
        Binding(
            "ctrl+shift+end",
            "document_end(True)",
            "Select to end",
            id="source.select_end",
            show=False,
        ),
    ]

    def get_line(self, line_index: int) -> Text:
        # A file's control characters (an ESC ] 52 in a comment) are never sent to the terminal:
        # each shows as one visible character at its own offset (safe_text.one_for_one), so
        # highlighting and the cursor keep their places; the document keeps the real text.
        return safe_text(self.document.get_line(line_index), keep="\t")

    class HighlightingOff(Message):
        """Posted once when a file is too big to highlight."""

        def __init__(self, lines: int) -> None:
            self.lines = lines
            super().__init__()

    def __init__(self, text: str = "", **kwargs: Any) -> None:
        self._pending_edit: tuple[int, int, int, str] | None = None
        self._highlight_generation = 0
        self._warned_size = False
        self._fm_bounds: tuple[int | None, int | None] = (None, None)
        self._edit_key: object = None
        self._loading = True  # the constructor's text counts as loaded
        self._last_edit_key: object = None
        self._last_edit_at = 0.0
        super().__init__(text, **kwargs)
        self._loading = False

    def on_mount(self) -> None:
        self._apply_app_theme()
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self._apply_app_theme())

    def _apply_app_theme(self) -> None:
        self.register_theme(text_area_theme(self.app.theme_variables))
        self.theme = "patch"

    # -- highlighting ---------------------------------------------------------------------

    def replace_as(
        self, key: object, insert: str, start: tuple[int, int], end: tuple[int, int]
    ) -> EditResult:
        """Replace text as part of an undo group: consecutive edits with the same key (the same
        form field being typed in) undo together; any other edit starts a new group."""
        self._edit_key = key
        try:
            return self.replace(insert, start, end)
        finally:
            self._edit_key = None

    def edit(self, edit: Edit) -> EditResult:
        import time

        key = self._edit_key
        now = time.monotonic()
        merge = key is not None and key == self._last_edit_key and now - self._last_edit_at < 2.0
        if key != self._last_edit_key:
            self.history.checkpoint()
        self._last_edit_key = key
        self._last_edit_at = now
        # Remember which rows the edit touched so the highlight pass can be line-local.
        top = edit.top[0]
        old_bottom = edit.bottom[0]
        before = self.document.line_count
        old_text = "".join(self.document.lines[top : old_bottom + 1])
        self._pending_edit = (top, old_bottom, before, old_text + edit.text)
        depth = len(self.history.undo_stack)
        try:
            result = super().edit(edit)
        finally:
            self._pending_edit = None
        if merge:
            # TextArea batches every multi-character edit alone; keystrokes in one form field
            # should undo together, so fold this batch into the previous one (same field).
            stack = self.history._undo_stack
            if len(stack) == depth + 1 and depth >= 1:
                stack[-2].extend(stack.pop())
        return result

    def _undo_batch(self, edits: Any) -> None:
        # Textual's undo resizes the view before it moves the cursor back: undoing an insert of
        # many lines left the cursor past the end of the shorter text, and the scrollbar that
        # went away asked for its offset (ValueError: line index out of bounds, the app gone).
        # The cursor is put somewhere valid first; the undo then places it where it belongs.
        self.selection = Selection.cursor((0, 0))
        super()._undo_batch(edits)

    def _redo_batch(self, edits: Any) -> None:
        self.selection = Selection.cursor((0, 0))
        super()._redo_batch(edits)

    def _build_highlight_map(self) -> None:
        self._line_cache.clear()
        lines = self.document.lines
        count = len(lines)
        self._highlight_generation += 1
        if count > MAX_LINES:
            self._highlights.clear()
            if not self._warned_size:
                self._warned_size = True
                self.post_message(self.HighlightingOff(count))
            return
        pending = self._pending_edit
        if pending is None and self._loading:
            # A freshly loaded file: paint the text first, colour it right after (pygments'
            # import and a whole-file pass would otherwise delay the first frame).
            self._highlights.clear()
            if count > 1 or (count == 1 and lines[0]):
                self.call_after_refresh(self._after_first_paint, self._highlight_generation)
            return
        if pending is None and count <= SYNC_LINES:
            self._highlights = compute_highlights(lines)
            self._fm_bounds = frontmatter_bounds(lines)
            return
        if pending is None or not self._relex_edited_rows(lines, *pending):
            self._full_pass(self._highlight_generation, list(lines))

    def _relex_edited_rows(
        self, lines: list[str], top: int, old_bottom: int, before: int, touched: str
    ) -> bool:
        """Re-lex only what an edit can change. Returns False when that is not enough and a
        full pass must follow (a triple quote or a marker line was touched)."""
        delta = len(lines) - before
        new_bottom = min(old_bottom + delta, len(lines) - 1)
        new: HighlightMap = defaultdict(list)
        for row, items in self._highlights.items():
            if row < top:
                new[row] = items
            elif row > old_bottom:
                new[row + delta] = items
        old_bounds = self._fm_bounds
        bounds = frontmatter_bounds(lines)  # stops at the second marker: cheap
        self._fm_bounds = bounds
        open_i, close_i = bounds
        exact = True
        if '"""' in touched or "'''" in touched or MARKER in touched:
            exact = False  # a string or the frontmatter may now span other lines
        if (old_bounds[0], None if old_bounds[1] is None else old_bounds[1] + delta) != bounds:
            exact = False
        fm_end = close_i if close_i is not None else -1
        if open_i is not None and top <= fm_end:
            # Inside the frontmatter: re-lex all of it as YAML (a few dozen lines).
            for row in range(open_i, fm_end + 1):
                new.pop(row, None)
            prefixes = {row: _prefix_length(lines[row]) for row in range(open_i + 1, fm_end)}
            _lex_into(new, lines, open_i + 1, fm_end, "yaml", prefixes)
            new[open_i].append((0, None, "comment.marker"))
            new[fm_end].append((0, None, "comment.marker"))
        for row in range(top, new_bottom + 1):
            if open_i is not None and open_i <= row <= fm_end:
                continue
            new.pop(row, None)
            _lex_into(new, lines, row, row + 1, "python")
        self._highlights = new
        return exact

    @work(thread=True, exclusive=True, group="highlight", exit_on_error=False)
    def _full_pass(self, generation: int, lines: list[str]) -> None:
        import time

        from textual.worker import get_current_worker

        time.sleep(FULL_PASS_DELAY)  # typing usually continues: let exclusive cancel us first
        if get_current_worker().is_cancelled:
            return
        result = compute_highlights(lines)
        bounds = frontmatter_bounds(lines)
        self.app.call_from_thread(self._apply_full_pass, generation, result, bounds)

    def _apply_full_pass(
        self, generation: int, result: HighlightMap, bounds: tuple[int | None, int | None]
    ) -> None:
        if generation != self._highlight_generation:
            return  # the text changed meanwhile; a newer pass is on its way
        self._highlights = result
        self._fm_bounds = bounds
        self._line_cache.clear()
        self.refresh()

    def load_text(self, text: str) -> None:
        self._fm_bounds = frontmatter_bounds(text.splitlines())
        self._warned_size = False
        self._loading = True
        try:
            super().load_text(text)
        finally:
            self._loading = False

    def _after_first_paint(self, generation: int) -> None:
        # Colour a moment after the paint, not in the same breath: the first colouring builds
        # the pygments lexers (~60-80 ms, once) and would hold up whatever else waits on that
        # frame (a key pressed meanwhile, the screen's other after-refresh callbacks).
        self.set_timer(POST_PAINT_DELAY, lambda: self._highlight_loaded(generation))

    def _highlight_loaded(self, generation: int) -> None:
        if generation != self._highlight_generation:
            return  # edited meanwhile: that edit's pass covers it
        lines = self.document.lines
        if len(lines) <= SYNC_LINES:
            self._apply_full_pass(generation, compute_highlights(lines), frontmatter_bounds(lines))
        else:
            self._full_pass(generation, list(lines))

    # -- positions --------------------------------------------------------------------------

    def select_span(self, line: int, column: int, end_line: int, end_column: int) -> None:
        """Select a 1-based span (a diagnostic's) and scroll it into view, with the start of
        its line showing whenever the span fits without scrolling sideways (a jump that
        scrolled right hid the line's start, and with it what the problem is about)."""
        last_row = max(0, self.document.line_count - 1)
        start = (min(max(line - 1, 0), last_row), max(column - 1, 0))
        end = (min(max(end_line - 1, 0), last_row), max(end_column - 1, 0))
        self.selection = Selection(start, end)
        self.scroll_cursor_visible(center=True, animate=False)
        room = self.scrollable_content_region.width - self.gutter_width - 1
        if not self.soft_wrap and max(start[1], end[1]) < room:
            self.scroll_to(x=0, animate=False, immediate=True)

    def show_line(self, row: int) -> None:
        """Scroll a line into view without moving the cursor: a form edit shows where it wrote."""
        try:
            y = self.wrapped_document.location_to_offset((row, 0)).y
        except (IndexError, ValueError):
            return
        self.scroll_to_region(Region(0, y, 1, 1), animate=False, force=True)

    def action_document_start(self, select: bool = False) -> None:
        self.move_cursor((0, 0), select=select)

    def action_document_end(self, select: bool = False) -> None:
        self.move_cursor(self.document.end, select=select)

    # -- Tab: indent, or leave the pane ---------------------------------------------------------

    def tab_indents(self, step: int) -> bool:
        """Whether Tab (step 1) or shift+Tab (step -1) edits here rather than leaving the pane:
        while text is selected, or while the cursor stands in a line's indentation (only spaces
        before it, on a blank line or past column 0). Anywhere else, where Tab would insert
        spaces in the middle of text (or at the start of a line, where a person who pressed Tab
        wants out), it moves to the next pane. Esc always leaves."""
        if self.read_only:
            return False
        start, end = self.selection
        if start != end:
            return True
        row, column = self.cursor_location
        line = self.document.get_line(row)
        before = line[:column]
        if before.strip(" \t"):
            return False
        if step < 0:
            return column > 0
        return column > 0 or not line.strip()

    def indent_or_dedent(self, step: int) -> None:
        """Indent (step 1) or dedent (-1) the selected lines, or at the cursor: one edit, so
        one ctrl+z undoes it."""
        width = self.indent_width
        start, end = sorted(self.selection)
        if start == end:
            row, column = start
            if step > 0:
                spaces = width - column % width
                self.replace(" " * spaces, start, start)
                return
            line = self.document.get_line(row)
            take = column % width or width
            take = min(take, len(line[:column]) - len(line[:column].rstrip(" ")))
            if take:
                self.replace("", (row, column - take), start)
            return
        first, last = start[0], end[0]
        if end[1] == 0 and last > first:
            last -= 1  # a selection ending at column 0 leaves that line alone
        lines = [self.document.get_line(r) for r in range(first, last + 1)]
        if step > 0:
            new = [(" " * width + text) if text.strip() else text for text in lines]
        else:
            new = [text[min(width, len(text) - len(text.lstrip(" "))) :] for text in lines]
        block_end = (last, len(lines[-1]))
        self.replace("\n".join(new), (first, 0), block_end)
        self.selection = Selection((first, 0), (last, len(new[-1])))

    # -- Enter in the frontmatter ---------------------------------------------------------------

    def frontmatter_line_start(self) -> str | None:
        """What a new line after the cursor's starts with, when the cursor is in the frontmatter
        (from its opening marker to the line before the closing one): `# ` and the YAML
        indentation of the current line, so Enter there keeps the manifest a comment (an
        uncommented line is PT003, and the YAML under it stops parsing). None elsewhere."""
        open_i, close_i = frontmatter_bounds(self.document.lines)
        row, column = self.cursor_location
        if open_i is None or close_i is None or not open_i <= row < close_i:
            return None
        line = self.document.get_line(row)
        prefix = _prefix_length(line)
        if prefix == 0 or column < prefix:
            return None  # not a comment line, or the cursor in its `# `: a plain Enter
        if row == open_i:
            return "# "
        indent = len(line[prefix:]) - len(line[prefix:].lstrip(" "))
        return line[:prefix] + " " * indent if line[prefix:].strip() else line[:prefix]

    async def _on_key(self, event: Any) -> None:
        if event.key == "enter" and not self.read_only:
            start = self.frontmatter_line_start()
            if start is not None:
                event.stop()
                event.prevent_default()
                begin, end = self.selection
                self._replace_via_keyboard("\n" + start, begin, end)
                return
        await super()._on_key(event)
