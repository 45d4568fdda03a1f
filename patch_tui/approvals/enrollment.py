"""A one-time link that lets an approver register a passkey in the web app: proof, made with the
SSH key the approvers file already trusts for them, that this person is that approver.

    link = make_link(approver, key_line, identity, base_url)     (the terminal: `keys enroll-web`)
    claim = verify_link_token(token, approvers_file, now)        (the web app) -> EnrollClaim

The token is an enrollment statement {"v":1, "type":"patch-tui.enroll", "approver", "nonce",
"origin", "expires_at"} (canonical JSON) with an SSHSIG signature over it (namespace
`patch-tui-enroll`, so no approval or git signature can stand in for one), made and checked by
OpenSSH's `ssh-keygen -Y sign / verify` against the approver's `key` line. It lives in the link's
fragment (`/enroll#...`), which browsers never send to a server or write to its logs. It is
short-lived (ENROLL_TTL) and used once: the web app refuses a nonce it has seen, and a nonce
already recorded next to a registered passkey.

Why a link and not a password: whoever holds the link within its life can register a passkey as
that approver, so it is printed only on the approver's own terminal and dies when used.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
import shutil
import subprocess
import tempfile
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

from patch_tui.approvals.values import canonical_json, now_iso, parse_iso

ENROLL_TYPE = "patch-tui.enroll"
NAMESPACE = "patch-tui-enroll"
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


def approver_key(approvers_file: Path, name: str) -> str:
    """The OpenSSH public key line the approvers file trusts for `name`."""
    try:
        data = tomllib.loads(approvers_file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise EnrollError(f"no approvers file at {approvers_file}") from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise EnrollError(f"{approvers_file}: cannot read the approvers file: {exc}") from None
    for approver in data.get("approver", []) or []:
        if isinstance(approver, dict) and approver.get("name") == name:
            key = approver.get("key")
            if not isinstance(key, str) or len(key.split()) < 2:
                raise EnrollError(f"{approvers_file}: {name!r} has no OpenSSH `key` line")
            return key.strip()
    raise EnrollError(f"{approvers_file}: no [[approver]] named {name!r}")


def _ssh_keygen() -> str:
    exe = shutil.which("ssh-keygen")
    if exe is None:
        raise EnrollError("ssh-keygen (OpenSSH) is not installed: it signs the enrollment link")
    return exe


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def make_link(
    approver: str,
    key_line: str,
    identity: Path,
    base_url: str,
    *,
    now: float | None = None,
) -> str:
    """Signs an enrollment statement with `identity` (a private key file, or its .pub with the
    key in ssh-agent) after checking it is the key the approvers file trusts."""
    exe = _ssh_keygen()
    origin = base_url.rstrip("/")
    at = time.time() if now is None else now
    statement = canonical_json(
        {
            "v": 1,
            "type": ENROLL_TYPE,
            "approver": approver,
            "nonce": secrets.token_urlsafe(18),
            "origin": origin,
            "expires_at": now_iso(at + ENROLL_TTL),
        }
    )
    pub = identity if identity.suffix == ".pub" else identity.with_name(identity.name + ".pub")
    try:
        pub_parts = pub.read_text(encoding="utf-8").split()
    except OSError as exc:
        raise EnrollError(f"cannot read the public key {pub}: {exc.strerror}") from None
    if pub_parts[:2] != key_line.split()[:2]:
        raise EnrollError(
            f"{identity} is not the key the approvers file trusts for {approver!r}: "
            "pass --identity with that key"
        )
    with tempfile.TemporaryDirectory(prefix="patch-tui-enroll-") as tmp:
        message = Path(tmp) / "statement"
        message.write_text(statement, encoding="utf-8")
        done = subprocess.run(
            [exe, "-q", "-Y", "sign", "-f", str(identity), "-n", NAMESPACE, str(message)],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
        )
        sig_path = Path(tmp) / "statement.sig"
        if done.returncode != 0 or not sig_path.exists():
            why = (done.stderr.strip().splitlines() or ["ssh-keygen failed"])[-1]
            raise EnrollError(f"cannot sign the enrollment link with {identity}: {why}")
        signature = sig_path.read_text(encoding="ascii")
    token = _b64(canonical_json({"statement": statement, "sshsig": signature}).encode("utf-8"))
    return f"{origin}/enroll#{token}"


def verify_link_token(token: str, approvers_file: Path, *, now: float | None = None) -> EnrollClaim:
    """The claim in a link's token, once its SSH signature verified against the approver's key
    in the approvers file and its life is not over. Raises EnrollError otherwise."""
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
    if canonical_json(statement) != statement_text:
        raise EnrollError("the enrollment statement is not in canonical form")
    approver = statement.get("approver")
    if not isinstance(approver, str):
        raise EnrollError("the enrollment link names no approver")
    key_line = approver_key(approvers_file, approver)
    _verify_sshsig(statement_text, str(signature), key_line)
    try:
        expires = parse_iso(str(statement.get("expires_at")))
    except ValueError:
        raise EnrollError("the enrollment link has no valid expiry") from None
    if (time.time() if now is None else now) >= expires:
        raise EnrollError("the enrollment link expired: run `patch-tui keys enroll-web` again")
    return EnrollClaim(
        approver=approver,
        nonce=str(statement.get("nonce")),
        origin=str(statement.get("origin")),
        expires_at=str(statement["expires_at"]),
    )


def _verify_sshsig(message: str, signature: str, key_line: str) -> None:
    exe = _ssh_keygen()
    key_type, key_b64 = key_line.split()[:2]
    with tempfile.TemporaryDirectory(prefix="patch-tui-enroll-") as tmp:
        signers = Path(tmp) / "allowed_signers"
        signers.write_text(f"approver {key_type} {key_b64}\n", encoding="ascii")
        sig = Path(tmp) / "sig"
        sig.write_text(signature, encoding="ascii")
        done = subprocess.run(
            [exe, "-Y", "verify", "-f", str(signers), "-I", "approver", "-n", NAMESPACE]
            + ["-s", str(sig)],
            input=message.encode("utf-8"),
            capture_output=True,
            timeout=30,
            env={**os.environ, "LC_ALL": "C"},
        )
    if done.returncode != 0:
        raise EnrollError("the enrollment link's signature does not hold for this approver's key")
