"""The inbox's list of actions: a line-API view (one `render_line` per visible row), so 10,000
pending actions cost a list assignment, not 10,000 widgets or 50,000 measured cells.

Two column sets: "pending" (tool, kind, age, countdown to expiry, args summary) and "history"
(status, tool, when, who, note or result). Every cell that comes from the store goes through
`safe_line` (untrusted text, never markup or raw control characters). Ages and countdowns are computed at render time, so a
one-second `refresh()` keeps them live without touching the rows.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from textual import events
from textual.binding import Binding
from textual.content import Content
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.visual import Visual
from textual.widgets import Static

from patch_tui.approvals import approvable, workspace
from patch_tui.approvals.store import Action, parse_iso
from patch_tui.ui.safe_text import safe_line

ARGS_SUMMARY_CHARS = 160


def clock() -> float:
    """Now, for ages and countdowns (one place, so snapshot tests can fix the time)."""
    return time.time()


def human_duration(seconds: float) -> str:
    """`42s`, `4m05s`, `3h12m`, `2d03h`: short and fixed-ish width for a column."""
    s = int(max(0, seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    if s < 86400:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    return f"{s // 86400}d{s % 86400 // 3600:02d}h"


def args_summary(args: Any) -> str:
    text = json.dumps(args, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= ARGS_SUMMARY_CHARS else text[: ARGS_SUMMARY_CHARS - 1] + "…"


def result_summary(action: Action) -> str:
    if action.note:
        return action.note
    result = action.result
    if isinstance(result, dict) and "error" in result:
        return f"error: {result['error']}"
    if result is None:
        return ""
    return args_summary(result)


# (title, width or 0 for "the rest", cell function)
Column = tuple[str, int, Callable[[Action, float], str]]


def _ts(iso: str | None) -> float:
    try:
        return parse_iso(iso) if iso else 0.0
    except ValueError:
        return 0.0


def _when(iso: str | None) -> str:
    # "2026-11-21T10:20:36.123Z" -> "11-21 10:20:36": date and time, no noise.
    return f"{iso[5:10]} {iso[11:19]}" if iso and len(iso) >= 19 else ""


def last_change(action: Action) -> str:
    """When an action last changed (finished, else decided, else held): the history's "when"
    column, and its order (newest first), so the column reads sorted."""
    return action.finished_at or action.decided_at or action.created_at or ""


def _status(action: Action) -> str:
    # An approval without its genuine decision (store.Action.tampered) is never run: say so.
    return "tampered" if action.tampered else action.status


def _args_cell(action: Action) -> str:
    """The list's args column: a summary (the detail shows them in full), or why there are none."""
    if action.damaged:
        return f"DAMAGED: {action.damaged}"
    if approvable.args_unknown_why(action) is not None:
        return "NOT KNOWN: cannot be approved"
    # A call that cannot run where it will run says so in its row, before it is opened.
    flag = workspace.short(action)
    return args_summary(action.args) if flag is None else f"{flag}  {args_summary(action.args)}"


PENDING_COLUMNS: list[Column] = [
    ("tool", 22, lambda a, now: a.tool),
    ("kind", 13, lambda a, now: a.kind),
    ("age", 7, lambda a, now: human_duration(now - _ts(a.created_at))),
    ("expires", 8, lambda a, now: human_duration(_ts(a.expires_at) - now)),
    ("args", 0, lambda a, now: _args_cell(a)),
]
HISTORY_COLUMNS: list[Column] = [
    ("status", 11, lambda a, now: _status(a)),
    ("tool", 20, lambda a, now: a.tool),
    ("when", 14, lambda a, now: _when(last_change(a))),
    ("by", 16, lambda a, now: a.decided_by or ""),
    ("note / result", 0, lambda a, now: result_summary(a)),
]

STATUS_STYLE = {
    "pending": "$text-warning",
    "approved": "$text-primary",
    "executing": "$text-primary",
    "executed": "$text-success",
    "rejected": "$text-error",
    "failed": "$text-error",
    "expired": "$text-muted",
    "interrupted": "$text-error",
    "tampered": "bold $text-error",
}


def _fit(content: Content, width: int) -> Content:
    """Exactly `width` cells: cut with an ellipsis (the full value is in the detail pane)."""
    if content.cell_length > width:
        content = content.truncate(width, ellipsis=True)
    return (
        content.pad_right(width - content.cell_length) if content.cell_length < width else content
    )


class ActionHeader(Static):
    """The column titles above an ActionList (a separate widget, so they never scroll away)."""

    DEFAULT_CSS = "ActionHeader { height: 1; text-style: bold; color: $text-muted; }"

    def show_columns(self, columns: Sequence[Column], width: int) -> None:
        self.update(_row_content([title for title, _w, _f in columns], columns, width))


# The mark of a selected row (batches: inbox/batch.py), in the column every row starts with.
SELECTED_MARK = Content.styled("✓", "bold $text-success")


def _row_content(
    cells: Sequence[str | Content],
    columns: Sequence[Column],
    width: int,
    mark: Content | None = None,
) -> Content:
    fixed = sum(w + 1 for _t, w, _f in columns if w)
    rest = max(8, width - fixed - 1)
    parts: list[Content] = [mark or Content(" ")]
    for (_title, w, _f), cell in zip(columns, cells, strict=True):
        text = cell if isinstance(cell, Content) else Content(cell)
        parts.append(_fit(text, w or rest))
        parts.append(Content(" "))
    return Content("").join(parts)


