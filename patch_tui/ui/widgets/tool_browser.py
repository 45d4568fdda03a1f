"""The tool browser: every tool of the toolbox with its version and lint state, filtered as you
type. It reads and lints the files in a thread worker; new / rename / duplicate / delete are
requests (`ToolBrowser.Action`) the editor carries out, since it knows about unsaved changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Input, OptionList
from textual.widgets.option_list import Option

from patch_tui.core.text_safety import visible
from patch_tui.core.toolbox import Toolbox


@dataclass(frozen=True)
class ToolEntry:
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


def scan_tool(path: Path) -> ToolEntry:
    """Read and lint one tool for the list (never raises: an unreadable file is an error row)."""
    from patch_tui.core import toolfile
    from patch_tui.core.lint.engine import lint_toolfile

    try:
        tf = toolfile.read(str(path))
    except OSError as exc:
        return ToolEntry(path, path.stem, "?", f"unreadable: {exc.strerror}", 1, 0)
    data = tf.data if isinstance(tf.data, dict) else {}
    diags = lint_toolfile(tf)
    return ToolEntry(
        path,
        str(data.get("name") or path.stem),
        str(data.get("version") or "?"),
        str(data.get("description") or ""),
        sum(d.severity == "error" for d in diags),
        sum(d.severity == "warning" for d in diags),
    )


class ToolList(OptionList):
    BINDINGS = [
        Binding("n", "request('new')", "New", id="browser.new"),
        Binding("r", "request('rename')", "Rename", id="browser.rename"),
        Binding("c", "request('duplicate')", "Copy", id="browser.duplicate"),
        Binding("delete,x", "request('delete')", "Delete", id="browser.delete"),
    ]

    def action_request(self, action: str) -> None:
        browser = self.parent
        if isinstance(browser, ToolBrowser):
            browser.request(action)


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
        self.entries: list[ToolEntry] = []
        self.dirty_path: Path | None = None

    def compose(self) -> ComposeResult:
        yield Input(placeholder="filter tools…", id="browser-filter", compact=True)
        yield ToolList(id="browser-list")

    def on_mount(self) -> None:
        self.border_title = "Tools"
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self._render_list())
        # After the first paint: reading and linting every tool is not needed to show one.
        self.call_after_refresh(self.refresh_tools)

    # -- data ---------------------------------------------------------------------------------

    def refresh_tools(self) -> None:
        """Re-read the toolbox (after a save, or a change on disk)."""
        self._scan()

    @work(thread=True, exclusive=True, group="browser", exit_on_error=False)
    def _scan(self) -> None:
        entries = [scan_tool(p) for p in self.toolbox.tool_paths()]
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

    def _matches(self, entry: ToolEntry, needle: str) -> bool:
        if not needle:
            return True
        hay = f"{entry.name} {entry.path.name} {entry.description}".lower()
        return all(part in hay for part in needle.lower().split())

    def _render_list(self, follow_current: bool = False) -> None:
        needle = self.query_one("#browser-filter", Input).value.strip()
        options = self.query_one(ToolList)
        keep = options.highlighted_option.id if options.highlighted_option else None
        variables = self.app.theme_variables
        shown: list[Option] = []
        for e in self.entries:
            if not self._matches(e, needle):
                continue
            colour = variables.get(
                "error" if e.errors else "warning" if e.warnings else "success", ""
            )
            # One line per tool, fitted by hand: an OptionList wraps long prompts.
            width = max(self.query_one(ToolList).content_size.width - 1, 12)
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
        self._render_list()

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
        # Down from the filter box goes into the list, as people expect.
        if event.key == "down" and self.query_one("#browser-filter", Input).has_focus:
            event.stop()
            self.query_one(ToolList).focus()

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
