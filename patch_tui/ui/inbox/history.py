"""The inbox's history view: decided, executed, failed, expired and interrupted actions, with
who, when, the note and the run's result or error; filtered by tool and status; exported.

`x` writes the filtered rows as the audit export writes them (`patch-tui inbox export`,
approvals/audit.py): one record per action with its decision, who, when, note or reason, grant,
edited args and the run's outcome, oldest first, as JSONL (every event included), or as CSV
when the file name ends in `.csv` (formula-looking cells quoted as the CLI does).
"""

from __future__ import annotations

import builtins
import io
from datetime import datetime
from pathlib import Path
from typing import Any

from textual import on, work
from textual.containers import Horizontal
from textual.widgets import Input, Select, Static

from patch_tui.approvals.store import Action, ActionStatus, StoreError
from patch_tui.ui.inbox.inbox_badge import app_store
from patch_tui.ui.inbox.parts import InboxParts

HISTORY_STATUSES = tuple(s for s in ActionStatus if s != ActionStatus.PENDING)


def export_format(target: Path) -> str:
    """ "csv" for a .csv file name, else "jsonl" (the exact record)."""
    return "csv" if target.suffix.lower() == ".csv" else "jsonl"


def write_export(store: Any, target: Path, tokens: list[str]) -> int:
    """Write the audit records of `tokens` (oldest first) to `target`; returns how many."""
    from patch_tui.approvals import audit
    from patch_tui.runtime.toolbox import atomic_write

    rows = audit.records(store, tokens=tokens)
    buf = io.StringIO(newline="")
    write = audit.write_csv if export_format(target) == "csv" else audit.write_jsonl
    count = write(rows, buf)
    atomic_write(target, buf.getvalue().encode("utf-8"))
    return count


class HistoryPart(InboxParts):
    """The history view of the inbox screen: switching to it, its filters, its export."""

    def action_toggle_history(self) -> None:
        self.mode = "history" if self.mode == "pending" else "pending"

    def watch_mode(self, mode: str) -> None:
        self.set_class(mode == "history", "-history")
        filters = self.query_one("#inbox-filters", Horizontal)
        if mode == "history" and not filters.children:
            filters.mount_all(
                [
                    Input(placeholder="filter by tool", id="filter-tool", compact=True),
                    Select(
                        [(s, s) for s in HISTORY_STATUSES],
                        prompt="any status",
                        id="filter-status",
                        compact=True,
                    ),
                ]
            )
        self.actions = []
        self.current = None
        self.version = None
        self._show_columns()
        self.list.set_actions([])
        self.query_one("#inbox-status", Static).update("Reading the confirmation store…")
        self._tick()
        self.refresh_bindings()

    def _show_columns(self) -> None:
        raise NotImplementedError

    def _update_status(self) -> None:
        raise NotImplementedError

    @on(Input.Changed, "#filter-tool")
    @on(Select.Changed, "#filter-status")
    def _filter_changed(self, event: Any) -> None:
        event.stop()
        if self.mode == "history":
            self._apply_filter()
            self._update_status()

    def filtered(self, rows: builtins.list[Action]) -> builtins.list[Action]:
        """The history rows the tool and status filters let through."""
        if self.mode != "history" or not self.query("#filter-tool"):
            return rows
        text = self.query_one("#filter-tool", Input).value.strip().lower()
        status = self.query_one("#filter-status", Select).value
        if text:
            rows = [a for a in rows if text in a.tool.lower()]
        if isinstance(status, str):
            rows = [a for a in rows if a.status == status]
        return rows

    def action_export(self) -> None:
        if self.mode != "history":
            return
        from patch_tui.ui.dialogs.confirm import PromptModal

        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        default = str(Path.cwd() / f"patch-tui-history-{stamp}.jsonl")
        tokens = [a.token for a in self.shown]

        def chosen(target: str | None) -> None:
            if target:
                self._export(Path(target).expanduser(), tokens)

        self.app.push_screen(
            PromptModal(
                f"Export {len(tokens)} action(s), as `patch-tui inbox export` writes them, to "
                "(a .csv name writes CSV, any other JSONL):",
                title="Export history",
                value=default,
            ),
            chosen,
        )

    @work(thread=True, group="inbox-export", exit_on_error=False)
    def _export(self, target: Path, tokens: builtins.list[str]) -> None:
        try:
            count = write_export(app_store(self.app), target, tokens)
            message = f"Exported {count} action(s) as {export_format(target).upper()} to {target}"
            severity = "information"
        except OSError as exc:
            message, severity = f"Cannot write {target}: {exc.strerror or exc}", "error"
        except StoreError as exc:
            message, severity = f"Cannot read the store: {exc}", "error"
        try:
            self.app.call_from_thread(self.notify, message, severity=severity, markup=False)
        except RuntimeError:
            pass
