"""The decisions service: the one place that signs, verifies and counts approvals.

    approve(store, token, note=None, *, args=None, shown_args_sha256=None, signer=None) -> Decision
    reject(store, token, reason=None, *, signer=None)                                  -> Decision
    record_signed(store, envelope, args=None, shown_args_sha256=None) -> Decision   a decision
                                  signed elsewhere (the web inbox's passkey), checked, recorded
    standing(store, action)       -> Quorum   "1 of 2: approved by alice", and what does not count
    claim(store, token)           -> Decision approved -> executing, only if it verifies now
    claim_check(approvers)        -> ClaimCheck   what claim runs inside the store's transaction
    trusted()                     -> Approvers    the trusted approvers as the settings say now
    local_identity(approvers, signer) -> Approver   who the local key signs as (DecisionRefused)

The TUI, the CLI, serve/guard's confirm, try it and the web app all decide through here; a store
backend (approvals/backend.py) only keeps the signatures, and runs the checks passed to it inside
its transactions. Grants are approvals/grants.py's, on the same checks (`grant_problem`).

What counts as an approval of a call (`count`): a signature row whose envelope holds a decision
statement that
- parses (canonical JSON) and names an approver the trusted approvers list, whose key (the
  statement's `key`) verifies the signature (approvals/signing.py): else `tampered`;
- binds this very call: its token, kind, tool, tool path, tool version, source sha256, args
  sha256 (of the args as they are now), upstream token, and an expiry not passed: else it does
  not count (a signature for another call, replayed here, is `tampered`);
- is by an approver allowed this tool (`tools` globs): else `not_allowed`.
Distinct approvers are counted (the same person twice counts once) against the largest `require`
of the rules the call matches: short of it, `awaiting_approval`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from patch_tui.approvals import approvable
from patch_tui.approvals.approvers import Approver, Approvers
from patch_tui.approvals.backend import ApprovalStore, ClaimCheck
from patch_tui.approvals.grants import grant_problem
from patch_tui.approvals.identity import (
    DecisionRefused,
    local_identity,
    signer_here,
    store_now,
    tool_capabilities,
    trusted,
)
from patch_tui.approvals.keys import KeyProblem, Signer
from patch_tui.approvals.records import Grant, Signature
from patch_tui.approvals.signing import sign_statement, verify_envelope
from patch_tui.approvals.statements import (
    DecisionStatement,
    DecisionVerb,
    Envelope,
    StatementError,
    parse_statement,
)

# Who is trusted and who signs here live in approvals/identity.py (grants.py needs them too);
# callers reach them through this module as well.
__all__ = [
    "DecisionRefused",
    "Quorum",
    "annotate",
    "approve",
    "claim",
    "claim_check",
    "count",
    "local_identity",
    "record_signed",
    "reject",
    "signer_here",
    "standing",
    "store_now",
    "tool_capabilities",
    "trusted",
]

from patch_tui.approvals.values import (
    Action,
    ActionStatus,
    Decision,
    args_sha256,
    canonical_json,
    now_iso,
    parse_iso,
)

# -- verifying ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Verified:
    """One signature read and checked: its statement, or why it does not count."""

    statement: DecisionStatement | None
    approver: Approver | None
    # None: good, counts; else (code, why): tampered, not_allowed, or stale (another args/expiry).
    problem: tuple[str, str] | None = None


def verify_decision(signature: Signature, approvers: Approvers) -> Verified:
    """The signature's decision statement, verified against the trusted approvers."""
    try:
        envelope = Envelope.from_text(signature.envelope)
        statement = parse_statement(envelope.statement)
    except StatementError as exc:
        return Verified(None, None, ("tampered", f"a signature cannot be read: {exc}"))
    if not isinstance(statement, DecisionStatement):
        return Verified(None, None, ("tampered", "a signature is not of a decision"))
    if statement.approver != signature.approver or statement.decision != signature.decision:
        return Verified(statement, None, ("tampered", "a signature row was altered"))
    approver = approvers.find(statement.approver)
    if approver is None:
        why = approvers.problem or f"{statement.approver!r} is not a trusted approver"
        return Verified(statement, None, ("tampered", why))
    bad = verify_envelope(envelope, approver, statement.key)
    if bad is not None:
        return Verified(statement, approver, ("tampered", f"{approver.name}'s signature: {bad}"))
    return Verified(statement, approver)


