"""`patch-tui inbox allow | grants | sign-grant | revoke`: standing grants from the command line
(approvals/grants.py says what a grant is and how a call is matched against one). Exit codes as
for the other inbox subcommands (commands/inboxcmd.py): 0 done; 1 the store or the grant says
no, with one line on stderr; 2 usage. Nothing is granted when the exit code is not 0."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from patch_tui.commands.cli_store import _cli_store
from patch_tui.commands.runtime import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    _err,
    _open_toolbox,
    _out,
)
from patch_tui.untrusted.text_safety import visible

if TYPE_CHECKING:
    from patch_tui.approvals.records import Grant


def run_allow(args: argparse.Namespace) -> int:
    from patch_tui.approvals import grants
    from patch_tui.approvals.gate import GateError, find_tool
    from patch_tui.format import toolfile

    try:
        seconds = grants.parse_duration(args.duration)
        patterns = [grants.parse_pattern(w) for w in args.where]
    except ValueError as exc:
        _err(str(exc))
        return EXIT_USAGE
    try:
        path = find_tool(args.tool, _open_toolbox(args))
        tf = toolfile.read(str(path))
    except (GateError, OSError) as exc:
        _err(visible(str(exc)))
        return EXIT_USAGE
    manifest = tf.manifest
    if manifest is None:
        _err(f"{path}: the manifest is not valid, so nothing can be granted")
        return EXIT_USAGE
    names = [i.name for i in manifest.inputs]
    for p in patterns:
        if p.key not in names:
            # A pattern on a key the tool never receives could never match: surely a typo.
            _err(
                f"--where {visible(str(p))}: {manifest.name} has no input {visible(p.key)!r} "
                f"(inputs: {', '.join(names) or 'none'})"
            )
            return EXIT_USAGE
    if not manifest.capabilities.human_confirm:
        # Its calls are never held, and a new version with human_confirm ends the grant anyway.
        _err(
            f"{manifest.name} is not marked human_confirm: its calls are not held, so there is "
            "nothing to grant"
        )
        return EXIT_USAGE
    if getattr(args, "dry_run", False):
        return _allow_dry_run(args, manifest.name, tf.sha256, patterns)
    with _cli_store(args) as store:
        try:
            grant = grants.create(
                store,
                manifest.name,
                manifest.version,
                tf.sha256,
                patterns,
                seconds,
                tool_path=str(path.resolve()),
            )
        except grants.GrantError as exc:
            _err(f"no grant made: {visible(str(exc))}")
            return EXIT_FAILED
    print(
        f"grant {grant.id}: {grant.tool} {grant.version} calls matching "
        f"{visible(grants.describe_patterns(grant))} are approved until {grant.expires_at} "
        f"(or until the tool changes); `patch-tui inbox revoke {grant.id}` ends it"
    )
    if not patterns:
        _err("warning: no --where: this grant approves every call of the tool until it expires")
    return EXIT_OK


def _allow_dry_run(
    args: argparse.Namespace, tool: str, source_sha256: str, patterns: list[Any]
) -> int:
    """Which of the tool's last 50 calls a grant with these patterns would have approved."""
    from patch_tui.approvals import grants

    with _cli_store(args) as store:
        calls = grants.dry_run(store, tool, source_sha256, patterns)
    if not calls:
        print(f"No calls of {visible(tool)} yet; nothing to compare.")
        return EXIT_OK
    approved = sum(1 for _, would in calls if would)
    print(
        f"dry run: of the last {len(calls)} calls of {visible(tool)}, this grant would have "
        f"approved {approved} (no grant made)"
    )
    for action, would in calls:
        mark = "would approve" if would else "not matched  "
        # The args the patterns look at (all of them without a pattern), as the agent sent them.
        keys = [p.key for p in patterns] or list(action.args)
        shown = {k: action.args[k] for k in dict.fromkeys(keys) if k in action.args}
        args_text = json.dumps(shown, ensure_ascii=False)
        if len(args_text) > 100:
            args_text = args_text[:99] + "\u2026"
        print(f"  {mark}  {action.created_at}  {visible(args_text)}")
    return EXIT_OK


