"""What both store backends share below their rows: the few things each connection provides
(the dialect), and the plumbing every transition uses on top of them.

The SQLite `Store` (approvals/store.py over connection.py) and the PostgreSQL `PgStore`
(approvals/postgres/) keep the same tables with the same columns, and make the same
transitions with the same conditional statements. Those statements are written once, in the
row modules both stores are assembled from:

    action_rows   create, read, list, events; claim, refuse, finish; expire one
    decision_rows signed decisions and the transitions they make; a grant's approval
    grant_rows    standing grants with their signatures and revocation
    settling      expiry and dead claimers
    reading       who is reading which call (the team inbox's claims)
    output_rows   the taint gate's memory of recent outputs

Each is a mixin over `SqlBackend`, which names what a connection gives them:

- `_write()`: one write transaction in which this writer has the store to itself (SQLite's
  BEGIN IMMEDIATE; PostgreSQL's bump of the one store_version row), committed whole or not at
  all; `_read(sql, params)`: a read outside it, and `_read_conn()` a connection for several.
  Every error comes out as a StoreError.
- SQL is written with `?` placeholders and no `%` (PostgreSQL's connection turns `?` into
  psycopg's `%s`); enum values are passed as plain strings (psycopg would send an Enum's name).
- `_FOR_UPDATE`: what locks a row read inside a write (PostgreSQL's ` FOR UPDATE`; nothing on
  SQLite, where the transaction already holds the whole file).
- `_insert_id(conn, sql, params)`: an INSERT's new row id (`lastrowid`; `RETURNING id`).

So every transition stays one conditional UPDATE in one transaction on both, and a fix to one
is a fix to both. What truly differs stays with its backend: opening, migrations, errors in
words, `data_version` and waiting for a change, and reading the signatures of thousands of
actions at once.
"""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import AbstractContextManager
from dataclasses import replace
from typing import Any, ClassVar

from patch_tui.approvals.records import Grant, Signature
from patch_tui.approvals.schema import _ACTION_COLUMNS, _row_to_action
from patch_tui.approvals.values import Action, Decision, canonical_json, refusal_note

# A DB-API connection inside a write transaction: sqlite3's, or psycopg's behind the `?`
# translation. Both give execute(sql, params) -> a cursor with fetchone, fetchall, rowcount.
Conn = Any


def read_action(row: tuple[Any, ...]) -> Action:
    """An Action as read for a person: `tampered` says why confirm refused to run it, when it
    did (the refusal is kept as its result)."""
    action = _row_to_action(row)
    note = refusal_note(action)
    return replace(action, tampered=note) if note else action


class SqlBackend:
    """The dialect a backend's connection class provides, and the plumbing built on it."""

    actor: str
    ttl: float
    _host: str
    _pid: int
    _FOR_UPDATE: ClassVar[str] = ""

    def _now(self) -> float:
        raise NotImplementedError

    def _write(self) -> AbstractContextManager[Conn]:
        raise NotImplementedError

    def _read(self, sql: str, params: Iterable[Any] = ()) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    def _read_conn(self) -> AbstractContextManager[Conn]:
        """A connection for several reads outside a write (errors as StoreError)."""
        raise NotImplementedError

    def _insert_id(self, conn: Conn, sql: str, params: tuple[Any, ...]) -> int:
        raise NotImplementedError

    # What one row module asks of another (they are mixed into one store class).

    def _grant_in(self, conn: Conn, grant_id: int, *, lock: bool = False) -> Grant | None:
        raise NotImplementedError  # grant_rows.GrantRows

    def _not_open(self, conn: Conn, action_id: int, action: Action, at: str) -> Decision:
        raise NotImplementedError  # action_rows.ActionRows

    def _expire_one(self, conn: Conn, action_id: int, action: Action, at: str) -> Action:
        raise NotImplementedError  # action_rows.ActionRows

    # -- plumbing -----------------------------------------------------------------------------

    def _event(
        self,
        conn: Conn,
        action_id: int,
        event: str,
        at: str,
        *,
        actor: str | None = None,
        **detail: Any,
    ) -> None:
        """One row of the append-only event log: who (the process, or the decider given), when,
        what, and its details as canonical JSON."""
        conn.execute(
            "INSERT INTO events (action_id, at, actor, event, detail) VALUES (?, ?, ?, ?, ?)",
            (action_id, at, actor or self.actor, event, canonical_json(detail)),
        )

    def _select_action(
        self, conn: Conn, token: str, *, lock: bool = False
    ) -> tuple[int, Action] | None:
        """(row id, Action) of `token` inside a transaction; `lock`: held until it ends."""
        sql = f"SELECT id, {_ACTION_COLUMNS} FROM actions WHERE token = ?"
        row = conn.execute(sql + (self._FOR_UPDATE if lock else ""), (token,)).fetchone()
        if row is None:
            return None
        return int(row[0]), _row_to_action(row[1:])

    def _signatures(self, conn: Conn, action_id: int) -> list[Signature]:
        rows = conn.execute(
            "SELECT approver, decision, at, envelope, note FROM signatures "
            "WHERE action_id = ? ORDER BY id",
            (action_id,),
        ).fetchall()
        return [Signature(r[0], r[1], r[2], r[3], r[4]) for r in rows]
