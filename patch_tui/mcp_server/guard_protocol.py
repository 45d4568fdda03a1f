"""What guard reads in the upstream's answers and what it answers itself: the Patch runtime's
confirmation protocol (confirmation_required, its expired-token error, its args_summary), the
runtime's result and error shapes, what binds an approval to a tool (Identity), and guard's own
patch_confirm_action tool. Used by mcp_server.guard_state (Guard) and mcp_server.guard (the
server); mcp is imported inside the functions that need it.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from dataclasses import dataclass
from typing import Any

from patch_tui.approvals.store import Action, canonical_json
from patch_tui.untrusted.text_safety import visible_line

META_CONFIRM = "patch_confirm_action"
META_RUN = "patch_run_tool"
META_COMPOSE = "patch_compose"
TOKEN_GONE_HINT = "confirmation token"  # the runtime's PatchError for an unknown/expired token
UNKNOWN_VERSION = ""


def log(message: str) -> None:
    """One line on stderr: the host's log. stdout is the protocol. Messages quote text the
    upstream chose (tool names, errors), so the line goes through the display rule: no escape
    sequence or invisible character reaches the host's terminal or log viewer."""
    print(f"patch-tui guard: {visible_line(message)}", file=sys.stderr, flush=True)


class UpstreamGone(Exception):
    """The upstream server is not there (exited, or never started)."""


# -- reading the upstream's answers -------------------------------------------------------------


def answer_payload(result: Any) -> Any:
    """The JSON value an answer carries: its structured content, else its first text parsed as
    JSON (the runtime's shape), else None."""
    structured = getattr(result, "structured_content", None)
    if structured is not None:
        return structured
    for block in getattr(result, "content", None) or []:
        text = getattr(block, "text", None)
        if isinstance(text, str):
            try:
                return json.loads(text)
            except ValueError:
                return None
    return None


def is_confirmation(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and value.get("status") == "confirmation_required"
        and isinstance(value.get("confirmation_token"), str)
    )


def token_gone(result: Any) -> bool:
    """The runtime's answer to patch_confirm_action with a token it no longer has (expired after
    60 s, or the runtime restarted): an error whose message is about the confirmation token. A
    tool that failed while running is another error and never taken for this."""
    if not getattr(result, "is_error", False):
        return False
    payload = answer_payload(result)
    if isinstance(payload, dict):
        message = str(payload.get("message", ""))
        return TOKEN_GONE_HINT in message.lower()
    return False


def js_summary(args: dict[str, Any]) -> str:
    """`JSON.stringify(args)` cut at 200 characters, as the runtime's args_summary."""
    text = json.dumps(args, separators=(",", ":"), ensure_ascii=False)
    return text if len(text) <= 200 else text[:199] + "\u2026"


def same_args(summary: Any, args: dict[str, Any]) -> bool:
    """Whether the runtime's args_summary describes exactly these args."""
    if not isinstance(summary, str):
        return False
    if summary == js_summary(args):
        return True
    try:
        return json.loads(summary) == args  # number spellings differ (1.0 in Python, 1 in JS)
    except ValueError:
        pass
    if summary.endswith("\u2026"):  # cut: what is shown must be the start of what we sent
        return js_summary({**args}).startswith(summary[:-1]) or json.dumps(
            args, separators=(",", ":"), ensure_ascii=False
        ).startswith(summary[:-1])
    return False


# `$step` or `$step.path` in a compose step's args: the runtime puts an earlier step's result there.
_STEP_REFERENCE = re.compile(r"\$[a-zA-Z][a-zA-Z0-9_]*")


def _refers_to_steps(value: Any) -> bool:
    if isinstance(value, str):
        return _STEP_REFERENCE.search(value) is not None
    if isinstance(value, list):
        return any(_refers_to_steps(v) for v in value)
    if isinstance(value, dict):
        return any(_refers_to_steps(v) for v in value.values())
    return False


def compose_step_ids(answer: Any) -> dict[str, str]:
    """{upstream token: the id of the compose step it was held in}, from a `patch_compose`
    answer's `steps` (each `{id, tool, status, result}`; a paused step's result is the
    confirmation_required, which `paused` repeats)."""
    found: dict[str, str] = {}
    steps = answer.get("steps") if isinstance(answer, dict) else None
    for step in steps if isinstance(steps, list) else []:
        if not isinstance(step, dict) or not isinstance(step.get("id"), str):
            continue
        pending: list[Any] = [step.get("result")]
        while pending:
            item = pending.pop()
            if is_confirmation(item):
                found.setdefault(str(item["confirmation_token"]), step["id"])
            elif isinstance(item, dict):
                pending.extend(item.values())
            elif isinstance(item, list):
                pending.extend(item)
    return found


