"""The confirmation store: one SQLite file shared by every process (MCP server, CLI, TUI).

API (everything a caller needs; all times are ISO 8601 UTC strings like
"2026-11-21T10:20:36.123Z", fixed width so they also sort as text):

    store = Store(path, actor="tui", ttl=300)       # opens or creates; also a context manager
    action = store.create_pending(kind, tool, version, source_sha256, args, reason,
                                  tool_path=None, details=None, ttl=None)   -> Action
    store.get(token)                                  -> Action | None
    store.list_actions(statuses=("pending",), tool=None, limit=None)  -> list[Action], newest first
                                                         (statuses=None: every status)
    store.pending_count()                             -> int
    store.approve(token, note=None, args=None, grant=None)
                                                      -> Decision   (.ok, .action, .why, .code)
                                                         args: a person's edit (approvals/edits.py);
                                                         grant: a standing grant (approvals/grants.py)
    store.reject(token, reason=None)                  -> Decision
    store.claim(token)                                -> Decision   approved+unexpired -> executing
                                                         (only with a genuine approval, see below)
    store.finish(token, ok, result, ran=None)         -> Action     executing -> executed | failed
    store.mark_interrupted()                          -> int        dead claimers -> interrupted
    store.expire_due()                                -> int        pending/approved past expiry -> expired
    store.events(token=None, limit=None)              -> list[Event], oldest first
    store.data_version()                              -> int        changes whenever anything commits
    store.record_output(tool, output) / store.recent_outputs()      the taint gate's shared memory
    store.close()

States: pending -> approved | rejected | expired; approved -> executing (claimed by one
confirm_action call) | expired; executing -> executed | failed | interrupted (the claiming process
died; never re-run automatically). Every change is one conditional UPDATE inside one
`BEGIN IMMEDIATE` transaction, so two approvers or two confirmers can never both win, and each
change appends a row to the `events` table (actor = OS user @ process label, time, event, detail).

A live UI polls `data_version()` every 250-500 ms and re-reads only when the number changed.

Errors are `StoreError` subclasses whose message is fit to show as is: `StoreBusy` (another process
held the lock past the busy timeout), `StoreUnavailable` (cannot open: missing folder that cannot be
created, unreadable, newer schema), `StoreReadOnly` and `StoreCorrupt` (both `StoreUnavailable`).
A corrupt file is never rewritten or replaced: recorded decisions are worth more than a working
inbox, so the message tells the person to move it aside.

An approval needs its decision. Approving writes, in the same transaction as the state change, an
`approved` event whose detail carries a seal: the action's token, kind, tool path, source sha256,
args sha256 (of the args as stored, the ones the person saw), expiry, guard's upstream token, and
the event's actor and time, with an HMAC-SHA256 of all of them under a key kept next to the store (`<store>.key`, 0600,
outside the database). `claim` re-checks that seal against the row inside its transaction: a row
set to approved by hand (no event), a forged or copied event, a changed source hash, kind, path or
expiry refuse with `tampered`; args changed after approval refuse with `args_changed`. Either way
the action becomes `failed` with that answer as its result and a `refused` event, so it shows in
the inbox instead of staying approved. `Action.tampered` says why, for every action read (the
inbox shows it). Someone who can read the key can still forge: keeping every tool run away from the
store's folder is the sandbox's part (`store_files` lists what it must hide).

The store protects itself: it refuses a file (or its -wal, -shm, key) that another user owns or
may write, a folder another user may write (even a sticky one like /tmp: others could plant the
-wal file), or a folder above it that others may write without the sticky bit; the message says
how to fix it. New stores are created 0600 in a folder created 0700.

Why the token is stored in clear, not hashed: the token is a handle on an action, not a
credential. It authorizes nothing by itself: what authorizes a run is the approval row, bound to
the exact args (sha256 of their canonical JSON) and to the tool's source sha256. Anyone able to read
this file (mode 0600, the user's own) can also write it and approve directly, so a hash would
protect nothing (what stops a forged approval is the seal above), while `inbox list --json` and `inbox approve TOKEN` need the token itself. Event
rows refer to actions by row id, and logs print only a token's first 8 characters.

Durability: `synchronous=FULL` on every commit (decisions must survive a power cut; the cost,
one fsync per change, is measured in bench/store_bench.py).
"""

from __future__ import annotations

import base64
import contextlib
import getpass
import hashlib
import hmac
import json
import math
import os
import secrets
import socket
import sqlite3
import stat
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

KINDS: tuple[str, ...] = ("human_confirm", "tainted_input")
STATUSES: tuple[str, ...] = (
    "pending",
    "approved",
    "rejected",
    "expired",
    "executing",
    "executed",
    "failed",
    "interrupted",
)
DEFAULT_TTL = 300
BUSY_TIMEOUT_MS = 5000
# Taint memory, as the Patch runtime keeps it: the last 20 outputs of the last 30 minutes.
RECENT_OUTPUTS = 20
RECENT_OUTPUT_MAX_AGE = 30 * 60

Kind = Literal["human_confirm", "tainted_input"]
# A standing grant's check, run inside an approval's transaction: (connection, now) -> the
# decider's name and the grant's id, or None when the grant no longer applies.
GrantCheck = Callable[[sqlite3.Connection, str], "tuple[str, int] | None"]


class StoreError(Exception):
    """The store cannot do what was asked; the message says why, in words for a person."""


class StoreBusy(StoreError):
    """Another process held the database lock longer than the busy timeout."""


class StoreUnavailable(StoreError):
    """The database cannot be opened or used (missing folder, permissions, newer schema)."""


class StoreReadOnly(StoreUnavailable):
    """The database (or its folder) is read-only, so no decision can be recorded."""


class StoreCorrupt(StoreUnavailable):
    """The file is not a SQLite database or is damaged; it is left untouched."""


class StoreUnsafe(StoreUnavailable):
    """The file or a folder holding it is owned or writable by another user: anyone able to write
    it could approve calls. The message ends with the command that fixes it."""