def _grant_id(args: argparse.Namespace) -> int | None:
    """The GRANT_ID argument as a number, or None (said in one line)."""
    try:
        return int(args.grant_id)
    except ValueError:
        _err(
            f"{visible(args.grant_id)!r} is not a grant id (a number; see `patch-tui inbox grants`)"
        )
        return None


def _change_grant(
    args: argparse.Namespace, change: Callable[[Any, int], Grant], refused: str
) -> Grant | int:
    """`change(store, grant_id)` on the GRANT_ID argument: the changed grant, or the exit code
    after one line (a grant id that is no number; `refused`, formatted with the id, and why)."""
    from patch_tui.approvals import grants

    grant_id = _grant_id(args)
    if grant_id is None:
        return EXIT_USAGE
    with _cli_store(args) as store:
        try:
            return change(store, grant_id)
        except grants.GrantError as exc:
            _err(f"{refused.format(grant_id)}: {visible(str(exc))}")
            return EXIT_FAILED


def run_sign_grant(args: argparse.Namespace) -> int:
    from patch_tui.approvals import grants

    toolbox = _open_toolbox(args)  # where its tool file may be found, to check it still holds

    def sign(store: Any, grant_id: int) -> Grant:
        return grants.cosign(store, grant_id, toolbox=toolbox)

    grant = _change_grant(args, sign, "grant {} not signed")
    if isinstance(grant, int):
        return grant
    names = ", ".join(s.approver for s in grant.signatures)
    print(f"signed grant {grant.id} ({visible(grant.tool)}); signed by: {visible(names)}")
    return EXIT_OK


def run_grants(args: argparse.Namespace) -> int:
    from patch_tui.approvals import grants
    from patch_tui.approvals.values import now_iso

    with _cli_store(args) as store:
        # Listed against the tool files: a grant whose tool changed is shown ended, never active.
        found = grants.listing(store, _open_toolbox(args), ended=args.all)
        now = now_iso(store._now())
    if args.json:
        _out([x.to_json(now) for x in found])
        return EXIT_OK
    if not found:
        print("No standing grants." if not args.all else "No grants.")
        return EXIT_OK
    for x in found:
        g = x.grant
        if x.state in ("active", "expired", "revoked"):
            ends = {"active": "expires", "expired": "expired", "revoked": "revoked"}[x.state]
            when = f"{ends} {g.revoked_at if x.state == 'revoked' else g.expires_at}"
            state = x.state
        elif x.state == grants.AWAITING:
            when = f"{x.status}; `patch-tui inbox sign-grant {g.id}`; expires {g.expires_at}"
            state = x.state
        else:
            when, state = x.status, "ignored" if x.state == "untrusted" else "ended"
        print(
            f"{g.id:>4}  {state:<8} {visible(g.tool)} {g.version}  "
            f"{visible(grants.describe_patterns(g))}"
        )
        unchecked = "   (tool file not found: not compared)" if x.unchecked else ""
        signed = ", ".join(s.approver for s in g.signatures) or "nobody"
        print(
            f"      {visible(when)}   uses: {g.uses}   by {visible(g.created_by)} at {g.created_at}"
            f"   signed by: {visible(signed)}" + unchecked
        )
    return EXIT_OK


def run_revoke(args: argparse.Namespace) -> int:
    from patch_tui.approvals import grants

    grant = _change_grant(args, grants.revoke, "cannot revoke grant {}")
    if isinstance(grant, int):
        return grant
    print(f"revoked grant {grant.id} ({visible(grant.tool)}; uses: {grant.uses})")
    return EXIT_OK


# -- export -----------------------------------------------------------------------------------
