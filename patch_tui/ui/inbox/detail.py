"""The inbox's detail pane: exactly what would run, and whether all of it was shown.

The pane shows the tool (description, capabilities, external auth scopes, where its source is,
and whether it changed since the call was held), the reason, the taint origin, and the args as
pretty canonical JSON (sorted keys: the form the approval binds) through ui/safe_text: nothing is
markup, every hidden character is a visible ⟦U+XXXX⟧ token with a banner counting them. Long
strings collapse behind an explicit expand (E); Approve stays disabled until every collapsed value
was expanded and the pane was scrolled to its end once (or its content fits).

    tool_info, blocked                 approvals/review.py's (one home for every front end), imported
                                       when first asked;
                                       blocked: why it may not be approved (approvals.approvable)
    DetailPart                         the inbox screen's part that fills it and keeps the gate
"""

from __future__ import annotations

import builtins
import json
from typing import TYPE_CHECKING, Any

from textual import work
from textual.content import Content
from textual.dom import DOMNode
from textual.widgets import Static

from patch_tui.approvals import approvable, workspace
from patch_tui.approvals.store import Action, Event, StoreError, parse_iso
from patch_tui.ui.inbox import inbox_list
from patch_tui.ui.inbox.inbox_badge import app_store
from patch_tui.ui.inbox.inbox_list import human_duration
from patch_tui.ui.inbox.parts import InboxParts
from patch_tui.ui.safe_text import SafeReport, json_view, safe, safe_line
from patch_tui.ui.services import maybe_services

if TYPE_CHECKING:
    from patch_tui.approvals.review import ToolInfo
    from patch_tui.runtime.catalog import ToolCatalog

# How long the cursor rests before the detail pane follows it (seconds).
DETAIL_DELAY = 0.1
# The tool part of the details while its manifest is being read (DetailPart.tool_deferred).
TOOL_READING = Content.styled("reading the tool file…", "$text-muted")


def tool_info(action: Action, catalog: ToolCatalog | None = None) -> ToolInfo:
    """approvals/review.py's answer. Imported when first asked (the catalog reads tool files
    with YAML, which the inbox's first frame does not need: DetailPart.tool_deferred)."""
    from patch_tui.approvals import review

    return review.tool_info(action, catalog)


def blocked(action: Action, catalog: ToolCatalog | None = None) -> str | None:
    """approvals/review.py's answer: why `action` may not be approved, or None."""
    from patch_tui.approvals import review

    return review.blocked(action, catalog)


def app_catalog(node: DOMNode) -> ToolCatalog | None:
    """The app's shared catalog (ui/services.py), or None in a bare host."""
    svc = maybe_services(node.app)
    return svc.catalog if svc is not None else None


def label(text: str) -> Content:
    return Content.styled(text, "bold $text-muted")


def yes_no(value: Any) -> Content:
    if value is True:
        return Content.styled("true", "bold $text-warning")
    if value is False:
        return Content.styled("false", "$text-muted")
    return safe_line(str(value))


def ts(iso: str | None) -> float:
    try:
        return parse_iso(iso) if iso else 0.0
    except ValueError:
        return 0.0


