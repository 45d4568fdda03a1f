"""What the meta tools of `patch-tui serve` share (mcp_server.meta): their names, the runtime's
error shape (MetaError), argument readers, and a call of a toolbox tool as a direct call."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from patch_tui.mcp_server.serve import PatchServer

GENERATE = "patch_generate_tool"
RUN = "patch_run_tool"
LIST = "patch_list_tools"
CONFIRM = "patch_confirm_action"
LIST_RUNS = "patch_list_runs"
AUTH_REGISTER = "patch_auth_register"
AUTH_STATUS = "patch_auth_status"
REPLAY = "patch_replay"
COMPOSE = "patch_compose"
NAMES = (GENERATE, RUN, AUTH_REGISTER, AUTH_STATUS, REPLAY, COMPOSE)
# The runtime's tools/list order (server.ts META_TOOLS).
ORDER = (GENERATE, RUN, LIST, AUTH_REGISTER, AUTH_STATUS, CONFIRM, LIST_RUNS, REPLAY, COMPOSE)


class MetaError(Exception):
    """A refused or failed meta call; `cls` is the runtime's error class name."""

    def __init__(self, message: str, cls: str = "PatchError") -> None:
        super().__init__(message)
        self.cls = cls


def _error(exc: MetaError) -> tuple[Any, bool]:
    return {"error": exc.cls, "message": str(exc)}, True


def _require_string(args: dict[str, Any], key: str) -> str:
    value = args.get(key)
    if not isinstance(value, str) or not value:
        raise MetaError(f"Missing required string argument: {key}")
    return value


def _optional_string(args: dict[str, Any], key: str) -> str | None:
    value = args.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise MetaError(f'Argument "{key}" must be a string if provided.')
    return value or None


# -- a call, as a direct call ------------------------------------------------------------------


def invoke(server: PatchServer, tool: str, args: dict[str, Any]) -> tuple[Any, bool]:
    """A toolbox tool only (never a meta tool), through serve's gate like a direct call."""
    if tool in ORDER:  # every one of the runtime's nine meta tools (serve's META_NAMES)
        raise MetaError(f'Tool "{tool}" not found in toolbox.', "ToolNotFoundError")
    server.rescan()
    if tool not in server.entries:
        raise MetaError(f'Tool "{tool}" not found in toolbox.', "ToolNotFoundError")
    return server.call(tool, args)


def _error_shape(payload: Any) -> dict[str, str]:
    """{name, message} of a failed call's payload, in either error shape serve has used."""
    if isinstance(payload, dict):
        if isinstance(payload.get("message"), str) and isinstance(payload.get("error"), str):
            return {"name": payload["error"], "message": payload["message"]}
        if isinstance(payload.get("error"), str):
            return {"name": "PatchError", "message": payload["error"]}
        if isinstance(payload.get("message"), str):
            return {"name": str(payload.get("status", "PatchError")), "message": payload["message"]}
    return {"name": "PatchError", "message": json.dumps(payload, ensure_ascii=False)[:2000]}