def held_args(
    held: dict[str, Any],
    tool: str,
    called: str,
    args: dict[str, Any],
    *,
    step_id: str | None = None,
) -> tuple[dict[str, Any] | None, str]:
    """The exact args of a call the upstream held (`held`, its confirmation_required), taken
    from what the agent sent (`called` with `args`), never from the upstream's args_summary
    (cut at 200 characters); or None and, in words, why they cannot be known.

    A direct call's args are the ones sent; `patch_run_tool`'s are its `args`. A call nested in
    `patch_compose` is matched to the steps the agent sent: the step the upstream's answer says
    holds this token (`step_id`, from `compose_step_ids`), else the steps of the same tool, and
    of those the one whose args the upstream's summary describes (`same_args`). No such step, two steps with other args that
    both fit, or a step whose args refer to earlier steps (`$step`: the runtime filled those in,
    so what it holds is not what was sent), and the args are unknown."""
    if tool == called:
        return args, ""
    if called == META_RUN and args.get("name") == tool:
        inner = args.get("args", {})
        return (inner if isinstance(inner, dict) else {}), ""
    if called != META_COMPOSE or not isinstance(args.get("steps"), list):
        return None, f"the upstream held {tool}, which is not the tool that was called ({called})"
    summary = held.get("args_summary")
    steps = [
        step
        for step in args["steps"]
        if isinstance(step, dict)
        and step.get("tool") == tool
        and isinstance(step.get("args", {}), dict)
    ]
    if step_id is not None:
        # The step the upstream says it paused at; its summary must still fit that step's args.
        steps = [step for step in steps if step.get("id") == step_id]
    if not steps:
        return None, f"no step of the patch_compose call that was sent calls {tool}"
    fitting = [step.get("args", {}) for step in steps if same_args(summary, step.get("args", {}))]
    if not fitting:
        if any(_refers_to_steps(step.get("args", {})) for step in steps):
            return None, (
                f"the {tool} step's args refer to earlier steps' results, which the upstream "
                "filled in: what it holds is not what the agent sent"
            )
        return None, (
            f"what the upstream says it holds for {tool} is none of the steps that were sent"
        )
    distinct = {canonical_json(a) for a in fitting}
    if len(distinct) > 1:
        return None, f"two {tool} steps with different args fit what the upstream holds"
    exact = fitting[0]
    if _refers_to_steps(exact):
        return None, (
            f"the {tool} step's args refer to earlier steps' results, which the upstream filled "
            "in: what it holds is not what the agent sent"
        )
    return exact, ""


def _result(payload: Any, is_error: bool) -> Any:
    import mcp_types as types

    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(payload, indent=2))],
        is_error=is_error,
    )


def _error(cls: str, message: str) -> Any:
    """The runtime's error shape: {"error": <class>, "message": ...} with isError."""
    return _result({"error": cls, "message": message}, True)


# -- what guard knows about a tool -------------------------------------------------------------


@dataclass(frozen=True)
class Identity:
    """What binds an approval to a tool: its version and the sha256 of its source."""

    version: str
    sha256: str
    path: str | None
    basis: str  # "file" (the toolbox's tool file) or "listing" (the upstream's listing)
    # capabilities.human_confirm as the runtime reads the file; None when guard cannot tell.
    human_confirm: bool | None = None
    # sha256 of the runtime's writer output for the file (what its audit records), when known.
    runtime_sha256: str | None = None


def _listing_sha(tool: Any) -> str:
    if tool is None:
        return hashlib.sha256(b"").hexdigest()
    dumped = tool.model_dump(by_alias=True, mode="json", exclude_none=True)
    return hashlib.sha256(canonical_json(dumped).encode("utf-8")).hexdigest()


def refusal(token: str, code: str, action: Action | None, why: str) -> dict[str, Any]:
    """The answers that run nothing: the same statuses and words as serve's (approvals.gate)."""
    from patch_tui.approvals.gate import Gate

    return Gate._refusal(None, token, code, action, why).payload  # type: ignore[arg-type]


def confirm_tool() -> Any:
    import mcp_types as types

    return types.Tool(
        name=META_CONFIRM,
        description=(
            "Run a tool call that was held with a 'confirmation_required' answer, once a person "
            "has approved it in the patch-tui inbox. Pass the confirmation_token from that "
            "answer. Never approve a call yourself: until a person approves it, this answers "
            "awaiting_approval and nothing runs. Each token runs at most once."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "confirmation_token": {
                    "type": "string",
                    "description": "Token from the prior confirmation_required response.",
                }
            },
            "required": ["confirmation_token"],
            "additionalProperties": False,
        },
        annotations=types.ToolAnnotations(read_only_hint=False, destructive_hint=True),
    )