# -- values -----------------------------------------------------------------------------------


def now_iso(t: float | None = None) -> str:
    """ISO 8601 UTC with milliseconds and a Z: fixed width, so text order is time order."""
    dt = datetime.fromtimestamp(time.time() if t is None else t, tz=UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def parse_iso(text: str) -> float:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC).timestamp()


def canonical_json(value: Any) -> str:
    """Sorted keys, no spaces, UTF-8 kept: the form whose sha256 an approval binds."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def args_sha256(args: Any) -> str:
    return hashlib.sha256(canonical_json(args).encode("utf-8")).hexdigest()


def new_token() -> str:
    """24 random bytes, base64url without padding (32 characters).

    A token never starts with `-`: people paste it as a command-line argument
    (`patch-tui inbox approve TOKEN`), where a leading dash reads as an option. Drawing again
    in that case (1 in 64) costs under 0.03 bits of the token's 192.
    """
    while True:
        token = base64.urlsafe_b64encode(secrets.token_bytes(24)).decode("ascii").rstrip("=")
        if not token.startswith("-"):
            return token


def default_actor(label: str) -> str:
    """`user@label`, e.g. "alice@tui". getpass fails in containers without a passwd entry."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = f"uid{os.getuid()}"
    return f"{user}@{label}"


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


