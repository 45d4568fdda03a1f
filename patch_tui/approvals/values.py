"""The store's values: statuses, kinds, the Action / Decision / Event records, errors, and the
small helpers every caller shares (times, canonical JSON, tokens).

The status and kind StrEnums compare equal to, format as, and serialize to the same strings the
database and the JSON contracts (`inbox list --json`, the audit export, MCP answers) always held.
"""

from __future__ import annotations

import base64
import getpass
import hashlib
import json
import os
import re
import secrets
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from patch_tui.format.json_text import reusable_encoder


class ActionStatus(StrEnum):
    """Where an action is in its life (the `status` column)."""

    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"
    EXPIRED = "expired"
    EXECUTING = "executing"
    EXECUTED = "executed"
    FAILED = "failed"
    INTERRUPTED = "interrupted"


class ActionKind(StrEnum):
    """Which gate held the call (the `kind` column)."""

    HUMAN_CONFIRM = "human_confirm"
    TAINTED_INPUT = "tainted_input"


KINDS: tuple[str, ...] = tuple(ActionKind)
STATUSES: tuple[str, ...] = tuple(ActionStatus)
# Statuses an action can leave by itself (its expiry) or by a decision.
OPEN_STATUSES: tuple[ActionStatus, ...] = (ActionStatus.PENDING, ActionStatus.APPROVED)
DEFAULT_TTL = 300
BUSY_TIMEOUT_MS = 5000
# Taint memory, as the Patch runtime keeps it: the last 20 outputs of the last 30 minutes.
RECENT_OUTPUTS = 20
RECENT_OUTPUT_MAX_AGE = 30 * 60

Kind = ActionKind


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


# now_iso's own form. Read with fromisoformat: strptime's first call in a process imports and
# compiles its parser (about 10 ms, in the inbox's first frame); any other form still goes
# through strptime, which says what is wrong with it.
_NOW_ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", re.ASCII)


def parse_iso(text: str) -> float:
    if _NOW_ISO.fullmatch(text):
        try:
            return datetime.fromisoformat(text[:-1]).replace(tzinfo=UTC).timestamp()
        except ValueError:
            pass  # a day or an hour out of range: strptime's error below
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC).timestamp()


# json.dumps with these options builds a new encoder on every call; a listing of 10,000 actions
# makes tens of thousands of calls. One encoder, the same text.
_CANONICAL = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
)


def canonical_json(value: Any) -> str:
    """Sorted keys, no spaces, UTF-8 kept: the form whose sha256 an approval binds."""
    return _CANONICAL.encode(value)


# The same text as canonical_json, from an encoder made once (for sizes: no circular check).
_CANONICAL_TEXT = reusable_encoder(_CANONICAL)


def canonical_text(value: Any) -> str:
    """canonical_json(value), for the checks every listed action gets (approvable: its size,
    10 of 18 ms for 10,000 actions, and its args sha256). TypeError or ValueError as
    canonical_json raises them, and RecursionError for a value that holds itself (or is nested
    too deep)."""
    return _CANONICAL_TEXT(value)


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


@dataclass(frozen=True)
class Action:
    """One gated tool call. `args` is the dict exactly as received (key order kept)."""

    token: str
    kind: ActionKind
    tool: str
    version: str
    source_sha256: str
    args: dict[str, Any]
    args_sha256: str
    reason: str
    status: ActionStatus
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

    # Why the action's approval is not genuine, else None: set from a refused claim's result by
    # the store, and for a live approval by approvals/decisions.annotate. Never run.
    tampered: str | None = None
    # Where a pending action's signed approvals stand ("1 of 2: approved by alice"), and any
    # signature that does not count: set by approvals/decisions.annotate for the inbox.
    standing: str | None = None
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
    already_used, changed_since_shown (approve with the args hash a person saw); and from claim,
    tampered or args_changed (the approval does not hold), or not_run (this machine could not
    record that it ran it: approvals/ran_here.py).
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


def _refuse_damaged(action: Action, verb: str) -> Decision:
    return Decision(
        False,
        action,
        f"{action.damaged}: it cannot be {verb}; reject it, then ask for the call again",
        "damaged",
    )


def _not_pending_why(action: Action) -> str:
    status = action.status
    if status in (ActionStatus.APPROVED, ActionStatus.REJECTED):
        why = f"already {status} by {action.decided_by} at {action.decided_at}"
        if status == ActionStatus.REJECTED and action.note:
            why += f": {action.note}"
        return why
    if status == ActionStatus.EXPIRED:
        return f"expired at {action.expires_at}"
    if status == ActionStatus.EXECUTING:
        return f"already running (claimed by {action.claimed_by} at {action.claimed_at})"
    if status in (ActionStatus.EXECUTED, ActionStatus.FAILED):
        return f"already run ({status} at {action.finished_at})"
    if status == ActionStatus.INTERRUPTED:
        return "interrupted: the process running it died; it is never re-run automatically"
    return status


# Decision.code for a token that is no longer pending, by its status (anything else: already_used).
_NOT_PENDING_CODES: dict[ActionStatus, str] = {
    ActionStatus.APPROVED: "already_decided",
    ActionStatus.REJECTED: "rejected",
    ActionStatus.EXPIRED: "expired",
    ActionStatus.PENDING: "awaiting_approval",
}


def _not_pending_code(action: Action) -> str:
    return _NOT_PENDING_CODES.get(action.status, "already_used")


# Refusal codes of a claim, kept as the refused action's result status (approvals/decisions.py).
REFUSALS = ("tampered", "args_changed", "not_allowed", "awaiting_approval")


def refusal_note(action: Action) -> str | None:
    """Why confirm refused to run this action, when it did (its result keeps the refusal)."""
    result = action.result
    # The result first: most actions have none, and naming an enum member is a class attribute
    # lookup (this runs for every listed row).
    if (
        isinstance(result, dict)
        and action.status == ActionStatus.FAILED
        and result.get("status") in REFUSALS
    ):
        return str(result.get("why") or result.get("status"))
    return None
