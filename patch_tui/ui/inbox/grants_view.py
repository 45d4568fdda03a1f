"""The standing grants, in the TUI: what `patch-tui inbox grants [--all]` lists, with revoke.

Opened from the inbox with **G** (palette: `inbox: grants`). One entry per grant, newest first:
id, state (active, expired, revoked, or ended because its tool file changed or is gone: the one
decision approvals/grants.listing makes for the CLI too), tool and version, its `KEY=GLOB`
patterns, when it ends, its uses and who made it. **r** (or Delete) revokes the grant under the
cursor after a yes/no dialog (a grant its tool ended included: the granted bytes put back would
revive it), through approvals/grants.revoke (the same call as `patch-tui inbox revoke ID`); **a** shows
or hides the ended ones; **esc** goes back. The list follows the store by itself (a grant made
or used in another process shows up). Every field is text another process wrote: safe_line.
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

# Seconds between reads for the clock's sake (an expiry commits nothing).
EXPIRY_CHECK = 5.0
STATE_STYLE = {"active": "bold $text-success", "expired": "$text-muted", "revoked": "$text-error"}
ENDED_STYLE = (
    "bold $text-warning"  # its tool changed or went: standing in the store, never matching
)


def grant_content(listed: Listed, now: str) -> Content:
    grant, state = listed.grant, listed.state
    if state in STATE_STYLE:
        ends = {"active": "expires", "expired": "expired", "revoked": "revoked"}[state]
        when = f"{ends} {grant.revoked_at if state == 'revoked' else grant.expires_at}"
        label, style = state, STATE_STYLE[state]
    else:
        # Its tool ended it, or (untrusted) its signatures do not hold: it never applies.
        label = "ignored" if state == "untrusted" else "ended"
        when, style = listed.status, ENDED_STYLE
    by = f" by {grant.revoked_by}" if state == "revoked" and grant.revoked_by else ""
    unchecked = "   (tool file not found: not compared)" if listed.unchecked else ""
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
        safe_line(
            f"{when}{by}   uses: {grant.uses}   made by {grant.created_by} at "
            f"{grant.created_at}{unchecked}"
        ),
    )


class GrantsScreen(Screen[None]):
    """The grants list (see the module)."""

    BINDINGS: ClassVar[list[Any]] = [
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
            "`patch-tui inbox allow`.",
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
        n_ended = len(found) - active  # without `a`: the grants whose tool changed or went
        what = f"{active} active" + (f", {n_ended} ended" if self.ended or n_ended else "")
        listing.border_title = (
            "Every grant"
            if self.ended
            else "Active grants, and those their tool ended"
            if n_ended
            else "Active grants"
        )
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
