"""Passkeys: an approver's WebAuthn credential, registered once, and the assertion that signs
each of their decisions.

    Passkey(approver, credential_id, public_key, rp_id, origin)   one registered credential
    statement_challenge(statement)        -> bytes   sha256 of the statement's bytes
    registration_options(...)             -> dict    what navigator.credentials.create() takes
    verify_registration(...)              -> Passkey the new credential, checked
    assertion_options(...)                -> dict    what navigator.credentials.get() takes
    signature_fields(credential)          -> dict    the envelope's `signature` from a browser's
                                                     assertion (base64url strings)
    verify_assertion(statement, signature, passkey)  raises PasskeyError unless the passkey
                                                     signed exactly these statement bytes
    verify_envelope(envelope, passkeys)   -> Passkey the passkey that signed a `webauthn`
                                                     envelope (its statement's approver's own)
    load_passkeys(path) / append_passkey(path, passkey)   the `[[approver.passkey]]` tables of
                                                     approvers.toml

A decision signed with a passkey is a WebAuthn assertion whose challenge is
sha256(statement bytes): the authenticator signs authenticator data || sha256(client data), and
the client data holds that challenge, so the signature covers exactly the statement a person
decided (docs/architecture.md, "Signed approvals"). The private key never leaves the person's
device (phone, security key): nothing on the agent's machine can make such a signature.

Every check is py_webauthn's (Duo's maintained library: COSE keys, client data type, origin, RP ID
hash, user presence and verification flags, the signature); nothing here is home-made crypto.
User verification is required: a passkey decision is Face ID / Touch ID / a PIN, not a tap.

The `webauthn` package is part of the `patch-tui[web]` extra: it is imported inside the
functions that need it, so reading approvers.toml never needs it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from patch_tui.approvals.signing import register_verifier

# The envelope's scheme for a passkey signature (approvals/statements.py lists the schemes).
SCHEME = "webauthn"
SIGNATURE_FIELDS = ("credential_id", "authenticator_data", "client_data_json", "signature")
# How long the browser may take for Face ID or a security key (milliseconds).
CEREMONY_TIMEOUT_MS = 120_000


class PasskeyError(Exception):
    """A passkey, registration or assertion that does not hold; the message is for a person."""


@dataclass(frozen=True)
class Passkey:
    """One registered credential of one approver: what verifies their assertions."""

    approver: str
    credential_id: str  # base64url
    public_key: str  # the COSE public key, base64url
    rp_id: str  # the relying party (the web app's host name) it was registered for
    origin: str  # the web app's origin, e.g. "http://localhost:8765"

    def to_toml(self) -> str:
        return (
            "[[approver.passkey]]\n"
            f"credential_id = {_toml_str(self.credential_id)}\n"
            f"public_key = {_toml_str(self.public_key)}\n"
            f"rp_id = {_toml_str(self.rp_id)}\n"
            f"origin = {_toml_str(self.origin)}\n"
        )


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def unb64url(text: str) -> bytes:
    if not isinstance(text, str) or not re.fullmatch(r"[A-Za-z0-9_-]*", text):
        raise PasskeyError("a passkey field is not base64url text")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def statement_challenge(statement: bytes) -> bytes:
    """The WebAuthn challenge for a statement: its sha256, so the assertion binds those bytes."""
    return hashlib.sha256(statement).digest()


# -- registration ---------------------------------------------------------------------------


def registration_options(
    *, rp_id: str, approver: str, challenge: bytes, exclude: Sequence[Passkey] = ()
) -> dict[str, Any]:
    """navigator.credentials.create() options (JSON, base64url binary) for `approver`."""
    from webauthn import generate_registration_options, options_to_json
    from webauthn.helpers.structs import (
        AuthenticatorSelectionCriteria,
        PublicKeyCredentialDescriptor,
        ResidentKeyRequirement,
        UserVerificationRequirement,
    )

    options = generate_registration_options(
        rp_id=rp_id,
        rp_name="patch-tui approvals",
        user_name=approver,
        user_id=hashlib.sha256(approver.encode("utf-8")).digest()[:16],
        challenge=challenge,
        timeout=CEREMONY_TIMEOUT_MS,
        authenticator_selection=AuthenticatorSelectionCriteria(
            resident_key=ResidentKeyRequirement.PREFERRED,
            user_verification=UserVerificationRequirement.REQUIRED,
        ),
        exclude_credentials=[
            PublicKeyCredentialDescriptor(id=unb64url(p.credential_id)) for p in exclude
        ],
    )
    result: dict[str, Any] = json.loads(options_to_json(options))
    return result


def verify_registration(
    credential: Mapping[str, Any], *, challenge: bytes, rp_id: str, origin: str, approver: str
) -> Passkey:
    """The passkey a browser created for `approver`, once py_webauthn checked it."""
    from webauthn import verify_registration_response
    from webauthn.helpers.exceptions import InvalidRegistrationResponse

    try:
        verified = verify_registration_response(
            credential=dict(credential),
            expected_challenge=challenge,
            expected_rp_id=rp_id,
            expected_origin=origin,
            require_user_verification=True,
        )
    except (InvalidRegistrationResponse, ValueError, KeyError, TypeError) as exc:
        raise PasskeyError(f"the passkey registration does not hold: {exc}") from None
    return Passkey(
        approver=approver,
        credential_id=b64url(verified.credential_id),
        public_key=b64url(verified.credential_public_key),
        rp_id=rp_id,
        origin=origin,
    )


# -- assertions -----------------------------------------------------------------------------


def assertion_options(
    *, rp_id: str, challenge: bytes, passkeys: Sequence[Passkey]
) -> dict[str, Any]:
    """navigator.credentials.get() options: these passkeys only, user verification required."""
    from webauthn import generate_authentication_options, options_to_json
    from webauthn.helpers.structs import (
        PublicKeyCredentialDescriptor,
        UserVerificationRequirement,
    )

    options = generate_authentication_options(
        rp_id=rp_id,
        challenge=challenge,
        timeout=CEREMONY_TIMEOUT_MS,
        allow_credentials=[
            PublicKeyCredentialDescriptor(id=unb64url(p.credential_id)) for p in passkeys
        ],
        user_verification=UserVerificationRequirement.REQUIRED,
    )
    result: dict[str, Any] = json.loads(options_to_json(options))
    return result


def signature_fields(credential: Mapping[str, Any]) -> dict[str, str]:
    """The envelope's `signature` from a browser's PublicKeyCredential (as JSON)."""
    response = credential.get("response")
    if not isinstance(response, Mapping):
        raise PasskeyError("the passkey answer holds no response")
    fields = {
        "credential_id": credential.get("rawId") or credential.get("id"),
        "authenticator_data": response.get("authenticatorData"),
        "client_data_json": response.get("clientDataJSON"),
        "signature": response.get("signature"),
    }
    for name, value in fields.items():
        if not isinstance(value, str) or not value:
            raise PasskeyError(f"the passkey answer has no {name}")
        unb64url(value)
    return {k: str(v) for k, v in fields.items()}


def verify_assertion(statement: bytes, signature: Mapping[str, str], passkey: Passkey) -> None:
    """Raises PasskeyError unless `passkey` signed exactly `statement` (challenge =
    sha256(statement)), for its own RP ID and origin, with the person verified."""
    from webauthn import verify_authentication_response
    from webauthn.helpers.exceptions import InvalidAuthenticationResponse

    if set(signature) != set(SIGNATURE_FIELDS):
        raise PasskeyError("the passkey signature must have exactly " + ", ".join(SIGNATURE_FIELDS))
    if signature["credential_id"] != passkey.credential_id:
        raise PasskeyError("the passkey signature is not from this passkey")
    credential = {
        "id": signature["credential_id"],
        "rawId": signature["credential_id"],
        "type": "public-key",
        "response": {
            "authenticatorData": signature["authenticator_data"],
            "clientDataJSON": signature["client_data_json"],
            "signature": signature["signature"],
        },
    }
    try:
        verify_authentication_response(
            credential=credential,
            expected_challenge=statement_challenge(statement),
            expected_rp_id=passkey.rp_id,
            expected_origin=passkey.origin,
            credential_public_key=unb64url(passkey.public_key),
            # Approvers' files hold no counter: a cloned authenticator is not what this
            # guards against (the statement binds one decision; the store lets it win once).
            credential_current_sign_count=0,
            require_user_verification=True,
        )
    except (InvalidAuthenticationResponse, ValueError, KeyError, TypeError) as exc:
        raise PasskeyError(f"the passkey signature does not hold: {exc}") from None


def verify_envelope(envelope: Mapping[str, Any], passkeys: Iterable[Passkey]) -> Passkey:
    """The passkey that signed a `webauthn` envelope {"scheme", "statement", "signature",
    "signer"}. The signer field is a hint only: the passkey must be registered to the approver the
    statement names, under the credential id the statement's `key` names."""
    if envelope.get("scheme") != SCHEME:
        raise PasskeyError(f"not a passkey signature (scheme {envelope.get('scheme')!r})")
    text, signature = envelope.get("statement"), envelope.get("signature")
    if not isinstance(text, str) or not isinstance(signature, Mapping):
        raise PasskeyError("the passkey envelope needs a statement and a signature")
    try:
        statement = json.loads(text)
    except ValueError:
        raise PasskeyError("the signed statement is not JSON") from None
    if not isinstance(statement, dict):
        raise PasskeyError("the signed statement is not a JSON object")
    approver, key = statement.get("approver"), statement.get("key")
    for passkey in passkeys:
        if passkey.approver == approver and passkey.credential_id == key:
            verify_assertion(text.encode("utf-8"), signature, passkey)
            return passkey
    raise PasskeyError(f"{approver!r} has no registered passkey {str(key)[:16]!r}")