def binding_problem(
    statement: DecisionStatement, action: Action, now: str
) -> tuple[str, str] | None:
    """Why this (good) statement is not a decision on this call as it stands, else None:
    (tampered, ...) for another call's, (args_changed, ...) for other args, (stale, ...) for an
    approval past its expiry."""
    bound = {
        "token": action.token,
        "kind": str(action.kind),
        "tool": action.tool,
        "tool_path": action.tool_path,
        "tool_version": action.version,
        "source_sha256": action.source_sha256,
        "upstream_token": action.upstream_token,
    }
    changed = [k for k, v in bound.items() if getattr(statement, k) != v]
    if changed:
        return "tampered", f"it was signed for another call (its {', '.join(changed)} differ)"
    if statement.args_sha256 != action.args_sha256 or args_sha256(action.args) != (
        action.args_sha256
    ):
        return "args_changed", "it was signed for other args (changed since)"
    if statement.decision == "approve" and statement.expires_at <= now:
        return "stale", f"the approval expired at {statement.expires_at}"
    if statement.decision == "approve" and statement.expires_at > _longest_from(now):
        # The runner remembers a run RETENTION_S (approvals/ran_here.py): an approval that
        # outlived that could be replayed by the store once it was forgotten. No approval made
        # here lasts that long (confirm_ttl is 30 days at most); an approver's clock set ahead
        # or another signing program can have made one.
        return (
            "stale",
            f"the approval lasts until {statement.expires_at}, longer than any approval may "
            "(confirm_ttl is 30 days at most)",
        )
    return None


def _longest_from(now: str) -> str:
    """The latest expiry an approval checked at `now` may have."""
    from patch_tui.approvals.ran_here import RETENTION_S

    return now_iso(parse_iso(now) + RETENTION_S)


@dataclass(frozen=True)
class Quorum:
    """Where an action stands: how many distinct approvers it needs and who approved it."""

    required: int
    approved_by: tuple[str, ...] = ()
    # Signatures that do not count, and why (tampered / not_allowed / stale), for the inbox.
    problems: tuple[tuple[str, str], ...] = ()
    # The earliest expiry among the counted approvals (what the approved action expires at).
    expires_at: str | None = None
    rejected_by: tuple[str, ...] = field(default=())

    @property
    def complete(self) -> bool:
        return len(self.approved_by) >= self.required

    def line(self) -> str:
        """ "1 of 2: approved by alice" (or "needs 2 approvers" before anyone approved)."""
        if not self.approved_by:
            return f"needs {self.required} approvers" if self.required > 1 else "awaiting approval"
        return (
            f"{len(self.approved_by)} of {self.required}: approved by {', '.join(self.approved_by)}"
        )

    def refusal(self) -> tuple[str, str]:
        """The claim's refusal when the quorum is not complete."""
        codes = [code for code, _ in self.problems]
        for wanted in ("tampered", "not_allowed", "args_changed"):
            if wanted in codes:
                return wanted, next(why for code, why in self.problems if code == wanted)
        if not self.approved_by and not self.problems:
            return "tampered", "it is marked approved, but no one's signed approval is recorded"
        if not self.approved_by:
            return "tampered", self.problems[0][1]
        return "awaiting_approval", self.line()


