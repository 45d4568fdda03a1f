"""The taint gate's memory, for both backends (approvals/sql_backend.py): the outputs tools
returned lately (as the Patch runtime keeps them: the last 20 of the last 30 minutes), shared
by every process on the store (approvals/gate.py compares a call's args with them)."""

from __future__ import annotations

from patch_tui.approvals.sql_backend import SqlBackend
from patch_tui.approvals.values import RECENT_OUTPUT_MAX_AGE, RECENT_OUTPUTS


class OutputRows(SqlBackend):
    def record_output(self, tool: str, text: str) -> None:
        """Remember a tool's output text for the taint gate (every process sees it)."""
        now = self._now()
        with self._write() as conn:
            conn.execute(
                "INSERT INTO recent_outputs (tool, text, recorded_at) VALUES (?, ?, ?)",
                (tool, text, now),
            )
            conn.execute(
                "DELETE FROM recent_outputs WHERE recorded_at < ? OR id NOT IN "
                "(SELECT id FROM recent_outputs ORDER BY id DESC LIMIT ?)",
                (now - RECENT_OUTPUT_MAX_AGE, RECENT_OUTPUTS),
            )

    def recent_outputs(self) -> list[tuple[str, str]]:
        """(tool, text) of the last 20 outputs of the last 30 minutes, newest first."""
        return [(tool, text) for tool, text, _at in self.recent_outputs_at()]

    def recent_outputs_at(self) -> list[tuple[str, str, float]]:
        """(tool, text, recorded_at) of the same outputs: a held taint says which output it
        matched and when (issue 25)."""
        cutoff = self._now() - RECENT_OUTPUT_MAX_AGE
        rows = self._read(
            "SELECT tool, text, recorded_at FROM recent_outputs WHERE recorded_at >= ? "
            "ORDER BY id DESC LIMIT ?",
            (cutoff, RECENT_OUTPUTS),
        )
        return [(r[0], r[1], float(r[2])) for r in rows]
