"""Filesystem, unix-socket and resource isolation for one tool run (issue 11).

    plan = prepare(Request(run_dir=..., filesystem="none", network=False, ...))
    cmd = [*plan.prefix, *plan.python_command(python, flags, "tool.py")]
    Popen(cmd, pass_fds=plan.pass_fds, preexec_fn=plan.preexec()); plan.close_fds(); ...
    plan.finish()
    plan.claims   -> ["filesystem:landlock-abi7", "network:netns+seccomp-unix", ...]

Its parts: bwrap.py (bwrap's words and the seccomp FD it loads, imported for bwrap runs only),
cgroups.py (a cgroup per run, its caps, and the sweep of killed runs' groups), run_folders.py
(every run's private folder), sandbox_exec.py (Landlock and seccomp in the tool's own process).

Engines, the ones the field trusts, never a home-made one:
- **bubblewrap** (`bwrap`), where installed: a mount namespace holding only what the capability
  allows; protected paths inside allowed folders are masked (an empty tmpfs, /dev/null, or a
  read-only bind);
- **Landlock** (Linux 5.13+, unprivileged), where bwrap is not: a ruleset applied in the tool's own
  process before the tool's code runs (`sandbox_exec.py`), ABI-versioned (1..7). Rules only grant,
  so a folder holding a protected path is never granted itself: its entries are, one by one, except
  the protected one (`sandbox_exec.expand`).
`network: false` adds a seccomp filter (no unix, vsock, packet or raw sockets, no io_uring) to the
network namespace: a pathname unix socket is a file, which neither the namespace nor Landlock up
to ABI 7 stops.
Memory and processes are capped per run by a cgroup (v2 where delegated, else v1's memory and pids
controllers where writable), else by rlimits; `claims` says which held.

What a capability gets (the same under both engines):
- `none`: the system read-only (/usr, /lib*, /bin, /sbin, /etc, the Python and venv it runs on),
  its own run folder read-write (working folder, HOME, TMPDIR), nothing else;
- `read-only`: it may read everything else too, except the protected paths; it writes only its
  run folder;
- `read-write`: it may also write inside the workspace (except the protected paths).
Protected, whatever the capability (protected.py decides what, by identity): hidden
(`Request.hidden`: every known store's files, config, state, the toolbox's tools, index, runs and
history, every run folder, the system's password files and the user's secret folders, each under
every bind-mount alias too), read-only (`Request.frozen`: the venv cache, patch-tui itself and its
Python, the home folder's dotfiles), or sealed (`Request.sealed`: the stores' folders, a plain
toolbox's tools folder, a home folder inside the workspace: nothing made, removed or renamed in
them).
Sockets follow the capability (`socket_policy`): a seccomp filter on socket families under both
engines, Landlock's abstract-unix scope, and under Landlock the hidden folders masked when unix
sockets are allowed. `prepare` is named steps: `_layout`, `_filesystem`, `plan_sockets` (sandbox_sockets.py),
`_limits`.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from patch_tui.runtime.cgroups import Cgroups as Cgroups
from patch_tui.runtime.cgroups import RunCgroup as RunCgroup
from patch_tui.runtime.cgroups import (
    count_user_processes,
    find_cgroups,
    make_cgroup,
    sweep_stale,
)
from patch_tui.runtime.protected import STORE_SUFFIXES as STORE_SUFFIXES
from patch_tui.runtime.run_folders import LOCK_NAME as LOCK_NAME
from patch_tui.runtime.run_folders import hold_run_folder as hold_run_folder
from patch_tui.runtime.run_folders import run_folder as run_folder
from patch_tui.runtime.run_folders import runs_root as runs_root
from patch_tui.runtime.run_folders import sweep_run_folders
from patch_tui.runtime.sandbox_sockets import allow_abstract_unix as allow_abstract_unix
from patch_tui.runtime.sandbox_sockets import plan_sockets
from patch_tui.runtime.sandbox_sockets import socket_policy as socket_policy

ENGINES = ("auto", "bwrap", "landlock", "none")
SYSTEM_READ = ["/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/etc"]
DEVICES_RW = ["/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"]
SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"
ALLOW_UNISOLATED_SETTING = "sandbox_allow_unisolated"
ENGINE_ENV = "PATCH_TUI_SANDBOX_ENGINE"
ALLOW_ENV = "PATCH_TUI_SANDBOX_ALLOW_UNISOLATED"
_EXEC_SOURCE = Path(__file__).with_name("sandbox_exec.py")
_EXEC_TEXT: list[str] = []


def _exec_source() -> str:
    """sandbox_exec.py's text, read once per process."""
    if not _EXEC_TEXT:
        _EXEC_TEXT.append(_EXEC_SOURCE.read_text(encoding="utf-8"))
    return _EXEC_TEXT[0]


