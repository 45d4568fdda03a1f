"""Try it: run the tool open in the editor, with a form built from its inputs.

The form follows the manifest the editor has right now (its current, even unsaved, text): a row
per input with its type, whether it is required, its description and default; strings and
numbers are text fields, booleans a true/false choice, arrays and objects JSON fields checked as
you type. The last args are remembered per tool, and named cases can be saved and loaded again
(`<state dir>/try_it.json`, written atomically).

A run goes through the same gate as any call (approvals/gate.Gate.call with the editor's text): a
human_confirm tool is held, and its pending action appears in the inbox like an agent's. The
result pane shows what came back as highlighted JSON, stderr, the exit code, the duration and what
was enforced (network namespace or not). Tool output is untrusted: all of it goes through
ui/safe_text.
"""

from __future__ import annotations

import math
import threading
import time
from pathlib import Path
from typing import Any, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Button, Header, Input, Select, Static

from patch_tui.desk.try_state import MAX_CASES, STATE_FILE, TryState, state_path
from patch_tui.format import toolfile
from patch_tui.format.manifest import Manifest
from patch_tui.runtime.runner import CANCELLED, DEFAULT_TIMEOUT
from patch_tui.ui.desk.host import desk_editor
from patch_tui.ui.desk.try_fields import InputField
from patch_tui.ui.inbox.inbox_badge import app_store
from patch_tui.ui.safe_text import SafeReport, json_view, safe, safe_line
from patch_tui.ui.services import services
from patch_tui.ui.widgets.key_bar import KeyBar

__all__ = ["MAX_CASES", "STATE_FILE", "InputField", "TryItScreen", "TryState", "state_path"]

# The tail of stderr shown in the result pane (the run's audit record keeps all of it).
STDERR_SHOWN = 20_000


