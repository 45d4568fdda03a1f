"""The authoring desk: tool browser, manifest form, source pane and lint panel.

One source of truth (docs/architecture.md): the text in the source pane. The form is a view of its parsed
frontmatter; a form edit rewrites only the frontmatter lines that changed, as one TextArea edit
(undo works); a source edit re-parses and lints after a short debounce in a thread worker, then
refreshes the form without touching the focused field.

Saving never loses work: the sha256 of the bytes loaded is compared with the disk's before every
save (`Toolbox.save_tool`), a change on disk with unsaved edits asks (Reload / Keep mine / Diff),
and switching tools or quitting with unsaved edits asks first.

Hooks for other parts of the app:
- `on_file_changed_outside(path)` / `on_tools_changed()`: the file watcher calls these;
- `EditorScreen.Linted`: posted after each lint (benchmarks and tests wait for it);
- `EditorScreen.current_path`, `.toolbox`, `.source_text`: what is open.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on, work
from textual.actions import SkipAction
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.screen import Screen
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Button, Header, Label, Static, TextArea

from patch_tui.format import toolfile
from patch_tui.lint.engine import Diagnostic, Edit, lint_toolfile
from patch_tui.runtime.toolbox import (
    FileChangedOnDisk,
    Toolbox,
    ToolboxError,
    file_sha256,
    sha256_bytes,
)
from patch_tui.ui.commands import CommandList
from patch_tui.ui.desk.lint_panel import LintPanel
from patch_tui.ui.desk.manifest_form import ManifestForm
from patch_tui.ui.desk.source_pane import POST_PAINT_DELAY, SourceArea
from patch_tui.ui.desk.tool_browser import ToolBrowser
from patch_tui.ui.dialogs.confirm import ChoiceModal, ConfirmModal, PromptModal
from patch_tui.ui.safe_text import safe_line
from patch_tui.ui.widgets.key_bar import KeyBar
from patch_tui.untrusted.text_safety import visible

# Quiet time after a keystroke before the file is re-parsed and linted (issue: <= 150 ms).
LINT_DEBOUNCE = 0.12
# Widths below which the layout folds: form and source share one pane, then the browser hides.
SPLIT_MIN_WIDTH = 120
BROWSER_MIN_WIDTH = 70
WIDE_WIDTH = 150  # from here the tool list takes its full width
STRUCTURE_CODES = toolfile.STRUCTURE_CODES


class ChangeBanner(Horizontal):
    """The non-blocking notice that the open file changed on disk under unsaved edits, with
    Reload / Keep mine / Diff. Its widgets are built the first time it shows: most sessions
    never need it, and every widget costs start-up time."""

    def show(self, text: Content, *, deleted: bool) -> None:
        if not self.children:
            self.mount_all(
                [
                    Static("", id="banner-text"),
                    Button("Reload", id="banner-reload", compact=True),
                    Button("Keep mine", id="banner-keep", compact=True),
                    Button("Diff", id="banner-diff", compact=True),
                ]
            )
        self.query_one("#banner-text", Static).update(text)
        # A deleted file has nothing to reload or diff against.
        self.query_one("#banner-reload", Button).display = not deleted
        self.query_one("#banner-diff", Button).display = not deleted
        self.add_class("-shown")


class EditorScreen(Screen[None]):
    """The main screen."""

    # Priority: the desk's keys work in every pane, whatever the focused widget binds itself
    # (TextArea takes F6 and F7 for "select line" and "select all", which left New version
    # and $EDITOR dead in the source pane while F1 listed them as working everywhere).
    BINDINGS = [
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
        # Tab in the form moves the focus before the next key is read (see action_form_tab).
        Binding("tab", "form_tab(1)", "Next field", id="desk.next_field", show=False, priority=True, system=True),
        Binding("shift+tab", "form_tab(-1)", "Previous field", id="desk.previous_field", show=False, priority=True, system=True),
    ]

    AUTO_FOCUS = "#browser-list"

    dirty: reactive[bool] = reactive(False)

    class Linted(Message):
        """The open tool was re-parsed and linted (`text` is what was linted)."""

        def __init__(self, diagnostics: list[Diagnostic], text: str) -> None:
            self.diagnostics = diagnostics
            self.text = text
            super().__init__()

    def __init__(self, toolbox: Toolbox, path: Path | None = None) -> None:
        super().__init__()
        self.toolbox = toolbox
        self.current_path: Path | None = None
        self._initial_path = path
        self.loaded_sha: str | None = None  # sha256 of the bytes on disk when loaded or saved
        self.saved_text = ""
        self.bom = False
        self.read_only_reason: str | None = None
        self.tf: toolfile.ToolFile | None = None
        self.diagnostics: list[Diagnostic] = []
        self._lint_text: str | None = None
        self._lint_generation = 0
        self._lint_timer: Timer | None = None
        self.lint_count = 0
        self._view = "form"  # which pane shows when they share one (narrow terminals)
        self._browser_wanted = True
        # Layout state (see _apply_view): terminal size classes and what is shown.
        self.narrow = self.tiny = self.compact = self.short = False
        self.empty = False
        self.clean = False

    # -- layout -------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Header(icon="◆")
        yield ChangeBanner(id="banner", classes="banner")
        with Horizontal(id="main"):
            yield ToolBrowser(self.toolbox, id="browser")
            with Vertical(id="work"):
                yield Static("", id="view-tabs")
                with Horizontal(id="panes"):
                    yield ManifestForm(id="form")
                    yield SourceArea(
                        "",
                        id="source",
                        show_line_numbers=True,
                        tab_behavior="indent",
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
        self.query_one("#banner").remove_class("-shown")
        self.form.border_title = "Manifest"
        self.source.border_title = "Source"
        self.lint_panel.border_title = "Problems"
        self._layout_for(self.size.width, self.size.height)
        path = self._initial_path
        if path is None:
            try:
                tools = self.toolbox.tool_paths()
            except ToolboxError as exc:  # the folder became unreadable since start-up
                self._say(str(exc), severity="error")
                tools = []
            path = tools[0] if tools else None
        if path is not None:
            self.open_tool(path)
        else:
            self._show_empty(True)

    def on_resize(self, event: Any) -> None:
        self._layout_for(event.size.width, event.size.height)

    def _layout_for(self, width: int, height: int) -> None:
        self.narrow = width < SPLIT_MIN_WIDTH
        self.tiny = width < BROWSER_MIN_WIDTH
        self.compact = height < 30
        self.short = height < 20
        self._apply_view()

    def _apply_view(self) -> None:
        """Show what fits. Inline styles rather than classes on the screen: a class change on
        the screen restyles every widget of the form, which is what makes start-up slow."""
        shown = not self.empty
        narrow = self.narrow
        self.form.display = shown and (not narrow or self._view == "form")
        self.source.display = shown and (not narrow or self._view == "source")
        self.query_one("#panes").display = shown
        self.query_one("#empty").display = not shown
        tabs_box = self.query_one("#view-tabs", Static)
        tabs_box.display = shown and narrow
        browser = self.browser
        browser.display = self._browser_wanted and not self.tiny
        # The source gets the room: the list is slimmer until the terminal is really wide.
        browser.styles.width = 24 if narrow else 28 if self.size.width < WIDE_WIDTH else 30
        lint = self.lint_panel
        lint.styles.height = 3 if self.clean else 4 if self.short else 6 if self.compact else 8
        self.query_one("#lint-detail").display = not self.short
        self.query_one(Header).display = not self.short
        tabs = Text()
        for name, label in (("form", " Manifest "), ("source", " Source ")):
            tabs.append(label, style="reverse bold" if self._view == name else "dim")
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
        for widget in (self.source if self._view == "source" else self.form, self.form, self.source):
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
        self.empty = empty
        self._apply_view()

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
        try:
            raw = toolfile.read_bytes(path)  # a FIFO or a device is refused, never waited on
        except OSError as exc:
            self._say(f"Cannot open {path}: {exc.strerror or exc}", severity="error")
            return
        self._show_empty(False)
        self.current_path = path
        self.loaded_sha = sha256_bytes(raw)
        tf = toolfile.parse_bytes(raw, path=str(path))
        self.read_only_reason = None
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
                self.read_only_reason = f"line {hostile.span.line} holds a value that cannot be written back exactly"
            elif (cr := toolfile.lone_carriage_return(text)) is not None:
                # The editor would end a line at a lone \r (and save it as a line break); the
                # runtime and lint do not: editing here would change what the runtime reads.
                self.read_only_reason = (
                    f"line {cr} holds a lone carriage return (\\r): the Patch runtime does not end "
                    "a line there, this editor would; convert the file's line endings to \\n first"
                )
        self.bom = tf.bom
        self.saved_text = text
        self.tf = tf
        self._hide_banner()
        source = self.source
        source.read_only = self.read_only_reason is not None
        with source.prevent(TextArea.Changed):
            source.load_text(text)
        self._load_form(tf, fresh=True)
        self.dirty = False
        self._update_title()
        self.browser.set_current(path, False)
        self.lint_panel.show([])
        if self.read_only_reason:
            self._diagnostics_for_unreadable(tf)
        else:
            # After the first paint: the lint thread would compete with it for the GIL (and
            # a timer lets what else waits on that paint run first).
            self._lint_generation += 1
            self.call_after_refresh(self.set_timer, POST_PAINT_DELAY, self._start_lint)

    def _diagnostics_for_unreadable(self, tf: toolfile.ToolFile) -> None:
        self.diagnostics = lint_toolfile(tf)
        self.lint_panel.show(self.diagnostics)

    @staticmethod
    def _structure_broken(tf: toolfile.ToolFile) -> bool:
        return not isinstance(tf.data, dict) or any(p.code in STRUCTURE_CODES for p in tf.problems)

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
                    d.code == toolfile.ProblemCode.MARKERS and d.fix is not None for d in lint_toolfile(tf)
                )
                hint = " Write one in the source, or press F8 to insert a starter." if fixable else ""
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
        self.dirty = self.source.text != self.saved_text
        # A lint still running is for older text now: its result must not reach the form.
        self._lint_generation += 1
        if self._lint_timer is not None:
            self._lint_timer.stop()
        self._lint_timer = self.set_timer(LINT_DEBOUNCE, self._start_lint)

    def _start_lint(self) -> None:
        self._lint_timer = None
        self._lint_generation += 1
        self._lint_worker(self._lint_generation, self.source.text, str(self.current_path))

    @work(thread=True, exclusive=True, group="lint", exit_on_error=False)
    def _lint_worker(self, generation: int, text: str, path: str) -> None:
        tf = toolfile.parse(text, path=path)
        diagnostics = lint_toolfile(tf)
        try:
            self.app.call_from_thread(self._apply_lint, generation, text, tf, diagnostics)
        except RuntimeError:
            pass  # the app is closing

    def _apply_lint(
        self, generation: int, text: str, tf: toolfile.ToolFile, diagnostics: list[Diagnostic]
    ) -> None:
        if generation != self._lint_generation or not self.is_attached or text != self.source.text:
            # The text moved on (maybe with its Changed message still queued): the lint for
            # the newer text is coming, and this one must not touch the form or `dirty`.
            return
        self.tf = tf
        self._lint_text = text
        # Typing in the body rarely changes the problems or the manifest: touch the widgets
        # only when what they show changed (keeps each keystroke cheap on big files).
        if diagnostics != self.diagnostics or not self.lint_panel.row_count and diagnostics:
            self.diagnostics = diagnostics
            self.lint_panel.show(diagnostics)
            problems: dict[Any, str] = {}
            for d in diagnostics:
                if d.field and d.severity != "info":
                    problems.setdefault(tuple(d.field), f"{d.code}: {d.message}")
            self.form.mark_problems(problems)
            if not diagnostics:
                self.query_one("#lint-detail", Static).update("")
        else:
            self.diagnostics = diagnostics
        if self.clean != (not diagnostics):
            self.clean = not diagnostics
            self._apply_view()
        if not self.form.shows(tf.data if not self._structure_broken(tf) else None):
            self._load_form(tf)
        self.dirty = text != self.saved_text
        if self.current_path is not None:
            data = tf.data if isinstance(tf.data, dict) else {}
            from patch_tui.ui.desk.tool_browser import ToolEntry

            self.browser.update_entry(
                ToolEntry(
                    self.current_path,
                    str(data.get("name") or self.current_path.stem),
                    str(data.get("version") or "?"),
                    str(data.get("description") or ""),
                    sum(d.severity == "error" for d in diagnostics),
                    sum(d.severity == "warning" for d in diagnostics),
                )
            )
        self.lint_count += 1
        self.post_message(self.Linted(diagnostics, text))

    # -- form -> source -------------------------------------------------------------------

    @on(ManifestForm.Changed)
    def _form_changed(self, event: ManifestForm.Changed) -> None:
        event.stop()
        if self.read_only_reason:
            return
        source = self.source
        tf = toolfile.parse(source.text)
        if not tf.has_frontmatter or not isinstance(tf.data, dict) or any(
            p.code in STRUCTURE_CODES for p in tf.problems
        ):
            self._say("Fix the frontmatter in the source first", severity="warning")
            return
        data = toolfile.set_field(tf.data, event.path, event.value)
        if data == tf.data:
            return
        self.replace_frontmatter(tf, data, key=("form", event.path))

    def replace_frontmatter(
        self, tf: toolfile.ToolFile, data: dict[str, Any], *, key: object = None
    ) -> None:
        """Rewrite the frontmatter for `data` as one undoable edit touching only the lines
        that change."""
        assert tf.open_index is not None and tf.close_index is not None
        new_lines = toolfile.render_frontmatter(data, "\n").splitlines()
        old_lines = [line.rstrip("\r\n") for line in tf.lines[tf.open_index + 1 : tf.close_index]]
        first = tf.open_index + 1
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
            return
        start = (first + head, 0)
        end = (first + len(old_lines) - tail, 0)
        insert = "".join(line + "\n" for line in new_mid)
        # Keystrokes in one form field undo together; anything else is its own undo step.
        self.source.replace_as(key if key is not None else object(), insert, start, end)

    # -- lint panel -------------------------------------------------------------------------

    @on(LintPanel.Jump)
    def _jump(self, event: LintPanel.Jump) -> None:
        event.stop()
        d = event.diagnostic
        if not event.to_source and d.field and not self.form.stale:
            if self.form.widget_for(d.field) is not None:
                self._view = "form"
                self._apply_view()
                if self.form.focus_field(d.field):
                    return
        self._view = "source"
        self._apply_view()
        span = d.span
        self.source.select_span(span.line, span.column, span.end_line, span.end_column)
        self.source.focus()

    @on(LintPanel.RowHighlighted, "#lint")
    def _lint_row(self, event: LintPanel.RowHighlighted) -> None:
        """The whole message of the highlighted problem (the table cuts long ones)."""
        d = self.lint_panel.current
        detail = self.query_one("#lint-detail", Static)
        if d is None:
            detail.update("")
            return
        text = Text()
        text.append(f"{d.code} {d.line}:{d.column}  ", style="bold")
        text.append(visible(d.message))
        if d.fix is not None:
            text.append(f"  · f: {visible(d.fix.title)}", style="italic")
        detail.update(text)

    @on(LintPanel.ApplyFix)
    def _apply_fix_message(self, event: LintPanel.ApplyFix) -> None:
        event.stop()
        self.apply_fix(event.diagnostic)

    def apply_fix(self, diagnostic: Diagnostic) -> bool:
        """Apply a diagnostic's quick fix through the TextArea (one undo step)."""
        if self.read_only_reason or diagnostic.fix is None:
            return False
        text = self.source.text
        if text != self._lint_text:
            # The text moved on since that lint: find the same problem in the current text.
            fresh = lint_toolfile(toolfile.parse(text, path=str(self.current_path)))
            same = [
                d
                for d in fresh
                if d.code == diagnostic.code and d.fix is not None and d.field == diagnostic.field
            ]
            if not same:
                self._say(f"{diagnostic.code} is already gone", severity="information")
                return False
            diagnostic = same[0]
        assert diagnostic.fix is not None
        self.apply_edits(diagnostic.fix.edits)
        self._say(f"Fixed: {diagnostic.fix.title}", title=diagnostic.code)
        return True

    def apply_edits(self, edits: tuple[Edit, ...] | list[Edit]) -> None:
        source = self.source
        doc = source.document

        def location(line: int, column: int) -> tuple[int, int]:
            row = line - 1
            if row >= doc.line_count:
                return doc.end
            return (max(row, 0), min(max(column - 1, 0), len(doc.get_line(row))))

        group = object()  # every edit of one fix undoes as one step
        for e in sorted(edits, key=lambda e: (e.line, e.column), reverse=True):
            source.replace_as(group, e.new_text, location(e.line, e.column), location(e.end_line, e.end_column))

    def action_apply_fix(self) -> None:
        """Fix the selected problem in the lint panel, or the first fixable one at the cursor."""
        panel = self.lint_panel
        target = panel.current if panel.has_focus else None
        if target is None or target.fix is None:
            row = self.source.cursor_location[0] + 1
            fixable = [d for d in self.diagnostics if d.fix is not None]
            here = [d for d in fixable if d.span.line <= row <= d.span.end_line]
            target = (here or fixable)[0] if (here or fixable) else None
        if target is None:
            self._say("Nothing to fix here")
            return
        self.apply_fix(target)

    def action_focus_lint(self) -> None:
        self.lint_panel.focus()

    # -- saving -----------------------------------------------------------------------------

    def _bytes(self, text: str) -> bytes:
        return ((toolfile.BOM if self.bom else "") + text).encode("utf-8")

    def action_save(self) -> None:
        self.save()

    def save(self, *, overwrite: bool = False) -> bool:
        """Save the buffer. Returns True when saved; a conflict opens the dialog instead."""
        if self.current_path is None:
            return False
        if self.read_only_reason:
            self._say(f"Not saved: {self.read_only_reason}", severity="error")
            return False
        text = self.source.text
        try:
            result = self.toolbox.save_tool(
                self.current_path, self._bytes(text), expected_sha256=None if overwrite else self.loaded_sha
            )
        except FileChangedOnDisk as exc:
            self._ask_conflict(saving=True, disk_sha=exc.actual)
            return False
        except ToolboxError as exc:
            # The tool itself may be saved (an index problem): say exactly what happened.
            self._say(str(exc), severity="error", title="Save")
            self._mark_saved(text, file_sha256(self.current_path))
            return False
        except OSError as exc:
            self._say(f"Not saved: {exc.strerror or exc}", severity="error", title="Save")
            return False
        self._mark_saved(text, result.sha256)
        extra = " and index.json" if result.index_updated else ""
        self._say(f"Saved {self.current_path.name}{extra}", title="Save")
        return True

    def _mark_saved(self, text: str, sha: str | None) -> None:
        self.saved_text = text
        self.loaded_sha = sha
        self.dirty = self.source.text != text
        self._hide_banner()
        self.browser.refresh_tools()

    def action_save_version(self) -> None:
        if self.current_path is None or self.read_only_reason:
            return
        version = "?"
        if self.tf is not None and isinstance(self.tf.data, dict):
            version = str(self.tf.data.get("version", "?"))

        def chosen(part: str | None) -> None:
            if part:
                self.save_new_version(part)

        self.app.push_screen(
            ChoiceModal(
                f"Keep version {version} in the history and save this as a new version.",
                [("patch", "Patch", "p"), ("minor", "Minor", "m"), ("major", "Major", "M")],
                title="Save as new version",
                focus="patch",
            ),
            chosen,
        )

    def save_new_version(self, part: str) -> bool:
        assert self.current_path is not None
        text = self.source.text
        try:
            result = self.toolbox.save_new_version(
                self.current_path, self._bytes(text), part, expected_sha256=self.loaded_sha  # type: ignore[arg-type]
            )
        except FileChangedOnDisk:
            self._ask_conflict(saving=True)
            return False
        except (ToolboxError, OSError) as exc:
            self._say(str(exc), severity="error", title="New version")
            return False
        new_text = self.current_path.read_bytes().decode("utf-8").removeprefix(toolfile.BOM)
        self._replace_all(new_text)
        self._mark_saved(new_text, result.sha256)
        self._start_lint()  # the form shows the new version
        kept = f"; {result.history_path.name} kept in the history" if result.history_path else ""
        self._say(f"Version {result.version} saved{kept}", title="New version")
        return True

    def _replace_all(self, text: str) -> None:
        """Put new text in the source as one undoable edit (reload, new version)."""
        source = self.source
        if source.text == text:
            return
        cursor = source.cursor_location
        # Callers set `dirty`, the form and the lint themselves: no Changed, so no late
        # "dirty" from a message processed after them.
        with source.prevent(TextArea.Changed):
            source.replace_as(object(), text, (0, 0), source.document.end)
        row = min(cursor[0], source.document.line_count - 1)
        source.cursor_location = (row, min(cursor[1], len(source.document.get_line(row))))

    # -- changes on disk --------------------------------------------------------------------

    def on_file_changed_outside(self, path: Path) -> None:
        """The watcher saw `path` change (or vanish) outside the app."""
        if self.current_path is None or os.path.realpath(path) != os.path.realpath(self.current_path):
            self.on_tools_changed()
            return
        disk_sha = file_sha256(self.current_path)
        if disk_sha == self.loaded_sha:
            return  # same bytes as we know: not a change (e.g. our own save)
        if disk_sha is None:
            self._show_banner("was deleted on disk; save (ctrl+s) to keep your version", deleted=True)
            self.browser.refresh_tools()
            return
        if not self.dirty and self.source.text == self.saved_text:
            self.reload_from_disk()
            self._say(f"{self.current_path.name} changed on disk: reloaded", title="Reloaded")
        else:
            self._show_banner("changed on disk while you have unsaved edits")
        self.browser.refresh_tools()

    def on_tools_changed(self) -> None:
        """Tools were added, renamed or deleted outside: refresh the list."""
        self.browser.refresh_tools()

    def reload_from_disk(self) -> None:
        if self.current_path is None:
            return
        try:
            raw = self.current_path.read_bytes()
        except OSError as exc:
            self._say(f"Cannot reload: {exc.strerror or exc}", severity="error")
            return
        tf = toolfile.parse_bytes(raw, path=str(self.current_path))
        if not tf.text and raw:
            self.open_tool(self.current_path)
            return
        self.bom = tf.bom
        self.saved_text = tf.text
        self.loaded_sha = sha256_bytes(raw)
        self._replace_all(tf.text)
        self._hide_banner()
        self.dirty = False
        self._load_form(tf)
        self._start_lint()

    def _show_banner(self, message: str, *, deleted: bool = False) -> None:
        name = self.current_path.name if self.current_path else "the file"
        banner = self.query_one("#banner", ChangeBanner)
        banner.show(Content.assemble("⚠ ", safe_line(name), f" {message}"), deleted=deleted)

    def _hide_banner(self) -> None:
        self.query_one("#banner").remove_class("-shown")

    @on(Button.Pressed, "#banner-reload")
    def _banner_reload(self, event: Button.Pressed) -> None:
        event.stop()
        self.reload_from_disk()

    @on(Button.Pressed, "#banner-keep")
    def _banner_keep(self, event: Button.Pressed) -> None:
        event.stop()
        self.keep_mine()

    @on(Button.Pressed, "#banner-diff")
    def _banner_diff(self, event: Button.Pressed) -> None:
        event.stop()
        self._ask_conflict(saving=False)

    def keep_mine(self) -> None:
        """Keep editing this version; the next save overwrites the disk's knowingly."""
        self.loaded_sha = file_sha256(self.current_path) if self.current_path else None
        self.dirty = True
        self._hide_banner()

    def _ask_conflict(self, *, saving: bool, disk_sha: str | None = None) -> None:
        from patch_tui.ui.dialogs.conflict import ConflictModal

        assert self.current_path is not None
        try:
            disk: str | None = self.current_path.read_bytes().decode("utf-8", errors="replace")
        except OSError:
            disk = None

        def decided(choice: str | None) -> None:
            if choice == "reload":
                self.reload_from_disk()
            elif choice == "keep":
                if saving:
                    self.save(overwrite=True)
                else:
                    self.keep_mine()

        self.app.push_screen(
            ConflictModal(self.current_path.name, self.source.text, disk, saving=saving), decided
        )

    # -- switching and managing tools -------------------------------------------------------

    def confirm_discard(
        self,
        then: Callable[[], None],
        *,
        what: str = "switching",
        title: str | None = None,
        labels: tuple[str, str] = ("Save", "Discard"),
    ) -> None:
        """Run `then` once unsaved edits are saved or knowingly dropped. `labels` name the
        save and discard choices (quitting says "Save and quit", "Quit without saving")."""
        if not self.dirty or self.current_path is None:
            then()
            return

        def decided(choice: str | None) -> None:
            if choice == "save":
                if self.save():
                    then()
            elif choice == "discard":
                then()

        save, discard = labels
        self.app.push_screen(
            ChoiceModal(
                f"{self.current_path.name} has unsaved changes.",
                [("save", save, "s"), ("discard", discard, "d"), ("cancel", "Cancel", "c")],
                title=title or f"Unsaved changes ({what})",
                focus="cancel",
            ),
            decided,
        )

    @on(ToolBrowser.Selected)
    def _tool_selected(self, event: ToolBrowser.Selected) -> None:
        event.stop()
        if self.current_path is not None and event.path == self.current_path:
            self.source.focus() if self._view == "source" else self.form.focus()
            return
        self.confirm_discard(lambda: self.open_tool(event.path))

    @on(ToolBrowser.Action)
    def _tool_action(self, event: ToolBrowser.Action) -> None:
        event.stop()
        {
            "new": lambda: self.action_new_tool(),
            "rename": lambda: self._rename(event.path),
            "duplicate": lambda: self._duplicate(event.path),
            "delete": lambda: self._delete(event.path),
        }[event.action]()

    def _name_check(self, name: str) -> str | None:
        from patch_tui.format.fields import NAME_RE

        if not NAME_RE.match(name):
            return "lowercase letters, digits and underscores, starting with a letter"
        if self.toolbox.find(name) is not None:
            return f"a tool named {name} already exists"
        return None

    def action_new_tool(self) -> None:
        def named(name: str | None) -> None:
            if not name:
                return
            try:
                path = self.toolbox.create_tool(name)
            except (ToolboxError, OSError) as exc:
                self._say(str(exc), severity="error")
                return
            self.browser.clear_filter()  # an active filter would hide the new tool
            self.browser.refresh_tools()
            self.confirm_discard(lambda: self.open_tool(path))

        self.app.push_screen(
            PromptModal("The new tool's name (snake_case):", title="New tool", check=self._name_check),
            named,
        )

    def _rename(self, path: Path | None) -> None:
        if path is None:
            return
        if path == self.current_path and self.dirty:
            self._say("Save or discard your edits before renaming", severity="warning")
            return

        def named(name: str | None) -> None:
            if not name:
                return
            if name == path.stem:
                self._say(f"{name}: same name, nothing to rename", title="Rename")
                return
            try:
                new = self.toolbox.rename_tool(path, name)
            except (ToolboxError, OSError) as exc:
                self._say(str(exc), severity="error")
                return
            self.browser.refresh_tools()
            if path == self.current_path:
                self.open_tool(new)

        self.app.push_screen(
            PromptModal(
                f"New name for {path.stem}:",
                title="Rename tool",
                value=path.stem,
                # The same name is no clash with another tool: it is a no-op.
                check=lambda name: None if name == path.stem else self._name_check(name),
            ),
            named,
        )

    def _duplicate(self, path: Path | None) -> None:
        if path is None:
            return

        def named(name: str | None) -> None:
            if not name:
                return
            try:
                new = self.toolbox.duplicate_tool(path, name)
            except (ToolboxError, OSError) as exc:
                self._say(str(exc), severity="error")
                return
            self.browser.clear_filter()
            self.browser.refresh_tools()
            self.confirm_discard(lambda: self.open_tool(new))

        self.app.push_screen(
            PromptModal(
                f"Name of the copy of {path.stem}:",
                title="Duplicate tool",
                value=f"{path.stem}_copy",
                check=self._name_check,
            ),
            named,
        )

    def _delete(self, path: Path | None) -> None:
        if path is None:
            return

        def answered(yes: bool | None) -> None:
            if not yes:
                return
            try:
                where = self.toolbox.delete_tool(path)
            except (ToolboxError, OSError) as exc:
                self._say(str(exc), severity="error")
                return
            self._say(f"Moved to {where}", title="Deleted")
            self.browser.refresh_tools()
            if path == self.current_path:
                try:
                    rest = self.toolbox.tool_paths()
                except ToolboxError as exc:
                    self._say(str(exc), severity="error")
                    rest = []
                if rest:
                    self.open_tool(rest[0])
                else:
                    self._close_tool()

        self.app.push_screen(
            ConfirmModal(
                f"Delete {path.name}? It moves to the toolbox's {self.toolbox.trash_dir.name} folder; nothing is erased.",
                title="Delete tool",
                yes="Delete",
                destructive=True,
            ),
            answered,
        )

    def _close_tool(self) -> None:
        self.current_path = None
        self.loaded_sha = None
        self.saved_text = ""
        with self.source.prevent(TextArea.Changed):
            self.source.load_text("")
        self.dirty = False
        self.lint_panel.show([])
        self._show_empty(True)
        self._update_title()

    # -- view -------------------------------------------------------------------------------

    def action_toggle_browser(self) -> None:
        self._browser_wanted = not (self.browser.display)
        if self.tiny and self._browser_wanted:
            self.tiny = False  # asked for explicitly: show it even when narrow
        self._apply_view()
        if self.browser.display:
            self.browser.query_one("#browser-filter").focus()

    def action_form_tab(self, step: int) -> None:
        """Tab between form fields, as a priority binding: a non-priority Tab is handled in the
        focused field's message queue, after the app has already sent the keys typed right
        behind it to that same field (a fast burst after Tab landed in the previous field).
        Here the focus moves before the next key is read. Elsewhere Tab does what it does."""
        focused = self.focused
        if focused is None or not (focused is self.form or self.form in focused.ancestors):
            raise SkipAction()
        self.focus_next() if step > 0 else self.focus_previous()

    def action_toggle_wrap(self) -> None:
        """Soft wrap in the source pane (on by default: no line hides past the right edge)."""
        self.source.soft_wrap = not self.source.soft_wrap
        self._say(f"Soft wrap {'on' if self.source.soft_wrap else 'off'} (alt+z)", title="Source")

    def action_toggle_view(self) -> None:
        self._view = "source" if self._view == "form" else "form"
        self._apply_view()
        (self.source if self._view == "source" else self.form).focus()

    # -- outside tools ----------------------------------------------------------------------

    def action_open_in_editor(self) -> None:
        if self.current_path is None:
            return
        if self.dirty:
            self._say("Save first (ctrl+s): the other editor opens the file on disk", severity="warning")
            return
        editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
        try:
            with self.app.suspend():
                subprocess.call([*shlex.split(editor), str(self.current_path)])
        except Exception as exc:  # headless, or the editor cannot start
            self._say(f"Cannot open {editor}: {exc}", severity="error")
            return
        self.app.refresh()
        if file_sha256(self.current_path) != self.loaded_sha:
            self.reload_from_disk()

    def action_copy_source(self) -> None:
        text = self.source.text
        self.app.copy_to_clipboard(text)
        self._say(f"Copied {text.count(chr(10)) + 1} lines (OSC 52)", title="Copy")

    def action_history(self) -> None:
        from patch_tui.ui.desk.history import HistoryScreen

        if self.current_path is None:
            return
        name = self.current_path.stem
        if self.tf is not None and isinstance(self.tf.data, dict) and isinstance(self.tf.data.get("name"), str):
            name = self.tf.data["name"]
        self.app.push_screen(HistoryScreen(name, self.toolbox.history(name), self.source.text), self._restore_asked)

    def _restore_asked(self, version: Path | None) -> None:
        if version is None or self.current_path is None:
            return
        if self.read_only_reason:
            self._say(f"Not restored: {self.read_only_reason}", severity="error")
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.restore_version(version)

        self.app.push_screen(
            ConfirmModal(
                f"Replace the text with version {version.stem}? The current text is kept in the history first, and ctrl+z undoes the restore.",
                title="Restore version",
                yes="Restore",
            ),
            answered,
        )

    def restore_version(self, version: Path) -> bool:
        """Put an earlier version in the source as one undoable edit (not saved), after keeping
        the current text in the history folder: nothing is lost either way."""
        import time

        from patch_tui.runtime.toolbox import atomic_write

        try:
            old = version.read_bytes().decode("utf-8").removeprefix(toolfile.BOM)
        except (OSError, UnicodeDecodeError) as exc:
            self._say(f"Cannot read {version.name}: {exc}", severity="error")
            return False
        current = self.source.text
        if old == current:
            self._say(f"Version {version.stem} is the text you have", title="Restore")
            return False
        label = "current"
        if self.tf is not None and isinstance(self.tf.data, dict) and isinstance(self.tf.data.get("version"), str):
            label = self.tf.data["version"]
        kept = version.parent / f"{label}+kept-{time.strftime('%Y%m%dT%H%M%S')}.py"
        try:
            atomic_write(kept, self._bytes(current))
        except OSError as exc:
            self._say(f"Not restored: cannot keep the current text ({exc.strerror or exc})", severity="error")
            return False
        self.source.replace_as(object(), old, (0, 0), self.source.document.end)
        self._say(
            f"Restored version {version.stem} (not saved yet: ctrl+s saves, ctrl+z undoes); your text is kept as {kept.stem}",
            title="Restore",
        )
        return True

    def action_next_problem(self) -> None:
        if not self.diagnostics:
            self._say("No problems")
            return
        row = self.source.cursor_location[0] + 1
        after = [d for d in self.diagnostics if d.span.line > row]
        target = (after or self.diagnostics)[0]
        self.post_message(LintPanel.Jump(target, to_source=True))

    @on(SourceArea.HighlightingOff)
    def _highlighting_off(self, event: SourceArea.HighlightingOff) -> None:
        self._say(f"{event.lines} lines: syntax highlighting is off for a file this big", title="Source")


