"""The confirmation inbox: what agents asked to run, shown exactly, decided by a person.

Live: the app's one store watch (inbox/inbox_badge.py, approvals/watcher.py) polls the store
every 300 ms and publishes a StoreChanged when something committed or an expiry fell due (the
watcher settles it); the inbox re-lists in a thread worker when the version it last read is not
the one announced. So a new action appears within a second without a key press, and decided or
expired ones leave. The list is a line-API view (inbox/inbox_list.py): 10,000
pending actions are one list assignment.

Exactly what you approve: the detail pane shows the tool (description, capabilities, external
auth scopes, where its source is, and whether it changed since the call was held), the reason,
the taint origin, and the args as pretty canonical JSON (sorted keys: the form the approval binds)
through ui/safe_text: nothing is markup, every hidden character is a visible ⟦U+XXXX⟧ token with a
banner counting them. Long strings collapse behind an explicit expand (e); Approve stays disabled
until every collapsed value was expanded and the pane was scrolled to its end once.

History (h): decided, executed, failed, expired and interrupted actions with who, when, the note
and the run's result or error; filter by tool and status; export the filtered rows as JSON (x).

    run_inbox(args) -> int     `patch-tui inbox [--store PATH]`: the app, opened on this screen
"""

from __future__ import annotations

import builtins
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar

from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Header, Input, Select, Static

from patch_tui.approvals.store import (
    Action,
    ActionStatus,
    Decision,
    Event,
    StoreBusy,
    StoreError,
    parse_iso,
)
from patch_tui.approvals.watcher import StoreChanged
from patch_tui.format import toolfile
from patch_tui.ui.commands import CommandList
from patch_tui.ui.dialogs.dialog import DialogKeyGuard
from patch_tui.ui.inbox import inbox_list
from patch_tui.ui.inbox.inbox_badge import app_store, pending_watch, store_path
from patch_tui.ui.inbox.inbox_dialogs import DecideModal
from patch_tui.ui.inbox.inbox_list import (
    HISTORY_COLUMNS,
    PENDING_COLUMNS,
    ActionHeader,
    ActionList,
    human_duration,
)
from patch_tui.ui.safe_text import JsonView, SafeReport, SafeTitles, json_view, safe, safe_line
from patch_tui.ui.widgets.key_bar import KeyBar

HISTORY_STATUSES = tuple(s for s in ActionStatus if s != ActionStatus.PENDING)
# Rows read first on opening (the newest), before the whole list.
FIRST_PAGE = 200
# The args recalled in the decide dialog (the details pane above it has them all).
DIALOG_ARGS_CHARS = 400
# How long the cursor rests before the detail pane follows it (seconds).
DETAIL_DELAY = 0.1


@dataclass(frozen=True)
class ToolInfo:
    """What the detail pane says about the tool behind an action (from its file, if found)."""

    path: Path | None
    description: str | None = None
    capabilities: dict[str, Any] | None = None
    scopes: tuple[str, ...] = ()
    sha256: str | None = None
    problem: str | None = None

    @property
    def destructive(self) -> bool:
        caps = self.capabilities or {}
        # As the MCP annotations say it: human_confirm or read-write is destructive; unknown is too.
        return self.capabilities is None or bool(
            caps.get("human_confirm") or caps.get("filesystem") == "read-write"
        )


_TOOL_CACHE: dict[tuple[str, int, int], ToolInfo] = {}


def tool_info(action: Action) -> ToolInfo:
    """Read the tool file named by the action (cached by path, mtime and size)."""
    if not action.tool_path:
        return ToolInfo(None, problem="the action does not say where the tool file is")
    path = Path(action.tool_path)
    try:
        st = path.stat()
    except OSError:
        return ToolInfo(path, problem=f"the tool file is gone: {path}")
    key = (str(path), st.st_mtime_ns, st.st_size)
    found = _TOOL_CACHE.get(key)
    if found is not None:
        return found
    try:
        tf = toolfile.read(str(path))
    except (OSError, ValueError) as exc:
        return ToolInfo(path, problem=f"cannot read the tool file: {exc}")
    manifest = tf.manifest
    if manifest is None:
        info = ToolInfo(path, sha256=tf.sha256, problem="the tool's manifest does not parse")
    else:
        info = ToolInfo(
            path,
            description=manifest.description,
            capabilities=manifest.capabilities.model_dump(),
            scopes=tuple(manifest.external_auth),
            sha256=tf.sha256,
        )
    if len(_TOOL_CACHE) > 256:
        _TOOL_CACHE.clear()
    _TOOL_CACHE[key] = info
    return info


