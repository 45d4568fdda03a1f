"""The standing grants, in the TUI: what `patch-tui inbox grants [--all]` lists, with revoke.

Opened from the inbox with **G** (palette: `inbox: grants`). One entry per grant, newest first:
id, state (active, expired, revoked, or ended because its tool file changed or is gone: the one
decision approvals/grants.listing makes for the CLI too), tool and version, its `KEY=GLOB`
patterns, when it ends, its uses and who made it. **r** (or Delete) revokes the grant under the
cursor after a yes/no dialog (a grant its tool ended included: the granted bytes put back would
revive it), through approvals/grants.revoke (the same call as `patch-tui inbox revoke ID`). A
grant signed by fewer approvers than its tool's calls need (a quorum in the approvers file) shows
`awaiting`, who signed and how many more it needs; **s** signs it with your key after a dialog
that says what it grants, through approvals/grants.cosign (the same call as `patch-tui inbox
sign-grant ID`; a refusal is one line). **a** shows or hides the ended ones; **esc** goes back.
The list follows the store by itself (a grant made, signed or used in another process shows up).
Every field is text another process wrote: safe_line, visible_line.
"""

from __future__ import annotations

from typing import Any, ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Header, OptionList, Static
from textual.widgets.option_list import Option

from patch_tui.approvals import grants
from patch_tui.approvals.grants import Grant, Listed
from patch_tui.approvals.store import StoreError, now_iso
from patch_tui.approvals.watcher import StoreChanged
from patch_tui.ui.inbox.inbox_badge import app_store, pending_watch, store_path
from patch_tui.ui.safe_text import safe_line
from patch_tui.ui.services import services
from patch_tui.ui.widgets.key_bar import KeyBar
from patch_tui.untrusted.text_safety import visible_line

# Seconds between reads for the clock's sake (an expiry commits nothing).
EXPIRY_CHECK = 5.0
STATE_STYLE = {"active": "bold $text-success", "expired": "$text-muted", "revoked": "$text-error"}
AWAITING_STYLE = "bold $text-accent"  # standing, not active yet: it needs more signatures
ENDED_STYLE = (
    "bold $text-warning"  # its tool changed or went: standing in the store, never matching
)


def sign_question(listed: Listed) -> str:
    """What the sign dialog asks: exactly what the signature grants, and where the grant stands.
    Every field another process wrote is shown on its own line, hidden characters made visible."""
    grant = listed.grant
    patterns = [f"  {visible_line(str(p))}" for p in grant.patterns] or ["  (every call)"]
    more = listed.awaiting
    if more:
        after = (
            "yours makes it active: matching calls then run without asking anyone"
            if more == 1
            else f"after yours it still needs {more - 1} more"
        )
        stands = f"Needs {more} more signature{'s' if more != 1 else ''} ({after})."
    else:
        stands = f"It has the {listed.needed} signature(s) its calls need; yours adds one more."
    return "\n".join(
        [
            f"Sign grant {grant.id} with your key?",
            "",
            f"Tool: {visible_line(grant.tool)} {visible_line(grant.version)}",
            f"File: {visible_line(listed.tool_file or grant.tool_path or '(not found)')}",
            "Calls whose args match every pattern:",
            *patterns,
            f"Expires: {grant.expires_at}",
            f"Made by: {visible_line(grant.created_by)} at {grant.created_at}",
            f"Signed so far: {visible_line(', '.join(listed.signed) or 'nobody')}",
            stands,
        ]
    )


def grant_content(listed: Listed, now: str) -> Content:
    grant, state = listed.grant, listed.state
    if state in STATE_STYLE:
        ends = {"active": "expires", "expired": "expired", "revoked": "revoked"}[state]
        when = f"{ends} {grant.revoked_at if state == 'revoked' else grant.expires_at}"
        label, style = state, STATE_STYLE[state]
    elif state == grants.AWAITING:
        when, label, style = f"expires {grant.expires_at}", state, AWAITING_STYLE
    else:
        # Its tool ended it, or (untrusted) its signatures do not hold: it never applies.
        label = "ignored" if state == "untrusted" else "ended"
        when, style = listed.status, ENDED_STYLE
    by = f" by {grant.revoked_by}" if state == "revoked" and grant.revoked_by else ""
    unchecked = "   (tool file not found: not compared)" if listed.unchecked else ""
    # Where a grant awaiting signatures stands, on a line of its own: it approves nothing yet.
    awaiting = (
        safe_line(f"{listed.status}; signed by {', '.join(listed.signed)}")
        if state == grants.AWAITING
        else Content("")
    )
    return Content.assemble(
        Content.styled(f"{grant.id:>4}  ", "bold"),
        Content.styled(f"{label:<8}", style),
        " ",
        safe_line(grant.tool, "bold"),
        " ",
        safe_line(grant.version),
        "  ",
        safe_line(grants.describe_patterns(grant)),
        "\n      ",
        *((awaiting, "\n      ") if awaiting else ()),
        safe_line(
            f"{when}{by}   uses: {grant.uses}   made by {grant.created_by} at "
            f"{grant.created_at}{unchecked}"
        ),
    )


