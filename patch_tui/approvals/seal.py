"""The seal on an approval: an HMAC over what was approved, checked before anything runs."""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any

from patch_tui.approvals.values import Action, ActionStatus, args_sha256, canonical_json

_SEALED_FIELDS = ("token", "kind", "tool_path", "source_sha256", "expires_at", "upstream_token")
# Statuses whose approval is checked whenever the action is read: the ones that can still run.
_LIVE = (ActionStatus.APPROVED, ActionStatus.EXECUTING)
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
        return (
            "tampered",
            "its approval's seal does not verify (forged, or copied from another call)",
        )
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
