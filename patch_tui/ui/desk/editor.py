"""The authoring desk: tool browser, manifest form, source pane and lint panel.

One source of truth: the text in the source pane. The form is a view of its parsed frontmatter;
a form edit rewrites only the frontmatter lines that changed, as one TextArea edit (undo works),
built on the last parse without parsing again; a source edit re-parses and lints after a short
debounce in a thread worker, then refreshes the form without touching the focused field.

What the desk knows about the open file (text, saved text, disk hash, BOM, last parse, lint
generation) is a `ToolBuffer` (`patch_tui/desk/buffer.py`), testable without a screen; this
screen wires it to the widgets. Its other parts: `conflicts.py` (the file changed on disk),
`linting.py` (a lint's result into the panel, form and list), `tool_actions.py` (new,
rename, duplicate, delete), `palette.py` (commands), `layout.py` (what
fits at a given size, kept in the `desk_layout` reactive).

Saving never loses work: the sha256 of the bytes loaded is compared with the disk's before every
save (`Toolbox.save_tool`), a change on disk with unsaved edits asks (Reload / Keep mine / Diff),
and switching tools or quitting with unsaved edits asks first.

Hooks for other parts of the app:
- `on_file_changed_outside(path)` / `on_tools_changed()`: the file watcher calls these;
- `EditorScreen.Linted`: posted after each lint (benchmarks and tests wait for it);
- `EditorScreen.current_path`, `.toolbox`, `.source_text`: what is open.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.reactive import reactive
from textual.screen import Screen
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Header, Label, Static, TextArea

from patch_tui.desk.buffer import STRUCTURE_CODES, ToolBuffer, lint_toolfile, structure_broken
from patch_tui.format import toolfile
from patch_tui.runtime.toolbox import Toolbox, ToolboxError
from patch_tui.ui.commands import CommandList
from patch_tui.ui.desk.conflicts import ChangeBanner, ConflictHandling
from patch_tui.ui.desk.file_actions import FileActions
from patch_tui.ui.desk.layout import BROWSER_MIN_WIDTH, SPLIT_MIN_WIDTH, WIDE_WIDTH, DeskLayout
from patch_tui.ui.desk.lint_panel import LintPanel
from patch_tui.ui.desk.linting import LintResults
from patch_tui.ui.desk.manifest_form import ManifestForm
from patch_tui.ui.desk.palette import desk_commands
from patch_tui.ui.desk.problems import ProblemActions, is_template_text, problem_detail
from patch_tui.ui.desk.source_pane import POST_PAINT_DELAY, SourceArea
from patch_tui.ui.desk.tool_actions import ToolActions
from patch_tui.ui.desk.tool_browser import ToolBrowser
from patch_tui.ui.desk.view_actions import ViewActions
from patch_tui.ui.first_frame import StyledOnMount, after_first_frame
from patch_tui.ui.widgets.key_bar import KeyBar
from patch_tui.untrusted.text_safety import visible

if TYPE_CHECKING:  # lint's types load with the first lint, after the first frame
    from patch_tui.lint.diagnostic import Diagnostic

__all__ = [
    "BROWSER_MIN_WIDTH",
    "LINT_DEBOUNCE",
    "SPLIT_MIN_WIDTH",
    "STRUCTURE_CODES",
    "WIDE_WIDTH",
    "ChangeBanner",
    "EditorCommands",
    "EditorScreen",
]


# Quiet time after a keystroke before the file is re-parsed and linted (issue: <= 150 ms).
LINT_DEBOUNCE = 0.12


class EditorScreen(
    LintResults,
    ConflictHandling,
    ToolActions,
    FileActions,
    ProblemActions,
    ViewActions,
    StyledOnMount,
    Screen[None],
):
    """The main screen."""

    # Priority: the desk's keys work in every pane, whatever the focused widget binds itself
    # (TextArea takes F6 and F7 for "select line" and "select all", which left New version
    # and $EDITOR dead in the source pane while F1 listed them as working everywhere).
    BINDINGS = [
        # Tab: field to field in the form, pane to pane elsewhere, before the next key is read;
        # Esc leaves a pane at once, not a priority so a dialog's own Esc comes first.
        Binding("tab", "cycle_focus(1)", "Next pane", id="desk.next_pane", priority=True),
        Binding(
            "shift+tab",
            "cycle_focus(-1)",
            "Previous pane",
            id="desk.previous_pane",
            show=False,
            priority=True,
        ),  # fmt: skip
        Binding("escape", "leave_pane", "Leave pane", id="desk.leave_pane", show=False),
        Binding("ctrl+s,f2", "save", "Save", id="desk.save", priority=True),
        Binding("f6", "save_version", "New version", id="desk.new_version", priority=True),
        Binding("ctrl+b,f3", "toggle_browser", "Tools", id="desk.browser", priority=True),
        Binding("ctrl+t,f4", "toggle_view", "Form/Source", id="desk.toggle_view", priority=True),
        Binding("ctrl+l,f5", "focus_lint", "Lint", id="lint.focus", priority=True),
        Binding("f8", "apply_fix", "Fix", id="lint.fix_here", priority=True),
        Binding("ctrl+o,f7", "open_in_editor", "$EDITOR", id="desk.open_editor", priority=True),
        Binding("f9", "copy_source", "Copy", id="desk.copy", show=False, priority=True),
        Binding("f10", "history", "History", id="desk.history", show=False, priority=True),
        Binding("ctrl+n", "new_tool", "New tool", id="desk.new_tool", show=False, priority=True),
        Binding("alt+z", "toggle_wrap", "Wrap", id="desk.wrap", show=False, priority=True),
    ]

    AUTO_FOCUS = "#browser-list"

    dirty: reactive[bool] = reactive(False)
    # What is shown (see layout.py); every change redraws the panes (`watch_desk_layout`).
    desk_layout: reactive[DeskLayout] = reactive(DeskLayout, init=False)

    class Linted(Message):
        """The open tool was re-parsed and linted (`text` is what was linted)."""

        def __init__(self, diagnostics: list[Diagnostic], text: str) -> None:
            self.diagnostics = diagnostics
            self.text = text
            super().__init__()

    def __init__(self, toolbox: Toolbox, path: Path | None = None) -> None:
        super().__init__()
        self.toolbox = toolbox
        self.buffer = ToolBuffer()
        self._initial_path = path
        self._lint_timer: Timer | None = None
        # Form edits that came while the text was ahead of the last parse: applied on the next.
        self._pending_form_edits: list[tuple[tuple[str | int, ...], Any]] = []
        self.lint_count = 0
        self._select_template_of: Path | None = None

    # -- what the buffer knows, under the names the rest of the app reads ------------------------

    @property
    def current_path(self) -> Path | None:
        return self.buffer.path

    @property
    def loaded_sha(self) -> str | None:
        """sha256 of the bytes on disk when loaded or saved."""
        return self.buffer.disk_sha

    @property
    def saved_text(self) -> str:
        return self.buffer.saved_text

    @property
    def read_only_reason(self) -> str | None:
        return self.buffer.read_only_reason

    @property
    def tf(self) -> toolfile.ToolFile | None:
        return self.buffer.tf

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return self.buffer.diagnostics

    @property
    def narrow(self) -> bool:
        return self.desk_layout.narrow

    # -- layout -------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        # The tool shown first is read before the widgets are built: the form is built with
        # its values and input cards, and the first frame shows them (on_mount shows the rest).
        first = self._first_tool()
        if first is not None:
            raw = self._read_tool(first)
            if raw is not None:
                self._load_buffer(first, raw)
        yield Header(icon="◆")
        yield ChangeBanner(id="banner", classes="banner")
        with Horizontal(id="main"):
            yield ToolBrowser(self.toolbox, id="browser")
            with Vertical(id="work"):
                yield Static("", id="view-tabs")
                with Horizontal(id="panes"):
                    yield ManifestForm(
                        self._manifest_shown(), first_lines=self._form_fold(), id="form"
                    )
                    yield SourceArea(
                        "",
                        id="source",
                        show_line_numbers=True,
                        tab_behavior="focus",  # Tab is the desk's: ViewActions.action_cycle_focus
                        soft_wrap=True,
                    )
                yield Label("No tool open: press ctrl+n to create one.", id="empty")
                yield LintPanel(id="lint")
                yield Static("", id="lint-detail")
        yield KeyBar()

    def _say(self, message: str, **kwargs: Any) -> None:
        # Messages carry file names and OS errors: never read them as markup.
        self.notify(message, markup=False, **kwargs)

    @property
    def source(self) -> SourceArea:
        return self.query_one("#source", SourceArea)

    @property
    def form(self) -> ManifestForm:
        return self.query_one("#form", ManifestForm)

    @property
    def lint_panel(self) -> LintPanel:
        return self.query_one("#lint", LintPanel)

    @property
    def browser(self) -> ToolBrowser:
        return self.query_one("#browser", ToolBrowser)

    @property
    def source_text(self) -> str:
        return self.source.text

    def on_mount(self) -> None:
        self.form.border_title = "Manifest"
        self.source.border_title = "Source"
        self.lint_panel.border_title = "Problems"
        # Set quietly, then drawn once: the watcher runs only for later changes.
        self.set_reactive(
            EditorScreen.desk_layout, self.desk_layout.for_size(self.size.width, self.size.height)
        )
        if self.buffer.path is not None:  # read in compose; showing it hides the banner and
            self._show_loaded_tool(dropped=False, first=True)  # applies the view (once)
            return
        self._hide_banner()
        self._apply_view()
        if self._initial_path is None:  # compose found no tool to open
            self._show_empty(True)

    def _first_tool(self) -> Path | None:
        """The tool the desk opens on: the one asked for, else the toolbox's first."""
        if self._initial_path is not None:
            return self._initial_path
        try:
            tools = self.toolbox.tool_paths()
        except ToolboxError as exc:  # the folder became unreadable since start-up
            self._say(str(exc), severity="error")
            tools = []
        self._initial_path = tools[0] if tools else None
        return self._initial_path

    def _form_fold(self) -> int:
        """How many lines of the form the first frame may show, counted with the problems
        panel at its smallest (a clean lint shrinks it a moment later): what is below them
        is built right after that frame, before anyone can scroll to it."""
        width, height = self.app.size
        return DeskLayout(clean=True).for_size(width, height).form_lines(height)

    def _manifest_shown(self) -> dict[str, Any]:
        """The manifest the form shows for the buffer (`_load_form`): none when it is broken."""
        tf = self.buffer.tf
        if tf is None or structure_broken(tf) or not isinstance(tf.data, dict):
            return {}
        return tf.data

    def on_resize(self, event: Any) -> None:
        self.desk_layout = self.desk_layout.for_size(event.size.width, event.size.height)

    def _set_layout(self, **changes: Any) -> None:
        self.desk_layout = replace(self.desk_layout, **changes)

    def watch_desk_layout(self) -> None:
        self._apply_view()

    def _apply_view(self) -> None:
        """Show what fits. Inline styles rather than classes on the screen: a class change on
        the screen restyles every widget of the form, which is what makes start-up slow."""
        layout = self.desk_layout
        self.form.display = layout.shows_form
        self.source.display = layout.shows_source
        self.query_one("#panes").display = not layout.empty
        self.query_one("#empty").display = layout.empty
        tabs_box = self.query_one("#view-tabs", Static)
        tabs_box.display = not layout.empty and layout.narrow
        browser = self.browser
        browser.display = layout.shows_browser
        browser.styles.width = layout.browser_width
        self.lint_panel.styles.height = layout.lint_height
        self.query_one("#lint-detail").display = not layout.short
        self.query_one(Header).display = not layout.short
        tabs = Text()
        for name, label in (("form", " Manifest "), ("source", " Source ")):
            tabs.append(label, style="reverse bold" if layout.view == name else "dim")
            tabs.append(" ")
        tabs.append(" F4 switch", style="dim")
        tabs_box.update(tabs)
        self._focus_something_shown()

    def _focus_something_shown(self) -> None:
        """A hidden widget never keeps the focus (keys would act on what nobody sees: F3 hid the
        list and Delete asked to delete a tool that was not the open one): move it to the pane
        on show."""
        focused = self.focused
        if focused is None or self._shown(focused):
            return
        preferred = self.source if self.desk_layout.view == "source" else self.form
        for widget in (preferred, self.form, self.source):
            if self._shown(widget):
                # The pane itself, not a field in it: a stray key typed next edits nothing.
                widget.focus()
                return
        if self._shown(self.browser):
            self.browser.query_one("#browser-list").focus()
        else:
            self.lint_panel.focus()

    def _shown(self, widget: Widget) -> bool:
        node: Any = widget
        while node is not None and node is not self:
            if not getattr(node, "display", True):
                return False
            node = node.parent
        return True

    def _show_empty(self, empty: bool) -> None:
        if self.desk_layout.empty == empty:
            self._apply_view()  # as before: showing (not) empty always settles the focus
        self._set_layout(empty=empty)

    def watch_dirty(self, dirty: bool) -> None:
        self._update_title()
        if self.is_mounted:
            self.browser.set_current(self.current_path, dirty)

    def _update_title(self) -> None:
        if self.current_path is None:
            self.sub_title = "no tool open"
            return
        mark = " ●" if self.dirty else ""
        ro = f" (read-only: {self.read_only_reason})" if self.read_only_reason else ""
        self.sub_title = f"{visible(self.current_path.name)}{mark}{ro}"

    # -- opening --------------------------------------------------------------------------

    def open_tool(self, path: Path) -> None:
        """Show a tool (no questions asked: callers check for unsaved edits first)."""
        path = Path(path)
        raw = self._read_tool(path)
        if raw is not None:
            self._show_loaded_tool(dropped=self._load_buffer(path, raw))

    def _read_tool(self, path: Path) -> bytes | None:
        try:
            return toolfile.read_bytes(path)  # a FIFO or a device is refused, never waited on
        except OSError as exc:
            self._say(f"Cannot open {path}: {exc.strerror or exc}", severity="error")
            return None

    def _load_buffer(self, path: Path, raw: bytes) -> bool:
        """Take a tool's bytes into the buffer; True when unsaved edits of another file were
        dropped for it."""
        buffer = self.buffer
        dropped = buffer.path is not None and buffer.path != path and buffer.dirty
        buffer.path = path
        buffer.load_bytes(raw)
        self._pending_form_edits.clear()
        return dropped

    def _show_loaded_tool(self, *, dropped: bool, first: bool = False) -> None:
        """Show the tool just loaded into the buffer. `dropped`: edits of the file shown before
        were dropped for it, so its row goes back to what is on disk (the lint of the unsaved
        text had put its name, version and marks there). `first`: the tool the desk opens on,
        whose lint starts as soon as the first frame is drawn."""
        self._show_empty(False)
        buffer = self.buffer
        path = buffer.path
        tf = buffer.tf
        assert tf is not None and path is not None
        self._hide_banner()
        source = self.source
        source.read_only = buffer.read_only_reason is not None
        with source.prevent(TextArea.Changed):
            source.load_text(buffer.text)
        self._load_form(tf, fresh=True)
        self.dirty = False
        self._update_title()
        self.browser.set_current(path, False)
        if dropped:
            self.browser.refresh_tools()
        self._clear_problems()
        if buffer.read_only_reason:
            buffer.diagnostics = lint_toolfile(tf)
            self.lint_panel.show(buffer.diagnostics)
        else:
            # After the first paint: the lint thread would compete with it for the GIL (and
            # a timer lets what else waits on that paint run first).
            buffer.invalidate_lint()
            if first:  # not after the new screen's settling frames, which can take a while
                after_first_frame(self, lambda: self.set_timer(POST_PAINT_DELAY, self._start_lint))
            else:
                self.call_after_refresh(self.set_timer, POST_PAINT_DELAY, self._start_lint)

    def _show_buffer_text(self) -> None:
        """The buffer's text changed under a read-only source (its lone \\r's ended): show it,
        editable now, and lint it."""
        source = self.source
        source.read_only = self.read_only_reason is not None
        with source.prevent(TextArea.Changed):
            source.load_text(self.buffer.text)
        self.dirty = self.buffer.dirty
        self._update_title()
        self._start_lint()

    def _clear_problems(self) -> None:
        """Another file: none of the last one's problems stay on screen (the list, the detail
        line under it, the form's marks) until its own lint is in."""
        self.lint_panel.show([])
        self.query_one("#lint-detail", Static).update("")
        self.form.mark_problems({})

    @staticmethod
    def _structure_broken(tf: toolfile.ToolFile) -> bool:
        return structure_broken(tf)

    def _load_form(self, tf: toolfile.ToolFile, *, fresh: bool = False) -> None:
        """Show the manifest in the form. `fresh`: another file was opened, so a manifest the
        form still holds is not this file's "last good" one."""
        problems = [p for p in tf.problems if p.code in STRUCTURE_CODES]
        if problems or not isinstance(tf.data, dict):
            if fresh:
                self.form.forget()
            first = problems[0] if problems else None
            where = f"line {first.span.line}: " if first else ""
            message = first.message if first else "the frontmatter cannot be read"
            if self.form.data:
                error = f"Frontmatter does not parse ({where}{message}). Showing the last good manifest, read-only."
            else:
                # Never had one: say so plainly, and show no fields (empty fields with their
                # placeholders read like values).
                fixable = not self.read_only_reason and any(
                    d.code == toolfile.ProblemCode.MARKERS and d.fix is not None
                    for d in lint_toolfile(tf)
                )
                hint = (
                    " Write one in the source, or press F8 to insert a starter." if fixable else ""
                )
                error = f"No manifest: {where}{message}.{hint}"
            self.form.load(None, error=error)
        else:
            self.form.load(tf.data)

    # -- source -> form (debounced lint) ---------------------------------------------------

    @on(TextArea.Changed, "#source")
    def _source_changed(self, event: TextArea.Changed) -> None:
        if self.current_path is None:
            return
        # Exact, not just "something changed": an undo back to the saved text is clean again,
        # and a late Changed message can never mark a clean buffer dirty (a join: ~0.1 ms).
        self.buffer.text = self.source.text
        self.dirty = self.buffer.dirty
        # A lint still running is for older text now: its result must not reach the form.
        self.buffer.invalidate_lint()
        if self._lint_timer is not None:
            self._lint_timer.stop()
        self._lint_timer = self.set_timer(LINT_DEBOUNCE, self._start_lint)

    # -- form -> source -------------------------------------------------------------------

    @on(ManifestForm.Changed)
    def _form_changed(self, event: ManifestForm.Changed) -> None:
        event.stop()
        if self.read_only_reason:
            return
        self.buffer.text = self.source.text  # a source keystroke's Changed may still be queued
        self._form_edit(event.path, event.value)

    def _form_edit(self, path: tuple[str | int, ...], value: Any) -> None:
        """Write a form edit into the source: a frontmatter patch built on the last parse (no
        parse here, on the UI thread). Text typed in the source since that parse is parsed in
        the lint thread first, and the edit applied when it is back."""
        result = self.buffer.form_edit(path, value)
        if result.needs_parse:
            self._pending_form_edits.append((path, value))
            if self._lint_timer is not None:
                self._lint_timer.stop()
            self._start_lint()
        elif result.refused:
            self._say(result.refused, severity="warning")
        elif result.edit is not None:
            edit = result.edit
            # Keystrokes in one form field undo together; anything else is its own undo step.
            self.source.replace_as(("form", path), edit.text, edit.start, edit.end)
            self.call_after_refresh(self.source.show_line, edit.start[0])  # where it wrote

    # -- lint panel -------------------------------------------------------------------------

    @on(LintPanel.Jump)
    def _jump(self, event: LintPanel.Jump) -> None:
        event.stop()
        d = event.diagnostic
        if is_template_text(d) and d.field and self.select_template_text(d.field):
            return
        if not event.to_source and d.field and not self.form.stale:
            if self.form.widget_for(d.field) is not None:
                self._set_layout(view="form")
                if self.form.focus_field(d.field):
                    return
        self._set_layout(view="source")
        self._apply_view()
        span = d.span
        self.source.select_span(span.line, span.column, span.end_line, span.end_column)
        self.source.focus()

    @on(LintPanel.RowHighlighted, "#lint")
    def _lint_row(self, event: LintPanel.RowHighlighted) -> None:
        """The whole message of the highlighted problem (the table cuts long ones)."""
        d = self.lint_panel.current
        self.query_one("#lint-detail", Static).update("" if d is None else problem_detail(d))

    @on(LintPanel.ApplyFix)
    def _apply_fix_message(self, event: LintPanel.ApplyFix) -> None:
        event.stop()
        self.apply_fix(event.diagnostic)

    @on(ChangeBanner.Chosen)
    def _banner_button(self, event: ChangeBanner.Chosen) -> None:
        event.stop()
        self._banner_chosen(event.choice)

    # -- switching and managing tools -------------------------------------------------------

    @on(ToolBrowser.Selected)
    def _tool_selected(self, event: ToolBrowser.Selected) -> None:
        event.stop()
        if self.current_path is not None and event.path == self.current_path:
            self.source.focus() if self.desk_layout.view == "source" else self.form.focus()
            return
        self.confirm_discard(lambda: self._open_chosen(event.path))

    def _open_chosen(self, path: Path) -> None:
        # Found and opened: the filter has done its work (left, it hid the other tools).
        self.browser.clear_filter()
        self.open_tool(path)

    @on(ToolBrowser.Action)
    def _tool_action_message(self, event: ToolBrowser.Action) -> None:
        event.stop()
        self._tool_action(event.action, event.path)

    def _close_tool(self) -> None:
        self.buffer.close()
        with self.source.prevent(TextArea.Changed):
            self.source.load_text("")
        self.dirty = False
        self._clear_problems()
        self._show_empty(True)
        self._update_title()

    @on(SourceArea.HighlightingOff)
    def _highlighting_off(self, event: SourceArea.HighlightingOff) -> None:
        self._say(
            f"{event.lines} lines: syntax highlighting is off for a file this big", title="Source"
        )


class EditorCommands(CommandList):
    """Palette commands of the desk (the table is in palette.py)."""

    def _commands(self) -> list[tuple[str, str, Callable[[], Any]]]:
        screen = self.screen
        return desk_commands(screen) if isinstance(screen, EditorScreen) else []
