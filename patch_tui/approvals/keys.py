"""An approver's private key, and signing with it: a key file or a key held by ssh-agent.

    local_signer(approver_key=None)  -> Signer   the key `approver_key` picks (see below)
    create_key_file(path)            -> FileSigner  a new Ed25519 key, OpenSSH format, 0600
    agent_keys()                     -> list[str]   the Ed25519 public key lines ssh-agent holds
    default_key_path()               -> Path     <config folder>/approver_ed25519

`approver_key` (the setting): unset, the key file in the config folder (created on first use:
the zero-config default, one person on one machine); `ssh-agent:SHA256:...`, the key with that
fingerprint in the running ssh-agent (`$SSH_AUTH_SOCK`), so no file on disk can approve, FIDO
security keys (`sk-ssh-ed25519@openssh.com`) included, a touch per approval; or a path to an
unencrypted OpenSSH Ed25519 key file.

A key file signs in-process (`cryptography`). An agent key signs through OpenSSH's own
`ssh-keygen -Y sign`, which speaks the agent protocol, asks for a security key's touch and PIN,
and is on every machine that has ssh-agent: no agent client of our own, no new dependency, and
the same program the approver would use to check a signature by hand.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from patch_tui.approvals import sshsig
from patch_tui.approvals.statements import NAMESPACE
from patch_tui.settings.paths import AGENT_KEY_PREFIX as AGENT_PREFIX
from patch_tui.settings.paths import APPROVER_KEY_FILE_NAME as KEY_FILE_NAME

# A security key waits for a touch; a person may take a while to find it.
_AGENT_SIGN_TIMEOUT = 120.0


class KeyProblem(Exception):
    """A key that cannot be found, read or used; the message is for a person."""


class Signer(Protocol):
    """A private key that signs approval statements (SSHSIG, namespace patch-tui-approval)."""

    @property
    def public_line(self) -> str: ...

    @property
    def fingerprint(self) -> str: ...

    def sign(self, message: bytes) -> str: ...


def default_key_path() -> Path:
    """The key file beside the config file (so PATCH_TUI_CONFIG moves it too)."""
    from patch_tui.settings.paths import config_file

    return config_file().parent / KEY_FILE_NAME


@dataclass
class FileSigner:
    """An unencrypted OpenSSH Ed25519 private key file."""

    path: Path
    _key: object
    _blob: bytes
    comment: str = ""

    @property
    def public_line(self) -> str:
        return sshsig.public_line(self._blob, self.comment)

    @property
    def fingerprint(self) -> str:
        return sshsig.fingerprint(self._blob)

    def sign(self, message: bytes) -> str:
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        assert isinstance(self._key, Ed25519PrivateKey)
        raw = self._key.sign(sshsig.signed_data(message, NAMESPACE))
        return sshsig.armor(self._blob, NAMESPACE, sshsig.ed25519_signature(raw))


def _public_blob(private_key: object) -> bytes:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    assert isinstance(private_key, Ed25519PrivateKey)
    line = private_key.public_key().public_bytes(Encoding.OpenSSH, PublicFormat.OpenSSH)
    return sshsig.public_key_blob(line.decode("ascii"))


_loaded: dict[str, tuple[tuple[int, int, int], FileSigner]] = {}


def load_key_file(path: Path) -> FileSigner:
    """The key file, parsed once per version of the file (a decision asks for it each time)."""
    try:
        st = path.stat()
    except OSError as exc:
        raise KeyProblem(f"{path}: cannot read the approver key: {exc.strerror or exc}") from None
    stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
    cached = _loaded.get(str(path))
    if cached is not None and cached[0] == stamp:
        return cached[1]
    signer = _read_key_file(path)
    _loaded[str(path)] = (stamp, signer)
    return signer


def _read_key_file(path: Path) -> FileSigner:
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import load_ssh_private_key

    try:
        data = path.read_bytes()
    except OSError as exc:
        raise KeyProblem(f"{path}: cannot read the approver key: {exc.strerror or exc}") from None
    try:
        key = load_ssh_private_key(data, password=None)
    except TypeError:
        raise KeyProblem(
            f"{path}: the key is passphrase-protected; load it into ssh-agent (ssh-add {path}) "
            'and set approver_key = "ssh-agent:<its SHA256 fingerprint>"'
        ) from None
    except (ValueError, UnsupportedAlgorithm) as exc:
        raise KeyProblem(f"{path}: not an OpenSSH private key ({exc})") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise KeyProblem(f"{path}: approvals are signed with Ed25519 keys only")
    comment = ""
    pub = Path(f"{path}.pub")
    if pub.is_file():
        parts = pub.read_text(encoding="utf-8", errors="replace").split(maxsplit=2)
        comment = parts[2].strip() if len(parts) > 2 else ""
    return FileSigner(path, key, _public_blob(key), comment)


def create_key_file(path: Path, comment: str) -> FileSigner:
    """A new Ed25519 key at `path` (0600, never over an existing file) and its `.pub` beside it."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import (
        Encoding,
        NoEncryption,
        PrivateFormat,
    )

    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(Encoding.PEM, PrivateFormat.OpenSSH, NoEncryption())
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        raise KeyProblem(
            f"{path}: a key is already there (patch-tui keys show prints it)"
        ) from None
    except OSError as exc:
        raise KeyProblem(f"{path}: cannot create the approver key: {exc.strerror or exc}") from None
    with os.fdopen(fd, "wb") as fh:
        fh.write(pem)
        fh.flush()
        os.fsync(fh.fileno())
    blob = _public_blob(key)
    Path(f"{path}.pub").write_text(sshsig.public_line(blob, comment) + "\n", encoding="utf-8")
    return FileSigner(path, key, blob, comment)