def count(
    action: Action,
    signatures: Sequence[Signature],
    approvers: Approvers,
    now: str,
    caps: dict[str, Any] | None = None,
) -> Quorum:
    """The action's approvals that hold now (see the module)."""
    required = approvers.required(action.tool, action.tool_path, caps)
    approved: list[str] = []
    rejected: list[str] = []
    problems: list[tuple[str, str]] = []
    expiries: list[str] = []
    for sig in signatures:
        verified = verify_decision(sig, approvers)
        if verified.problem is not None:
            problems.append(verified.problem)
            continue
        statement, approver = verified.statement, verified.approver
        assert statement is not None and approver is not None
        bound = binding_problem(statement, action, now)
        if bound is not None:
            problems.append((bound[0], f"{approver.name}'s signature: {bound[1]}"))
            continue
        if not approver.may_approve(action.tool, action.tool_path):
            problems.append(
                ("not_allowed", f"{approver.name} may not approve {action.tool} (approvers file)")
            )
            continue
        if statement.decision == "reject":
            rejected.append(approver.name)
        elif approver.name not in approved:
            approved.append(approver.name)
            expiries.append(statement.expires_at)
    return Quorum(
        required,
        tuple(approved),
        tuple(problems),
        min(expiries) if expiries else None,
        tuple(rejected),
    )


def standing(store: ApprovalStore, action: Action, approvers: Approvers | None = None) -> Quorum:
    """What the inbox shows for an action: its quorum, and what does not count."""
    approvers = approvers or trusted()
    now = now_iso(store_now(store))
    return count(
        action, store.decisions(action.token), approvers, now, tool_capabilities(action, approvers)
    )


# The statuses whose approval or quorum a listing says something about. A set, made once:
# naming an enum member costs a class attribute lookup, 40,000 of them for 10,000 pending.
_LIVE = frozenset((ActionStatus.APPROVED, ActionStatus.PENDING))


def annotate(
    store: ApprovalStore, actions: list[Action], approvers: Approvers | None = None
) -> list[Action]:
    """The actions as the inbox shows them: an approved one whose approval does not verify now
    gets `tampered` (why confirm will refuse it); a pending one with signatures, or needing more
    than one approver, gets `standing` ("1 of 2: approved by alice; not counted: ...")."""
    from dataclasses import replace

    live = [a for a in actions if a.status in _LIVE]
    if not live:
        return actions
    trust = approvers or trusted()
    check = claim_check(trust, clock=lambda: store_now(store))
    # One read for every live action's signatures, not one each (a database store's round
    # trips added up to seconds for 10,000 pending).
    signed = store.decisions_many([a.token for a in live])
    now = now_iso(store_now(store))  # once: a listing is one moment, and 10,000 clock reads add up
    approved = ActionStatus.APPROVED
    out: list[Action] = []
    for action in actions:
        if action.damaged or action.status not in _LIVE:
            out.append(action)
        elif action.status == approved:
            grant = None if action.grant_id is None else store.get_grant(action.grant_id)
            problem = check(action, signed.get(action.token, []), grant)
            out.append(action if problem is None else replace(action, tampered=problem[1]))
        else:
            signatures = signed.get(action.token, [])
            if not signatures and not trust.rules:
                out.append(action)  # nothing to say: no signature, and one approver suffices
                continue
            caps = tool_capabilities(action, trust)
            if not signatures and trust.required(action.tool, action.tool_path, caps) <= 1:
                out.append(action)
                continue
            quorum = count(action, signatures, trust, now, caps)
            line = quorum.line()
            if quorum.problems:
                line += "; not counted: " + "; ".join(why for _, why in quorum.problems)
            out.append(replace(action, standing=line))
    return out


# -- deciding -----------------------------------------------------------------------------------


def _statement(
    action: Action,
    approver: Approver,
    signer: Signer,
    decision: DecisionVerb,
    note: str | None,
    at: str,
    expires_at: str,
    approved_args_sha256: str,
) -> DecisionStatement:
    return DecisionStatement(
        token=action.token,
        kind=str(action.kind),
        tool=action.tool,
        tool_path=action.tool_path,
        tool_version=action.version,
        source_sha256=action.source_sha256,
        args_sha256=approved_args_sha256,
        expires_at=expires_at,
        upstream_token=action.upstream_token,
        decision=decision,
        note=note,
        approver=approver.name,
        key=signer.fingerprint,
        at=at,
    )


