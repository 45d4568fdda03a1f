"""How the toolbox writes files, and its errors (mcp_server and the UI import these from
runtime.toolbox, which re-exports them).

Everything that writes goes through `atomic_write`, so a crash or a full disk never leaves a
half-written tool: the new bytes go to a temporary file in the same folder, are fsynced, and
replace the old file in one `os.replace`. A symlinked tool is saved through to its target (the
link stays a link) and the file's permission bits are kept.
"""

from __future__ import annotations

import hashlib
import os
import queue
import stat
import sys
import tempfile
import threading
from pathlib import Path


class ToolboxError(Exception):
    """A toolbox operation cannot be done; the message says why, for a person."""


class ToolboxUnreadable(ToolboxError):
    """The toolbox folder exists but cannot be listed or read (permissions, not a folder)."""


class FileChangedOnDisk(ToolboxError):
    """The file's bytes on disk are not the ones the editor loaded: saving would lose them."""

    def __init__(self, path: Path, expected: str | None, actual: str | None) -> None:
        self.path = path
        self.expected = expected
        self.actual = actual  # None: the file was deleted
        what = "was deleted" if actual is None else "changed on disk"
        super().__init__(f"{path} {what} since it was loaded; not overwriting it")


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_sha256(path: str | os.PathLike[str]) -> str | None:
    """The sha256 of a file's bytes, or None when it does not exist."""
    try:
        with open(path, "rb") as fh:
            return sha256_bytes(fh.read())
    except FileNotFoundError:
        return None


def _fsync_dir(folder: Path) -> None:
    # Makes the rename itself durable; some platforms cannot open a folder, which is fine.
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write(path: str | os.PathLike[str], data: bytes, *, sync_now: bool = True) -> Path:
    """Write bytes so readers see the old file or the new one, never a mix. Returns the path
    actually written (a symlink's target). `sync_now=False`: the file and its folder reach the
    disk (fsync) from a background thread a moment later, not before this returns (a run's
    audit record: two fsyncs were most of what a warm call through serve cost)."""
    target = Path(os.path.realpath(path))
    folder = target.parent
    folder.mkdir(parents=True, exist_ok=True)
    try:
        mode: int | None = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = None
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            if sync_now:
                os.fsync(fh.fileno())
        if mode is None:
            # mkstemp creates 0600; a new file gets the usual mode for the user's umask.
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)
        _note_own_write(target, data)  # the folder watcher must not report our own save
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    if sync_now:
        _fsync_dir(folder)
    else:
        _sync_later(target, folder)
    return target


_SYNC_QUEUE: queue.Queue[tuple[Path, Path]] = queue.Queue()
_SYNCER: list[threading.Thread] = []
_SYNCER_LOCK = threading.Lock()


def _sync_later(target: Path, folder: Path) -> None:
    """Hand the file and its folder to the one background thread that fsyncs them."""
    with _SYNCER_LOCK:
        if not _SYNCER:
            _SYNCER.append(threading.Thread(target=_syncer, name="fsync later", daemon=True))
            _SYNCER[0].start()
    _SYNC_QUEUE.put((target, folder))


def _syncer() -> None:
    while True:
        target, folder = _SYNC_QUEUE.get()
        try:
            _sync(target, folder)
        finally:
            _SYNC_QUEUE.task_done()


def _sync(target: Path, folder: Path) -> None:
    try:
        fd = os.open(target, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
    _fsync_dir(folder)


def wait_for_syncs() -> None:
    """Return once every file handed to the background thread is on disk (a process about to
    end without its interpreter's teardown: `python -m patch_tui run`)."""
    if _SYNCER:
        _SYNC_QUEUE.join()


def _note_own_write(path: Path, data: bytes | None) -> None:
    # Only a process with a folder watcher (runtime.watch imported) has one to tell; the others
    # (`run`, `serve`'s calls) skip its import, and asyncio's with it.
    watch = sys.modules.get("patch_tui.runtime.watch")
    if watch is not None:
        watch.note_own_write(path, data)


def _to_bytes(text: str | bytes) -> bytes:
    return text if isinstance(text, bytes) else text.encode("utf-8")
