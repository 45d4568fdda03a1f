"""The store's own files: who may own and write them, and the approval key kept beside the database."""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
import tempfile
from pathlib import Path

from patch_tui.approvals.values import StoreUnavailable, StoreUnsafe

KEY_SUFFIX = ".key"
# Files SQLite may create next to the database (WAL mode uses -wal and -shm; -journal only if the
# mode was ever changed back).
_COMPANIONS = ("-wal", "-shm", "-journal")


def store_files(path: str | os.PathLike[str]) -> list[Path]:
    """Every file the store consists of: the database, SQLite's companions and the approval key.
    A tool run must not be able to see or change any of them (nor their folder)."""
    p = Path(path)
    return [p, *(Path(f"{p}{suffix}") for suffix in (*_COMPANIONS, KEY_SUFFIX))]


def _mode(st: os.stat_result) -> str:
    return f"{stat.S_IMODE(st.st_mode):04o}"


def _owner_problem(st: os.stat_result) -> str | None:
    """Files and folders must be ours; root's are fine too (root can change anything anyway)."""
    if st.st_uid in (os.geteuid(), 0):
        return None
    return f"belongs to another user (uid {st.st_uid})"


def _check_file(path: Path, *, secret: bool = False) -> None:
    """The database, a companion or the key: a regular file of ours that no one else may write
    (the key: nor read)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise StoreUnavailable(f"{path}: cannot check the store file: {exc.strerror}") from None
    what = "the confirmation store's key" if secret else "a confirmation store file"
    if stat.S_ISLNK(st.st_mode) and path.name.endswith((*_COMPANIONS, KEY_SUFFIX)):
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
    loose = 0o077 if secret else 0o022
    if st.st_mode & loose:
        who = "readable or writable" if secret else "writable"
        raise StoreUnsafe(
            f"{path}: {what} is {who} by other users (mode {_mode(st)}), so they could approve "
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
        _check_file(file, secret=file.name.endswith(KEY_SUFFIX))


def _load_key(path: Path) -> bytes:
    """The store's approval key (32 random bytes, hex in `<store>.key`), created on first use."""
    key_path = Path(f"{path}{KEY_SUFFIX}")
    if not key_path.exists():
        # Written whole under a temporary name, then linked into place: a concurrent opener sees
        # no key or the whole key, never half of one, and the first link wins.
        fd, tmp = tempfile.mkstemp(dir=key_path.parent, prefix=".key-")  # mode 0600
        try:
            with os.fdopen(fd, "w") as fh:
                fh.write(secrets.token_hex(32) + "\n")
                fh.flush()
                os.fsync(fh.fileno())
            try:
                os.link(tmp, key_path)
            except FileExistsError:
                pass
        except OSError as exc:
            raise StoreUnavailable(
                f"{key_path}: cannot create the store's key: {exc.strerror or exc}"
            ) from None
        finally:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    _check_file(key_path, secret=True)
    try:
        text = key_path.read_text(encoding="ascii").strip()
        key = bytes.fromhex(text)
    except (OSError, ValueError, UnicodeDecodeError):
        key = b""
    if len(key) != 32:
        raise StoreUnavailable(
            f"{key_path}: the store's key is damaged; approvals cannot be checked. Move it aside "
            f"(mv {key_path} {key_path}.old): approvals sealed with it will then be refused"
        )
    return key
