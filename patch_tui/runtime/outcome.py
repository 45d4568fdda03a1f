"""What a finished run's process left, turned into its result (runner.py's last step).

    interpret(result, manifest, stdout, stderr, returncode, timed_out, overflow, timeout)

The Patch runtime's contract: the result is the last non-empty stdout line parsed as JSON;
`error` says why there is none (cancelled, timed out, an output cap, an exit code); the JSON
type is checked against `outputs.type` (reported, the run still succeeds).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from patch_tui.format.fields import JSON_PY_TYPES, fits_json_type, json_type
from patch_tui.runtime.process import CANCELLED, STDERR_CAP, STDOUT_CAP, cancel_requested

if TYPE_CHECKING:
    from patch_tui.format.plain_manifest import RunManifest
    from patch_tui.runtime.runner import RunResult


def _is(value: Any, expected: str) -> bool:
    if expected not in JSON_PY_TYPES:
        return True  # a type lint already reports: nothing to check the output against
    # JSON numbers carry no int/float distinction: a tool printing 5.0 returned an integer.
    if expected == "integer" and isinstance(value, float):
        return value.is_integer()
    return fits_json_type(value, expected)


def check_output_type(manifest: RunManifest, value: Any) -> str | None:
    """None when the value fits `outputs.type` (and `items`), else what is wrong."""
    expected = manifest.outputs.type
    if not _is(value, expected):
        return f"outputs.type is {expected}, but the tool returned {json_type(value)}"
    item_type = manifest.outputs.item_type
    if expected == "array" and item_type:
        for i, element in enumerate(value):
            if not _is(element, item_type):
                return f"outputs.items is {item_type}, but element {i} is {json_type(element)}"
    return None


def _last_json_line(stdout: str) -> tuple[bool, Any]:
    lines = [ln for ln in stdout.splitlines() if ln.strip()]
    if not lines:
        return False, None
    try:
        return True, json.loads(lines[-1])
    except ValueError:
        return False, None


def _tail(text: str, n: int = 20) -> str:
    return "\n".join(text.strip().splitlines()[-n:])


def interpret(
    base: RunResult,
    manifest: RunManifest,
    out: bytes,
    err: bytes,
    returncode: int,
    timed_out: bool,
    overflow: str | None,
    timeout: float,
) -> None:
    """The result from what the process left: its output, exit, timeout or cap."""
    base.stdout = out.decode("utf-8", "replace")
    base.stderr = err.decode("utf-8", "replace")
    base.exit_code = returncode
    base.timed_out = timed_out
    base.output_capped = overflow
    if cancel_requested() and returncode != 0:
        base.error = CANCELLED
    elif timed_out:
        base.error = f"the tool ran longer than {timeout:g} s and was stopped"
    elif overflow:
        cap = STDOUT_CAP if overflow == "stdout" else STDERR_CAP
        base.error = f"the tool wrote more than {cap >> 20} MiB to {overflow} and was stopped"
    elif returncode != 0:
        if returncode < 0:
            how = f"was killed by signal {-returncode}"
        else:
            how = f"exited with code {returncode}"
        detail = _tail(base.stderr)
        base.error = f"the tool {how}" + (f":\n{detail}" if detail else "")
    else:
        found, value = _last_json_line(base.stdout)
        if not found:
            base.error = "the tool's last line of output is not JSON (print(json.dumps(...)))"
        else:
            base.ok = True
            base.result = value
            base.output_type_error = check_output_type(manifest, value)
