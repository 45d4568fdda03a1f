"""`patch_compose` for `patch-tui serve`: the runtime's compose.ts semantics (step ids,
`$step` / `$step.path` references, parallel steps, per-step on_error and retries); every step
goes through the gate like any call, and a held step pauses the workflow. See mcp_server.meta."""

from __future__ import annotations

import json
import re
import time
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from patch_tui.mcp_server.serve import PatchServer

from patch_tui.mcp_server.meta_base import MetaError, _error_shape, invoke

MAX_STEPS = 32
MAX_PARALLEL = 4  # the machine's cores are shared with the host; runs are processes
STEP_ID = re.compile(r"^[a-zA-Z][a-zA-Z0-9_]*$")
REF = re.compile(r"\$([a-zA-Z][a-zA-Z0-9_]*)((?:\.[a-zA-Z0-9_]+)*)")
WHOLE_REF = re.compile(r"^\$([a-zA-Z][a-zA-Z0-9_]*)((?:\.[a-zA-Z0-9_]+)*)$")

# -- patch_compose ------------------------------------------------------------------------------


def _references(value: Any, found: list[str]) -> list[str]:
    if isinstance(value, str):
        for match in REF.finditer(value):
            if match.group(1) not in found:
                found.append(match.group(1))
    elif isinstance(value, list):
        for item in value:
            _references(item, found)
    elif isinstance(value, dict):
        for item in value.values():
            _references(item, found)
    return found


def _validate(steps: Any, parallel: bool) -> None:
    if not isinstance(steps, list) or not steps:
        raise MetaError("compose: `steps` must be a non-empty array.")
    if len(steps) > MAX_STEPS:
        raise MetaError(f"compose: maximum {MAX_STEPS} steps per workflow.")
    seen: set[str] = set()
    for step in steps:
        if not isinstance(step, dict):
            raise MetaError("compose: every step must be an object with `id` and `tool`.")
        sid = step.get("id")
        if not isinstance(sid, str) or not STEP_ID.match(sid):
            shown = sid if isinstance(sid, str) and sid else "(missing)"
            raise MetaError(
                f'compose: step id "{shown}" must match /^[a-zA-Z][a-zA-Z0-9_]*$/ '
                "(alphanumeric + underscore, leading letter)."
            )
        if sid in seen:
            raise MetaError(f'compose: duplicate step id "{sid}".')
        seen.add(sid)
        if not isinstance(step.get("tool"), str) or not step["tool"]:
            raise MetaError(f'compose: step "{sid}" is missing required `tool`.')
        if "args" in step and not isinstance(step["args"], dict):
            raise MetaError(f'compose: step "{sid}" `args` must be an object.')
        on_error = step.get("on_error")
        if on_error is not None and on_error not in ("abort", "continue"):
            raise MetaError(f"compose: step \"{sid}\" `on_error` must be 'abort' or 'continue'.")
    earlier: set[str] = set()
    for step in steps:
        refs = _references(step.get("args") or {}, [])
        if parallel and refs:
            shown = ", ".join(refs)
            raise MetaError(
                f'compose: step "{step["id"]}" references {shown}, but parallel mode forbids '
                "inter-step references. Use sequential mode (parallel: false) or remove the "
                "references."
            )
        for ref in refs:
            if ref not in earlier:
                raise MetaError(
                    f'compose: step "{step["id"]}" references "${ref}" which is not an earlier '
                    "step id."
                )
        earlier.add(step["id"])


def _resolve_path(results: dict[str, Any], sid: str, path: str) -> Any:
    if sid not in results:
        raise MetaError(f'compose: cannot resolve ${sid} — step "{sid}" has no recorded result.')
    cursor = results[sid]
    for segment in [s for s in path.lstrip(".").split(".") if s]:
        if cursor is None:
            raise MetaError(
                f"compose: cannot read .{segment} of ${sid}{path} — intermediate value is "
                "null/undefined."
            )
        if isinstance(cursor, list) and segment.isdigit():
            index = int(segment)
            cursor = cursor[index] if index < len(cursor) else None
        elif isinstance(cursor, dict):
            cursor = cursor.get(segment)
        elif isinstance(cursor, list):
            cursor = None  # a JS array has no such property: undefined
        else:
            kind = {str: "string", bool: "boolean", int: "number", float: "number"}.get(
                type(cursor), "object"
            )
            raise MetaError(f"compose: cannot read .{segment} of ${sid}{path} — value is a {kind}.")
    return cursor