def _decide(
    store: ApprovalStore,
    token: str,
    verb: DecisionVerb,
    note: str | None,
    *,
    args: dict[str, Any] | None,
    shown_args_sha256: str | None,
    signer: Signer | None,
    approvers: Approvers | None,
) -> Decision:
    action = store.get(token)
    if action is None:
        return Decision(False, None, "unknown token", "unknown_token")
    if action.status != ActionStatus.PENDING:
        return Decision(False, action, *_not_pending(action))
    if verb == "approve":
        # What no one can have seen is never approved (approvals/approvable.py); the store
        # checks again under its lock. Asked first, so no one is asked to sign for nothing.
        unseen = approvable.unseen(action)
        if unseen is not None:
            return Decision(False, action, unseen.why, unseen.code)
    try:
        # The key first: the default key file is created on first use, and without an
        # approvers file it is the one trusted approver.
        signer = signer or signer_here()
        approvers = approvers or trusted()
        approver = local_identity(approvers, signer)
    except DecisionRefused as exc:
        return Decision(False, action, str(exc), exc.code)
    if not approver.may_approve(action.tool, action.tool_path):
        return Decision(
            False,
            action,
            f"{approver.name} may not decide on {action.tool} (approvers file)",
            "not_allowed",
        )
    if verb == "approve" and args is None:
        # The same person twice counts once: say so rather than sign again.
        already = standing(store, action, approvers)
        if approver.name in already.approved_by:
            return Decision(
                False,
                action,
                f"{approver.name} already approved it ({already.line()})",
                "already_signed",
            )
    approved_sha = action.args_sha256
    if args is not None and canonical_json(args) != canonical_json(action.args):
        try:
            approved_sha = args_sha256(args)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"args are not plain JSON: {exc}") from None
    now = store_now(store)
    at = now_iso(now)
    expires = now_iso(now + store.ttl) if verb == "approve" else at
    statement = _statement(action, approver, signer, verb, note, at, expires, approved_sha)
    try:
        envelope = sign_statement(statement.canonical(), signer)
    except KeyProblem as exc:
        return Decision(False, action, str(exc), "no_key")
    signature = Signature(approver.name, verb, at, envelope.to_text(), note)
    return _record(store, action, signature, approvers, args, shown_args_sha256)


def _record(
    store: ApprovalStore,
    action: Action,
    signature: Signature,
    approvers: Approvers,
    args: dict[str, Any] | None,
    shown_args_sha256: str | None,
) -> Decision:
    """Appends a verified signature and, in the same transaction, counts the quorum."""
    caps = tool_capabilities(action, approvers)

    def complete(current: Action, signatures: Sequence[Signature]) -> str | None:
        quorum = count(current, signatures, approvers, now_iso(store_now(store)), caps)
        return quorum.expires_at if quorum.complete else None

    decision = store.add_decision(
        action.token, signature, complete=complete, args=args, shown_args_sha256=shown_args_sha256
    )
    if decision.code == "awaiting_approval" and decision.action is not None:
        quorum = standing(store, decision.action, approvers)
        return Decision(False, decision.action, quorum.line(), "awaiting_approval")
    return decision


def record_signed(
    store: ApprovalStore,
    envelope: Envelope,
    *,
    args: dict[str, Any] | None = None,
    shown_args_sha256: str | None = None,
    approvers: Approvers | None = None,
) -> Decision:
    """A decision signed away from this process (a passkey assertion made in the web inbox's
    browser): recorded exactly like approve / reject once its signature verifies against the
    trusted approvers and its statement binds this pending call (with `args`, the edited args
    it names); else refused, nothing written."""
    try:
        statement = parse_statement(envelope.statement)
    except StatementError as exc:
        return Decision(False, None, f"the signed decision cannot be read: {exc}", "tampered")
    if not isinstance(statement, DecisionStatement):
        return Decision(False, None, "the signed statement is not a decision", "tampered")
    action = store.get(statement.token)
    if action is None:
        return Decision(False, None, "unknown token", "unknown_token")
    if action.status != ActionStatus.PENDING:
        return Decision(False, action, *_not_pending(action))
    if statement.decision == "approve":
        # What no one can have seen is never approved (approvals/approvable.py), as above.
        unseen = approvable.unseen(action)
        if unseen is not None:
            return Decision(False, action, unseen.why, unseen.code)
    approvers = approvers or trusted()
    signature = Signature(
        statement.approver, statement.decision, statement.at, envelope.to_text(), statement.note
    )
    verified = verify_decision(signature, approvers)
    if verified.problem is not None:
        return Decision(False, action, verified.problem[1], verified.problem[0])
    approver = verified.approver
    assert approver is not None
    if not approver.may_approve(action.tool, action.tool_path):
        return Decision(
            False,
            action,
            f"{approver.name} may not decide on {action.tool} (approvers file)",
            "not_allowed",
        )
    # What it binds, checked against the call as it will stand (the edit applied).
    as_decided = action
    if args is not None:
        from dataclasses import replace

        as_decided = replace(action, args=args, args_sha256=args_sha256(args))
    bound = binding_problem(statement, as_decided, now_iso(store_now(store)))
    if bound is not None:
        return Decision(False, action, bound[1], bound[0])
    return _record(store, action, signature, approvers, args, shown_args_sha256)


