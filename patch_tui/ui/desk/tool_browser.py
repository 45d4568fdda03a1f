"""The tool browser: every tool of the toolbox with its version and lint state, filtered as you
type. It reads and lints the files in a thread worker; new / rename / duplicate / delete are
requests (`ToolBrowser.Action`) the editor carries out, since it knows about unsaved changes.

Typing is for filtering: a printable key pressed in the list goes to the filter box (and `/`
focuses it), so the list's commands sit on keys nobody types by accident (ctrl combinations and
Delete; ctrl+n, new tool, is the desk's; the palette has them all). A letter that ran Rename or Delete was a trap (issue 12).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Input, OptionList
from textual.widgets.input import Selection
from textual.widgets.option_list import Option

from patch_tui.runtime.toolbox import Toolbox
from patch_tui.ui.first_frame import after_first_frame
from patch_tui.ui.services import lint_counts, maybe_services
from patch_tui.untrusted.text_safety import visible

if TYPE_CHECKING:  # the catalog reads the tools after the first frame (`refresh_tools`)
    from patch_tui.runtime.catalog import ToolCatalog


class ToolEntry(NamedTuple):
    """One row of the list. (A named tuple, not a frozen dataclass: a fifth of the import
    cost, which the desk's first frame pays.)"""

    path: Path
    name: str
    version: str
    description: str
    errors: int
    warnings: int

    @property
    def state(self) -> str:
        if self.errors:
            return f"✗{self.errors}"
        if self.warnings:
            return f"!{self.warnings}"
        return "✓"


def scan_tool(catalog: ToolCatalog, path: Path) -> ToolEntry:
    """One tool for the list, from the shared catalog (read and linted once per file version;
    never raises: an unreadable file is an error row)."""
    tool = catalog.read(path)
    if tool.tool is None:
        return ToolEntry(path, path.stem, "?", f"unreadable: {tool.error}", 1, 0)
    errors, warnings = catalog.lint_counts(tool)
    return ToolEntry(path, tool.name, tool.version, tool.description, errors, warnings)


class ToolList(OptionList):
    BINDINGS = [
        Binding("ctrl+e", "request('rename')", "Rename", id="browser.rename"),
        Binding("ctrl+d", "request('duplicate')", "Copy", id="browser.duplicate"),
        Binding("delete", "request('delete')", "Delete", id="browser.delete"),
        Binding("slash", "filter", "Filter", id="browser.filter"),
    ]

    def action_request(self, action: str) -> None:
        browser = self.parent
        if isinstance(browser, ToolBrowser):
            browser.request(action)

    def action_filter(self) -> None:
        browser = self.parent
        if isinstance(browser, ToolBrowser):
            browser.focus_filter()

    def on_key(self, event: events.Key) -> None:
        # A printable key is the start of a filter, never a command.
        if event.is_printable and event.character and event.character != "/":
            browser = self.parent
            if isinstance(browser, ToolBrowser):
                event.stop()
                event.prevent_default()
                browser.focus_filter(event.character)


class ToolBrowser(Vertical):
    """The list of tools, with a filter box."""

    class Selected(Message):
        def __init__(self, path: Path) -> None:
            self.path = path
            super().__init__()

    class Action(Message):
        """new / rename / duplicate / delete (path is None for new)."""

        def __init__(self, action: str, path: Path | None) -> None:
            self.action = action
            self.path = path
            super().__init__()

    class Scanned(Message):
        def __init__(self, entries: list[ToolEntry]) -> None:
            self.entries = entries
            super().__init__()

    def __init__(self, toolbox: Toolbox, current: Path | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.toolbox = toolbox
        self.current = current
        self._catalog: ToolCatalog | None = None
        self.entries: list[ToolEntry] = []
        self.dirty_path: Path | None = None

    def compose(self) -> ComposeResult:
        # No select-all on focus: a key typed in the list lands at the end of the filter.
        yield Input(
            placeholder="filter tools… ( / )",
            id="browser-filter",
            compact=True,
            select_on_focus=False,
        )
        yield ToolList(id="browser-list")

    def on_mount(self) -> None:
        self.border_title = "Tools"
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self._render_list())
        # After the first frame: reading and linting every tool is not needed to show one.
        after_first_frame(self, self.refresh_tools)

    # -- data ---------------------------------------------------------------------------------

    @property
    def catalog(self) -> ToolCatalog:
        """The app's catalog when it is of this toolbox (shared with the inbox), else our own."""
        svc = maybe_services(self.app)
        if svc is not None and svc.toolbox is self.toolbox:
            return svc.catalog
        if self._catalog is None:
            from patch_tui.runtime.catalog import ToolCatalog

            self._catalog = ToolCatalog(self.toolbox, lint=lint_counts)
        return self._catalog

    def refresh_tools(self) -> None:
        """Re-read the toolbox (after a save, or a change on disk)."""
        self._scan()

    @work(thread=True, exclusive=True, group="browser", exit_on_error=False)
    def _scan(self) -> None:
        from patch_tui.runtime.toolbox import ToolboxError

        try:
            paths = self.toolbox.tool_paths()
        except ToolboxError as exc:  # the folder became unreadable: say so, keep the list
            self.app.call_from_thread(
                self.notify, str(exc), severity="error", title="Toolbox", markup=False
            )
            return
        catalog = self.catalog
        entries = [scan_tool(catalog, p) for p in paths]
        self.post_message(self.Scanned(entries))

    @on(Scanned)
    def _scanned(self, event: Scanned) -> None:
        event.stop()
        self.entries = event.entries
        self._render_list()

    def update_entry(self, entry: ToolEntry) -> None:
        """Show a fresh lint state for one tool (the open one, after each lint)."""
        for i, e in enumerate(self.entries):
            if e.path == entry.path:
                if e == entry:
                    return
                self.entries[i] = entry
                break
        else:
            return
        self._render_list()

    def set_current(self, path: Path | None, dirty: bool = False) -> None:
        moved = path != self.current
        changed = moved or (self.dirty_path == path) != dirty
        self.current = path
        self.dirty_path = path if dirty else None
        if changed:
            self._render_list(follow_current=moved)

    # -- rendering ------------------------------------------------------------------------

    def _rank(self, entry: ToolEntry, needle: str) -> int | None:
        """How well a tool matches the filter: 0 on its name, 1 on its description only, None
        when it does not match (a name match is what people look for: it comes first)."""
        parts = needle.lower().split()
        if not parts:
            return 0
        name = f"{entry.name} {entry.path.name}".lower()
        if all(part in name for part in parts):
            return 0
        hay = f"{name} {entry.description}".lower()
        return 1 if all(part in hay for part in parts) else None

    def focus_filter(self, text: str = "") -> None:
        """Focus the filter box, adding `text` (the key typed in the list) at its end."""
        box = self.query_one("#browser-filter", Input)
        box.focus()
        box.selection = Selection.cursor(len(box.value))
        if text:
            box.insert_text_at_cursor(text)

    def clear_filter(self) -> None:
        box = self.query_one("#browser-filter", Input)
        if box.value:
            with box.prevent(Input.Changed):
                box.value = ""
            self._render_list()

    def _render_list(self, follow_current: bool = False) -> None:
        needle = self.query_one("#browser-filter", Input).value.strip()
        options = self.query_one(ToolList)
        keep = options.highlighted_option.id if options.highlighted_option else None
        variables = self.app.theme_variables
        shown: list[Option] = []
        ranked = [
            (rank, i, e)
            for i, e in enumerate(self.entries)
            if (rank := self._rank(e, needle)) is not None
        ]
        for _rank, _i, e in sorted(ranked, key=lambda item: item[:2]):
            colour = variables.get(
                "error" if e.errors else "warning" if e.warnings else "success", ""
            )
            # One line per tool, fitted by hand: an OptionList wraps long prompts.
            # The width inside the scrollbar's gutter (kept stable in app.tcss).
            width = max(options.scrollable_content_region.width - 1, 12)
            mark = "●" if e.path == self.dirty_path else " "
            version = visible(e.version)[:10]
            room = width - len(version) - len(e.state) - 4
            name = visible(e.name)
            if len(name) > room:
                name = name[: max(room - 1, 1)] + "…"
            label = Text(no_wrap=True)
            label.append(mark + " ", style=variables.get("warning", ""))
            label.append(name, style="bold" if e.path == self.current else "")
            label.append(" " * max(room - len(name), 0) + " ")
            label.append(version, style="dim")
            label.append(" ")
            label.append(e.state, style=colour)
            shown.append(Option(label, id=str(e.path)))
        options.clear_options()
        options.add_options(shown)
        current = str(self.current) if self.current else None
        target = current if follow_current or keep is None else keep
        if target is not None:
            for index, option in enumerate(shown):
                if option.id == target:
                    options.highlighted = index
                    break

    def on_resize(self) -> None:
        if self.entries or self.query_one(ToolList).option_count:
            self._render_list()  # fitted to the width (nothing to fit before the first scan)

    @on(Input.Changed, "#browser-filter")
    def _filter(self, event: Input.Changed) -> None:
        event.stop()
        self._render_list()
        options = self.query_one(ToolList)
        if options.option_count:
            options.highlighted = 0

    @on(Input.Submitted, "#browser-filter")
    def _filter_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        options = self.query_one(ToolList)
        if options.option_count:
            option = options.get_option_at_index(options.highlighted or 0)
            if option.id:
                self.post_message(self.Selected(Path(option.id)))

    def on_key(self, event: Any) -> None:
        box = self.query_one("#browser-filter", Input)
        if not box.has_focus:
            return
        # Down from the filter box goes into the list, as people expect; Escape clears the
        # filter, then goes back to the list.
        if event.key == "down" or (event.key == "escape" and not box.value):
            event.stop()
            self.query_one(ToolList).focus()
        elif event.key == "escape":
            event.stop()
            box.value = ""

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id:
            self.post_message(self.Selected(Path(event.option.id)))

    def request(self, action: str) -> None:
        options = self.query_one(ToolList)
        option = options.highlighted_option
        path = Path(option.id) if option is not None and option.id else None
        if action != "new" and path is None:
            self.notify("No tool selected", severity="warning")
            return
        self.post_message(self.Action(action, path if action != "new" else None))
