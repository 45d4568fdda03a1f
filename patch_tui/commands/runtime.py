"""`patch-tui run`, `confirm` and `serve`: the runtime side, headless (`inbox` is in inboxcmd.py,
which shares this module's helpers).

Exit codes are part of the interface (issue 3):
- run:     0 and the result JSON on stdout; 3 and the confirmation_required JSON on stdout when
           the call is held; 1 when the tool failed (message on stderr); 2 usage (bad --args,
           unknown tool, unknown or missing input).
- confirm: 0 only for the call that actually ran the action (and the tool succeeded); 1 otherwise,
           with the status JSON on stdout (awaiting_approval, rejected, expired, tool_changed,
           args_changed, tampered, unknown_token, already_used) and a sentence on stderr; 3 when confirming a taint
           approval opened the tool's own human_confirm action.
- store problems are 1 everywhere, with one clear line, never a traceback; a store that cannot
  be opened at all (a PostgreSQL server down or refusing us, an unknown `--store` URL, the
  `postgres` extra missing) is 2.

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

# What `patch-tui run` of a call that is not held never imports (issue 27: `run` within 2x of
# `python3 tool.py`), and why; tests/e2e/test_run_imports.py checks each in a real process.
RUN_LAZY_MODULES: dict[str, str] = {
    "pydantic": "the manifest is read plainly where the model would read it the same "
    "(format/plain_manifest.py); about a third of a run was importing pydantic and the model",
    "patch_tui.format.manifest": "the pydantic model: for a manifest the plain reading leaves to it",
    "pydantic_settings": "the settings `run` needs are read plainly when the file allows",
    "patch_tui.approvals.decisions": "signed decisions and their verification: confirm's",
    "patch_tui.approvals.grants": "standing grants: a human_confirm hold's",
    "patch_tui.approvals.edits": "edited args: confirm's",
    "patch_tui.approvals.approvers": "the trusted approvers: confirm's",
    "patch_tui.approvals.keys": "approver keys: signing and verifying",
    "patch_tui.approvals.sshsig": "ssh signatures: signing and verifying",
    "patch_tui.runtime.warm": "serve's pool of warm sandboxed processes",
    "patch_tui.runtime.watch": "no folder watcher to tell of our own writes",
    "asyncio": "nothing asynchronous in a run",
    "textual": "no UI",
    "mcp": "no MCP",
    "anthropic": "no model calls",
}


def _err(message: str) -> None:
    # Messages quote tool names, tokens and store rows: no control character reaches the terminal.
    print(f"patch-tui: {visible(message)}", file=sys.stderr)


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
    # bidi controls or escape sequences inside tool args or results. A list (`inbox list --json`
    # of 10,000 actions) is printed one item per line: json's C encoder writes a line, while
    # `indent` takes its pure-Python encoder, which was most of the listing's time (about 1.2 s
    # of 2 under a profiler).
    if isinstance(value, list):
        from patch_tui.format.json_text import reusable_encoder

        # json.dumps(item, ensure_ascii=True) per item, from one encoder made once.
        items = ",\n".join(map(reusable_encoder(json.JSONEncoder(ensure_ascii=True)), value))
        if not items:
            print("[]")
            return
        # In three writes: 5.8 MB for 10,000 actions, not copied once more into one string.
        sys.stdout.write("[\n")
        sys.stdout.write(items)
        sys.stdout.write("\n]\n")
    else:
        print(json.dumps(value, ensure_ascii=True, indent=2))


def _out_rows(rows: list[dict[str, Any]]) -> None:
    """Store rows (`inbox list --json`) as `_out` prints a list, a row per line, ASCII only, but
    compact and written by orjson: 10,000 actions in about 8 ms, not 50-80 (format/json_text.py;
    the store decodes its JSON columns strictly, which that needs)."""
    import io

    from patch_tui.format.json_text import write_ascii_json_lines

    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:  # a text-only stdout (a caller's StringIO)
        text = io.BytesIO()
        write_ascii_json_lines(rows, text)
        sys.stdout.write(text.getvalue().decode("ascii"))
        return
    sys.stdout.flush()  # what was printed before comes first
    write_ascii_json_lines(rows, buffer)
    buffer.flush()


def _settings_ttl() -> float | None:
    from patch_tui.approvals.values import DEFAULT_TTL
    from patch_tui.settings.config import ConfigError, read_setting

    try:
        # Read plainly when the file allows (pydantic-settings is most of a `run`'s imports).
        return float(read_setting("confirm_ttl", DEFAULT_TTL))
    except ConfigError as exc:
        _err(f"{exc} (using the default confirm_ttl, {DEFAULT_TTL} s)")
        return None


def _open_store(args: argparse.Namespace, label: str, *, pooled: bool = True) -> Any:
    """The store, or None after printing why (the caller exits 1). A store location that is no
    store (an unknown URL scheme, a missing driver extra) or a database that cannot be reached
    at all is one line and exit 2: nothing was done, and trying again as is will not help.
    `pooled=False`: a one-shot command's store (open_store)."""
    from patch_tui.approvals.open_store import open_store
    from patch_tui.approvals.values import DEFAULT_TTL, StoreError

    ttl = _settings_ttl()
    try:
        return open_store(
            _store_location(args),
            actor=label,
            ttl=DEFAULT_TTL if ttl is None else ttl,
            pooled=pooled,
        )
    except StoreError as exc:
        _err(visible(str(exc)))
        if _cannot_start(exc):
            raise SystemExit(EXIT_USAGE) from None
        return None


