"""The Patch runtime's `index.json` (`mcp/src/toolbox.ts`), as runtime.toolbox keeps it: the
shape `{name: {name, version, description, filePath, embedding, lastUsedAt, createdAt}}`,
2-space JSON; older patch-tui shapes read into it; one tool's entry written in place, keeping
the fields patch-tui does not own. (runtime.toolbox re-exports these names.)
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from pathlib import Path
from typing import Any

from patch_tui.format import runtime_format
from patch_tui.runtime.toolbox_files import ToolboxError


def _abs(path: Path) -> Path:
    return Path(os.path.abspath(path))


def _runtime_manifest(data: bytes) -> dict[str, Any] | None:
    """The manifest as the runtime reads it, or None when the runtime refuses the file. (The
    runtime reads files as UTF-8, a byte-order mark included.)"""
    try:
        return runtime_format.parse(data.decode("utf-8", errors="replace")).manifest
    except runtime_format.RuntimeRejects:
        return None


def now_iso() -> str:
    """`new Date().toISOString()`: UTC, milliseconds, a Z."""
    now = _dt.datetime.now(_dt.UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def index_json(index: dict[str, Any]) -> str:
    """`JSON.stringify(index, null, 2) + "\\n"`."""
    return json.dumps(index, indent=2, ensure_ascii=False) + "\n"


def _as_runtime_index(raw: Any, tools_dir: Path) -> dict[str, Any]:
    """The index in the runtime's shape, whatever shape it was written in. Older patch-tui
    shapes (a list, `{"tools": [...]}` or `{"tools": {name: entry}}`) become `{name: entry}`
    with every field kept; a relative file key of theirs becomes an absolute filePath."""
    if isinstance(raw, dict) and not isinstance(raw.get("tools"), list | dict):
        return dict(raw)
    if isinstance(raw, list):
        entries, rest = raw, {}
    elif isinstance(raw, dict) and isinstance(raw["tools"], list):
        entries, rest = raw["tools"], {k: v for k, v in raw.items() if k != "tools"}
    elif isinstance(raw, dict):
        entries = [{"name": k, **v} if isinstance(v, dict) else v for k, v in raw["tools"].items()]
        rest = {k: v for k, v in raw.items() if k != "tools"}
    else:
        raise ToolboxError("index.json has a shape we do not know; not changing it")
    out: dict[str, Any] = dict(rest)
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            continue
        converted = dict(entry)
        if not isinstance(converted.get("filePath"), str):
            for key in ("file", "path", "filename", "source"):
                if isinstance(entry.get(key), str):
                    candidate = Path(entry[key])
                    if not candidate.is_absolute():
                        candidate = tools_dir / candidate.name
                    converted["filePath"] = str(candidate)
                    break
        out[entry["name"]] = converted
    return out


def _upsert(
    index: dict[str, Any], manifest: dict[str, Any], path: Path, carry: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The index with this tool's entry written, in place of the old one: the fields the runtime
    derives from the file (name, version, description, filePath) set, every other field kept
    (from `carry` for a renamed tool); a new entry gets the runtime's defaults (embedding and
    lastUsedAt null, createdAt now). Another entry pointing at the same file is folded in."""
    name = manifest["name"]
    file = str(_abs(path))

    def points_here(entry: Any) -> bool:
        return (
            isinstance(entry, dict)
            and isinstance(entry.get("filePath"), str)
            and str(_abs(Path(entry["filePath"]))) == file
        )

    old = dict(carry or {})
    if isinstance(index.get(name), dict):
        old = {**old, **index[name]}
    else:
        for entry in index.values():
            if points_here(entry):
                old = {**old, **entry}
                break
    entry = {
        "name": name,
        "version": manifest["version"],
        "description": manifest["description"],
        "filePath": file,
        "embedding": old.get("embedding"),
        "lastUsedAt": old.get("lastUsedAt"),
        "createdAt": old.get("createdAt") or now_iso(),
    }
    # Fields we do not own stay, after the runtime's own.
    entry.update({k: v for k, v in old.items() if k not in entry})
    out: dict[str, Any] = {}
    for key, value in index.items():
        if key == name or points_here(value):
            if name not in out:
                out[name] = entry  # where the old entry was: a save does not reorder the index
            continue
        out[key] = value
    out.setdefault(name, entry)
    return out
