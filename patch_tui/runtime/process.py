"""Starting the tool's process and watching it: namespaces, limits, the pipes, cancelling.

The runner (runner.py) decides what runs; this module starts it and reads it:
- `namespace_support` / `sandbox_prefix`: the `unshare` words that give a run its own PID
  namespace (and /proc) and, with `network: false`, a network namespace with a downed loopback;
- `preexec`: rlimits (CPU, address space, file size, no core) and a parent-death signal, set in
  the child between fork and exec (after the sandbox's own step: cgroup, RLIMIT_NPROC);
- `communicate`: stdin fed by a thread, stdout/stderr read up to their caps, the timeout, a
  cancel from another thread (`cancel_with`), and the whole process group killed when needed;
- `LOADER` / `source_fd`: the tool's bytes handed over by a sealed memfd, never read from a path.
"""

from __future__ import annotations

import contextlib
import math
import os
import selectors
import shutil
import signal
import subprocess
import sys
import threading
import time
from typing import Any

CANCELLED = "the run was cancelled"
STDOUT_CAP = 4 << 20
STDERR_CAP = 1 << 20
ADDRESS_SPACE = 4 << 30
FILE_SIZE = 256 << 20
# After the tool's main process exits, how long its pipes may stay open (a leftover grandchild)
# before the group is killed: the result is already complete by then.
EXIT_GRACE = 0.5
SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"

# Cancelling a run from another thread (Try it's Cancel, or closing its panel): the thread that
# runs the tool says which event it obeys with `cancel_with`, and `communicate` kills the
# process group once it is set, as it does on a timeout.
_local = threading.local()


@contextlib.contextmanager
def cancel_with(event: threading.Event) -> Any:
    _local.cancel = event
    try:
        yield
    finally:
        _local.cancel = None


def cancel_requested() -> bool:
    event = getattr(_local, "cancel", None)
    return event is not None and event.is_set()


# -- namespaces -------------------------------------------------------------------------------

_NS_LOCK = threading.Lock()
_NS_CACHE: dict[str, bool] = {}


def _probe(args: list[str]) -> bool:
    try:
        done = subprocess.run(
            args, stdin=subprocess.DEVNULL, capture_output=True, timeout=10, env={"PATH": SAFE_PATH}
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def _probe_key(unshare: str) -> str:
    """What the probe's answer depends on: this boot, this user, this unshare, the kernel's
    user-namespace settings (a change to any of them probes again)."""
    parts = [str(os.getuid()), unshare, str(os.stat(unshare).st_mtime_ns)]
    for name in (
        "/proc/sys/kernel/random/boot_id",
        "/proc/sys/user/max_user_namespaces",
        "/proc/sys/kernel/unprivileged_userns_clone",
        "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
    ):
        with contextlib.suppress(OSError):
            with open(name, encoding="ascii") as fh:
                parts.append(fh.read().strip())
    return "\n".join(parts)


def _probed_before(unshare: str, *, remember: bool = False) -> bool:
    """Whether every namespace worked when probed before under the same key (a `run` is a new
    process each time: the probe's spawn cost each one ~10 ms). Only success is remembered: a
    host that could not isolate is probed again every time. The file lives in the cache folder,
    which no tool may write (it is frozen for every run)."""
    from patch_tui.settings import paths

    try:
        key = _probe_key(unshare)
        marker = paths.cache_dir() / "namespaces-ok"
        if remember:
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.write_text(key, encoding="utf-8")
            return True
        return marker.read_text(encoding="utf-8") == key
    except (OSError, ValueError):
        return False


def namespace_support() -> dict[str, bool]:
    """Which `unshare` sandboxes work on this host: {"pid_net", "pid", "net"}. Probed once."""
    with _NS_LOCK:
        if not _NS_CACHE:
            unshare = shutil.which("unshare", path=SAFE_PATH)
            if unshare is None or not sys.platform.startswith("linux"):
                _NS_CACHE.update(pid_net=False, pid=False, net=False)
            else:
                pid_flags = ["-rpf", "--mount-proc", "--kill-child"]
                if _probed_before(unshare):  # every namespace worked, this boot: no spawn
                    _NS_CACHE.update(pid_net=True, pid=True, net=True)
                    return dict(_NS_CACHE)
                _NS_CACHE["pid_net"] = _probe([unshare, *pid_flags, "-n", "true"])
                if _NS_CACHE["pid_net"]:
                    _probed_before(unshare, remember=True)
                _NS_CACHE["pid"] = _NS_CACHE["pid_net"] or _probe([unshare, *pid_flags, "true"])
                _NS_CACHE["net"] = _NS_CACHE["pid_net"] or _probe([unshare, "-rn", "true"])
        return dict(_NS_CACHE)


def sandbox_prefix(network: bool) -> tuple[list[str], bool, bool]:
    """The `unshare` words to put before the command, and whether they give (pid ns, net ns)."""
    ns = namespace_support()
    unshare = shutil.which("unshare", path=SAFE_PATH) or "unshare"
    pid_flags = [unshare, "-rpf", "--mount-proc", "--kill-child"]
    if not network and ns["pid_net"]:
        return [*pid_flags, "-n"], True, True
    if network and ns["pid"]:
        return pid_flags, True, False
    if not network and ns["net"]:
        return [unshare, "-rn"], False, True
    return [], False, False


# -- the process ------------------------------------------------------------------------------


def limits(timeout: float) -> list[tuple[int, int]]:
    import resource

    cpu = int(math.ceil(timeout)) + 1
    return [
        (resource.RLIMIT_CPU, cpu),
        (resource.RLIMIT_AS, ADDRESS_SPACE),
        (resource.RLIMIT_FSIZE, FILE_SIZE),
        (resource.RLIMIT_CORE, 0),
    ]


def _libc() -> Any:
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True)
    except (OSError, ImportError):
        return None


