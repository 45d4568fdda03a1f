"""`patch-tui keys new|list|show`: the approver key your approvals are signed with.

Exit codes: 0 done; 1 no key, or the key cannot be read or created; 2 usage."""

from __future__ import annotations

import argparse
import sys

from patch_tui.untrusted.text_safety import visible

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def _err(text: str) -> None:
    print(f"patch-tui keys: {text}", file=sys.stderr)


def _approver_key() -> str | None:
    from patch_tui.settings.config import plain_setting

    value = plain_setting("approver_key", None)
    return str(value) if value else None


def run_keys(args: argparse.Namespace) -> int:
    from patch_tui.approvals.keys import KeyProblem

    command = getattr(args, "keys_command", None)
    if command is None:
        _err("give an action: new, list, show or enroll-web")
        return EXIT_USAGE
    if command == "enroll-web":  # the web inbox's: commands/webcmd.py
        from patch_tui.commands.webcmd import run_enroll_web

        return run_enroll_web(args)
    try:
        if command == "new":
            return _new()
        if command == "show":
            return _show()
        return _list()
    except KeyProblem as exc:
        _err(visible(str(exc)))
        return EXIT_FAILED


def _new() -> int:
    from patch_tui.approvals import keys

    choice = _approver_key()
    if choice:
        _err(
            f"approver_key is set ({visible(choice)}), so approvals are signed with that key, "
            "not a key file here; `patch-tui keys show` prints it"
        )
        return EXIT_FAILED
    path = keys.default_key_path()
    signer = keys.create_key_file(path, keys.default_comment())
    print(f"created {path} (Ed25519, mode 0600)")
    print(signer.public_line)
    return EXIT_OK


def _show() -> int:
    from patch_tui.approvals import keys

    # A use of the key: the default key file is created on first use, as approving would.
    signer = keys.local_signer(_approver_key())
    print(signer.public_line)
    return EXIT_OK


def _list() -> int:
    from patch_tui.approvals import keys, sshsig
    from patch_tui.approvals.decisions import trusted

    choice = _approver_key()
    line = keys.local_public_line(choice)
    where = choice or str(keys.default_key_path())
    if line is None:
        print(f"your key:  none yet at {visible(where)} (created on first approval, or keys new)")
    else:
        fp = sshsig.fingerprint(sshsig.public_key_blob(line))
        print(f"your key:  {fp}  {visible(where)}")
    try:
        agent = keys.agent_keys()
    except keys.KeyProblem as exc:
        print(f"ssh-agent: {visible(str(exc))}")
    else:
        if not agent:
            print("ssh-agent: running, holds no Ed25519 key")
        for agent_line in agent:
            blob = sshsig.public_key_blob(agent_line)
            comment = agent_line.split(maxsplit=2)[2] if len(agent_line.split()) > 2 else ""
            print(f"ssh-agent: {sshsig.fingerprint(blob)}  {visible(comment)}")
            print(f'           approver_key = "ssh-agent:{sshsig.fingerprint(blob)}"')
    approvers = trusted()
    if approvers.problem is not None:
        print(f"approvers: NONE TRUSTED: {visible(approvers.problem)}")
        return EXIT_FAILED
    source = approvers.source or "none (your own key is the one approver)"
    print(f"approvers file: {visible(str(source))}")
    for a in approvers.approvers:
        tools = ", ".join(a.tools)
        grants = "may grant" if a.grants else "no grants"
        print(f"  {visible(a.name)}  tools: {visible(tools)}  {grants}")
        for fp in a.ssh_keys:
            print(f"      {fp}")
        for pk in a.passkeys:
            print(f"      passkey {visible(pk.get('credential_id', '?'))}")
    for rule in approvers.rules:
        what = ", ".join(rule.tools or ()) or ", ".join(
            f"{k}={v}" for k, v in (rule.capabilities or {}).items()
        )
        print(f"  rule: {visible(what)} requires {rule.require}")
    return EXIT_OK
