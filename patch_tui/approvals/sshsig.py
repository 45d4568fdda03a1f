"""OpenSSH's SSHSIG signatures (PROTOCOL.sshsig), the format of `ssh-keygen -Y sign` and git's SSH
commit signing, over Ed25519 keys: plain `ssh-ed25519` and FIDO `sk-ssh-ed25519@openssh.com`.

    public_key_blob(line)            -> bytes   the key blob of an OpenSSH public key line
    fingerprint(blob)                -> str     "SHA256:..." as `ssh-keygen -l` prints it
    signed_data(message, namespace)  -> bytes   what the key signs (the SSHSIG preamble and hash)
    armor(public_blob, namespace, ssh_signature) -> str   the -----BEGIN SSH SIGNATURE----- text
    verify(armored, message, namespace, public_blob) -> str | None   None: good; else why not

The cryptography is `cryptography`'s Ed25519 (sign and verify); this module only frames bytes as
the protocol lays them out, so `ssh-keygen -Y verify` accepts what it makes and the reverse
(tests/unit/test_sshsig.py checks both ways). Only Ed25519 keys are accepted: one algorithm,
no downgrade to RSA/SHA-1 or to a curve an approver did not choose.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import struct

MAGIC = b"SSHSIG"
SIG_VERSION = 1
HASH_ALGORITHM = "sha512"
ED25519 = "ssh-ed25519"
SK_ED25519 = "sk-ssh-ed25519@openssh.com"
KEY_TYPES = (ED25519, SK_ED25519)
_BEGIN = "-----BEGIN SSH SIGNATURE-----"
_END = "-----END SSH SIGNATURE-----"
# The FIDO "user present" flag: a security key's signature made without a touch is refused.
_SK_USER_PRESENT = 0x01


class SshsigError(ValueError):
    """A key or signature that cannot be read; the message is for a person."""


def _string(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.at = data, 0

    def take(self, n: int) -> bytes:
        if self.at + n > len(self.data):
            raise SshsigError("the signature is truncated")
        out = self.data[self.at : self.at + n]
        self.at += n
        return out

    def uint32(self) -> int:
        return int(struct.unpack(">I", self.take(4))[0])

    def string(self) -> bytes:
        return self.take(self.uint32())

    def done(self) -> bool:
        return self.at == len(self.data)


def public_key_blob(line: str) -> bytes:
    """The blob of `ssh-ed25519 AAAA... comment` (or the sk type). SshsigError says why not."""
    parts = line.strip().split()
    if len(parts) < 2:
        raise SshsigError("not an OpenSSH public key line (expected: ssh-ed25519 AAAA... name)")
    if parts[0] not in KEY_TYPES:
        raise SshsigError(
            f"key type {parts[0]!r} is not accepted (use ssh-ed25519 or {SK_ED25519})"
        )
    try:
        blob = base64.b64decode(parts[1], validate=True)
    except (binascii.Error, ValueError):
        raise SshsigError("the public key's base64 is damaged") from None
    key_type, _ = _key_parts(blob)
    if key_type != parts[0]:
        raise SshsigError("the public key's type and its blob disagree")
    return blob


def _key_parts(blob: bytes) -> tuple[str, bytes]:
    """(key type, the 32-byte Ed25519 key) of a public key blob; sk keys carry an application
    string after the key, which the signature check needs (see verify)."""
    r = _Reader(blob)
    key_type = r.string().decode("ascii", "replace")
    if key_type not in KEY_TYPES:
        raise SshsigError(f"key type {key_type!r} is not accepted")
    raw = r.string()
    if len(raw) != 32:
        raise SshsigError("not an Ed25519 key (wrong length)")
    if key_type == SK_ED25519:
        r.string()  # application
    if not r.done():
        raise SshsigError("the public key has trailing bytes")
    return key_type, raw


def _sk_application(blob: bytes) -> bytes:
    r = _Reader(blob)
    r.string()
    r.string()
    return r.string()


def public_line(blob: bytes, comment: str = "") -> str:
    key_type, _ = _key_parts(blob)
    text = f"{key_type} {base64.b64encode(blob).decode('ascii')}"
    return f"{text} {comment}" if comment else text


def fingerprint(blob: bytes) -> str:
    digest = base64.b64encode(hashlib.sha256(blob).digest()).decode("ascii").rstrip("=")
    return f"SHA256:{digest}"


def signed_data(message: bytes, namespace: str) -> bytes:
    """The bytes the key signs: PROTOCOL.sshsig's preamble, namespace and the message's hash."""
    return (
        MAGIC
        + _string(namespace.encode("utf-8"))
        + _string(b"")
        + _string(HASH_ALGORITHM.encode("ascii"))
        + _string(hashlib.sha512(message).digest())
    )


def armor(public_blob: bytes, namespace: str, ssh_signature: bytes) -> str:
    """The armored SSHSIG text, given the key's SSH signature blob (string type, string sig...)."""
    blob = (
        MAGIC
        + struct.pack(">I", SIG_VERSION)
        + _string(public_blob)
        + _string(namespace.encode("utf-8"))
        + _string(b"")
        + _string(HASH_ALGORITHM.encode("ascii"))
        + _string(ssh_signature)
    )
    text = base64.b64encode(blob).decode("ascii")
    lines = [text[i : i + 70] for i in range(0, len(text), 70)]
    return "\n".join([_BEGIN, *lines, _END]) + "\n"