def _label(text: str) -> Content:
    return Content.styled(text, "bold $text-muted")


def _yes_no(value: Any) -> Content:
    if value is True:
        return Content.styled("true", "bold $text-warning")
    if value is False:
        return Content.styled("false", "$text-muted")
    return safe_line(str(value))


class InboxCommands(CommandList):
    """Palette commands of the inbox, named "inbox: verb"."""

    def _commands(self) -> list[tuple[str, str, Callable[[], Any]]]:
        screen = self.screen
        if not isinstance(screen, InboxScreen):
            return []
        return [
            ("inbox: approve", "Approve the selected action, once all of it was shown (a)", screen.action_approve),
            ("inbox: reject", "Reject the selected action, with an optional reason (r)", screen.action_reject),
            ("inbox: expand all", "Show every collapsed value in full (e)", screen.action_expand),
            ("inbox: history", "Decided, run, failed and expired actions / back to pending (h)", screen.action_toggle_history),
            ("inbox: export history", "Write the filtered history as JSON (x)", screen.action_export),
            ("inbox: open tool source", "The selected action's tool file (o)", screen.action_open_source),
        ]



class DetailPane(VerticalScroll):
    """The detail pane. It says when the compositor laid it out anew (a new size, a new content
    height, shown after being hidden), because that is when "everything was shown" must be
    checked again: a call that arrives while the pane is hidden (the empty inbox) is rendered
    before the pane has a size, and its content height changes nothing a watcher sees (the
    compositor sets the size of an exposed widget without calling watchers)."""

    class LaidOut(Message):
        pass

    def on_resize(self) -> None:
        self.post_message(self.LaidOut())

    def on_show(self) -> None:
        self.post_message(self.LaidOut())


