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
  saved as a draft in the toolbox's drafts folder for a person to review (issue 22): never
  served or run until they move it into the toolbox; the runtime's answer shape, status "draft".
- `patch_auth_register` / `patch_auth_status`: this server has no registry, and says so.

Errors are the runtime's shape, `{"error": <class>, "message": ...}` with isError.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from patch_tui.mcp_server.serve import PatchServer

from patch_tui.mcp_server.meta_base import (  # noqa: F401 - re-exported: callers use meta.NAME
    AUTH_REGISTER,
    AUTH_STATUS,
    COMPOSE,
    CONFIRM,
    GENERATE,
    LIST,
    LIST_RUNS,
    NAMES,
    ORDER,
    REPLAY,
    RUN,
    MetaError,
    _error,
    _error_shape,
    _optional_string,
    _require_string,
    invoke,
)
from patch_tui.mcp_server.meta_compose import MAX_PARALLEL, MAX_STEPS, compose  # noqa: F401
from patch_tui.mcp_server.meta_replay import replay


def in_runtime_order(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rank = {name: i for i, name in enumerate(ORDER)}
    return sorted(tools, key=lambda t: rank.get(t["name"], len(ORDER)))


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
    # A draft, not a tool: what an agent wrote is served only once a person has read it (a tool
    # it could write and call at once would pin any package and confirm its own calls).
    drafts = server.toolbox.drafts_dir
    try:
        drafts.mkdir(parents=True, exist_ok=True, mode=0o700)
        path = g.save_new(result, drafts)
    except OSError as exc:
        raise MetaError(f"Cannot save the draft: {exc.strerror or exc}", "GeneratorError") from None
    except g.GenerateError as exc:
        raise MetaError(str(exc), "ToolNameCollisionError") from None
    from patch_tui.format import toolfile

    saved = toolfile.parse(result.text, path=str(path)).manifest
    return {
        "name": result.name,
        "version": result.version,
        "description": saved.description if saved is not None else description,
        "status": "draft",
        "source": "generated",
        "draft_path": str(path),
        "message": (
            f"Saved as a draft for a person to review; it is not served yet. They open it in "
            f"the desk (patch-tui {path}) and move it into {server.toolbox.tools_dir} to serve it."
        ),
    }
