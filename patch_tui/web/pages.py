"""The pages: the pending list (live through /events), one action exactly as it would run, and
their JSON twins. What an action shows comes from approvals/review.py; every untrusted string
goes through web/display.py."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import (
    JSONResponse,
    Response,
    StreamingResponse,
)

from patch_tui.approvals import decisions, review
from patch_tui.approvals.store import Action, ActionStatus, Store
from patch_tui.web import display
from patch_tui.web.state import (
    Refused,
    WebApp,
    require_session,
)

# -- pages ----------------------------------------------------------------------------------


def _row(action: Action) -> dict[str, Any]:
    args = json.dumps(action.args, ensure_ascii=False, sort_keys=True)
    summary = display.shown(args if len(args) <= 120 else args[:119] + "\u2026")
    return {"action": action, "tool": display.shown(action.tool), "summary": summary}


def _list_context(app: WebApp) -> dict[str, Any]:
    store = app.open_store()
    pending: list[Action] = []
    recent: list[Action] = []
    if store is not None:
        pending = store.list_actions(statuses=(ActionStatus.PENDING,), limit=200)
        recent = [
            a
            for a in store.list_actions(statuses=None, limit=20)
            if a.status != ActionStatus.PENDING
        ]
    failures = app.push.failures()[-5:] if app.push is not None else []
    return {
        "pending": [_row(a) for a in pending],
        "recent": [_row(a) for a in recent],
        "push_failures": failures,
        "push_problem": app.push_problem,
    }


async def index(app: WebApp, request: Request) -> Response:
    require_session(app, request, "the list")
    return app.page("list.html", request, **await run_in_threadpool(_list_context, app))


async def list_fragment(app: WebApp, request: Request) -> Response:
    require_session(app, request, "the list")
    return app.page("_list.html", request, **await run_in_threadpool(_list_context, app))


async def events(app: WebApp, request: Request) -> Response:
    session = require_session(app, request, "the live feed")
    queue = app.live.subscribe()

    async def stream() -> AsyncIterator[bytes]:
        try:
            yield f"event: hello\ndata: {app.live.version}\n\n".encode()
            # Listening is not using: the feed ends with the session's idle timeout.
            while app.sessions.alive(session.sid):
                try:
                    version = await asyncio.wait_for(queue.get(), 15.0)
                except TimeoutError:
                    yield b": keep-alive\n\n"  # proxies close silent connections
                    continue
                yield f"event: changed\ndata: {version}\n\n".encode()
            yield b"event: signed-out\ndata: idle\n\n"
        finally:
            app.live.unsubscribe(queue)

    return StreamingResponse(
        stream(),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )


def find_action(app: WebApp, request: Request) -> Action:
    token = str(request.path_params["token"])
    action = app.store().get(token)
    if action is None:
        raise Refused(404, "no such action (it may have been cleared from the store)")
    return action


def input_fields(rv: review.Review) -> list[dict[str, Any]]:
    """The edit form: one field per input, in the tool's order, with the input's type."""
    args = rv.action.args
    fields = []
    for inp in rv.tool.inputs:
        present = inp.name in args
        value = args.get(inp.name)
        if inp.type == "string":
            text = value if isinstance(value, str) else ""
        else:
            text = json.dumps(value, ensure_ascii=False) if present else ""
        fields.append(
            {
                "name": inp.name,
                "type": inp.type,
                "required": bool(inp.required and not inp.has_default),
                "present": present,
                "text": display.shown(text).text,
                "description": display.shown(inp.description or ""),
                "checked": value is True,
            }
        )
    return fields


def _action_context(app: WebApp, action: Action) -> dict[str, Any]:
    store = app.store()
    rv = review.review(store, action, app.catalog)
    tool = rv.tool
    return {
        "rv": rv,
        "action": action,
        "tool": display.shown(action.tool),
        "version": display.shown(action.version),
        "path": display.shown(action.tool_path or "(unknown)"),
        "description": display.shown(tool.description or ""),
        "capabilities": tool.capabilities,
        "scopes": [display.shown(s) for s in tool.scopes],
        "reason": display.shown(action.reason),
        "args": display.args_view(action.args) if not action.damaged else [],
        "proposed": display.shown_json(action.proposed_args) if action.proposed_args else None,
        "note": display.shown(action.note) if action.note else None,
        "result": display.shown_json(action.result) if action.result is not None else None,
        "source": display.shown(rv.source) if rv.source is not None else None,
        "diff": [display.shown(line) for line in rv.diff],
        "fields": input_fields(rv) if rv.cannot_edit is None else [],
        "decided_by": display.shown(action.decided_by) if action.decided_by else None,
        "quorum": _quorum(app, store, action),
        "events": [
            {"at": e.at, "event": display.shown(e.event), "actor": display.shown(e.actor)}
            for e in store.events(action.token, limit=50)
        ],
        "workspace_warning": (
            display.shown(rv.workspace_warning) if rv.workspace_warning is not None else None
        ),
        "flagged": any(a.name.flagged or a.value.flagged for a in display.args_view(action.args)),
    }


def _quorum(app: WebApp, store: Store, action: Action) -> dict[str, Any] | None:
    """Where the call stands among its approvers (the decisions service's own count)."""
    if action.status not in (ActionStatus.PENDING, ActionStatus.APPROVED):
        return None
    quorum = decisions.standing(store, action, app.approvers())
    return {
        "line": display.shown(quorum.line()),
        "required": quorum.required,
        "approved_by": [display.shown(name) for name in quorum.approved_by],
        "problems": [display.shown(why) for _code, why in quorum.problems],
    }


async def action_page(app: WebApp, request: Request) -> Response:
    require_session(app, request, "an action")
    action = find_action(app, request)
    context = await run_in_threadpool(_action_context, app, action)
    return app.page("action.html", request, **context)


async def action_json(app: WebApp, request: Request) -> Response:
    require_session(app, request, "an action")
    action = find_action(app, request)
    rv = review.review(app.store(), action, app.catalog)
    return JSONResponse(
        {
            **action.to_json(),
            "tool_path": action.tool_path,
            "source_sha256": action.source_sha256,
            "args_sha256": action.args_sha256,
            "can_approve": rv.cannot_approve is None,
            "cannot_approve": rv.cannot_approve,
            "diff": rv.diff,
        }
    )
