"""`patch_replay` for `patch-tui serve`: the audit record's tool re-run with its inputs (through
the gate), reporting whether the source, the sandbox config and the output match, as the
runtime's handleReplay does. See mcp_server.meta."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from patch_tui.mcp_server.serve import PatchServer

from patch_tui.mcp_server.meta_base import MetaError, _error_shape

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