_EXEC_CODE: list[bytes] = []


def _exec_code() -> bytes:
    """sandbox_exec.py compiled and marshalled, once per process: the tool's Python loads the
    code instead of compiling the module's text on every run (about 10 ms of a `run`). Taken
    as an import takes it: the cached bytecode when it is fresh (else compiled from the file)."""
    if not _EXEC_CODE:
        import importlib.util
        import marshal

        found = importlib.util.find_spec("patch_tui.runtime.sandbox_exec")
        loader = found.loader if found is not None else None
        get_code = getattr(loader, "get_code", None)
        code = get_code(found.name) if get_code is not None and found is not None else None
        if code is None:
            code = compile(_exec_source(), str(_EXEC_SOURCE), "exec", dont_inherit=True)
        _EXEC_CODE.append(marshal.dumps(code))
    return _EXEC_CODE[0]


# The tool's process starts as `python -I -S -c _BOOT CODE_FD SPEC_FD TOOL`: sandbox_exec's code
# from its sealed memfd (closed once read), then its main() with the argv it reads (SPEC_FD TOOL).
# Nothing of this stays in the tool's namespace: run_tool runs it in a fresh __main__ module.
_BOOT = """import marshal, os, sys
_fd = int(sys.argv.pop(1))
_code = marshal.loads(b"".join(iter(lambda: os.read(_fd, 65536), b"")))
os.close(_fd)
exec(_code)
del _fd, _code
main()
"""


# -- what the host offers ---------------------------------------------------------------------


@dataclass(frozen=True)
class Host:
    linux: bool
    landlock_abi: int  # 0: no Landlock
    bwrap: str | None  # the bwrap that works here, or None
    seccomp: bool  # a seccomp filter for this architecture
    cgroups: Cgroups = field(default_factory=Cgroups)


def _landlock_abi() -> int:
    if not sys.platform.startswith("linux"):
        return 0
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        abi = libc.syscall(444, None, ctypes.c_size_t(0), 1)  # LANDLOCK_CREATE_RULESET_VERSION
    except (OSError, AttributeError):
        return 0
    return max(int(abi), 0)


def _bwrap() -> str | None:
    """The installed bwrap, when it can work here: it needs user namespaces (the runner's probe
    says whether they work) unless it is setuid. Not started here: every process would pay for
    it; a bwrap that fails at run time fails the run, never runs the tool unconfined."""
    found = shutil.which("bwrap", path=SAFE_PATH)
    if found is None:
        return None
    with contextlib.suppress(OSError):
        if os.stat(found).st_mode & 0o4000:
            return found
    from patch_tui.runtime.process import namespace_support

    return found if namespace_support()["pid"] else None


def sweep_leftovers(root: Path) -> None:
    """Remove what killed runs left behind: run folders nobody holds, empty old run cgroups.
    (A run that finishes removes its own; only a kill -9 of patch-tui leaves any.)"""
    sweep_run_folders(root)
    sweep_stale(probe().cgroups)


_HOST: Host | None = None
_HOST_LOCK = threading.Lock()


