"""The desk's lint: the open tool re-parsed and linted in a thread, and the result shown in
the problems panel, the form (its problems, and its values when the manifest changed) and the
tool list. A part of the desk's screen (a mixin), as its actions are: a lint for text that has
moved on is dropped (`ToolBuffer.accept_lint`), so it never touches the form or `dirty`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from textual import work
from textual.widgets import Static

from patch_tui.desk.buffer import lint_toolfile, structure_broken
from patch_tui.format import toolfile
from patch_tui.ui.desk.tool_browser import ToolEntry

if TYPE_CHECKING:
    from patch_tui.lint.diagnostic import Diagnostic
    from patch_tui.ui.desk.editor import EditorScreen


class LintResults:
    """The desk screen's part that lints the open tool and shows what the lint found."""

    def _start_lint(self) -> None:
        desk = cast("EditorScreen", self)  # the screen this part belongs to
        desk._lint_timer = None
        desk.buffer.text = desk.source.text
        generation, text = desk.buffer.begin_lint()
        desk._lint_worker(generation, text, str(desk.current_path))

    @work(thread=True, exclusive=True, group="lint", exit_on_error=False)
    def _lint_worker(self, generation: int, text: str, path: str) -> None:
        desk = cast("EditorScreen", self)  # the screen this part belongs to
        tf = toolfile.parse(text, path=path)
        diagnostics = lint_toolfile(tf)
        try:
            desk.app.call_from_thread(desk._apply_lint, generation, text, tf, diagnostics)
        except RuntimeError:
            pass  # the app is closing

    def _apply_lint(
        self,
        generation: int,
        text: str,
        tf: toolfile.ToolFile,
        diagnostics: list[Diagnostic],
    ) -> None:
        desk = cast("EditorScreen", self)  # the screen this part belongs to
        before = desk.buffer.diagnostics
        if (
            not desk.is_attached
            or text != desk.source.text
            or not desk.buffer.accept_lint(generation, text, tf, diagnostics)
        ):
            # The text moved on (maybe with its Changed message still queued): the lint for
            # the newer text is coming, and this one must not touch the form or `dirty`.
            return
        # Typing in the body rarely changes the problems or the manifest: touch the widgets
        # only when what they show changed (keeps each keystroke cheap on big files).
        if diagnostics != before or not desk.lint_panel.row_count and diagnostics:
            desk.lint_panel.show(diagnostics)
            problems: dict[Any, str] = {}
            for d in diagnostics:
                if d.field and d.severity != "info":
                    problems.setdefault(tuple(d.field), f"{d.code}: {d.message}")
            desk.form.mark_problems(problems)
            if not diagnostics:
                desk.query_one("#lint-detail", Static).update("")
        if desk.desk_layout.clean != (not diagnostics):
            desk._set_layout(clean=not diagnostics)
        if not desk.form.shows(tf.data if not structure_broken(tf) else None):
            desk._load_form(tf)
        desk.dirty = text != desk.saved_text
        if desk.current_path is not None:
            data = tf.data if isinstance(tf.data, dict) else {}
            desk.browser.update_entry(
                ToolEntry(
                    desk.current_path,
                    str(data.get("name") or desk.current_path.stem),
                    str(data.get("version") or "?"),
                    str(data.get("description") or ""),
                    sum(d.severity == "error" for d in diagnostics),
                    sum(d.severity == "warning" for d in diagnostics),
                )
            )
        desk.lint_count += 1
        desk.post_message(desk.Linted(diagnostics, text))
        if desk._select_template_of == desk.current_path:  # ctrl+n: type over the template
            desk._select_template_of = None
            desk.select_template_text(("description",))
        pending, desk._pending_form_edits = desk._pending_form_edits, []
        for path, value in pending:
            desk._form_edit(path, value)