def verify_for_approver(envelope: Any, approver: Any, key: str) -> str | None:
    """The decisions service's verifier for the `webauthn` scheme (approvals/signing.py's seam:
    (envelope, approver, key) -> None when good, else why not): the statement's `key` must be
    one of the approver's registered passkeys, and that passkey must have signed exactly the
    statement's bytes."""
    entry = approver.passkey(key)
    if entry is None:
        return f"{key[:16]}… is not one of {approver.name}'s passkeys in the trusted approvers"
    signature = envelope.signature
    if not isinstance(signature, Mapping):
        return "the passkey signature is missing"
    try:
        passkey = Passkey(
            approver.name,
            entry["credential_id"],
            entry["public_key"],
            entry["rp_id"],
            entry["origin"],
        )
        verify_assertion(envelope.statement.encode("utf-8"), signature, passkey)
    except (PasskeyError, KeyError) as exc:
        return str(exc)
    return None


# -- approvers.toml -------------------------------------------------------------------------


def _toml_str(value: str) -> str:
    # JSON string escapes are TOML basic-string escapes for everything json.dumps writes.
    return json.dumps(value, ensure_ascii=True)


def load_passkeys(path: Path) -> list[Passkey]:
    """Every `[[approver.passkey]]` of an approvers file, as approvals/approvers.py reads it
    (none when the file is missing)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as exc:
        raise PasskeyError(f"{path}: cannot read the approvers file: {exc}") from None
    return load_passkeys_text(text, path)


_HEADER = re.compile(r"^\s*\[\[?\s*([A-Za-z0-9_.\"' -]+?)\s*\]\]?\s*(#.*)?$")


def append_passkey(path: Path, passkey: Passkey) -> None:
    """Adds `passkey` under its approver's `[[approver]]` table, leaving every other line as it
    was, and writes the file atomically (same mode). The result is read back before it replaces
    the file: a passkey that would land under another approver is never written."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PasskeyError(
            f"no approvers file at {path}: write one with your key (docs/guide/approvals.md)"
        ) from None
    except OSError as exc:
        raise PasskeyError(f"{path}: cannot read the approvers file: {exc.strerror}") from None
    data = tomllib.loads(text)
    names = [a.get("name") for a in data.get("approver", []) if isinstance(a, dict)]
    if passkey.approver not in names:
        raise PasskeyError(f"{path}: no [[approver]] named {passkey.approver!r}")
    wanted = names.index(passkey.approver)
    lines = text.splitlines(keepends=True)
    seen, start, end = -1, None, len(lines)
    for n, line in enumerate(lines):
        header = _HEADER.match(line)
        if header is None:
            continue
        table = header.group(1).replace(" ", "")
        if line.lstrip().startswith("[[") and table == "approver":
            seen += 1
            if seen == wanted:
                start = n
                continue
        if start is not None and not table.startswith("approver."):
            end = n
            break
    if start is None:
        raise PasskeyError(f"{path}: cannot find the table of {passkey.approver!r}")
    before = "".join(lines[:end])
    if before and not before.endswith("\n"):
        before += "\n"
    new_text = before + "\n" + passkey.to_toml() + ("\n" if end < len(lines) else "")
    new_text += "".join(lines[end:])
    if passkey not in load_passkeys_text(new_text):
        raise PasskeyError(f"{path}: the passkey would not land under {passkey.approver!r}")
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    mode = path.stat().st_mode & 0o777
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(new_text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise PasskeyError(
            f"cannot write the approvers file {path} ({exc.strerror}): ask whoever keeps it to "
            f"add the passkey {passkey.credential_id[:12]}… under {passkey.approver!r}"
        ) from None


def load_passkeys_text(text: str, path: Path | None = None) -> list[Passkey]:
    from patch_tui.approvals.approvers import ApproversError, parse_approvers

    try:
        approvers = parse_approvers(tomllib.loads(text), path)
    except (tomllib.TOMLDecodeError, ApproversError) as exc:
        raise PasskeyError(f"{path or 'the approvers file'}: {exc}") from None
    return [
        Passkey(a.name, p["credential_id"], p["public_key"], p["rp_id"], p["origin"])
        for a in approvers.approvers
        for p in a.passkeys
    ]


# The decisions service verifies a `webauthn` envelope through here (approvals/signing.py imports
# this module on the first one it meets), exactly as it verifies an SSH signature.
register_verifier(SCHEME, verify_for_approver)
