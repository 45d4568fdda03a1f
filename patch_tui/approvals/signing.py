"""Making and checking envelopes: the one seam between signature schemes and the decisions.

    sign_statement(statement_bytes, signer)    -> Envelope       (scheme sshsig)
    verify_envelope(envelope, approver, key)   -> str | None     None: good; else why not
    register_verifier(scheme, verifier)        the web inbox registers "webauthn" here

A verifier gets the envelope and the approver the trusted approvers list under the statement's
`approver` name, plus the statement's `key` (which of the approver's keys signed), and checks the
signature over the statement's bytes with the key listed there, never with the envelope's
`signer` hint. `sshsig` is built in; `webauthn` is approvals/passkeys.py's (imported on the first
passkey envelope, so the `webauthn` library loads only where one is checked). An unknown scheme
never verifies.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from patch_tui.approvals import sshsig
from patch_tui.approvals.approvers import Approver
from patch_tui.approvals.keys import Signer
from patch_tui.approvals.statements import NAMESPACE, Envelope

# (envelope, approver, key id from the statement) -> None when good, else why not.
Verifier = Callable[[Envelope, Approver, str], str | None]

VERIFIERS: dict[str, Verifier] = {}
# Schemes whose verifier lives in a module loaded on first use.
_LAZY = {"webauthn": "patch_tui.approvals.passkeys"}


def register_verifier(scheme: str, verifier: Verifier) -> None:
    VERIFIERS[scheme] = verifier


def _verify_sshsig(envelope: Envelope, approver: Approver, key: str) -> str | None:
    blob = approver.ssh_keys.get(key)
    if blob is None:
        return f"{key} is not one of {approver.name}'s keys in the trusted approvers"
    if not isinstance(envelope.signature, str):
        return "the SSH signature is missing"
    return sshsig.verify(envelope.signature, envelope.statement.encode("utf-8"), NAMESPACE, blob)


register_verifier("sshsig", _verify_sshsig)


def verify_envelope(envelope: Envelope, approver: Approver, key: str) -> str | None:
    verifier = VERIFIERS.get(envelope.scheme)
    if verifier is None and envelope.scheme in _LAZY:
        try:
            importlib.import_module(_LAZY[envelope.scheme])
        except ImportError as exc:
            return f"{envelope.scheme} signatures cannot be checked here ({exc})"
        verifier = VERIFIERS.get(envelope.scheme)
    if verifier is None:
        return f"the signature scheme {envelope.scheme!r} is unknown"
    return verifier(envelope, approver, key)


def sign_statement(statement: bytes, signer: Signer) -> Envelope:
    text = statement.decode("utf-8")
    return Envelope("sshsig", text, signer.sign(statement), signer.public_line)