class TryItScreen(Screen[None]):
    BINDINGS: ClassVar[list[Any]] = [
        Binding("f5", "run", "Run", id="try.run", priority=True),
        Binding("f6", "cancel", "Cancel run", id="try.cancel", priority=True),
        Binding("ctrl+s,f2", "save_case", "Save case", id="try.save_case", priority=True),
        Binding("escape", "close", "Back", id="try.close"),
    ]
    DEFAULT_CSS = """
    TryItScreen { layout: vertical; }
    #try-main { height: 1fr; }
    #try-form { width: 1fr; min-width: 36; border: round $panel; padding: 0 1; }
    #try-form:focus-within { border: round $primary; }
    #try-result { width: 1fr; border: round $panel; padding: 0 1; }
    #try-result:focus-within { border: round $primary; }
    #try-result Static { margin-bottom: 1; }
    #try-cases { height: auto; margin: 1 0; }
    #try-cases Select { width: 1fr; }
    #try-cases Button { width: auto; min-width: 8; margin-left: 1; }
    #try-fields { height: auto; }
    #try-buttons { height: auto; }
    #try-buttons Button { margin-right: 1; }
    #try-timeout-label { width: auto; padding: 1 1 0 1; color: $text-muted; }
    #try-timeout { width: 8; margin-top: 1; }
    #try-status.-ok { color: $text-success; }
    #try-status.-failed { color: $text-error; }
    #try-status.-held { color: $text-warning; }
    #try-note { color: $text-muted; }
    """

    def __init__(self, state: TryState | None = None) -> None:
        super().__init__()
        self.state = state
        self.tool: str | None = None
        self.path: Path | None = None
        self.text = ""
        self.manifest: Manifest | None = None
        self.running = False
        self.run_count = 0  # tests wait on this
        self.last_outcome: Any = None
        self.expanded: set[str] = set()
        self._cancel: threading.Event | None = None
        self._started = 0.0
        self._ticker: Any = None

    def compose(self) -> ComposeResult:
        yield Header(icon="▶")
        with Horizontal(id="try-main"):
            with VerticalScroll(id="try-form"):
                yield Static("", id="try-note")
                with Horizontal(id="try-cases"):
                    yield Select([], prompt="saved cases", id="try-case")
                    yield Button("Save case", id="try-save", compact=True)
                    yield Button("Delete", id="try-delete", compact=True)
                yield Vertical(id="try-fields")
                with Horizontal(id="try-buttons"):
                    yield Button("Run (F5)", id="try-run", variant="primary")
                    yield Button("Cancel (F6)", id="try-cancel", variant="error")
                    yield Static("timeout s", id="try-timeout-label")
                    yield Input(str(int(DEFAULT_TIMEOUT)), id="try-timeout", compact=True)
            with VerticalScroll(id="try-result"):
                yield Static("Fill in the inputs and press F5.", id="try-status")
                yield Static("", id="try-banner")
                yield Static("", id="try-output")
                yield Button("Expand", id="try-expand", compact=True)
                yield Static("", id="try-stderr")
                yield Static("", id="try-enforced")
        yield KeyBar()

    def on_mount(self) -> None:
        self.title = "Try it"
        self.query_one("#try-form").border_title = "Inputs"
        self.query_one("#try-result").border_title = "Result"
        self.query_one("#try-expand", Button).display = False
        self.query_one("#try-cancel", Button).display = False
        if self.state is None:
            self.state = TryState()
        editor = desk_editor(self.app)
        path = editor.current_path if editor is not None else None
        note = self.query_one("#try-note", Static)
        if editor is None or path is None:
            note.update("No tool is open in the editor: open one, then ctrl+j.")
            return
        self.path = Path(path)
        self.text = editor.source_text
        tf = toolfile.parse(self.text, path=str(self.path))
        if tf.manifest is None:
            why = tf.problems[0].message if tf.problems else "the manifest does not parse"
            note.update(Content.assemble(("Cannot build the form: ", "bold"), safe(why)))
            return
        self.manifest = tf.manifest
        self.tool = tf.manifest.name
        self.sub_title = tf.manifest.name
        unsaved = editor.dirty
        caps = tf.manifest.capabilities
        note.update(
            Content.assemble(
                safe_line(tf.manifest.name, "bold"),
                f" {tf.manifest.version}",
                (" (unsaved text)" if unsaved else "", "$text-warning"),
                (
                    "\nhuman_confirm: a run is held for approval in the inbox"
                    if caps.human_confirm
                    else "",
                    "$text-warning",
                ),
                "\nnetwork ",
                ("allowed" if caps.network else "blocked where the host allows it", "bold"),
            )
        )
        fields = [InputField(spec) for spec in tf.manifest.inputs]
        self.query_one("#try-fields", Vertical).mount_all(fields)
        if not fields:
            self.query_one("#try-fields", Vertical).mount(Static("This tool takes no inputs."))
        self.call_after_refresh(self._fill_initial)
        self._refresh_cases()

    def _fields(self) -> list[InputField]:
        return list(self.query(InputField))

    def _fill_initial(self) -> None:
        assert self.state is not None
        last = self.state.last(self.tool) if self.tool else None
        for field in self._fields():
            spec = field.spec
            if last is not None:
                field.set_value(spec.name in last, last.get(spec.name))
            else:
                field.set_value(spec.has_default, spec.default)
        fields = self._fields()
        if fields:
            fields[0].widget.focus()

    def _refresh_cases(self) -> None:
        assert self.state is not None
        names = sorted(self.state.cases(self.tool)) if self.tool else []
        self.query_one("#try-case", Select).set_options([(n, n) for n in names])

    def collect(self) -> tuple[dict[str, Any] | None, int]:
        """The args from the form, or None and the number of fields in error."""
        args: dict[str, Any] = {}
        errors = 0
        for field in self._fields():
            present, value, error = field.value()
            field.show_error(error)
            if error:
                errors += 1
            elif present:
                args[field.spec.name] = value
        return (None if errors else args), errors

    # -- cases ------------------------------------------------------------------------------

    @on(Select.Changed, "#try-case")
    def _case_chosen(self, event: Select.Changed) -> None:
        event.stop()
        assert self.state is not None
        if not isinstance(event.value, str) or self.tool is None:
            return
        args = self.state.cases(self.tool).get(event.value)
        if args is None:
            return
        for field in self._fields():
            field.set_value(field.spec.name in args, args.get(field.spec.name))

    @on(Button.Pressed, "#try-save")
    def _save_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_save_case()

    def action_save_case(self) -> None:
        from patch_tui.ui.dialogs.confirm import PromptModal

        if self.tool is None:
            return
        args, errors = self.collect()
        if args is None:
            self.notify(f"{errors} field(s) need fixing first", severity="warning", markup=False)
            return

        def named(name: str | None) -> None:
            if not name or self.tool is None or self.state is None:
                return
            try:
                self.state.save_case(self.tool, name, args)
            except OSError as exc:
                self.notify(
                    f"Cannot save the case: {exc.strerror or exc}", severity="error", markup=False
                )
                return
            # Not left selected: choosing it again later must reload it (a Select only reports
            # a change).
            self._refresh_cases()
            self.notify(f"Saved case {name}", markup=False)

        self.app.push_screen(
            PromptModal(
                "Save these inputs as a case named:",
                title="Save case",
                check=lambda n: None if n.strip() else "give it a name",
            ),
            named,
        )

    @on(Button.Pressed, "#try-delete")
    def _delete_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        name = self.query_one("#try-case", Select).value
        if not isinstance(name, str) or self.tool is None or self.state is None:
            return
        try:
            self.state.delete_case(self.tool, name)
        except OSError as exc:
            self.notify(
                f"Cannot delete the case: {exc.strerror or exc}", severity="error", markup=False
            )
            return
        self._refresh_cases()

    # -- running ----------------------------------------------------------------------------

    @on(Button.Pressed, "#try-run")
    def _run_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_run()

    def action_run(self) -> None:
        if self.manifest is None or self.path is None or self.tool is None:
            self.notify("Nothing to run", severity="warning", markup=False)
            return
        if self.running:
            self.notify("Already running", markup=False)
            return
        args, errors = self.collect()
        if args is None:
            self._status(f"{errors} field(s) need fixing", "failed")
            return
        timeout = self._timeout()
        if timeout is None:
            self._status("the timeout must be a positive number of seconds", "failed")
            return
        assert self.state is not None
        try:
            self.state.remember(self.tool, args)
        except OSError:
            pass  # remembering is a convenience; the run matters more
        self.running = True
        self.expanded = set()
        self.query_one("#try-run", Button).disabled = True
        self.query_one("#try-cancel", Button).display = True
        for name in ("output", "stderr", "enforced", "banner"):
            self._put(name, None)
        self._cancel = threading.Event()
        self._started = time.monotonic()
        self._tick()
        self._ticker = self.set_interval(0.1, self._tick)
        self._run(self.path, args, self.text, timeout, self._cancel)

    def _timeout(self) -> float | None:
        try:
            value = float(self.query_one("#try-timeout", Input).value.strip())
        except ValueError:
            return None
        return value if math.isfinite(value) and value > 0 else None

    def _tick(self) -> None:
        """The elapsed time while a run goes on (a slow tool otherwise looks hung)."""
        if self.running:
            elapsed = time.monotonic() - self._started
            what = (
                "Cancelling…" if self._cancel is not None and self._cancel.is_set() else "Running…"
            )
            self._status(f"{what} {elapsed:.1f} s  ·  F6 cancels", "")

    @on(Button.Pressed, "#try-cancel")
    def _cancel_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_cancel()

    def action_cancel(self) -> None:
        """Stop the run: its process group is killed (runtime/runner.cancel_with)."""
        if self.running and self._cancel is not None:
            self._cancel.set()
            self._tick()

    @work(thread=True, exclusive=True, group="try-it", exit_on_error=False)
    def _run(
        self, path: Path, args: dict[str, Any], text: str, timeout: float, cancel: threading.Event
    ) -> None:
        from patch_tui.approvals.gate import Gate, GateError
        from patch_tui.approvals.store import StoreError
        from patch_tui.runtime.runner import cancel_with

        try:
            gate = Gate(app_store(self.app), toolbox=services(self.app).toolbox, timeout=timeout)
            with cancel_with(cancel):
                # Typed into try-it's form by the person at the desk: never another tool's output.
                outcome: Any = gate.call(path, args, text=text, by_person=True)
        except (GateError, StoreError) as exc:
            outcome = exc
        try:
            self.app.call_from_thread(self._show, outcome)
        except RuntimeError:
            # The panel was closed (which cancelled this run) and its worker with it: record
            # the end of the run all the same (nothing is on screen to update).
            self.running = False
            self.last_outcome = outcome

    @on(Button.Pressed, "#try-expand")
    def _expand(self, event: Button.Pressed) -> None:
        event.stop()
        outcome = self.last_outcome
        if outcome is None or getattr(outcome, "status", None) != "ok":
            return
        self.expanded.update(json_view(outcome.payload).collapsed)
        self.run_count -= 1  # a re-render, not a run
        self._show(outcome)

    def _put(self, name: str, content: Content | None) -> None:
        # Empty parts of the result take no room (each Static has a bottom margin).
        static = self.query_one(f"#try-{name}", Static)
        static.update(content or "")
        static.display = bool(content)

    def _status(self, text: str | Content, kind: str) -> None:
        status = self.query_one("#try-status", Static)
        for k in ("ok", "failed", "held"):
            status.set_class(k == kind, f"-{k}")
        status.update(text if isinstance(text, Content) else safe(text))

    def _show(self, outcome: Any) -> None:
        self.running = False
        self.run_count += 1
        self.last_outcome = outcome
        if self._ticker is not None:
            self._ticker.stop()
            self._ticker = None
        if not self.is_attached:
            return  # closed meanwhile (which cancelled the run): nothing to show it on
        self.query_one("#try-cancel", Button).display = False
        self.query_one("#try-run", Button).disabled = False
        self.query_one("#try-expand", Button).display = False
        report = SafeReport()
        if isinstance(outcome, Exception):
            self._status(Content.assemble(("✗ cannot run: ", "bold"), safe(str(outcome))), "failed")
            return
        run = outcome.run
        status = outcome.status
        if status == "ok":
            head = Content.assemble(("✓ ok", "bold"), self._run_facts(run))
            self._status(head, "ok")
            view = json_view(outcome.payload, expanded=self.expanded, expand_hint="Expand shows")
            report.add(view.report)
            self.query_one("#try-expand", Button).display = bool(view.collapsed)
            parts: list[Content | str] = [
                Content.styled("result\n", "bold $text-muted"),
                view.content,
            ]
            if run is not None and run.output_type_error:
                parts += [
                    "\n",
                    Content.styled("⚠ ", "bold $text-warning"),
                    safe(run.output_type_error),
                ]
            self._put("output", Content.assemble(*parts))
        elif status == "confirmation_required":
            payload = outcome.payload
            token = str(payload.get("confirmation_token", ""))
            self._status(
                Content.assemble(
                    ("◆ held for a person's approval", "bold"),
                    f" ({payload.get('kind')})",
                ),
                "held",
            )
            self._put(
                "output",
                Content.assemble(
                    "It is now pending in the inbox (ctrl+r). Once approved, `patch-tui confirm ",
                    safe_line(token),
                    "` (or the agent's patch_confirm_action) runs it once.\n",
                    Content.styled("token ", "bold $text-muted"),
                    safe_line(token),
                    "\n",
                    Content.styled("expires ", "bold $text-muted"),
                    safe_line(str(payload.get("expires_at"))),
                    "\n",
                    Content.styled("reason ", "bold $text-muted"),
                    safe(str(payload.get("reason")), report=report),
                ),
            )
        else:
            error = str(
                outcome.payload.get("error")
                if isinstance(outcome.payload, dict)
                else outcome.payload
            )
            label = "✗ invalid call" if status == "invalid" else "✗ failed"
            if run is not None and run.error == CANCELLED:
                label = "✗ cancelled"
            first, _, tail = error.partition("\n")
            if run is not None and tail.strip() and tail.strip() in run.stderr:
                # The error ends with the tail of stderr: the traceback shows once, under stderr,
                # and its last line (the exception, what went wrong) is said here.
                raised = [line.strip() for line in tail.splitlines() if line.strip()][-1]
                error = f"{first.rstrip(':')}: {raised} (the whole traceback is under stderr)"
            self._status(Content.assemble((label, "bold"), self._run_facts(run)), "failed")
            self._put(
                "output",
                Content.assemble(
                    Content.styled("error\n", "bold $text-muted"), safe(str(error), report=report)
                ),
            )
        if run is not None:
            if run.stderr:
                # The end of stderr is where the traceback is; what is left out is said, not hidden.
                cut = max(0, len(run.stderr) - STDERR_SHOWN)
                self._put(
                    "stderr",
                    Content.assemble(
                        Content.styled("stderr\n", "bold $text-muted"),
                        Content.styled(f"({cut:,} earlier characters not shown)\n", "$text-warning")
                        if cut
                        else "",
                        safe(run.stderr[cut:], report=report),
                    ),
                )
            lines = run.capability_assertions or []
            if lines:
                self._put(
                    "enforced",
                    Content.assemble(
                        Content.styled("enforced\n", "bold $text-muted"),
                        Content("\n".join(f"• {line}" for line in lines)),
                    ),
                )
        self._put("banner", report.banner())

    @staticmethod
    def _run_facts(run: Any) -> str:
        if run is None:
            return ""
        facts = [f"exit code {run.exit_code}" if run.exit_code is not None else "did not start"]
        facts.append(f"{run.duration_ms} ms")
        network = (run.enforced or {}).get("network")
        if network:
            facts.append(f"network {network}")
        if run.timed_out:
            facts.append("timed out")
        return "  ·  " + "  ·  ".join(facts)

    def action_close(self) -> None:
        # Closing cancels a run still going: it never goes on unseen, and opening the panel
        # again can never start a second one beside it.
        self.action_cancel()
        self.dismiss()
