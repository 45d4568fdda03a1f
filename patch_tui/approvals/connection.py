"""The SQLite store's connection: opening (permissions, WAL, migrations), the write
transaction, reads: the dialect the row modules both backends share are written against
(approvals/sql_backend.py). `Store` (approvals/store.py) is assembled from them over this. No
secret is read or kept here: what makes an approval is a person's signature
(approvals/decisions.py), which the store only keeps."""

from __future__ import annotations

import os
import socket
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Self

from patch_tui.approvals.schema import (
    MIGRATIONS,
    SCHEMA_VERSION,
    _split_sql,
    _translate,
    lenient_text,
)
from patch_tui.approvals.sql_backend import SqlBackend
from patch_tui.approvals.store_files import _check_permissions
from patch_tui.approvals.values import (
    BUSY_TIMEOUT_MS,
    DEFAULT_TTL,
    StoreError,
    StoreReadOnly,
    StoreUnavailable,
    default_actor,
)
from patch_tui.runtime.protected import remember_store


def _pid_start(pid: int) -> str | None:
    """The process's start time in clock ticks (Linux), so a reused pid is not taken for alive."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: split after its last ')'.
    fields = stat[stat.rfind(")") + 2 :].split()
    return fields[19] if len(fields) > 19 else None


def _pid_alive(pid: int, start: str | None) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # alive, owned by someone else
    if start is not None:
        current = _pid_start(pid)
        if current is not None and current != start:
            return False  # the pid was reused by a new process
    return True


class StoreConnection(SqlBackend):
    """One connection to the store file behind a lock (safe to share between threads), and the
    plumbing every operation of `Store` uses."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        actor: str = "cli",
        ttl: float = DEFAULT_TTL,
        busy_timeout_ms: int = BUSY_TIMEOUT_MS,
    ) -> None:
        self.path = Path(path)
        # A bare label ("tui", "mcp") becomes "user@label"; a full "user@label" is kept.
        self.actor = actor if "@" in actor else default_actor(actor)
        self.ttl = ttl
        self._lock = threading.RLock()
        self._local_commits = 0
        self._host = socket.gethostname()
        self._pid = os.getpid()
        self._conn = self._open(busy_timeout_ms)

    # -- opening ------------------------------------------------------------------------------

    def _open(self, busy_timeout_ms: int) -> sqlite3.Connection:
        path = self.path
        if path.is_dir():
            raise StoreUnavailable(f"{path}: is a folder, not a confirmation store file")
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as exc:
            raise StoreUnavailable(
                f"{path}: cannot create the store's folder: {exc.strerror or exc}"
            ) from None
        # Before anything is read or created: a store others can write holds no real decision.
        _check_permissions(path)
        # Every tool run on this machine hides this store from now on, whichever project it is.
        remember_store(path)
        if not path.exists():
            # Created 0600 before SQLite touches it: args may hold private data. O_EXCL and no
            # symlink following: a name planted meanwhile fails instead of being written through.
            try:
                flags = os.O_CREAT | os.O_EXCL | os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0)
                fd = os.open(path, flags, 0o600)
                os.close(fd)
            except FileExistsError:
                _check_permissions(path)  # another patch-tui created it first
            except OSError as exc:
                raise StoreReadOnly(
                    f"{path}: cannot create the confirmation store: {exc.strerror or exc}"
                ) from None
        elif not os.access(path, os.R_OK):
            raise StoreUnavailable(f"{path}: the confirmation store is not readable (permissions)")
        # Checked before SQLite opens it: a WAL database cannot even be read without writing its
        # -shm file, and SQLite's own message ("unable to open database file") explains nothing.
        if not os.access(path, os.W_OK) or not os.access(path.parent, os.W_OK):
            raise StoreReadOnly(
                f"{path}: the confirmation store is read-only; no decision can be recorded "
                "(check the file's and its folder's permissions, or the disk's mount)"
            )
        try:
            conn = sqlite3.connect(
                str(path),
                timeout=busy_timeout_ms / 1000,
                isolation_level=None,  # we issue BEGIN IMMEDIATE ourselves
                check_same_thread=False,
            )
        except sqlite3.Error as exc:
            raise _translate(exc, path) from None
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
            # Reading the header first turns "not a database" into StoreCorrupt before any write.
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise StoreUnavailable(f"{path}: cannot switch the store to WAL mode (got {mode})")
            conn.execute("PRAGMA synchronous = FULL")
            conn.execute("PRAGMA foreign_keys = ON")
            self._migrate(conn)
        except sqlite3.Error as exc:
            conn.close()
            raise _translate(exc, path) from None
        except StoreError:
            conn.close()
            raise
        return conn

    def _migrate(self, conn: sqlite3.Connection) -> None:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise StoreUnavailable(
                f"{self.path}: the store was written by a newer patch-tui (schema {version}, "
                f"this one knows {SCHEMA_VERSION}); upgrade patch-tui"
            )
        if version == SCHEMA_VERSION:
            return
        conn.execute("BEGIN IMMEDIATE")
        try:
            # Re-read under the write lock: another process may have migrated meanwhile.
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            for index in range(version, SCHEMA_VERSION):
                for statement in _split_sql(MIGRATIONS[index]):
                    conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- plumbing -----------------------------------------------------------------------------

    def _now(self) -> float:
        return time.time()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One BEGIN IMMEDIATE transaction: the write lock is taken up front, so the conditional
        UPDATE inside sees the latest committed state and no one else can change it meanwhile."""
        with self._lock:
            conn = self._conn
            # Text that is not UTF-8 read as such (a transaction reads a row or two), so a row
            # another program damaged can still be rejected.
            conn.text_factory = lenient_text
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise _translate(exc, self.path) from None
            try:
                yield conn
                conn.execute("COMMIT")
            except sqlite3.Error as exc:
                self._rollback()
                raise _translate(exc, self.path) from None
            except BaseException:
                self._rollback()
                raise
            finally:
                conn.text_factory = str
            self._local_commits += 1

    def _rollback(self) -> None:
        try:
            self._conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass

    def _read(self, sql: str, params: Iterable[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            try:
                try:
                    return self._conn.execute(sql, tuple(params)).fetchall()
                except sqlite3.OperationalError as exc:
                    if "decode to UTF-8" not in str(exc):
                        raise
                # A cell that is not UTF-8 (another program's): read again, slower, each such
                # cell as schema.NotUtf8, so it makes one damaged row rather than no listing.
                self._conn.text_factory = lenient_text
                try:
                    return self._conn.execute(sql, tuple(params)).fetchall()
                finally:
                    self._conn.text_factory = str
            except sqlite3.Error as exc:
                raise _translate(exc, self.path) from None

    @contextmanager
    def _read_conn(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            try:
                yield self._conn
            except sqlite3.Error as exc:
                raise _translate(exc, self.path) from None

    def _insert_id(self, conn: sqlite3.Connection, sql: str, params: tuple[Any, ...]) -> int:
        return int(conn.execute(sql, params).lastrowid or 0)

    def wait_for_change(self, seen: int | None, timeout: float) -> int:
        """The data_version once it differs from `seen`, or after `timeout` seconds. SQLite
        tells no one of a commit, so this looks every quarter second (one cheap read each);
        the PostgreSQL store sleeps on LISTEN/NOTIFY instead."""
        deadline = time.monotonic() + max(0.0, timeout)
        while True:
            version = self.data_version()  # type: ignore[attr-defined]
            left = deadline - time.monotonic()
            if version != seen or left <= 0:
                return int(version)
            time.sleep(min(0.25, left))
