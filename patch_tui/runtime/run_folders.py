"""Every run's private folder: made in a root that is ours alone, held while the run lasts.

`runs_root` is hidden from every tool (no run can read or write another's code, args or output);
`hold_run_folder` locks a run's folder for the run's life; `sweep_run_folders` removes the
folders of runs that were killed (nobody holds their lock).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path


def runs_root() -> Path:
    """The folder that holds every run's private folder: ours alone (0700), and hidden from every
    tool, so no run can read or write another's code, args or output."""
    root = Path(tempfile.gettempdir()) / f"patch-tui-runs-{os.geteuid()}"
    try:
        root.mkdir(mode=0o700)
    except FileExistsError:
        pass
    st = os.lstat(root)
    import stat

    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
        raise OSError(f"{root} is not a folder of ours; remove it")
    if st.st_mode & 0o077:
        os.chmod(root, 0o700)
    return root


LOCK_NAME = ".patch-run.lock"


@contextlib.contextmanager
def run_folder() -> Iterator[Path]:
    """A fresh private folder for one run (mode 0700, with work/, home/ and tmp/ in it), held
    while the run lasts and removed after it; the leftovers of killed runs are swept first."""
    root = runs_root()
    folder = Path(tempfile.mkdtemp(prefix="patch-run-", dir=root))
    held = hold_run_folder(folder)  # released at exit, even by kill -9
    try:
        sweep_run_folders(root)
        for name in ("work", "home", "tmp"):
            (folder / name).mkdir(mode=0o700)
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        os.close(held)


def hold_run_folder(folder: Path) -> int:
    """Lock a run's folder for as long as the run lasts (the fd is closed after it, or by the
    kernel when patch-tui dies): `sweep_leftovers` removes only folders nobody holds."""
    import fcntl

    # Locked under another name first: the sweeper never sees an unlocked lock of a live run.
    making = folder / (LOCK_NAME + ".new")
    fd = os.open(making, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.rename(making, folder / LOCK_NAME)
    return fd


def sweep_run_folders(root: Path) -> None:
    """Remove the run folders nobody holds (a run that finishes removes its own; only a kill -9
    of patch-tui leaves any)."""
    import fcntl

    with contextlib.suppress(OSError):
        for entry in os.scandir(root):
            lock = Path(entry.path) / LOCK_NAME
            try:
                fd = os.open(lock, os.O_RDWR | os.O_CLOEXEC)
            except OSError:
                continue  # not a run folder (or being made): leave it
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                continue  # a run holds it
            try:
                shutil.rmtree(entry.path, ignore_errors=True)
            finally:
                os.close(fd)