class InboxScreen(Screen[None]):
    """Pending actions (default) or the history, with the selected action's details."""

    COMMANDS: ClassVar[set[Any]] = {InboxCommands}

    BINDINGS: ClassVar[list[Any]] = [
        Binding("a", "approve", "Approve", id="inbox.approve"),
        Binding("r", "reject", "Reject", id="inbox.reject"),
        Binding("e", "edit", "Edit args", id="inbox.edit"),
        Binding("E", "expand", "Expand all", id="inbox.expand"),
        Binding("g", "allow_like_this", "Allow like this", id="inbox.allow"),
        Binding("h", "toggle_history", "History", id="inbox.history"),
        Binding("o", "open_source", "Open source", id="inbox.open_source", show=False),
        Binding("x", "export", "Export", id="inbox.export"),
        Binding("space", "read_on", "Read on", id="inbox.read_on"),
        Binding("escape,q", "close", "Back", id="inbox.close"),
    ]
    DEFAULT_CSS = """
    InboxScreen { layout: vertical; }
    #inbox-status { height: auto; max-height: 3; padding: 0 1; background: $panel; color: $text-muted; }
    #inbox-status.-busy { background: $error 40%; color: $text; }
    #inbox-filters { height: auto; display: none; }
    InboxScreen.-history #inbox-filters { display: block; }
    #inbox-filters { padding: 0 1; }
    #filter-tool { width: 1fr; margin-right: 1; }
    #filter-status { width: 30; }
    #list-box { height: 30%; min-height: 6; border: round $panel; }
    #list-box:focus-within { border: round $primary; }
    #detail { height: 1fr; border: round $panel; padding: 0 1; }
    #detail:focus-within { border: round $primary; }
    #detail Static { margin-bottom: 1; }
    #detail-banner { background: $warning-muted; display: none; padding: 0 1; height: auto; max-height: 3; }
    #detail-banner.-shown { display: block; }
    #detail-gate { color: $text-warning; text-style: bold; }
    #detail-gate.-ready { color: $text-success; }
    #empty-note { color: $text-muted; padding: 1 2; display: none; }
    InboxScreen.-empty #empty-note { display: block; }
    InboxScreen.-empty #detail { display: none; }
    #detail { border-subtitle-color: $text-warning; }
    """

    mode: reactive[str] = reactive("pending", init=False)
    can_approve: reactive[bool] = reactive(False, init=False)

    def __init__(self) -> None:
        super().__init__()
        self.actions: list[Action] = []
        self.shown: list[Action] = []  # the rows after the history filters
        self.version: int | None = None
        self.next_due = float("inf")
        self.polling = False
        self._again = False  # a read was asked for while one was running: read again after it
        self._stale = False  # the last read failed: read at the next change, whatever its version
        self.busy = False
        self.error: str | None = None
        self.loaded = False
        self.load_count = 0  # tests and the bench wait on this
        self.current: Action | None = None
        self.expanded: set[str] = set()
        self.view: JsonView | None = None
        self.seen_end = False
        self.events: list[Event] = []
        self._detail_timer: Timer | None = None

    # -- layout -------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Header(icon="⚑")
        yield Static("Reading the confirmation store…", id="inbox-status")
        yield Horizontal(id="inbox-filters")  # filled when the history is first shown
        with Vertical(id="list-box"):
            yield ActionHeader(id="list-header")
            yield ActionList(id="list")
        yield Static(
            "Nothing waiting. Held calls appear here by themselves (h shows the history).",
            id="empty-note",
        )
        # Outside the scrolling pane: the warning stays in sight while the args are read.
        yield Static("", id="detail-banner")
        with DetailPane(id="detail"):
            yield Static("", id="detail-head")
            yield Static("", id="detail-tool")
            yield Static("", id="detail-reason")
            yield Static("", id="detail-args")
            yield Static("", id="detail-result")
            yield Static("", id="detail-gate")
        yield KeyBar()

    @property
    def list(self) -> ActionList:
        return self.query_one("#list", ActionList)

    @property
    def detail(self) -> VerticalScroll:
        return self.query_one("#detail", VerticalScroll)

    def on_mount(self) -> None:
        self.title = "Confirmation inbox"
        self.query_one("#list-box").border_title = "Pending"
        self.detail.border_title = "Details"
        self._show_columns()
        self.list.focus()
        self.watch(self.detail, "scroll_y", self._detail_scrolled, init=False)
        self.watch(self.detail, "virtual_size", self._detail_laid_out, init=False)
        watch = pending_watch(self.app)
        if watch.last is not None:
            self.next_due = watch.last.next_due
        watch.store_changed.subscribe(self, self._store_changed)
        self.set_interval(1.0, self._clock, name="inbox-clock")
        self._tick()

    def on_resize(self) -> None:
        self._show_columns()

    def _show_columns(self) -> None:
        columns = PENDING_COLUMNS if self.mode == "pending" else HISTORY_COLUMNS
        self.list.set_columns(columns)
        self.query_one("#list-header", ActionHeader).show_columns(
            columns, max(20, self.list.size.width or self.size.width - 2)
        )

    # -- reading the store --------------------------------------------------------------------

    def _store_changed(self, changed: StoreChanged) -> None:
        """The store watch says something changed: re-list unless this version was read."""
        self.next_due = changed.next_due
        if changed.error is not None:
            self._loaded(changed.error, final=False)
            return
        if self._stale or changed.version != self.version:
            self._stale = False
            self._tick()

    def _tick(self) -> None:
        """Re-list now (once the read under way, if any, is in)."""
        if self.polling:
            self._again = True  # never pile up threads: one read at a time
            return
        self.polling = True
        self._poll(self.mode, self.version)

    @work(thread=True, group="inbox-poll", exit_on_error=False)
    def _poll(self, mode: str, known: int | None) -> None:
        try:
            store = app_store(self.app)
            # The version before reading: a change committed meanwhile is announced again.
            version = store.data_version()
            statuses = (ActionStatus.PENDING,) if mode == "pending" else HISTORY_STATUSES
            if known is None:
                # First read: the newest rows first, so the screen fills at once even with
                # 10,000 actions, then the whole list right after.
                first = store.list_actions(statuses=statuses, limit=FIRST_PAGE)
                if len(first) == FIRST_PAGE:
                    self.app.call_from_thread(self._loaded, (first, None, mode), False)
            actions = store.list_actions(statuses=statuses)
            result: Any = (actions, version, mode)
        except StoreError as exc:  # StoreBusy included: shown, and retried on the next tick
            result = exc
        except Exception as exc:  # a damaged row, say: said, and the next tick tries again
            result = StoreError(f"{store_path(self.app)}: cannot read the store: {exc!r}")
        try:
            self.app.call_from_thread(self._loaded, result)
        except RuntimeError:
            pass  # the app is closing

    def _loaded(self, result: Any, final: bool = True) -> None:
        if final:
            self.polling = False
            if self._again:
                self._again = False
                self.call_later(self._tick)
        status = self.query_one("#inbox-status", Static)
        if isinstance(result, StoreError):
            busy = isinstance(result, StoreBusy)
            self.busy, self.error = busy, str(result)
            status.set_class(True, "-busy")
            status.update(
                safe_line(("store busy, retrying… " if busy else "store unavailable: ") + str(result))
            )
            self._stale = True  # read again at the next change (the watch retries meanwhile)
            return
        if self.busy or self.error:
            self.busy, self.error = False, None
            status.set_class(False, "-busy")
        if result is None:
            return
        actions, version, mode = result
        if mode != self.mode:
            self._tick()  # the mode changed while reading: read again
            return
        self.actions = actions
        if not final:  # the first page: shown now, the rest follows
            self._apply_filter()
            status.update(f"{len(actions)} newest shown, reading the rest…")
            return
        self.version = version
        self.loaded = True
        self.load_count += 1
        self._apply_filter()
        self._update_status()

    def _apply_filter(self) -> None:
        rows = self.actions
        if self.mode == "history" and self.query("#filter-tool"):
            text = self.query_one("#filter-tool", Input).value.strip().lower()
            status = self.query_one("#filter-status", Select).value
            if text:
                rows = [a for a in rows if text in a.tool.lower()]
            if isinstance(status, str):
                rows = [a for a in rows if a.status == status]
        self.shown = rows
        self.list.set_actions(rows)
        self.set_class(not rows and self.mode == "pending", "-empty")
        self.query_one("#list-box").border_title = (
            f"Pending ({len(rows)})" if self.mode == "pending" else f"History ({len(rows)})"
        )
        if not rows:
            self._show_detail(None)
        elif self.current is None or self.list.current is None or (
            self.list.current.token != self.current.token
        ) or self.list.current != self.current:
            self._show_detail(self.list.current)

    def _update_status(self) -> None:
        where = store_path(self.app)
        if self.mode == "pending":
            text = f"{len(self.actions)} pending · {where}"
        else:
            text = f"history: {len(self.shown)} of {len(self.actions)} shown · {where}"
        self.query_one("#inbox-status", Static).update(safe_line(text))

    def _clock(self) -> None:
        if self._stale and not self.polling:
            self._stale = False
            self._tick()  # the last read failed and nothing was announced since: try again
        # Ages and countdowns move every second; only the visible lines render.
        self.list.refresh()
        if self.current is not None and self.mode == "pending":
            self._render_head(self.current)

    # -- the detail pane ----------------------------------------------------------------------

    @on(ActionList.Highlighted)
    def _highlighted(self, event: ActionList.Highlighted) -> None:
        # The detail follows the cursor once it rests (DETAIL_DELAY): holding a key down over
        # 10,000 rows repaints two lines per step, not the whole pane. Deciding first brings the
        # detail up to date (see _sync_detail), so a decision is always about what is shown.
        event.stop()
        if self._detail_timer is not None:
            self._detail_timer.stop()
        self._detail_timer = self.set_timer(DETAIL_DELAY, self._sync_detail)

    def _sync_detail(self) -> None:
        self._detail_timer = None
        action = self.list.current
        if action is not self.current:
            self._show_detail(action)

    def _show_detail(self, action: Action | None) -> None:
        same = (
            action is not None and self.current is not None and action.token == self.current.token
        )
        if (action is None) != (self.current is None):
            self.refresh_bindings()  # Reject is enabled only with an action selected
        self.current = action
        if not same:
            self.expanded = set()
            self.seen_end = False
            self.events = []
            self.detail.scroll_home(animate=False)
        statics = {
            name: self.query_one(f"#detail-{name}", Static)
            for name in ("banner", "head", "tool", "reason", "args", "result", "gate")
        }
        if action is None:
            for s in statics.values():
                s.update("")
            statics["banner"].remove_class("-shown")
            self.view = None
            self.can_approve = False
            return
        report = SafeReport()
        self._render_head(action)
        info = tool_info(action)
        statics["tool"].update(self._tool_content(action, info, report))
        statics["reason"].update(self._reason_content(action, report))
        self.view = json_view(action.args, expanded=self.expanded)
        report.add(self.view.report)
        if action.damaged:
            # The stored row cannot be read: say so instead of showing `{}` as its args.
            statics["args"].update(
                Content.assemble(
                    _label("args\n"),
                    Content.styled("DAMAGED: ", "bold $text-error"),
                    safe_line(action.damaged),
                    "\nIt can only be rejected (r).",
                )
            )
        else:
            statics["args"].update(
                Content.assemble(_label("args (canonical JSON, sorted keys)\n"), self.view.content)
            )
        result = self._result_content(action, report)
        statics["result"].update(result)
        statics["result"].display = bool(result)
        banner = report.banner()
        statics["banner"].update(banner or "")
        statics["banner"].set_class(banner is not None, "-shown")
        if self.mode == "history" and not same:
            self._load_events(action.token)
        self._update_gate()
        self._check_seen()

    def _render_head(self, action: Action) -> None:
        now = inbox_list.clock()
        parts: list[Content | tuple[str, str] | str] = [
            safe_line(action.tool, "bold"),
            " ",
            safe_line(action.version),
            "  ",
            safe_line(action.kind, "bold $text-warning"),
            "  ",
            # A forged approval (store.Action.tampered) says so where the status is read.
            safe_line(f"TAMPERED ({action.status})", "bold $text-error")
            if action.tampered
            else safe_line(action.status, "bold"),
            "\n",
            _label("token "),
            safe_line(action.token),
            "\n",
            _label("held "),
            safe_line(action.created_at),
            f" ({human_duration(now - _ts(action.created_at))} ago)",
        ]
        if action.status in ("pending", "approved"):
            left = _ts(action.expires_at) - now
            parts += ["\n", _label("expires "), safe_line(action.expires_at), " "]
            parts.append(
                Content.styled(
                    f"(in {human_duration(left)})" if left > 0 else "(expired)",
                    "bold $text-error" if left < 30 else "",
                )
            )
        if action.decided_at:
            parts += ["\n", _label("decided "), safe_line(action.decided_at), " by "]
            parts.append(safe_line(action.decided_by or "?"))
        if action.finished_at:
            parts += ["\n", _label("finished "), safe_line(action.finished_at)]
        if action.tampered:
            parts += ["\n", _label("tampered "), safe_line(action.tampered, "$text-error")]
            parts.append(" (never run)")
        self.query_one("#detail-head", Static).update(Content.assemble(*parts))

    def _tool_content(self, action: Action, info: ToolInfo, report: SafeReport) -> Content:
        parts: list[Content | str] = [_label("tool\n")]
        if info.description is not None:
            parts += [safe(info.description, report=report), "\n"]
        caps = info.capabilities
        if caps is not None:
            parts += [
                "network ",
                _yes_no(caps.get("network")),
                "  filesystem ",
                safe_line(str(caps.get("filesystem"))),
                "  human_confirm ",
                _yes_no(caps.get("human_confirm")),
                "\n",
                "external_auth scopes ",
                safe_line(", ".join(info.scopes), "bold") if info.scopes else Content("none"),
                "\n",
            ]
        if info.path is not None:
            parts += ["source ", safe_line(str(info.path), "underline"), "  (o opens it)"]
        if info.problem:
            parts += ["\n", Content.styled("⚠ ", "bold $text-error"), safe(info.problem)]
        elif info.sha256 is not None and info.sha256 != action.source_sha256:
            parts += [
                "\n",
                Content.styled(
                    "⚠ the tool file changed since this call was held: confirming it will refuse "
                    "to run it (the approval binds the source it was held with)",
                    "bold $text-error",
                ),
            ]
        return Content.assemble(*parts)

    def _reason_content(self, action: Action, report: SafeReport) -> Content:
        parts: list[Content | str] = [_label("reason\n"), safe(action.reason, report=report)]
        details = action.details or {}
        tainted = details.get("tainted_inputs")
        if action.kind == "tainted_input" and isinstance(tainted, list):
            parts.append(_label("\ntainted inputs"))
            for item in tainted:
                if not isinstance(item, dict):
                    continue
                # The runtime's names (inputName, matchedTools); rows stored before used ours.
                sources = item.get("matchedTools") or item.get("source_tools") or []
                parts += [
                    "\n  ",
                    safe_line(str(item.get("inputName", item.get("input"))), "bold $text-warning"),
                    " ← output of ",
                    safe_line(", ".join(str(s) for s in sources), report=report),
                ]
        after = details.get("after_tainted_input")
        if isinstance(after, str):
            parts += ["\n", _label("follows the approved taint confirmation "), safe_line(after[:8] + "…")]
        return Content.assemble(*parts)

    def _result_content(self, action: Action, report: SafeReport) -> Content:
        if action.status == "pending":
            return Content("")
        parts: list[Content | str] = []
        if action.note:
            parts += [_label("note "), safe(action.note, report=report), "\n"]
        if action.result is not None:
            label = "error" if action.status == "failed" else "result"
            view = json_view(action.result, expanded=self.expanded)
            report.add(view.report)
            parts += [_label(f"{label}\n"), view.content]
        if self.events:
            parts.append(_label("\nevents"))
            for ev in self.events:
                detail = json.dumps(ev.detail, ensure_ascii=False, sort_keys=True) if ev.detail else ""
                # Every field of the store is text another process wrote: shown, never obeyed.
                parts += ["\n  ", safe_line(ev.at), "  ", safe_line(ev.event, "bold"), "  ", safe_line(ev.actor)]
                if detail:
                    parts += ["  ", safe_line(detail)]
        return Content.assemble(*parts)

    @work(thread=True, group="inbox-events", exclusive=True, exit_on_error=False)
    def _load_events(self, token: str) -> None:
        try:
            events = app_store(self.app).events(token)
        except StoreError:
            return
        try:
            self.app.call_from_thread(self._events_loaded, token, events)
        except RuntimeError:
            pass

    def _events_loaded(self, token: str, events: builtins.list[Event]) -> None:
        if self.current is not None and self.current.token == token:
            self.events = events
            report = SafeReport()
            result = self.query_one("#detail-result", Static)
            result.update(self._result_content(self.current, report))
            result.display = True

    # -- "shown once" before approve -----------------------------------------------------------

    def _detail_scrolled(self, _value: float) -> None:
        self._check_seen()

    def _detail_laid_out(self, _size: object) -> None:
        # A layout of the current content happened: nothing to scroll means all is in sight.
        if not self.seen_end and self.current is not None and self.detail.max_scroll_y <= 0:
            self.seen_end = True
            self._update_gate()

    @on(DetailPane.LaidOut)
    def _detail_relaid(self, event: DetailPane.LaidOut) -> None:
        event.stop()
        self._check_seen()

    def _check_seen(self) -> None:
        """Everything was on screen once: the content fits the pane, or the person scrolled to
        its end. Fitting is computed from the content itself, never from the pane's last layout
        (which may still be the previous action's: a short one would unlock a long one)."""
        if self.seen_end or self.current is None:
            return
        detail = self.detail
        scrolled = detail.max_scroll_y > 0 and detail.scroll_y >= detail.max_scroll_y - 0.5
        if scrolled or self._fits():
            self.seen_end = True
            self._update_gate()

    def _fits(self) -> bool:
        detail = self.detail
        region = detail.scrollable_content_region
        if region.width <= 0 or region.height <= 0:
            return False
        total = 0
        for child in detail.children:
            if not child.display:
                continue
            styles = child.styles
            inner = max(1, region.width - styles.gutter.width)
            total += (
                child.get_content_height(region.size, region.size, inner)
                + styles.gutter.height
                + styles.margin.height
            )
        return total <= region.height

    def _update_gate(self) -> None:
        action = self.current
        gate = self.query_one("#detail-gate", Static)
        if action is None or action.status != "pending":
            if self.can_approve:
                self.can_approve = False
                self.refresh_bindings()
            gate.update("")
            self.detail.border_subtitle = ""
            return
        blocked = _blocked(action)
        if blocked is not None:
            # Approving it could never run it: refused here, with the reason, not after.
            if self.can_approve:
                self.can_approve = False
                self.refresh_bindings()
            gate.set_class(False, "-ready")
            gate.update(Content(f"Approve is disabled: {blocked}. r rejects it."))
            self.detail.border_subtitle = "tool file changed: approve disabled · r reject"
            return
        missing: list[str] = []
        if action.damaged:
            missing.append("nothing: its stored args are damaged, so it can only be rejected (r)")
        elif self.view is not None and self.view.collapsed:
            n = len(self.view.collapsed)
            missing.append(f"expand {n} collapsed value{'s' if n != 1 else ''} (e)")
        if not self.seen_end:
            missing.append("scroll the details to the end")
        if self.can_approve != (not missing):
            self.can_approve = not missing
            self.refresh_bindings()  # the footer greys Approve out (costly: only on a change)
        gate.set_class(not missing, "-ready")
        if missing:
            gate.update(Content("Approve is disabled until everything was shown: " + " and ".join(missing) + "."))
            # In the pane's border too: the gate line itself may be below the fold.
            self.detail.border_subtitle = "approve after reading: " + " and ".join(
                m.replace("scroll the details to the end", "space to read on") for m in missing
            )
        else:
            gate.update(Content("Everything was shown. a approves, r rejects."))
            self.detail.border_subtitle = "all shown: a approve · r reject"

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "approve":
            if self.mode != "pending":
                return False
            return True if self.can_approve else None  # None: shown, but disabled
        if action == "reject":
            if self.mode != "pending":
                return False
            return True if self.current is not None else None
        if action == "export":
            return self.mode == "history"
        return True

    # -- keys ---------------------------------------------------------------------------------

    def action_read_on(self) -> None:
        """Space reads the details on, a page at a time, wherever the focus is (a pager's key):
        the way to "everything was shown" without leaving the list."""
        self.detail.scroll_page_down(animate=False)

    def action_expand(self) -> None:
        if self.view is None or not self.view.collapsed:
            self.notify("Nothing is collapsed", markup=False)
            return
        self.expanded.update(self.view.collapsed)
        if self.current is not None and self.current.result is not None:
            # Result values (history) expand with the args.
            self.expanded.update(json_view(self.current.result).collapsed)
        self._show_detail(self.current)

    def action_approve(self) -> None:
        self._decide("approve")

    def action_edit(self) -> None:
        """Edit, then approve (issue 17): the args in a form from the tool's inputs."""
        from patch_tui.ui.inbox.edit_args_dialog import open_edit_dialog

        action = self._pending_shown()
        if action is None:
            return
        if not self.can_approve:
            self.notify("Editing is disabled until everything was shown (see the details)", markup=False)
            return

        def done(decision: Decision | None) -> None:
            if decision is not None and decision.ok:
                self.notify(
                    f"Approved with edited args: {action.tool} ({action.token[:8]}…). The agent "
                    "will be told what changed.",
                    markup=False,
                )
            self._tick()

        open_edit_dialog(self, action, done)

    def action_allow_like_this(self) -> None:
        """Allow calls like this for… (issue 17): a standing grant from the selected action."""
        from patch_tui.ui.inbox.allow_dialog import describe, open_allow_dialog

        action = self._pending_shown()
        if action is None:
            return
        if not self.can_approve:
            self.notify("Allowing is disabled until everything was shown (see the details)", markup=False)
            return

        def done(grant: Any) -> None:
            if grant is not None:
                self.notify(describe(grant), markup=False)
            self._tick()

        open_allow_dialog(self, action, done)

    def action_reject(self) -> None:
        self._decide("reject")

    def _pending_shown(self) -> Action | None:
        """The pending action under the cursor, its detail brought up to date first, or None
        when there is nothing to decide (history view, a decided action)."""
        if self._detail_timer is not None:
            # The cursor moved and the detail has not caught up: show it first. A new action
            # was not shown yet, so deciding on it is refused by the can_approve check after.
            self._detail_timer.stop()
            self._sync_detail()
        action = self.current
        if action is None or action.status != "pending" or self.mode != "pending":
            return None
        return action

    def _decide(self, verb: str) -> None:
        action = self._pending_shown()
        if action is None:
            return
        if verb == "approve" and not self.can_approve:
            blocked = _blocked(action)
            self.notify(
                f"Approve is disabled: {blocked}" if blocked else "Approve is disabled until everything was shown (see the details)",
                markup=False,
            )
            return
        info = tool_info(action)
        summary = json.dumps(action.args, ensure_ascii=False, sort_keys=True)
        more = len(summary) - DIALOG_ARGS_CHARS
        question = Content.assemble(
            safe_line(action.tool, "bold"),
            " ",
            safe_line(f"{action.version} ({action.kind})"),
            "\n",
            _label("args "),
            safe_line(summary[:DIALOG_ARGS_CHARS]),
            (f"… ({more:,} more characters: the details show them all)" if more > 0 else "", "$text-warning"),
        )
        token = action.token

        def decide(note: str | None) -> Decision:
            store = app_store(self.app)
            if verb == "approve":
                return store.approve(token, note=note)
            return store.reject(token, reason=note)

        def done(decision: Decision | None) -> None:
            if decision is not None and decision.ok:
                self.notify(
                    f"{'Approved' if verb == 'approve' else 'Rejected'}: {action.tool} "
                    f"({token[:8]}…). The agent's patch_confirm_action "
                    + ("will now run it." if verb == "approve" else "will be told it was rejected."),
                    markup=False,
                )
            self._tick()

        self.app.push_screen(
            DecideModal(
                verb,
                question,
                decide,
                destructive=info.destructive,
                note_label=None if verb == "approve" else "reason (optional, the agent sees it)",
            ),
            done,
        )

    def action_toggle_history(self) -> None:
        self.mode = "history" if self.mode == "pending" else "pending"

    def watch_mode(self, mode: str) -> None:
        self.set_class(mode == "history", "-history")
        filters = self.query_one("#inbox-filters", Horizontal)
        if mode == "history" and not filters.children:
            filters.mount_all(
                [
                    Input(placeholder="filter by tool", id="filter-tool", compact=True),
                    Select(
                        [(s, s) for s in HISTORY_STATUSES],
                        prompt="any status",
                        id="filter-status",
                        compact=True,
                    ),
                ]
            )
        self.actions = []
        self.current = None
        self.version = None
        self._show_columns()
        self.list.set_actions([])
        self.query_one("#inbox-status", Static).update("Reading the confirmation store…")
        self._tick()
        self.refresh_bindings()

    @on(Input.Changed, "#filter-tool")
    @on(Select.Changed, "#filter-status")
    def _filter_changed(self, event: Any) -> None:
        event.stop()
        if self.mode == "history":
            self._apply_filter()
            self._update_status()

    def action_open_source(self) -> None:
        action = self.current
        if action is None:
            return
        info = tool_info(action)
        if info.path is None or not info.path.is_file():
            self.notify(info.problem or "The tool file is not known", severity="warning", markup=False)
            return
        editor = getattr(self.app, "editor", None)
        if editor is None:  # `patch-tui inbox` alone: show it read-only
            from patch_tui.ui.inbox.inbox_dialogs import SourceModal

            try:
                text = info.path.read_bytes().decode("utf-8", errors="replace")
            except OSError as exc:
                self.notify(f"Cannot read {info.path}: {exc.strerror or exc}", severity="error", markup=False)
                return
            self.app.push_screen(SourceModal(str(info.path), text))
            return
        path = info.path

        def show() -> None:
            editor.open_tool(path)
            while self.app.screen is not editor and len(self.app.screen_stack) > 1:
                self.app.pop_screen()

        editor.confirm_discard(show, what="opening a tool from the inbox")

    def action_export(self) -> None:
        if self.mode != "history":
            return
        from patch_tui.ui.dialogs.confirm import PromptModal

        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        default = str(Path.cwd() / f"patch-tui-history-{stamp}.json")
        rows = list(self.shown)

        def chosen(target: str | None) -> None:
            if target:
                self._export(Path(target).expanduser(), rows)

        self.app.push_screen(
            PromptModal(
                f"Export {len(rows)} action(s) as JSON to:", title="Export history", value=default
            ),
            chosen,
        )

    @work(thread=True, group="inbox-export", exit_on_error=False)
    def _export(self, target: Path, rows: builtins.list[Action]) -> None:
        from patch_tui.runtime.toolbox import atomic_write

        data = [
            {**a.to_json(), "finished_at": a.finished_at, "claimed_by": a.claimed_by} for a in rows
        ]
        try:
            atomic_write(target, (json.dumps(data, ensure_ascii=False, indent=2) + "\n").encode())
            message, severity = f"Exported {len(rows)} action(s) to {target}", "information"
        except OSError as exc:
            message, severity = f"Cannot write {target}: {exc.strerror or exc}", "error"
        try:
            self.app.call_from_thread(self.notify, message, severity=severity, markup=False)
        except RuntimeError:
            pass

    def action_close(self) -> None:
        if self.mode == "history":
            self.mode = "pending"  # as the footer says: back, to the pending list
            return
        if len(self.app.screen_stack) > 2 or getattr(self.app, "editor", None) is not None:
            self.dismiss()
        else:
            self.app.exit()


