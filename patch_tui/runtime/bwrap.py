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
    for path in sealed:
        # No entry made, removed or renamed in it; what it holds stays writable.
        if not os.path.isdir(path) or not any(inside(path, w) for w in write_roots):
            continue
        if any(inside(path, f) for f in frozen):
            continue
        words += ["--ro-bind", path, path]
        with contextlib.suppress(OSError):
            for entry in os.scandir(path):
                child = entry.path
                # Folders and files both: its entries stay writable, the folder itself not.
                kind_ok = entry.is_dir(follow_symlinks=False) or entry.is_file(
                    follow_symlinks=False
                )
                if kind_ok and not any(
                    inside(child, h) or inside(h, child) for h in hidden + frozen
                ):
                    words += ["--bind", child, child]
    masks: list[str] = []
    for path in hidden:
        if path == "/proc" or not any(inside(path, b) for b in visible):
            continue
        if os.path.isdir(path):
            # An empty tmpfs of its own, made read-only at the end (once the run's own folder,
            # inside the hidden runs root, is bound in it): nothing to read, nothing written.
            words += ["--tmpfs", path]
            masks.append(path)
        elif os.path.exists(path):
            words += ["--ro-bind", "/dev/null", path]
        else:
            # Not there yet (a store's -wal): its folder is frozen, so it cannot be made either.
            continue
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
