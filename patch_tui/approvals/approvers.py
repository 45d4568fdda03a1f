"""The trusted approvers: who may approve which calls, how many must, and who may grant.

    load_approvers(approvers_file=None, approver_key=None) -> Approvers
    approvers.find(name)                    -> Approver | None
    approvers.by_key(fingerprint)           -> Approver | None   whose key this is
    approvers.required(tool, path, caps)    -> int   distinct approvers a call needs
    approver.may_approve(tool, path)        -> bool

Where they come from, first found wins:
1. `/etc/patch-tui/approvers.toml`: a file the user's own processes cannot write (root's), so
   no process of the user, an agent with a shell included, can add itself as an approver;
2. the `approvers_file` setting;
3. `approvers.toml` in the config folder (beside config.toml).
Without any, the local user's own key (`approver_key`, else the key file in the config folder)
is the one trusted approver, named after the OS user, allowed every tool and grants: today's
behaviour, zero config. A file that cannot be read trusts no one (one line says why): an
approval is never checked against less than what the person wrote.

The file (docs/guide/approvals.md has a two-person example):

    [[approver]]
    name = "alice"
    key = "ssh-ed25519 AAAA... alice@laptop"    # or keys = ["...", "..."]
    tools = ["*"]                               # globs on the tool's name or path; default all
    grants = true                               # may make standing grants; default false
    [[approver.passkey]]                        # the web inbox's (keys enroll-web)
    credential_id = "..."                       # base64url
    public_key = "..."                          # COSE, base64url
    rp_id = "..."
    origin = "..."
    [[rule]]
    tools = ["delete_*"]                        # or: capabilities = {filesystem = "read-write"}
    require = 2                                 # distinct approvers

A call needs the largest `require` among the rules it matches, and 1 when it matches none. A rule
with both `tools` and `capabilities` matches a call that satisfies both. Tool globs are
`fnmatch`'s, matched against the tool's name and against its file's path.
"""

from __future__ import annotations

import fnmatch
import getpass
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from patch_tui.approvals import sshsig
from patch_tui.settings.paths import APPROVERS_FILE_NAME as FILE_NAME

SYSTEM_FILE = Path("/etc/patch-tui/approvers.toml")
# A rule asking more approvers than this is surely a typo (and could never be met).
MAX_REQUIRE = 16


class ApproversError(ValueError):
    """The approvers file cannot be read; the message is for a person."""


@dataclass(frozen=True)
class Approver:
    name: str
    # OpenSSH public key blobs by their SHA256 fingerprint.
    ssh_keys: dict[str, bytes] = field(default_factory=dict)
    tools: tuple[str, ...] = ("*",)
    grants: bool = False
    # The web inbox's passkeys: {credential_id, public_key, rp_id, origin}, as written.
    passkeys: tuple[dict[str, str], ...] = ()

    def may_approve(self, tool: str, tool_path: str | None) -> bool:
        return _tool_matches(self.tools, tool, tool_path)

    def passkey(self, credential_id: str) -> dict[str, str] | None:
        for pk in self.passkeys:
            if pk.get("credential_id") == credential_id:
                return pk
        return None


@dataclass(frozen=True)
class Rule:
    require: int
    tools: tuple[str, ...] | None = None
    capabilities: dict[str, Any] | None = None

    def applies(self, tool: str, tool_path: str | None, caps: dict[str, Any] | None) -> bool:
        if self.tools is not None and not _tool_matches(self.tools, tool, tool_path):
            return False
        if self.capabilities is not None:
            if caps is None:
                return True  # the tool's capabilities are unknown: the stricter reading
            return all(caps.get(k) == v for k, v in self.capabilities.items())
        return True


@dataclass(frozen=True)
class Approvers:
    approvers: tuple[Approver, ...]
    rules: tuple[Rule, ...] = ()
    # The file they were read from; None: the local user's own key, no file.
    source: Path | None = None
    # Why no one is trusted (the file could not be read), else None.
    problem: str | None = None

    def find(self, name: str) -> Approver | None:
        for a in self.approvers:
            if a.name == name:
                return a
        return None

    def by_key(self, fingerprint: str) -> Approver | None:
        for a in self.approvers:
            if fingerprint in a.ssh_keys or a.passkey(fingerprint) is not None:
                return a
        return None

    def required(self, tool: str, tool_path: str | None, caps: dict[str, Any] | None) -> int:
        return max([1, *(r.require for r in self.rules if r.applies(tool, tool_path, caps))])


def _tool_matches(globs: tuple[str, ...], tool: str, tool_path: str | None) -> bool:
    return any(
        fnmatch.fnmatchcase(tool, g)
        or (tool_path is not None and fnmatch.fnmatchcase(tool_path, g))
        for g in globs
    )


def os_user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return f"uid{os.getuid()}"


def approvers_path(approvers_file: str | None = None) -> Path | None:
    """The approvers file in force (see the module), or None when there is none."""
    if SYSTEM_FILE.exists():
        return SYSTEM_FILE
    if approvers_file:
        return Path(approvers_file).expanduser()
    from patch_tui.settings.paths import config_file

    default = config_file().parent / FILE_NAME
    return default if default.exists() else None


_parsed: dict[str, tuple[tuple[int, int, int], Approvers]] = {}


