"""`patch-tui inbox`: list, show, approve, reject, claim, export, and with no subcommand the
TUI's inbox on its own; allow, grants, sign-grant and revoke are in commands/grantscmd.py.

Exit codes (part of the interface): list: 0; approve / reject: 0 when this call made the
decision, 1 when the action is not pending; store problems are 1 everywhere, with one clear line,
never a traceback. allow / grants / revoke / export and `approve TOKEN --args JSON`: 0 done; 1 the store or the action says no (not pending, unknown grant, the tool
changed), with one line on stderr; 2 usage (bad JSON, args the tool's inputs refuse, a bad
duration or pattern, an unknown tool). Nothing is decided when the exit code is not 0.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from patch_tui.commands.cli_store import _cli_store, _StoreFailed
from patch_tui.commands.runtime import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    _args_object,
    _err,
    _open_toolbox,
    _out_rows,
)
from patch_tui.untrusted.text_safety import visible

# -- approve with edited args -----------------------------------------------------------------


def _awaiting(decision: Any) -> bool:
    """A signed approval that did not complete the quorum: said, and the call stays pending."""
    if decision.code != "awaiting_approval" or decision.action is None:
        return False
    action = decision.action
    print(
        f"signed {action.token} ({visible(action.tool)} {visible(action.version)}): "
        f"{visible(decision.why)}; it runs once enough approvers have approved"
    )
    return True


def approve_edited(args: argparse.Namespace) -> int:
    from patch_tui.approvals import decisions, edits
    from patch_tui.format import toolfile

    edited = _args_object(args.args, "; nothing was approved")
    if edited is None:
        return EXIT_USAGE
    token = visible(args.token)
    with _cli_store(args, also=(OSError,)) as store:
        action = store.get(args.token)
        if action is None:
            _err(f"cannot approve {token}: unknown token")
            return EXIT_FAILED
        if action.status != "pending":
            # The decisions service's answer says why (already decided, expired, ...).
            decision = decisions.approve(store, args.token, note=args.note)
            _err(f"cannot approve {token}: {visible(decision.why)}")
            return EXIT_FAILED
        if action.upstream_token is not None or (action.details or {}).get("held_by") == "guard":
            _err(
                f"cannot approve {token} with edited args: it is a call to "
                f"{visible(action.tool)} held by `patch-tui guard` for another MCP server; only "
                "calls to Patch tool files can be edited (approve it as it is, or reject it)"
            )
            return EXIT_FAILED
        from patch_tui.commands.inbox_show import tool_file

        path = tool_file(action, _open_toolbox(args))
        tf = toolfile.read(str(path)) if path is not None else None
        # A run's reading of the manifest (pydantic only when the model must say); None: invalid.
        manifest = tf.run_manifest if tf is not None else None
        if tf is None or tf.sha256 != action.source_sha256 or manifest is None:
            _err(
                f"cannot approve {token} with edited args: {visible(action.tool)} changed (or is "
                "gone) since the call was held, so it would not run; reject it and let the agent "
                "call again"
            )
            return EXIT_FAILED
        why = edits.validate(edited, manifest)
        if why is not None:
            _err(
                f"cannot approve {token}: the edited args are not valid: {visible(why)}; "
                "the action stays pending"
            )
            return EXIT_USAGE
        decision = decisions.approve(store, args.token, note=args.note, args=edited)
    if _awaiting(decision):
        return EXIT_OK
    if not decision.ok:
        _err(f"cannot approve {token}: {visible(decision.why)}")
        return EXIT_FAILED
    done = decision.action
    assert done is not None  # an ok decision carries its action
    print(f"approved {done.token} ({done.tool} {done.version})")
    if done.edited:
        for change in edits.changes(done.proposed_args or {}, done.args):
            print(f"    {visible(change.line())}")
    else:
        print("    (the args are the proposed ones: nothing was changed)")
    return EXIT_OK


# -- audit export ---------------------------------------------------------------------------


def run_export(args: argparse.Namespace) -> int:
    import time

    from patch_tui.approvals import audit

    since = None
    if args.since is not None:
        try:
            since = audit.parse_since(args.since, time.time())
        except ValueError as exc:
            _err(str(exc))
            return EXIT_USAGE
    with _cli_store(args) as store:
        store.settle()  # the export says what is expired or interrupted as of now
        rows = audit.records(store, since)
    write = audit.write_csv if args.format == "csv" else audit.write_jsonl
    if args.out is None:
        if args.format == "csv" and sys.stdout.isatty():
            # The CSV keeps args as they are; a terminal must not obey what they hold.
            import io

            buf = io.StringIO()
            write(rows, buf)
            sys.stdout.write(visible(buf.getvalue()))
        else:
            write(rows, sys.stdout)
        return EXIT_OK
    try:
        # newline="" so the csv module's own line endings are written as they are.
        with open(args.out, "w", encoding="utf-8", newline="") as fh:
            count = write(rows, fh)
    except OSError as exc:
        _err(f"{visible(args.out)}: cannot write the export: {exc.strerror or exc}")
        return EXIT_FAILED
    _err(f"{count} actions written to {visible(args.out)}")
    return EXIT_OK


# -- inbox ------------------------------------------------------------------------------------


@contextmanager
def _no_cycle_collection() -> Iterator[None]:
    """Python's cycle collector paused for a one-shot listing. Each collection walks every
    object alive, and a listing makes tens of thousands that stay alive until it is printed
    (10,000 actions, their args and their JSON rows), none of them in a cycle: the collector
    ran dozens of times for nothing, 15% of `inbox list --json`'s time with 10,000 pending
    (importing psycopg included). Reference counting still frees everything as usual."""
    import gc

    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _inbox_list(args: argparse.Namespace) -> int:
    with _no_cycle_collection():
        return _list_actions(args)


def _list_actions(args: argparse.Namespace) -> int:
    from patch_tui.approvals import decisions

    with _cli_store(args) as store:
        # Listing is a pure read: settle first, so a listed pending action is approvable now.
        store.settle()
        readers = store.readings()  # who is reading which (the team inbox's claims)
        statuses = None if args.all else ("pending", "approved")
        # Each live approval verified, each pending one's quorum said ("1 of 2: approved by
        # alice"): the decisions service's judgement, the store only keeps the signatures.
        actions = decisions.annotate(store, store.list_actions(statuses=statuses))
        if not args.all:
            # Pending ones, and any approval that is not genuine: a person must see those.
            actions = [a for a in actions if a.status == "pending" or a.tampered]
    if args.json:
        _out_rows(_listed_rows(actions, readers))
        return EXIT_OK
    if not actions:
        print("No pending actions." if not args.all else "No actions.")
        return EXIT_OK
    from patch_tui.commands.inbox_show import list_lines, terminal_width

    width = terminal_width()
    print(
        "\n\n".join(
            "\n".join(list_lines(a, width)) + _reader_line(readers.get(a.token)) for a in actions
        )
    )
    return EXIT_OK


def _reader_line(reader: Any) -> str:
    if reader is None:
        return ""
    return f"\n    reading: {visible(reader.by)} until {reader.until}"


def _inbox_claim(args: argparse.Namespace) -> int:
    """`inbox claim TOKEN`: tell everyone else you are reading this call (until it is decided,
    released with --release, or --for runs out); 1 when someone else is reading it."""
    with _cli_store(args) as store:
        if args.release:
            if store.release_reading(args.token):
                print(f"released {visible(args.token)}")
                return EXIT_OK
            _err(f"{visible(args.token)}: you hold no claim on it")
            return EXIT_FAILED
        decision = store.claim_reading(args.token, seconds=args.seconds)
    if not decision.ok:
        _err(f"cannot claim {visible(args.token)}: {visible(decision.why)}")
        return EXIT_FAILED
    print(
        f"claimed {decision.action.token} ({visible(decision.action.tool)}) for {args.seconds:g} s"
    )
    return EXIT_OK


def _listed_rows(actions: list[Any], readers: dict[str, Any]) -> list[dict[str, Any]]:
    """`inbox list --json`'s rows: each action, the args sha256 `approve --yes --args-sha256`
    repeats, why it may not be approved (approvals.approvable) or null, where its signed
    approvals stand when they do ("approvals"), and who is reading it when someone is
    ("reading": {"by", "until"})."""
    from patch_tui.approvals.approvable import check

    rows = []
    for action in actions:
        problem = check(action) if action.status == "pending" else None
        row = action.to_json()  # a new dict: added to in place, not copied (10,000 rows)
        row["args_sha256"] = action.args_sha256
        row["not_approvable"] = (
            None if problem is None else {"code": problem.code, "why": problem.why}
        )
        if action.standing is not None:
            # Where its signed approvals stand ("1 of 2: approved by alice").
            row["approvals"] = action.standing
        reader = readers.get(action.token)
        if reader is not None:
            row["reading"] = {"by": reader.by, "until": reader.until}
        rows.append(row)
    return rows


def _inbox_show(args: argparse.Namespace) -> int:
    from patch_tui.approvals import decisions
    from patch_tui.commands.inbox_show import show_lines, terminal_width

    with _cli_store(args) as store:
        store.settle()
        action = store.get(args.token)
        if action is not None:
            # Its signed approvals verified and counted, as the list shows them.
            action = decisions.annotate(store, [action])[0]
    if action is None:
        _err(f"no action {visible(args.token)} in the store")
        return EXIT_FAILED
    print("\n".join(show_lines(action, _open_toolbox(args), terminal_width())))
    return EXIT_OK


def _approve_seen(args: argparse.Namespace) -> int:
    """`inbox approve TOKEN`: approve exactly what a person saw. Without --yes, the whole action
    is printed and a `y` asked for on the terminal (never read from a pipe); with --yes, --args-sha256 must be the args hash `inbox list`
    or `inbox show` printed (the store checks it inside the approval's transaction)."""
    from patch_tui.approvals import approvable, decisions
    from patch_tui.commands.inbox_show import show_lines, terminal_width

    token = visible(args.token)
    if args.yes and not args.args_sha256:
        _err(
            f"cannot approve {token} with --yes alone: add --args-sha256 HASH, the args sha256 "
            f"`patch-tui inbox show {token}` prints, so only args someone read are approved; "
            "nothing was approved"
        )
        return EXIT_USAGE
    with _cli_store(args) as store:
        store.settle()
        action = store.get(args.token)
        if action is None:
            _err(f"cannot approve {token}: unknown token")
            return EXIT_FAILED
        problem = approvable.check(action)
        if problem is not None and problem.code != "not_pending":
            _err(f"cannot approve {token}: {visible(problem.why)}")
            return EXIT_FAILED
        shown = args.args_sha256
        if not args.yes and action.status == "pending" and not sys.stdin.isatty():
            # A pipe is not a person: `yes | inbox approve` must not approve what no one read.
            _err(
                f"cannot approve {token}: no terminal to ask on; read it with "
                f"`patch-tui inbox show {token}`, then approve with --yes --args-sha256 HASH "
                "(the args sha256 it printed); nothing was approved"
            )
            return EXIT_USAGE
        if not args.yes and action.status == "pending":
            print("\n".join(show_lines(action, _open_toolbox(args), terminal_width())))
            print()
            if not _asked_yes("Approve exactly this call? Type y to approve: "):
                _err(f"{token} was not approved (it is still pending)")
                return EXIT_FAILED
            shown = args.args_sha256 or action.args_sha256
        decision = decisions.approve(store, args.token, note=args.note, shown_args_sha256=shown)
    if _awaiting(decision):
        return EXIT_OK
    if not decision.ok:
        _err(f"cannot approve {token}: {visible(decision.why)}")
        return EXIT_FAILED
    done = decision.action
    assert done is not None  # an ok decision carries its action
    print(f"approved {done.token} ({visible(done.tool)} {visible(done.version)})")
    from patch_tui.approvals import workspace

    warning = workspace.warning(done)
    if warning is not None:
        _err(f"warning: {visible(warning)}")
    return EXIT_OK


def _asked_yes(question: str) -> bool:
    try:
        answer = input(question)
    except EOFError:
        print()
        return False
    return answer.strip().lower() in ("y", "yes")


def _inbox_decide(args: argparse.Namespace, verb: str) -> int:
    if verb == "approve" and getattr(args, "args", None) is not None:
        return approve_edited(args)
    if verb == "approve":
        return _approve_seen(args)

    from patch_tui.approvals import decisions

    with _cli_store(args) as store:
        decision = decisions.reject(store, args.token, reason=args.reason)
    if not decision.ok:
        _err(f"cannot {verb} {visible(args.token)}: {visible(decision.why)}")
        return EXIT_FAILED
    action = decision.action
    assert action is not None  # an ok decision carries its action
    print(f"rejected {action.token} ({visible(action.tool)} {visible(action.version)})")
    return EXIT_OK


def run_inbox(args: argparse.Namespace) -> int:
    action = getattr(args, "inbox_command", None)
    try:
        if action == "list":
            return _inbox_list(args)
        if action == "show":
            return _inbox_show(args)
        if action in ("approve", "reject"):
            return _inbox_decide(args, action)
        if action == "claim":
            return _inbox_claim(args)
        from patch_tui.commands.grantscmd import run_allow, run_grants, run_revoke, run_sign_grant

        more = {
            "allow": run_allow,
            "grants": run_grants,
            "revoke": run_revoke,
            "sign-grant": run_sign_grant,
            "export": run_export,
        }
        if action in more:
            return int(more[action](args))
    except _StoreFailed:
        return EXIT_FAILED
    return _open_inbox_screen(args)


def _open_inbox_screen(args: argparse.Namespace) -> int:
    """`patch-tui inbox` with no subcommand: the TUI's inbox on its own."""
    from patch_tui.settings.config import ConfigError, start_settings
    from patch_tui.ui import css_cache
    from patch_tui.ui.inbox.inbox_app import InboxApp

    try:
        # Without pydantic (about 140 ms of CPU): the app validates the whole file after its
        # first frame, as the desk does; a file it cannot read plainly is checked here.
        settings = start_settings()
    except ConfigError as exc:
        _err(str(exc))
        return EXIT_USAGE
    css_cache.activate()  # stylesheets parsed by an earlier start, as the desk reads them
    InboxApp(
        getattr(args, "store", None),
        settings=settings,
        theme=getattr(args, "theme", None),
        toolbox=_open_toolbox(args),
    ).run()
    css_cache.save()
    return EXIT_OK