@dataclass(frozen=True)
class Action:
    """One gated tool call. `args` is the dict exactly as received (key order kept)."""

    token: str
    kind: str
    tool: str
    version: str
    source_sha256: str
    args: dict[str, Any]
    args_sha256: str
    reason: str
    status: str
    created_at: str
    expires_at: str
    decided_at: str | None = None
    decided_by: str | None = None
    note: str | None = None
    result: Any = None
    details: dict[str, Any] | None = None
    tool_path: str | None = None
    claimed_at: str | None = None
    claimed_by: str | None = None
    finished_at: str | None = None
    # `patch-tui guard`: the token the upstream server (the Patch runtime) gave for this call.
    # Kept out of to_json(): it would let whoever reads the listing confirm upstream directly.
    upstream_token: str | None = None
    # Set when a person edited the args before approving: `args` are then the approved (edited)
    # args, the ones that run, and these are what the agent proposed (approvals/edits.py).
    proposed_args: dict[str, Any] | None = None
    # The standing grant that approved this action (approvals/grants.py), if one did.
    grant_id: int | None = None

    @property
    def edited(self) -> bool:
        return self.proposed_args is not None
    # Why the action's approval is not genuine (set by get / list_actions), else None: approved
    # without a sealed decision event, or its args, source or seal changed since. Never run.
    tampered: str | None = None
    # Why the stored row cannot be read (its args are not a JSON object, ...), or None. A
    # damaged action is listed, shown and can be rejected; it can never be approved or run,
    # because no one can see what it would do.
    damaged: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The `inbox list --json` shape (issue 3): these keys, plus `damaged` on a damaged row."""
        if self.damaged is not None:
            return {**self._json(), "args": None, "damaged": self.damaged}
        return self._json()

    def _json(self) -> dict[str, Any]:
        return {
            "token": self.token,
            "kind": self.kind,
            "tool": self.tool,
            "version": self.version,
            "args": self.args,
            "reason": self.reason,
            "status": self.status,
            "created_at": self.created_at,
            "expires_at": self.expires_at,
            "decided_at": self.decided_at,
            "decided_by": self.decided_by,
            "note": self.note,
            "result": self.result,
            "proposed_args": self.proposed_args,
            "grant": self.grant_id,
            "tampered": self.tampered,
        }


@dataclass(frozen=True)
class Decision:
    """The answer to approve / reject / claim.

    `ok` is True only for the one call that made the change. Otherwise `why` says, for a person,
    why not ("already approved by alice@cli at ...", "expired at ...", "unknown token"), and `code`
    says it for a program: unknown_token, awaiting_approval, rejected, expired, already_decided,
    already_used; and from claim, tampered or args_changed (the approval does not hold).
    """

    ok: bool
    action: Action | None
    why: str = ""
    code: str = "ok"


@dataclass(frozen=True)
class Event:
    id: int
    token: str
    at: str
    actor: str
    event: str
    detail: dict[str, Any] = field(default_factory=dict)


# -- schema -----------------------------------------------------------------------------------

_STATUS_CHECK = ", ".join(f"'{s}'" for s in STATUSES)
_KIND_CHECK = ", ".join(f"'{k}'" for k in KINDS)

# MIGRATIONS[i] takes the schema from user_version i to i + 1. Append, never edit.
MIGRATIONS: tuple[str, ...] = (
    f"""
    CREATE TABLE actions (
        id            INTEGER PRIMARY KEY,
        token         TEXT NOT NULL UNIQUE,
        kind          TEXT NOT NULL CHECK (kind IN ({_KIND_CHECK})),
        tool          TEXT NOT NULL,
        version       TEXT NOT NULL,
        source_sha256 TEXT NOT NULL,
        tool_path     TEXT,
        args_json     TEXT NOT NULL,
        args_sha256   TEXT NOT NULL,
        reason        TEXT NOT NULL,
        details_json  TEXT,
        status        TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ({_STATUS_CHECK})),
        created_at    TEXT NOT NULL,
        expires_at    TEXT NOT NULL,
        decided_at    TEXT,
        decided_by    TEXT,
        note          TEXT,
        claimed_at    TEXT,
        claimed_by    TEXT,
        claim_host    TEXT,
        claim_pid     INTEGER,
        claim_pid_start TEXT,
        finished_at   TEXT,
        result_json   TEXT
    );
    CREATE INDEX actions_by_status ON actions (status, created_at);
    CREATE INDEX actions_by_created ON actions (created_at);
    CREATE TABLE events (
        id        INTEGER PRIMARY KEY,
        action_id INTEGER NOT NULL REFERENCES actions (id),
        at        TEXT NOT NULL,
        actor     TEXT NOT NULL,
        event     TEXT NOT NULL,
        detail    TEXT NOT NULL DEFAULT '{{}}'
    );
    CREATE INDEX events_by_action ON events (action_id, id);
    -- Append-only: the audit trail of decisions cannot be edited through SQL by mistake.
    CREATE TRIGGER events_no_update BEFORE UPDATE ON events
        BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;
    CREATE TRIGGER events_no_delete BEFORE DELETE ON events
        BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;
    CREATE TABLE recent_outputs (
        id          INTEGER PRIMARY KEY,
        tool        TEXT NOT NULL,
        text        TEXT NOT NULL,
        recorded_at REAL NOT NULL
    );
    """,
    # 1 -> 2: guard's upstream token (NULL for every action made before, and for serve's).
    """
    ALTER TABLE actions ADD COLUMN upstream_token TEXT;
    """,
    # 2 -> 3: edited approvals and standing grants (issue 17). `args_json` always holds the args that
    # run; an edit moves the agent's proposal to `proposed_args_json`, so every reader that runs
    # an approved action (confirm, a proxy) runs the approved args without knowing about edits.
    """
    ALTER TABLE actions ADD COLUMN proposed_args_json TEXT;
    ALTER TABLE actions ADD COLUMN grant_id INTEGER;
    CREATE TABLE grants (
        id            INTEGER PRIMARY KEY,
        tool          TEXT NOT NULL,
        version       TEXT NOT NULL,
        source_sha256 TEXT NOT NULL,
        patterns_json TEXT NOT NULL,
        created_at    TEXT NOT NULL,
        created_by    TEXT NOT NULL,
        expires_at    TEXT NOT NULL,
        revoked_at    TEXT,
        revoked_by    TEXT,
        uses          INTEGER NOT NULL DEFAULT 0,
        last_used_at  TEXT
    );
    CREATE INDEX grants_by_tool ON grants (tool, expires_at);
    """,
)
SCHEMA_VERSION = len(MIGRATIONS)

_ACTION_COLUMNS = (
    "token, kind, tool, version, source_sha256, tool_path, args_json, args_sha256, reason, "
    "details_json, status, created_at, expires_at, decided_at, decided_by, note, claimed_at, "
    "claimed_by, finished_at, result_json, upstream_token, proposed_args_json, grant_id"
)


def _loads(text: str | None) -> Any:
    return None if text is None else json.loads(text)


class _Damaged(Exception):
    """A stored column that cannot be read; the message says which and why."""


def _column_json(name: str, text: Any, *, want_object: bool = False) -> Any:
    """A JSON column's value; _Damaged when another program (or a disk fault) left text that is
    not JSON (or not an object where one is required)."""
    if text is None and not want_object:
        return None
    try:
        if not isinstance(text, str | bytes):
            raise ValueError(f"a {type(text).__name__}, not JSON text")
        value = json.loads(text)
    except (ValueError, RecursionError) as exc:  # json errors, too-long ints, deep nesting
        reason = str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__
        raise _Damaged(f"stored {name} are not valid JSON ({reason})") from None
    if want_object and not isinstance(value, dict):
        raise _Damaged(f"stored {name} are not a JSON object")
    return value


def _text_column(value: Any) -> str:
    return value if isinstance(value, str) else "" if value is None else str(value)


def _row_to_action(row: sqlite3.Row | tuple[Any, ...]) -> Action:
    """An Action from a row. A row whose JSON cannot be read becomes a damaged Action (empty
    args, `damaged` saying why) rather than an exception: one bad row must not hide the rest."""
    try:
        return _row_to_action_strict(row)
    except _Damaged as exc:
        why = str(exc)
    values = list(tuple(row))
    values[_ARGS_COLUMN] = "{}"
    # Keep whatever else of the row is readable; each JSON column on its own.
    for index, name in _JSON_COLUMNS.items():
        if index != _ARGS_COLUMN:
            try:
                _column_json(name, values[index])
            except _Damaged:
                values[index] = None
    return replace(_row_to_action_strict(tuple(values)), damaged=why)


# Positions in _ACTION_COLUMNS of the columns holding JSON.
_ARGS_COLUMN = 6
_JSON_COLUMNS = {_ARGS_COLUMN: "args", 9: "details", 19: "result", 21: "proposed args"}


def _row_to_action_strict(row: sqlite3.Row | tuple[Any, ...]) -> Action:
    (
        token,
        kind,
        tool,
        version,
        source_sha256,
        tool_path,
        args_json,
        args_hash,
        reason,
        details_json,
        status,
        created_at,
        expires_at,
        decided_at,
        decided_by,
        note,
        claimed_at,
        claimed_by,
        finished_at,
        result_json,
        upstream_token,
        proposed_args_json,
        grant_id,
    ) = tuple(row)
    return Action(
        token=token,
        kind=kind,
        tool=tool,
        version=version,
        source_sha256=source_sha256,
        args=_column_json("args", args_json, want_object=True),
        args_sha256=args_hash,
        reason=reason,
        status=status,
        created_at=created_at,
        expires_at=expires_at,
        decided_at=decided_at,
        decided_by=decided_by,
        note=note,
        result=_column_json("result", result_json),
        details=_column_json("details", details_json),
        tool_path=tool_path,
        claimed_at=claimed_at,
        claimed_by=claimed_by,
        finished_at=finished_at,
        upstream_token=upstream_token,
        proposed_args=_column_json("proposed args", proposed_args_json),
        grant_id=grant_id,
    )


def _translate(exc: sqlite3.Error, path: Path) -> StoreError:
    """sqlite3's errors, in words for a person who has never heard of SQLite."""
    msg = str(exc).lower()
    if "locked" in msg or "busy" in msg:
        return StoreBusy(
            f"{path}: the confirmation store is busy (another process held it for more than "
            f"{BUSY_TIMEOUT_MS // 1000} s); try again"
        )
    if "readonly" in msg or "read-only" in msg:
        return StoreReadOnly(
            f"{path}: the confirmation store is read-only; no decision can be recorded "
            "(check the file's and its folder's permissions)"
        )
    if "not a database" in msg or "malformed" in msg or "corrupt" in msg:
        return StoreCorrupt(
            f"{path}: the confirmation store is damaged ({exc}); it was left untouched. "
            "Move it aside to start a new one (its recorded decisions stay in the old file)"
        )
    if "unable to open" in msg or "disk i/o" in msg:
        return StoreUnavailable(f"{path}: cannot open the confirmation store ({exc})")
    return StoreUnavailable(f"{path}: the confirmation store failed: {exc}")


