"""Who is trusted, and who signs here: the trusted approvers as the settings say now, the local
approver's key and name, and what a held call's tool may do (for rules on capabilities). Used by
approvals/decisions.py and approvals/grants.py alike."""

from __future__ import annotations

import os
import time
from typing import Any

from patch_tui.approvals.approvers import Approver, Approvers, load_approvers
from patch_tui.approvals.backend import ApprovalStore
from patch_tui.approvals.keys import KeyProblem, Signer, local_signer
from patch_tui.approvals.values import Action


class DecisionRefused(Exception):
    """This person cannot make this decision here (no key, not an approver, not for this tool).
    The message is for a person; `code` for a program (no_key, not_allowed)."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


# -- who is trusted, and who signs here --------------------------------------------------------


_SETTINGS_ENV = ("PATCH_TUI_APPROVER_KEY", "PATCH_TUI_APPROVERS_FILE")
_settings_seen: dict[str, Any] = {}


def _settings() -> tuple[str | None, str | None]:
    """(approvers_file, approver_key) as the config file and the environment say now. Read again
    only when the config file or those variables changed: a decision and a claim each ask
    several times, and reading the config costs more than verifying a signature."""
    from patch_tui.settings.config import plain_setting
    from patch_tui.settings.paths import config_file

    path = config_file()
    try:
        st = path.stat()
        stamp: tuple[Any, ...] = (st.st_mtime_ns, st.st_size, st.st_ino)
    except OSError:
        stamp = ()
    key = (str(path), stamp, *(os.environ.get(n) for n in _SETTINGS_ENV))
    if _settings_seen.get("key") != key:
        _settings_seen["value"] = (
            plain_setting("approvers_file", None),
            plain_setting("approver_key", None),
        )
        _settings_seen["key"] = key
    value: tuple[str | None, str | None] = _settings_seen["value"]
    return value


def trusted() -> Approvers:
    """The trusted approvers as the settings say now (re-read at each decision and claim: an
    approver removed from the file stops counting at once)."""
    approvers_file, approver_key = _settings()
    return load_approvers(approvers_file, approver_key)


def signer_here() -> Signer:
    """The local approver's key (`approver_key`), the key file created on first use."""
    _, approver_key = _settings()
    try:
        return local_signer(approver_key)
    except KeyProblem as exc:
        raise DecisionRefused(str(exc), "no_key") from None


def local_identity(approvers: Approvers, signer: Signer) -> Approver:
    """The trusted approver whose key `signer` holds (DecisionRefused when none is)."""
    if approvers.problem is not None:
        raise DecisionRefused(approvers.problem, "not_allowed")
    found = approvers.by_key(signer.fingerprint)
    if found is None:
        where = approvers.source or "the trusted approvers"
        raise DecisionRefused(
            f"your key {signer.fingerprint} is not an approver's in {where} "
            "(patch-tui keys show prints the line to add)",
            "not_allowed",
        )
    return found


# -- what the action's tool may do --------------------------------------------------------------


def tool_capabilities(action: Action, approvers: Approvers) -> dict[str, Any] | None:
    """The capabilities (as written in its manifest) of the tool file the action binds: its
    path, holding the approved sha256. None when no rule asks about capabilities, or when that
    file cannot be read as it was approved (a rule on capabilities then applies)."""
    return file_capabilities(action.tool_path, action.source_sha256, approvers)


def file_capabilities(
    tool_path: str | None, source_sha256: str, approvers: Approvers
) -> dict[str, Any] | None:
    """tool_capabilities for a tool file named by path and sha256 (a call's, or a grant's)."""
    if not any(r.capabilities is not None for r in approvers.rules) or not tool_path:
        return None
    from patch_tui.format import toolfile

    try:
        tf = toolfile.read(tool_path)
    except (OSError, ValueError):
        return None
    if tf.sha256 != source_sha256 or not isinstance(tf.data, dict):
        return None
    caps = tf.data.get("capabilities")
    return dict(caps) if isinstance(caps, dict) else {}


def store_now(store: ApprovalStore) -> float:
    """The store's clock (tests move it); time.time() for a backend without one."""
    now = getattr(store, "_now", None)
    return float(now()) if callable(now) else time.time()
