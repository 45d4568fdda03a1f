"""The audit export: every action with its decision and the run's outcome, refusals included.

    records(store, since=None, tokens=None)  -> list[dict]   oldest first, one per action
                                                  (tokens: only these, as the inbox's history
                                                  exports its filtered rows)
    write_jsonl(records, out) / write_csv(records, out)
    parse_since(text, now)          -> ISO time     "2026-11-20", "2026-11-20T10:00Z", "2h", "1d"

One record per action, built from the action row and its append-only events: what the agent
asked (`proposed_args` when a person edited them, else `args`), what was approved (`args`), who
decided what and when (`decision`: approved / rejected / expired / pending, `decided_by`,
`decided_at`, `note`: the approval's note or the rejection's reason, `grant`: the standing grant
that approved it), and what happened after (`outcome`: executed, failed, tool_changed,
passed_to_human_confirm, interrupted, running, awaiting_confirm, expired, not_run, pending; with
`finished_at` and `result`), and `flags`: what the one display rule says about its text (hidden
characters, look-alikes), each `{"where": "args.to", "flag": <a sentence>}`, as the inbox says it.
JSONL keeps the events too; it is ASCII JSON, so every invisible character is a `\\uXXXX` escape.

CSV is for spreadsheets, which run a cell that starts with `=`, `+`, `-` or `@` as a formula: such
cells get a leading `'` (OWASP's advice; the JSONL export is the exact record). Nested values are
their JSON text.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterable
from datetime import UTC, datetime
from enum import StrEnum
from typing import IO, Any

from patch_tui.approvals.store import Action, ActionStatus, Event, Store, now_iso
from patch_tui.untrusted.text_safety import value_flags

CSV_FIELDS: tuple[str, ...] = (
    "token",
    "created_at",
    "kind",
    "tool",
    "version",
    "source_sha256",
    "reason",
    "decision",
    "decided_by",
    "decided_at",
    "note",
    "grant",
    "edited",
    "proposed_args",
    "args",
    "outcome",
    "finished_at",
    "result",
    "flags",
)
_AGE_RE = re.compile(r"(\d+)([smhd])")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_since(text: str, now: float) -> str:
    """An age (`2h`, `1d`, `1h30m`) or an ISO date or time (UTC unless it says otherwise)."""
    compact = text.strip()
    if compact and not _AGE_RE.sub("", compact.lower()):
        seconds = sum(int(n) * _UNITS[u] for n, u in _AGE_RE.findall(compact.lower()))
        return now_iso(now - seconds)
    try:
        when = datetime.fromisoformat(compact.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise ValueError(
            f"--since {text!r}: expected a date or time (2026-11-20, 2026-11-20T10:00Z) "
            "or an age (30m, 2h, 1d)"
        ) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return now_iso(when.timestamp())


def _decision(action: Action, events: list[Event]) -> str:
    for ev in events:
        if ev.event in ("approved", "rejected"):
            return ev.event
    if action.status == ActionStatus.EXPIRED:
        return "expired"
    return "pending"


class Outcome(StrEnum):
    """What became of an action (the export's `outcome`)."""

    EXECUTED = "executed"
    PASSED_TO_HUMAN_CONFIRM = "passed_to_human_confirm"
    FAILED = "failed"
    TOOL_CHANGED = "tool_changed"
    INTERRUPTED = "interrupted"
    RUNNING = "running"
    AWAITING_CONFIRM = "awaiting_confirm"
    NOT_RUN = "not_run"
    EXPIRED = "expired"
    PENDING = "pending"


# The outcome of an action in a status that says it all.
_OUTCOMES: dict[ActionStatus, Outcome] = {
    ActionStatus.INTERRUPTED: Outcome.INTERRUPTED,
    ActionStatus.EXECUTING: Outcome.RUNNING,
    ActionStatus.APPROVED: Outcome.AWAITING_CONFIRM,
    ActionStatus.REJECTED: Outcome.NOT_RUN,
    ActionStatus.EXPIRED: Outcome.EXPIRED,
    ActionStatus.PENDING: Outcome.PENDING,
}


def _outcome(action: Action, decision: str) -> Outcome:
    status = action.status
    result = action.result if isinstance(action.result, dict) else {}
    if status == ActionStatus.EXECUTED:
        if result.get("status") == "passed_to_human_confirm":
            return Outcome.PASSED_TO_HUMAN_CONFIRM
        return Outcome.EXECUTED
    if status == ActionStatus.FAILED:
        return Outcome.TOOL_CHANGED if result.get("status") == "tool_changed" else Outcome.FAILED
    return _OUTCOMES.get(status, Outcome.PENDING)


def record(action: Action, events: list[Event]) -> dict[str, Any]:
    decision = _decision(action, events)
    return {
        "token": action.token,
        "created_at": action.created_at,
        "kind": action.kind,
        "tool": action.tool,
        "version": action.version,
        "source_sha256": action.source_sha256,
        "reason": action.reason,
        "decision": decision,
        "decided_by": action.decided_by,
        "decided_at": action.decided_at,
        "note": action.note,
        "grant": action.grant_id,
        "edited": action.edited,
        "proposed_args": action.proposed_args if action.edited else action.args,
        "args": action.args,
        "outcome": _outcome(action, decision),
        "finished_at": action.finished_at,
        "result": action.result,
        "flags": display_flags(action),
        "events": [
            {"at": e.at, "actor": e.actor, "event": e.event, "detail": e.detail} for e in events
        ],
    }


def display_flags(action: Action) -> list[dict[str, str]]:
    """What the one display rule (untrusted.text_safety) says about the action's text, as the
    inbox says it: hidden characters and look-alikes in the tool name, the reason and the args
    (keys and values), each with where it is (`args.to`, `args.to key`)."""
    found = [
        *value_flags(action.tool, "tool"),
        *value_flags(action.reason, "reason"),
        *value_flags(action.args, "args"),
    ]
    if action.edited:
        found += value_flags(action.proposed_args, "proposed_args")
    return [{"where": where, "flag": sentence} for where, sentence in found]


def records(
    store: Store, since: str | None = None, *, tokens: Iterable[str] | None = None
) -> list[dict[str, Any]]:
    actions = store.list_actions(statuses=None)
    if since is not None:
        actions = [a for a in actions if a.created_at >= since]
    if tokens is not None:
        wanted = set(tokens)
        actions = [a for a in actions if a.token in wanted]
    by_token: dict[str, list[Event]] = {}
    for ev in store.events():
        by_token.setdefault(ev.token, []).append(ev)
    return [record(a, by_token.get(a.token, [])) for a in reversed(actions)]


def write_jsonl(rows: Iterable[dict[str, Any]], out: IO[str]) -> int:
    count = 0
    for row in rows:
        # ASCII JSON: the file says exactly what was stored, and a terminal showing it cannot be
        # driven by escape sequences inside args or results.
        out.write(json.dumps(row, ensure_ascii=True, separators=(",", ":")) + "\n")
        count += 1
    return count


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    if text[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + text
    return text


def write_csv(rows: Iterable[dict[str, Any]], out: IO[str]) -> int:
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_FIELDS)
    count = 0
    for row in rows:
        writer.writerow([_cell(row.get(f)) for f in CSV_FIELDS])
        count += 1
    return count
