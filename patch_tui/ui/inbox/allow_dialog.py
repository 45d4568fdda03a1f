"""Allow calls like this for…: a standing grant made from a selected pending action.

    open_allow_dialog(screen, action, done)      done(grant or None)

One row per arg of the action: a checkbox (the grant looks at this arg) and its glob, which starts
as the exact value (metacharacters bracketed, non-strings as canonical JSON: approvals/grants.py), so
the grant starts as narrow as it can be and a person widens it on purpose (`/tmp/build/*`). A
duration, and a line saying what the grant will allow and whether this call matches it. Allowing
makes the grant, then applies it to this action: a call the grant matches is approved by it, as
every later one will be, and recorded as the grant's decision.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Button, Checkbox, Input, Select, Static

from patch_tui.approvals import grants
from patch_tui.approvals.grants import Grant, Pattern
from patch_tui.approvals.store import Action, StoreError
from patch_tui.ui.dialogs.dialog import Dialog
from patch_tui.ui.safe_text import safe_line

DURATIONS = [
    ("15 minutes", "15m"),
    ("30 minutes", "30m"),
    ("1 hour", "1h"),
    ("2 hours", "2h"),
    ("8 hours", "8h"),
    ("1 day", "1d"),
]


class AllowDialog(Dialog[Grant | None]):
    """On the shared dialog base (its key rule: typed text never decides, no key reaches the
    inbox behind). No letter decides (Allow is the button); the first glob has the focus."""

    DEFAULT_CSS = """
    AllowDialog > Vertical { width: 96; max-height: 90%; border: thick $warning; }
    AllowDialog #allow-rows { height: auto; max-height: 30vh; }
    AllowDialog .allow-row { height: auto; }
    AllowDialog .allow-row Checkbox { width: 24; }
    AllowDialog .allow-row Input { width: 1fr; }
    AllowDialog #allow-for { width: 22; }
    AllowDialog #allow-for-label { width: auto; padding: 1 1 0 0; }
    AllowDialog #allow-gap { width: 1fr; }
    AllowDialog #allow-preview { height: auto; margin-top: 1; }
    AllowDialog #allow-error { height: auto; display: none; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="allow.cancel")]

    def __init__(self, action: Action, create: Callable[[list[Pattern], float], Grant]) -> None:
        super().__init__()
        self.action = action
        self.create = create
        self.keys = list(action.args)
        self.busy = False

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(
                Content.assemble(
                    "Allow calls like this to ",
                    safe_line(self.action.tool, "bold"),
                    " ",
                    safe_line(self.action.version),
                    " (until the tool changes)",
                ),
                classes="dialog-title",
            )
            with VerticalScroll(id="allow-rows"):
                for n, key in enumerate(self.keys):
                    glob = grants.literal_glob(grants.arg_text(self.action.args[key]))
                    with Horizontal(classes="allow-row"):
                        yield Checkbox(safe_line(key), True, id=f"allow-use-{n}")
                        yield Input(glob, id=f"allow-glob-{n}", select_on_focus=False)
            yield Static("", id="allow-preview")
            yield Static("", id="allow-error", classes="dialog-error")
            with Horizontal(classes="dialog-buttons"):
                yield Static("for", id="allow-for-label")
                yield Select(DURATIONS, value="1h", allow_blank=False, id="allow-for")
                yield Static("", id="allow-gap")
                yield Button("Cancel", id="allow-cancel")
                yield Button("Allow", id="allow-ok", variant="warning")

    def on_mount(self) -> None:
        inputs = list(self.query(Input))
        if inputs:
            inputs[0].focus()
        self._refresh()

    def patterns(self) -> list[Pattern]:
        out: list[Pattern] = []
        for n, key in enumerate(self.keys):
            if self.query_one(f"#allow-use-{n}", Checkbox).value:
                out.append(Pattern(key, self.query_one(f"#allow-glob-{n}", Input).value))
        return out

    def seconds(self) -> float:
        value = self.query_one("#allow-for", Select).value
        return grants.parse_duration(value if isinstance(value, str) else "1h")

    @on(Input.Changed)
    @on(Checkbox.Changed)
    @on(Select.Changed)
    def _refresh(self) -> None:
        patterns = self.patterns()
        described = " ".join(str(p) for p in patterns) or "(every call of the tool)"
        matches = grants.patterns_match(patterns, self.action.args)
        self.query_one("#allow-preview", Static).update(
            Content.assemble(
                ("Allows: ", "bold"),
                safe_line(described),
                "\n",
                ("This call matches: ", "bold"),
                (
                    "yes (it is approved by the grant)" if matches else "no (it keeps waiting)",
                    "$text-success" if matches else "$text-warning",
                ),
                (
                    "" if patterns else "\nNo arg is checked: every call of the tool is allowed.",
                    "$text-warning",
                ),
            )
        )

    @on(Button.Pressed, "#allow-cancel")
    def action_cancel(self) -> None:
        if not self.busy:
            self.dismiss(None)

    @on(Button.Pressed, "#allow-ok")
    def _allow(self) -> None:
        if self.busy:
            return
        self.busy = True
        self.query_one("#allow-ok", Button).disabled = True
        self._run(self.patterns(), self.seconds())

    @work(thread=True, exclusive=True, group="allow")
    def _run(self, patterns: list[Pattern], seconds: float) -> None:
        try:
            result: Grant | str = self.create(patterns, seconds)
        except (StoreError, ValueError) as exc:
            result = str(exc)
        self.app.call_from_thread(self._done, result)

    def _done(self, result: Grant | str) -> None:
        self.busy = False
        if isinstance(result, Grant):
            self.dismiss(result)
            return
        self.query_one("#allow-ok", Button).disabled = False
        error = self.query_one("#allow-error", Static)
        error.update(safe_line(f"Not allowed: {result}"))
        error.display = True


def open_allow_dialog(screen: Any, action: Action, done: Callable[[Grant | None], None]) -> None:
    from patch_tui.ui.inbox.inbox_badge import app_store

    if action.kind != "human_confirm":
        screen.notify(
            "Standing grants never apply to tainted_input holds: decide this one as it is.",
            severity="warning",
            markup=False,
        )
        return

    def create(patterns: list[Pattern], seconds: float) -> Grant:
        store = app_store(screen.app)
        grant = grants.create(
            store,
            action.tool,
            action.version,
            action.source_sha256,
            patterns,
            seconds,
            tool_path=action.tool_path,
        )
        current = store.get(action.token)
        if current is not None:
            grants.apply(store, current)
        return grant

    screen.app.push_screen(AllowDialog(action, create), done)


def describe(grant: Grant) -> str:
    return (
        f"Grant {grant.id}: {grant.tool} calls matching {grants.describe_patterns(grant)} are "
        f"approved until {grant.expires_at}; `patch-tui inbox revoke {grant.id}` ends it."
    )