class EditorCommands(CommandList):
    """Palette commands of the desk, named "area: verb"."""

    def _commands(self) -> list[tuple[str, str, Callable[[], Any]]]:
        screen = self.screen
        if not isinstance(screen, EditorScreen):
            return []
        return [
            ("tool: save", "Save the open tool (ctrl+s / F2)", screen.action_save),
            ("tool: new version", "Save as a new version: patch, minor or major (F6)", screen.action_save_version),
            ("tool: new", "Create a tool from the template (ctrl+n)", screen.action_new_tool),
            ("tool: rename", "Rename the open tool (file and manifest name)", lambda: screen._rename(screen.current_path)),
            ("tool: duplicate", "Copy the open tool under a new name", lambda: screen._duplicate(screen.current_path)),
            ("tool: delete", "Move the open tool to the trash folder", lambda: screen._delete(screen.current_path)),
            ("tool: history", "Earlier versions, diffed against the current text (F10)", screen.action_history),
            ("tool: open in $EDITOR", "Edit in your own editor; reloads after (ctrl+o / F7)", screen.action_open_in_editor),
            ("tool: copy source", "Copy the whole source to the clipboard, OSC 52 (F9)", screen.action_copy_source),
            ("tool: reload from disk", "Throw away the edits and read the file again (undo keeps them)", screen.reload_from_disk),
            ("lint: apply fix", "Apply the quick fix of the problem at the cursor (F8)", screen.action_apply_fix),
            ("lint: next problem", "Move the cursor to the next problem", screen.action_next_problem),
            ("lint: focus problems", "Go to the problems list (ctrl+l / F5)", screen.action_focus_lint),
            ("view: toggle tool browser", "Show or hide the tool list (ctrl+b / F3)", screen.action_toggle_browser),
            ("view: form / source", "Switch between manifest and source when they share a pane (F4)", screen.action_toggle_view),
            ("view: soft wrap", "Wrap long lines in the source pane, or not (alt+z)", screen.action_toggle_wrap),
        ]