def _not_pending(action: Action) -> tuple[str, str]:
    from patch_tui.approvals.values import _not_pending_code, _not_pending_why

    if action.status == ActionStatus.PENDING:
        return "awaiting approval", "awaiting_approval"
    return _not_pending_why(action), _not_pending_code(action)


def approve(
    store: ApprovalStore,
    token: str,
    note: str | None = None,
    *,
    args: dict[str, Any] | None = None,
    shown_args_sha256: str | None = None,
    signer: Signer | None = None,
    approvers: Approvers | None = None,
) -> Decision:
    """Sign an approval of the pending action (its args, or `args` a person edited) and record
    it. `ok` when this approval completed the quorum and the action is approved; code
    `awaiting_approval` (why: "1 of 2: approved by alice") when it still needs others."""
    return _decide(
        store,
        token,
        "approve",
        note,
        args=args,
        shown_args_sha256=shown_args_sha256,
        signer=signer,
        approvers=approvers,
    )


def reject(
    store: ApprovalStore,
    token: str,
    reason: str | None = None,
    *,
    signer: Signer | None = None,
    approvers: Approvers | None = None,
) -> Decision:
    """Sign a rejection and record it: one approver's no rejects the call."""
    return _decide(
        store,
        token,
        "reject",
        reason,
        args=None,
        shown_args_sha256=None,
        signer=signer,
        approvers=approvers,
    )


# -- running ------------------------------------------------------------------------------------


def claim_check(
    approvers: Approvers | None = None,
    workspace: str | os.PathLike[str] | None = None,
    clock: Callable[[], float] = time.time,
) -> ClaimCheck:
    """The check `store.claim` runs inside its transaction (see the module; grants:
    approvals/grants.grant_problem)."""
    trust = approvers or trusted()

    def check(
        action: Action, signatures: Sequence[Signature], grant: Grant | None
    ) -> tuple[str, str] | None:
        now = now_iso(clock())
        caps = tool_capabilities(action, trust)
        if action.grant_id is not None:
            if grant is None:
                return (
                    "tampered",
                    f"the grant {action.grant_id} that approved it is not in the store",
                )
            return grant_problem(grant, action, trust, now, caps, workspace)
        quorum = count(action, signatures, trust, now, caps)
        return None if quorum.complete else quorum.refusal()

    return check


def claim(
    store: ApprovalStore,
    token: str,
    approvers: Approvers | None = None,
    *,
    workspace: str | os.PathLike[str] | None = None,
) -> Decision:
    """approved -> executing, once, only when its signatures (or its grant's) verify now, and
    only if this machine has not claimed it before (a store set back to `approved` replays it:
    approvals/ran_here.py). `workspace`: where a grant's path patterns resolve relative values
    (the gate's)."""
    decision = store.claim(token, claim_check(approvers, workspace, lambda: store_now(store)))
    from patch_tui.approvals import ran_here  # confirm's: its SQLite file, nowhere else

    return ran_here.first_time_here(store, decision) if decision.ok else decision
