"""Where a standing grant stands: who signed it and whether that holds (`signers`), how many
approvers its tool's calls need (`required_signers`), and what a person is shown (`Listed`,
`tool_state`): active, awaiting signatures, untrusted, or ended by its tool file, which the
store's own state does not count. approvals/grants.py makes, signs, applies and lists grants on
these; the TUI's grants view and `inbox grants` show them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from patch_tui.approvals import identity
from patch_tui.approvals.approvers import Approvers
from patch_tui.approvals.backend import ApprovalStore
from patch_tui.approvals.records import Grant
from patch_tui.approvals.statements import (
    Envelope,
    GrantStatement,
    StatementError,
    parse_statement,
)
from patch_tui.approvals.values import now_iso

if TYPE_CHECKING:
    from patch_tui.runtime.toolbox import Toolbox


def _statement_of(grant: Grant, approver: str, key: str) -> GrantStatement:
    assert grant.grant_id is not None
    return GrantStatement(
        grant_id=grant.grant_id,
        tool=grant.tool,
        tool_path=grant.tool_path,
        source_sha256=grant.source_sha256,
        patterns=[[p.key, p.glob] for p in grant.patterns],
        expires_at=grant.expires_at,
        created_at=grant.created_at,
        approver=approver,
        key=key,
    )


def signers(grant: Grant, approvers: Approvers) -> tuple[tuple[str, ...], list[str]]:
    """The distinct trusted approvers whose signatures on this grant hold (allowed to grant, and
    allowed its tool), and why each other signature does not."""
    from patch_tui.approvals.signing import verify_envelope

    good: list[str] = []
    problems: list[str] = []
    if grant.grant_id is None or not grant.signatures:
        return (), ["it is not signed (inserted by hand, or made by an older patch-tui)"]
    for sig in grant.signatures:
        try:
            envelope = Envelope.from_text(sig.envelope)
            statement = parse_statement(envelope.statement)
        except StatementError as exc:
            problems.append(f"a signature cannot be read: {exc}")
            continue
        if not isinstance(statement, GrantStatement) or statement.approver != sig.approver:
            problems.append("a signature row was altered")
            continue
        if statement != _statement_of(grant, statement.approver, statement.key):
            problems.append(f"{statement.approver}'s signature is for another grant or terms")
            continue
        approver = approvers.find(statement.approver)
        if approver is None:
            problems.append(
                approvers.problem or f"{statement.approver!r} is not a trusted approver"
            )
            continue
        bad = verify_envelope(envelope, approver, statement.key)
        if bad is not None:
            problems.append(f"{approver.name}'s signature: {bad}")
        elif not approver.grants:
            problems.append(f"{approver.name} may not make grants (approvers file)")
        elif not approver.may_approve(grant.tool, grant.tool_path):
            problems.append(f"{approver.name} may not approve {grant.tool} (approvers file)")
        elif approver.name not in good:
            good.append(approver.name)
    return tuple(good), problems


def required_signers(grant: Grant, approvers: Approvers) -> int:
    """How many distinct approvers the rules require for calls of the grant's tool file: the
    signers the grant needs before it approves any (`grant_problem` asks the same of a call)."""
    caps = identity.file_capabilities(grant.tool_path, grant.source_sha256, approvers)
    return approvers.required(grant.tool, grant.tool_path, caps)


# -- what a person is shown -------------------------------------------------------------------

# Why a grant the store still holds can no longer approve: its tool file is not the granted one.
TOOL_ENDED = {
    "tool_changed": "the tool changed since it was granted",
    "tool_gone": "the tool file is gone",
}
# A grant row whose signatures do not hold: it never approves, and is listed so (reported).
UNTRUSTED = "untrusted"
# A standing grant signed by fewer approvers than its tool's calls need: not active yet.
AWAITING = "awaiting"
# How many of the paths its calls came from are looked at (newest first): a tool seldom moves.
_CALL_PATHS = 5
# How many of the tool's recent calls are looked at for those paths.
_RECENT_CALLS = 50


@dataclass(frozen=True)
class Listed:
    """A grant as listed: its state counts the tool file and the signers, which the store's
    state does not."""

    grant: Grant
    # active, expired, revoked (the store's), tool_changed, tool_gone (the file's), untrusted
    # (no good signature by an approver allowed to grant: never applies), or awaiting (standing,
    # but signed by fewer approvers than its tool's calls need: applies once they have signed).
    state: str
    # The tool file compared with the grant; None when no file was found to compare.
    tool_file: str | None = None
    # untrusted: why its signatures do not hold.
    why: str | None = None
    # The approvers whose signatures on it hold, and how many its tool's calls need.
    signed: tuple[str, ...] = ()
    needed: int = 1

    @property
    def ended(self) -> str | None:
        """None while the grant stands (active, or awaiting signatures); else why it cannot
        approve (the state)."""
        return None if self.state in ("active", AWAITING) else self.state

    @property
    def awaiting(self) -> int:
        """How many more approvers must sign before it approves anything (0 when none)."""
        return max(0, self.needed - len(self.signed)) if self.state == AWAITING else 0

    @property
    def status(self) -> str:
        """One line: active, expired, revoked, `ended: <why>` for a changed or gone tool,
        `ignored: <why>`, or `not active yet: ...` for a grant awaiting signatures."""
        if self.state == UNTRUSTED:
            return f"ignored: {self.why}"
        if self.state == AWAITING:
            more = self.awaiting
            return (
                f"not active yet: needs {more} more signature{'s' if more != 1 else ''} "
                f"({len(self.signed)} of {self.needed})"
            )
        why = TOOL_ENDED.get(self.state)
        return f"ended: {why}" if why else self.state

    @property
    def unchecked(self) -> bool:
        """Standing, but no tool file was found to compare it with (see the module)."""
        return self.state in ("active", AWAITING) and self.tool_file is None

    @property
    def revocable(self) -> bool:
        """Standing in the store: an active grant, one awaiting signatures, or one its tool ended
        (which the granted bytes put back would revive)."""
        return self.state in ("active", AWAITING, UNTRUSTED, *TOOL_ENDED)

    def to_json(self, now: str) -> dict[str, Any]:
        return {
            **self.grant.to_json(now),
            "state": self.state,
            "ended": self.ended,
            "tool_file": self.tool_file,
            "why": self.why,
            "needs": self.needed,  # approvers its tool's calls need
            "awaiting": self.awaiting,
        }


def _sha256_of(path: Path) -> str | None:
    """The file's sha256 as grants bind it (toolfile's), or None when there is no such file."""
    from patch_tui.format import toolfile

    try:
        if not path.is_file():
            return None
        return toolfile.read(str(path)).sha256
    except (OSError, ValueError):
        return None


def _candidates(store: ApprovalStore, grant: Grant, toolbox: Toolbox | None) -> list[Path]:
    paths: list[Path] = [] if grant.tool_path is None else [Path(grant.tool_path)]
    for action in store.list_actions(statuses=None, tool=grant.tool, limit=_RECENT_CALLS):
        if len(paths) >= _CALL_PATHS:
            break
        if action.source_sha256 == grant.source_sha256 and action.tool_path:
            path = Path(action.tool_path)
            if path not in paths:
                paths.append(path)
    if toolbox is not None:
        from patch_tui.runtime.toolbox import ToolboxError

        try:
            found = toolbox.find(grant.tool)
        except (ToolboxError, OSError):
            found = None
        if found is not None and found not in paths:
            paths.append(found)
    return paths


def tool_state(
    store: ApprovalStore,
    grant: Grant,
    toolbox: Toolbox | None,
    approvers: Approvers | None = None,
) -> Listed:
    """`grant` listed against its tool file and its signers (see the module): active while a
    file it names holds the granted bytes (or, unchecked, while no file can be found at all) and
    enough approvers signed it; awaiting while fewer did."""
    now = now_iso(identity.store_now(store))
    state = grant.state(now)
    if state != "active":
        return Listed(grant, state)  # revoked or expired says more than the file can
    approvers = approvers or identity.trusted()
    good, problems = signers(grant, approvers)
    if not good:
        return Listed(grant, UNTRUSTED, why=problems[0] if problems else "not signed")
    file_state, tool_file = _file_state(store, grant, toolbox)
    needed = required_signers(grant, approvers)
    if file_state == "active" and len(good) < needed:
        file_state = AWAITING
    return Listed(grant, file_state, tool_file, signed=good, needed=needed)


def _file_state(
    store: ApprovalStore, grant: Grant, toolbox: Toolbox | None
) -> tuple[str, str | None]:
    """(active, tool_changed or tool_gone; the file compared, or None when none was found)."""
    paths = _candidates(store, grant, toolbox)
    seen: Path | None = None
    for path in paths:
        sha = _sha256_of(path)
        if sha == grant.source_sha256:
            return "active", str(path)
        if sha is not None and seen is None:
            seen = path
    if not paths:
        return "active", None
    if seen is not None:
        return "tool_changed", str(seen)
    return "tool_gone", str(paths[0])