# -- the store's own files: permissions and the approval key ------------------------------------

KEY_SUFFIX = ".key"
# Files SQLite may create next to the database (WAL mode uses -wal and -shm; -journal only if the
# mode was ever changed back).
_COMPANIONS = ("-wal", "-shm", "-journal")


def store_files(path: str | os.PathLike[str]) -> list[Path]:
    """Every file the store consists of: the database, SQLite's companions and the approval key.
    A tool run must not be able to see or change any of them (nor their folder)."""
    p = Path(path)
    return [p, *(Path(f"{p}{suffix}") for suffix in (*_COMPANIONS, KEY_SUFFIX))]


def _mode(st: os.stat_result) -> str:
    return f"{stat.S_IMODE(st.st_mode):04o}"


def _owner_problem(st: os.stat_result) -> str | None:
    """Files and folders must be ours; root's are fine too (root can change anything anyway)."""
    if st.st_uid in (os.geteuid(), 0):
        return None
    return f"belongs to another user (uid {st.st_uid})"


def _check_file(path: Path, *, secret: bool = False) -> None:
    """The database, a companion or the key: a regular file of ours that no one else may write
    (the key: nor read)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise StoreUnavailable(f"{path}: cannot check the store file: {exc.strerror}") from None
    what = "the confirmation store's key" if secret else "a confirmation store file"
    if stat.S_ISLNK(st.st_mode) and path.name.endswith((*_COMPANIONS, KEY_SUFFIX)):
        raise StoreUnsafe(
            f"{path}: {what} is a symbolic link, which someone may have planted to redirect it; "
            f"refusing to use the store. Fix: move it aside (mv {path} {path}.untrusted)"
        )
    st = os.stat(path)
    owner = _owner_problem(st)
    if owner:
        raise StoreUnsafe(
            f"{path}: {what} {owner}, who could approve calls in it; refusing to use it. Fix: "
            f"move it aside (mv {path} {path}.untrusted) to start afresh, or if you trust it: "
            f"chown {os.geteuid()} {path} && chmod 600 {path}"
        )
    loose = 0o077 if secret else 0o022
    if st.st_mode & loose:
        who = "readable or writable" if secret else "writable"
        raise StoreUnsafe(
            f"{path}: {what} is {who} by other users (mode {_mode(st)}), so they could approve "
            f"calls in it; refusing to use it. Fix: chmod 600 {path}"
        )


def _check_folders(folder: Path, name: str) -> None:
    """The store's folder: ours, writable by no one else (not even with the sticky bit, or others
    could plant its -wal file). Every folder above it: not writable by others unless sticky (so
    no one can swap the store's folder), and ours or root's."""
    try:
        real = folder.resolve(strict=True)
        st = os.stat(real)
    except OSError as exc:
        raise StoreUnavailable(f"{folder}: cannot check the store's folder: {exc}") from None
    owner = _owner_problem(st)
    if owner:
        raise StoreUnsafe(
            f"{real}: the confirmation store's folder {owner}, who could replace the store; "
            f"refusing to use it. Fix: keep the store in a folder of your own (--store PATH)"
        )
    if st.st_mode & 0o022:
        if st.st_mode & stat.S_ISVTX:
            fix = (
                f"keep the store in a private folder: mkdir -m 700 {real}/patch-tui and "
                f"--store {real}/patch-tui/{name}"
            )
        else:
            fix = f"chmod go-w {real}"
        raise StoreUnsafe(
            f"{real}: the confirmation store's folder is writable by other users (mode "
            f"{_mode(st)}), who could plant or replace its files; refusing to use it. Fix: {fix}"
        )
    for above in real.parents:
        try:
            st = os.stat(above)
        except OSError:
            continue
        shared = st.st_mode & 0o022 and not st.st_mode & stat.S_ISVTX
        owner = _owner_problem(st)
        if shared or owner:
            why = owner or f"is writable by other users (mode {_mode(st)})"
            raise StoreUnsafe(
                f"{above}: a folder above the confirmation store {why}, who could swap the "
                f"store's folder; refusing to use it. Fix: chmod go-w {above}, or keep the store "
                "elsewhere (--store PATH)"
            )


def _check_permissions(path: Path) -> None:
    if not hasattr(os, "geteuid"):
        return  # no POSIX owners and modes (Windows): the user's profile folder is private
    _check_folders(path.parent, path.name)
    for file in store_files(path):
        _check_file(file, secret=file.name.endswith(KEY_SUFFIX))


def _load_key(path: Path) -> bytes:
    """The store's approval key (32 random bytes, hex in `<store>.key`), created on first use."""
    key_path = Path(f"{path}{KEY_SUFFIX}")
    if not key_path.exists():
        # Written whole under a temporary name, then linked into place: a concurrent opener sees
        # no key or the whole key, never half of one, and the first link wins.
        fd, tmp = tempfile.mkstemp(dir=key_path.parent, prefix=".key-")  # mode 0600
        try:
            with os.fdopen(fd, "w") as fh:
                fh.write(secrets.token_hex(32) + "\n")
                fh.flush()
                os.fsync(fh.fileno())
            try:
                os.link(tmp, key_path)
            except FileExistsError:
                pass
        except OSError as exc:
            raise StoreUnavailable(
                f"{key_path}: cannot create the store's key: {exc.strerror or exc}"
            ) from None
        finally:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    _check_file(key_path, secret=True)
    try:
        text = key_path.read_text(encoding="ascii").strip()
        key = bytes.fromhex(text)
    except (OSError, ValueError, UnicodeDecodeError):
        key = b""
    if len(key) != 32:
        raise StoreUnavailable(
            f"{key_path}: the store's key is damaged; approvals cannot be checked. Move it aside "
            f"(mv {key_path} {key_path}.old): approvals sealed with it will then be refused"
        )
    return key


# -- the seal on an approval ----------------------------------------------------------------------

_SEALED_FIELDS = ("token", "kind", "tool_path", "source_sha256", "expires_at", "upstream_token")
# Statuses whose approval is checked whenever the action is read: the ones that can still run.
_LIVE = ("approved", "executing")
# Refusal codes of store.claim, kept as the refused action's result status.
_REFUSALS = ("tampered", "args_changed")


def _seal(key: bytes, fields: dict[str, Any]) -> str:
    return hmac.new(key, canonical_json(fields).encode("utf-8"), hashlib.sha256).hexdigest()


def _approval_problem(
    key: bytes, action: Action, approvals: list[tuple[str, str, str]]
) -> tuple[str, str] | None:
    """(code, why) when the action's approval does not hold, else None. `approvals`: the
    (actor, at, detail) of its `approved` events, oldest first."""
    if not approvals:
        return "tampered", "it is marked approved, but no one's approval was ever recorded"
    if len(approvals) > 1:
        return "tampered", "more than one approval is recorded for it"
    actor, at, detail_text = approvals[0]
    try:
        bound = dict(json.loads(detail_text)["bound"])
        mac = bound.pop("mac")
    except (ValueError, KeyError, TypeError):
        return "tampered", "its approval carries no seal (forged, or made by an older patch-tui)"
    if not isinstance(mac, str) or not hmac.compare_digest(mac, _seal(key, bound)):
        return "tampered", "its approval's seal does not verify (forged, or copied from another call)"
    if bound.get("actor") != actor or bound.get("at") != at:
        return "tampered", "its approval event was altered"
    changed = [f for f in _SEALED_FIELDS if bound.get(f) != getattr(action, f)]
    if changed:
        return "tampered", f"its {', '.join(changed)} changed after it was approved"
    if args_sha256(action.args) != bound.get("args_sha256") or (
        action.args_sha256 != bound.get("args_sha256")
    ):
        return "args_changed", "its args were changed after it was approved"
    return None


def _tamper_note(key: bytes, action: Action, approvals: list[tuple[str, str, str]]) -> str | None:
    """What the inbox shows: why a live approval (approved, or executing) does not hold; for a
    finished action, the refusal recorded when confirm caught it (cheap: the history can hold
    tens of thousands of rows, and a finished action cannot be run again anyway)."""
    if action.status in _LIVE:
        problem = _approval_problem(key, action, approvals)
        return None if problem is None else problem[1]
    result = action.result
    if isinstance(result, dict) and result.get("status") in _REFUSALS:
        return str(result.get("why") or result.get("status"))
    return None


class Store:
    """The confirmation store. Safe to share between threads (one connection behind a lock);
    every process opens its own `Store` on the same file."""

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
        self._key = b""  # the approval key, read by _open
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
        self._key = _load_key(path)
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

    def __enter__(self) -> Store:
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
            self._local_commits += 1

    def _rollback(self) -> None:
        try:
            self._conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass

    def _read(self, sql: str, params: Iterable[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            try:
                return self._conn.execute(sql, tuple(params)).fetchall()
            except sqlite3.Error as exc:
                raise _translate(exc, self.path) from None

    def _event(
        self,
        conn: sqlite3.Connection,
        action_id: int,
        event: str,
        at: str,
        *,
        actor: str | None = None,
        **detail: Any,
    ) -> None:
        actor = actor or self.actor
        if event == "approved":
            # Every way to approve goes through here, in the approval's own transaction.
            detail["bound"] = self._bind(conn, action_id, actor, at)
        conn.execute(
            "INSERT INTO events (action_id, at, actor, event, detail) VALUES (?, ?, ?, ?, ?)",
            (action_id, at, actor, event, canonical_json(detail)),
        )

    def _bind(
        self, conn: sqlite3.Connection, action_id: int, actor: str, at: str
    ) -> dict[str, Any]:
        """The seal of an approval: the approved row as it is now (after the approving UPDATE:
        edited args, the new expiry) and who approved when, with their HMAC."""
        row = conn.execute(
            f"SELECT {_ACTION_COLUMNS} FROM actions WHERE id = ?", (action_id,)
        ).fetchone()
        action = _row_to_action(row)
        bound: dict[str, Any] = {f: getattr(action, f) for f in _SEALED_FIELDS}
        # The hash of the args as stored, the ones the person saw and confirm will run.
        bound.update(args_sha256=args_sha256(action.args), actor=actor, at=at)
        bound["mac"] = _seal(self._key, bound)
        return bound

    def _approvals(
        self, conn: sqlite3.Connection, ids: list[int]
    ) -> dict[int, list[tuple[str, str, str]]]:
        """The (actor, at, detail) of the `approved` events of these actions, oldest first."""
        out: dict[int, list[tuple[str, str, str]]] = {i: [] for i in ids}
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            rows = conn.execute(
                "SELECT action_id, actor, at, detail FROM events WHERE event = 'approved' "
                f"AND action_id IN ({', '.join('?' * len(chunk))}) ORDER BY id",
                chunk,
            ).fetchall()
            for action_id, actor, at, detail in rows:
                out[action_id].append((actor, at, detail))
        return out

    def _annotate(self, rows: list[tuple[Any, ...]]) -> list[Action]:
        """Actions from `id, {_ACTION_COLUMNS}` rows, each with `tampered` set."""
        actions = [(int(r[0]), _row_to_action(r[1:])) for r in rows]
        ids = [i for i, a in actions if a.status in _LIVE]
        with self._lock:
            try:
                approvals = self._approvals(self._conn, ids)
            except sqlite3.Error as exc:
                raise _translate(exc, self.path) from None
        out = []
        for action_id, action in actions:
            note = _tamper_note(self._key, action, approvals.get(action_id, []))
            out.append(replace(action, tampered=note) if note else action)
        return out

    def _select_action(self, conn: sqlite3.Connection, token: str) -> tuple[int, Action] | None:
        row = conn.execute(
            f"SELECT id, {_ACTION_COLUMNS} FROM actions WHERE token = ?", (token,)
        ).fetchone()
        if row is None:
            return None
        return row[0], _row_to_action(row[1:])

    # -- creating and reading -----------------------------------------------------------------

    def create_pending(
        self,
        kind: Kind | str,
        tool: str,
        version: str,
        source_sha256: str,
        args: dict[str, Any],
        reason: str,
        *,
        tool_path: str | None = None,
        details: dict[str, Any] | None = None,
        ttl: float | None = None,
        upstream_token: str | None = None,
    ) -> Action:
        """Record a held call. `args` must be JSON (no NaN); it is kept exactly, key order too."""
        if kind not in KINDS:
            raise ValueError(f"unknown confirmation kind {kind!r}; expected one of {KINDS}")
        if not isinstance(args, dict):
            raise ValueError("args must be a JSON object")
        try:
            args_json = json.dumps(args, ensure_ascii=False, allow_nan=False)
            details_json = None if details is None else canonical_json(details)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"args are not plain JSON: {exc}") from None
        now = self._now()
        life = self.ttl if ttl is None else ttl
        if not math.isfinite(life) or life < 0:
            raise ValueError("ttl must be a finite number of seconds >= 0")
        token = new_token()
        created, expires = now_iso(now), now_iso(now + life)
        with self._write() as conn:
            cur = conn.execute(
                "INSERT INTO actions (token, kind, tool, version, source_sha256, tool_path, "
                "args_json, args_sha256, reason, details_json, status, created_at, expires_at, "
                "upstream_token) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?)",
                (
                    token,
                    kind,
                    tool,
                    version,
                    source_sha256,
                    tool_path,
                    args_json,
                    args_sha256(args),
                    reason,
                    details_json,
                    created,
                    expires,
                    upstream_token,
                ),
            )
            action_id = int(cur.lastrowid or 0)
            self._event(
                conn, action_id, "created", created, kind=kind, tool=tool, expires_at=expires
            )
        found = self.get(token)
        assert found is not None
        return found

    def get(self, token: str) -> Action | None:
        rows = self._read(f"SELECT id, {_ACTION_COLUMNS} FROM actions WHERE token = ?", (token,))
        return self._annotate(rows)[0] if rows else None

    def list_actions(
        self,
        statuses: Iterable[str] | None = ("pending",),
        tool: str | None = None,
        limit: int | None = None,
    ) -> list[Action]:
        """Newest first. Due expiries and dead claimers are settled first, so a listed
        "pending" action really is approvable right now. `statuses=None` lists every status."""
        self._settle()
        where: list[str] = []
        params: list[Any] = []
        if statuses is not None:
            wanted = list(statuses)
            unknown = [s for s in wanted if s not in STATUSES]
            if unknown:
                raise ValueError(f"unknown status {unknown[0]!r}; expected one of {STATUSES}")
            where.append(f"status IN ({', '.join('?' * len(wanted))})")
            params.extend(wanted)
        if tool is not None:
            where.append("tool = ?")
            params.append(tool)
        sql = f"SELECT id, {_ACTION_COLUMNS} FROM actions"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY created_at DESC, id DESC"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(int(limit))
        return self._annotate(self._read(sql, params))

    def pending_count(self) -> int:
        now = now_iso(self._now())
        rows = self._read(
            "SELECT count(*) FROM actions WHERE status = 'pending' AND expires_at > ?", (now,)
        )
        return int(rows[0][0])

    def data_version(self) -> int:
        """A number that changes whenever any process commits a change to the store.

        `PRAGMA data_version` moves on other connections' commits only, so our own commits are
        added as a counter. Both only grow, so their sum changes exactly when either does."""
        rows = self._read("PRAGMA data_version")
        return int(rows[0][0]) + self._local_commits

    def events(self, token: str | None = None, limit: int | None = None) -> list[Event]:
        sql = (
            "SELECT e.id, a.token, e.at, e.actor, e.event, e.detail "
            "FROM events e JOIN actions a ON a.id = e.action_id"
        )
        params: list[Any] = []
        if token is not None:
            sql += " WHERE a.token = ?"
            params.append(token)
        sql += " ORDER BY e.id"
        if limit is not None:
            sql = f"SELECT * FROM ({sql.replace(' ORDER BY e.id', ' ORDER BY e.id DESC')} LIMIT ?) ORDER BY 1"
            params.append(int(limit))
        return [
            Event(id=r[0], token=r[1], at=r[2], actor=r[3], event=r[4], detail=_event_detail(r[5]))
            for r in self._read(sql, params)
        ]

    # -- decisions ----------------------------------------------------------------------------

    def approve(
        self,
        token: str,
        note: str | None = None,
        *,
        args: dict[str, Any] | None = None,
        grant: GrantCheck | None = None,
    ) -> Decision:
        """pending -> approved, for the first caller only. The approved action gets a fresh TTL
        from now, so the agent has a full window to call confirm after a late approval.

        `args`: the args a person edited before approving (validated by the caller against the
        tool's inputs, approvals/edits.py). They become the action's `args` and `args_sha256`, the
        ones confirm runs, and the agent's proposal is kept in `proposed_args`; the approved
        event records both hashes. Args equal to the proposal (as canonical JSON) are no edit.

        `grant`: a standing grant approving on a person's behalf (approvals/grants.py). It is called
        inside this transaction, before the change, with (connection, time) and returns the
        decider's name ("grant 3 (alice@cli)") and the grant id after re-checking and counting
        the grant, or None when it no longer applies: the action then stays pending."""
        now = self._now()
        at = now_iso(now)
        with self._write() as conn:
            found = self._select_action(conn, token)
            if found is None:
                return Decision(False, None, "unknown token", "unknown_token")
            proposed = found[1]
            if proposed.damaged and proposed.status == "pending":  # under the write lock
                return _refuse_damaged(proposed, "approved")
            edited: tuple[str, str] | None = None
            if args is not None and canonical_json(args) != canonical_json(proposed.args):
                if proposed.upstream_token is not None:
                    # The upstream server runs the args it was given when its token is
                    # confirmed: an edit here would be shown as approved and never run.
                    raise ValueError(
                        "this call is held by the upstream server, which runs the args it was "
                        "given: it cannot be edited (reject it, and the agent can call again)"
                    )
                try:
                    edited = (json.dumps(args, ensure_ascii=False, allow_nan=False), args_sha256(args))
                except (TypeError, ValueError) as exc:
                    raise ValueError(f"args are not plain JSON: {exc}") from None
            decider, grant_id = self.actor, None
            if grant is not None:
                if proposed.status != "pending" or proposed.expires_at <= at:
                    return Decision(False, proposed, _not_pending_why(proposed), "grant_inapplicable")
                applied = grant(conn, at)
                if applied is None:
                    return Decision(False, proposed, "the grant no longer applies", "grant_inapplicable")
                decider, grant_id = applied
            sets = "status = 'approved', decided_at = ?, decided_by = ?, note = ?, expires_at = ?, grant_id = ?"
            params: list[Any] = [at, decider, note, now_iso(now + self.ttl), grant_id]
            if edited is not None:
                # SQLite evaluates every right-hand side on the old row: the proposal moves aside.
                sets += ", proposed_args_json = args_json, args_json = ?, args_sha256 = ?"
                params += list(edited)
            cur = conn.execute(
                f"UPDATE actions SET {sets} WHERE token = ? AND status = 'pending' AND expires_at > ?",
                (*params, token, at),
            )
            detail: dict[str, Any] = {"note": note}
            if edited is not None:
                detail.update(
                    edited=True,
                    proposed_args_sha256=proposed.args_sha256,
                    args_sha256=edited[1],
                )
            if grant_id is not None:
                detail["grant"] = grant_id
            decision = self._decided(
                conn, token, cur.rowcount, "approved", at, actor=decider, **detail
            )
        return decision

    def reject(self, token: str, reason: str | None = None) -> Decision:
        """pending -> rejected, for the first caller only. The reason is kept as the note."""
        at = now_iso(self._now())
        with self._write() as conn:
            cur = conn.execute(
                "UPDATE actions SET status = 'rejected', decided_at = ?, decided_by = ?, note = ? "
                "WHERE token = ? AND status = 'pending' AND expires_at > ?",
                (at, self.actor, reason, token, at),
            )
            decision = self._decided(conn, token, cur.rowcount, "rejected", at, reason=reason)
        return decision

    def _decided(
        self,
        conn: sqlite3.Connection,
        token: str,
        changed: int,
        event: str,
        at: str,
        *,
        actor: str | None = None,
        **detail: Any,
    ) -> Decision:
        found = self._select_action(conn, token)
        if found is None:
            return Decision(False, None, "unknown token", "unknown_token")
        action_id, action = found
        if changed == 1:
            self._event(conn, action_id, event, at, actor=actor, **detail)
            return Decision(True, action)
        if action.status == "pending":  # still pending, so it failed on the expiry condition
            action = self._expire_one(conn, action_id, action, at)
            return Decision(False, action, f"expired at {action.expires_at}", "expired")
        return Decision(False, action, _not_pending_why(action), _not_pending_code(action))

    def _expire_one(
        self, conn: sqlite3.Connection, action_id: int, action: Action, at: str
    ) -> Action:
        conn.execute(
            "UPDATE actions SET status = 'expired' WHERE id = ? AND status = ?",
            (action_id, action.status),
        )
        self._event(conn, action_id, "expired", at, was=action.status)
        found = self._select_action(conn, action.token)
        assert found is not None
        return found[1]

    # -- execution ----------------------------------------------------------------------------

    def claim(self, token: str) -> Decision:
        """approved and unexpired -> executing, atomically, for exactly one caller. Records this
        process's pid (and start time) so a crash mid-run is later marked interrupted.

        Only a genuine approval is claimed: its sealed decision event must match the row (see the
        module's docstring). Otherwise the action becomes `failed` (result: the refusal) with a
        `refused` event, and the Decision's code is `tampered` or `args_changed`."""
        now = self._now()
        at = now_iso(now)
        with self._write() as conn:
            damaged = self._select_action(conn, token)  # under the write lock: no race
            if damaged is not None and damaged[1].damaged and damaged[1].status == "approved":
                return _refuse_damaged(damaged[1], "run")
            found = conn.execute(
                f"SELECT id, {_ACTION_COLUMNS} FROM actions WHERE token = ?", (token,)
            ).fetchone()
            current = None if found is None else _row_to_action(found[1:])
            if current is not None and current.status == "approved" and current.expires_at > at:
                current_id = int(found[0])
                problem = _approval_problem(
                    self._key, current, self._approvals(conn, [current_id])[current_id]
                )
                if problem is not None:
                    return self._refuse(conn, current_id, current, at, *problem)
            cur = conn.execute(
                "UPDATE actions SET status = 'executing', claimed_at = ?, claimed_by = ?, "
                "claim_host = ?, claim_pid = ?, claim_pid_start = ? "
                "WHERE token = ? AND status = 'approved' AND expires_at > ?",
                (at, self.actor, self._host, self._pid, _pid_start(self._pid), token, at),
            )
            found = self._select_action(conn, token)
            if found is None:
                return Decision(False, None, "unknown token", "unknown_token")
            action_id, action = found
            if cur.rowcount == 1:
                self._event(
                    conn,
                    action_id,
                    "claimed",
                    at,
                    pid=self._pid,
                    host=self._host,
                    args_sha256=action.args_sha256,
                    source_sha256=action.source_sha256,
                )
                return Decision(True, action)
            if action.status in ("pending", "approved") and action.expires_at <= at:
                action = self._expire_one(conn, action_id, action, at)
                return Decision(False, action, f"expired at {action.expires_at}", "expired")
            if action.status == "pending":
                return Decision(False, action, "awaiting approval", "awaiting_approval")
            return Decision(False, action, _not_pending_why(action), _not_pending_code(action))

    def _refuse(
        self, conn: sqlite3.Connection, action_id: int, action: Action, at: str, code: str, why: str
    ) -> Decision:
        """approved -> failed, never run: the approval does not hold. The result says why, so
        the inbox shows it; the `refused` event records who tried."""
        result = {"status": code, "error": f"not run: {why}", "why": why}
        conn.execute(
            "UPDATE actions SET status = 'failed', finished_at = ?, result_json = ? "
            "WHERE id = ? AND status = 'approved'",
            (at, canonical_json(result), action_id),
        )
        self._event(conn, action_id, "refused", at, code=code, why=why)
        found = self._select_action(conn, action.token)
        assert found is not None
        return Decision(False, replace(found[1], tampered=why), why, code)

    def finish(
        self, token: str, ok: bool, result: Any, ran: dict[str, Any] | None = None
    ) -> Action:
        """executing -> executed (ok) or failed, with the result (any JSON value). `ran`: what
        ran (run id, source and args sha256), kept in the event."""
        at = now_iso(self._now())
        status = "executed" if ok else "failed"
        try:
            result_json = canonical_json(result)
        except (TypeError, ValueError):
            result_json = canonical_json(
                {"error": "result is not JSON", "repr": repr(result)[:2000]}
            )
        with self._write() as conn:
            cur = conn.execute(
                "UPDATE actions SET status = ?, finished_at = ?, result_json = ? "
                "WHERE token = ? AND status = 'executing'",
                (status, at, result_json, token),
            )
            found = self._select_action(conn, token)
            if found is None:
                raise StoreError(f"unknown token {token[:8]}...")
            action_id, action = found
            if cur.rowcount != 1:
                raise StoreError(
                    f"action {token[:8]}... is {action.status}, not executing; result not recorded"
                )
            self._event(conn, action_id, status, at, **(ran or {}))
        return action

    def mark_interrupted(self) -> int:
        """Actions claimed by a process (on this host) that is gone become `interrupted`.
        They are never re-run: the tool may have done part of its work."""
        rows = self._read(
            "SELECT token, claim_pid, claim_pid_start FROM actions "
            "WHERE status = 'executing' AND claim_host = ?",
            (self._host,),
        )
        dead = [tok for tok, pid, start in rows if pid is None or not _pid_alive(int(pid), start)]
        if not dead:
            return 0
        at = now_iso(self._now())
        count = 0
        with self._write() as conn:
            for tok in dead:
                found = self._select_action(conn, tok)
                if found is None:
                    continue
                cur = conn.execute(
                    "UPDATE actions SET status = 'interrupted', finished_at = ? "
                    "WHERE id = ? AND status = 'executing'",
                    (at, found[0]),
                )
                if cur.rowcount == 1:
                    count += 1
                    self._event(conn, found[0], "interrupted", at, why="the claiming process died")
        return count

    def expire_due(self) -> int:
        """pending or approved actions past their expiry become `expired` (one event each)."""
        at = now_iso(self._now())
        due = self._read(
            "SELECT id, status FROM actions WHERE status IN ('pending', 'approved') AND expires_at <= ?",
            (at,),
        )
        if not due:
            return 0  # the common case stays a cheap read: no write lock, no fsync
        count = 0
        with self._write() as conn:
            for action_id, status in due:
                cur = conn.execute(
                    "UPDATE actions SET status = 'expired' WHERE id = ? AND status = ? "
                    "AND expires_at <= ?",
                    (action_id, status, at),
                )
                if cur.rowcount == 1:
                    count += 1
                    self._event(conn, action_id, "expired", at, was=status)
        return count

    def _settle(self) -> None:
        self.expire_due()
        self.mark_interrupted()

    # -- taint memory -------------------------------------------------------------------------

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
        cutoff = self._now() - RECENT_OUTPUT_MAX_AGE
        rows = self._read(
            "SELECT tool, text FROM recent_outputs WHERE recorded_at >= ? ORDER BY id DESC LIMIT ?",
            (cutoff, RECENT_OUTPUTS),
        )
        return [(r[0], r[1]) for r in rows]


def _event_detail(text: Any) -> dict[str, Any]:
    try:
        value = _column_json("event details", text)
    except _Damaged as exc:
        return {"damaged": str(exc)}
    return value if isinstance(value, dict) else {"value": value}


def _refuse_damaged(action: Action, verb: str) -> Decision:
    return Decision(
        False,
        action,
        f"{action.damaged}: it cannot be {verb}; reject it, then ask for the call again",
        "damaged",
    )


def _not_pending_why(action: Action) -> str:
    status = action.status
    if status in ("approved", "rejected"):
        why = f"already {status} by {action.decided_by} at {action.decided_at}"
        if status == "rejected" and action.note:
            why += f": {action.note}"
        return why
    if status == "expired":
        return f"expired at {action.expires_at}"
    if status == "executing":
        return f"already running (claimed by {action.claimed_by} at {action.claimed_at})"
    if status in ("executed", "failed"):
        return f"already run ({status} at {action.finished_at})"
    if status == "interrupted":
        return "interrupted: the process running it died; it is never re-run automatically"
    return status


def _not_pending_code(action: Action) -> str:
    return {
        "approved": "already_decided",
        "rejected": "rejected",
        "expired": "expired",
        "pending": "awaiting_approval",
    }.get(action.status, "already_used")


def _split_sql(script: str) -> list[str]:
    """Statements of a migration script; triggers keep their inner `;` (BEGIN ... END)."""
    out: list[str] = []
    buf = ""
    for piece in script.split(";"):
        buf += piece + ";"
        if sqlite3.complete_statement(buf):
            if buf.strip(" \n;"):
                out.append(buf.strip())
            buf = ""
    return out