def probe() -> Host:
    """What this host can enforce. Probed once per process; tests replace this function to play
    a host that cannot isolate."""
    global _HOST
    with _HOST_LOCK:
        if _HOST is None:
            linux = sys.platform.startswith("linux")
            _HOST = Host(
                linux=linux,
                landlock_abi=_landlock_abi(),
                bwrap=_bwrap() if linux else None,
                # os.uname, not platform: importing platform costs every run a few ms
                seccomp=linux and os.uname().machine in ("x86_64", "aarch64"),
                cgroups=find_cgroups(),
            )
        return _HOST


# -- settings ---------------------------------------------------------------------------------


def configured_engine() -> str:
    """`sandbox_engine` (env PATCH_TUI_SANDBOX_ENGINE, else config.toml), default auto; a
    value it does not know is auto too."""
    value = str(_setting("sandbox_engine", "auto")).strip().lower()
    return value if value in ENGINES else "auto"


def allow_unisolated() -> bool:
    """`sandbox_allow_unisolated` (env PATCH_TUI_SANDBOX_ALLOW_UNISOLATED): run gated calls even
    where nothing can isolate them. Unreadable settings count as false."""
    return _setting(ALLOW_UNISOLATED_SETTING, False) is True


def serve_workspace() -> Path | None:
    """`serve_workspace` (env PATCH_TUI_SERVE_WORKSPACE, else config.toml): where read-write
    tools called through serve may write; None: only their own run folder."""
    value = _setting("serve_workspace", None)
    return Path(value).expanduser().absolute() if value else None


def _setting(name: str, default: Any) -> Any:
    from patch_tui.settings.config import plain_setting

    return plain_setting(name, default)  # a broken config file gives the default


def choose_engine(requested: str | None = None, host: Host | None = None) -> str:
    """The engine that will isolate filesystem access: "bwrap", "landlock", or "none"."""
    host = host or probe()
    want = requested or configured_engine()
    if want == "none":
        return "none"
    if want in ("auto", "bwrap") and host.bwrap:
        return "bwrap"
    if want in ("auto", "landlock", "bwrap") and host.landlock_abi >= 1:
        return "landlock"
    if want == "landlock" and host.bwrap:
        return "bwrap"
    return "none"


def why_unisolated(engine: str | None = None) -> str | None:
    """None when runs are isolated here; else why not (one clause, for a person)."""
    host = probe()
    if choose_engine(engine, host) != "none":
        return None
    if (engine or configured_engine()) == "none":
        return "the sandbox is turned off (sandbox_engine = none)"
    if not host.linux:
        return f"filesystem isolation needs Linux, and this is {sys.platform}"
    return "this kernel has no Landlock (Linux 5.13+) and bubblewrap (bwrap) is not installed"


def refusal_message(why: str) -> str:
    """The one line a gated call gets where nothing can isolate it."""
    return (
        f"refused: {why}, so a gated call (human_confirm or tainted input) cannot run isolated "
        f"and an approval would not bind what it does. To run gated calls unisolated knowingly, "
        f"set {ALLOW_UNISOLATED_SETTING} = true in config.toml (or {ALLOW_ENV}=1)."
    )


# -- the run's private folders ----------------------------------------------------------------


# -- one run ----------------------------------------------------------------------------------


@dataclass
class Request:
    run_dir: Path  # the run's own folder (working folder, HOME, TMPDIR inside)
    filesystem: str  # none | read-only | read-write
    network: bool
    python: str  # the interpreter that runs the tool
    workspace: Path | None = None  # where read-write may write
    hidden: list[Path] = field(default_factory=list)
    frozen: list[Path] = field(default_factory=list)
    sealed: list[Path] = field(default_factory=list)
    read_extra: list[Path] = field(default_factory=list)
    memory_bytes: int = 4 << 30
    max_processes: int = 256
    engine: str | None = None  # None: the configured one
    pid_ns: bool = True  # the runner gives the run its own PID namespace (and /proc)
    net_ns: bool = True  # ... and network namespace (with network: false)
    # Folders written like the run's own (the package install: the venv it builds, pip's cache).
    writable: list[Path] = field(default_factory=list)
    # network: true reaching only these TCP ports (the package index, DNS); None: any port.
    tcp_ports: list[int] | None = None
    # site-packages folders the tool's Python adds once confined (the venv's).
    site: list[str] = field(default_factory=list)


