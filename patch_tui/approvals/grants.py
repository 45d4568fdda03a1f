"""Standing grants: "allow calls like this, for a while", narrow, signed, bound to one tool file.

    grant = create(store, tool, version, source_sha256, patterns, seconds, tool_path=None)
    cosign(store, grant_id, toolbox=None)      -> Grant   a further approver signs (grant quorum)
    cosign_standing(store, grant_id, toolbox=None) -> Listed   where it stands, if cosign may sign
    cosign_refusal(store, grant_id, toolbox=None) -> str | None   why cosign would refuse now
    revoke(store, grant_id)                    -> Grant   (signed: the record says who)
    list_grants(store, ended=False)            -> list[Grant]
    listing(store, toolbox, ended=False)       -> list[Listed]   what a person is shown
    required_signers(grant, approvers)         -> int     how many its tool's calls need
    apply(store, action, workspace=None)       -> Decision | None   (approved by a grant)
    grant_problem(grant, action, approvers, now, caps, workspace) -> (code, why) | None
    patterns_match(patterns, args, workspace)  -> bool      the rule, as a pure function
    dry_run(store, tool, patterns, workspace)  -> list[(Action, bool)]   the last 50 calls
    literal_glob(text)                         -> str       a glob matching text only

A grant names a tool file (its name, path and source sha256), `KEY=GLOB` patterns and an expiry
of at most 7 days, and is signed by the approver who made it (approvals/statements.py,
`patch-tui.grant`). A later `human_confirm` hold of that tool is approved at once, by the grant,
when every one of these holds, checked when the grant is applied and again when the call is
confirmed (`grant_problem`):

- the grant row carries a good signature by a trusted approver allowed to make grants
  (`grants = true`) and allowed that tool, over a statement saying exactly this row's tool, path,
  source sha256, patterns and expiry; a row without one (inserted by SQL, made by an older
  patch-tui) is ignored, and `inbox grants` reports it;
- the call needs no more distinct approvers than the grant has such signers (a rule requiring 2
  is covered only by a grant two approvers signed: `inbox grants sign ID`);
- it is a `human_confirm` hold (a `tainted_input` hold is about where the data came from, not what
  the call does, so no standing rule may wave it through), of the granted tool file: any change
  to the file ends the grant;
- the grant is not revoked, not expired, and its signed expiry is at most 7 days after it was made;
- every pattern matches (`patterns_match`): the argument KEY is present (a missing key never
  matches, even `KEY=*`), and its value means what the glob says:
  * a string is matched by a glob where `*` and `?` never cross `/` (`**` does), `[abc]` and
    `[!abc]` are classes, and a value holding a separator the glob does not hold (a comma, a
    semicolon, a newline, a tab, a space, NUL) never matches unless the glob holds `**`
    (anything at all, written so): `to=*@example.com` matches one address, never
    `x@evil.example, y@example.com`; `text=**` matches any text;
  * a glob holding `/` is a path pattern: the value is the path the tool will see, made absolute
    against the workspace with `..`, `.`, `//` and symlinks resolved (`/x/build/../data` is
    `/x/data`, never under `/x/build/*`), and the glob is made absolute the same way;
  * a glob that spells a JSON number, boolean, null, array or object (`count=3`, `dry_run=true`,
    `tags=["a","b"]`) matches only that exact value (or a string of exactly that text); any
    other non-string value is never matched by a wildcard.
  Several patterns on one key must all match.

Grant rows live in the store (approvals/grant_rows.py); they are never deleted (revoking sets
revoked_at and keeps the revocation's signature), so an audit can say which grant approved what.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from patch_tui.approvals import identity
from patch_tui.approvals.approvers import Approvers
from patch_tui.approvals.backend import ApprovalStore
from patch_tui.approvals.grant_match import (
    _NOT_JSON,
    SEPARATORS,
    arg_text,
    glob_regex,
    json_literal,
    literal_glob,
    patterns_match,
    value_matches,
)
from patch_tui.approvals.grant_state import (
    AWAITING,
    TOOL_ENDED,
    UNTRUSTED,
    Listed,
    _statement_of,
    required_signers,
    signers,
    tool_state,
)
from patch_tui.approvals.records import Grant, Pattern, Signature
from patch_tui.approvals.statements import (
    GrantStatement,
    RevocationStatement,
)
from patch_tui.approvals.values import (
    Action,
    ActionStatus,
    Decision,
    StoreError,
    new_token,
    now_iso,
    parse_iso,
)

if TYPE_CHECKING:
    from patch_tui.approvals.keys import Signer
    from patch_tui.runtime.toolbox import Toolbox

# The matching rule lives in grant_match.py, where a grant stands in grant_state.py; callers
# reach both through this module too.
__all__ = [
    "AWAITING",
    "TOOL_ENDED",
    "UNTRUSTED",
    "_NOT_JSON",
    "SEPARATORS",
    "Grant",
    "GrantError",
    "Listed",
    "Pattern",
    "arg_text",
    "glob_regex",
    "json_literal",
    "literal_glob",
    "patterns_match",
    "required_signers",
    "signers",
    "tool_state",
    "value_matches",
]

# Longest grant: a week. A standing "always" is exactly what this feature exists to avoid.
MAX_SECONDS = 7 * 24 * 3600
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_DURATION_RE = re.compile(r"(\d+)([smhd])")
# How many recent calls `inbox allow --dry-run` looks at.
DRY_RUN_CALLS = 50


class GrantError(StoreError):
    """A grant cannot be made or found; the message is for a person."""


# -- parsing ----------------------------------------------------------------------------------


def parse_duration(text: str) -> float:
    """`30m`, `2h`, `1d`, `90s`, or a sum like `1h30m` -> seconds. ValueError says why not."""
    compact = text.strip().lower()
    if not compact or _DURATION_RE.sub("", compact):
        raise ValueError(
            f"{text!r} is not a duration; use a number and a unit: 30m, 2h, 1d (s, m, h, d)"
        )
    seconds = sum(int(n) * _UNITS[u] for n, u in _DURATION_RE.findall(compact))
    if seconds <= 0:
        raise ValueError("the duration must be longer than 0")
    if seconds > MAX_SECONDS:
        raise ValueError("a grant lasts at most 7d; make a new one when it ends")
    return float(seconds)


def parse_pattern(text: str) -> Pattern:
    """`KEY=GLOB` (the first `=` splits, so the glob may hold `=`)."""
    key, sep, glob = text.partition("=")
    if not sep or not key.strip():
        raise ValueError(f"--where {text!r}: expected KEY=GLOB, like path=/tmp/*")
    return Pattern(key.strip(), glob)


# -- the rule ---------------------------------------------------------------------------------


def grant_problem(
    grant: Grant,
    action: Action,
    approvers: Approvers,
    now: str,
    caps: dict[str, Any] | None = None,
    workspace: str | os.PathLike[str] | None = None,
) -> tuple[str, str] | None:
    """Why this grant does not approve this call now (code, why), else None (see the module)."""
    good, problems = signers(grant, approvers)
    if not good:
        return "tampered", f"grant {grant.id}: {problems[0] if problems else 'not signed'}"
    try:
        lifetime = parse_iso(grant.expires_at) - parse_iso(grant.created_at)
    except ValueError:
        return "tampered", f"grant {grant.id}: its times cannot be read"
    if lifetime > MAX_SECONDS:
        return "not_allowed", f"grant {grant.id} lasts longer than 7 days"
    if grant.state(now) != "active":
        return "not_allowed", f"grant {grant.id} is {grant.state(now)}"
    if (
        action.kind != "human_confirm"
        or action.tool != grant.tool
        or action.source_sha256 != grant.source_sha256
        or (grant.tool_path is not None and action.tool_path != grant.tool_path)
    ):
        return "tampered", f"grant {grant.id} is for another tool file or kind of hold"
    if not patterns_match(grant.patterns, action.args, workspace):
        return "tampered", f"grant {grant.id}'s patterns do not match these args"
    needed = approvers.required(action.tool, action.tool_path, caps)
    if len(good) < needed:
        return (
            "awaiting_approval",
            f"grant {grant.id} is signed by {len(good)} approver(s) allowed to grant "
            f"({', '.join(good)}); calls of {action.tool} need {needed}",
        )
    return None


def matches(
    grant: Grant,
    kind: str,
    tool: str,
    source_sha256: str,
    args: dict[str, Any],
    now: str,
    workspace: str | os.PathLike[str] | None = None,
) -> bool:
    """The grant's terms alone (no signatures): what `inbox allow --dry-run` shows."""
    return (
        kind == "human_confirm"
        and grant.state(now) == "active"
        and grant.tool == tool
        and grant.source_sha256 == source_sha256
        and patterns_match(grant.patterns, args, workspace)
    )