class ActionList(ScrollView, can_focus=True):
    """Rows of actions with a cursor. Posts `Highlighted` when the cursor lands on another action."""

    BINDINGS: ClassVar[list[Any]] = [
        Binding("up,k", "cursor(-1)", "Up", show=False, id="inbox.up"),
        Binding("down,j", "cursor(1)", "Down", show=False, id="inbox.down"),
        Binding("pageup", "page(-1)", "Page up", show=False, id="inbox.page_up"),
        Binding("pagedown", "page(1)", "Page down", show=False, id="inbox.page_down"),
        Binding("home", "jump(0)", "First", show=False, id="inbox.first"),
        Binding("end", "jump(-1)", "Last", show=False, id="inbox.last"),
    ]
    COMPONENT_CLASSES: ClassVar[set[str]] = {"action-list--cursor"}
    DEFAULT_CSS = """
    ActionList { height: 1fr; }
    ActionList > .action-list--cursor { background: $block-cursor-blurred-background; }
    ActionList:focus > .action-list--cursor {
        background: $block-cursor-background; color: $block-cursor-foreground; text-style: bold;
    }
    """

    cursor: reactive[int] = reactive(0, always_update=True, init=False)

    class Highlighted(Message):
        def __init__(self, action: Action | None) -> None:
            self.action = action
            super().__init__()

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.actions: list[Action] = []
        # token -> who is reading it (the team inbox's claims), shown beside the tool.
        self.readers: dict[str, str] = {}
        self.columns: list[Column] = PENDING_COLUMNS
        self._static_cells: dict[int, list[Content]] = {}
        self._last_token: str | None = None
        # Tokens of the selected rows (a batch). Only listed rows stay selected: a row that
        # left (decided elsewhere, expired) leaves the selection, and a new row is never in it.
        self.selected: set[str] = set()

    # -- data ---------------------------------------------------------------------------------

    def set_columns(self, columns: list[Column]) -> None:
        self.columns = columns
        self._static_cells.clear()
        self.refresh()

    def set_actions(self, actions: list[Action]) -> None:
        """New rows; the cursor stays on the same action when it is still listed."""
        keep = self.current.token if self.current is not None else None
        self.actions = actions
        if self.selected:
            self.selected &= {a.token for a in actions}
        self._static_cells.clear()
        self.virtual_size = Size(self.size.width, len(actions))
        index = 0
        if keep is not None:
            for i, action in enumerate(actions):
                if action.token == keep:
                    index = i
                    break
            else:
                index = min(self.cursor, max(0, len(actions) - 1))
        self.cursor = index
        self.refresh()

    @property
    def current(self) -> Action | None:
        if 0 <= self.cursor < len(self.actions):
            return self.actions[self.cursor]
        return None

    # -- cursor -------------------------------------------------------------------------------

    def validate_cursor(self, value: int) -> int:
        return max(0, min(value, len(self.actions) - 1)) if self.actions else 0

    def watch_cursor(self, old: int, new: int) -> None:
        self.refresh_line(old)
        self.refresh_line(new)
        self.scroll_to_region(Region(0, new, 1, 1), animate=False, force=True, immediate=True)
        current = self.current
        token = current.token if current is not None else None
        if token != self._last_token:
            self._last_token = token
            self.post_message(self.Highlighted(current))

    def refresh_line(self, index: int) -> None:
        y = index - int(self.scroll_offset.y)
        if 0 <= y < self.size.height:
            self.refresh(Region(0, y, self.size.width, 1))

    def action_cursor(self, delta: int) -> None:
        self.cursor += delta

    def action_page(self, direction: int) -> None:
        self.cursor += direction * max(1, self.size.height - 1)

    def action_jump(self, where: int) -> None:
        self.cursor = 0 if where == 0 else len(self.actions) - 1

    async def _on_click(self, event: events.Click) -> None:
        row = int(self.scroll_offset.y) + event.y
        if 0 <= row < len(self.actions):
            self.cursor = row

    # -- rendering ----------------------------------------------------------------------------

    def _cells(self, index: int, now: float) -> list[Content]:
        """The row's cells; the ones that do not depend on time are computed once."""
        action = self.actions[index]
        static = self._static_cells.get(index)
        cells: list[Content] = []
        if static is None:
            static = []
            for title, _w, fn in self.columns:
                if title in ("age", "expires"):
                    static.append(Content(""))
                    continue
                style = STATUS_STYLE.get(_status(action), "") if title == "status" else ""
                text = fn(action, now)
                reader = self.readers.get(action.token) if title == "tool" else None
                if reader:
                    text = f"{text} · {reader} reading"
                static.append(safe_line(text, style))
            self._static_cells[index] = static
            if len(self._static_cells) > 2000:  # a bounded cache: only visible rows matter
                self._static_cells.clear()
                self._static_cells[index] = static
        for (title, _w, fn), cell in zip(self.columns, static, strict=True):
            if title == "expires":
                left = _ts(action.expires_at) - now
                style = "$text-error" if left < 30 else ("$text-warning" if left < 90 else "")
                cells.append(Content.styled(fn(action, now), style))
            elif title == "age":
                cells.append(Content(fn(action, now)))
            else:
                cells.append(cell)
        return cells

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        index = int(self.scroll_offset.y) + y
        base = self.visual_style
        if index >= len(self.actions):
            return Strip.blank(width, base.rich_style)
        mark = SELECTED_MARK if self.actions[index].token in self.selected else None
        content = _row_content(self._cells(index, clock()), self.columns, width, mark)
        if index == self.cursor:
            base = base + self.get_visual_style("action-list--cursor")
        strips = Visual.to_strips(self, content, width, 1, base, apply_selection=False, pad=True)
        return strips[0] if strips else Strip.blank(width, base.rich_style)

    def on_resize(self, event: events.Resize) -> None:
        self.virtual_size = Size(event.size.width, len(self.actions))
