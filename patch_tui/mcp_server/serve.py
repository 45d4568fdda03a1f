"""`patch-tui serve`: an MCP server on stdio over a toolbox, sharing the confirmation store.

    serve(toolbox_dir, store_path, *, timeout=60, allow_install=True) -> int   (blocks)

tools/list is every valid tool in the toolbox (name, description, inputSchema from its inputs,
annotations from its capabilities) plus `patch_confirm_action`, `patch_list_tools` and
`patch_list_runs`. A tool file that does not parse is left out with one line on stderr; it never
breaks the list. tools/call goes through approvals.gate: a human_confirm or tainted call comes back as
the `confirmation_required` object, and only runs after a person approved it in the inbox (the
TUI, or `patch-tui inbox approve`) and the host calls `patch_confirm_action`. Failures come back
with `isError: true`; every result carries `structuredContent` (an object: a non-object result is
wrapped as {"result": value}).

The catalog of tools and their listing live in mcp_server/catalog.py (re-exported here). The
toolbox folder is watched (watchfiles); when the set of tools or any tool's listing changes,
the server sends `notifications/tools/list_changed` (handshake-era clients, which is what MCP hosts
speak today) and publishes the event on the `subscriptions/listen` bus (2026-07-28 clients). In a
Patch toolbox (`tools/` + `index.json`), index.json is kept in sync with the files, which are the
truth.

Everything that blocks (the store, running a tool) runs in a worker thread, so one slow tool
never stalls the protocol loop. Tool calls have their own pool of threads and tools/list its own,
so any number of long calls never delays tools/list or ping (the SDK answers ping itself).

Hostile clients: a line that is not JSON gets the JSON-RPC parse error (-32700), JSON that is not
a JSON-RPC message gets invalid request (-32600), and serving goes on. Arguments are checked
against the tool's input schema before anything is held or run (gate.check_args) and bigger
arguments than `serve_max_args_bytes` are refused, never stored. mcp and watchfiles are imported inside the functions that need
them; Textual is never imported.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from patch_tui import __version__
from patch_tui.approvals.gate import Gate, Outcome
from patch_tui.approvals.open_store import open_store
from patch_tui.approvals.store import Store
from patch_tui.mcp_server.catalog import (  # noqa: F401 - re-exported: callers import them from serve
    META_CONFIRM,
    META_LIST_RUNS,
    META_LIST_TOOLS,
    META_NAMES,
    ToolCatalog,
    ToolEntry,
    _listing_key,
    describe,
    log,
    meta_tools,
    sync_index,
    tool_annotations,
)
from patch_tui.runtime.runner import DEFAULT_TIMEOUT, list_runs
from patch_tui.runtime.toolbox import Toolbox, ToolboxError
from patch_tui.settings.store_location import DatabaseURL, as_location

# Tool calls in flight at once (each waits on a process or a person); more wait their turn.
CALL_THREADS = 64
DEFAULT_MAX_ARGS_BYTES = 1 << 20


class PatchServer:
    """The server's state, independent of the transport (tests drive it over real stdio)."""

    def __init__(
        self,
        toolbox: Toolbox,
        store: Store,
        *,
        timeout: float,
        allow_install: bool,
        confirm_wait: float = 0.0,
        max_args_bytes: int = DEFAULT_MAX_ARGS_BYTES,
    ) -> None:
        self.toolbox = toolbox
        self.store = store
        # How long patch_confirm_action waits for a person's decision (mcp_server.confirm_wait).
        self.confirm_wait = confirm_wait
        self.max_args_bytes = max_args_bytes
        # Calls rescan from their threads while tools/list rescans from its own.
        self._scan_lock = threading.Lock()
        from patch_tui.runtime.sandbox import serve_workspace

        self.gate = Gate(
            store,
            toolbox=toolbox,
            timeout=timeout,
            allow_install=allow_install,
            workspace=serve_workspace(),  # a configured folder, never where serve was started
        )
        self.catalog = ToolCatalog(toolbox)
        self.entries = self.catalog.scan()
        self.listing = _listing_key(self.entries)
        sync_index(toolbox, self.entries)
        self.sessions: list[Any] = []

    def rescan(self) -> bool:
        """Re-read the folder; True when what tools/list shows changed."""
        with self._scan_lock:
            self.entries = self.catalog.scan()
            sync_index(self.toolbox, self.entries)
            listing = _listing_key(self.entries)
            changed = listing != self.listing
            self.listing = listing
            return changed

    def remember(self, session: Any) -> None:
        # Each request gets its own ServerSession over the one stdio connection; notifications
        # without a related request go out on the connection, so the latest session is enough.
        self.sessions = [session]

    # -- handlers (called in a worker thread) --------------------------------------------------

    def call(self, name: str, args: dict[str, Any]) -> tuple[Any, bool]:
        """(payload, is_error) for tools/call."""
        if not isinstance(args, dict):
            return {"error": "the arguments must be a JSON object"}, True
        size = _json_size(args, self.max_args_bytes)
        if size > self.max_args_bytes:
            return {
                "error": (
                    f"the arguments are more than {self.max_args_bytes} bytes of JSON: refused "
                    "(the limit is the setting serve_max_args_bytes, env PATCH_TUI_SERVE_MAX_ARGS_BYTES)"
                )
            }, True
        if name == META_CONFIRM:
            token = args.get("confirmation_token")
            if not isinstance(token, str) or not token:
                return runtime_error(
                    "PatchError", {"error": "Missing required string argument: confirmation_token"}
                ), True
            return _answer(self.gate.confirm_action(token))
        if name == META_LIST_TOOLS:
            self.rescan()
            return [
                {
                    "name": e.name,
                    "version": e.manifest.version,
                    "description": e.manifest.description,
                    "human_confirm": e.manifest.capabilities.human_confirm,
                }
                for _, e in sorted(self.entries.items())
            ], False
        if name == META_LIST_RUNS:
            limit = args.get("limit", 20)
            if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
                limit = 20
            tool = args.get("tool_name")
            return list_runs(
                self.toolbox.runs_dir, min(limit, 200), tool if isinstance(tool, str) else None
            ), False
        if name in META_NAMES:
            from patch_tui.mcp_server import meta

            return meta.call(self, name, args)
        entry = self.entries.get(name)
        if entry is None or not entry.path.exists():
            self.rescan()
            entry = self.entries.get(name)
        if entry is None:
            return {
                "error": "ToolNotFoundError",
                "message": f'Tool "{name}" not found in toolbox.',
            }, True
        return _answer(self.gate.call(entry.path, args))


