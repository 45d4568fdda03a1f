"""The store's schema (migrations, append-only) and how a row becomes an Action; sqlite3's errors
in words for a person."""

from __future__ import annotations

import json
import math
import sqlite3
from dataclasses import MISSING, fields, replace
from operator import itemgetter
from pathlib import Path
from typing import Any

from patch_tui.approvals.values import (
    BUSY_TIMEOUT_MS,
    KINDS,
    STATUSES,
    Action,
    ActionKind,
    ActionStatus,
    StoreBusy,
    StoreCorrupt,
    StoreError,
    StoreReadOnly,
    StoreUnavailable,
)

# What an approval made before signed approvals says in the inbox (schema 4 reopened it).
REOPENED_WHY = (
    "approved before approvals were signed (an HMAC seal, which no longer counts): "
    "approve it again to run it"
)
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
    # 3 -> 4: signed approvals (issue 23). A decision is a signature row (an envelope: the signed
    # statement, approvals/statements.py); a grant carries its signers' rows. The HMAC seal and
    # its key have no authority any more: an action approved under them and not yet run goes back
    # to pending, saying why, and a person approves it again with their key. Grant rows made
    # before have no signature and never approve again (`inbox grants` reports them).
    f"""
    CREATE TABLE signatures (
        id          INTEGER PRIMARY KEY,
        action_id   INTEGER NOT NULL REFERENCES actions (id),
        approver    TEXT NOT NULL,
        decision    TEXT NOT NULL CHECK (decision IN ('approve', 'reject')),
        at          TEXT NOT NULL,
        note        TEXT,
        args_sha256 TEXT NOT NULL,
        envelope    TEXT NOT NULL
    );
    -- No uniqueness by approver name: a row is worth only what its verified signature says, and
    -- a row planted under someone's name must not stop them from signing.
    CREATE INDEX signatures_by_action ON signatures (action_id, id);
    CREATE TRIGGER signatures_no_update BEFORE UPDATE ON signatures
        BEGIN SELECT RAISE(ABORT, 'signatures are append-only'); END;
    CREATE TRIGGER signatures_no_delete BEFORE DELETE ON signatures
        BEGIN SELECT RAISE(ABORT, 'signatures are append-only'); END;
    ALTER TABLE grants ADD COLUMN grant_id TEXT;
    ALTER TABLE grants ADD COLUMN tool_path TEXT;
    ALTER TABLE grants ADD COLUMN revocation TEXT;
    CREATE UNIQUE INDEX grants_by_grant_id ON grants (grant_id);
    CREATE TABLE grant_signatures (
        id        INTEGER PRIMARY KEY,
        grant_row INTEGER NOT NULL REFERENCES grants (id),
        approver  TEXT NOT NULL,
        at        TEXT NOT NULL,
        envelope  TEXT NOT NULL
    );
    CREATE INDEX grant_signatures_by_grant ON grant_signatures (grant_row, id);
    INSERT INTO events (action_id, at, actor, event, detail)
        SELECT id, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), 'patch-tui@upgrade', 'reopened',
               '{{"why": "{REOPENED_WHY}"}}'
        FROM actions WHERE status = 'approved';
    UPDATE actions SET status = 'pending', decided_at = NULL, decided_by = NULL,
        grant_id = NULL, note = '{REOPENED_WHY}'
        WHERE status = 'approved';
    """,
    # 4 -> 5: a revocation is never taken back. It is a column of the grant's row, and the
    # grant's signatures still verify without it (red team: clearing revoked_at brought a
    # revoked grant back), so the store refuses to clear or replace it, as events are kept.
    """
    CREATE TRIGGER grants_revocation_stays BEFORE UPDATE ON grants
        WHEN OLD.revoked_at IS NOT NULL AND (NEW.revoked_at IS NULL
            OR NEW.revoked_at IS NOT OLD.revoked_at OR NEW.revocation IS NOT OLD.revocation)
        BEGIN SELECT RAISE(ABORT, 'a revocation is never taken back'); END;
    """,
)
SCHEMA_VERSION = len(MIGRATIONS)

_ACTION_COLUMNS = (
    "token, kind, tool, version, source_sha256, tool_path, args_json, args_sha256, reason, "
    "details_json, status, created_at, expires_at, decided_at, decided_by, note, claimed_at, "
    "claimed_by, finished_at, result_json, upstream_token, proposed_args_json, grant_id"
)


