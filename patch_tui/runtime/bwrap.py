"""The bubblewrap side of a run's sandbox: bwrap's words, and the seccomp filter it loads.

Imported by sandbox.prepare only for runs under bwrap. The words build a mount namespace that
holds only what the capability allows; a protected path inside an allowed folder is masked (an
empty tmpfs, /dev/null, or a read-only bind). bwrap loads sandbox_exec's seccomp program itself
(`--seccomp FD`) just before it execs the tool; its words reach it by a memfd (`--args FD`).
"""

from __future__ import annotations

import contextlib
import os


def inside(child: str, parent: str) -> bool:
    # (sandbox.inside's twin: this module imports nothing of the sandbox's, so no import cycle)
    return child == parent or child.startswith(parent.rstrip("/") + "/")


def seccomp_fd(policy: str) -> int:
    """A sealed memfd holding the seccomp program (sandbox_exec's), read from offset 0."""
    from patch_tui.runtime.process import sealed_memfd
    from patch_tui.runtime.sandbox_exec import seccomp_bytes

    return sealed_memfd("patch-seccomp", seccomp_bytes(os.uname().machine, policy))


def bwrap_words(
    bwrap: str,
    network: bool,
    read_roots: list[str],
    write_roots: list[str],
    own: list[str],
    hidden: list[str],
    frozen: list[str],
    sealed: list[str],
) -> list[str]:
    words = [bwrap, "--die-with-parent", "--unshare-user", "--unshare-pid", "--unshare-ipc"]
    if not network:
        words.append("--unshare-net")
    bound: list[str] = []
    for root in read_roots:
        if root == "/proc":
            continue  # --proc below: the run's own
        words += ["--ro-bind", root, root]
        bound.append(root)
    for root in write_roots:
        words += ["--bind", root, root]
        bound.append(root)
    words += ["--proc", "/proc", "--dev", "/dev"]
    visible = [b for b in bound if b not in ("/proc",)]
    # A protected path under a writable bind is made read-only, then the hidden ones masked.
    for path in frozen:
        if path in ("/proc", "/dev"):
            continue  # the run's own (--proc, --dev above), never the host's
        if os.path.isdir(path) and any(inside(path, w) for w in write_roots):
            words += ["--ro-bind", path, path]
    masks = _sealed(words, visible, write_roots, hidden, frozen, sealed)
    for path in hidden:
        if path == "/proc" or not any(inside(path, b) for b in visible):
            continue
        if os.path.dirname(path) in masks:
            continue  # in a sealed folder: simply not bound there
        if os.path.isdir(path):
            # An empty tmpfs of its own, made read-only at the end (once the run's own folder,
            # inside the hidden runs root, is bound in it): nothing to read, nothing written.
            words += ["--tmpfs", path]
            masks.append(path)
        elif os.path.exists(path):
            words += ["--ro-bind", "/dev/null", path]
    # The run's own folder (and the install's venv and pip cache): written as they are.
    for path in own:
        words += ["--bind", path, path]
    # The namespace's own root (a tmpfs holding the mount points made above) read-only too: a
    # write to a path outside every bind fails instead of landing there unseen.
    # (--remount-ro is not recursive: the binds inside each stay as they are.)
    for path in ["/", *masks]:
        words += ["--remount-ro", path]
    words += ["--chdir", os.path.join(own[0], "work")]
    return words


def _sealed(
    words: list[str],
    visible: list[str],
    write_roots: list[str],
    hidden: list[str],
    frozen: list[str],
    sealed: list[str],
) -> list[str]:
    """Each visible sealed folder (a store's, a plain toolbox's tools, the home folder under a
    workspace) becomes a fresh tmpfs holding its entries bound one by one: no entry can be made,
    removed or renamed in it, its hidden entries are simply absent, and a file made there after
    the run started (a store's new -wal) never shows. Entries that vanished meanwhile are
    skipped (`--bind-try`). Returns the tmpfs folders, made read-only at the end."""
    masks: list[str] = []
    for path in sorted(sealed, key=lambda p: p.count("/")):  # outer ones first
        if not os.path.isdir(path) or not any(inside(path, b) for b in visible):
            continue
        if any(inside(path, h) for h in hidden):
            continue  # hidden whole
        writable = any(inside(path, w) for w in write_roots)
        writable = writable and not any(inside(path, f) for f in frozen)
        try:
            entries = list(os.scandir(path))
        except OSError:
            continue
        words += ["--tmpfs", path]
        masks.append(path)
        for entry in entries:
            child = entry.path
            if any(inside(child, h) for h in hidden):
                continue
            if entry.is_symlink():
                with contextlib.suppress(OSError):
                    words += ["--symlink", os.readlink(child), child]
                continue
            in_write = writable or any(inside(child, w) for w in write_roots)
            rw = in_write and not any(inside(child, f) for f in frozen)
            words += ["--bind-try" if rw else "--ro-bind-try", child, child]
            _rebind_inside(words, child, rw, write_roots, frozen)
    return masks


def _rebind_inside(
    words: list[str], child: str, rw: bool, write_roots: list[str], frozen: list[str]
) -> None:
    """After a sealed folder's entry is bound again: the workspace inside it writable again (the
    store's folder holding the workspace), and what is frozen inside a writable part read-only
    again (the venv cache in a workspace)."""
    inner_writes = [w for w in write_roots if w != child and inside(w, child)]
    for w in inner_writes:
        words += ["--bind", w, w]
    for f in frozen:
        writable_here = rw or any(inside(f, w) for w in inner_writes)
        if f != child and inside(f, child) and writable_here and os.path.isdir(f):
            words += ["--ro-bind", f, f]