def ed25519_signature(raw: bytes) -> bytes:
    """The SSH signature blob of a plain Ed25519 signature."""
    return _string(ED25519.encode("ascii")) + _string(raw)


def _unarmor(armored: str) -> bytes:
    text = armored.strip()
    if not (text.startswith(_BEGIN) and text.endswith(_END)):
        raise SshsigError("not an SSH signature (no BEGIN/END SSH SIGNATURE lines)")
    body = "".join(text[len(_BEGIN) : -len(_END)].split())
    try:
        return base64.b64decode(body, validate=True)
    except (binascii.Error, ValueError):
        raise SshsigError("the SSH signature's base64 is damaged") from None


def signature_key(armored: str) -> bytes:
    """The public key blob an armored signature names (a hint: never trust it for verifying)."""
    r = _Reader(_unarmor(armored))
    if r.take(6) != MAGIC:
        raise SshsigError("not an SSH signature (no SSHSIG preamble)")
    r.uint32()
    return r.string()


def verify(armored: str, message: bytes, namespace: str, public_blob: bytes) -> str | None:
    """None when `armored` is a good SSHSIG by `public_blob` over `message` in `namespace`;
    else one line saying why not. The key the signature names must be that key."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        r = _Reader(_unarmor(armored))
        if r.take(6) != MAGIC:
            return "not an SSH signature (no SSHSIG preamble)"
        if r.uint32() != SIG_VERSION:
            return "the SSH signature's version is not 1"
        named_key = r.string()
        sig_namespace = r.string().decode("utf-8", "replace")
        r.string()  # reserved
        hash_alg = r.string().decode("ascii", "replace")
        sig_blob = r.string()
        if not r.done():
            return "the SSH signature has trailing bytes"
        if named_key != public_blob:
            return "it was signed by another key"
        if sig_namespace != namespace:
            return f"it was signed for {sig_namespace!r}, not for patch-tui approvals"
        if hash_alg not in ("sha512", "sha256"):
            return f"its hash {hash_alg!r} is not accepted"
        key_type, raw_key = _key_parts(public_blob)
        s = _Reader(sig_blob)
        sig_type = s.string().decode("ascii", "replace")
        raw_sig = s.string()
        if sig_type != key_type:
            return "the signature's type is not its key's"
        digest = getattr(hashlib, hash_alg)(message).digest()
        data = (
            MAGIC
            + _string(namespace.encode("utf-8"))
            + _string(b"")
            + _string(hash_alg.encode("ascii"))
            + _string(digest)
        )
        if key_type == SK_ED25519:
            flags = s.take(1)
            counter = s.take(4)
            if not flags[0] & _SK_USER_PRESENT:
                return "the security key was not touched for it (no user presence)"
            application = _sk_application(public_blob)
            data = (
                hashlib.sha256(application).digest()
                + flags
                + counter
                + hashlib.sha256(data).digest()
            )
        if not s.done():
            return "the signature blob has trailing bytes"
        Ed25519PublicKey.from_public_bytes(raw_key).verify(raw_sig, data)
    except SshsigError as exc:
        return str(exc)
    except InvalidSignature:
        return "the signature does not verify"
    except ValueError as exc:
        return f"the signature cannot be read: {exc}"
    return None