def load_approvers(approvers_file: str | None = None, approver_key: str | None = None) -> Approvers:
    """The trusted approvers now (see the module). Never raises: a file that cannot be read
    gives `Approvers((), problem=...)`, which verifies nothing. A file is parsed again only when
    it changed (its size, time or inode): every decision and every claim asks."""
    path = approvers_path(approvers_file)
    if path is None:
        return _local_only(approver_key)
    try:
        st = path.stat()
        stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
    except OSError:
        stamp = (0, 0, 0)
    cached = _parsed.get(str(path))
    if cached is not None and cached[0] == stamp and stamp != (0, 0, 0):
        return cached[1]
    try:
        found = parse_approvers(_read(path), path)
    except ApproversError as exc:
        found = Approvers((), (), path, f"{path}: {exc}")
    _parsed[str(path)] = (stamp, found)
    return found


def _read(path: Path) -> dict[str, Any]:
    from patch_tui.settings.toml_file import read_toml

    try:
        return read_toml(path)
    except FileNotFoundError:
        raise ApproversError("the approvers file is missing") from None
    except (OSError, ValueError) as exc:
        raise ApproversError(str(exc)) from None


def _local_only(approver_key: str | None) -> Approvers:
    from patch_tui.approvals.keys import local_public_line

    line = local_public_line(approver_key)
    keys: dict[str, bytes] = {}
    if line is not None:
        try:
            blob = sshsig.public_key_blob(line)
            keys[sshsig.fingerprint(blob)] = blob
        except sshsig.SshsigError:
            pass
    return Approvers((Approver(os_user(), keys, ("*",), True),))


def parse_approvers(data: dict[str, Any], path: Path | None = None) -> Approvers:
    approvers: list[Approver] = []
    unknown = set(data) - {"approver", "rule"}
    if unknown:
        raise ApproversError(
            f"unknown table {sorted(unknown)[0]!r} (expected [[approver]], [[rule]])"
        )
    for n, entry in enumerate(_tables(data, "approver"), 1):
        approvers.append(_approver(entry, n))
    names = [a.name for a in approvers]
    dupes = {x for x in names if names.count(x) > 1}
    if dupes:
        raise ApproversError(f"approver {sorted(dupes)[0]!r} is listed twice")
    owners: dict[str, str] = {}
    for a in approvers:
        for fp in a.ssh_keys:
            if fp in owners:
                raise ApproversError(f"the key {fp} is listed for {owners[fp]} and {a.name}")
            owners[fp] = a.name
    rules = [_rule(entry, n) for n, entry in enumerate(_tables(data, "rule"), 1)]
    return Approvers(tuple(approvers), tuple(rules), path)


def _tables(data: dict[str, Any], name: str) -> list[dict[str, Any]]:
    value = data.get(name, [])
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise ApproversError(f"[[{name}]] must be an array of tables")
    return value


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ApproversError(f"{where} must be a string or a non-empty list of strings")


def _approver(entry: dict[str, Any], n: int) -> Approver:
    where = f"approver {n}"
    unknown = set(entry) - {"name", "key", "keys", "tools", "grants", "passkey"}
    if unknown:
        raise ApproversError(f"{where}: unknown field {sorted(unknown)[0]!r}")
    name = entry.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ApproversError(f"{where}: needs a name")
    where = f"approver {name!r}"
    lines: list[str] = []
    if "key" in entry:
        lines += _strings(entry["key"], f"{where}: key")
    if "keys" in entry:
        lines += _strings(entry["keys"], f"{where}: keys")
    keys: dict[str, bytes] = {}
    for line in lines:
        try:
            blob = sshsig.public_key_blob(line)
        except sshsig.SshsigError as exc:
            raise ApproversError(f"{where}: {exc}") from None
        keys[sshsig.fingerprint(blob)] = blob
    tools = _strings(entry["tools"], f"{where}: tools") if "tools" in entry else ("*",)
    grants = entry.get("grants", False)
    if not isinstance(grants, bool):
        raise ApproversError(f"{where}: grants must be true or false")
    passkeys = tuple(_passkey(pk, where) for pk in _tables(entry, "passkey"))
    if not keys and not passkeys:
        raise ApproversError(f"{where}: needs a key (the line `patch-tui keys show` prints)")
    return Approver(name, keys, tools, grants, passkeys)


def _passkey(entry: dict[str, Any], where: str) -> dict[str, str]:
    needed = ("credential_id", "public_key", "rp_id", "origin")
    missing = [k for k in needed if not isinstance(entry.get(k), str) or not entry[k]]
    if missing:
        raise ApproversError(f"{where}: a passkey needs {', '.join(missing)}")
    return {k: str(v) for k, v in entry.items() if isinstance(v, str | int)}


def _rule(entry: dict[str, Any], n: int) -> Rule:
    where = f"rule {n}"
    unknown = set(entry) - {"tools", "capabilities", "require"}
    if unknown:
        raise ApproversError(f"{where}: unknown field {sorted(unknown)[0]!r}")
    require = entry.get("require")
    if not isinstance(require, int) or isinstance(require, bool) or not 1 <= require <= MAX_REQUIRE:
        raise ApproversError(f"{where}: require must be a number from 1 to {MAX_REQUIRE}")
    tools = _strings(entry["tools"], f"{where}: tools") if "tools" in entry else None
    caps = entry.get("capabilities")
    if caps is not None and (not isinstance(caps, dict) or not caps):
        raise ApproversError(f"{where}: capabilities must be a table like {{network = true}}")
    if tools is None and caps is None:
        raise ApproversError(f"{where}: needs tools or capabilities (what it applies to)")
    return Rule(require, tools, caps)