def _json_size(value: Any, limit: int) -> int:
    """The size of `value` as compact JSON in bytes, counting no further than past `limit`."""
    size = 0
    for chunk in json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).iterencode(value):
        size += len(chunk.encode("utf-8"))
        if size > limit:
            break
    return size


def _answer(outcome: Outcome) -> tuple[Any, bool]:
    payload = outcome.payload
    if outcome.is_error:
        payload = runtime_error(
            "ToolOutputError" if outcome.run is not None else "PatchError", payload
        )
    return payload, outcome.is_error


def runtime_error(error_class: str, payload: Any) -> Any:
    """An error payload in the runtime's shape, `{"error": <class>, "message": <text>}`, keeping
    any other fields (run_id, ...) as extras. Payloads that already carry a message (expired,
    unknown_token, tool_changed answers) are left as they are."""
    if (
        isinstance(payload, dict)
        and isinstance(payload.get("error"), str)
        and "message" not in payload
    ):
        return {**payload, "error": error_class, "message": payload["error"]}
    return payload


def _result(payload: Any, is_error: bool) -> Any:
    import mcp_types as types

    structured = payload if isinstance(payload, dict) else {"result": payload}
    text = json.dumps(payload, ensure_ascii=False, indent=2)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=structured,
        is_error=is_error,
    )


