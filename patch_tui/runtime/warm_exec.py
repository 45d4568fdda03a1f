"""The warm side of a sandboxed tool process: confined once, then a fresh fork for every call.

    python -I -S -c "$(cat sandbox_exec.py warm_exec.py)
    warm_main()" SPEC_FD TOOL_FD CONTROL_FD ENGINE

Standard library only, like sandbox_exec.py, whose text comes first in the same `-c` (this code
calls its `read_spec`, `confine` and `add_site`). The process starts exactly as a cold run's
does (the same sandbox, the same spec, confined before anything of the tool's runs), compiles
the tool once, imports the modules the tool imports at its top level, and then waits on
CONTROL_FD (one end of a socketpair made before the sandbox: no socket is opened here) for
calls. Each call comes as a line of JSON with three FDs (the call's stdin, stdout and stderr):

- a child is forked: it closes the control socket, takes the call's FDs as 0, 1 and 2, gets the
  call's environment and a fresh `__main__`, leaves the capabilities of its user namespace
  behind (it could otherwise read or write this process's memory), and runs the tool's code;
- when it exits, every other process of the sandbox is killed (this process is PID 1 of the
  sandbox's PID namespace: `kill(-1)` reaches all of them, nothing the call started survives),
  the System V IPC objects (the sandbox has its own IPC namespace) and the private tmpfs files a call made are removed, and the exit
  status goes back as one line.

What the call changed in memory was its own copy (fork); its files are removed by the server
before the next call; its environment is built anew by the next child.
"""

# (This text follows sandbox_exec.py's in the same `-c`: os, sys, ctypes and its helpers are
# already there; the imports below are for readers and linters.)
from __future__ import annotations

import ctypes
import os
import sys
from types import CodeType
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # defined by sandbox_exec.py's text, which comes first in the same `-c`
    from patch_tui.runtime.sandbox_exec import _fail, add_site, confine, read_spec

CLONE_NEWIPC = 0x08000000
PR_SET_SECUREBITS = 28
SECBIT_NOROOT_AND_LOCKS = 0x3F  # NOROOT, NO_SETUID_FIXUP, KEEP_CAPS, each locked
_LINUX_CAPABILITY_VERSION_3 = 0x20080522


