"""Export the open tool to another format, or import another format's definition as a new tool.

One screen, two tabs (palette: "tool: export / import"):
- Export: the open tool's definition in the chosen format, highlighted, with its loss report;
  copy it (OSC 52) or save it. It is built from the editor's current text, unsaved edits included.
- Import: a file path and a format; the new tools go into the toolbox (never over an existing
  one) and the first opens in the editor, with the loss report as a notification.

The JSON shown is `definition_json`'s, where hidden characters are already \\u escapes, so it can
go to rich's Syntax as is; loss reports are data (`Text` after `visible`), never markup.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.syntax import Syntax
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Input, Label, Select, Static, TabbedContent, TabPane

from patch_tui.format import toolfile
from patch_tui.interop import (
    FORMATS,
    DefinitionError,
    ImportProblems,
    LossReport,
    default_toolkit,
    definition_json,
    export_manifest,
    import_all,
    load_definitions,
)
from patch_tui.runtime.toolbox import ToolboxError, atomic_write
from patch_tui.ui.desk.host import desk_editor
from patch_tui.ui.dialogs.dialog import Dialog
from patch_tui.ui.safe_text import SafeInput
from patch_tui.untrusted.text_safety import visible

FORMAT_OPTIONS = [(f"{fmt.title} ({key})", key) for key, fmt in FORMATS.items()]


def _plain(text: str) -> Text:
    return Text(visible(text))


class InteropScreen(Dialog[None]):
    DEFAULT_CSS = """
    InteropScreen > Vertical { width: 95%; height: 90%; padding: 0 1; }
    InteropScreen .interop-row { height: auto; margin-bottom: 1; }
    InteropScreen .interop-row Select { width: 32; }
    InteropScreen .interop-row Input { width: 1fr; }
    InteropScreen #export-view { height: 1fr; border: round $panel; }
    InteropScreen #export-losses, InteropScreen #import-result { height: auto; max-height: 12; }
    InteropScreen .dialog-buttons { margin-top: 0; }
    """

    BINDINGS = [
        Binding("escape", "dismiss(None)", "Close", id="interop.close"),
        Binding("c", "copy", "Copy JSON", id="interop.copy"),
        Binding("s", "save", "Save JSON", id="interop.save"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.manifest: Any = None
        self.tool_path: Path | None = None
        self.definition_text = ""
        self.report: LossReport | None = None

    # -- layout -----------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        editor = desk_editor(self.app)
        self.tool_path = editor.current_path if editor is not None else None
        if editor is not None and self.tool_path is not None:
            self.manifest = toolfile.parse(editor.source_text, path=str(self.tool_path)).manifest
        with Vertical():
            yield Label("Other tool formats", classes="dialog-title")
            with TabbedContent(initial="tab-export" if self.manifest else "tab-import"):
                with TabPane("Export", id="tab-export"):
                    with Horizontal(classes="interop-row"):
                        yield Select(
                            FORMAT_OPTIONS, value="arcade", allow_blank=False, id="export-format"
                        )
                        yield SafeInput(
                            value=default_toolkit(self.tool_path) if self.tool_path else "Tools",
                            placeholder="toolkit (Arcade, spec 1.0)",
                            id="export-toolkit",
                        )
                    with VerticalScroll(id="export-view"):
                        yield Static(id="export-json")
                    yield Static(id="export-losses")
                    with Horizontal(classes="dialog-buttons"):
                        yield Button("Copy (c)", id="export-copy")
                        yield Button("Save… (s)", id="export-save", variant="primary")
                with TabPane("Import", id="tab-import"):
                    with Horizontal(classes="interop-row"):
                        yield Select(
                            FORMAT_OPTIONS, value="mcp", allow_blank=False, id="import-format"
                        )
                        yield Input(
                            placeholder="path to a JSON definition (one, a list, or tools/list)",
                            id="import-path",
                        )
                    yield Static(id="import-result")
                    with Horizontal(classes="dialog-buttons"):
                        yield Button("Import", id="import-go", variant="primary")

    def on_mount(self) -> None:
        self.refresh_export()

    def first_text_field(self) -> None:  # type: ignore[override]
        # Two tabs, each with its own field: the focus starts on the tab bar (arrows switch
        # tabs). A field focused in one tab would pull the view back to it whenever the other
        # tab is shown (TabbedContent follows the focus). Typed text still decides nothing:
        # the Dialog ignores it.
        return None

    # -- export -----------------------------------------------------------------------------

    @on(Select.Changed, "#export-format")
    @on(Input.Changed, "#export-toolkit")
    def _export_options_changed(self) -> None:
        self.refresh_export()

    def refresh_export(self) -> None:
        json_view = self.query_one("#export-json", Static)
        losses = self.query_one("#export-losses", Static)
        if self.manifest is None:
            self.definition_text = ""
            self.report = None
            json_view.update("")
            losses.update(
                _plain("Open a tool whose manifest is valid to export it (lint shows what to fix).")
                if self.tool_path is not None
                else _plain("No tool is open: open one in the editor to export it.")
            )
            return
        fmt = str(self.query_one("#export-format", Select).value)
        toolkit = self.query_one("#export-toolkit", Input).value.strip() or None
        definition, report = export_manifest(self.manifest, fmt, toolkit=toolkit)
        self.definition_text = definition_json(definition)
        self.report = report
        dark = self.app.current_theme.dark
        json_view.update(
            Syntax(
                self.definition_text,
                "json",
                theme="ansi_dark" if dark else "ansi_light",
                background_color="default",
                word_wrap=True,
            )
        )
        losses.update(_plain(report.text()))

    def _on_export_tab(self) -> bool:
        return self.query_one(TabbedContent).active == "tab-export"

    def action_copy(self) -> None:
        if not self._on_export_tab() or not self.definition_text:
            return
        self.app.copy_to_clipboard(self.definition_text)
        self.notify(f"Copied the {self._format_title()} definition (OSC 52)", title="Export")

    def _format_title(self) -> str:
        return FORMATS[str(self.query_one("#export-format", Select).value)].title

    def action_save(self) -> None:
        from patch_tui.ui.dialogs.confirm import ConfirmModal, PromptModal

        if not self._on_export_tab() or not self.definition_text or self.tool_path is None:
            return
        fmt = str(self.query_one("#export-format", Select).value)
        suggested = self.tool_path.with_name(f"{self.tool_path.stem}.{fmt}.json")
        text = self.definition_text

        def write(target: Path) -> None:
            try:
                atomic_write(target, text.encode("utf-8"))
            except OSError as exc:
                self.notify(
                    f"Cannot write {target}: {exc.strerror or exc}", severity="error", markup=False
                )
                return
            self.notify(f"Saved {target}", title="Export", markup=False)

        def chosen(value: str | None) -> None:
            if not value:
                return
            target = Path(value).expanduser()
            if target.exists():
                self.app.push_screen(
                    ConfirmModal(
                        f"{target} exists. Replace it?",
                        title="Save",
                        yes="Replace",
                        destructive=True,
                    ),
                    lambda yes: write(target) if yes else None,
                )
            else:
                write(target)

        self.app.push_screen(
            PromptModal("Save the definition as:", title="Save export", value=str(suggested)),
            chosen,
        )

    # -- import -----------------------------------------------------------------------------

    @on(Input.Submitted, "#import-path")
    def _import_submitted(self) -> None:
        self._start_import()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        actions = {
            "export-copy": self.action_copy,
            "export-save": self.action_save,
            "import-go": self._start_import,
        }
        if event.button.id in actions:
            event.stop()
            actions[event.button.id]()

    def _start_import(self) -> None:
        raw_path = self.query_one("#import-path", Input).value.strip()
        if not raw_path:
            self._import_result("Give the path of a JSON file with the definition.")
            return
        fmt = str(self.query_one("#import-format", Select).value)
        self._import_result("Importing…")
        self.import_worker(Path(raw_path).expanduser(), fmt)

    def _import_result(self, message: str) -> None:
        self.query_one("#import-result", Static).update(_plain(message))

    @work(thread=True, exclusive=True, group="interop-import")
    def import_worker(self, path: Path, fmt: str) -> None:
        toolbox = self.app.toolbox  # type: ignore[attr-defined]
        try:
            items = import_all(load_definitions(path.read_bytes(), fmt), fmt)
        except OSError as exc:
            self.app.call_from_thread(
                self._import_result, f"Cannot read {path}: {exc.strerror or exc}"
            )
            return
        except ImportProblems as exc:
            self.app.call_from_thread(
                self._import_result, "Nothing imported:\n" + "\n".join(exc.problems)
            )
            return
        except DefinitionError as exc:
            self.app.call_from_thread(self._import_result, f"Nothing imported: {exc}")
            return
        taken = [
            item.name
            for item in items
            if toolbox.find(item.name) is not None or toolbox.path_for(item.name).exists()
        ]
        if taken:
            self.app.call_from_thread(
                self._import_result,
                "Nothing imported: the toolbox already has "
                + ", ".join(taken)
                + " (tools are never overwritten).",
            )
            return
        written: list[Path] = []
        try:
            for item in items:
                written.append(toolbox.create_tool(item.name, text=item.text))
        except (ToolboxError, OSError) as exc:
            done = f" (written: {', '.join(p.name for p in written)})" if written else ""
            self.app.call_from_thread(self._import_result, f"Import stopped: {exc}{done}")
            return
        self.app.call_from_thread(self._imported, written, [item.report for item in items])

    def _imported(self, written: list[Path], reports: list[LossReport]) -> None:
        text = "\n".join(report.text() for report in reports)
        self.notify(
            visible(text),
            title=f"Imported {len(written)} tool{'s' if len(written) != 1 else ''}",
            severity="warning" if any(reports) else "information",
            timeout=20,
            markup=False,
        )
        editor = desk_editor(self.app)
        self.dismiss(None)
        if editor is not None and written:
            editor.browser.refresh_tools()
            editor.confirm_discard(lambda: editor.open_tool(written[0]))