def _resolve(value: Any, results: dict[str, Any]) -> Any:
    if isinstance(value, str):
        whole = WHOLE_REF.match(value)
        if whole:
            return _resolve_path(results, whole.group(1), whole.group(2) or "")

        def one(match: re.Match[str]) -> str:
            got = _resolve_path(results, match.group(1), match.group(2) or "")
            return got if isinstance(got, str) else json.dumps(got, separators=(",", ":"))

        return REF.sub(one, value)
    if isinstance(value, list):
        return [_resolve(v, results) for v in value]
    if isinstance(value, dict):
        return {k: _resolve(v, results) for k, v in value.items()}
    return value


def _is_pause(value: Any) -> bool:
    return isinstance(value, dict) and value.get("status") in (
        "confirmation_required",
        "external_auth_required",
    )


def _run_step(server: PatchServer, step: dict[str, Any], results: dict[str, Any]) -> dict[str, Any]:
    retries = step.get("retries", 0)
    if not isinstance(retries, int | float) or isinstance(retries, bool):
        retries = 0
    attempts_max = max(1, min(int(retries), 3) + 1)
    started = time.monotonic()
    base = {"id": step["id"], "tool": step["tool"]}

    def elapsed() -> int:
        return int((time.monotonic() - started) * 1000)

    last: dict[str, str] = {"name": "PatchError", "message": "no attempt was made"}
    for attempt in range(1, attempts_max + 1):
        try:
            args = _resolve(step.get("args") or {}, results)
        except MetaError as exc:
            error = {"name": exc.cls, "message": str(exc)}
            return {
                **base,
                "status": "error",
                "error": error,
                "attempts": attempt,
                "duration_ms": elapsed(),
            }
        try:
            payload, is_error = invoke(server, step["tool"], args)
        except MetaError as exc:
            payload, is_error = {"error": exc.cls, "message": str(exc)}, True
        except Exception as exc:  # one step's crash is that step's error, as in the runtime
            payload, is_error = {"error": type(exc).__name__, "message": str(exc)}, True
        if not is_error:
            status = "paused" if _is_pause(payload) else "ok"
            return {
                **base,
                "status": status,
                "result": payload,
                "attempts": attempt,
                "duration_ms": elapsed(),
            }
        last = _error_shape(payload)
    return {
        **base,
        "status": "error",
        "error": last,
        "attempts": attempts_max,
        "duration_ms": elapsed(),
    }


def _summary(
    steps: list[dict[str, Any]], results: dict[str, Any], paused: dict[str, Any] | None = None
) -> dict[str, Any]:
    if paused is not None:
        return {"status": "paused", "steps": steps, "results": results, "paused": paused["result"]}
    statuses = [s["status"] for s in steps]
    if all(s == "ok" for s in statuses):
        return {"status": "ok", "steps": steps, "results": results}
    if "error" in statuses and "ok" in statuses:
        return {"status": "partial", "steps": steps, "results": results}
    return {"status": "failed", "steps": steps, "results": results}


def compose(server: PatchServer, args: dict[str, Any]) -> dict[str, Any]:
    steps = args.get("steps")
    if not isinstance(steps, list):
        raise MetaError("patch_compose: `steps` must be an array.")
    on_error = args.get("on_error")
    if on_error is not None and on_error not in ("abort", "continue"):
        raise MetaError("patch_compose: `on_error` must be 'abort' or 'continue'.")
    parallel = args.get("parallel")
    if parallel is not None and not isinstance(parallel, bool):
        raise MetaError("patch_compose: `parallel` must be a boolean.")
    _validate(steps, bool(parallel))
    default = on_error or "abort"
    results: dict[str, Any] = {}
    done: list[dict[str, Any]] = []
    if parallel:
        with ThreadPoolExecutor(max_workers=min(MAX_PARALLEL, len(steps))) as pool:
            outcomes = list(pool.map(lambda s: _run_step(server, s, {}), steps))
        paused = None
        for outcome in outcomes:
            done.append(outcome)
            if outcome["status"] == "ok":
                results[outcome["id"]] = outcome["result"]
            if outcome["status"] == "paused" and paused is None:
                paused = outcome
        return _summary(done, results, paused)
    for step in steps:
        outcome = _run_step(server, step, results)
        done.append(outcome)
        if outcome["status"] == "ok":
            results[outcome["id"]] = outcome["result"]
        elif outcome["status"] == "paused":
            return _summary(done, results, outcome)
        elif (step.get("on_error") or default) == "abort":
            return _summary(done, results)
    return _summary(done, results)