@dataclass
class Plan:
    engine: str  # "bwrap", "landlock" or "none"
    prefix: list[str]  # bwrap's words (it makes the namespaces); [] for the runner's unshare
    spec: dict[str, Any] | None  # for sandbox_exec, or None when it has nothing to apply
    claims: list[str]  # "capability:mechanism", each true for this run
    lines: list[str]  # the same, for a person (the audit's capability_assertions)
    cgroup: RunCgroup | None = None
    nproc: int | None = None  # RLIMIT_NPROC to set, when no cgroup caps processes
    attach: list[str] = field(default_factory=list)  # cgroup.procs files to join before exec
    pid_ns: bool = False  # the run had its own PID namespace (and /proc)
    pass_fds: list[int] = field(default_factory=list)  # for the prefix and the spec

    @property
    def isolated(self) -> bool:
        return self.engine != "none"

    def python_command(
        self, python: str, flags: list[str], tool: str, loader: str | None = None
    ) -> list[str]:
        """The tool's command: confined in its own process first when there is anything to apply.

        `tool`: a file, or the number of an inherited FD holding the tool's bytes (the runner's
        sealed memfd: the approved bytes, which no other run can rewrite), which `loader` (the
        runner's LOADER) or sandbox_exec reads. The spec goes in by a sealed memfd of its own
        (added to `pass_fds`), never by argv or the environment: the tool could read both."""
        if self.spec is None:
            return [python, *flags, "-c", loader, tool] if loader else [python, *flags, tool]
        from patch_tui.runtime.process import sealed_memfd

        # A Python literal (strings, numbers, booleans, lists, dicts: repr writes each as one),
        # so the tool's process imports no json for it.
        fd = sealed_memfd("patch-sandbox-spec", repr(self.spec).encode("utf-8"))
        self.pass_fds.append(fd)
        code_fd = sealed_memfd("patch-sandbox-exec", _exec_code())
        self.pass_fds.append(code_fd)
        return [python, *flags, "-c", _BOOT, str(code_fd), str(fd), tool]

    def close_fds(self) -> None:
        """Close our copies of the FDs handed to the prefix (once the child holds its own)."""
        while self.pass_fds:
            with contextlib.suppress(OSError):
                os.close(self.pass_fds.pop())

    def preexec(self) -> Any:
        """A step for the child between fork and exec: join the run's cgroup, cap processes."""
        attach = [os.fsencode(p) for p in self.attach]
        nproc = self.nproc

        def step() -> None:
            pid = str(os.getpid()).encode()
            for procs in attach:
                fd = os.open(procs, os.O_WRONLY)  # a failure fails the start: it was claimed
                try:
                    os.write(fd, pid)
                finally:
                    os.close(fd)
            if nproc is not None:
                import resource

                resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))

        return step

    def finish(self) -> list[str]:
        """Remove the run's cgroup; what it stopped, for the result (e.g. OOM kills)."""
        self.close_fds()
        notes: list[str] = []
        if self.cgroup is not None:
            kills = self.cgroup.oom_kills()
            if kills:
                notes.append(
                    f"the run hit its memory cap: {kills} process(es) killed by the cgroup"
                )
            self.cgroup.remove()
        return notes


def _real(p: Path | str) -> str:
    return os.path.realpath(p)


def _outermost(paths: Any) -> list[str]:
    """The paths, without those inside another one (/lib is /usr/lib: /usr covers it)."""
    unique = list(dict.fromkeys(paths))
    return [p for p in unique if not any(q != p and inside(p, q) for q in unique)]


def inside(child: str, parent: str) -> bool:
    return child == parent or child.startswith(parent.rstrip("/") + "/")