def default_comment() -> str:
    import getpass
    import socket

    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = f"uid{os.getuid()}"
    return f"{user}@{socket.gethostname()}"


# -- ssh-agent --------------------------------------------------------------------------------


# shutil, subprocess and tempfile are imported where ssh-agent is asked: every listing imports
# this module (the decisions service names who signs), and only signing with the agent runs a
# program (shutil alone brings bz2 and lzma: about 6 ms of `inbox list --json`).


def _ssh_program(name: str) -> str:
    import shutil

    found = shutil.which(name)
    if found is None:
        raise KeyProblem(f"{name} is not installed; it is needed to sign with ssh-agent")
    return found


def agent_keys() -> list[str]:
    """The Ed25519 (and sk-Ed25519) public key lines the running ssh-agent holds."""
    if not os.environ.get("SSH_AUTH_SOCK"):
        raise KeyProblem("no ssh-agent is running here (SSH_AUTH_SOCK is not set)")
    import subprocess

    proc = subprocess.run(
        [_ssh_program("ssh-add"), "-L"], capture_output=True, text=True, timeout=10, check=False
    )
    if proc.returncode == 2:
        raise KeyProblem("cannot reach ssh-agent (SSH_AUTH_SOCK points to no running agent)")
    return [
        line.strip()
        for line in proc.stdout.splitlines()
        if line.split(maxsplit=1)[:1] and line.split()[0] in sshsig.KEY_TYPES
    ]


@dataclass
class AgentSigner:
    """A key held by ssh-agent, found by its fingerprint; signs through `ssh-keygen -Y sign`."""

    public_line: str
    fingerprint: str

    def sign(self, message: bytes) -> str:
        import subprocess
        import tempfile

        with tempfile.TemporaryDirectory(prefix="patch-tui-sign-") as folder:
            pub = Path(folder) / "key.pub"
            pub.write_text(self.public_line + "\n", encoding="utf-8")
            try:
                proc = subprocess.run(
                    [
                        _ssh_program("ssh-keygen"),
                        "-q",
                        "-Y",
                        "sign",
                        "-n",
                        NAMESPACE,
                        "-f",
                        str(pub),
                    ],
                    input=message,
                    capture_output=True,
                    timeout=_AGENT_SIGN_TIMEOUT,
                    check=False,
                )
            except subprocess.TimeoutExpired:
                raise KeyProblem(
                    "ssh-agent did not sign in time (no touch on the security key?)"
                ) from None
        if proc.returncode != 0:
            why = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            raise KeyProblem(f"ssh-agent did not sign: {why[-1] if why else 'no reason given'}")
        return proc.stdout.decode("ascii", "replace")


def agent_signer(fingerprint: str) -> AgentSigner:
    for line in agent_keys():
        blob = sshsig.public_key_blob(line)
        if sshsig.fingerprint(blob) == fingerprint:
            return AgentSigner(line, fingerprint)
    raise KeyProblem(
        f"ssh-agent holds no Ed25519 key {fingerprint} (ssh-add -l lists its keys; ssh-add adds one)"
    )


def local_signer(approver_key: str | None = None, *, create: bool = True) -> Signer:
    """The signer `approver_key` picks (see the module). The default key file is created on
    first use when `create`; otherwise its absence is a KeyProblem."""
    choice = (approver_key or "").strip()
    if choice.startswith(AGENT_PREFIX):
        return agent_signer(choice[len(AGENT_PREFIX) :].strip())
    if choice:
        return load_key_file(Path(choice).expanduser())
    path = default_key_path()
    if path.exists():
        return load_key_file(path)
    if not create:
        raise KeyProblem(f"{path}: no approver key yet (patch-tui keys new creates it)")
    return create_key_file(path, default_comment())


def local_public_line(approver_key: str | None = None) -> str | None:
    """The configured key's public line, without touching the private key where it can be
    avoided (the `.pub` beside a key file; the agent's listing); None when there is none yet."""
    choice = (approver_key or "").strip()
    try:
        if choice.startswith(AGENT_PREFIX):
            return agent_signer(choice[len(AGENT_PREFIX) :].strip()).public_line
        path = Path(choice).expanduser() if choice else default_key_path()
        pub = Path(f"{path}.pub")
        if pub.is_file():
            return pub.read_text(encoding="utf-8").strip()
        if path.exists():
            return load_key_file(path).public_line
    except (KeyProblem, OSError, sshsig.SshsigError):
        return None
    return None
