"""A one-time link that lets an approver register a passkey in the web inbox: proof, made with the
approver key the trusted approvers already list for them, that this person is that approver.

    link = make_link(approver, signer, base_url)                 (the terminal: `keys enroll-web`)
    claim = verify_link_token(token, approvers)                  (the web app) -> EnrollClaim

The token is an enrollment statement {"v":1, "type":"patch-tui.enroll", "approver", "key",
"nonce", "origin", "expires_at"} (canonical JSON) signed like a decision, by the same key and
scheme (an SSHSIG by the person's Ed25519 key file or ssh-agent key: approvals/keys.py), and
checked against that approver's key in the trusted approvers (approvals/approvers.py). Its type
is not a decision's, so it can never count as an approval (statements.parse_statement refuses
it). It lives in the link's fragment (`/enroll#...`), which browsers never send to a server or
write to its logs. It is short-lived (ENROLL_TTL) and used once.

Why a link and not a password: whoever holds the link within its life can register a passkey as
that approver, so it is printed only on the approver's own terminal and dies when used.
"""

from __future__ import annotations

import base64
import json
import secrets
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from patch_tui.approvals.statements import NAMESPACE
from patch_tui.approvals.values import canonical_json, now_iso, parse_iso

if TYPE_CHECKING:
    from patch_tui.approvals.approvers import Approvers
    from patch_tui.approvals.keys import Signer

ENROLL_TYPE = "patch-tui.enroll"
ENROLL_TTL = 600.0
MAX_TOKEN = 16 * 1024


class EnrollError(Exception):
    """The link cannot be made or does not hold; the message is for a person."""


@dataclass(frozen=True)
class EnrollClaim:
    approver: str
    nonce: str
    origin: str
    expires_at: str


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def make_link(
    approver: str,
    signer: Signer,
    approvers: Approvers,
    base_url: str,
    *,
    now: float | None = None,
) -> str:
    """Signs an enrollment statement with `signer`, after checking that the trusted approvers
    list its key for `approver` (a link the web app would refuse is never printed)."""
    entry = approvers.find(approver)
    if entry is None:
        where = approvers.problem or f"the trusted approvers ({approvers.source}) list no"
        raise EnrollError(f"{where} approver named {approver!r}")
    if signer.fingerprint not in entry.ssh_keys:
        raise EnrollError(
            f"your approver key ({signer.fingerprint}) is not one of {approver}'s keys in the "
            "trusted approvers: run this where that key is (approver_key, ssh-agent)"
        )
    origin = base_url.rstrip("/")
    at = time.time() if now is None else now
    statement = canonical_json(
        {
            "v": 1,
            "type": ENROLL_TYPE,
            "approver": approver,
            "key": signer.fingerprint,
            "nonce": secrets.token_urlsafe(18),
            "origin": origin,
            "expires_at": now_iso(at + ENROLL_TTL),
        }
    )
    signature = signer.sign(statement.encode("utf-8"))
    token = _b64(canonical_json({"statement": statement, "sshsig": signature}).encode("utf-8"))
    return f"{origin}/enroll#{token}"


def verify_link_token(token: str, approvers: Approvers, *, now: float | None = None) -> EnrollClaim:
    """The claim in a link's token, once its signature verified against the approver's key in
    the trusted approvers and its life is not over. Raises EnrollError otherwise."""
    from patch_tui.approvals import sshsig

    if not token or len(token) > MAX_TOKEN:
        raise EnrollError("the enrollment link is empty or too long")
    try:
        outer = json.loads(_unb64(token))
        statement_text = outer["statement"]
        signature = outer["sshsig"]
        statement = json.loads(statement_text)
    except (ValueError, KeyError, TypeError):
        raise EnrollError(
            "the enrollment link is damaged: copy it again from the terminal"
        ) from None
    if not isinstance(statement, dict) or statement.get("type") != ENROLL_TYPE:
        raise EnrollError("this is not a patch-tui enrollment link")
    if canonical_json(statement) != statement_text or not isinstance(signature, str):
        raise EnrollError("the enrollment statement is not in canonical form")
    name, key = statement.get("approver"), statement.get("key")
    entry = approvers.find(name) if isinstance(name, str) else None
    if entry is None or not isinstance(name, str):
        raise EnrollError(f"{name!r} is not a trusted approver")
    blob = entry.ssh_keys.get(str(key))
    if blob is None:
        raise EnrollError(f"the link was signed by a key that is not one of {name}'s")
    bad = sshsig.verify(signature, statement_text.encode("utf-8"), NAMESPACE, blob)
    if bad is not None:
        raise EnrollError(f"the enrollment link's signature does not hold: {bad}")
    try:
        expires = parse_iso(str(statement.get("expires_at")))
    except ValueError:
        raise EnrollError("the enrollment link has no valid expiry") from None
    if (time.time() if now is None else now) >= expires:
        raise EnrollError("the enrollment link expired: run `patch-tui keys enroll-web` again")
    return EnrollClaim(
        approver=name,
        nonce=str(statement.get("nonce")),
        origin=str(statement.get("origin")),
        expires_at=str(statement["expires_at"]),
    )
