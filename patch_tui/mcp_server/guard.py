"""`patch-tui guard`: the inbox in front of any MCP server (the Patch runtime, or another).

    guard(command, store_path, toolbox_dir=None, holds=(), wait=50) -> int   (blocks)

Guard is an MCP server on stdio that starts COMMAND as its upstream MCP server (the `mcp` SDK's
client on that side, its server on ours) and relays between the two:

- tools/list, list-changed notifications, prompts and resources, and every call it does not gate
  pass through unchanged (a `patch_confirm_action` tool is added to the listing when the upstream
  has none, so an agent in front of any server can confirm);
- when the upstream answers a call with the Patch runtime's `confirmation_required` (anywhere in
  its answer: `patch_compose` nests it under `paused`), guard records a pending action in the
  store (tool, version and source sha256 from the runtime's toolbox when it finds the file, the
  exact args, the reason, the upstream token) and puts its own `confirmation_required` in its
  place, whose instruction says a person approves it in the patch-tui inbox. The upstream token
  never reaches the agent, and guard never forwards a `patch_confirm_action` it did not make:
  the runtime's own "ask in chat, then confirm" path is closed;
- calls to tools matching `--hold GLOB`, or annotated `destructiveHint: true` by the upstream, are
  held by guard itself before anything is forwarded (servers that are not the Patch runtime);
- `patch_confirm_action` with guard's token waits for the decision (mcp_server.confirm_wait), then:
  pending -> `awaiting_approval`; rejected -> `rejected` with the reason; approved -> claimed once
  (the store's atomic claim: of many confirms, across processes, one wins), the approval checked
  (its decision event exists, the args still hash to what was approved, the tool's source is
  unchanged), then confirmed upstream. When the upstream token expired meanwhile (the runtime
  keeps them 60 s, in memory), or the approved args differ from the proposed ones (the store
  refuses such edits of upstream-held calls today; this keeps the runtime's token, which holds
  the proposed args, from ever being confirmed if it allows them), guard calls the tool again
  with the approved args and
  confirms the fresh token at once, only when it is for the same tool and args. The upstream's
  answer is passed back (with `args_changed` after an edit) and recorded as the action's result.
- a standing grant (approvals.grants) that matches a human_confirm hold approves it at once, and the
  call is confirmed in the same request, as serve does.

Tainted input to a human_confirm tool takes two approvals. The runtime checks taint before
human_confirm, and confirming its taint token runs the call with every check skipped, so one "yes"
to the taint would let the irreversible call through. When a person approves a `tainted_input`
action and the tool is human_confirm as the runtime reads its file (or guard cannot read the file,
so cannot tell: it assumes so), confirming it forwards nothing: guard records a `human_confirm`
action for the same call (same args, the runtime's token carried over, `after_tainted_input`
naming the first), finishes the first as `passed_to_human_confirm`, and answers the agent a new
confirmation_required. Only that action's approval confirms upstream. This is serve's behaviour
too (approvals.gate), and no standing grant applies to the second action (as in serve). When a
renewed upstream token (below) is held for a kind of gate the person did not approve, it is never
confirmed: the answer becomes a new inbox item.

What "the tool's source" is: the tool file's sha256 when guard finds it in the toolbox (`--toolbox`,
else `PATCH_CAT_TOOLBOX_DIR`, else the runtime's default folder); otherwise the sha256 of the tool's
listing by the upstream (name, description, input schema, annotations), which is what the agent
and the person saw. The check and the upstream's own read of the file are two moments; a change
between them (milliseconds) cannot be prevented from here, and is detected after the run from the
runtime's audit record (mcp_server.guard_audit): output withheld, action failed, run id kept.

When the upstream dies, every call in flight and after answers an error naming its exit; an
action claimed while it died is recorded `failed` ("unknown whether it ran"), never re-run.
Modules: this one is the server and the command (build_server, connect_upstream, guard); the
state and decisions are mcp_server.guard_state (Guard), the protocol's shapes
mcp_server.guard_protocol, the audit check mcp_server.guard_audit.
mcp is imported inside the functions that need it; Textual is never imported.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

from patch_tui import __version__
from patch_tui.approvals.open_store import open_store
from patch_tui.approvals.store import StoreError
from patch_tui.mcp_server.confirm_wait import DEFAULT_WAIT
from patch_tui.mcp_server.guard_protocol import (  # noqa: F401 - re-exported for callers
    META_CONFIRM,
    UpstreamGone,
    _error,
    answer_payload,
    confirm_tool,
    is_confirmation,
    log,
    refusal,
    same_args,
    token_gone,
)
from patch_tui.mcp_server.guard_state import Guard
from patch_tui.runtime.toolbox import Toolbox, ToolboxError
from patch_tui.settings.store_location import DatabaseURL, as_location

# -- the server -----------------------------------------------------------------------------------


def build_server(state: Guard, capabilities: Any) -> Any:
    """Guard's lowlevel mcp Server; prompts and resources only when the upstream has them."""
    import mcp_types as types
    from mcp.server.lowlevel.server import Server

    async def on_list_tools(ctx: Any, params: Any) -> Any:
        state.sessions = [ctx.session]
        try:
            return await state.list_tools(getattr(params, "cursor", None) if params else None)
        except UpstreamGone as exc:
            from mcp.shared.exceptions import MCPError

            raise MCPError(types.INTERNAL_ERROR, str(exc)) from None

    async def on_call_tool(ctx: Any, params: Any) -> Any:
        state.sessions = [ctx.session]
        args = dict(params.arguments or {})
        try:
            return await state.call(params.name, args, ctx.session.report_progress)
        except StoreError as exc:
            log(f"{params.name}: {exc}")
            return _error("StoreError", str(exc))

    handlers: dict[str, Any] = {}
    if capabilities is not None and capabilities.prompts is not None:

        async def on_list_prompts(ctx: Any, params: Any) -> Any:
            return await state.upstream.list_prompts(cursor=getattr(params, "cursor", None))

        async def on_get_prompt(ctx: Any, params: Any) -> Any:
            return await state.upstream.get_prompt(params.name, params.arguments)

        handlers.update(on_list_prompts=on_list_prompts, on_get_prompt=on_get_prompt)
    if capabilities is not None and capabilities.resources is not None:

        async def on_list_resources(ctx: Any, params: Any) -> Any:
            return await state.upstream.list_resources(cursor=getattr(params, "cursor", None))

        async def on_list_templates(ctx: Any, params: Any) -> Any:
            return await state.upstream.list_resource_templates(
                cursor=getattr(params, "cursor", None)
            )

        async def on_read_resource(ctx: Any, params: Any) -> Any:
            return await state.upstream.read_resource(str(params.uri))

        handlers.update(
            on_list_resources=on_list_resources,
            on_list_resource_templates=on_list_templates,
            on_read_resource=on_read_resource,
        )
    instructions = getattr(state.upstream, "instructions", None)
    note = (
        "Calls that need a person's approval answer confirmation_required: a person approves or "
        "rejects them in the patch-tui inbox (never in chat); then call patch_confirm_action "
        "with the token, which waits for the decision. Never approve a call yourself."
    )
    return Server(
        "patch-tui-guard",
        version=__version__,
        instructions=f"{instructions}\n\n{note}" if instructions else note,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
        **handlers,
    )