def _warm_libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def drop_capabilities(libc: ctypes.CDLL) -> None:
    """No capability left in this user namespace, nor after an exec: as root of the run's user
    namespace (the unshare engine) a call could otherwise ptrace the warm process."""
    if os.geteuid() == 0:
        libc.prctl(PR_SET_SECUREBITS, SECBIT_NOROOT_AND_LOCKS, 0, 0, 0)
    header = (ctypes.c_uint32 * 2)(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()  # effective, permitted, inheritable: all zero (two words)
    if libc.syscall(126 if os.uname().machine == "x86_64" else 91, header, data) != 0:
        raise OSError(ctypes.get_errno(), "capset")


def _entries(roots: list[str]) -> set[str]:
    seen: set[str] = set()
    for root in roots:
        for folder, dirs, files in os.walk(root):
            seen.update(os.path.join(folder, n) for n in dirs + files)
    return seen


def _remove_new(roots: list[str], before: set[str]) -> None:
    import shutil

    for path in sorted(_entries(roots) - before, key=len):
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            try:
                os.unlink(path)
            except OSError:
                pass


def _remove_ipc(libc: ctypes.CDLL) -> None:
    """System V IPC objects left in this sandbox's IPC namespace (bwrap's own) by a call."""
    for kind, remove in (
        ("shm", lambda i: libc.shmctl(i, 0, None)),
        ("msg", lambda i: libc.msgctl(i, 0, None)),
        ("sem", lambda i: libc.semctl(i, 0, 0)),
    ):
        try:
            with open(f"/proc/sysvipc/{kind}", encoding="ascii") as fh:
                rows = fh.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            if len(fields) > 1:
                remove(int(fields[1]))  # IPC_RMID = 0


def _kill_the_rest() -> None:
    """Every process of the sandbox but this one (PID 1 here), then their exit reaped."""
    import signal

    try:
        os.kill(-1, signal.SIGKILL)
    except ProcessLookupError:
        pass
    while True:
        try:
            if os.waitpid(-1, 0)[0] == 0:
                break
        except ChildProcessError:
            break


def _preload(source: bytes) -> None:
    """Import what the tool imports at its top level: once here, not in every call."""
    import ast
    import importlib

    try:
        tree = ast.parse(source)
    except SyntaxError:
        return
    for node in tree.body:
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        for name in names:
            try:
                importlib.import_module(name)
            except BaseException:  # the call will meet the same error, in its own process
                pass


def _run_call(code: CodeType, tool_path: str, env: dict, libc: ctypes.CDLL) -> int:
    """In the forked child: the call's process, as `python tool.py` would run."""
    import builtins
    import io
    import signal
    import types

    signal.signal(signal.SIGINT, signal.default_int_handler)
    drop_capabilities(libc)
    libc.prctl(4, 1, 0, 0, 0)  # PR_SET_DUMPABLE 1: the call's own /proc files, as a cold run's
    os.environ.clear()
    os.environ.update(env)
    os.chdir(env.get("PWD", os.path.dirname(tool_path)))
    if "tempfile" in sys.modules:
        setattr(sys.modules["tempfile"], "tempdir", None)  # noqa: B010 - TMPDIR is this call's
    sys.stdin = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r", closefd=False)), "utf-8")
    sys.stdout = io.TextIOWrapper(
        io.BufferedWriter(io.FileIO(1, "w", closefd=False)), "utf-8", write_through=False
    )
    sys.stderr = io.TextIOWrapper(
        io.BufferedWriter(io.FileIO(2, "w", closefd=False)),
        "utf-8",
        errors="backslashreplace",
        line_buffering=True,
    )
    main = types.ModuleType("__main__")
    main.__dict__.update(__file__=tool_path, __builtins__=builtins, __cached__=None)
    sys.modules["__main__"] = main
    sys.argv[:] = [tool_path]
    status = 0
    try:
        exec(code, main.__dict__)  # noqa: S102 - the tool's own code, confined
    except SystemExit as exc:
        status = _exit_status(exc.code)
    except BaseException:
        import traceback

        traceback.print_exc()
        status = 1
    status = _finish(status)
    return status


def _exit_status(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _finish(status: int) -> int:
    """What Python does at exit: wait for the tool's threads, run its atexit calls, flush."""
    import atexit

    try:
        if "threading" in sys.modules:
            sys.modules["threading"]._shutdown()
        atexit._run_exitfuncs()
    except SystemExit as exc:
        status = _exit_status(exc.code)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    return status


def warm_main() -> None:
    spec = read_spec(int(sys.argv[1]))
    confine(spec)
    add_site(spec.get("site", []))
    fd = int(sys.argv[2])
    source = b"".join(iter(lambda: os.read(fd, 65536), b""))
    os.close(fd)
    import json
    import socket

    control = socket.socket(fileno=int(sys.argv[3]))
    libc = _warm_libc()
    libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0: no call may read or write this memory
    import signal

    # PID 1 ignores the signals it has no handler for; Python's SIGINT handler would let a call
    # end this process (and so its own sandbox) from inside. Each call gets Python's back.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # An IPC namespace of the sandbox's own, cleared after each call: bwrap made one; under the
    # unshare engine this process makes it (root of its user namespace, it has the capability).
    if sys.argv[4] != "bwrap" and libc.unshare(CLONE_NEWIPC) != 0:
        _fail("cannot give the sandbox an IPC namespace of its own")
    tool_path = os.path.join(os.getcwd(), "tool.py")
    code = compile(source, tool_path, "exec", dont_inherit=True)
    _preload(source)
    before: set[str] | None = None  # the private tmpfs mounts' entries before any call
    control.send(b'{"ready": true}')
    while True:
        message, fds, _flags, _addr = socket.recv_fds(control, 65536, 3)
        if not message:
            os._exit(0)  # the server is gone
        call = json.loads(message)
        wipe = list(call.get("wipe", []))
        if before is None:
            before = _entries(wipe)
        pid = os.fork()
        if pid == 0:
            control.close()
            for target, got in enumerate(fds):
                os.dup2(got, target)
                os.close(got)
            os._exit(_run_call(code, tool_path, call["env"], libc))
        for got in fds:
            os.close(got)
        _, status = os.waitpid(pid, 0)
        _kill_the_rest()
        _remove_ipc(libc)
        _remove_new(wipe, before)
        code_out = os.waitstatus_to_exitcode(status)
        control.send(json.dumps({"exit": code_out}).encode())
