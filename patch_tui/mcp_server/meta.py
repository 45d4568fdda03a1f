"""The rest of the Patch runtime's meta tools, for `patch-tui serve` (`serve` keeps
patch_confirm_action, patch_list_tools and patch_list_runs itself).

    TOOLS                        the tools/list entries (serve's dict shape), the runtime's schemas
    call(server, name, args)     -> (payload, is_error)    server: a serve.PatchServer

- `patch_run_tool` {name, args}: the same as calling the tool directly (through the gate).
- `patch_compose` {steps, on_error, parallel}: the runtime's compose.ts semantics: step ids,
  `$step` / `$step.path` references (sequential only; a whole-string reference keeps the value's
  type, an embedded one is stringified), parallel steps run at once, per-step `on_error` and
  `retries` (0-3); every step goes through the gate like any call, and a held step pauses the
  workflow (`status: "paused"`, its confirmation under `paused`; nothing after it runs).
- `patch_replay` {run_id}: the audit record's tool re-run with its inputs (through the gate: a
  human_confirm tool's replay is held like any call, where the runtime ran it unasked), reporting
  whether the source, the sandbox config and the output match.
- `patch_generate_tool` {description, name_hint}: our generator (lint-gated repair), the new tool
  saved into the toolbox (tools/ and index.json); the runtime's answer shape.
- `patch_auth_register` / `patch_auth_status`: this server has no registry, and says so.

Errors are the runtime's shape, `{"error": <class>, "message": ...}` with isError.
"""

from __future__ import annotations

import json
import re
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
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


def in_runtime_order(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rank = {name: i for i, name in enumerate(ORDER)}
    return sorted(tools, key=lambda t: rank.get(t["name"], len(ORDER)))


MAX_STEPS = 32
MAX_PARALLEL = 4  # the machine's cores are shared with the host; runs are processes
STEP_ID = re.compile(r"^[a-zA-Z][a-zA-Z0-9_]*$")
REF = re.compile(r"\$([a-zA-Z][a-zA-Z0-9_]*)((?:\.[a-zA-Z0-9_]+)*)")
WHOLE_REF = re.compile(r"^\$([a-zA-Z][a-zA-Z0-9_]*)((?:\.[a-zA-Z0-9_]+)*)$")
NO_REGISTRY = (
    "patch-tui serve has no tool registry: it serves the tools in your toolbox and writes new "
    "ones with patch_generate_tool. Nothing was registered."
)

_READ_ONLY = {"read_only_hint": True, "destructive_hint": False, "open_world_hint": False}

TOOLS: list[dict[str, Any]] = [
    {
        "name": GENERATE,
        "description": (
            "Write a new Python tool that fulfills the description, check it with the linter "
            "(repairing what it finds), and save it into the toolbox. Call this whenever you need "
            "a capability the toolbox doesn't have."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "description": {"type": "string", "description": "What the new tool should do."},
                "name_hint": {
                    "type": "string",
                    "description": "Optional snake_case name suggestion.",
                },
            },
            "required": ["description"],
            "additionalProperties": False,
        },
        "annotations": {
            "read_only_hint": False,
            "destructive_hint": False,
            "open_world_hint": True,
        },
    },
    {
        "name": RUN,
        "description": (
            "Explicitly invoke a tool from the toolbox by name. Mostly for debugging — normally "
            "call the individual tool directly."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "Tool name."},
                "args": {
                    "type": "object",
                    "description": "Tool arguments.",
                    "additionalProperties": True,
                },
            },
            "required": ["name"],
            "additionalProperties": False,
        },
        "annotations": {"read_only_hint": False, "destructive_hint": True, "open_world_hint": True},
    },
    {
        "name": AUTH_REGISTER,
        "description": (
            "The Patch runtime's registry sign-in. patch-tui serve has no registry: this answers "
            "so, and changes nothing."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "provider": {
                    "type": "string",
                    "description": "OAuth provider. Only 'github' is supported in v0.2.",
                    "default": "github",
                }
            },
            "additionalProperties": False,
        },
        "annotations": _READ_ONLY,
    },
    {
        "name": AUTH_STATUS,
        "description": (
            "Show whether registry read/contribute are enabled and whether a contribute token is "
            "configured (patch-tui serve has no registry: all off)."
        ),
        "input_schema": {"type": "object", "properties": {}, "additionalProperties": False},
        "annotations": _READ_ONLY,
    },
    {
        "name": REPLAY,
        "description": (
            "Replay a recorded tool execution from the local audit log. Re-runs the same tool "
            "with the same inputs (through the same confirmation gate as any call) and reports "
            "whether the source, sandbox config, and output match. Output match is reported "
            "honestly: yes / no / n/a-due-to-network."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "run_id": {
                    "type": "string",
                    "description": "run_id from a prior patch_list_runs call or audit blob.",
                }
            },
            "required": ["run_id"],
            "additionalProperties": False,
        },
        "annotations": {"read_only_hint": False, "destructive_hint": True, "open_world_hint": True},
    },
    {
        "name": COMPOSE,
        "description": (
            "Run a multi-step workflow built from existing tools. Each step references a tool by "
            "name, with args. Step args may reference earlier step results via '$step_id' or "
            "'$step_id.path.to.field' (sequential mode only). Set parallel: true to run "
            "independent steps concurrently (no inter-step references allowed). Every step goes "
            "through the same confirmation gate as a direct call; a confirmation_required from "
            "any step pauses the whole workflow. Use this instead of generating a new monolithic "
            "tool whenever the work decomposes into existing primitives."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "steps": {
                    "type": "array",
                    "description": "Ordered list of steps to execute.",
                    "items": {
                        "type": "object",
                        "properties": {
                            "id": {
                                "type": "string",
                                "description": (
                                    "Unique step identifier. Other steps reference this via "
                                    "$<id>. Must be alphanumeric + underscore, leading letter."
                                ),
                            },
                            "tool": {
                                "type": "string",
                                "description": "Tool name from the local toolbox.",
                            },
                            "args": {
                                "type": "object",
                                "description": (
                                    "Arguments for the tool. String values matching "
                                    "$<step_id>(.path)? are replaced with the prior step's "
                                    "result before invocation."
                                ),
                                "additionalProperties": True,
                            },
                            "on_error": {
                                "type": "string",
                                "enum": ["abort", "continue"],
                                "description": (
                                    "Per-step override for on_error. 'continue' lets later "
                                    "steps run even if this one fails (but they cannot "
                                    "reference its result)."
                                ),
                            },
                            "retries": {
                                "type": "number",
                                "description": "Max retries on error (0–3). Default 0.",
                            },
                        },
                        "required": ["id", "tool"],
                        "additionalProperties": False,
                    },
                },
                "on_error": {
                    "type": "string",
                    "enum": ["abort", "continue"],
                    "description": (
                        "Default error policy for steps that don't specify their own. Default "
                        "abort."
                    ),
                },
                "parallel": {
                    "type": "boolean",
                    "description": (
                        "If true, all steps run concurrently and inter-step $references are "
                        "forbidden."
                    ),
                },
            },
            "required": ["steps"],
            "additionalProperties": False,
        },
        "annotations": {"read_only_hint": False, "destructive_hint": True, "open_world_hint": True},
    },
]


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


