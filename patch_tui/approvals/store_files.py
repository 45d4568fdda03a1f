"""The store's own files: who may own and write them. (No key is kept beside the database: an
approval is a person's signature, approvals/decisions.py; an old store's `.key` file, from the
HMAC seal, has no authority and is never read.)"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from patch_tui.approvals.values import StoreUnavailable, StoreUnsafe

# Files SQLite may create next to the database (WAL mode uses -wal and -shm; -journal only if the
# mode was ever changed back).
_COMPANIONS = ("-wal", "-shm", "-journal")
# The HMAC key an older patch-tui kept beside the store: it has no authority any more (approvals
# are signed by a person's key) and is never read, but stays hidden from tool runs with the rest.
LEGACY_KEY_SUFFIX = ".key"


def store_files(path: str | os.PathLike[str]) -> list[Path]:
    """Every file the store consists of: the database, SQLite's companions (and an older
    release's key file). A tool run must not be able to see or change any of them (nor their
    folder)."""
    p = Path(path)
    return [p, *(Path(f"{p}{suffix}") for suffix in (*_COMPANIONS, LEGACY_KEY_SUFFIX))]


def _mode(st: os.stat_result) -> str:
    return f"{stat.S_IMODE(st.st_mode):04o}"


def _owner_problem(st: os.stat_result) -> str | None:
    """Files and folders must be ours; root's are fine too (root can change anything anyway)."""
    if st.st_uid in (os.geteuid(), 0):
        return None
    return f"belongs to another user (uid {st.st_uid})"


def _check_file(path: Path) -> None:
    """The database or a companion: a regular file of ours that no one else may write."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise StoreUnavailable(f"{path}: cannot check the store file: {exc.strerror}") from None
    what = "a confirmation store file"
    if stat.S_ISLNK(st.st_mode) and path.name.endswith(_COMPANIONS):
        raise StoreUnsafe(
            f"{path}: {what} is a symbolic link, which someone may have planted to redirect it; "
            f"refusing to use the store. Fix: move it aside (mv {path} {path}.untrusted)"
        )
    st = os.stat(path)
    owner = _owner_problem(st)
    if owner:
        raise StoreUnsafe(
            f"{path}: {what} {owner}, who could approve calls in it; refusing to use it. Fix: "
            f"move it aside (mv {path} {path}.untrusted) to start afresh, or if you trust it: "
            f"chown {os.geteuid()} {path} && chmod 600 {path}"
        )
    if st.st_mode & 0o022:
        raise StoreUnsafe(
            f"{path}: {what} is writable by other users (mode {_mode(st)}), so they could approve "
            f"calls in it; refusing to use it. Fix: chmod 600 {path}"
        )


def _check_folders(folder: Path, name: str) -> None:
    """The store's folder: ours, writable by no one else (not even with the sticky bit, or others
    could plant its -wal file). Every folder above it: not writable by others unless sticky (so
    no one can swap the store's folder), and ours or root's."""
    try:
        real = folder.resolve(strict=True)
        st = os.stat(real)
    except OSError as exc:
        raise StoreUnavailable(f"{folder}: cannot check the store's folder: {exc}") from None
    owner = _owner_problem(st)
    if owner:
        raise StoreUnsafe(
            f"{real}: the confirmation store's folder {owner}, who could replace the store; "
            f"refusing to use it. Fix: keep the store in a folder of your own (--store PATH)"
        )
    if st.st_mode & 0o022:
        if st.st_mode & stat.S_ISVTX:
            fix = (
                f"keep the store in a private folder: mkdir -m 700 {real}/patch-tui and "
                f"--store {real}/patch-tui/{name}"
            )
        else:
            fix = f"chmod go-w {real}"
        raise StoreUnsafe(
            f"{real}: the confirmation store's folder is writable by other users (mode "
            f"{_mode(st)}), who could plant or replace its files; refusing to use it. Fix: {fix}"
        )
    for above in real.parents:
        try:
            st = os.stat(above)
        except OSError:
            continue
        shared = st.st_mode & 0o022 and not st.st_mode & stat.S_ISVTX
        owner = _owner_problem(st)
        if shared or owner:
            why = owner or f"is writable by other users (mode {_mode(st)})"
            raise StoreUnsafe(
                f"{above}: a folder above the confirmation store {why}, who could swap the "
                f"store's folder; refusing to use it. Fix: chmod go-w {above}, or keep the store "
                "elsewhere (--store PATH)"
            )


def _check_permissions(path: Path) -> None:
    if not hasattr(os, "geteuid"):
        return  # no POSIX owners and modes (Windows): the user's profile folder is private
    _check_folders(path.parent, path.name)
    for file in store_files(path):
        if not file.name.endswith(LEGACY_KEY_SUFFIX):  # no authority: nothing to protect
            _check_file(file)
