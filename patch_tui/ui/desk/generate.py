"""Generate a tool with Claude, or refine the open one, and review it before anything is saved.

The screen runs `generate.engine` in an exclusive worker and shows its events as they come: the
answer streams into a preview highlighted with pygments, each round (first answer, repairs) is
listed with what lint found, and the token usage the API reported is shown. Escape cancels a
running generation (the stream is closed and nothing is written) and, when nothing runs, discards
the result. Accept (ctrl+s) saves a new tool atomically and dismisses with where it went, so the
app opens it in the editor; for a refinement it dismisses with the new text after the diff
(manifest and body) was shown. A result that still has lint errors needs a second ctrl+s.

LLM output is untrusted: the preview is built token by token through `ui.safe_text.safe` (hidden
Unicode shown, never markup); the diff and the rounds list use `rich.text.Text` of visible text. Every failure is one notification; the app never crashes.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Button, Input, Label, RichLog, Static

from patch_tui.ui.desk.host import desk_editor
from patch_tui.ui.dialogs.dialog import Dialog
from patch_tui.ui.safe_text import SafeInput, safe
from patch_tui.ui.services import maybe_services
from patch_tui.ui.widgets.diff_view import diff_text
from patch_tui.ui.widgets.key_bar import KeyBar
from patch_tui.untrusted.text_safety import visible

if TYPE_CHECKING:
    from patch_tui.generate.engine import Event, Generation, Options

State = Literal["idle", "running", "done", "cancelled", "failed"]
PREVIEW_REFRESH = 0.1  # seconds between preview repaints while text streams in

# pygments token family -> the style (theme variables) that colours it; first match wins.
_TOKEN_STYLES = (
    ("Keyword", "$text-accent"),
    ("Operator.Word", "$text-accent"),
    ("Name.Builtin", "$text-secondary"),
    ("Name.Function", "$text-primary"),
    ("Name.Class", "$text-primary"),
    ("Literal.String", "$text-success"),
    ("Literal.Number", "$text-warning"),
)


def highlight(code: str) -> Content:
    """Python source coloured by pygments tokens, built through `safe()`: never markup, and
    hidden or control characters shown as tokens."""
    from pygments import lex
    from pygments.lexers import PythonLexer
    from pygments.token import string_to_tokentype

    families = [(string_to_tokentype(name), style) for name, style in _TOKEN_STYLES]
    parts: list[Content] = []
    for ttype, value in lex(code, PythonLexer(stripnl=False, ensurenl=False)):
        style = next((st for family, st in families if ttype in family), "")
        parts.append(safe(value, style))
    return Content("").join(parts)


@dataclass(frozen=True)
class Accepted:
    """What the person accepted: a new tool saved at `path`, or a refinement's new `text`."""

    text: str
    path: Path | None
    refined: bool


