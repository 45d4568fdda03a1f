"""One catalog of tool files, shared by serve, the desk's tool browser and the inbox.

    catalog = ToolCatalog(toolbox=None, lint=None)
    catalog.read(path)   -> CatalogTool   one file: parsed, its sha256, its lint counts
    catalog.scan()       -> list[CatalogTool]   the toolbox's tools, sorted by file name
                            (ToolboxError when the folder cannot be listed)

Each file is read and parsed once per version: an entry is kept while the file's stat (mtime in
nanoseconds and size) stays the same, so listing a toolbox again costs one stat per file. A file
that cannot be read is an entry too (`error` says why), never an exception: one bad file must
not hide the others. Reading goes through format/toolfile (FIFOs, devices and huge files are
refused by type and size before anything is read).

Lint state comes from the `lint` function given (ToolFile -> (errors, warnings)), computed once
per file version and only when asked for: serve and the inbox never lint, the browser does. The
catalog takes the function rather than importing lint/, which sits above runtime/.

Thread-safe: the browser scans in a worker while the inbox reads from another.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from patch_tui.format import toolfile
from patch_tui.runtime.toolbox import Toolbox, ToolboxError

if TYPE_CHECKING:
    # For the annotation only: the desk lists tools before its first frame, and the pydantic
    # model (with pydantic itself) is loaded only when a manifest is validated.
    from patch_tui.format.manifest import Manifest
    from patch_tui.format.plain_manifest import RunManifest

# Linting: a ToolFile -> (errors, warnings).
LintCounts = Callable[[toolfile.ToolFile], tuple[int, int]]
# Files remembered beyond the toolbox's (tools named by inbox actions): a bound, not a goal.
MAX_ENTRIES = 2048


@dataclass(frozen=True)
class CatalogTool:
    """One tool file as last read."""

    path: Path
    # (st_mtime_ns, st_size) when it was read: a different stat means a new version.
    stamp: tuple[int, int]
    tool: toolfile.ToolFile | None = None
    # Why the file could not be read (tool is then None).
    error: str | None = None
    _lint: list[tuple[int, int]] = field(default_factory=list, compare=False, repr=False)

    @property
    def manifest(self) -> Manifest | None:
        return self.tool.manifest if self.tool is not None else None

    @property
    def run_manifest(self) -> RunManifest | None:
        """The manifest as a run reads it (ToolFile.run_manifest): without pydantic when the
        model is certain to read it the same way, else the model's answer (None: invalid)."""
        return self.tool.run_manifest if self.tool is not None else None

    @property
    def sha256(self) -> str | None:
        return self.tool.sha256 if self.tool is not None else None

    @property
    def data(self) -> dict[str, object]:
        """The raw frontmatter mapping (also when it does not validate), or {}."""
        data = self.tool.data if self.tool is not None else None
        return data if isinstance(data, dict) else {}

    @property
    def name(self) -> str:
        return str(self.data.get("name") or self.path.stem)

    @property
    def version(self) -> str:
        return str(self.data.get("version") or "?")

    @property
    def description(self) -> str:
        return str(self.data.get("description") or "")


class ToolCatalog:
    def __init__(self, toolbox: Toolbox | None = None, *, lint: LintCounts | None = None) -> None:
        self.toolbox = toolbox
        self._lint = lint
        self._lock = threading.Lock()
        self._entries: dict[Path, CatalogTool] = {}

    def read(self, path: str | os.PathLike[str]) -> CatalogTool:
        """The file as it is now: from the catalog when its stat is unchanged, else read anew."""
        p = Path(path)
        try:
            st = p.stat()
        except OSError as exc:
            return CatalogTool(p, (0, 0), error=exc.strerror or str(exc))
        stamp = (st.st_mtime_ns, st.st_size)
        with self._lock:
            found = self._entries.get(p)
        if found is not None and found.stamp == stamp:
            return found
        try:
            entry = CatalogTool(
                p, stamp, tool=toolfile.parse_bytes(toolfile.read_bytes(p), path=str(p))
            )
        except (OSError, ValueError) as exc:
            entry = CatalogTool(p, stamp, error=getattr(exc, "strerror", None) or str(exc))
        with self._lock:
            if len(self._entries) >= MAX_ENTRIES:
                self._entries.clear()
            self._entries[p] = entry
        return entry

    def scan(self) -> list[CatalogTool]:
        """The toolbox's tool files (none without a toolbox); forgets files that are gone."""
        if self.toolbox is None:
            return []
        paths = self.toolbox.tool_paths()  # ToolboxError: the caller says why
        entries = [self.read(p) for p in paths]
        present = set(paths)
        with self._lock:
            for gone in [
                p for p in self._entries if p.parent == self.toolbox.tools_dir and p not in present
            ]:
                del self._entries[gone]
        return entries

    def lint_counts(self, entry: CatalogTool) -> tuple[int, int]:
        """(errors, warnings) of this file version; an unreadable file is one error. Needs the
        `lint` function given to the catalog."""
        if entry.tool is None:
            return (1, 0)
        if entry._lint:
            return entry._lint[0]
        if self._lint is None:
            raise ValueError("this catalog was made without a lint function")
        counts = self._lint(entry.tool)
        entry._lint[:] = [counts]  # one result per file version; the entry is replaced on change
        return counts


__all__ = ["CatalogTool", "LintCounts", "ToolCatalog", "ToolboxError"]