@asynccontextmanager
async def connect_upstream(state: Guard, command: Sequence[str]) -> AsyncIterator[Any]:
    """The upstream as an mcp Client over stdio; its notifications are relayed downstream."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    async def on_message(message: Any) -> None:
        if isinstance(message, Exception):
            log(f"the upstream sent something unreadable: {message}")
            return
        method = getattr(message, "method", None)
        if method is None:
            method = getattr(getattr(message, "root", None), "method", None)
        if method == "notifications/tools/list_changed":
            state.listed.clear()
        if method in (
            "notifications/tools/list_changed",
            "notifications/prompts/list_changed",
            "notifications/resources/list_changed",
        ):
            for session in list(state.sessions):
                try:
                    if method.startswith("notifications/tools"):
                        await session.send_tool_list_changed()
                    elif method.startswith("notifications/prompts"):
                        await session.send_prompt_list_changed()
                    else:
                        await session.send_resource_list_changed()
                except Exception as exc:  # a client gone: the relay goes on
                    log(f"could not relay {method}: {exc}")

    params = StdioServerParameters(command=command[0], args=list(command[1:]), env=dict(os.environ))
    with upstream_stderr() as errlog:
        transport = stdio_client(params, errlog=errlog)
        async with Client(
            transport, mode="legacy", cache=None, message_handler=on_message
        ) as client:
            errlog.close()  # the upstream holds its own copy: EOF when it exits
            yield client


@contextmanager
def upstream_stderr() -> Iterator[Any]:
    """A pipe for the upstream's stderr, relayed to ours line by line through the display rule.

    The upstream's stderr would otherwise be our stderr itself, and whatever it writes (an OSC 52
    clipboard write, an OSC 0 window title, C1 controls) would reach the host's terminal or log
    viewer as it is. Each line is shown as `patch-tui guard: upstream: <line>` with every
    control and invisible character escaped; bytes that are not UTF-8 are shown as `\\xNN`."""
    import threading

    read_fd, write_fd = os.pipe()
    reader = os.fdopen(read_fd, "rb")
    writer = os.fdopen(write_fd, "w")

    def relay() -> None:
        with reader:
            while True:
                line = reader.readline(64 * 1024)
                if not line:
                    return
                text = line.rstrip(b"\n").decode("utf-8", errors="backslashreplace")
                log(f"upstream: {text}")

    threading.Thread(target=relay, name="guard-upstream-stderr", daemon=True).start()
    try:
        yield writer
    finally:
        if not writer.closed:
            writer.close()


def guard(
    command: Sequence[str],
    store_path: str | os.PathLike[str] | DatabaseURL,
    *,
    toolbox_dir: str | os.PathLike[str] | None = None,
    holds: Sequence[str] = (),
    wait: float = DEFAULT_WAIT,
    ttl: float | None = None,
) -> int:
    """Serve until stdin closes. Returns the exit code; problems are one line on stderr."""
    import anyio
    from mcp.server.lowlevel.server import NotificationOptions
    from mcp.server.stdio import stdio_server

    from patch_tui.approvals.store import DEFAULT_TTL

    if not command:
        log("no upstream command: patch-tui guard [options] -- COMMAND [ARG...]")
        return 2
    toolbox: Toolbox | None = None
    if toolbox_dir is not None and Path(toolbox_dir).expanduser().is_dir():
        try:
            toolbox = Toolbox.open(toolbox_dir)
        except ToolboxError as exc:
            log(f"no toolbox ({exc}); tools are bound to the upstream's listing instead")
    try:
        store = open_store(
            as_location(store_path), actor="guard", ttl=DEFAULT_TTL if ttl is None else ttl
        )
        store.mark_interrupted()
    except StoreError as exc:
        log(str(exc))
        # A database down or refusing us at start: 2, as a usage problem (nothing ran).
        return 2 if type(exc).__name__ == "StoreUnreachable" else 1
    state = Guard(store, toolbox=toolbox, holds=holds, wait=wait, label=" ".join(command)[:200])
    code = 0

    async def main() -> None:
        nonlocal code
        async with AsyncExitStack() as stack:
            try:
                state.upstream = await stack.enter_async_context(connect_upstream(state, command))
            except Exception as exc:
                log(f"cannot start the upstream server {command[0]!r}: {_why(exc)}")
                code = 1
                return
            log(
                f"in front of {state.label!r} (store: {store.path}; toolbox: "
                f"{toolbox.root if toolbox else 'none'})"
            )
            server = build_server(state, state.upstream.server_capabilities)
            async with stdio_server() as (read_stream, write_stream):
                await server.run(
                    read_stream,
                    write_stream,
                    server.create_initialization_options(NotificationOptions(tools_changed=True)),
                )

    try:
        anyio.run(main)
    except KeyboardInterrupt:
        pass
    except BaseException as exc:  # an upstream dying under the client's task group lands here
        if not isinstance(exc, SystemExit):
            log(f"stopped: {_why(exc)}")
            code = code or 1
    finally:
        store.close()
    return code


def _why(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_why(e) for e in exc.exceptions)
    return f"{type(exc).__name__}: {exc}"