class GenerateScreen(Dialog["Accepted | None"]):
    """Write a new tool from a prompt (`refine_text` None) or refine `refine_text`."""

    DEFAULT_CSS = """
    GenerateScreen > Vertical { width: 96%; height: 94%; padding: 0 1; }
    GenerateScreen .gen-title { text-style: bold; }
    GenerateScreen #gen-inputs { height: auto; }
    GenerateScreen #gen-prompt { width: 1fr; }
    GenerateScreen #gen-model { width: 32; }
    GenerateScreen #gen-main { height: 1fr; }
    GenerateScreen #gen-preview-scroll { width: 2fr; border: round $panel; }
    GenerateScreen #gen-preview { width: auto; }
    GenerateScreen #gen-side { width: 1fr; min-width: 30; }
    GenerateScreen #gen-rounds { height: 1fr; border: round $panel; }
    GenerateScreen #gen-usage { height: auto; color: $text-muted; }
    GenerateScreen #gen-status { height: auto; }
    GenerateScreen #gen-buttons { height: auto; align: right middle; }
    GenerateScreen Button { margin-left: 1; }
    """

    BINDINGS = [
        Binding("ctrl+g", "generate", "Generate", id="generate.start"),
        Binding("ctrl+s,f2", "accept", "Accept", id="generate.accept", priority=True),
        Binding("ctrl+t", "toggle_diff", "Diff / preview", id="generate.diff"),
        Binding("escape", "cancel_or_discard", "Cancel / discard", id="generate.cancel"),
    ]

    state: reactive[State] = reactive("idle")

    def __init__(
        self,
        *,
        out_dir: str | Path | None = None,
        options: Options | None = None,
        prompt: str = "",
        refine_text: str | None = None,
        refine_label: str = "tool",
        toolbox: str | Path | None = None,
    ) -> None:
        super().__init__()
        self.out_dir = Path(out_dir) if out_dir is not None else None
        self.toolbox = Path(toolbox) if toolbox is not None else None
        self.options = options
        self.refine_path: Path | None = None
        self.initial_prompt = prompt
        self.refine_text = refine_text
        self.refine_label = refine_label
        self.result: Generation | None = None
        self._buffer: list[str] = []
        self._dirty = False
        self._show_diff = refine_text is not None
        self._confirm_invalid = False
        # The rounds log as shown, and the running round's label line (rewritten when it ends).
        self._rounds: list[Text] = []
        self._round: tuple[int, str, float] | None = None  # (line, label, started)

    @property
    def refining(self) -> bool:
        return self.refine_text is not None

    # -- what the app provides ------------------------------------------------------------------

    def _adopt_app(self) -> None:
        """Built with no arguments by the app (SCREENS_LAZY): take the settings and the toolbox
        from it, so new tools go into the open toolbox and names there are never reused."""
        svc = maybe_services(self.app)  # None in a bare host (the options were given)
        if self.options is None and svc is not None:
            from patch_tui.generate.engine import resolve_options
            from patch_tui.settings.config import StartSettings

            settings = svc.settings
            self.options = resolve_options(
                settings.full() if isinstance(settings, StartSettings) else settings
            )
        box = svc.toolbox if svc is not None else None
        if self.out_dir is None:
            self.out_dir = Path(box.root) if box is not None else Path.cwd()

    # -- layout -----------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        self._adopt_app()
        title = (
            Content("Refine ") + Content(visible(self.refine_label)) + Content(" with Claude")
            if self.refining
            else Content("Generate a tool with Claude")
        )
        with Vertical():
            yield Label(title, classes="gen-title")
            with Horizontal(id="gen-inputs"):
                placeholder = (
                    "What should change?" if self.refining else "Describe the tool in a sentence"
                )
                yield SafeInput(self.initial_prompt, placeholder=placeholder, id="gen-prompt")
                yield SafeInput(self._default_model(), placeholder="model", id="gen-model")
            with Horizontal(id="gen-main"):
                with VerticalScroll(id="gen-preview-scroll"):
                    yield Static(Content(""), id="gen-preview")
                with Vertical(id="gen-side"):
                    yield Label("Rounds")
                    yield RichLog(
                        id="gen-rounds", markup=False, wrap=True, highlight=False, min_width=20
                    )
                    yield Static(Text("tokens: -"), id="gen-usage")
            yield Static(Text("Press enter to generate."), id="gen-status")
            with Horizontal(id="gen-buttons"):
                verb = "Refine" if self.refining else "Generate"
                yield Button(f"{verb} (ctrl+g)", id="gen-start", variant="primary")
                yield Button("Cancel (esc)", id="gen-cancel", disabled=True)
                yield Button("Accept (ctrl+s)", id="gen-accept", variant="success", disabled=True)
                yield Button("Discard", id="gen-discard")
        yield KeyBar()

    def _default_model(self) -> str:
        if self.options is not None:
            return self.options.model
        from patch_tui.settings.config import DEFAULT_MODEL, ConfigError, load_settings

        try:
            return load_settings().model
        except ConfigError:
            return DEFAULT_MODEL

    def on_mount(self) -> None:
        self.query_one("#gen-prompt", Input).focus()
        self.set_interval(PREVIEW_REFRESH, self._flush_preview)
        if self.refining:
            self._set_preview(self.refine_text or "")

    # -- state ------------------------------------------------------------------------------

    def watch_state(self, state: State) -> None:
        running = state == "running"
        self.query_one("#gen-start", Button).disabled = running
        self.query_one("#gen-cancel", Button).disabled = not running
        self.query_one("#gen-accept", Button).disabled = state != "done" or self.result is None
        self.query_one("#gen-prompt", Input).disabled = running
        self.query_one("#gen-model", Input).disabled = running

    def _status(self, text: str) -> None:
        self.query_one("#gen-status", Static).update(Text(text))

    def _log(self, text: Text) -> None:
        self._rounds.append(text)
        self.query_one("#gen-rounds", RichLog).write(text)

    def _end_round(self, how: str) -> None:
        """The running round ended (answered, cancelled, failed): its label says so, instead of
        "streaming…" for good. A log line cannot change, so the log is written again."""
        if self._round is None:
            return
        line, label, started = self._round
        self._round = None
        self._rounds[line] = Text(f"▸ {label}: {how} ({time.monotonic() - started:.1f} s)")
        log = self.query_one("#gen-rounds", RichLog)
        log.clear()
        for text in self._rounds:
            log.write(text)

    # -- preview ------------------------------------------------------------------------------

    def _set_preview(self, text: str) -> None:
        self._buffer = [text]
        self._dirty = True
        self._flush_preview()

    def _flush_preview(self) -> None:
        if not self._dirty:
            return
        self._dirty = False
        preview = self.query_one("#gen-preview", Static)
        if self._show_diff and self.refining and self.result is not None:
            preview.update(self._diff_renderable(self.app.theme_variables))
        else:
            preview.update(highlight("".join(self._buffer)))
        if self.state == "running":
            # Follow the answer as it arrives, like a terminal would.
            self.query_one("#gen-preview-scroll", VerticalScroll).scroll_end(animate=False)

    def _diff_renderable(self, variables: dict[str, str]) -> Text:
        from patch_tui.generate.engine import split_sections

        assert self.result is not None
        old_fm, old_body = split_sections(self.refine_text or "")
        new_fm, new_body = split_sections(self.result.text)
        out = Text(no_wrap=True)
        out.append("Manifest\n", style="bold")
        out.append(diff_text(old_fm, new_fm, "current", "refined", variables))
        out.append("\nBody\n", style="bold")
        out.append(diff_text(old_body, new_body, "current", "refined", variables))
        return out

    def action_toggle_diff(self) -> None:
        if not self.refining:
            return
        self._show_diff = not self._show_diff
        if not self._show_diff and self.result is not None:
            self._buffer = [self.result.text]
        self._dirty = True
        self._flush_preview()

    # -- running ------------------------------------------------------------------------------

    @on(Input.Submitted)
    def _submitted(self) -> None:
        self.action_generate()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        actions = {
            "gen-start": self.action_generate,
            "gen-cancel": self.action_cancel_or_discard,
            "gen-accept": self.action_accept,
            "gen-discard": lambda: self.dismiss(None),
        }
        action = actions.get(event.button.id or "")
        if action is not None:
            action()

    def action_generate(self) -> None:
        if self.state == "running":
            return
        prompt = self.query_one("#gen-prompt", Input).value.strip()
        model = self.query_one("#gen-model", Input).value.strip()
        if not prompt:
            self.notify("Describe the tool first.", severity="warning", markup=False)
            return
        if not model:
            self.notify("Choose a model first.", severity="warning", markup=False)
            return
        self.result = None
        self._confirm_invalid = False
        self._show_diff = self.refining
        self.query_one("#gen-rounds", RichLog).clear()
        self._rounds, self._round = [], None
        self.query_one("#gen-usage", Static).update(Text("tokens: -"))
        self._set_preview("")
        self.state = "running"
        self._status("Connecting to Claude…")
        self._run(prompt, model)

    @work(exclusive=True, group="generate", exit_on_error=False)
    async def _run(self, prompt: str, model: str) -> None:
        from patch_tui.generate import engine as g

        try:
            opts = self.options or g.resolve_options()
            if self.refining:
                result = await g.refine(
                    self.refine_text or "",
                    prompt,
                    model=model,
                    api_key=opts.api_key,
                    base_url=opts.base_url,
                    max_repairs=opts.max_repairs,
                    max_retries=opts.max_retries,
                    on_event=self._on_event,
                )
            else:
                from patch_tui.settings import paths

                folders = [self.out_dir, self.toolbox or paths.default_toolbox()]
                taken = await asyncio.to_thread(g.taken_names, folders)
                result = await g.generate(
                    prompt,
                    model=model,
                    api_key=opts.api_key,
                    base_url=opts.base_url,
                    max_repairs=opts.max_repairs,
                    existing_names=taken,
                    max_retries=opts.max_retries,
                    on_event=self._on_event,
                )
        except asyncio.CancelledError:
            self._end_round("cancelled")
            self.state = "cancelled"
            self._status("Cancelled: the stream was stopped and nothing was written.")
            raise
        except g.GenerateError as exc:
            self._fail(str(exc))
            return
        except Exception as exc:  # never let a surprise take the app down
            self._fail(f"Generation failed: {type(exc).__name__}: {exc}")
            return
        self._finished(result)

    def _fail(self, message: str) -> None:
        self._end_round("failed")
        self.state = "failed"
        self._status(message)
        self.notify(message, title="Generate", severity="error", markup=False)

    def _finished(self, result: Generation) -> None:
        self.result = result
        self._buffer = [result.text]
        self._dirty = True
        self._flush_preview()
        self.query_one("#gen-preview-scroll", VerticalScroll).scroll_home(animate=False)
        errors = len(result.errors)
        if errors:
            self._status(
                f"{result.model} · {errors} error(s) left after {result.rounds} answer(s): "
                "review them; ctrl+s twice saves anyway, esc discards."
            )
        else:
            what = "review the diff (ctrl+t toggles)" if self.refining else "review it"
            self._status(
                f"{result.model} · lint clean after {result.rounds} answer(s): {what}, ctrl+s accepts."
            )
        self.state = "done"

    def _on_event(self, event: Event) -> None:
        from patch_tui.generate import engine as g

        if isinstance(event, g.TextDelta):
            self._buffer.append(event.text)
            self._dirty = True
        elif isinstance(event, g.RoundStarted):
            self._buffer = []
            self._dirty = True
            label = {
                "initial": "first answer",
                "refine": "refinement",
                "repair": f"repair {event.round}",
            }
            self._end_round("ended")  # a round the engine never checked
            self._round = (len(self._rounds), label[event.kind], time.monotonic())
            self._log(Text(f"▸ {label[event.kind]}: streaming…"))
            self._status(f"Streaming: {label[event.kind]}… (esc cancels)")
        elif isinstance(event, g.RoundChecked):
            self._end_round("answered")
            self._buffer = [event.text]
            self._dirty = True
            errors = [d for d in event.diagnostics if d.severity == "error"]
            line = Text(
                f"  lint: {len(errors)} error(s), {len(event.diagnostics) - len(errors)} other"
            )
            self._log(line)
            for d in event.diagnostics:
                style = "bold" if d.severity == "error" else ""
                self._log(Text(f"    {d.code} line {d.line}: {visible(d.message)}", style=style))
        elif isinstance(event, g.UsageReported):
            t = event.total
            self.query_one("#gen-usage", Static).update(
                Text(
                    f"{visible(event.model)}\ntokens: {t.input_tokens} in · {t.output_tokens} out · "
                    f"cache {t.cache_read_input_tokens} read / {t.cache_creation_input_tokens} written"
                )
            )
        elif isinstance(event, g.Notice):
            self._log(Text(f"  note: {visible(event.message)}"))

    # -- deciding -----------------------------------------------------------------------------

    def action_cancel_or_discard(self) -> None:
        if self.state == "running":
            self.workers.cancel_group(self, "generate")
            self._end_round("cancelled")
            self.state = "cancelled"
            self._status("Cancelled: the stream was stopped and nothing was written.")
            return
        if self.state == "done" and self.result is not None:
            # A finished tool (minutes and tokens spent) is not thrown away by one key.
            from patch_tui.ui.dialogs.confirm import ConfirmModal

            def answered(discard: bool | None) -> None:
                if discard:
                    self.dismiss(None)

            self.app.push_screen(
                ConfirmModal(
                    "Discard the generated tool? Nothing was written; ctrl+s accepts it instead.",
                    title="Discard generation",
                    yes="Discard",
                    destructive=True,
                ),
                answered,
            )
            return
        self.dismiss(None)

    def action_accept(self) -> None:
        from patch_tui.generate import engine as g

        if self.state != "done" or self.result is None:
            return
        result = self.result
        if result.errors and not self._confirm_invalid:
            self._confirm_invalid = True
            self.notify(
                f"The tool still has {len(result.errors)} lint error(s): press ctrl+s again to accept it anyway.",
                title="Generate",
                severity="warning",
                markup=False,
            )
            return
        if self.refining:
            if not self._apply_to_editor(result.text):
                return
            self.dismiss(Accepted(result.text, self.refine_path, True))
            return
        try:
            path = g.save_new(result, self.out_dir or Path.cwd(), keep_invalid=True)
        except g.GenerateError as exc:
            self.notify(str(exc), title="Generate", severity="error", markup=False)
            return
        self.notify(f"Saved {path}", title="Generate", markup=False)
        self._open_in_editor(path)
        self.dismiss(Accepted(result.text, path, False))

    def _open_in_editor(self, path: Path) -> None:
        editor = desk_editor(self.app)
        if editor is None:
            return
        editor.on_tools_changed()  # the browser lists the new file
        if editor.dirty and editor.current_path is not None:
            # Never switch away from unsaved edits without asking: say where the tool went.
            self.notify(
                f"{editor.current_path.name} has unsaved edits, so it stays open; "
                f"{path.name} is in the tool list.",
                title="Generate",
                markup=False,
            )
            return
        editor.open_tool(path)

    def _apply_to_editor(self, text: str) -> bool:
        """Put a refinement in the editor as one undoable edit; saving stays the editor's job."""
        editor = desk_editor(self.app)
        if editor is None or self.refine_path is None:
            return True
        if editor.current_path != self.refine_path:
            self.notify(
                "The tool that was refined is no longer open: nothing was changed.",
                severity="error",
                markup=False,
            )
            return False
        if editor.read_only_reason:
            self.notify(
                f"This tool is read-only ({editor.read_only_reason}).",
                severity="error",
                markup=False,
            )
            return False
        source = editor.source
        source.replace(text, (0, 0), source.document.end)
        self.notify(
            f"Refinement applied to {self.refine_path.name}: ctrl+s saves it, ctrl+z undoes it.",
            title="Refine",
            markup=False,
        )
        return True


class RefineScreen(GenerateScreen):
    """The "refine with a prompt" screen on the tool open in the editor (built with no arguments)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(refine_text="", **kwargs)
        self._no_tool = False

    def _adopt_app(self) -> None:
        super()._adopt_app()
        editor = desk_editor(self.app)
        if editor is None or editor.current_path is None:
            self._no_tool = True
            return
        self.refine_path = Path(editor.current_path)
        self.refine_text = editor.source_text
        self.refine_label = self.refine_path.name

    def on_mount(self) -> None:
        super().on_mount()
        if self._no_tool:
            self.notify(
                "Open a tool first, then refine it.",
                title="Refine",
                severity="warning",
                markup=False,
            )
            self.call_later(self.dismiss, None)
