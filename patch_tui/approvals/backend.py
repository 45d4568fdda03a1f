"""The store backend interface: what every store (SQLite today, PostgreSQL next) implements.

A backend is dumb storage with atomic conditional transitions and no crypto. It never decides
whether a signature is good or a quorum complete: the caller (approvals/decisions.py, the one
decisions service every front end calls) passes that judgement in as a callback, and the backend
runs it inside the transaction that makes the change, on the rows as they are under its lock.
So two approvers deciding at once, or two confirmers claiming at once, can never both win, and
no row written between a check and the change can slip through.

    add_decision(token, signature, complete=..., args=..., shown_args_sha256=...) -> Decision
        appends `signature` (one per approver per action: the same person again replaces
        nothing and counts once) and, in the same transaction: a reject moves pending ->
        rejected; an approve calls `complete(action, signatures)` and moves pending -> approved
        (expiring at the time it returns) when it returns one, else leaves it pending.
    decisions(token)                       -> list[Signature]   oldest first
    claim(token, check)                    -> Decision   approved -> executing, once, only if
        `check(action, signatures, grant)` returns None inside the claim transaction; else the
        action becomes failed with the refusal (code, why) as its result.
    approve_by_grant(token, grant_id, check) -> Decision   pending -> approved by a grant when
        `check(action, grant)` holds inside the transaction (the grant's use is counted there).
    add_grant(grant), add_grant_signature(id, signature), revoke_grant(id, signature),
    get_grant(id), list_grants(...)        grants rows, each with its signatures

See docs/architecture.md, "Signed approvals: the statement, the envelope, the store interface".
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol, runtime_checkable

from patch_tui.approvals.reading import Reading
from patch_tui.approvals.records import Grant, Signature
from patch_tui.approvals.values import Action, Decision, Event, Kind

# (action as stored now, its signatures) -> the approved action's expiry when the quorum is
# complete, else None (it stays pending: "1 of 2").
QuorumCheck = Callable[[Action, Sequence[Signature]], str | None]
# (action, its signatures, the grant that approved it or None) -> None when it may run, else
# (code, why): code is tampered, not_allowed, awaiting_approval or args_changed.
ClaimCheck = Callable[[Action, Sequence[Signature], Grant | None], tuple[str, str] | None]
# (pending action, grant with its signatures) -> whether the grant approves this call now.
GrantUseCheck = Callable[[Action, Grant], bool]


@runtime_checkable
class ApprovalStore(Protocol):
    """The confirmation store, as the decisions service, the gate, guard and the front ends use
    it. `approvals.store.Store` (SQLite) implements it; a PostgreSQL backend implements the same
    methods with the same meaning (tests/unit/test_store_interface.py runs against each)."""

    actor: str
    ttl: float

    # -- actions ------------------------------------------------------------------------------
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
    ) -> Action: ...

    def get(self, token: str) -> Action | None: ...

    def list_actions(
        self,
        statuses: Iterable[str] | None = ...,
        tool: str | None = None,
        limit: int | None = None,
    ) -> list[Action]: ...

    # How many actions list_actions(statuses) lists, in one count: a list shown a page at a time
    # (the TUI inbox's first page of the newest) says how many there are before it has them all.
    def count_actions(self, statuses: Iterable[str] | None = ...) -> int: ...

    def pending_count(self) -> int: ...

    def next_expiry(self) -> str | None: ...

    def data_version(self) -> int: ...

    # Sleep until data_version() differs from `seen` (at most `timeout` s); the version then.
    # PostgreSQL: LISTEN/NOTIFY, no polling; SQLite: a cheap read every 250 ms.
    def wait_for_change(self, seen: int | None, timeout: float) -> int: ...

    def events(self, token: str | None = None, limit: int | None = None) -> list[Event]: ...

    # -- decisions ----------------------------------------------------------------------------
    def add_decision(
        self,
        token: str,
        signature: Signature,
        *,
        complete: QuorumCheck,
        args: dict[str, Any] | None = None,
        shown_args_sha256: str | None = None,
    ) -> Decision: ...

    def decisions(self, token: str) -> list[Signature]: ...

    # decisions() of many actions in one read (the inbox annotates thousands at once).
    def decisions_many(self, tokens: list[str]) -> dict[str, list[Signature]]: ...

    def approve_by_grant(self, token: str, grant_id: int, check: GrantUseCheck) -> Decision: ...

    def claim(self, token: str, check: ClaimCheck) -> Decision: ...

    def finish(
        self, token: str, ok: bool, result: Any, ran: dict[str, Any] | None = None
    ) -> Action: ...

    def settle(self) -> int: ...

    # -- grants -------------------------------------------------------------------------------
    def add_grant(self, grant: Grant) -> Grant: ...

    def add_grant_signature(self, grant_id: int, signature: Signature) -> Grant: ...

    def revoke_grant(self, grant_id: int, signature: Signature) -> Grant: ...

    def get_grant(self, grant_id: int) -> Grant | None: ...

    def list_grants(self, *, tool: str | None = None, ended: bool = False) -> list[Grant]: ...

    # -- who is reading which call (approvals/reading.py: the team inbox's claim) -------------
    def claim_reading(self, token: str, seconds: float = ...) -> Decision: ...

    def release_reading(self, token: str) -> bool: ...

    def readings(self) -> dict[str, Reading]: ...

    # -- the taint gate's memory --------------------------------------------------------------
    def record_output(self, tool: str, text: str) -> None: ...

    def recent_outputs(self) -> list[tuple[str, str]]: ...

    def close(self) -> None: ...
