"""What a run claims and the audit record it leaves (in the Patch runtime's shape).

`enforcement` turns the sandbox plan's claims into the result's `enforced` and
`capability_assertions` (never a claim that was not true for the run); `write_audit` writes
`<runs_dir>/<run_id>.json`, stdout and stderr kept content-addressed in `<runs_dir>/blobs/`;
`list_runs` reads them back, newest first, as patch_list_runs shows them.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from patch_tui.runtime.process import ADDRESS_SPACE, FILE_SIZE

if TYPE_CHECKING:
    from patch_tui.format.plain_manifest import RunManifest
    from patch_tui.runtime import sandbox
    from patch_tui.runtime.runner import RunResult

AUDIT_SCHEMA_VERSION = "1"


def enforcement(
    manifest: RunManifest, base: RunResult, envs_keys: list[str], plan: sandbox.Plan | None
) -> tuple[dict[str, Any], list[str]]:
    caps = manifest.capabilities
    claims = list(plan.claims) if plan is not None else []
    pid_ns = plan is not None and plan.pid_ns
    mechanisms = {c.partition(":")[0]: c.partition(":")[2] for c in claims}
    net = mechanisms.get("network")
    if caps.network:
        network = "allowed (declared network: true)"
    elif net is None:
        network = "not started"
    elif net == "NOT-enforced":
        network = "NOT enforced (no network namespace on this host)"
    elif "netns" in net.split("+"):
        network = f"blocked ({net})"
    else:
        network = f"partly blocked ({net}; no network namespace)"
    if pid_ns:
        claims.append("pid:namespace")
    if base.install:
        # How its packages were installed (issue 22): the install's own filesystem mechanism.
        fs_claims = [c for c in base.install.get("claims", []) if c.startswith("filesystem:")]
        how = fs_claims[0].partition(":")[2] if fs_claims else "NOT-recorded"
        claims.append(f"install:{'NOT-isolated' if how == 'NOT-enforced' else how}")
    enforced = {
        "claims": claims,
        "engine": plan.engine if plan is not None else None,
        "network": network,
        "filesystem": mechanisms.get("filesystem", "not started"),
        "memory": mechanisms.get("memory", "not started"),
        "processes": mechanisms.get("processes", "not started"),
        "pid_namespace": pid_ns,
        "environment": "scrubbed",
        "python_start": "-I -S: no site, .pth or customize hook before the sandbox",
        "timeout_s": base.timeout_s,
        "rlimits": {
            "cpu_s": int(math.ceil(base.timeout_s)) + 1,
            "address_space_bytes": ADDRESS_SPACE,
            "file_size_bytes": FILE_SIZE,
            "core_bytes": 0,
        },
    }
    if plan is None:
        lines = [
            f'filesystem: "{caps.filesystem}" declared; the tool did not start, nothing ran.',
        ]
    else:
        lines = list(plan.lines)
    lines += [
        "environment scrubbed: PATH, LANG, temporary HOME/TMPDIR/working folder"
        + (f", plus {', '.join(envs_keys)} (values never logged)." if envs_keys else "."),
    ]
    if plan is not None:
        lines.append(
            "PID namespace: the tool saw only its own processes and /proc."
            if pid_ns
            else "no PID namespace on this host: the tool could see other processes."
        )
    lines.append(
        f"rlimits: address space {ADDRESS_SPACE >> 30} GiB, file size {FILE_SIZE >> 20} MiB, "
        "no core dumps, CPU time capped near the timeout."
    )
    if base.install:
        enforced["install"] = dict(base.install)
        lines += list(base.install_lines)
    if caps.human_confirm:
        lines.append("human_confirm: true; execution gated by an approval in the inbox.")
    requested = manifest.runtime.python_version
    running = f"{sys.version_info.major}.{sys.version_info.minor}"
    if requested != running:
        lines.append(f"python_version {requested} declared; ran with Python {running}.")
    return enforced, lines


def _write_blob(blobs: Path, text: str) -> str:
    from patch_tui.runtime.toolbox import atomic_write

    data = text.encode("utf-8")
    sha = hashlib.sha256(data).hexdigest()
    target = blobs / f"{sha}.txt"
    if not target.exists():
        atomic_write(target, data, sync_now=False)
    return sha


def write_audit(
    base: RunResult,
    manifest: RunManifest,
    args: dict[str, Any],
    runs_dir: str | os.PathLike[str] | None,
    envs_keys: list[str],
    plan: sandbox.Plan | None,
    notes: list[str] | None = None,
) -> None:
    base.enforced, base.capability_assertions = enforcement(manifest, base, envs_keys, plan)
    base.capability_assertions += notes or []
    if base.output_type_error:
        base.capability_assertions.append(f"output type mismatch: {base.output_type_error}.")
    if runs_dir is None:
        return
    from datetime import UTC, datetime

    from patch_tui.runtime.toolbox import atomic_write

    runs = Path(runs_dir)
    caps = manifest.capabilities
    try:
        blobs = runs / "blobs"
        record = {
            "schema_version": AUDIT_SCHEMA_VERSION,
            "run_id": base.run_id,
            "ran_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z",
            "tool": {
                "name": manifest.name,
                "version": manifest.version,
                "source_sha256": base.source_sha256,
            },
            "sandbox": {
                "template_id": None,
                "capabilities": {
                    "network": caps.network,
                    "filesystem": caps.filesystem,
                    "human_confirm": caps.human_confirm,
                    "browser": caps.browser,
                },
                "packages_installed": base.packages_installed,
                "allow_internet_access": caps.network or base.enforced["network"].startswith("NOT"),
                "envs_keys": envs_keys,
                "enforced": base.enforced["claims"],
            },
            # How the packages were installed (issue 22): the install's own sandbox claims.
            "install": base.enforced.get("install"),
            "trigger": {"host_app": None, "mcp_client_name": None, "user_prompt_hash": None},
            "inputs": args,
            "output": base.result,
            "stdout_sha256": _write_blob(blobs, base.stdout),
            "stderr_sha256": _write_blob(blobs, base.stderr),
            "network": [],
            "exit_code": base.exit_code if base.exit_code is not None else -1,
            "duration_ms": base.duration_ms,
            "capability_assertions": base.capability_assertions,
            "error": base.error,
        }
        text = json.dumps(record, indent=2, ensure_ascii=False) + "\n"
        # Synced to disk a moment later, off the call's path (the store's events are durable
        # before the call returns; this record follows them).
        record_bytes = text.encode("utf-8")
        base.audit_path = atomic_write(runs / f"{base.run_id}.json", record_bytes, sync_now=False)
    except OSError as exc:
        # The run happened; a failed audit write is reported, never hidden, never fatal.
        base.capability_assertions.append(f"audit record NOT written: {exc}")


def list_runs(
    runs_dir: str | os.PathLike[str], limit: int = 20, tool: str | None = None
) -> list[dict[str, Any]]:
    """The newest audit records first, as patch_list_runs shows them."""
    folder = Path(runs_dir)
    if not folder.is_dir():
        return []
    files = sorted(folder.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
    out: list[dict[str, Any]] = []
    for f in files:
        try:
            blob = json.loads(f.read_text(encoding="utf-8"))
            name = blob["tool"]["name"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if tool is not None and name != tool:
            continue
        out.append(
            {
                "run_id": blob.get("run_id"),
                "ran_at": blob.get("ran_at"),
                "tool": name,
                "version": blob["tool"].get("version"),
                "duration_ms": blob.get("duration_ms"),
                "exit_code": blob.get("exit_code"),
            }
        )
        if len(out) >= limit:
            break
    return out