PR_SET_PDEATHSIG = 1


def preexec(limits: list[tuple[int, int]], then: Any = None) -> Any:
    import resource

    libc = _libc() if sys.platform.startswith("linux") else None  # loaded before the fork

    def apply() -> None:  # runs in the child between fork and exec: syscalls only
        if then is not None:
            then()  # join the run's cgroup first: everything the run starts is counted
        for which, value in limits:
            with contextlib.suppress(ValueError, OSError):
                resource.setrlimit(which, (value, value))
        if libc is not None:
            # If we die (even by kill -9), the run dies with us instead of running on unwatched;
            # with a PID namespace, unshare's --kill-child then takes the whole tree.
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)

    return apply


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def _feed(proc: subprocess.Popen[bytes], data: bytes) -> None:
    assert proc.stdin is not None
    with contextlib.suppress(BrokenPipeError, OSError):
        proc.stdin.write(data)
    with contextlib.suppress(BrokenPipeError, OSError):
        proc.stdin.close()


def communicate(
    proc: subprocess.Popen[bytes], data: bytes, timeout: float
) -> tuple[bytes, bytes, bool, str | None]:
    """stdout, stderr, timed out, which stream overflowed. Kills the group when it has to."""
    writer = threading.Thread(target=_feed, args=(proc, data), daemon=True)
    writer.start()
    assert proc.stdout is not None and proc.stderr is not None
    out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
    bufs = {out_fd: bytearray(), err_fd: bytearray()}
    caps = {out_fd: STDOUT_CAP, err_fd: STDERR_CAP}
    names = {out_fd: "stdout", err_fd: "stderr"}
    sel = selectors.DefaultSelector()
    for fd in bufs:
        os.set_blocking(fd, False)
        sel.register(fd, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    exited_at: float | None = None
    timed_out = False
    overflow: str | None = None
    try:
        while sel.get_map():
            now = time.monotonic()
            if exited_at is None and proc.poll() is not None:
                exited_at = now
            if exited_at is not None and now - exited_at > EXIT_GRACE:
                _kill_group(proc)  # a leftover holds the pipes open; the result is complete
                break
            if now >= deadline:
                timed_out = True
                _kill_group(proc)
                break
            if cancel_requested():
                _kill_group(proc)
                break
            wait = min(deadline - now, 0.05 if exited_at is not None else 0.25)
            for key, _ in sel.select(wait):
                fd = int(key.fd)
                try:
                    chunk = os.read(fd, 65536)
                except BlockingIOError:
                    continue
                if not chunk:
                    sel.unregister(fd)
                    continue
                buf = bufs[fd]
                room = caps[fd] - len(buf)
                buf += chunk[: max(room, 0)]
                if len(chunk) > room:
                    overflow = names[fd]
                    _kill_group(proc)
                    sel.close()
                    break
    finally:
        sel.close()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            proc.wait(timeout=5)
        _kill_group(proc)  # anything of the group still around (no PID namespace)
        writer.join(timeout=1)
        for stream in (proc.stdout, proc.stderr):
            with contextlib.suppress(OSError):
                stream.close()
    return bytes(bufs[out_fd]), bytes(bufs[err_fd]), timed_out, overflow


# Run as `python -c LOADER FD` in the working folder: reads the tool's bytes from the inherited
# FD and runs them as `python tool.py` would (`__name__`, `__file__`, `sys.argv[0]`), leaving no
# loader name in the tool's globals. The FD is closed before the tool's code runs.
LOADER = """\
def _patch_load():
    import os, sys
    fd = int(sys.argv[1])
    data = b"".join(iter(lambda: os.read(fd, 65536), b""))
    os.close(fd)
    main = sys.modules["__main__"].__dict__
    del main["_patch_load"]
    main["__file__"] = os.path.join(os.getcwd(), "tool.py")
    sys.argv[:] = ["tool.py"]
    return compile(data, main["__file__"], "exec", dont_inherit=True), main
exec(*_patch_load())
"""


def sealed_memfd(name: str, data: bytes) -> int:
    """Linux: a memfd holding exactly `data`, sealed against every write, grow and shrink, read
    from offset 0 (the tool's source, bwrap's seccomp program)."""
    import fcntl

    fd = os.memfd_create(name, os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        seals = fcntl.F_SEAL_WRITE | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_SEAL
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, seals)
        os.lseek(fd, 0, os.SEEK_SET)
    except OSError:
        os.close(fd)
        raise
    return fd


def source_fd(data: bytes) -> tuple[int, threading.Thread | None]:
    """A read-only FD holding exactly `data`, for the tool's process to inherit.

    Linux: a memfd sealed against every write, grow and shrink, so not even a process of the same
    user opening /proc/<pid>/fd/<n> can change it. Elsewhere: a pipe fed by a thread (no path to
    open; write failures after the child died are ignored)."""
    if hasattr(os, "memfd_create"):
        return sealed_memfd("tool.py", data), None
    read_end, write_end = os.pipe()

    def feed() -> None:
        with contextlib.suppress(OSError), os.fdopen(write_end, "wb") as pipe:
            pipe.write(data)

    return read_end, threading.Thread(target=feed, daemon=True)
