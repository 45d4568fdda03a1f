"""The toolbox's tools as `patch-tui serve` lists them: the catalog of valid tools (re-read only
for files whose stat changed), each tool's listing (the runtime's name, description and input
schema, our annotations on top), the meta tools' names, and index.json kept in step.

    catalog = ToolCatalog(toolbox); entries = catalog.scan()   -> {name: ToolEntry}
    describe(entry) -> the tools/list descriptor;  meta_tools() -> the meta tools, runtime order

A tool file that does not parse is left out with one line on stderr (once per file version); it
never breaks the list. Split out of serve.py, which re-exports these names.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from patch_tui.format.manifest import Manifest, input_json_schema
from patch_tui.runtime.catalog import ToolCatalog as FileCatalog
from patch_tui.runtime.toolbox import Toolbox, ToolboxError
from patch_tui.untrusted.text_safety import visible_line

META_CONFIRM = "patch_confirm_action"
META_LIST_TOOLS = "patch_list_tools"
META_LIST_RUNS = "patch_list_runs"
# With the rest of the runtime's meta tools (mcp_server.meta): reserved names, never a toolbox tool.
META_NAMES = (
    META_CONFIRM,
    META_LIST_TOOLS,
    META_LIST_RUNS,
    "patch_generate_tool",
    "patch_run_tool",
    "patch_auth_register",
    "patch_auth_status",
    "patch_replay",
    "patch_compose",
)


def log(message: str) -> None:
    """One line on stderr: the host's log. stdout is the protocol. Messages quote tool files,
    tool names and errors, so the line goes through the display rule (untrusted.text_safety)."""
    print(f"patch-tui serve: {visible_line(message)}", file=sys.stderr, flush=True)


@dataclass(frozen=True)
class ToolEntry:
    name: str
    path: Path
    manifest: Manifest
    sha256: str
    # The manifest as the Patch runtime reads it (defaults filled in): the listing comes from it.
    runtime: dict[str, Any] | None = None


class ToolCatalog:
    """The toolbox's valid tools, re-read only for files whose stat changed."""

    def __init__(self, toolbox: Toolbox) -> None:
        self.toolbox = toolbox
        # The files themselves come from the catalog the desk and the inbox read too.
        self.files = FileCatalog(toolbox)
        self._cache: dict[Path, tuple[tuple[int, int], ToolEntry | None]] = {}
        self._reported: dict[Path, tuple[int, int]] = {}

    def scan(self) -> dict[str, ToolEntry]:
        entries: dict[str, ToolEntry] = {}
        seen: set[Path] = set()
        try:
            paths = self.toolbox.tool_paths()
        except ToolboxError as exc:  # unreadable since start-up: say so, serve the meta tools
            self._report(self.toolbox.tools_dir, (0, 0), str(exc))
            return entries
        for path in paths:
            seen.add(path)
            try:
                st = path.stat()
            except OSError:
                continue
            key = (st.st_mtime_ns, st.st_size)
            cached = self._cache.get(path)
            if cached is not None and cached[0] == key:
                entry = cached[1]
            else:
                entry = self._load(path, key)
                self._cache[path] = (key, entry)
            if entry is None:
                continue
            if entry.name in META_NAMES:
                self._report(path, key, f"the name {entry.name} is reserved; tool left out")
            elif entry.name in entries:
                other = entries[entry.name].path.name
                self._report(
                    path, key, f"a tool named {entry.name} is already in {other}; left out"
                )
            else:
                entries[entry.name] = entry
        for gone in set(self._cache) - seen:
            del self._cache[gone]
        return entries

    def _report(self, path: Path, key: tuple[int, int], message: str) -> None:
        # Once per file version: a broken file does not flood the host's log on every list.
        if self._reported.get(path) != key:
            self._reported[path] = key
            log(f"{path}: {message}")

    def _load(self, path: Path, key: tuple[int, int]) -> ToolEntry | None:
        found = self.files.read(path)
        tf = found.tool
        if tf is None:
            self._report(path, key, f"cannot read: {found.error}; tool left out")
            return None
        from patch_tui.format import runtime_format

        try:
            runtime = runtime_format.parse(tf.text).manifest
        except runtime_format.RuntimeRejects as exc:
            # The runtime refuses it too: listing it would promise a tool the runtime lacks.
            self._report(path, key, f"not a valid tool ({exc.message}); left out")
            return None
        if tf.manifest is None:
            if tf.problems:
                why = tf.problems[0].message
            elif tf.manifest_error is not None:
                first = tf.manifest_error.errors()[0]
                where = ".".join(str(p) for p in first["loc"])
                why = f"{where}: {first['msg']}"
            else:
                why = "no manifest"
            self._report(path, key, f"not a valid tool ({why}); left out")
            return None
        from patch_tui.runtime.venvs import pin_problem

        for pin in tf.manifest.runtime.packages:
            bad = pin_problem(pin)
            if bad is not None:  # pip would take it as an option, a URL or a path
                self._report(path, key, f"not a valid tool ({bad}); left out")
                return None
        return ToolEntry(tf.manifest.name, path, tf.manifest, tf.sha256, runtime)