class GrantsScreen(Screen[None]):
    """The grants list (see the module)."""

    BINDINGS: ClassVar[list[Any]] = [
        Binding("s", "sign", "Sign", id="grants.sign"),
        Binding("r,delete", "revoke", "Revoke", id="grants.revoke"),
        Binding("a", "toggle_ended", "Show ended", id="grants.toggle_ended"),
        Binding("escape,q", "close", "Back", id="grants.close"),
    ]
    DEFAULT_CSS = """
    GrantsScreen { layout: vertical; }
    GrantsScreen #grants-status { height: auto; max-height: 3; padding: 0 1; background: $panel; color: $text-muted; }
    GrantsScreen #grants-list { height: 1fr; border: round $primary; }
    GrantsScreen #grants-note { height: auto; padding: 0 1; color: $text-muted; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.ended = False
        self.grants: list[Grant] = []
        self.listed: list[Listed] = []
        self.version: int | None = None
        self.reading = False
        self.again = False
        self.load_count = 0  # tests wait on this

    def compose(self) -> ComposeResult:
        yield Header(icon="⚑")
        yield Static("Reading the grants…", id="grants-status")
        yield OptionList(id="grants-list")
        yield Static(
            "A grant approves later calls of its tool whose args match every pattern, until it "
            "expires, is revoked, or the tool file changes (then it shows ended; the granted file "
            "put back revives it). Make one with g in the inbox or "
            "`patch-tui inbox allow`. One awaiting signatures applies once enough approvers "
            "signed it: s signs it.",
            id="grants-note",
        )
        yield KeyBar()

    def on_mount(self) -> None:
        self.title = "Standing grants"
        self.query_one(OptionList).border_title = "Active grants"
        self.query_one(OptionList).focus()
        # The app's one store watch says when something committed (a grant made, used or revoked
        # elsewhere); a grant that expires commits nothing, so the list is also read every few
        # seconds for its states.
        pending_watch(self.app).store_changed.subscribe(self, self._store_changed)
        self.set_interval(EXPIRY_CHECK, self.reload, name="grants-expiry")
        self.reload()

    def _store_changed(self, changed: StoreChanged) -> None:
        if changed.version is not None and changed.version != self.version:
            self._tick()

    def reload(self) -> None:
        self.version = None
        self._tick()

    def _tick(self) -> None:
        if self.reading:
            self.again = True  # one read at a time; the next one right after
            return
        self.reading = True
        self._read(self.ended, self.version)

    @work(thread=True, group="grants-read", exit_on_error=False)
    def _read(self, ended: bool, known: int | None) -> None:
        try:
            store = app_store(self.app)
            version = store.data_version()
            result: Any = None
            if version != known:
                result = (
                    grants.listing(store, services(self.app).toolbox, ended=ended),
                    version,
                    now_iso(store._now()),
                    ended,
                )
        except StoreError as exc:
            result = exc
        try:
            self.app.call_from_thread(self._loaded, result)
        except RuntimeError:
            pass

    def _loaded(self, result: Any) -> None:
        self.reading = False
        if self.again:
            self.again = False
            self.call_later(self._tick)
        status = self.query_one("#grants-status", Static)
        if isinstance(result, StoreError):
            status.update(safe_line(f"store unavailable: {result}"))
            return
        if result is None:
            return
        found, version, now, ended = result
        if ended != self.ended:
            return  # the view changed while reading: the next tick reads again
        self.listed, self.version = found, version
        self.grants = [x.grant for x in found]
        listing = self.query_one(OptionList)
        keep = listing.highlighted
        listing.set_options([Option(grant_content(x, now), id=str(x.grant.id)) for x in found])
        if found:
            listing.highlighted = min(keep or 0, len(found) - 1)
        active = sum(1 for x in found if x.state == "active")
        awaiting = sum(1 for x in found if x.state == grants.AWAITING)
        n_ended = len(found) - active - awaiting  # without `a`: those whose tool changed or went
        what = (
            f"{active} active"
            + (f", {awaiting} awaiting more signatures" if awaiting else "")
            + (f", {n_ended} ended" if self.ended or n_ended else "")
        )
        shown = ["Active grants"]
        shown += ["those awaiting signatures"] if awaiting else []
        shown += ["those their tool ended"] if n_ended else []
        listing.border_title = "Every grant" if self.ended else ", ".join(shown)
        if not found:
            what = "no grants" if self.ended else "no active grants (a shows the ended ones)"
        status.update(safe_line(f"{what} · {store_path(self.app)}"))
        self.load_count += 1

    @property
    def selected(self) -> Grant | None:
        index = self.query_one(OptionList).highlighted
        if index is None or not 0 <= index < len(self.grants):
            return None
        return self.grants[index]

    def action_toggle_ended(self) -> None:
        self.ended = not self.ended
        self.reload()

    def action_sign(self) -> None:
        """Sign the grant under the cursor: asked of the service first (a refusal is one line,
        no dialog), then a dialog saying what it grants; only its yes signs."""
        grant = self.selected
        if grant is not None:
            self._sign_check(grant.id)

    @work(thread=True, group="grants-sign", exit_on_error=False)
    def _sign_check(self, grant_id: int) -> None:
        store, toolbox = app_store(self.app), services(self.app).toolbox
        try:
            try:
                listed = grants.cosign_standing(store, grant_id, toolbox=toolbox)
            except StoreError as exc:  # GrantError included: why it may not be signed now
                self.app.call_from_thread(self._refused, f"Grant {grant_id} not signed: {exc}")
            else:
                self.app.call_from_thread(self._ask_sign, listed)
        except RuntimeError:
            pass  # the app is closing

    def _refused(self, message: str) -> None:
        self.notify(visible_line(message), severity="error", markup=False)

    def _ask_sign(self, listed: Listed) -> None:
        from patch_tui.ui.dialogs.confirm import ConfirmModal

        grant_id = listed.grant.id

        def answered(yes: bool | None) -> None:
            if yes:
                self._sign(grant_id)

        # Destructive in the dialog's sense: Enter on the focused Cancel never signs by accident.
        self.app.push_screen(
            ConfirmModal(sign_question(listed), title="Sign grant", yes="Sign", destructive=True),
            answered,
        )

    @work(thread=True, group="grants-sign", exit_on_error=False)
    def _sign(self, grant_id: int) -> None:
        store, toolbox = app_store(self.app), services(self.app).toolbox
        try:
            grant = grants.cosign(store, grant_id, toolbox=toolbox)
            now = grants.tool_state(store, grant, toolbox)
            stands = "active now" if now.state == "active" else now.status
            message, severity = f"Signed grant {grant.id} ({grant.tool}): {stands}", "information"
        except StoreError as exc:  # GrantError included: who may not, ended meanwhile, no key
            message, severity = f"Grant {grant_id} not signed: {exc}", "error"
        try:
            self.app.call_from_thread(
                self.notify, visible_line(message), severity=severity, markup=False
            )
            self.app.call_from_thread(self.reload)
        except RuntimeError:
            pass

    def action_revoke(self) -> None:
        from patch_tui.ui.dialogs.confirm import ConfirmModal

        grant = self.selected
        if grant is None:
            return
        # The store's state: a grant its tool ended still stands there, and is still revoked
        # (the granted file put back would make it approve again).
        if grant.state(now_iso(app_store(self.app)._now())) != "active":
            self.notify(f"Grant {grant.id} has already ended.", markup=False)
            return
        grant_id = grant.id
        listed = next((x for x in self.listed if x.grant.id == grant_id), None)
        revive = (
            f" It has {listed.status}; revoking it keeps the granted file, put back, from "
            "reviving it."
            if listed is not None and listed.ended
            else ""
        )

        def answered(yes: bool | None) -> None:
            if yes:
                self._revoke(grant_id)

        self.app.push_screen(
            ConfirmModal(
                f"Revoke grant {grant.id}: {grant.tool} {grant.version} "
                f"{grants.describe_patterns(grant)} (uses so far: {grant.uses})? Later calls "
                f"like it will wait in the inbox again.{revive}",
                title="Revoke grant",
                yes="Revoke",
                destructive=True,
            ),
            answered,
        )

    @work(thread=True, group="grants-revoke", exit_on_error=False)
    def _revoke(self, grant_id: int) -> None:
        try:
            grant = grants.revoke(app_store(self.app), grant_id)
            message, severity = (
                f"Revoked grant {grant.id} ({grant.tool}; uses: {grant.uses})",
                "information",
            )
        except StoreError as exc:  # GrantError included: already revoked or expired, says when
            message, severity = str(exc), "error"
        try:
            self.app.call_from_thread(self.notify, message, severity=severity, markup=False)
            self.app.call_from_thread(self.reload)
        except RuntimeError:
            pass

    def action_close(self) -> None:
        self.dismiss()
