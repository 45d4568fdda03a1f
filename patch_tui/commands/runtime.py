"""`patch-tui run`, `confirm`, `inbox` and `serve`: the runtime side, headless.

Exit codes are part of the interface (issue 3):
- run:     0 and the result JSON on stdout; 3 and the confirmation_required JSON on stdout when
           the call is held; 1 when the tool failed (message on stderr); 2 usage (bad --args,
           unknown tool, unknown or missing input).
- confirm: 0 only for the call that actually ran the action (and the tool succeeded); 1 otherwise,
           with the status JSON on stdout (awaiting_approval, rejected, expired, tool_changed,
           args_changed, tampered, unknown_token, already_used) and a sentence on stderr; 3 when confirming a taint
           approval opened the tool's own human_confirm action.
- inbox approve / reject: 0 when this call made the decision; 1 when the action is not pending.
- inbox list: 0; store problems are 1 everywhere, with one clear line, never a traceback.

Module import stays light: core modules are imported inside the functions.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

# Untrusted text (args, notes, tool errors) reaches the terminal with escape sequences and hidden
# Unicode shown, not obeyed.
from patch_tui.untrusted.text_safety import visible

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_HELD = 0, 1, 2, 3


def _err(message: str) -> None:
    print(f"patch-tui: {message}", file=sys.stderr)


def _args_object(text: str, consequence: str = "") -> dict[str, Any] | None:
    """`--args` as the JSON object a tool takes, or None after one line on stderr saying why
    (with `consequence`, e.g. "; nothing was approved", appended)."""
    try:
        value = json.loads(text)
    except ValueError as exc:
        _err(f"--args is not valid JSON: {exc}{consequence}")
        return None
    if not isinstance(value, dict):
        _err(f'--args must be a JSON object, like \'{{"text": "hi"}}\'{consequence}')
        return None
    return value


def _out(value: Any) -> None:
    # ASCII-only JSON: the same data once parsed, and a terminal showing it cannot be tricked by
    # bidi controls or escape sequences inside tool args or results.
    print(json.dumps(value, ensure_ascii=True, indent=2))


def _settings_ttl() -> float | None:
    from patch_tui.approvals.store import DEFAULT_TTL
    from patch_tui.settings.config import ConfigError, load_settings

    try:
        return float(load_settings().confirm_ttl)
    except ConfigError as exc:
        _err(f"{exc} (using the default confirm_ttl, {DEFAULT_TTL} s)")
        return None


def _open_store(args: argparse.Namespace, label: str) -> Any:
    """The store, or None after printing why (the caller exits 1)."""
    from patch_tui.approvals.store import DEFAULT_TTL, Store, StoreError
    from patch_tui.settings import paths

    ttl = _settings_ttl()
    try:
        return Store(
            paths.default_store(getattr(args, "store", None)),
            actor=label,
            ttl=DEFAULT_TTL if ttl is None else ttl,
        )
    except StoreError as exc:
        _err(str(exc))
        return None


def _open_toolbox(args: argparse.Namespace) -> Any:
    """The toolbox, or None (no toolbox, or one that cannot be read: see _toolbox_or_why)."""
    return _toolbox_or_why(args)[0]


def _toolbox_or_why(args: argparse.Namespace) -> tuple[Any, str | None]:
    """(the toolbox or None, why it cannot be read or None). No toolbox at all is fine (tools
    can be given as files); one that exists but cannot be read is said, by the caller, once."""
    from patch_tui.runtime.toolbox import Toolbox, ToolboxError, ToolboxUnreadable
    from patch_tui.settings import paths

    try:
        return Toolbox.open(paths.default_toolbox(getattr(args, "toolbox", None))), None
    except ToolboxUnreadable as exc:
        return None, str(exc)
    except ToolboxError:
        return None, None


def _report_outcome(outcome: Any, *, confirming: bool) -> int:
    status = outcome.status
    if status == "ok":
        run = outcome.run
        if run is not None and run.output_type_error:
            _err(f"warning: {run.output_type_error}")
        action = outcome.action
        if action is not None and action.grant_id is not None and not confirming:
            _err(f"approved by standing grant {action.grant_id} (see `patch-tui inbox grants`)")
        _out(outcome.payload)
        return EXIT_OK
    if status == "confirmation_required":
        _out(outcome.payload)
        # The JSON is the agent's (it says patch_confirm_action); this line is the CLI user's.
        token = outcome.payload["confirmation_token"]
        _err(
            f"{visible(str(outcome.payload['tool']))}: held for a person's approval "
            f"({outcome.payload['kind']}). Approve it in `patch-tui inbox` (or "
            f"`patch-tui inbox approve {token}`), then run it with `patch-tui confirm {token}`."
        )
        return EXIT_HELD
    if status == "invalid":
        _err(visible(str(outcome.payload.get("error"))))
        return EXIT_USAGE
    if status == "failed":
        _err(visible(str(outcome.payload.get("error"))))
        if confirming:
            _out(outcome.payload)
        return EXIT_FAILED
    # awaiting_approval, rejected, expired, tool_changed, args_changed, tampered, unknown_token,
    # already_used
    _out(outcome.payload)
    message = outcome.payload.get("message", status)
    if status == "awaiting_approval":  # the payload's message is for an agent
        token = outcome.payload.get("confirmation_token")
        message = (
            f"Not approved yet: approve it in `patch-tui inbox` (or `patch-tui inbox approve "
            f"{token}`), then run `patch-tui confirm {token}` again. Nothing was run."
        )
    if status == "rejected" and outcome.payload.get("reason"):
        message += f" Reason: {outcome.payload['reason']}"
    _err(f"{status}: {visible(message)}")
    return EXIT_FAILED


# -- run / confirm ----------------------------------------------------------------------------


def run_run(args: argparse.Namespace) -> int:
    from patch_tui.approvals.gate import Gate, GateError, find_tool
    from patch_tui.approvals.store import StoreError

    call_args = _args_object(args.args)
    if call_args is None:
        return EXIT_USAGE
    if not (args.timeout > 0):
        _err("--timeout must be a positive number of seconds")
        return EXIT_USAGE
    toolbox, unreadable = _toolbox_or_why(args)
    try:
        path = find_tool(args.tool, toolbox)
    except GateError as exc:
        _err(unreadable or str(exc))  # an unreadable toolbox is the reason the name is unknown
        return EXIT_FAILED if unreadable else EXIT_USAGE
    store = _open_store(args, "cli")
    if store is None:
        return EXIT_FAILED
    gate = Gate(store, toolbox=toolbox, timeout=args.timeout, allow_install=not args.no_install)
    try:
        outcome = gate.call(path, call_args)
    except (GateError, StoreError) as exc:
        _err(str(exc))
        return EXIT_FAILED
    finally:
        store.close()
    return _report_outcome(outcome, confirming=False)


def run_confirm(args: argparse.Namespace) -> int:
    from patch_tui.approvals.gate import Gate, GateError
    from patch_tui.approvals.store import StoreError

    toolbox, unreadable = _toolbox_or_why(args)
    if unreadable:
        _err(unreadable)  # before anything is claimed: the approval stays usable
        return EXIT_FAILED
    store = _open_store(args, "cli")
    if store is None:
        return EXIT_FAILED
    gate = Gate(store, toolbox=toolbox)
    try:
        outcome = gate.confirm_action(args.token)
    except (GateError, StoreError) as exc:
        _err(str(exc))
        return EXIT_FAILED
    finally:
        store.close()
    return _report_outcome(outcome, confirming=True)


# -- inbox ------------------------------------------------------------------------------------


def _format_row(action: Any) -> str:
    if action.damaged:
        # Shown, never hidden: the person can reject it (`inbox reject TOKEN`).
        args_text = f"DAMAGED: {action.damaged}"
    else:
        args_text = json.dumps(action.args, ensure_ascii=False)
    if len(args_text) > 120:
        args_text = args_text[:119] + "\u2026"
    # A tampered approval shows as such in the status column: it will never run.
    status = "TAMPERED" if action.tampered else action.status
    lines = [
        f"{visible(action.token)}  {visible(status):<11} {visible(action.kind):<13} "
        f"{visible(action.tool)} {visible(action.version)}"
        + ("  [damaged: can only be rejected]" if action.damaged else ""),
        f"    args:    {visible(args_text)}",
        f"    reason:  {visible(action.reason)}",
        f"    created: {action.created_at}   expires: {action.expires_at}",
    ]
    if action.decided_at:
        decided = f"    decided: {action.decided_at} by {visible(action.decided_by or '?')}"
        if action.note:
            decided += f" ({visible(action.note)})"
        lines.append(decided)
    if action.tampered:
        lines.append(
            f"    TAMPERED: {visible(action.tampered)}; never run (status in the store: "
            f"{action.status})"
        )
    return "\n".join(lines)


def _inbox_list(args: argparse.Namespace) -> int:
    from patch_tui.approvals.store import StoreError

    store = _open_store(args, "cli")
    if store is None:
        return EXIT_FAILED
    try:
        if args.all:
            actions = store.list_actions(statuses=None)
        else:
            # Pending ones, and any approval that is not genuine: a person must see those.
            actions = [
                a
                for a in store.list_actions(statuses=("pending", "approved"))
                if a.status == "pending" or a.tampered
            ]
    except StoreError as exc:
        _err(str(exc))
        return EXIT_FAILED
    finally:
        store.close()
    if args.json:
        _out([a.to_json() for a in actions])
        return EXIT_OK
    if not actions:
        print("No pending actions." if not args.all else "No actions.")
        return EXIT_OK
    print("\n\n".join(_format_row(a) for a in actions))
    return EXIT_OK


def _inbox_decide(args: argparse.Namespace, verb: str) -> int:
    from patch_tui.approvals.store import StoreError

    if verb == "approve" and getattr(args, "args", None) is not None:
        from patch_tui.commands.inboxcmd import approve_edited

        return approve_edited(args)

    store = _open_store(args, "cli")
    if store is None:
        return EXIT_FAILED
    try:
        if verb == "approve":
            decision = store.approve(args.token, note=args.note)
        else:
            decision = store.reject(args.token, reason=args.reason)
    except StoreError as exc:
        _err(str(exc))
        return EXIT_FAILED
    finally:
        store.close()
    if not decision.ok:
        _err(f"cannot {verb} {visible(args.token)}: {visible(decision.why)}")
        return EXIT_FAILED
    action = decision.action
    done = "approved" if verb == "approve" else "rejected"
    print(f"{done} {action.token} ({action.tool} {action.version})")
    return EXIT_OK


def run_inbox(args: argparse.Namespace) -> int:
    action = getattr(args, "inbox_command", None)
    if action == "list":
        return _inbox_list(args)
    if action in ("approve", "reject"):
        return _inbox_decide(args, action)
    if action in ("allow", "grants", "revoke", "export"):
        from patch_tui.commands import inboxcmd

        return int(getattr(inboxcmd, f"run_{action}")(args))
    # `patch-tui inbox`: the TUI's inbox screen, when it is built.
    import importlib

    try:
        module = importlib.import_module("patch_tui.ui.inbox.inbox")
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith("patch_tui.ui.inbox.inbox"):
            _err(
                "the inbox screen is not part of this build yet; use `patch-tui inbox list`, "
                "`patch-tui inbox approve TOKEN` or `patch-tui inbox reject TOKEN`"
            )
            return EXIT_USAGE
        raise
    entry = getattr(module, "run_inbox", None) or getattr(module, "main", None)
    if entry is None:
        _err("the inbox screen has no entry point (run_inbox); use `patch-tui inbox list`")
        return EXIT_USAGE
    return int(entry(args) or 0)


# -- serve ------------------------------------------------------------------------------------


def run_serve(args: argparse.Namespace) -> int:
    from patch_tui.mcp_server.serve import serve
    from patch_tui.settings import paths

    if not (args.timeout > 0):
        _err("--timeout must be a positive number of seconds")
        return EXIT_USAGE
    from patch_tui.mcp_server.serve import DEFAULT_MAX_ARGS_BYTES
    from patch_tui.settings.config import ConfigError, load_settings

    ttl = _settings_ttl()
    try:
        max_args = load_settings().serve_max_args_bytes
    except ConfigError:
        max_args = DEFAULT_MAX_ARGS_BYTES  # _settings_ttl said what is wrong, once
    return serve(
        paths.default_toolbox(getattr(args, "toolbox", None)),
        paths.default_store(getattr(args, "store", None)),
        timeout=args.timeout,
        allow_install=not args.no_install,
        ttl=ttl,
        max_args_bytes=max_args,
    )
