"""Warm sandboxed processes for `serve`: a tool call at the cost of a fork (issue 27).

    pool = enable_pool()                     # serve, once
    done = pool.run(WarmCall(...))           # runner._run, per call; None: run it cold

A cold run starts a sandbox (bwrap, or unshare + Landlock), an interpreter, and the tool's
imports for every call: about 90-160 ms. A warm process is the same start made once per
(tool source, interpreter and venv, capabilities, protected paths, limits): the same
`sandbox.prepare` plan, the same spec, confined before anything of the tool's runs
(sandbox_exec.py), and then `warm_exec.py` forks a fresh child for each call. What one call
leaves behind never reaches the next:
- memory: each call is a fork (a copy) of the warm process, which is not dumpable, and the call
  has dropped every capability first, so it cannot read or write the warm process's memory;
- processes: the warm process is PID 1 of the sandbox's PID namespace and kills every other
  process in it (`kill(-1)`) as soon as the call's process exits;
- files: the run folder's work/, home/ and tmp/ are emptied (and everything else a call made in
  the run folder removed) by this process before the next call, as are the files a call made in
  the sandbox's private tmpfs mounts (bwrap's /dev, masks), and System V IPC objects;
- environment: built anew for each call (the same one a cold run gets);
- outputs: each call has its own stdin, stdout and stderr pipes; taint is the gate's, per call.
One call at a time per warm process (a second concurrent call of the same tool gets another
one, up to MAX_WARM in all; past that it runs cold). A warm process ends after IDLE_SECONDS
without a call, on a timeout, an output cap or a cancel in one of its calls (then the whole
sandbox is killed, as a cold run's), or when its interpreter grew past MAX_RSS.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from patch_tui.runtime import sandbox
from patch_tui.runtime.process import limits, preexec, sandbox_prefix, sealed_memfd
from patch_tui.runtime.warm_io import feed_stdin, rss, watch

if TYPE_CHECKING:
    from patch_tui.format.plain_manifest import RunManifest
    from patch_tui.runtime.protected import Protected
    from patch_tui.runtime.venvs import Venv

MAX_WARM = 4  # warm processes at once, all tools together
IDLE_SECONDS = 60.0  # a warm process nobody called for this long ends
MAX_RSS = 512 << 20  # a warm interpreter bigger than this ends after its call
START_TIMEOUT = 20.0  # for the warm process to be confined, compiled and ready
_WARM_EXEC = Path(__file__).with_name("warm_exec.py")
_TEXT: list[str] = []

EnvFor = Callable[[Path, Path, Path], tuple[dict[str, str], list[str]]]


@dataclass
class WarmCall:
    """One call, as the runner has it: everything that decides the sandbox, and the call's own
    stdin and environment (`env_for(home, tmpdir, work)`)."""

    source: bytes
    stdin: bytes
    timeout: float
    python: str
    site: list[str]
    read_extra: list[Path]
    filesystem: str
    network: bool
    workspace: Path | None
    hidden: list[Path]
    frozen: list[Path]
    sealed: list[Path]
    memory_bytes: int
    max_processes: int
    engine: str | None
    env_for: EnvFor

    def key(self) -> tuple[Any, ...]:
        """What a warm process is made for: another tool source, interpreter or venv (its
        folders' identity too: a venv made again), capability, protected path or limit, and
        it is another warm process."""
        venv_state = tuple(_identity(p) for p in self.site)
        return (
            self.source,
            self.python,
            _identity(self.python),
            tuple(self.site),
            venv_state,
            tuple(str(p) for p in self.read_extra),
            self.filesystem,
            self.network,
            str(self.workspace),
            tuple(str(p) for p in self.hidden),
            tuple(str(p) for p in self.frozen),
            tuple(str(p) for p in self.sealed),
            self.memory_bytes,
            self.max_processes,
            sandbox.choose_engine(self.engine),
            self.timeout,
        )


@dataclass
class WarmResult:
    out: bytes
    err: bytes
    returncode: int
    timed_out: bool
    overflow: str | None
    plan: sandbox.Plan
    envs_keys: list[str]
    duration_ms: int

    @property
    def outcome(self) -> tuple[bytes, bytes, int, bool, str | None]:
        """What the runner's `_interpret` reads, in its order."""
        return self.out, self.err, self.returncode, self.timed_out, self.overflow


def _identity(path: str | Path) -> tuple[int, int, int]:
    try:
        st = os.stat(path)
    except OSError:
        return (0, 0, 0)
    return (st.st_ino, st.st_mtime_ns, st.st_ctime_ns)


def _exec_text() -> str:
    if not _TEXT:
        # sandbox_exec's text first (confinement, spec), then the warm loop that uses it.
        # (Its `from __future__` line goes: only the first text's may stand, at the top.)
        warm_text = _WARM_EXEC.read_text(encoding="utf-8").replace(
            "from __future__ import annotations\n", ""
        )
        _TEXT.append(sandbox._exec_source() + "\n" + warm_text + "\nwarm_main()\n")
    return _TEXT[0]


@dataclass
class WarmProcess:
    key: tuple[Any, ...]
    proc: subprocess.Popen[bytes]
    control: socket.socket
    folder: Path
    plan: sandbox.Plan
    stack: contextlib.ExitStack
    busy: bool = False
    last_used: float = field(default_factory=time.monotonic)
    alive: bool = True
    # bwrap's own tmpfs mounts (its /dev, the masks over hidden folders): a call's files there
    # are removed after it. Sent with each call, never in argv (calls can read PID 1's cmdline).
    wipe: list[str] = field(default_factory=list)

    def end(self) -> None:
        """Kill the whole sandbox and remove what it held (cgroup, run folder)."""
        self.alive = False
        with contextlib.suppress(OSError):
            self.control.close()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        with contextlib.suppress(OSError):
            if self.proc.stderr is not None:
                self.proc.stderr.close()
        self.plan.finish()
        self.stack.close()

    def reset_folder(self, source: bytes) -> None:
        """The run folder as a cold run finds it: empty work/, home/, tmp/ (and nothing else a
        call made), tool.py in work/ for tools that read their own file."""
        for entry in os.scandir(self.folder):
            if entry.name == sandbox.LOCK_NAME:
                continue
            path = Path(entry.path)
            if entry.name in ("work", "home", "tmp") and entry.is_dir(follow_symlinks=False):
                for inner in os.scandir(path):
                    _remove(Path(inner.path))
            else:
                _remove(path)
        for name in ("work", "home", "tmp"):
            (self.folder / name).mkdir(mode=0o700, exist_ok=True)
        (self.folder / "work" / "tool.py").write_bytes(source)


def _private_tmpfs(plan: sandbox.Plan) -> list[str]:
    """The folders bwrap mounts a fresh tmpfs on (`--tmpfs`, `--dev`), read back from the
    words it gets by memfd (`--args FD`): only those are the sandbox's own to clear. A bind of
    the host's tmpfs (a workspace in /tmp) is not among them."""
    words = plan.prefix
    if "--args" not in words:
        return []
    fd = int(words[words.index("--args") + 1])
    data = b""
    with contextlib.suppress(OSError):
        size = os.fstat(fd).st_size
        data = os.pread(fd, size, 0)
    parts = [os.fsdecode(w) for w in data.split(b"\0")]
    # A tmpfs made read-only at the end (the masks over hidden folders, the sealed folders whose
    # entries are bound back into it: a workspace, a store's folder) holds nothing a call wrote;
    # clearing it would reach through those binds into the user's own files.
    readonly = {parts[i + 1] for i, w in enumerate(parts[:-1]) if w == "--remount-ro"}
    return [
        parts[i + 1]
        for i, w in enumerate(parts[:-1])
        if w in ("--tmpfs", "--dev") and parts[i + 1] not in readonly
    ]


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            path.unlink()


class WarmPool:
    """The warm processes of one `serve`, bounded in number, ended when idle."""

    def __init__(
        self,
        max_warm: int = MAX_WARM,
        idle_seconds: float = IDLE_SECONDS,
        max_rss: int = MAX_RSS,
    ) -> None:
        self.max_warm = max_warm
        self.idle_seconds = idle_seconds
        self.max_rss = max_rss
        self._lock = threading.Lock()
        self._processes: list[WarmProcess] = []
        self._closed = False
        self._stop = threading.Event()
        self._reaper = threading.Thread(target=self._reap, name="warm reaper", daemon=True)
        self._reaper.start()

    # -- the pool -----------------------------------------------------------------------------

    @property
    def processes(self) -> list[WarmProcess]:
        with self._lock:
            return [p for p in self._processes if p.alive]

    def _acquire(self, call: WarmCall) -> tuple[WarmProcess | None, bool]:
        """An idle warm process for this call's key (True: it must be started first)."""
        key = call.key()
        with self._lock:
            if self._closed:
                return None, False
            self._processes = [p for p in self._processes if p.alive]
            for wp in self._processes:
                if wp.key == key and not wp.busy:
                    wp.busy = True
                    return wp, False
            if len(self._processes) >= self.max_warm:
                idle = [p for p in self._processes if not p.busy]
                if not idle:
                    return None, False  # every slot busy: this call runs cold
                oldest = min(idle, key=lambda p: p.last_used)
                oldest.busy = True
                self._processes.remove(oldest)
                victim: WarmProcess | None = oldest
            else:
                victim = None
        if victim is not None:
            victim.end()
        return None, True

    def _release(self, wp: WarmProcess, *, healthy: bool) -> None:
        if not healthy or not wp.alive:
            with self._lock:
                if wp in self._processes:
                    self._processes.remove(wp)
            wp.end()
            return
        with self._lock:
            wp.busy = False
            wp.last_used = time.monotonic()

    def _reap(self) -> None:
        while not self._stop.wait(min(5.0, self.idle_seconds / 2)):
            now = time.monotonic()
            with self._lock:
                old = [
                    p
                    for p in self._processes
                    if not p.busy and now - p.last_used > self.idle_seconds
                ]
                for p in old:
                    self._processes.remove(p)
            for p in old:
                p.end()

    def close(self) -> None:
        self._stop.set()
        with self._lock:
            self._closed = True
            gone, self._processes = self._processes, []
        for p in gone:
            p.end()

    # -- a call -------------------------------------------------------------------------------

    def run(self, call: WarmCall) -> WarmResult | None:
        """Run the call in a fresh fork of its warm process; None when it cannot be warm here
        (no PID namespace, no sandbox, every slot busy, the start failed): run it cold."""
        wp, start = self._acquire(call)
        if wp is None and start:
            wp = self._start(call)
            if wp is None:
                return None
            with self._lock:
                if self._closed:
                    wp.end()
                    return None
                self._processes.append(wp)
        if wp is None:
            return None
        healthy = False
        try:
            result, healthy = self._call(wp, call)
            return result
        finally:
            self._release(wp, healthy=healthy)

    def _start(self, call: WarmCall) -> WarmProcess | None:
        engine = sandbox.choose_engine(call.engine)
        if engine == "none":
            return None
        if engine == "bwrap":
            prefix: list[str] = []
            pid_ns, net_ns = True, not call.network
        else:
            prefix, pid_ns, net_ns = sandbox_prefix(call.network)
            if not pid_ns:
                return None  # no PID namespace: nothing could kill what a call leaves running
        stack = contextlib.ExitStack()
        try:
            folder = stack.enter_context(sandbox.run_folder())
        except OSError:
            stack.close()
            return None
        plan = sandbox.prepare(
            sandbox.Request(
                run_dir=folder,
                filesystem=call.filesystem,
                network=call.network,
                python=call.python,
                workspace=call.workspace,
                hidden=call.hidden,
                frozen=call.frozen,
                sealed=call.sealed,
                read_extra=call.read_extra,
                memory_bytes=call.memory_bytes,
                max_processes=call.max_processes,
                engine=engine,
                pid_ns=pid_ns,
                net_ns=net_ns,
                site=call.site,
            )
        )
        wipe: list[str] = []
        if plan.engine == "bwrap":
            # The warm process is PID 1 of the sandbox: its kill(-1) reaches every other one.
            plan.prefix[1:1] = ["--as-pid-1"]
            wipe = _private_tmpfs(plan)
        wp = self._spawn(call, prefix, plan, folder, stack)
        if wp is not None:
            wp.wipe = wipe
        return wp

    def _spawn(
        self,
        call: WarmCall,
        prefix: list[str],
        plan: sandbox.Plan,
        folder: Path,
        stack: contextlib.ExitStack,
    ) -> WarmProcess | None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        spec_fd = src_fd = -1
        try:
            (folder / "work" / "tool.py").write_bytes(call.source)
            env, _keys = call.env_for(folder / "home", folder / "tmp", folder / "work")
            env.pop("PATCH_ACCESS_TOKEN", None)  # a call's own, never the warm process's
            spec_fd = sealed_memfd("patch-sandbox-spec", repr(plan.spec or {}).encode("utf-8"))
            src_fd = sealed_memfd("tool.py", call.source)
            words = [str(spec_fd), str(src_fd), str(theirs.fileno()), plan.engine]
            cmd = [*prefix, *plan.prefix, call.python, "-I", "-S", "-X", "utf8"]
            cmd += ["-c", _exec_text(), *words]
            proc = subprocess.Popen(
                cmd,
                cwd=folder / "work",
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                pass_fds=(spec_fd, src_fd, theirs.fileno(), *plan.pass_fds),
                start_new_session=True,
                preexec_fn=preexec(limits(call.timeout), plan.preexec()),
            )
        except (OSError, subprocess.SubprocessError):
            ours.close()
            plan.finish()
            stack.close()
            return None
        finally:
            theirs.close()
            for fd in (spec_fd, src_fd):
                if fd >= 0:
                    os.close(fd)
            plan.close_fds()
        wp = WarmProcess(call.key(), proc, ours, folder, plan, stack, busy=True)
        ours.settimeout(START_TIMEOUT)
        try:
            ready = json.loads(ours.recv(4096) or b"{}").get("ready")
        except (OSError, ValueError):
            ready = False
        if not ready:
            wp.end()  # the cold run that follows says what went wrong, as it always has
            return None
        ours.settimeout(None)
        return wp

    def _call(self, wp: WarmProcess, call: WarmCall) -> tuple[WarmResult | None, bool]:
        """(the result, whether the warm process may serve another call)."""
        wp.reset_folder(call.source)
        home, tmpdir, work = wp.folder / "home", wp.folder / "tmp", wp.folder / "work"
        env, envs_keys = call.env_for(home, tmpdir, work)
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        started = time.monotonic()
        try:
            message = json.dumps({"env": env, "wipe": wp.wipe}).encode()
            socket.send_fds(wp.control, [message], [in_r, out_w, err_w])
        except OSError:
            for fd in (in_r, in_w, out_r, out_w, err_r, err_w):
                os.close(fd)
            return None, False
        finally:
            for fd in (in_r, out_w, err_w):
                with contextlib.suppress(OSError):
                    os.close(fd)
        feeder = feed_stdin(in_w, call.stdin)
        watched = watch(wp, out_r, err_r, call.timeout, started)
        out, err, status, timed_out, overflow = watched
        if feeder is not None:
            feeder.join(timeout=1)
        duration = int((time.monotonic() - started) * 1000)
        healthy = status is not None and not timed_out and overflow is None
        if status is None:
            wp.end()  # stopped (timeout, cap, cancel) or died: the whole sandbox goes
            status = -signal.SIGKILL
        elif rss(wp) > self.max_rss:
            healthy = False
        plan = dataclasses.replace(
            wp.plan,
            lines=[
                *wp.plan.lines,
                "process: a fresh fork of a warm sandboxed interpreter (the same sandbox, "
                "made for this tool); every process of the call ended, and its files removed, "
                "before the next call.",
            ],
            cgroup=None,  # the warm process's, removed when it ends
            pass_fds=[],
        )
        return WarmResult(out, err, status, timed_out, overflow, plan, envs_keys, duration), healthy


def run_call(
    manifest: RunManifest,
    stdin: bytes,
    source: bytes,
    timeout: float,
    venv: Venv | None,
    iso: Any,  # runner.Isolation (this module does not import the runner)
    guard: Protected,
    workspace: Path | None,
    env_for: EnvFor,
) -> WarmResult | None:
    """A runner's call in its warm process, when this process keeps them (serve); else None."""
    pool = active_pool()
    if pool is None:
        return None
    return pool.run(
        WarmCall(
            source=source,
            stdin=stdin,
            timeout=timeout,
            python=sys.executable,  # never the venv's bin/python (runner._start_and_watch)
            site=venv.site if venv is not None else [],
            read_extra=[venv.python.parent.parent] if venv is not None else [],
            filesystem=manifest.capabilities.filesystem,
            network=manifest.capabilities.network,
            workspace=workspace,
            hidden=guard.hidden,
            frozen=guard.frozen,
            sealed=guard.sealed,
            memory_bytes=iso.memory_bytes,
            max_processes=iso.max_processes,
            engine=iso.engine,
            env_for=env_for,
        )
    )


# -- the pool of this process (serve turns it on) ------------------------------------------------

_POOL: list[WarmPool] = []


def enable_pool(**kwargs: Any) -> WarmPool:
    """Turn on warm runs for this process (serve); the pool ends at exit."""
    import atexit

    if not _POOL:
        _POOL.append(WarmPool(**kwargs))
        atexit.register(disable_pool)
    return _POOL[0]


def active_pool() -> WarmPool | None:
    return _POOL[0] if _POOL else None


def disable_pool() -> None:
    while _POOL:
        _POOL.pop().close()