# -- making, signing, ending --------------------------------------------------------------------


def _signer_and_name(
    signer: Signer | None, approvers: Approvers | None
) -> tuple[Signer, Approvers, str]:
    try:
        signer = signer or identity.signer_here()
        approvers = approvers or identity.trusted()
        approver = identity.local_identity(approvers, signer)
    except identity.DecisionRefused as exc:
        raise GrantError(str(exc)) from None
    return signer, approvers, approver.name


def _sign(signer: Signer, statement: GrantStatement | RevocationStatement) -> str:
    from patch_tui.approvals.keys import KeyProblem
    from patch_tui.approvals.signing import sign_statement

    try:
        return sign_statement(statement.canonical(), signer).to_text()
    except KeyProblem as exc:
        raise GrantError(str(exc)) from None


def create(
    store: ApprovalStore,
    tool: str,
    version: str,
    source_sha256: str,
    patterns: list[Pattern],
    seconds: float,
    *,
    tool_path: str | None = None,
    signer: Signer | None = None,
    approvers: Approvers | None = None,
) -> Grant:
    """A grant signed by the local approver, who must be allowed to make grants for this tool."""
    if not 0 < seconds <= MAX_SECONDS:
        raise GrantError("a grant lasts at most 7d; make a new one when it ends")
    signer, approvers, name = _signer_and_name(signer, approvers)
    approver = approvers.find(name)
    assert approver is not None
    if not approver.grants:
        raise GrantError(f"{name} may not make standing grants (approvers file: grants = true)")
    if not approver.may_approve(tool, tool_path):
        raise GrantError(f"{name} may not approve {tool} (approvers file)")
    now = identity.store_now(store)
    draft = Grant(
        id=0,
        tool=tool,
        version=version,
        source_sha256=source_sha256,
        patterns=tuple(patterns),
        created_at=now_iso(now),
        created_by=name,
        expires_at=now_iso(now + seconds),
        grant_id=new_token(),
        tool_path=tool_path,
    )
    envelope = _sign(signer, _statement_of(draft, name, signer.fingerprint))
    return store.add_grant(
        replace(draft, signatures=(Signature(name, "grant", draft.created_at, envelope),))
    )


