"""The PostgreSQL store's connections, the write transaction, reads, migrations, and every
driver error as one line for a person that never holds the password. It is the
dialect the row modules both backends share are written against (approvals/sql_backend.py):
their `?` placeholders become psycopg's `%s`, a row read inside a write is locked ` FOR UPDATE`,
and an INSERT's id comes back with `RETURNING id`.

Writers take turns: each write transaction first bumps `store_version` (one row), so the
conditional UPDATE after it sees every committed change and no other writer can act meanwhile,
as SQLite's BEGIN IMMEDIATE does; the transaction ends with NOTIFY carrying the new version,
delivered to listeners only when it commits. Readers never wait.

Connections: a long-lived process (serve, guard, the TUI, the web app) keeps a psycopg_pool
pool, which checks a connection before lending it and refills itself after the server restarts.
A one-shot command (`inbox list`, `show`, `approve`) opens the store with `pooled=False`: the
connection that checked the schema is the one its statements use, and a second is opened only
while the first is busy (another thread, or a read inside a write), so `inbox list` opens one
connection and never imports psycopg_pool. A kept connection idle for a while is checked, as the
pool does, before it is used again (a person may answer `approve`'s question minutes later).

Time limits, so a person is never left staring at a frozen screen: `connect_timeout` (5 s unless
the URL says), a `lock_timeout` for a writer's turn (the busy timeout: StoreBusy, as SQLite's),
and a `statement_timeout` (15 s unless the URL's `options` set one). A statement cut short
rolls its transaction back whole: nothing is half-recorded.
"""

from __future__ import annotations

import logging
import os
import socket
import sys
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Self

import psycopg
from psycopg import errors as pg_errors
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from patch_tui.approvals.postgres.migrations import (
    CHANNEL,
    MIGRATION_LOCK,
    MIGRATIONS,
    SCHEMA_VERSION,
    VERSION_TABLE,
)
from patch_tui.approvals.sql_backend import SqlBackend
from patch_tui.approvals.values import (
    BUSY_TIMEOUT_MS,
    DEFAULT_TTL,
    StoreBusy,
    StoreError,
    StoreReadOnly,
    StoreUnavailable,
    default_actor,
)
from patch_tui.settings.store_location import DatabaseURL

if TYPE_CHECKING:
    from psycopg_pool import ConnectionPool

    from patch_tui.approvals.postgres.feed import ChangeFeed

# The pool logs each failed reconnection as a warning; with no logging set up Python would print
# them to stderr, over the TUI's screen. What matters reaches the person as a StoreError instead.
for _name in ("psycopg", "psycopg.pool"):
    logging.getLogger(_name).addHandler(logging.NullHandler())
    logging.getLogger(_name).propagate = False

CONNECT_TIMEOUT_S = 5
STATEMENT_TIMEOUT_MS = 15_000
POOL_MAX = 4
# A one-shot store's kept connection idle longer than this is checked before it is used again.
IDLE_CHECK_S = 2.0


class StoreUnreachable(StoreUnavailable):
    """The database server cannot be reached or refuses the connection (down, wrong host or
    port, authentication, TLS). Commands exit 2 on it at start."""


def _first_line(text: str) -> str:
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    return lines[0] if lines else ""


class Scrubber:
    """Removes the URL and its password from any text before it is shown."""

    def __init__(self, location: DatabaseURL) -> None:
        self.secrets = [location.secret_url]
        try:
            password = conninfo_to_dict(location.secret_url).get("password")
        except psycopg.Error:
            password = None
        if password:
            self.secrets.append(str(password))

    def __call__(self, text: str) -> str:
        for secret in sorted(self.secrets, key=len, reverse=True):
            if secret:
                text = text.replace(secret, "***")
        return text


def _pool_timeout(exc: BaseException) -> bool:
    """psycopg_pool's PoolTimeout, without importing the pool where no pool was made."""
    pool = sys.modules.get("psycopg_pool")
    return pool is not None and isinstance(exc, pool.PoolTimeout)