@dataclass
class _Layout:
    """What one run may reach, as real paths: the input of every engine's words."""

    hidden: list[str]
    frozen: list[str]
    sealed: list[str]
    read_roots: list[str]
    write_roots: list[str]
    own: list[str]  # the run folder and `writable`: written as they are
    workspace: str | None


def prepare(req: Request, host: Host | None = None) -> Plan:
    """The plan for one run, in steps: what it may reach (`_layout`), the filesystem engine's
    words (`_filesystem`), its sockets (`_sockets`), its memory and processes (`_limits`)."""
    host = host or probe()
    engine = choose_engine(req.engine, host)
    plan = Plan(engine=engine, prefix=[], spec=None, claims=[], lines=[])
    plan.pid_ns = req.pid_ns or engine == "bwrap"
    spec: dict[str, Any] = {}
    layout = _layout(req)
    _filesystem(req, host, layout, plan, spec)
    plan_sockets(req, host, layout, plan, spec)
    if req.site:
        spec["site"] = list(req.site)
    plan.spec = spec or None
    _limits(req, host, plan)
    if engine == "bwrap":
        _bwrap_args_by_fd(plan)
    return plan


def _layout(req: Request) -> _Layout:
    from patch_tui.runtime.protected import aliases, always_hidden

    # The system's and the user's secrets, and every alias (bind mount) of what is protected.
    hidden_paths = [_real(p) for p in req.hidden] + always_hidden()
    hidden = list(dict.fromkeys(hidden_paths + aliases(hidden_paths)))
    # The system stays read-only even for a workspace that holds it (a call made from /).
    system = [*SYSTEM_READ, "/proc", "/sys", "/dev", "/boot"]
    frozen_paths = [_real(p) for p in req.frozen]
    frozen = list(dict.fromkeys(frozen_paths + aliases(frozen_paths) + system))
    sealed = list(dict.fromkeys(_real(p) for p in req.sealed))
    if not req.pid_ns:
        hidden.append("/proc")  # the host's /proc: other processes' environments
    reads = [
        *SYSTEM_READ,
        *(_real(p) for p in req.read_extra),
        _real(Path(req.python).parent.parent),
        sys.base_prefix,
        sys.prefix,
    ]
    if req.pid_ns:
        reads.append("/proc")
    reads = list(dict.fromkeys(r for r in reads if os.path.exists(r)))
    workspace = _real(req.workspace) if req.workspace is not None else None
    fs = req.filesystem
    read_roots = ["/"] if fs in ("read-only", "read-write") else reads
    write_roots = [workspace] if fs == "read-write" and workspace else []
    own = [_real(req.run_dir), *(_real(p) for p in req.writable)]
    return _Layout(hidden, frozen, sealed, read_roots, write_roots, own, workspace)


def _filesystem(req: Request, host: Host, lay: _Layout, plan: Plan, spec: dict[str, Any]) -> None:
    fs = req.filesystem
    abi = host.landlock_abi
    if plan.engine == "landlock":
        spec["landlock"] = {
            "abi": abi,
            # Landlock rules hold inodes: /lib (/usr/lib) needs no rule of its own beside /usr.
            "read": _outermost(_real(r) for r in lay.read_roots),
            "write": lay.write_roots,
            "own": lay.own,
            "hidden": lay.hidden,
            "readonly": lay.frozen,
            "sealed": lay.sealed,
            "files_rw": DEVICES_RW,
        }
        plan.claims.append(f"filesystem:landlock-abi{abi}")
        plan.lines.append(
            f'filesystem: "{fs}" enforced by Landlock (ABI {abi}): '
            + _fs_words(fs, lay.workspace)
            + "; patch-tui's stores, config, state, toolbox and run folders, and the secret "
            "folders, out of reach."
        )
    elif plan.engine == "bwrap":
        assert host.bwrap is not None
        from patch_tui.runtime.bwrap import bwrap_words

        plan.prefix = bwrap_words(
            host.bwrap,
            req.network,
            lay.read_roots,
            lay.write_roots,
            lay.own,
            lay.hidden,
            lay.frozen,
            lay.sealed,
        )
        plan.claims.append("filesystem:bwrap")
        plan.lines.append(
            f'filesystem: "{fs}" enforced by bubblewrap (mount namespace): '
            + _fs_words(fs, lay.workspace)
            + "; patch-tui's stores, config, state, toolbox and run folders, and the secret "
            "folders, masked."
        )
    else:
        plan.claims.append("filesystem:NOT-enforced")
        plan.lines.append(
            f'filesystem: "{fs}" declared but NOT enforced ({why_unisolated(req.engine)}): the '
            "tool could read and write whatever this user can."
        )
    if lay.workspace and fs == "read-write":
        if any(inside(lay.workspace, h) for h in lay.hidden + lay.frozen):
            plan.lines.append(
                "the workspace lies inside a protected folder: the tool could not write it."
            )