def tool_annotations(manifest: Manifest) -> dict[str, Any]:
    """MCP hints from the capabilities. readOnly only when nothing can change the world.
    One definition, shared with `patch-tui export --format mcp` (interop.mcp.annotations_for)."""
    from patch_tui.interop.mcp import annotations_for

    hints = annotations_for(manifest)
    return {
        "read_only_hint": hints["readOnlyHint"],
        "destructive_hint": hints["destructiveHint"],
        "open_world_hint": hints["openWorldHint"],
    }


def describe(entry: ToolEntry) -> dict[str, Any]:
    """The tool as tools/list shows it: the runtime's name, description (verbatim) and input
    schema (its manifestToInputSchema), so a host sees the same tool from either server; the
    annotations are ours, on top."""
    from patch_tui.format import runtime_format

    m = entry.manifest
    if entry.runtime is not None:
        listed = runtime_format.tool_descriptor(entry.runtime)
        name, description, schema = listed["name"], listed["description"], listed["inputSchema"]
    else:
        name, description, schema = m.name, m.description, input_json_schema(m)
    return {
        "name": name,
        "description": description,
        "input_schema": schema,
        "annotations": tool_annotations(m),
    }


def meta_tools() -> list[dict[str, Any]]:
    from patch_tui.mcp_server import meta

    return meta.in_runtime_order([*_own_meta_tools(), *meta.TOOLS])


def _own_meta_tools() -> list[dict[str, Any]]:
    return [
        {
            "name": META_CONFIRM,
            "description": (
                "Run a tool call that was held with a 'confirmation_required' answer, once a "
                "person has approved it in the patch-tui inbox. Pass the confirmation_token from "
                "that answer. Never approve a call yourself: until a person approves it, this "
                "answers awaiting_approval and nothing runs. Each token runs at most once."
            ),
            "input_schema": {
                "type": "object",
                "properties": {
                    "confirmation_token": {
                        "type": "string",
                        "description": "The token from the confirmation_required answer.",
                    }
                },
                "required": ["confirmation_token"],
                "additionalProperties": False,
            },
            "annotations": {"read_only_hint": False, "destructive_hint": True},
        },
        {
            "name": META_LIST_TOOLS,
            "description": "List every tool in the toolbox with its name, version and description.",
            "input_schema": {"type": "object", "properties": {}, "additionalProperties": False},
            "annotations": {
                "read_only_hint": True,
                "destructive_hint": False,
                "open_world_hint": False,
            },
        },
        {
            "name": META_LIST_RUNS,
            "description": "List recent tool runs from the toolbox's audit records, newest first.",
            "input_schema": {
                "type": "object",
                "properties": {
                    "limit": {
                        "type": "integer",
                        "description": "At most this many (default 20, max 200).",
                    },
                    "tool_name": {"type": "string", "description": "Only runs of this tool."},
                },
                "additionalProperties": False,
            },
            "annotations": {
                "read_only_hint": True,
                "destructive_hint": False,
                "open_world_hint": False,
            },
        },
    ]


def sync_index(toolbox: Toolbox, entries: dict[str, ToolEntry]) -> None:
    """Keep index.json in step with the files, as the runtime reads it: every tool the runtime
    can parse is registered (its version, description and file current); entries whose file is
    gone or no longer parses are dropped; an entry of a parseable tool is never removed."""
    try:
        toolbox.sync_index()
    except (ToolboxError, OSError) as exc:
        log(f"cannot keep index.json in sync: {exc}")


def _listing_key(entries: dict[str, ToolEntry]) -> str:
    return json.dumps([describe(e) for _, e in sorted(entries.items())], sort_keys=True)
