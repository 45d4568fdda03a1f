"""What the runtime says it ran: guard's check of a confirmed call against the runtime's audit.

Guard checks the tool file's sha256 just before it confirms a call upstream, and the runtime reads
the file again when it runs the call: a change between the two moments (milliseconds) cannot be
prevented from here (the runtime reads `filePath` from its index; nothing guard can lock). It is
detected instead: the runtime writes an audit record for every run (`runs/<run_id>.json`, with
`tool.source_sha256`, the sha256 of its writer's output for what it ran). After the confirm
answers, guard reads the records of that tool written since it forwarded the confirm and compares
their source hash with the hash of the file it approved (format.runtime_format.source_sha256 of
the same bytes). A mismatch means the runtime ran something other than what the person approved:
guard withholds the output from the agent, records the action `failed` with both hashes and the
run id, and says so on stderr. The run itself has happened (its effects cannot be undone); the
person sees it in the inbox's history. No record found (an upstream without this audit, or the
runtime failed to write it) leaves the answer as it is, marked unverified in the action's event.

    names = run_names(runs_dir)                         # before forwarding the confirm
    runs = new_runs(runs_dir, names, tool)              # after: [(run_id, source_sha256)]
"""

from __future__ import annotations

import json
from pathlib import Path

MAX_RECORD_BYTES = 4 << 20  # an audit record bigger than this is not read (output stays out)


def run_names(runs_dir: Path) -> set[str]:
    """The audit record files present now (none when the folder does not exist yet)."""
    try:
        return {entry.name for entry in runs_dir.iterdir() if entry.name.endswith(".json")}
    except OSError:
        return set()


def new_runs(runs_dir: Path, before: set[str], tool: str) -> list[tuple[str, str | None]]:
    """(run_id, tool.source_sha256) of every record of `tool` written since `before`."""
    found: list[tuple[str, str | None]] = []
    for name in sorted(run_names(runs_dir) - before):
        path = runs_dir / name
        try:
            if path.stat().st_size > MAX_RECORD_BYTES:
                continue
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(record, dict):
            continue
        meta = record.get("tool")
        if not isinstance(meta, dict) or meta.get("name") != tool:
            continue
        sha = meta.get("source_sha256")
        found.append((str(record.get("run_id", name[:-5])), sha if isinstance(sha, str) else None))
    return found