def build_server(state: PatchServer, watch: bool = True) -> Any:
    """The lowlevel mcp Server wired to `state`, with the folder watcher in its lifespan."""
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel.server import Server
    from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged

    bus = InMemorySubscriptionBus()
    # Separate pools: 60 slow calls must never make tools/list wait for a thread (anyio's
    # default pool is shared and holds 40).
    call_threads = anyio.CapacityLimiter(CALL_THREADS)
    list_threads = anyio.CapacityLimiter(4)

    async def notify_changed() -> None:
        await bus.publish(ToolsListChanged())
        for session in list(state.sessions):
            try:
                await session.send_tool_list_changed()
            except Exception as exc:  # a closed client must not stop the watcher
                log(f"could not notify a client of the tool list change: {exc}")
                state.sessions = [s for s in state.sessions if s is not session]

    async def watch_folder() -> None:
        from watchfiles import awatch

        folder = state.toolbox.tools_dir if state.toolbox.tools_dir.is_dir() else state.toolbox.root
        # The index and runs live next to tools/, so watching tools/ alone never sees our own writes.
        # A short rust_timeout: the watch thread cannot be cancelled, only outwaited on shutdown.
        try:
            async for _changes in awatch(
                folder, debounce=200, step=50, rust_timeout=250, recursive=False
            ):
                changed = await anyio.to_thread.run_sync(state.rescan, limiter=list_threads)
                if changed:
                    await notify_changed()
        except (OSError, RuntimeError) as exc:
            # No watcher (inotify limits, odd filesystems): serving goes on; tools/list still
            # re-reads the folder on every call, only the push notification is lost.
            log(f"not watching {folder} for changes: {exc}")

    @asynccontextmanager
    async def lifespan(_server: Any) -> AsyncIterator[dict[str, Any]]:
        async with anyio.create_task_group() as tg:
            if watch:
                tg.start_soon(watch_folder)
            yield {}
            tg.cancel_scope.cancel()

    async def on_list_tools(ctx: Any, params: Any) -> Any:
        state.remember(ctx.session)
        await anyio.to_thread.run_sync(state.rescan, limiter=list_threads)
        tools = [describe(e) for _, e in sorted(state.entries.items())]
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=t["name"],
                    description=t["description"],
                    input_schema=t["input_schema"],
                    annotations=types.ToolAnnotations(**t["annotations"]),
                )
                for t in [*meta_tools(), *tools]
            ]
        )

    async def on_call_tool(ctx: Any, params: Any) -> Any:
        state.remember(ctx.session)
        args = params.arguments or {}
        token = args.get("confirmation_token") if params.name == META_CONFIRM else None
        if isinstance(token, str) and token:
            from patch_tui.mcp_server.confirm_wait import wait_for_decision

            # Waits (with progress) while the action is pending, so the answer is the decision.
            await wait_for_decision(
                state.store, token, wait=state.confirm_wait, report=ctx.session.report_progress
            )
        try:
            payload, is_error = await anyio.to_thread.run_sync(
                state.call, params.name, args, limiter=call_threads
            )
        except Exception as exc:  # a clear isError answer, never a dropped connection
            log(f"{params.name}: {type(exc).__name__}: {exc}")
            payload, is_error = {"error": type(exc).__name__, "message": str(exc)}, True
        return _result(payload, is_error)

    return Server(
        "patch-tui",
        version=__version__,
        instructions=(
            "Tools from a Patch toolbox. A call may answer confirmation_required: show it to the "
            "user, who approves or rejects it in the patch-tui inbox; then call "
            "patch_confirm_action with its token. Never approve a call yourself."
        ),
        lifespan=lifespan,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
        on_subscriptions_listen=ListenHandler(bus),
    )


