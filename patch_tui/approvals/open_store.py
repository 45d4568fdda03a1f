"""Opening the confirmation store wherever it is: one function for every front end.

    open_store(location, actor="cli", ttl=DEFAULT_TTL, ...) -> ApprovalStore
        a Path: the SQLite Store (the embedded default); a DatabaseURL (settings/store_location):
        the PostgreSQL PgStore, whose driver is the `postgres` extra.

psycopg is imported only here, and only for a PostgreSQL location: the SQLite path, the CLI's
start-up and every tool run never load it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from patch_tui.approvals.values import BUSY_TIMEOUT_MS, DEFAULT_TTL, StoreUnavailable
from patch_tui.settings.store_location import DatabaseURL, StoreLocation

MISSING_EXTRA = (
    "the PostgreSQL store needs the `postgres` extra: pip install 'patch-tui[postgres]' "
    "(psycopg 3 and psycopg_pool)"
)


def open_store(
    location: StoreLocation,
    *,
    actor: str = "cli",
    ttl: float = DEFAULT_TTL,
    busy_timeout_ms: int = BUSY_TIMEOUT_MS,
    migrate: bool = True,
    pooled: bool = True,
) -> Any:
    """The store at `location`; StoreError (one line for a person) when it cannot be opened.
    `pooled=False`: for a one-shot command, a PostgreSQL store without a connection pool (the
    one connection it opened is the one it uses; postgres/connection.py)."""
    if isinstance(location, DatabaseURL):
        pg_store = _pg_store_class()
        return pg_store(
            location,
            actor=actor,
            ttl=ttl,
            busy_timeout_ms=busy_timeout_ms,
            migrate=migrate,
            pooled=pooled,
        )
    from patch_tui.approvals.store import Store

    return Store(Path(location), actor=actor, ttl=ttl, busy_timeout_ms=busy_timeout_ms)


def _pg_store_class() -> Any:
    from importlib.util import find_spec

    # Both halves of the extra, though a one-shot store never imports the pool: a missing
    # extra is the same one line whichever command meets it first.
    try:
        import psycopg  # noqa: F401
    except ImportError:
        raise StoreUnavailable(MISSING_EXTRA) from None
    if find_spec("psycopg_pool") is None:
        raise StoreUnavailable(MISSING_EXTRA)
    from patch_tui.approvals.postgres.store import PgStore

    return PgStore


def migrate_store(location: StoreLocation) -> tuple[int, int]:
    """Apply the missing migrations (`patch-tui store migrate`): (how many, schema version)."""
    if isinstance(location, DatabaseURL):
        _pg_store_class()
        from patch_tui.approvals.postgres.connection import PgConnection
        from patch_tui.approvals.postgres.migrations import SCHEMA_VERSION

        with PgConnection(location, migrate=None, pooled=False) as conn:
            return conn.migrate(), SCHEMA_VERSION
    from patch_tui.approvals.store import SCHEMA_VERSION as SQLITE_VERSION
    from patch_tui.approvals.store import Store

    with Store(Path(location), actor="cli"):
        pass  # opening a SQLite store applies its migrations
    return 0, SQLITE_VERSION