class DetailPart(InboxParts):
    """The detail pane of the inbox screen, and the "everything was shown" gate on approving."""

    def _sync_detail(self) -> None:
        self._detail_timer = None
        action = self.list.current
        if action is not self.current:
            self._show_detail(action)

    def _show_detail(self, action: Action | None) -> None:
        same = (
            action is not None and self.current is not None and action.token == self.current.token
        )
        if (action is None) != (self.current is None):
            self.refresh_bindings()  # Reject is enabled only with an action selected
        self.current = action
        if not same:
            self.expanded = set()
            self.seen_end = False
            self.events = []
            self.detail.scroll_home(animate=False)
        statics = {
            name: self.query_one(f"#detail-{name}", Static)
            for name in ("banner", "head", "tool", "reason", "args", "result", "gate")
        }
        if action is None:
            for s in statics.values():
                s.update("")
            statics["banner"].remove_class("-shown")
            self.view = None
            self.can_approve = False
            return
        report = SafeReport()
        safe_line(action.tool, report=report)  # a look-alike tool name is in the banner too
        self._render_head(action)
        if self.tool_deferred:
            # The first page's first frame: the tool's manifest follows it (tool_arrived).
            statics["tool"].update(Content.assemble(label("tool\n"), TOOL_READING))
        else:
            info = tool_info(action, app_catalog(self))
            statics["tool"].update(self._tool_content(action, info, report))
        statics["reason"].update(self._reason_content(action, report))
        self.view = json_view(action.args, expanded=self.expanded)
        report.add(self.view.report)
        unknown = approvable.args_unknown_why(action)
        if action.damaged:
            # The stored row cannot be read: say so instead of showing `{}` as its args.
            statics["args"].update(
                Content.assemble(
                    label("args\n"),
                    Content.styled("DAMAGED: ", "bold $text-error"),
                    safe_line(action.damaged),
                    "\nIt can only be rejected (r).",
                )
            )
        elif unknown is not None:
            # guard could not recover what the upstream holds: never `{}`, never its summary.
            statics["args"].update(
                Content.assemble(
                    label("args\n"),
                    Content.styled("NOT KNOWN: ", "bold $text-error"),
                    safe(unknown),
                    "\nNo one can see what this call would do, so it cannot be approved. "
                    "It can only be rejected (r).",
                )
            )
        else:
            statics["args"].update(
                Content.assemble(label("args (canonical JSON, sorted keys)\n"), self.view.content)
            )
        result = self._result_content(action, report)
        statics["result"].update(result)
        statics["result"].display = bool(result)
        banner = report.banner()
        statics["banner"].update(banner or "")
        statics["banner"].set_class(banner is not None, "-shown")
        if self.mode == "history" and not same:
            self._load_events(action.token)
        self._update_gate()
        self._check_seen()

    def tool_arrived(self) -> None:
        """The manifest model is loaded (the poll worker validated the first action's tool):
        the tool part of the details, and the gate that needs it, are filled in."""
        if not self.tool_deferred:
            return
        self.tool_deferred = False
        if self.current is not None:
            self._show_detail(self.current)  # the same action: what was expanded or read stays

    def _render_head(self, action: Action) -> None:
        now = inbox_list.clock()
        parts: list[Content | tuple[str, str] | str] = [
            safe_line(action.tool, "bold"),
            " ",
            safe_line(action.version),
            "  ",
            safe_line(action.kind, "bold $text-warning"),
            "  ",
            # A forged approval (store.Action.tampered) says so where the status is read.
            safe_line(f"TAMPERED ({action.status})", "bold $text-error")
            if action.tampered
            else safe_line(action.status, "bold"),
            "\n",
            label("token "),
            safe_line(action.token),
            "\n",
            label("held "),
            safe_line(action.created_at),
            f" ({human_duration(now - ts(action.created_at))} ago)",
        ]
        if action.status in ("pending", "approved"):
            left = ts(action.expires_at) - now
            parts += ["\n", label("expires "), safe_line(action.expires_at), " "]
            parts.append(
                Content.styled(
                    f"(in {human_duration(left)})" if left > 0 else "(expired)",
                    "bold $text-error" if left < 30 else "",
                )
            )
        if action.decided_at:
            parts += ["\n", label("decided "), safe_line(action.decided_at), " by "]
            parts.append(safe_line(action.decided_by or "?"))
        if action.finished_at:
            parts += ["\n", label("finished "), safe_line(action.finished_at)]
        if action.standing:
            # "1 of 2: approved by alice": it stays pending until enough approvers approved.
            parts += ["\n", label("approvals "), safe_line(action.standing, "$text-warning")]
        if not action.decided_at and action.note:
            # Why it is pending (again): e.g. approved before approvals were signed.
            parts += ["\n", label("note "), safe_line(action.note, "$text-warning")]
        if action.tampered:
            parts += ["\n", label("tampered "), safe_line(action.tampered, "$text-error")]
            parts.append(" (never run)")
        self.query_one("#detail-head", Static).update(Content.assemble(*parts))

    def _tool_content(self, action: Action, info: ToolInfo, report: SafeReport) -> Content:
        parts: list[Content | str] = [label("tool\n")]
        if info.description is not None:
            parts += [safe(info.description, report=report), "\n"]
        caps = info.capabilities
        if caps is not None:
            parts += [
                "network ",
                yes_no(caps.get("network")),
                "  filesystem ",
                safe_line(str(caps.get("filesystem"))),
                "  human_confirm ",
                yes_no(caps.get("human_confirm")),
                "\n",
                "external_auth scopes ",
                safe_line(", ".join(info.scopes), "bold") if info.scopes else Content("none"),
                "\n",
            ]
        if info.path is not None:
            parts += ["source ", safe_line(str(info.path), "underline"), "  (o opens it)"]
        if info.problem:
            parts += ["\n", Content.styled("⚠ ", "bold $text-error"), safe(info.problem)]
        elif info.sha256 is not None and info.sha256 != action.source_sha256:
            parts += [
                "\n",
                Content.styled(
                    "⚠ the tool file changed since this call was held: confirming it will refuse "
                    "to run it (the approval binds the source it was held with)",
                    "bold $text-error",
                ),
            ]
        return Content.assemble(*parts)

    def _reason_content(self, action: Action, report: SafeReport) -> Content:
        parts: list[Content | str] = [label("reason\n"), safe(action.reason, report=report)]
        details = action.details or {}
        tainted = details.get("tainted_inputs")
        if action.kind == "tainted_input" and isinstance(tainted, list):
            parts.append(label("\ntainted inputs"))
            for item in tainted:
                if not isinstance(item, dict):
                    continue
                # The runtime's names (inputName, matchedTools); rows stored before used ours.
                sources = item.get("matchedTools") or item.get("source_tools") or []
                parts += [
                    "\n  ",
                    safe_line(str(item.get("inputName", item.get("input"))), "bold $text-warning"),
                    " ← output of ",
                    safe_line(", ".join(str(s) for s in sources), report=report),
                ]
                # Which output it matched and when: a value the person typed is told apart.
                for hit in item.get("matchedOutputs") or []:
                    if not isinstance(hit, dict):
                        continue
                    parts += [
                        "\n    ",
                        safe_line(str(hit.get("tool")), "bold"),
                        " at ",
                        safe_line(str(hit.get("at"))),
                        ": ",
                        safe_line(str(hit.get("excerpt")), report=report),
                    ]
        warning = workspace.warning(action) if action.status in ("pending", "approved") else None
        if warning is not None:
            parts += ["\n", safe_line("⚠ " + warning, "bold $text-error")]
        after = details.get("after_tainted_input")
        if isinstance(after, str):
            parts += [
                "\n",
                label("follows the approved taint confirmation "),
                safe_line(after[:8] + "…"),
            ]
        return Content.assemble(*parts)

    def _result_content(self, action: Action, report: SafeReport) -> Content:
        if action.status == "pending":
            return Content("")
        parts: list[Content | str] = []
        if action.note:
            parts += [label("note "), safe(action.note, report=report), "\n"]
        if action.result is not None:
            title = "error" if action.status == "failed" else "result"
            view = json_view(action.result, expanded=self.expanded)
            report.add(view.report)
            parts += [label(f"{title}\n"), view.content]
        if self.events:
            parts.append(label("\nevents"))
            for ev in self.events:
                detail = (
                    json.dumps(ev.detail, ensure_ascii=False, sort_keys=True) if ev.detail else ""
                )
                # Every field of the store is text another process wrote: shown, never obeyed.
                parts += [
                    "\n  ",
                    safe_line(ev.at),
                    "  ",
                    safe_line(ev.event, "bold"),
                    "  ",
                    safe_line(ev.actor),
                ]
                if detail:
                    parts += ["  ", safe_line(detail)]
        return Content.assemble(*parts)

    @work(thread=True, group="inbox-events", exclusive=True, exit_on_error=False)
    def _load_events(self, token: str) -> None:
        try:
            events = app_store(self.app).events(token)
        except StoreError:
            return
        try:
            self.app.call_from_thread(self._events_loaded, token, events)
        except RuntimeError:
            pass

    def _events_loaded(self, token: str, events: builtins.list[Event]) -> None:
        if self.current is not None and self.current.token == token:
            self.events = events
            report = SafeReport()
            result = self.query_one("#detail-result", Static)
            result.update(self._result_content(self.current, report))
            result.display = True

    # -- "shown once" before approve -----------------------------------------------------------

    def _detail_scrolled(self, _value: float) -> None:
        self._check_seen()

    def _detail_laid_out(self, _size: object) -> None:
        # A layout of the current content happened: nothing to scroll means all is in sight.
        if not self.seen_end and self.current is not None and self.detail.max_scroll_y <= 0:
            self.seen_end = True
            self._update_gate()

    def _check_seen(self) -> None:
        """Everything was on screen once: the content fits the pane, or the person scrolled to
        its end. Fitting is computed from the content itself, never from the pane's last layout
        (which may still be the previous action's: a short one would unlock a long one)."""
        if self.seen_end or self.current is None:
            return
        detail = self.detail
        scrolled = detail.max_scroll_y > 0 and detail.scroll_y >= detail.max_scroll_y - 0.5
        if scrolled or self._fits():
            self.seen_end = True
            self._update_gate()

    def _fits(self) -> bool:
        detail = self.detail
        region = detail.scrollable_content_region
        if region.width <= 0 or region.height <= 0:
            return False
        total = 0
        for child in detail.children:
            if not child.display:
                continue
            styles = child.styles
            inner = max(1, region.width - styles.gutter.width)
            total += (
                child.get_content_height(region.size, region.size, inner)
                + styles.gutter.height
                + styles.margin.height
            )
        return total <= region.height

    def _update_gate(self) -> None:
        self._gate()
        selected = self.list.selected if self.mode == "pending" else set()
        if selected:
            # a and r decide the selection now (inbox/batch.py), whatever this one's state.
            n = len(selected)
            self.detail.border_subtitle = f"{n} selected: a / r decide {'it' if n == 1 else 'them'} in one dialog · esc clears"

    def _gate(self) -> None:
        action = self.current
        gate = self.query_one("#detail-gate", Static)
        if action is None or action.status != "pending":
            if self.can_approve:
                self.can_approve = False
                self.refresh_bindings()
            gate.update("")
            self.detail.border_subtitle = ""
            return
        if self.tool_deferred:
            # Never approvable before the tool file was checked against the held source.
            gate.set_class(False, "-ready")
            gate.update(Content("Approve is disabled until the tool file was read."))
            self.detail.border_subtitle = "reading the tool file…"
            return
        problem = approvable.check(action, tool_info(action, app_catalog(self)).sha256)
        if problem is not None:
            # Approving it could never run it, or no one can see what it would do: refused
            # here, with the reason (approvals.approvable's words), not after.
            if self.can_approve:
                self.can_approve = False
                self.refresh_bindings()
            gate.set_class(False, "-ready")
            gate.update(Content(f"Approve is disabled: {problem.why}. r rejects it."))
            self.detail.border_subtitle = (
                "tool file changed: approve disabled · r reject"
                if problem.code == "tool_changed"
                else "cannot be approved: r reject"
            )
            return
        missing: list[str] = []
        if self.view is not None and self.view.collapsed:
            n = len(self.view.collapsed)
            missing.append(f"expand {n} collapsed value{'s' if n != 1 else ''} (E)")
        if not self.seen_end:
            missing.append("scroll the details to the end")
        if self.can_approve != (not missing):
            self.can_approve = not missing
            self.refresh_bindings()  # the footer greys Approve out (costly: only on a change)
        gate.set_class(not missing, "-ready")
        if missing:
            gate.update(
                Content(
                    "Approve is disabled until everything was shown: " + " and ".join(missing) + "."
                )
            )
            # In the pane's border too: the gate line itself may be below the fold.
            self.detail.border_subtitle = "approve after reading: " + " and ".join(
                m.replace("scroll the details to the end", "d to read on") for m in missing
            )
        else:
            gate.update(Content("Everything was shown. a approves, r rejects."))
            self.detail.border_subtitle = "all shown: a approve · r reject"