def malformed_error(exc: Exception) -> tuple[Any, int, str]:
    """(id, code, message) of the JSON-RPC error for a line the transport could not read:
    -32700 when it is not JSON, -32600 when it is JSON but not a JSON-RPC message (with the
    request's id when one can be read from it, else null)."""
    errors: list[Any] = []
    errors_of = getattr(exc, "errors", None)
    if callable(errors_of):
        try:
            errors = list(errors_of())
        except Exception:  # not a pydantic error after all
            errors = []
    if not errors or any(e.get("type") == "json_invalid" for e in errors):
        return None, -32700, "Parse error: the message is not valid JSON"
    request_id: Any = None
    for err in errors:
        whole = err.get("input")
        if isinstance(whole, dict) and "id" in whole:
            candidate = whole["id"]
            if isinstance(candidate, str) or (
                isinstance(candidate, int) and not isinstance(candidate, bool)
            ):
                request_id = candidate
            break
    first = errors[0]
    where = ".".join(str(p) for p in first.get("loc", ())[1:]) or "the message"
    return (
        request_id,
        -32600,
        f"Invalid Request: {where}: {first.get('msg', 'not a JSON-RPC message')}",
    )


async def _answer_malformed(exc: Exception, write_stream: Any) -> None:
    import anyio
    import mcp_types as types
    from mcp.shared.message import SessionMessage

    request_id, code, message = malformed_error(exc)
    reply = types.JSONRPCError(
        jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message[:500])
    )
    try:
        await write_stream.send(SessionMessage(reply))
    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
        pass  # the connection is closing


def serve(
    toolbox_dir: str | os.PathLike[str],
    store_path: str | os.PathLike[str] | DatabaseURL,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    allow_install: bool = True,
    ttl: float | None = None,
    max_args_bytes: int = DEFAULT_MAX_ARGS_BYTES,
) -> int:
    """Serve until stdin closes. Returns the exit code; problems are one line on stderr."""
    import anyio
    from mcp.server.lowlevel.server import NotificationOptions
    from mcp.server.stdio import stdio_server

    from patch_tui.approvals.store import DEFAULT_TTL, StoreError

    try:
        toolbox = Toolbox.open(toolbox_dir)
    except ToolboxError as exc:
        log(f"no toolbox: {exc}")
        return 2
    try:
        store = open_store(
            as_location(store_path), actor="mcp", ttl=DEFAULT_TTL if ttl is None else ttl
        )
        store.mark_interrupted()
    except StoreError as exc:
        log(str(exc))
        # A database down or refusing us at start: 2, as a usage problem (nothing ran).
        return 2 if type(exc).__name__ == "StoreUnreachable" else 1
    from patch_tui.mcp_server.confirm_wait import confirm_wait_setting

    state = PatchServer(
        toolbox,
        store,
        timeout=timeout,
        allow_install=allow_install,
        confirm_wait=confirm_wait_setting(),
        max_args_bytes=max_args_bytes,
    )
    log(f"serving {len(state.entries)} tools from {toolbox.root} (store: {store.path})")
    server = build_server(state)

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            screened_send, screened = anyio.create_memory_object_stream[Any](0)

            async def screen() -> None:
                # The SDK's stdio reader hands a line it cannot read on as an exception, which
                # its dispatcher only logs: the client would wait forever. Answer it here.
                async with screened_send:
                    async for item in read_stream:
                        if isinstance(item, Exception):
                            await _answer_malformed(item, write_stream)
                        else:
                            await screened_send.send(item)

            async with anyio.create_task_group() as tg:
                tg.start_soon(screen)
                await server.run(
                    screened,
                    write_stream,
                    server.create_initialization_options(NotificationOptions(tools_changed=True)),
                )
                tg.cancel_scope.cancel()

    try:
        anyio.run(main)
    except KeyboardInterrupt:
        pass
    finally:
        store.close()
    return 0