def call(server: PatchServer, name: str, args: dict[str, Any]) -> tuple[Any, bool]:
    try:
        if name == RUN:
            tool = _require_string(args, "name")
            inner = args.get("args", {})
            if inner is None:
                inner = {}
            if not isinstance(inner, dict):
                raise MetaError("patch_run_tool: `args` must be an object.")
            return invoke(server, tool, inner)
        if name == COMPOSE:
            return compose(server, args), False
        if name == REPLAY:
            return replay(server, _require_string(args, "run_id"))
        if name == GENERATE:
            return generate_tool(
                server, _require_string(args, "description"), _optional_string(args, "name_hint")
            ), False
        if name == AUTH_REGISTER:
            provider = _optional_string(args, "provider") or "github"
            if provider != "github":
                raise MetaError(
                    f'Unsupported provider "{provider}". Only "github" is supported in v0.2.'
                )
            raise MetaError(NO_REGISTRY)
        if name == AUTH_STATUS:
            return {
                "registry_url": None,
                "read_enabled": False,
                "contribute_enabled": False,
                "has_contribute_token": False,
                "message": NO_REGISTRY,
            }, False
    except MetaError as exc:
        return _error(exc)
    raise KeyError(name)


# -- a call, as a direct call ------------------------------------------------------------------


def invoke(server: PatchServer, tool: str, args: dict[str, Any]) -> tuple[Any, bool]:
    """A toolbox tool only (never a meta tool), through serve's gate like a direct call."""
    from patch_tui.mcp_server.serve import META_NAMES

    if tool in META_NAMES or tool in NAMES:
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


# -- patch_replay ---------------------------------------------------------------------------------


def _explain(match: str, record: dict[str, Any]) -> str:
    if match == "yes":
        return "Source, sandbox config, and output all match — replay is fully reproducible."
    if match == "na_non_deterministic":
        return (
            "Source and sandbox config match, but the tool was declared `network: true` and "
            "outputs differ. This is expected for tools that hit live external APIs; the replay "
            "confirms the tool ran as recorded, not that the output is byte-equal."
        )
    envs = ", ".join(record.get("sandbox", {}).get("envs_keys") or []) or "none"
    return (
        "Source matches but outputs differ on a tool declared `network: false`. Possible causes: "
        f"clock-dependent code, /dev/urandom, env-var differences (envs: {envs}), or a "
        "non-deterministic dependency. This is a finding worth investigating."
    )


def _js_json(value: Any) -> str:
    """JSON.stringify, as the runtime compares outputs (2.0 and 2 are one number there)."""
    from patch_tui.format.runtime_format import js_json

    return js_json(value)