class _Damaged(Exception):
    """A stored column that cannot be read; the message says which and why."""


def _not_json_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"{text[:40]} is too large a number")
    return value


# JSON as RFC 8259 has it, and no number too large for a float: NaN, Infinity and 1e400 (which
# json.loads reads as infinity) are refused. The store writes every JSON column with
# allow_nan=False, so only another program can have left them; and a value read here is then plain
# JSON everywhere it goes (`inbox list --json` is written by orjson, which would print NaN and
# infinity as null: format/json_text.py).
_STRICT_JSON = json.JSONDecoder(parse_constant=_not_json_constant, parse_float=_finite_float)


def _decoded(text: str) -> Any:
    """`text` decoded as _STRICT_JSON.decode does, by json's C scanner alone when the text is one
    value and nothing else (as the store writes it): decode's own Python steps were two thirds of
    the time for a small object, 10,000 of which are listed at once. Anything else (whitespace
    around it, an error to explain) goes through decode itself."""
    try:
        value, end = _SCAN_ONE(text, 0)
    except StopIteration:  # no value where the text starts
        return _STRICT_JSON.decode(text)
    return value if end == len(text) else _STRICT_JSON.decode(text)


# json's scanner (C where Python has it): (value, end) from an index. Not in typeshed.
_SCAN_ONE = _STRICT_JSON.scan_once  # type: ignore[attr-defined]


# The deepest nesting a stored JSON value may have. Python's own limit (about 1,000, less the
# stack in use) differs between reading a value and showing it: args read in one place failed
# to print in `inbox list` (a traceback), so a value no one could be shown could be approved.
MAX_DEPTH = 100


def _not_too_deep(value: Any) -> None:
    """ValueError when `value` is nested deeper than MAX_DEPTH (walked without recursion)."""
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (dict, list)):
            if depth > MAX_DEPTH:
                raise ValueError(f"nested deeper than {MAX_DEPTH} levels")
            children = node.values() if isinstance(node, dict) else node
            stack.extend((child, depth + 1) for child in children)


def _no_lone_surrogate(value: Any) -> None:
    """ValueError when a string in `value` holds a lone surrogate (JSON text may escape one,
    `"\\ud800"`): no character, so no UTF-8 and no args sha256 an approval could bind; a person
    would approve text no hash says. The store never writes one (its text is UTF-8)."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("a string holds a lone surrogate, which is no character") from None


class NotUtf8(str):
    """A stored text that is not UTF-8 (another program's bytes), its bad bytes kept as lone
    surrogates so the row can still be shown; a JSON column holding one is damaged."""


def lenient_text(raw: bytes) -> str:
    """SQLite's text as str, or as NotUtf8 where it is not UTF-8 (sqlite3's own decoding fails
    the whole query on one such cell: one bad row would hide every other)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return NotUtf8(raw.decode("utf-8", "surrogateescape"))


def _column_json(name: str, text: Any, *, want_object: bool = False) -> Any:
    """A JSON column's value; _Damaged when another program (or a disk fault) left text that is
    not JSON (or not an object where one is required)."""
    if text is None and not want_object:
        return None
    try:
        if type(text) is not str:  # noqa: E721 (a subclass is NotUtf8)
            if isinstance(text, NotUtf8):
                raise ValueError("not UTF-8 text")
            if not isinstance(text, bytes):
                raise ValueError(f"a {type(text).__name__}, not JSON text")
            text = text.decode("utf-8")  # UnicodeDecodeError is a ValueError
        value = _decoded(text)
        # These run for every listed row: one scan of the text at most, most often none.
        # An escaped surrogate (is each one of a pair?):
        if "\\u" in text and ("\\ud" in text or "\\uD" in text):
            _no_lone_surrogate(value)
        # Nested that deep (two brackets a level: shorter text cannot be):
        if len(text) > 2 * MAX_DEPTH and text.count("[") + text.count("{") > MAX_DEPTH:
            _not_too_deep(value)
    except (ValueError, RecursionError) as exc:  # json errors, too-long ints, deep nesting
        reason = str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__
        raise _Damaged(f"stored {name} are not valid JSON ({reason})") from None
    if want_object and not isinstance(value, dict):
        raise _Damaged(f"stored {name} are not a JSON object")
    return value


