"""What an approver signs (a statement) and what the store keeps (an envelope).

    DecisionStatement(...).canonical()    -> bytes   the exact bytes a signature covers
    GrantStatement(...), RevocationStatement(...)    the same for a standing grant and its end
    parse_statement(text)                 -> Statement   StatementError says why not
    Envelope(scheme, statement, signature, signer).to_text() / Envelope.from_text(text)

A statement is canonical JSON (sorted keys, no spaces, UTF-8 kept: `values.canonical_json`, the
form whose sha256 an approval binds), so the same decision is always the same bytes, and any
other program can rebuild and check it. It says exactly what was decided, and by whom: a
signature over it approves that call (token, tool file bytes, args) and nothing else.

An envelope is the statement's text, the signature over its UTF-8 bytes and the scheme that made
it: `sshsig` (OpenSSH's SSHSIG, armored, namespace `patch-tui-approval`: a key file or ssh-agent,
FIDO security keys included) or `webauthn` (a passkey assertion whose challenge is
sha256(statement bytes); approvals/passkeys.py). `signer` is a hint only (the public key line or
the credential id): verification never trusts it, it looks the statement's approver up in the
trusted approvers and verifies with the key listed there (approvals/signing.py).

See docs/architecture.md, "Signed approvals: the statement, the envelope, the store interface".
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar, Literal

from patch_tui.approvals.values import canonical_json

STATEMENT_VERSION = 1
# The SSHSIG namespace: a signature made for git commits or file signing never verifies here.
NAMESPACE = "patch-tui-approval"
DECISION_TYPE = "patch-tui.decision"
GRANT_TYPE = "patch-tui.grant"
REVOCATION_TYPE = "patch-tui.revocation"
SCHEMES = ("sshsig", "webauthn")
# A statement or envelope longer than this is refused unread (a statement is well under 2 KiB).
MAX_TEXT = 64 * 1024

DecisionVerb = Literal["approve", "reject"]


class StatementError(ValueError):
    """A statement or envelope that cannot be read; the message is for a person."""


def canonical_bytes(value: dict[str, Any]) -> bytes:
    return canonical_json(value).encode("utf-8")


@dataclass(frozen=True)
class DecisionStatement:
    """A person's decision on one held call, bound to exactly what would run."""

    TYPE: ClassVar[str] = DECISION_TYPE

    token: str
    kind: str
    tool: str
    tool_path: str | None
    tool_version: str
    source_sha256: str
    # sha256 of the canonical JSON of the args approved: the edited args when a person edited.
    args_sha256: str
    # Until when this approval may be used to run the call (a reject: when it was made).
    expires_at: str
    # guard: the upstream server's token for this call (None for serve's own calls).
    upstream_token: str | None
    decision: DecisionVerb
    # The approver's note (approve) or reason (reject); None when they gave none.
    note: str | None
    approver: str
    # The signing key's SHA256 fingerprint as OpenSSH prints it ("SHA256:..."), or for a
    # passkey its credential id: which of the approver's keys to verify with.
    key: str
    at: str

    def to_json(self) -> dict[str, Any]:
        return {"v": STATEMENT_VERSION, "type": self.TYPE, **asdict(self)}

    def canonical(self) -> bytes:
        return canonical_bytes(self.to_json())


@dataclass(frozen=True)
class GrantStatement:
    """A standing grant: calls of this tool file whose args match these patterns, until then."""

    TYPE: ClassVar[str] = GRANT_TYPE

    # A random id (values.new_token()) chosen before signing, so the signature names one grant.
    grant_id: str
    tool: str
    tool_path: str | None
    source_sha256: str
    # [[key, glob], ...] in the order given (approvals/grants.py says what they match).
    patterns: list[list[str]] = field(default_factory=list)
    expires_at: str = ""
    created_at: str = ""
    approver: str = ""
    key: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"v": STATEMENT_VERSION, "type": self.TYPE, **asdict(self)}

    def canonical(self) -> bytes:
        return canonical_bytes(self.to_json())


@dataclass(frozen=True)
class RevocationStatement:
    """The end of a grant, before its expiry. Any approver may end any grant: revoking takes
    authority away, so it needs none (it is signed so the record says who)."""

    TYPE: ClassVar[str] = REVOCATION_TYPE

    grant_id: str
    approver: str
    key: str
    at: str

    def to_json(self) -> dict[str, Any]:
        return {"v": STATEMENT_VERSION, "type": self.TYPE, **asdict(self)}

    def canonical(self) -> bytes:
        return canonical_bytes(self.to_json())


Statement = DecisionStatement | GrantStatement | RevocationStatement
_TYPES: dict[str, type[DecisionStatement] | type[GrantStatement] | type[RevocationStatement]] = {
    DECISION_TYPE: DecisionStatement,
    GRANT_TYPE: GrantStatement,
    REVOCATION_TYPE: RevocationStatement,
}


def parse_statement(text: str) -> Statement:
    """The statement in `text`, which must be its canonical form exactly (so the bytes verified
    are the bytes read, and no two texts mean one statement)."""
    if len(text) > MAX_TEXT:
        raise StatementError("the signed statement is too long")
    try:
        data = json.loads(text)
    except ValueError:
        raise StatementError("the signed statement is not JSON") from None
    if not isinstance(data, dict):
        raise StatementError("the signed statement is not a JSON object")
    if data.get("v") != STATEMENT_VERSION:
        raise StatementError(f"the signed statement has version {data.get('v')!r}, not 1")
    cls = _TYPES.get(str(data.get("type")))
    if cls is None:
        raise StatementError(f"the signed statement's type {data.get('type')!r} is unknown")
    fields = {k: v for k, v in data.items() if k not in ("v", "type")}
    try:
        statement = cls(**fields)
    except TypeError:
        raise StatementError(f"the signed {cls.TYPE} statement has the wrong fields") from None
    if canonical_json(data) != text:
        raise StatementError("the signed statement is not in canonical form")
    if isinstance(statement, DecisionStatement) and statement.decision not in (
        "approve",
        "reject",
    ):
        raise StatementError(f"the decision {statement.decision!r} is neither approve nor reject")
    return statement


@dataclass(frozen=True)
class Envelope:
    """A signed statement as the store keeps it (JSON text in a signatures row).

    `signature`: for `sshsig`, the armored SSHSIG text; for `webauthn`, a dict of base64url
    strings {credential_id, authenticator_data, client_data_json, signature}."""

    scheme: str
    statement: str
    signature: str | dict[str, str]
    signer: str | None = None

    def to_text(self) -> str:
        return canonical_json(asdict(self))

    @classmethod
    def from_text(cls, text: str) -> Envelope:
        if len(text) > MAX_TEXT:
            raise StatementError("the signature record is too long")
        try:
            data = json.loads(text)
        except ValueError:
            raise StatementError("the signature record is not JSON") from None
        if not isinstance(data, dict):
            raise StatementError("the signature record is not a JSON object")
        scheme, statement = data.get("scheme"), data.get("statement")
        signature, signer = data.get("signature"), data.get("signer")
        if scheme not in SCHEMES:
            raise StatementError(f"the signature scheme {scheme!r} is unknown")
        if not isinstance(statement, str):
            raise StatementError("the signature record holds no statement")
        if not isinstance(signature, str | dict):
            raise StatementError("the signature record holds no signature")
        if isinstance(signature, dict) and not all(
            isinstance(k, str) and isinstance(v, str) for k, v in signature.items()
        ):
            raise StatementError("the passkey signature's fields must be text")
        if signer is not None and not isinstance(signer, str):
            raise StatementError("the signature record's signer must be text")
        return cls(scheme, statement, signature, signer)