def cosign(
    store: ApprovalStore,
    grant_id: int,
    *,
    toolbox: Toolbox | None = None,
    signer: Signer | None = None,
    approvers: Approvers | None = None,
) -> Grant:
    """A further approver's signature on a grant, for calls whose rule requires more than one.
    Refused (GrantError, one line) as `cosign_refusal` says; the store refuses once more a grant
    revoked or expired meanwhile."""
    listed, signer, name = _cosign_check(store, grant_id, toolbox, signer, approvers)
    grant = listed.grant
    envelope = _sign(signer, _statement_of(grant, name, signer.fingerprint))
    try:
        return store.add_grant_signature(
            grant_id, Signature(name, "grant", now_iso(identity.store_now(store)), envelope)
        )
    except StoreError as exc:  # revoked or expired meanwhile: the store says which
        raise GrantError(str(exc)) from None


def cosign_standing(
    store: ApprovalStore,
    grant_id: int,
    *,
    toolbox: Toolbox | None = None,
    signer: Signer | None = None,
    approvers: Approvers | None = None,
) -> Listed:
    """Where the grant stands (who signed, how many more it needs), when `cosign` may sign it
    now; GrantError (one line) as cosign refuses otherwise. Asked before a person is asked to
    confirm a signature, so a refusal never follows a dialog it made pointless."""
    return _cosign_check(store, grant_id, toolbox, signer, approvers)[0]


def cosign_refusal(
    store: ApprovalStore,
    grant_id: int,
    *,
    toolbox: Toolbox | None = None,
    signer: Signer | None = None,
    approvers: Approvers | None = None,
) -> str | None:
    """Why `cosign` would refuse now (one line), or None."""
    try:
        cosign_standing(store, grant_id, toolbox=toolbox, signer=signer, approvers=approvers)
    except GrantError as exc:
        return str(exc)
    return None


def _cosign_check(
    store: ApprovalStore,
    grant_id: int,
    toolbox: Toolbox | None,
    signer: Signer | None,
    approvers: Approvers | None,
) -> tuple[Listed, Signer, str]:
    """(the grant as it stands, the local signer, their approver name) when the local approver
    may sign it;
    GrantError otherwise: no such grant, one its maker never signed, no key or not an approver,
    not allowed to grant (or this tool), signed it already, or the grant ended (revoked, expired,
    its tool file changed or gone, its signatures do not hold)."""
    grant = store.get_grant(grant_id)
    if grant is None:
        raise GrantError(f"no grant {grant_id} (see `patch-tui inbox grants`)")
    if grant.grant_id is None:
        raise GrantError(f"grant {grant_id} is not signed by its maker; it never applies")
    signer, approvers, name = _signer_and_name(signer, approvers)
    approver = approvers.find(name)
    assert approver is not None
    if not approver.grants:
        raise GrantError(f"{name} may not make standing grants (approvers file: grants = true)")
    if not approver.may_approve(grant.tool, grant.tool_path):
        raise GrantError(f"{name} may not approve {grant.tool} (approvers file)")
    listed = tool_state(store, grant, toolbox, approvers)
    if listed.ended is not None:
        raise GrantError(_why_ended(listed))  # callers say which grant: "grant 3 not signed: ..."
    if name in listed.signed:
        raise GrantError(f"{name} already signed grant {grant_id}")
    return listed, signer, name