def _store_location(args: argparse.Namespace) -> Any:
    """--store, PATCH_TUI_STORE, the config's `store`, the default file; a location that is no
    store is one line and exit 2."""
    from patch_tui.settings.store_location import StoreLocationError, store_location

    try:
        return store_location(getattr(args, "store", None))
    except StoreLocationError as exc:
        _err(str(exc))
        raise SystemExit(EXIT_USAGE) from None


def _cannot_start(exc: Exception) -> bool:
    """The database is down, unreachable or refuses us, or its driver is missing."""
    from patch_tui.approvals.open_store import MISSING_EXTRA

    return type(exc).__name__ == "StoreUnreachable" or str(exc) == MISSING_EXTRA


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


def _report_outcome(outcome: Any, *, confirming: bool, warned: bool = False) -> int:
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
        warning = outcome.payload.get("workspace_warning")
        if isinstance(warning, str) and not warned:
            _err(f"warning: {visible(warning)}")
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
    from patch_tui.approvals.values import StoreError

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
        warning = gate.workspace_warning(path, call_args)
        if warning is not None:
            # Before the run: what will fail, and how to set the workspace (held calls say it
            # in their answer instead).
            _err(f"warning: {visible(warning)}")
        outcome = gate.call(path, call_args, by_person=args.as_person)
    except (GateError, StoreError) as exc:
        _err(str(exc))
        return EXIT_FAILED
    finally:
        store.close()
    code = _report_outcome(outcome, confirming=False, warned=warning is not None)
    if outcome.action is not None and outcome.action.kind == "tainted_input" and sys.stdin.isatty():
        # A person at a terminal, whose typed args matched a tool's earlier output.
        _err(
            "typed these args yourself? `--as-person` says so: values a person types are "
            "never taken for another tool's output"
        )
    return code


def run_confirm(args: argparse.Namespace) -> int:
    from patch_tui.approvals.gate import Gate, GateError
    from patch_tui.approvals.values import StoreError

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
    if not getattr(args, "no_warm", False):
        from patch_tui.runtime.warm import enable_pool

        enable_pool()  # a sandboxed call as a fork of a warm, already sandboxed process
    try:
        max_args = load_settings().serve_max_args_bytes
    except ConfigError:
        max_args = DEFAULT_MAX_ARGS_BYTES  # _settings_ttl said what is wrong, once
    return serve(
        paths.default_toolbox(getattr(args, "toolbox", None)),
        _store_location(args),
        timeout=args.timeout,
        allow_install=not args.no_install,
        ttl=ttl,
        max_args_bytes=max_args,
    )
