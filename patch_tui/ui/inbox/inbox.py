"""The confirmation inbox: what agents asked to run, shown exactly, decided by a person.

Live: the app's one store watch (inbox/inbox_badge.py, approvals/watcher.py) polls the store
every 300 ms and publishes a StoreChanged when something committed or an expiry fell due (the
watcher settles it); the inbox re-lists in a thread worker when the version it last read is not
the one announced. So a new action appears within a second without a key press, and decided or
expired ones leave. The list is a line-API view (inbox/inbox_list.py): 10,000
pending actions are one list assignment.

The screen is assembled from parts, each in its own module:

- inbox/detail.py: exactly what you approve, and Approve disabled until all of it was shown;
- inbox/deciding.py: a, r, e and g on one call: the decide dialog, edit then approve, allow;
- inbox/batch.py: select several (space, ctrl+a, *, esc) and decide them together, each listed;
- inbox/history.py: decided, run, failed and expired actions (h), filtered, exported (x);
- inbox/grants_view.py: the standing grants (G), revoked or signed from there;
- inbox/inbox_app.py: `patch-tui inbox`'s app, the inbox on its own.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, ClassVar, NamedTuple

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.timer import Timer
from textual.widgets import Header, Static

from patch_tui.approvals import decisions
from patch_tui.approvals.backend import ApprovalStore
from patch_tui.approvals.store import Action, ActionStatus, Event, StoreBusy, StoreError
from patch_tui.approvals.watcher import StoreChanged
from patch_tui.ui.commands import CommandList
from patch_tui.ui.desk.host import desk_editor
from patch_tui.ui.first_frame import StyledOnMount
from patch_tui.ui.inbox.batch import BatchPart
from patch_tui.ui.inbox.claims import ClaimPart, readers_of
from patch_tui.ui.inbox.deciding import DecidePart
from patch_tui.ui.inbox.detail import (
    DETAIL_DELAY,
    DetailPart,
    app_catalog,
    tool_info,
)
from patch_tui.ui.inbox.history import HISTORY_STATUSES, HistoryPart
from patch_tui.ui.inbox.inbox_badge import app_store, pending_watch, store_path
from patch_tui.ui.inbox.inbox_list import (
    HISTORY_COLUMNS,
    PENDING_COLUMNS,
    ActionHeader,
    ActionList,
    last_change,
)
from patch_tui.ui.inbox.open_source import SourcePart
from patch_tui.ui.inbox.palette import inbox_commands
from patch_tui.ui.inbox.parts import DetailPane
from patch_tui.ui.safe_text import JsonView, json_view, safe_line
from patch_tui.ui.widgets.key_bar import KeyBar

# Rows read first on opening (the newest), before the whole list.
FIRST_PAGE = 200
# How long the reading thread waits at most for the first page's frame before it goes on
# (seconds): the frame is painted first, with the whole process to itself, then the rest is
# read. The frame ends the wait (or the screen going away); the bound is for a stalled app only,
# above what a first frame takes on a loaded machine.
FIRST_PAINT_WAIT = 10.0


class Listing(NamedTuple):
    """One read of the store for the list, as the reading thread hands it over."""

    actions: list[Action]
    # The store's data version before the read; None for the first page (the newest rows,
    # shown at once while the whole list is read): no version is taken as read from it.
    version: int | None
    # "pending" or "history": the list it was read for (the mode may change during the read).
    mode: str
    readers: dict[str, str] | None = None  # who reads which (ui/inbox/claims.py)
    # How many the store holds for this list, when `actions` is the first page of them.
    total: int | None = None


class InboxCommands(CommandList):
    """Palette commands of the inbox, named "inbox: verb"."""

    def _commands(self) -> list[tuple[str, str, Callable[[], Any]]]:
        screen = self.screen
        if not isinstance(screen, InboxScreen):
            return []
        return inbox_commands(screen)


class InboxScreen(
    DecidePart, ClaimPart, SourcePart, BatchPart, HistoryPart, DetailPart, StyledOnMount
):
    """Pending actions (default) or the history, with the selected action's details."""

    COMMANDS: ClassVar[set[Any]] = {InboxCommands}

    BINDINGS: ClassVar[list[Any]] = [
        Binding("a", "approve", "Approve", id="inbox.approve"),
        Binding("r", "reject", "Reject", id="inbox.reject"),
        Binding("space", "toggle_select", "Select", id="inbox.select"),
        Binding("ctrl+a", "select_all", "Select all", id="inbox.select_all", show=False),
        Binding(
            "shift+down", "extend_selection(1)", "Select down", id="inbox.select_down", show=False
        ),
        Binding("shift+up", "extend_selection(-1)", "Select up", id="inbox.select_up", show=False),
        Binding(
            "asterisk",
            "invert_selection",
            "Invert selection",
            id="inbox.invert_selection",
            show=False,
        ),
        Binding("h", "toggle_history", "History", id="inbox.history"),
        Binding("e", "edit", "Edit args", id="inbox.edit"),
        Binding("E", "expand", "Expand all", id="inbox.expand"),
        Binding("g", "allow_like_this", "Allow like this", id="inbox.allow"),
        Binding("G", "grants", "Grants", id="inbox.grants"),
        Binding("o", "open_source", "Open source", id="inbox.open_source", show=False),
        Binding("x", "export", "Export", id="inbox.export"),
        Binding("d", "read_on", "Read on", id="inbox.read_on"),
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

    def __init__(self) -> None:
        super().__init__()
        self.actions: list[Action] = []
        self.shown: list[Action] = []  # the rows after the history filters
        self.version: int | None = None
        self.next_due = float("inf")
        self.polling = False
        self._again = False  # a read was asked for while one was running: read again after it
        self._announced: int | None = None  # the last version the store watch announced
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
        self.tool_deferred = False
        self.listed_total: int | None = None
        self._first_painted = threading.Event()
        self._mounted = False
        self._early: list[tuple[Listing | StoreError | None, bool]] = []

    # -- layout -------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        # The store is read while the widgets are built and styled: its first page is often in
        # before the first frame, which then shows it (instead of an empty list, then it).
        self._tick()
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
        self._mounted = True
        for result, final in self._early:
            self._loaded(result, final)  # read before the widgets were there (see compose)
        self._early.clear()

    def on_resize(self) -> None:
        self._show_columns()

    def on_unmount(self) -> None:
        self._first_painted.set()  # a reading thread still waiting for a first frame goes on

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
        self._announced = changed.version
        if self.polling:
            return  # the read under way is held against this version when it is in
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
            listed = self._first_page(store, statuses, mode) if known is None else None
            if listed is None:
                # Live approvals verified, quorums said: the decisions service's, not the store's.
                listed = decisions.annotate(store, store.list_actions(statuses=statuses))
            result: Listing | StoreError = Listing(listed, version, mode, readers_of(store, mode))
        except StoreError as exc:  # StoreBusy included: shown, and retried on the next tick
            result = exc
        except Exception as exc:  # a damaged row, say: said, and the next tick tries again
            result = StoreError(f"{store_path(self.app)}: cannot read the store: {exc!r}")
        try:
            self.app.call_from_thread(self._loaded, result)
        except RuntimeError:
            pass  # the app is closing

    def _first_page(
        self, store: ApprovalStore, statuses: tuple[str, ...], mode: str
    ) -> list[Action] | None:
        """In the reading thread, on opening: the newest FIRST_PAGE rows and how many there
        are, shown at once; once that frame is painted, the tool of its first action (the
        manifest model's import is the first frame's largest cost, so it follows it). Returns
        the whole list when the page holds all of it, else None: the rest is read next."""
        page = decisions.annotate(store, store.list_actions(statuses=statuses, limit=FIRST_PAGE))
        whole = len(page) < FIRST_PAGE
        total = len(page) if whole else store.count_actions(statuses)
        first = Listing(page, None, mode, readers_of(store, mode), total)
        self.app.call_from_thread(self._loaded, first, False)
        # Nothing competes with that frame for the interpreter (FIRST_PAINT_WAIT at most).
        self._first_painted.wait(FIRST_PAINT_WAIT)
        if page:
            self._read_first_tool(page[0])
        return page if whole else None

    def _first_page_painted(self) -> None:
        self._first_painted.set()  # the reading thread goes on (_poll)

    def _read_first_tool(self, action: Action) -> None:
        """In the reading thread: the tool behind the first page's first action, its manifest
        validated (importing the model here, after the first frame, not on the UI thread); then
        the details show it (DetailPart.tool_arrived)."""
        try:
            tool_info(action, app_catalog(self))
        except Exception:
            pass  # read again on the UI thread, which says what is wrong with it
        self.app.call_from_thread(self._first_tool_read)

    def _first_tool_read(self) -> None:
        self.tool_arrived()
        # Live from now on (a no-op when it runs already): started after the tool part, which
        # it would compete with (a change meanwhile is announced by its first look).
        pending_watch(self.app).start()

    def _loaded(self, result: Listing | StoreError | None, final: bool = True) -> None:
        if not self._mounted:
            self._early.append((result, final))  # shown by on_mount, once the widgets are
            return
        if not final:
            # The first page's reading thread waits for this frame (also when it shows no
            # page: an error, a mode changed meanwhile) before it reads on.
            self.call_after_refresh(self._first_page_painted)
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
                safe_line(
                    ("store busy, retrying… " if busy else "store unavailable: ") + str(result)
                )
            )
            self._stale = True  # read again at the next change (the watch retries meanwhile)
            pending_watch(self.app).start()
            return
        if self.busy or self.error:
            self.busy, self.error = False, None
            status.set_class(False, "-busy")
        if result is None:
            return
        if result.mode != self.mode:
            self._tick()  # the mode changed while reading: read again
            return
        self.actions = result.actions
        self.list.readers = self.list.readers if result.readers is None else result.readers
        if result.mode == "history":
            # By the "when" column (the store lists by when each was held).
            self.actions = sorted(result.actions, key=last_change, reverse=True)
        if not final:  # the first page: shown now, the tool and the rest follow
            self.tool_deferred = True
            self.listed_total = result.total
            self._apply_filter()
            if result.total is not None and result.total > len(result.actions):
                status.update(
                    f"{len(result.actions)} newest of {result.total:,} shown, reading the rest…"
                )
            return
        version = result.version
        self.version = version
        self.loaded = True
        self.load_count += 1
        self.listed_total = None  # every row is listed: the list counts itself
        self._apply_filter()
        self.tool_arrived()  # when the first page's tool was not in yet (a no-op otherwise)
        self._update_status()
        # After the first list is in (it goes first): the app may not have started its watch
        # yet, or at all in a bare host. Starting twice is a no-op.
        pending_watch(self.app).start()
        announced = self._announced
        if announced is not None and version is not None and announced > version:
            self._tick()  # something committed while this read ran: read it

    def _apply_filter(self) -> None:
        rows = self.filtered(self.actions)
        self.shown = rows
        self.list.set_actions(rows)
        self.set_class(not rows and self.mode == "pending", "-empty")
        self._update_title()
        if not rows:
            self._show_detail(None)
        elif (
            self.current is None
            or self.list.current is None
            or (self.list.current.token != self.current.token)
            or self.list.current != self.current
        ):
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

    @on(DetailPane.LaidOut)
    def _detail_relaid(self, event: DetailPane.LaidOut) -> None:
        event.stop()
        self._check_seen()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("edit", "allow_like_this", "toggle_select", "extend_selection"):
            return self.mode == "pending"  # nothing to edit, allow or select in the history
        if action in ("approve", "reject", "select_all", "invert_selection"):
            if self.mode != "pending":
                return False
            if self.has_selection() or action in ("select_all", "invert_selection"):
                return True  # the batch dialog lists every selected action before deciding
            if action == "approve":
                # Never a silent key: before everything was shown, `a` says what is left to read
                # (a disabled binding would do nothing at all).
                return True if self.can_approve or self.current is not None else None
            return True if self.current is not None else None
        if action == "export":
            return self.mode == "history"
        return True

    # -- keys ---------------------------------------------------------------------------------

    def action_read_on(self) -> None:
        """d reads the details on, a page at a time, wherever the focus is (a pager's key):
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

    def action_grants(self) -> None:
        from patch_tui.ui.inbox.grants_view import GrantsScreen

        self.app.push_screen(GrantsScreen())

    def action_close(self) -> None:
        if self.mode == "pending" and self.clear_batch():
            return  # esc clears a selection first, as in a file manager
        if self.mode == "history":
            self.mode = "pending"  # as the footer says: back, to the pending list
            return
        if len(self.app.screen_stack) > 2 or desk_editor(self.app) is not None:
            self.dismiss()
        else:
            self.app.exit()