def translate(exc: BaseException, location: DatabaseURL, scrub: Scrubber) -> StoreError:
    """A driver error in words, for a person, never holding the password (the location is
    printed redacted, and the driver's text is scrubbed of the URL and the password)."""
    where = str(location)
    detail = scrub(_first_line(str(exc)))
    if _pool_timeout(exc):
        return StoreBusy(
            f"{where}: no connection to the PostgreSQL store came free in time; try again"
        )
    if isinstance(exc, pg_errors.QueryCanceled):
        return StoreBusy(
            f"{where}: the database did not answer in time (statement timeout); "
            "nothing was changed; try again"
        )
    if isinstance(exc, pg_errors.LockNotAvailable):
        return StoreBusy(
            f"{where}: the confirmation store is busy (another writer held it for more than "
            f"{BUSY_TIMEOUT_MS // 1000} s); try again"
        )
    if isinstance(exc, pg_errors.DiskFull | pg_errors.OutOfMemory | pg_errors.ProgramLimitExceeded):
        return StoreReadOnly(
            f"{where}: the database server cannot write ({detail}); nothing was recorded"
        )
    if isinstance(exc, pg_errors.InsufficientPrivilege):
        return StoreUnavailable(
            f"{where}: the database role may not do this ({detail}); see the team inbox guide's "
            "roles"
        )
    if isinstance(exc, pg_errors.UndefinedTable):
        return StoreUnavailable(
            f"{where}: the database has no patch-tui schema: run `patch-tui store migrate`"
        )
    if isinstance(exc, psycopg.OperationalError):
        return StoreUnreachable(f"{where}: cannot reach the PostgreSQL store: {detail}")
    return StoreUnavailable(f"{where}: the PostgreSQL store failed: {detail}")


@lru_cache(maxsize=512)
def pg_sql(sql: str) -> bytes:
    """A row module's statement for psycopg: `?` placeholders as `%s` (a `%` of its own,
    which the row modules do not write, doubled). The statements are a fixed set: cached."""
    return sql.replace("%", "%%").replace("?", "%s").encode()


class Qmark:
    """A psycopg connection inside a write transaction, taking `?` placeholders."""

    __slots__ = ("conn",)

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self.conn = conn

    def execute(self, sql: str, params: Sequence[Any] = ()) -> psycopg.Cursor[Any]:
        return self.conn.execute(pg_sql(sql), tuple(params))