def _row_to_action(row: sqlite3.Row | tuple[Any, ...]) -> Action:
    """An Action from a row. A row whose JSON cannot be read becomes a damaged Action (empty
    args, `damaged` saying why) rather than an exception: one bad row must not hide the rest."""
    try:
        return _row_to_action_strict(row)
    except _Damaged as exc:
        why = str(exc)
    values = list(tuple(row))
    values[_ARGS_COLUMN] = "{}"
    # What the schema requires but a database past its own checks may hold: a known kind (else
    # the commonest) and status (else failed: never approved, never run), text for the rest.
    if values[_KIND_COLUMN] not in _KIND_OF:
        values[_KIND_COLUMN] = ActionKind.HUMAN_CONFIRM.value
    if values[_STATUS_COLUMN] not in _STATUS_OF:
        values[_STATUS_COLUMN] = ActionStatus.FAILED.value
    for index in _REQUIRED_TEXT_COLUMNS:
        if values[index] is None:
            values[index] = ""
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
_KIND_COLUMN, _STATUS_COLUMN = 1, 10
# The NOT NULL text columns (token, kind, tool, version, source_sha256, args_sha256, reason,
# status, created_at, expires_at): one test per row finds a NULL a database let in.
_REQUIRED_TEXT_COLUMNS = (0, 1, 2, 3, 4, 7, 8, 10, 11, 12)
_required_text = itemgetter(*_REQUIRED_TEXT_COLUMNS)
_JSON_COLUMNS = {_ARGS_COLUMN: "args", 9: "details", 19: "result", 21: "proposed args"}


# A dict lookup per row instead of an Enum call (10,000 rows are listed at once).
_STATUS_OF: dict[str, ActionStatus] = {s.value: s for s in ActionStatus}
_KIND_OF: dict[str, ActionKind] = {k.value: k for k in ActionKind}

# The Action field each column of _ACTION_COLUMNS fills, in order (the JSON columns decoded).
_ROW_FIELDS = tuple(column.strip().removesuffix("_json") for column in _ACTION_COLUMNS.split(","))

# Every field of an Action that no column fills, with its default (tampered, standing, damaged).
_UNSTORED_DEFAULTS: dict[str, Any] = {
    f.name: None if f.default is MISSING else f.default
    for f in fields(Action)
    if f.name not in _ROW_FIELDS
}
# Every field of an Action, the columns' first: copied per row, then filled from the row. A copy
# has the dict's final size from the start (dict(zip(...)) grows as it is filled: twice the time).
_ACTION_FIELDS: dict[str, Any] = {**dict.fromkeys(_ROW_FIELDS), **_UNSTORED_DEFAULTS}
_new_object = object.__new__
_set = object.__setattr__


def _unknown(name: str, value: Any) -> Any:
    raise _Damaged(f"stored {name} {str(value)[:40]!r} is not one patch-tui knows")


def _row_to_action_strict(row: sqlite3.Row | tuple[Any, ...]) -> Action:
    values = _ACTION_FIELDS.copy()
    values.update(zip(_ROW_FIELDS, row, strict=True))
    kind, status = values["kind"], values["status"]
    values["kind"] = _KIND_OF.get(kind) or _unknown("kind", kind)
    values["status"] = _STATUS_OF.get(status) or _unknown("status", status)
    if None in _required_text(row):
        names = [_ROW_FIELDS[i] for i in _REQUIRED_TEXT_COLUMNS if row[i] is None]
        raise _Damaged(f"stored {', '.join(names)} missing")
    values["args"] = _column_json("args", values["args"], want_object=True)
    # The other JSON columns are most often empty (NULL): tested before a call, per row.
    if values["details"] is not None:
        values["details"] = _column_json("details", values["details"])
    if values["result"] is not None:
        values["result"] = _column_json("result", values["result"])
    if values["proposed_args"] is not None:
        values["proposed_args"] = _column_json("proposed args", values["proposed_args"])
    # The frozen dataclass's __init__ sets each of its 26 fields through object.__setattr__:
    # half the cost of listing 10,000 rows. The instance takes this dict as its own instead; it
    # is the same Action (equal, frozen, `replace` works), every field set (_UNSTORED_DEFAULTS).
    action: Action = _new_object(Action)
    _set(action, "__dict__", values)
    return action


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


def _event_detail(text: Any) -> dict[str, Any]:
    try:
        value = _column_json("event details", text)
    except _Damaged as exc:
        return {"damaged": str(exc)}
    return value if isinstance(value, dict) else {"value": value}


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
