"""The records a store backend keeps for signed approvals: signatures and standing grants.

Plain data, no crypto: a backend stores and returns them; `approvals/decisions.py` is the one
place that reads the envelopes inside and decides what they are worth."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

# approve / reject: a person's decision on a held call; grant: a signature on a standing grant
# (its maker's, or a further approver's for a grant quorum); revoke: a grant's end.
SignatureKind = Literal["approve", "reject", "grant", "revoke"]


@dataclass(frozen=True)
class Signature:
    """One approver's signed statement, as a store keeps it.

    `approver` and `decision` are copies of what the statement says, kept so a backend can
    enforce "one signature per approver per action" and list without parsing; they are never
    trusted: verification reads the statement inside `envelope` (an `Envelope`'s text)."""

    approver: str
    decision: SignatureKind
    at: str
    envelope: str
    note: str | None = None


@dataclass(frozen=True)
class Pattern:
    key: str
    glob: str

    def __str__(self) -> str:
        return f"{self.key}={self.glob}"


@dataclass(frozen=True)
class Grant:
    """A standing grant row. `id` is the row's number (what a person types: `inbox revoke 3`);
    `grant_id` is the random id its signed statements name. Signatures: its maker's first."""

    id: int
    tool: str
    version: str
    source_sha256: str
    patterns: tuple[Pattern, ...]
    created_at: str
    created_by: str
    expires_at: str
    revoked_at: str | None = None
    revoked_by: str | None = None
    uses: int = 0
    last_used_at: str | None = None
    grant_id: str | None = None  # None: a row made before grants were signed (never applies)
    tool_path: str | None = None
    signatures: tuple[Signature, ...] = ()
    revocation: Signature | None = None

    def state(self, now: str) -> str:
        """active, expired or revoked (revoked wins: it is what a person did)."""
        if self.revoked_at is not None:
            return "revoked"
        return "active" if self.expires_at > now else "expired"

    def to_json(self, now: str) -> dict[str, Any]:
        return {
            "id": self.id,
            "grant_id": self.grant_id,
            "tool": self.tool,
            "version": self.version,
            "source_sha256": self.source_sha256,
            "tool_path": self.tool_path,
            "patterns": [{"key": p.key, "glob": p.glob} for p in self.patterns],
            "created_at": self.created_at,
            "created_by": self.created_by,
            "expires_at": self.expires_at,
            "revoked_at": self.revoked_at,
            "revoked_by": self.revoked_by,
            "uses": self.uses,
            "last_used_at": self.last_used_at,
            "signed_by": [s.approver for s in self.signatures],
            "state": self.state(now),
        }