def replay(server: PatchServer, run_id: str) -> tuple[Any, bool]:
    from patch_tui.format import toolfile

    runs = Path(server.toolbox.runs_dir)
    # A run id names a file in runs/: nothing with a path separator or a leading dot.
    if "/" in run_id or "\\" in run_id or run_id.startswith(".") or "\x00" in run_id:
        raise MetaError(f'No audit blob found for run_id "{run_id}".')
    try:
        record = json.loads((runs / f"{run_id}.json").read_text(encoding="utf-8"))
        original = record["tool"]
        name = original["name"]
        inputs = record.get("inputs") or {}
    except (OSError, ValueError, KeyError, TypeError):
        raise MetaError(f'No audit blob found for run_id "{run_id}".') from None
    server.rescan()
    entry = server.entries.get(name)
    if entry is None:
        return {
            "run_id": run_id,
            "replay_status": "tool_missing",
            "original": original,
            "message": (
                f'Tool "{name}" is not in the current toolbox. Restore version '
                f'"{original.get("version")}" to replay.'
            ),
        }, False
    from patch_tui.runtime.runner import runtime_source_sha256

    # The hash the run records hold (the runtime's, over its writer's output): either side's
    # runs replay on the other.
    current_sha = runtime_source_sha256(
        toolfile.parse_bytes(entry.path.read_bytes(), path=str(entry.path))
    )
    if current_sha != original.get("source_sha256"):
        return {
            "run_id": run_id,
            "replay_status": "source_changed",
            "original": original,
            "current": {
                "name": entry.manifest.name,
                "version": entry.manifest.version,
                "source_sha256": current_sha,
            },
            "message": (
                "The local copy of this tool has different source than the recorded run. Replay "
                "would not faithfully reproduce the original; restore the recorded version and "
                "retry."
            ),
        }, False
    caps = entry.manifest.capabilities
    recorded_sandbox = record.get("sandbox") or {}
    recorded_caps = recorded_sandbox.get("capabilities")
    # The capabilities the record names, as the tool declares them now (records from older
    # writers name fewer of them).
    config_match = isinstance(recorded_caps, dict) and all(
        getattr(caps, key, None) == value for key, value in recorded_caps.items()
    )
    started = time.monotonic()
    outcome = server.gate.call(entry.path, inputs)
    duration = int((time.monotonic() - started) * 1000)
    if outcome.status in ("confirmation_required", "awaiting_approval"):
        return {**outcome.payload, "replay_of": run_id}, False
    if outcome.status != "ok":
        return {"error": "SandboxError", "message": _error_shape(outcome.payload)["message"]}, True
    replayed = outcome.payload
    if _js_json(record.get("output")) == _js_json(replayed):
        match = "yes"
    elif (recorded_sandbox.get("capabilities") or {}).get("network"):
        match = "na_non_deterministic"
    else:
        match = "no"
    return {
        "run_id": run_id,
        "replay_status": "replayed",
        "source_match": True,
        "sandbox_match": {
            "capabilities": recorded_sandbox.get("capabilities"),
            "allow_internet_access": recorded_sandbox.get("allow_internet_access"),
        },
        "sandbox_config_match": config_match,
        "output_match": match,
        "original_output": record.get("output"),
        "replay_output": replayed,
        "original_duration_ms": record.get("duration_ms"),
        "replay_duration_ms": outcome.run.duration_ms if outcome.run else duration,
        "replay_run_id": outcome.run.run_id if outcome.run else None,
        "capability_assertions": record.get("capability_assertions"),
        "explanation": _explain(match, record),
    }, False


# -- patch_generate_tool ------------------------------------------------------------------------


def generate_tool(server: PatchServer, description: str, name_hint: str | None) -> dict[str, Any]:
    import asyncio

    from patch_tui.generate import engine as g
    from patch_tui.settings.config import ConfigError

    try:
        opts = g.resolve_options()
    except ConfigError as exc:
        raise MetaError(str(exc), "GeneratorError") from None
    if not opts.api_key:
        raise MetaError(str(g.no_key_error()), "GeneratorError")
    server.rescan()
    taken = g.taken_names([server.toolbox.root]) | set(server.entries)
    try:
        result = asyncio.run(
            g.generate(
                description,
                model=opts.model,
                api_key=opts.api_key,
                base_url=opts.base_url,
                name_hint=name_hint,
                max_repairs=opts.max_repairs,
                existing_names=taken,
            )
        )
    except g.GenerateError as exc:
        raise MetaError(str(exc), "GeneratorError") from None
    if result.errors:
        first = g.format_diagnostic(result.errors[0])
        raise MetaError(
            f"The generated tool still has {len(result.errors)} lint error(s) after "
            f"{result.rounds} answer(s) (first: {first}); nothing was saved.",
            "GeneratorError",
        )
    try:
        path = g.save_new(result, server.toolbox.root)
    except g.GenerateError as exc:
        raise MetaError(str(exc), "ToolNameCollisionError") from None
    server.rescan()
    tf_entry = next((e for e in server.entries.values() if e.path == path), None)
    description_out = tf_entry.manifest.description if tf_entry else description
    return {
        "name": result.name,
        "version": result.version,
        "description": description_out,
        "status": "created",
        "source": "generated",
    }