def _limits(req: Request, host: Host, plan: Plan) -> None:
    """Memory and processes: a cgroup for the run where one is ours, else rlimits."""
    cgroup = make_cgroup(host.cgroups, req.memory_bytes, req.max_processes)
    plan.cgroup = cgroup
    if cgroup is not None:
        plan.attach = [str(f / "cgroup.procs") for f in cgroup.folders()]
    if cgroup is not None and cgroup.memory is not None:
        plan.claims.append(f"memory:cgroup-{cgroup.kind}")
        plan.lines.append(
            f"memory: at most {req.memory_bytes >> 20} MiB for the whole run (cgroup {cgroup.kind})."
        )
    else:
        plan.claims.append("memory:rlimit-per-process")
        plan.lines.append(
            "memory: capped per process only (RLIMIT_AS); no cgroup here for the run."
        )
    if cgroup is not None and cgroup.pids is not None:
        plan.claims.append(f"processes:cgroup-{cgroup.kind}")
        plan.lines.append(f"processes: at most {req.max_processes} at once (cgroup {cgroup.kind}).")
    elif host.linux and os.geteuid() != 0:
        plan.nproc = count_user_processes(os.geteuid()) + req.max_processes
        plan.claims.append("processes:rlimit-nproc")
        plan.lines.append(
            f"processes: RLIMIT_NPROC {plan.nproc} (this user's processes, {req.max_processes} "
            "more than when the run started)."
        )
    else:
        plan.claims.append("processes:NOT-capped")
        plan.lines.append(
            "processes: NOT capped (no cgroup here, and RLIMIT_NPROC does not bind root)."
        )


def _bwrap_args_by_fd(plan: Plan) -> None:
    """bwrap reads its words from a sealed memfd (`--args FD`): they name every protected path,
    and its own process (PID 1 of the run) would show them in /proc/1/cmdline."""
    from patch_tui.runtime.process import sealed_memfd

    words = plan.prefix[1:]
    fd = sealed_memfd("patch-bwrap-args", b"".join(os.fsencode(w) + b"\0" for w in words))
    plan.pass_fds.append(fd)
    plan.prefix = [plan.prefix[0], "--args", str(fd)]


def _fs_words(fs: str, workspace: str | None) -> str:
    if fs == "none":
        return "the system read-only and its own run folder"
    if fs == "read-only":
        return "read access, writes only in its own run folder"
    if workspace:
        return f"read access, writes in its own run folder and the workspace {workspace}"
    return "read access, writes only in its own run folder (no workspace for this run)"


def host_report() -> dict[str, Any]:
    """What `patch-tui sandbox` style reports show: the probe, in plain JSON."""
    host = probe()
    return {
        "linux": host.linux,
        "landlock_abi": host.landlock_abi,
        "bwrap": host.bwrap,
        "seccomp": host.seccomp,
        "cgroup_v2": str(host.cgroups.v2) if host.cgroups.v2 else None,
        "cgroup_v1_memory": str(host.cgroups.v1_memory) if host.cgroups.v1_memory else None,
        "cgroup_v1_pids": str(host.cgroups.v1_pids) if host.cgroups.v1_pids else None,
        "engine": choose_engine(None, host),
    }