def _blocked(action: Action) -> str | None:
    """Why approving `action` could never run it, or None. The approval binds the source the
    call was held with; confirming runs only that (approvals/gate.py refuses a changed file)."""
    info = tool_info(action)
    if info.sha256 is not None and info.sha256 != action.source_sha256:
        return (
            "the tool file changed since this call was held, so confirming it would refuse to "
            "run it (make the call again to approve the new source)"
        )
    return None


def _ts(iso: str | None) -> float:
    try:
        return parse_iso(iso) if iso else 0.0
    except ValueError:
        return 0.0


# -- `patch-tui inbox` ------------------------------------------------------------------------


class InboxApp(SafeTitles, DialogKeyGuard, App[None]):
    """`patch-tui inbox`: the inbox on its own, so it opens fast (no desk to build behind it).
    The desk's app reaches the same screen with ctrl+r."""

    TITLE = "patch-tui"
    BINDINGS: ClassVar[list[Any]] = [
        Binding("ctrl+q,f12", "quit", "Quit", id="app.quit", priority=True),
    ]

    def __init__(
        self,
        store_path: str | os.PathLike[str] | None = None,
        *,
        settings: Any = None,
        theme: str | None = None,
    ) -> None:
        from patch_tui.settings.config import Settings

        super().__init__()
        self.store_path = Path(store_path) if store_path else None
        self.settings = settings or Settings(watch_themes=False, watch_tools=False)
        self.theme_choice = theme

    def on_mount(self) -> None:
        from patch_tui.ui.inbox.inbox_badge import install_pending_watch
        from patch_tui.ui.theming.themes import install_themes

        install_themes(self, self.theme_choice, watch=False)
        self.push_screen(InboxScreen())
        install_pending_watch(self)

    def on_worker_state_changed(self, event: Any) -> None:
        # As the desk does (STYLE.md 5): a failed worker is a notification, never a crash.
        from textual.worker import WorkerState

        if event.state == WorkerState.ERROR:
            self.notify(f"{event.worker.name or 'background task'} failed: {event.worker.error}", severity="error", markup=False)