class PgConnection(SqlBackend):
    """The connections to one PostgreSQL store (a pool, or for a one-shot command the one it
    opened), and the plumbing of PgStore."""

    _FOR_UPDATE = " FOR UPDATE"

    def __init__(
        self,
        location: DatabaseURL,
        *,
        actor: str = "cli",
        ttl: float = DEFAULT_TTL,
        busy_timeout_ms: int = BUSY_TIMEOUT_MS,
        migrate: bool | None = True,
        pool_max: int = POOL_MAX,
        pooled: bool = True,
    ) -> None:
        self.location = location
        self.path = location  # what messages print: the redacted URL
        self.actor = actor if "@" in actor else default_actor(actor)
        self.ttl = ttl
        self._host = socket.gethostname()
        self._pid = os.getpid()
        self._scrub = Scrubber(location)
        self._busy_timeout_ms = busy_timeout_ms
        self._conninfo = self._build_conninfo()
        self._feed: ChangeFeed | None = None
        self._feed_lock = threading.Lock()
        # One connection first: it says at once, in words, when the server is down or refuses
        # us (a pool would only time out), and checks the schema. True: migrate when this role
        # may (else refuse, naming `store migrate`); False: refuse an old schema; None: neither
        # (`store migrate` itself).
        first = self._connect()
        try:
            if migrate:
                self.migrate(only_when_owner=True, conn=first)
            elif migrate is False:
                self._check_schema(first)
        except BaseException:
            first.close()
            raise
        self._pool: ConnectionPool | None = None
        # A one-shot store's connections not in use, each with when it was last given back.
        self._idle: list[tuple[psycopg.Connection[Any], float]] = []
        self._idle_lock = threading.Lock()
        self._closed = False
        if pooled:
            first.close()
            self._pool = self._open_pool(pool_max)
        else:
            self._idle.append((first, time.monotonic()))

    # -- opening ------------------------------------------------------------------------------

    def _open_pool(self, pool_max: int) -> ConnectionPool:
        from psycopg_pool import ConnectionPool

        pool = ConnectionPool(
            self._conninfo,
            min_size=1,
            max_size=max(1, pool_max),
            kwargs={"autocommit": True},
            configure=self._configure,
            check=ConnectionPool.check_connection,
            open=False,
            timeout=max(2.0, self._busy_timeout_ms / 1000),
            name="patch-tui-store",
        )
        # Filled in the background: the first use waits for it (the server answered just now).
        pool.open(wait=False)
        return pool

    def _build_conninfo(self) -> str:
        try:
            given = conninfo_to_dict(self.location.secret_url)
        except psycopg.Error as exc:
            raise StoreUnreachable(
                f"{self.location}: not a PostgreSQL connection URL: "
                f"{self._scrub(_first_line(str(exc)))}"
            ) from None
        extra: dict[str, Any] = {}
        if "connect_timeout" not in given:
            extra["connect_timeout"] = CONNECT_TIMEOUT_S
        if "application_name" not in given:
            extra["application_name"] = f"patch-tui {self.actor.rpartition('@')[2]}"[:63]
        return make_conninfo(self.location.secret_url, **extra)

    def _connect(self) -> psycopg.Connection[Any]:
        try:
            conn = psycopg.connect(self._conninfo, autocommit=True)
        except psycopg.Error as exc:
            raise self._translate(exc) from None
        self._configure(conn)
        return conn

    def _configure(self, conn: psycopg.Connection[Any]) -> None:
        """Per-connection limits: a writer waits its turn at most the busy timeout; a statement
        that runs past the statement timeout is cancelled (the URL's own `options` win). One
        round trip: a statement without parameters may hold several."""
        settings = [
            f"SET lock_timeout = {int(self._busy_timeout_ms)}",
            "SET idle_in_transaction_session_timeout = 60000",
        ]
        options = conninfo_to_dict(self._conninfo).get("options") or ""
        if "statement_timeout" not in str(options):
            settings.insert(0, f"SET statement_timeout = {int(STATEMENT_TIMEOUT_MS)}")
        conn.execute("; ".join(settings).encode())

    def _check_reachable(self) -> None:
        self._connect().close()

    def schema_state(self, conn: psycopg.Connection[Any]) -> tuple[int, bool]:
        """(the schema version applied, 0 for none; whether this role may create tables)."""
        row = conn.execute(
            "SELECT to_regclass('schema_version') IS NOT NULL, "
            "has_schema_privilege(current_schema(), 'CREATE')"
        ).fetchone()
        assert row is not None
        exists, may_create = bool(row[0]), bool(row[1])
        if not exists:
            return 0, may_create
        got = conn.execute("SELECT coalesce(max(version), 0) FROM schema_version").fetchone()
        return int(got[0] if got else 0), may_create

    def _check_schema(self, conn: psycopg.Connection[Any]) -> None:
        try:
            version, _may_create = self.schema_state(conn)
        except psycopg.Error as exc:
            raise self._translate(exc) from None
        self._refuse_version(version, may_create=False)

    def _refuse_version(self, version: int, *, may_create: bool) -> None:
        if version > SCHEMA_VERSION:
            raise StoreUnavailable(
                f"{self.location}: the store was written by a newer patch-tui (schema "
                f"{version}, this one knows {SCHEMA_VERSION}); upgrade patch-tui"
            )
        if version < SCHEMA_VERSION and not may_create:
            raise StoreUnavailable(
                f"{self.location}: the store's schema is at version {version}, this patch-tui "
                f"needs {SCHEMA_VERSION}: run `patch-tui store migrate` as the schema's owner"
            )

    def migrate(
        self, *, only_when_owner: bool = False, conn: psycopg.Connection[Any] | None = None
    ) -> int:
        """Apply the missing migrations, in one transaction, under an advisory lock (so
        processes starting together migrate once). Returns how many were applied.
        `only_when_owner`: a role that may not create tables refuses with the command to run."""
        own = conn is None
        conn = self._connect() if conn is None else conn
        try:
            version, may_create = self.schema_state(conn)
            if version == SCHEMA_VERSION:
                return 0
            self._refuse_version(version, may_create=may_create or not only_when_owner)
            applied = 0
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
                conn.execute(VERSION_TABLE)
                version, _ = self.schema_state(conn)  # again, under the lock
                for index in range(version, SCHEMA_VERSION):
                    conn.execute(MIGRATIONS[index].encode())
                    conn.execute("INSERT INTO schema_version (version) VALUES (%s)", (index + 1,))
                    applied += 1
            return applied
        except psycopg.Error as exc:
            raise self._translate(exc) from None
        finally:
            if own:
                conn.close()

    def close(self) -> None:
        with self._feed_lock:
            feed, self._feed = self._feed, None
        if feed is not None:
            feed.close()
        if self._pool is not None:
            self._pool.close()
        with self._idle_lock:
            idle, self._idle, self._closed = self._idle, [], True
        for conn, _since in idle:
            conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- plumbing -----------------------------------------------------------------------------

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        """A connection for one transaction or a few reads: the pool's, or a one-shot store's
        kept one (a new one while it is busy, kept afterwards when it is still sound)."""
        if self._pool is not None:
            with self._pool.connection() as conn:
                yield conn
            return
        conn = self._take_idle()
        try:
            yield conn
        finally:
            self._give_back(conn)

    def _take_idle(self) -> psycopg.Connection[Any]:
        with self._idle_lock:
            conn, since = self._idle.pop() if self._idle else (None, 0.0)
        if conn is None:
            return self._connect()
        if time.monotonic() - since > IDLE_CHECK_S:
            try:
                conn.execute(b"")  # as the pool checks a connection before lending it
            except psycopg.Error:
                conn.close()
                return self._connect()
        return conn

    def _give_back(self, conn: psycopg.Connection[Any]) -> None:
        sound = not conn.closed and not conn.broken
        if sound and conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE:
            with self._idle_lock:
                if not self._closed:
                    self._idle.append((conn, time.monotonic()))
                    return
        conn.close()

    def _translate(self, exc: BaseException) -> StoreError:
        if _pool_timeout(exc):
            # No pooled connection in time: say why when the server is the reason (down,
            # refusing), not "busy".
            try:
                self._check_reachable()
            except StoreUnreachable as down:
                return down
        return translate(exc, self.location, self._scrub)

    def _now(self) -> float:
        return time.time()

    @contextmanager
    def _write(self) -> Iterator[Qmark]:
        """One write transaction: this writer's turn first (the store_version row), then the
        caller's conditional statements, then NOTIFY with the new version; all or nothing."""
        try:
            with self._connection() as conn, conn.transaction():
                row = conn.execute(
                    "UPDATE store_version SET n = n + 1 WHERE one RETURNING n"
                ).fetchone()
                version = int(row[0]) if row else 0
                yield Qmark(conn)
                conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, str(version)))
        except psycopg.Error as exc:  # psycopg_pool's errors are psycopg's too
            raise self._translate(exc) from None

    def _read(self, sql: str, params: Iterable[Any] = ()) -> list[tuple[Any, ...]]:
        try:
            with self._connection() as conn:
                return conn.execute(pg_sql(sql), tuple(params)).fetchall()
        except psycopg.Error as exc:  # psycopg_pool's errors are psycopg's too
            raise self._translate(exc) from None

    @contextmanager
    def _read_conn(self) -> Iterator[Qmark]:
        try:
            with self._connection() as conn:
                yield Qmark(conn)
        except psycopg.Error as exc:  # psycopg_pool's errors are psycopg's too
            raise self._translate(exc) from None

    def _insert_id(self, conn: Qmark, sql: str, params: tuple[Any, ...]) -> int:
        row = conn.execute(sql + " RETURNING id", params).fetchone()
        assert row is not None
        return int(row[0])

    # -- the change feed ----------------------------------------------------------------------

    def feed(self) -> ChangeFeed:
        """The LISTEN connection of this store, started on first use (a CLI command that never
        waits never opens it)."""
        with self._feed_lock:
            if self._feed is None:
                from patch_tui.approvals.postgres.feed import ChangeFeed

                self._feed = ChangeFeed(self._conninfo, self._translate)
            return self._feed
