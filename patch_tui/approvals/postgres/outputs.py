"""The taint gate's memory on PostgreSQL: the outputs tools returned lately, shared by every
process on the database (approvals/gate.py compares a call's args with them)."""

from __future__ import annotations

from patch_tui.approvals.postgres.reading import PgReading
from patch_tui.approvals.values import RECENT_OUTPUT_MAX_AGE, RECENT_OUTPUTS


class PgOutputs(PgReading):
    def record_output(self, tool: str, text: str) -> None:
        now = self._now()
        with self._write() as conn:
            conn.execute(
                "INSERT INTO recent_outputs (tool, text, recorded_at) VALUES (%s, %s, %s)",
                (tool, text, now),
            )
            conn.execute(
                "DELETE FROM recent_outputs WHERE recorded_at < %s OR id NOT IN "
                "(SELECT id FROM recent_outputs ORDER BY id DESC LIMIT %s)",
                (now - RECENT_OUTPUT_MAX_AGE, RECENT_OUTPUTS),
            )

    def recent_outputs(self) -> list[tuple[str, str]]:
        return [(tool, text) for tool, text, _at in self.recent_outputs_at()]

    def recent_outputs_at(self) -> list[tuple[str, str, float]]:
        """(tool, text, recorded_at) newest first: a held taint names when the output was seen."""
        cutoff = self._now() - RECENT_OUTPUT_MAX_AGE
        rows = self._read(
            "SELECT tool, text, recorded_at FROM recent_outputs WHERE recorded_at >= %s "
            "ORDER BY id DESC LIMIT %s",
            (cutoff, RECENT_OUTPUTS),
        )
        return [(r[0], r[1], float(r[2])) for r in rows]