def _why_ended(listed: Listed) -> str:
    grant = listed.grant
    if listed.state == "revoked":
        return f"it was revoked by {grant.revoked_by or 'someone'} at {grant.revoked_at}"
    if listed.state == "expired":
        return f"it expired at {grant.expires_at}"
    return listed.status


def revoke(
    store: ApprovalStore,
    grant_id: int,
    *,
    signer: Signer | None = None,
    approvers: Approvers | None = None,
) -> Grant:
    """Ends a grant now, signed by the approver who ended it. Any trusted approver may end any
    grant: ending one takes authority away."""
    grant = store.get_grant(grant_id)
    if grant is None:
        raise GrantError(f"no grant {grant_id} (see `patch-tui inbox grants`)")
    signer, approvers, name = _signer_and_name(signer, approvers)
    at = now_iso(identity.store_now(store))
    statement = RevocationStatement(
        grant.grant_id or f"row:{grant.id}", name, signer.fingerprint, at
    )
    try:
        return store.revoke_grant(grant_id, Signature(name, "revoke", at, _sign(signer, statement)))
    except StoreError as exc:
        raise GrantError(str(exc)) from None


def get(store: ApprovalStore, grant_id: int) -> Grant | None:
    return store.get_grant(grant_id)


def list_grants(store: ApprovalStore, *, ended: bool = False) -> list[Grant]:
    """Grants standing in the store, newest first; `ended=True` adds expired and revoked ones."""
    return store.list_grants(ended=ended)


def apply(
    store: ApprovalStore,
    action: Action,
    workspace: str | os.PathLike[str] | None = None,
    approvers: Approvers | None = None,
) -> Decision | None:
    """Approve a pending action by the oldest standing grant that holds for it; None when none
    does. The grant is checked again inside the approval's transaction, and once more when the
    call is confirmed."""
    if action.kind != "human_confirm" or action.status != ActionStatus.PENDING:
        return None
    approvers = approvers or identity.trusted()
    caps = identity.tool_capabilities(action, approvers)
    now = now_iso(identity.store_now(store))
    for grant in reversed(store.list_grants(tool=action.tool)):
        if grant_problem(grant, action, approvers, now, caps, workspace) is not None:
            continue

        def check(current: Action, fresh: Grant) -> bool:
            at = now_iso(identity.store_now(store))
            return grant_problem(fresh, current, approvers, at, caps, workspace) is None

        decision = store.approve_by_grant(action.token, grant.id, check)
        if decision.ok:
            return decision
        if decision.code != "grant_inapplicable":
            return None  # decided meanwhile by a person, or expired: nothing for a grant to do
    return None


def dry_run(
    store: ApprovalStore,
    tool: str,
    source_sha256: str,
    patterns: list[Pattern],
    workspace: str | os.PathLike[str] | None = None,
) -> list[tuple[Action, bool]]:
    """The last 50 calls of `tool`, newest first, each with whether a grant with these
    patterns (on this tool file) would have approved it."""
    out = []
    for action in store.list_actions(statuses=None, tool=tool, limit=DRY_RUN_CALLS):
        would = (
            action.kind == "human_confirm"
            and action.source_sha256 == source_sha256
            and patterns_match(patterns, action.args, workspace)
        )
        out.append((action, would))
    return out


def describe_patterns(grant: Grant) -> str:
    return " ".join(str(p) for p in grant.patterns) or "(every call)"


# -- what a person is shown -------------------------------------------------------------------


def listing(store: ApprovalStore, toolbox: Toolbox | None, *, ended: bool = False) -> list[Listed]:
    """`list_grants`, each with its state counting the tool file. Without `ended`: the grants
    standing in the store, those whose tool ended included (shown ended, never hidden)."""
    approvers = identity.trusted()
    return [tool_state(store, g, toolbox, approvers) for g in list_grants(store, ended=ended)]
