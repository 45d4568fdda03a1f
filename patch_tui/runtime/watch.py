"""Watch folders of files (tools, themes) for changes made outside the app.

Editors rarely write a file in place: vim, VS Code, JetBrains and most others write a temporary
file and rename it over the original, which replaces the inode. A watch on the *file* dies with
the old inode, so we always watch the *folder* and work out what happened to the files we care
about by looking at them after a short debounce:

- the raw events only say "something happened to this path"; what we report comes from comparing
  the file's content hash with the one we saw last (so a touch, or a rename-save of identical
  content, is not a change, and the storm of temp-file events an editor makes collapses into one
  `modified`);
- a file that vanished and one that appeared with the same content in the same batch is a rename;
- writes the app made itself are recorded in an `OwnWrites` registry (path and sha256 of what was
  written); a change whose current content is what we wrote is never reported as an outside change.

`watchfiles` is imported inside `FolderWatcher.changes()`, never at import time (start-up stays lean).
No Textual here: the UI runs `changes()` in a worker and turns batches into messages.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import threading
from collections.abc import AsyncIterator, Iterable, Sequence
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path
from typing import Any, Literal

ChangeKind = Literal["added", "modified", "deleted", "renamed"]

#: How long the watcher waits for a burst of events to go quiet before it looks (ms), and the
#: longest it ever groups events for. An open tool follows an outside save within ~step + a read,
#: well inside the 250 ms the desk promises.
DEFAULT_STEP_MS = 30
DEFAULT_DEBOUNCE_MS = 150


@dataclass(frozen=True)
class FileChange:
    """One change to a watched file, as the user would describe it."""

    kind: ChangeKind
    path: Path
    """The file's path (for `renamed`, its new path)."""
    old_path: Path | None = None
    """For `renamed`: where the file was before."""
    sha256: str | None = None
    """The content hash now (None for `deleted`)."""


def _key(path: str | os.PathLike[str]) -> Path:
    # realpath: a file saved through a symlink and the event for its target name the same file.
    return Path(os.path.realpath(path))


def file_sha256(path: str | os.PathLike[str]) -> str | None:
    """The sha256 of a file's bytes, or None when it is missing or cannot be read right now."""
    from patch_tui.format.toolfile import read_bytes

    try:
        # A tool swapped for a FIFO or /dev/zero must not hang or fill memory.
        return hashlib.sha256(read_bytes(path)).hexdigest()
    except OSError:
        return None


def content_sha256(data: bytes | str) -> str:
    raw = data.encode("utf-8") if isinstance(data, str) else data
    return hashlib.sha256(raw).hexdigest()


class OwnWrites:
    """What this process wrote (or deleted) itself, so watchers do not echo it back as outside news.

    Thread-safe: saves run in workers, the watcher classifies in another thread.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._hashes: dict[Path, str | None] = {}

    def record(self, path: str | os.PathLike[str], data: bytes | str | None) -> None:
        """Call right before (or after) writing `data` to `path`; `None` means we delete it."""
        sha = None if data is None else content_sha256(data)
        with self._lock:
            self._hashes[_key(path)] = sha

    def is_own(self, path: str | os.PathLike[str], current_sha256: str | None) -> bool:
        """True when the file now holds exactly what we last wrote there (or we deleted it and it
        is gone). A mismatch means someone else wrote after us: the record is dropped so it can
        never hide a later outside change."""
        key = _key(path)
        with self._lock:
            if key not in self._hashes:
                return False
            if self._hashes[key] == current_sha256:
                return True
            del self._hashes[key]
            return False

    def forget(self, path: str | os.PathLike[str]) -> None:
        with self._lock:
            self._hashes.pop(_key(path), None)


#: The process-wide registry: the toolbox's atomic save records here, every watcher consults it.
OWN_WRITES = OwnWrites()


def note_own_write(path: str | os.PathLike[str], data: bytes | str | None) -> None:
    """Record that the app itself is writing `data` to `path` (None: deleting it)."""
    OWN_WRITES.record(path, data)


class FolderWatcher:
    """Watches folders and yields batches of `FileChange` for files matching `patterns`.

    `classify()` is the pure(ish) heart and is usable without watchfiles: give it the paths that
    raw events touched, it looks at the disk and answers what changed since the last look.
    """

    def __init__(
        self,
        folders: Iterable[str | os.PathLike[str]],
        *,
        patterns: Sequence[str] = ("*.py",),
        own: OwnWrites | None = None,
        step_ms: int = DEFAULT_STEP_MS,
        debounce_ms: int = DEFAULT_DEBOUNCE_MS,
        recursive: bool = False,
        force_polling: bool | None = None,
    ) -> None:
        self.folders = [_key(f) for f in folders]
        self.patterns = tuple(patterns)
        self.own = OWN_WRITES if own is None else own
        self.step_ms = step_ms
        self.debounce_ms = debounce_ms
        self.recursive = recursive
        self.force_polling = force_polling
        self._known: dict[Path, str] = {}
        self._lock = threading.Lock()
        self.watching = False
        """True once `changes()` watches and has taken its first look (tests wait for it)."""

    # -- what we look at ---------------------------------------------------------------------
    def matches(self, path: str | os.PathLike[str]) -> bool:
        """A file we report on: matches a pattern, is not hidden or an editor's scratch file
        (`.tool.py.swp`, `#tool.py#`, `tool.py~`), and sits in a watched folder."""
        p = Path(path)
        name = p.name
        if name.startswith((".", "#")) or name.endswith("~"):
            return False
        if not any(fnmatch(name, pat) for pat in self.patterns):
            return False
        parent = _key(p.parent)
        if self.recursive:
            return any(parent == f or f in parent.parents for f in self.folders)
        return parent in self.folders

    def _listing(self) -> Iterable[Path]:
        for folder in self.folders:
            if not folder.is_dir():
                continue
            found = folder.rglob("*") if self.recursive else folder.iterdir()
            for p in found:
                if self.matches(p) and p.is_file():
                    yield p

    def scan(self) -> dict[Path, str]:
        """Look at every matching file now; later changes are measured against this."""
        known = {}
        for p in self._listing():
            sha = file_sha256(p)
            if sha is not None:
                known[_key(p)] = sha
        with self._lock:
            self._known = known
        return dict(known)

    @property
    def known(self) -> dict[Path, str]:
        with self._lock:
            return dict(self._known)

    # -- turning raw events into changes -----------------------------------------------------
    def classify(self, touched: Iterable[str | os.PathLike[str]]) -> list[FileChange]:
        """What happened to the `touched` paths since the last look, own writes left out."""
        added: list[FileChange] = []
        modified: list[FileChange] = []
        deleted: list[tuple[Path, str]] = []
        with self._lock:
            for key in sorted({_key(p) for p in touched}):
                if not self.matches(key):
                    continue
                sha = file_sha256(key) if key.is_file() else None
                before = self._known.get(key)
                if sha is None:
                    if before is None:
                        continue  # a scratch file that came and went, or never was ours to track
                    del self._known[key]
                    if self.own.is_own(key, None):
                        continue
                    deleted.append((key, before))
                    continue
                self._known[key] = sha
                if before == sha:
                    continue  # touched or rewritten with the same bytes: nothing to follow
                if self.own.is_own(key, sha):
                    continue
                if before is None:
                    added.append(FileChange("added", key, sha256=sha))
                else:
                    modified.append(FileChange("modified", key, sha256=sha))
        # A file that vanished and one that appeared with its exact content in the same batch
        # is a rename (mv, or a browser in another window); pair them so the UI can follow.
        result: list[FileChange] = []
        unmatched_added = list(added)
        for old, old_sha in deleted:
            twin = next((a for a in unmatched_added if a.sha256 == old_sha), None)
            if twin is not None:
                unmatched_added.remove(twin)
                result.append(FileChange("renamed", twin.path, old_path=old, sha256=old_sha))
            else:
                result.append(FileChange("deleted", old))
        result.extend(unmatched_added)
        result.extend(modified)
        return result

    # -- the live part -----------------------------------------------------------------------
    async def changes(
        self, stop_event: asyncio.Event | None = None
    ) -> AsyncIterator[list[FileChange]]:
        """Yield non-empty batches of changes until `stop_event` is set or the task is cancelled.

        Folders that do not exist are skipped (nothing to watch yet); when none exists the
        generator ends at once.
        """
        from watchfiles import awatch  # heavy (a Rust extension + anyio): only when watching

        folders = [f for f in self.folders if f.is_dir()]
        if not folders:
            return

        def keep(_change: object, path: str) -> bool:
            return self.matches(path)

        raw_batches = awatch(
            *folders,
            watch_filter=keep,
            step=self.step_ms,
            debounce=self.debounce_ms,
            stop_event=stop_event,
            recursive=self.recursive,
            force_polling=self.force_polling,
        )
        # Start the OS watch *before* the first scan, so nothing that happens after the scan can
        # slip between the two: the first step of this task creates the notifier, then waits.
        pending: asyncio.Future[Any] = asyncio.ensure_future(raw_batches.__anext__())
        try:
            await asyncio.sleep(0)
            await asyncio.to_thread(self.scan)
            self.watching = True
            while True:
                try:
                    raw = await pending
                except StopAsyncIteration:
                    return
                batch = await asyncio.to_thread(self.classify, [path for _change, path in raw])
                if batch:
                    yield batch
                pending = asyncio.ensure_future(raw_batches.__anext__())
        finally:
            self.watching = False
            if not pending.done():
                pending.cancel()
                with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration):
                    await pending
            await raw_batches.aclose()
