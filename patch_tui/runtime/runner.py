"""Run a tool the way the Patch runtime does, with real isolation where the host allows it.

    run_file(path, args, *, timeout=60, allow_install=True, runs_dir=None) -> RunResult
    run_source(text, args, *, timeout=60, allow_install=True, runs_dir=None, path=None) -> RunResult
    run_bytes(raw, args, *, expected_sha256=None, ...) -> RunResult   exactly these bytes, or none

The contract is the Patch runtime's: the tool file goes into a fresh temporary folder, the args go
to its stdin as one JSON object, and the result is the last non-empty stdout line parsed as JSON.
`run_source` takes unsaved text (the TUI's try-it); `run_file` reads the file first; `run_bytes`
runs bytes already read and hashed (confirm: the approved source, refused if its sha256 differs).

The bytes that run come from the bytes hashed: the file is read once, its sha256 kept
(`RunResult.file_sha256`, what an approval binds), and its body (what the runtime runs) handed to
Python through a sealed memfd (Linux; a pipe elsewhere) that a small loader (`-c`, or the
sandbox's own step) compiles under the name `<working folder>/tool.py`. Python never reads the
`tool.py` in the working folder (any process of the same user could replace it between our write
and Python's read); that copy is for tools that read their own file. `RunResult.source_sha256`
and the audit record keep the runtime's hash of the tool (as its patch_replay compares).

What is enforced, and what the result says about it (`RunResult.enforced`, and the audit record's
`capability_assertions`: never a claim that was not true for this run):
- a timeout (default 60 s) that kills the whole process group, and with a PID namespace every
  process of the run: a grandchild holding stdout open cannot hang us;
- stdout (4 MiB) and stderr (1 MiB) caps: past them the run is stopped and says so;
- rlimits: CPU seconds, address space, file size, no core dumps;
- a scrubbed environment (PATH, LANG, PWD, a temporary HOME, TMPDIR and working folder, and
  PATCH_ACCESS_TOKEN only for a tool that declares external_auth): no ANTHROPIC_API_KEY;
- a PID namespace with its own /proc (`unshare`), where user namespaces work, so the parent's
  `/proc/<pid>/environ` is out of sight too;
- `network: false` as a network namespace with only a downed loopback, where it works, and a
  seccomp filter against unix sockets (sandbox.py); where nothing holds, the result says so;
- pinned `runtime.packages` (each `name==1.2.3`, nothing else: never a pip option) in a cached
  virtual environment per package set (key: sha256 of the sorted pins and the Python version),
  installed on request inside the same sandbox (venvs.py); `allow_install=False` refuses;
- nothing of the tool's runs before the sandbox: Python starts with `-I -S`, is confined by
  sandbox_exec (spec by memfd), and only then adds the venv's site-packages;
- a read-write tool started from the home folder or / gets no workspace (its run folder only,
  and the first capability line says why);
- the output's JSON type checked against `outputs.type` (reported, the run still succeeds).
- filesystem access per capability, memory and processes per run: see sandbox.py; the
  result's `enforced["claims"]` lists the mechanism that held for each, and nothing else.

Where the parts live: process.py starts and watches the tool's process (namespaces, rlimits,
pipes, timeout, cancel, the sealed memfd and its LOADER); outcome.py reads the result from what
the process left; venvs.py makes the package venvs
(sandboxed); protected.py says what no tool may reach; sandbox.py plans the isolation; audit.py
words the claims and writes the audit record.

Every run, success or failure, with a `runs_dir` (or a tool path inside a toolbox) writes an audit
record `<runs_dir>/<run_id>.json` in the Patch runtime's shape, stdout and stderr kept
content-addressed in `<runs_dir>/blobs/<sha256>.txt`.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import math
import os
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from patch_tui.format import runtime_format, toolfile
from patch_tui.runtime import sandbox
from patch_tui.runtime.audit import list_runs as list_runs
from patch_tui.runtime.audit import write_audit
from patch_tui.runtime.outcome import check_output_type as check_output_type
from patch_tui.runtime.outcome import interpret
from patch_tui.runtime.process import CANCELLED as CANCELLED
from patch_tui.runtime.process import (
    LOADER,
    SAFE_PATH,
    communicate,
    limits,
    preexec,
    sandbox_prefix,
    source_fd,
)
from patch_tui.runtime.process import STDERR_CAP as STDERR_CAP
from patch_tui.runtime.process import STDOUT_CAP as STDOUT_CAP
from patch_tui.runtime.process import cancel_with as cancel_with
from patch_tui.runtime.process import namespace_support as namespace_support
from patch_tui.runtime.protected import Protected, protected_paths
from patch_tui.runtime.venvs import InstallSandbox, Venv, install_summary
from patch_tui.runtime.venvs import RunnerError as RunnerError
from patch_tui.runtime.venvs import ensure_venv as ensure_venv
from patch_tui.runtime.venvs import venv_key as venv_key

if TYPE_CHECKING:
    from patch_tui.format.plain_manifest import RunManifest
    from patch_tui.runtime.warm import WarmResult

DEFAULT_TIMEOUT = 60.0
MEMORY_CAP = 4 << 30  # the whole run, all its processes (where a cgroup holds it)
MAX_PROCESSES = 256  # at once, for the whole run


@dataclass
class Isolation:
    """Where a run happens, as its caller knows it (issue 11). None of it widens what a tool may
    reach: `workspace` is where a read-write tool may write; the rest is protected from it."""

    workspace: Path | None = None  # None: a read-write tool writes only its run folder
    store: Path | None = None  # the confirmation store in use (its files hidden, folder frozen)
    toolbox: Path | None = None  # the toolbox in use (its tools, index, runs hidden)
    gated: bool = False  # human_confirm or tainted: refused where nothing isolates
    engine: str | None = None  # None: the configured sandbox_engine
    memory_bytes: int = MEMORY_CAP
    max_processes: int = MAX_PROCESSES


@dataclass
class RunResult:
    """What happened. `ok` means: exit code 0 and a JSON last line. `error` says why not."""

    ok: bool
    result: Any = None
    error: str | None = None
    exit_code: int | None = None
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    output_capped: str | None = None  # "stdout" or "stderr" when a cap stopped the run
    duration_ms: int = 0
    output_type_error: str | None = None
    enforced: dict[str, Any] = field(default_factory=dict)
    capability_assertions: list[str] = field(default_factory=list)
    packages_installed: list[str] = field(default_factory=list)
    install: dict[str, Any] = field(default_factory=dict)  # how its packages were installed
    install_lines: list[str] = field(default_factory=list)
    run_id: str = ""
    audit_path: Path | None = None
    tool_name: str | None = None
    tool_version: str | None = None
    source_sha256: str = ""
    # sha256 of the tool file's bytes this run was made from: what an approval binds (confirm
    # runs only when it is the approved one) and what the action's `executed` event records.
    file_sha256: str = ""
    timeout_s: float = DEFAULT_TIMEOUT

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "result": self.result,
            "error": self.error,
            "exit_code": self.exit_code,
            "timed_out": self.timed_out,
            "duration_ms": self.duration_ms,
            "output_type_error": self.output_type_error,
            "enforced": self.enforced,
            "run_id": self.run_id,
            "audit_path": str(self.audit_path) if self.audit_path else None,
        }


# -- the run ----------------------------------------------------------------------------------


def run_file(
    path: str | os.PathLike[str],
    args: dict[str, Any],
    *,
    timeout: float = DEFAULT_TIMEOUT,
    allow_install: bool = True,
    runs_dir: str | os.PathLike[str] | None = None,
    venv_root: Path | None = None,
    env_extra: dict[str, str] | None = None,
    isolation: Isolation | None = None,
) -> RunResult:
    """Run a tool file. Without `runs_dir`, the audit goes to the runs folder of the toolbox
    holding the file."""
    p = Path(path)
    try:
        raw = toolfile.read_bytes(p)  # refuses FIFOs, devices, huge files by type
    except OSError as exc:
        raise RunnerError(f"{p}: cannot read the tool: {exc.strerror or exc}") from None
    tf = toolfile.parse_bytes(raw, path=str(p))
    if runs_dir is None:
        from patch_tui.runtime.toolbox import Toolbox, ToolboxError

        with contextlib.suppress(ToolboxError, OSError):
            runs_dir = Toolbox.open(p).runs_dir
    return _run(
        tf, args, timeout, allow_install, runs_dir, venv_root, env_extra, isolation, path=str(p)
    )


def run_source(
    text: str,
    args: dict[str, Any],
    *,
    timeout: float = DEFAULT_TIMEOUT,
    allow_install: bool = True,
    runs_dir: str | os.PathLike[str] | None = None,
    venv_root: Path | None = None,
    env_extra: dict[str, str] | None = None,
    path: str | None = None,
    isolation: Isolation | None = None,
) -> RunResult:
    """Run a tool from its text (unsaved editor contents). No audit record without `runs_dir`."""
    tf = toolfile.parse(text, path=path)
    return _run(
        tf, args, timeout, allow_install, runs_dir, venv_root, env_extra, isolation, path=path
    )


def runtime_body(tf: toolfile.ToolFile) -> bytes:
    """What the Patch runtime runs: only the body after the closing marker (its sandbox writes
    nothing else), so code above the opening marker never runs here either. Blank lines stand
    in for the lines before the body, so tracebacks point at the file's own line numbers."""
    return runtime_format.body_bytes(tf.text, tf.to_bytes())


def runtime_source_sha256(tf: toolfile.ToolFile) -> str:
    """The source hash the runtime's audit records and its patch_replay compares: sha256 of its
    writer's output for the file (defaults filled in), so either side can replay the other's
    runs. The file's own bytes' hash when the runtime cannot parse it."""
    return runtime_format.text_sha256(tf.text) or tf.sha256


def run_bytes(
    raw: bytes,
    args: dict[str, Any],
    *,
    expected_sha256: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    allow_install: bool = True,
    runs_dir: str | os.PathLike[str] | None = None,
    venv_root: Path | None = None,
    env_extra: dict[str, str] | None = None,
    path: str | None = None,
    isolation: Isolation | None = None,
) -> RunResult:
    """Run exactly `raw` (a tool file's bytes, already read once). With `expected_sha256`, bytes
    with another hash do not run: the result fails with `error` starting "tool_changed"."""
    digest = hashlib.sha256(raw).hexdigest()
    if expected_sha256 is not None and digest != expected_sha256:
        return _fail(
            f"tool_changed: the tool's bytes (sha256 {digest[:12]}) are not the approved ones "
            f"(sha256 {expected_sha256[:12]}); nothing was run",
            file_sha256=digest,
        )
    tf = toolfile.parse_bytes(raw, path=path)
    if tf.run_manifest is not None and tf.sha256 != digest:
        return _fail("the tool's bytes do not survive parsing unchanged; nothing was run")
    return _run(
        tf, args, timeout, allow_install, runs_dir, venv_root, env_extra, isolation, path=path
    )


def _fail(message: str, **kw: Any) -> RunResult:
    return RunResult(ok=False, error=message, run_id=str(uuid.uuid4()), **kw)


def _run(
    tf: toolfile.ToolFile,
    args: dict[str, Any],
    timeout: float,
    allow_install: bool,
    runs_dir: str | os.PathLike[str] | None,
    venv_root: Path | None,
    env_extra: dict[str, str] | None,
    isolation: Isolation | None,
    *,
    path: str | None,
) -> RunResult:
    manifest = tf.run_manifest
    if manifest is None:
        why = tf.problems[0].message if tf.problems else str(tf.manifest_error or "no manifest")
        return _fail(f"the tool's manifest is not valid ({why}); run `patch-tui lint` on it")
    if not isinstance(args, dict):
        return _fail("the arguments must be a JSON object")
    if not (isinstance(timeout, int | float) and math.isfinite(timeout) and timeout > 0):
        return _fail("the timeout must be a positive number of seconds")
    try:
        stdin = json.dumps(args, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except (TypeError, ValueError) as exc:
        return _fail(f"the arguments are not plain JSON: {exc}")

    # What Python compiles: the runtime's part of the file (its body), cut from the very bytes
    # whose hash is `file_sha256`, and handed over by a sealed memfd (see LOADER).
    source = runtime_body(tf)
    base = RunResult(
        ok=False,
        run_id=str(uuid.uuid4()),
        tool_name=manifest.name,
        tool_version=manifest.version,
        # The runtime's hash of the tool, for its audit record and patch_replay (citizen).
        source_sha256=runtime_source_sha256(tf),
        # The hash of the file's own bytes, the ones approved; `source` below is derived from them.
        file_sha256=hashlib.sha256(tf.to_bytes()).hexdigest(),
        timeout_s=timeout,
    )
    packages = list(manifest.runtime.packages)
    iso = isolation or Isolation()
    refusal = _refusal(tf, packages, iso)
    if refusal is not None:
        base.error = refusal
        write_audit(base, manifest, args, runs_dir, [], None)
        return base
    try:
        run_root = sandbox.runs_root()
    except OSError as exc:
        base.error = f"cannot make the run's private folder: {exc}"
        write_audit(base, manifest, args, runs_dir, [], None)
        return base
    sandbox.sweep_leftovers(run_root)
    guard = protected_paths(
        store=iso.store,
        toolbox=iso.toolbox,
        tool_path=path,
        runs_dir=runs_dir,
        run_root=run_root,
        workspace=_workspace(manifest, iso),
    )
    if guard.problems:
        base.error = guard.problems[0]
        write_audit(base, manifest, args, runs_dir, [], None)
        return base
    venv: Venv | None = None
    if packages:
        try:
            venv = ensure_venv(
                packages,
                allow_install=allow_install,
                venv_root=venv_root,
                sandbox=InstallSandbox(guard.hidden, guard.frozen, guard.sealed, iso.engine),
            )
        except RunnerError as exc:
            base.error = str(exc)
            write_audit(base, manifest, args, runs_dir, [], None)
            return base
        base.packages_installed = packages
        base.install = install_summary(venv.install)
        base.install_lines = list(venv.install.get("lines", []))
    warm = _run_warm(manifest, stdin, source, timeout, venv, iso, guard, env_extra)
    if warm is not None:  # serve's warm sandbox (runtime/warm.py): the same isolation, forked
        base.duration_ms = warm.duration_ms
        interpret(base, manifest, *warm.outcome, timeout)
        write_audit(base, manifest, args, runs_dir, warm.envs_keys, warm.plan)
        return base
    out, err, proc, timed_out, overflow, plan, notes, envs_keys = _start_and_watch(
        manifest, stdin, source, timeout, venv, iso, guard, env_extra, base, args, runs_dir
    )
    if proc is None:
        return base  # could not start: `base` says why, and the audit was written
    interpret(base, manifest, out, err, proc.returncode, timed_out, overflow, timeout)
    if notes and base.error:
        base.error += " (" + "; ".join(notes) + ")"
    write_audit(base, manifest, args, runs_dir, envs_keys, plan, notes)
    return base


def _run_warm(
    manifest: RunManifest,
    stdin: bytes,
    source: bytes,
    timeout: float,
    venv: Venv | None,
    iso: Isolation,
    guard: Protected,
    env_extra: dict[str, str] | None,
) -> WarmResult | None:
    """The call in a fork of its warm sandboxed process (serve's, runtime/warm.py), or None."""
    warm = sys.modules.get("patch_tui.runtime.warm")  # not imported: no pool (a `run`)
    fs = manifest.capabilities.filesystem
    refused = fs == "read-write" and iso.workspace is not None and workspace_refusal(iso.workspace)
    if warm is None or refused:
        return None  # (a refused workspace: the cold run says why)
    env_for = functools.partial(_tool_env, manifest=manifest, env_extra=env_extra)
    workspace = _workspace(manifest, iso)
    return warm.run_call(manifest, stdin, source, timeout, venv, iso, guard, workspace, env_for)


def _refusal(tf: toolfile.ToolFile, packages: list[str], iso: Isolation) -> str | None:
    """Why this run must not start at all: a file the Patch runtime would refuse, a package
    entry the format refuses, or a gated call where nothing can isolate it. Checked before any
    install."""
    from patch_tui.format import runtime_format
    from patch_tui.runtime.venvs import pin_problem

    try:
        runtime_format.parse(tf.text)
    except runtime_format.RuntimeRejects as exc:
        return f"refused: the Patch runtime would not load this file ({exc.message}); not run"

    for entry in packages:
        why = pin_problem(entry)
        if why is not None:
            return f"refused: {why}; the tool was not run"
    engine = sandbox.choose_engine(iso.engine)
    if iso.gated and engine == "none" and not sandbox.allow_unisolated():
        return sandbox.refusal_message(sandbox.why_unisolated(iso.engine) or "no isolation")
    return None


def _workspace(manifest: RunManifest, iso: Isolation) -> Path | None:
    """Where a read-write tool may write: the caller's workspace, never the home folder or the
    root (a call made from there gets its run folder only, and the run says so)."""
    if manifest.capabilities.filesystem != "read-write" or iso.workspace is None:
        return None
    return None if workspace_refusal(iso.workspace) else iso.workspace


def workspace_refusal(workspace: Path) -> str | None:
    """Why a folder cannot be a read-write tool's workspace (one line), or None."""
    from patch_tui.runtime.protected import homes

    real = os.path.realpath(workspace)
    if real == "/":
        return "the workspace would be / (the whole machine)"
    if real in homes():
        return f"the workspace would be the home folder {real} (its dotfiles, keys and shell setup)"
    return None


def _tool_env(
    home: Path, tmpdir: Path, work: Path, manifest: RunManifest, env_extra: Any
) -> tuple[dict[str, str], list[str]]:
    env = {
        "PATH": SAFE_PATH,
        "LANG": "C.UTF-8",
        "HOME": str(home),
        "TMPDIR": str(tmpdir),
        "PWD": str(work),  # bwrap sets it anyway: the same environment under every engine
    }
    keys: list[str] = []
    if manifest.external_auth:
        token = (env_extra or {}).get("PATCH_ACCESS_TOKEN") or os.environ.get("PATCH_ACCESS_TOKEN")
        if token:
            env["PATCH_ACCESS_TOKEN"] = token
            keys.append("PATCH_ACCESS_TOKEN")
    return env, keys


def _start_and_watch(
    manifest: RunManifest,
    stdin: bytes,
    source: bytes,
    timeout: float,
    venv: Venv | None,
    iso: Isolation,
    guard: Protected,
    env_extra: dict[str, str] | None,
    base: RunResult,
    args: dict[str, Any],
    runs_dir: str | os.PathLike[str] | None,
) -> tuple[bytes, bytes, Any, bool, str | None, sandbox.Plan | None, list[str], list[str]]:
    """The tool's process in its run folder, confined, watched to its end. On a failure to
    start, `base.error` says why, the audit is written, and the process is None."""
    network = manifest.capabilities.network
    engine = sandbox.choose_engine(iso.engine)
    if engine == "bwrap":
        prefix: list[str] = []  # bwrap makes the namespaces itself
        pid_ns, net_ns = True, not network
    else:
        prefix, pid_ns, net_ns = sandbox_prefix(network)
    # patch-tui's own interpreter even for a tool with packages, never the venv's bin/python:
    # a wheel's scripts land in that bin/, and one named `python` would run before any step of
    # the sandbox's own. The venv's packages come in by `site`, once confined.
    python = sys.executable
    plan: sandbox.Plan | None = None
    envs_keys: list[str] = []
    proc: subprocess.Popen[bytes] | None = None
    out = err = b""
    timed_out, overflow = False, None
    notes: list[str] = []
    with sandbox.run_folder() as tmp:
        work, home, tmpdir = tmp / "work", tmp / "home", tmp / "tmp"
        (work / "tool.py").write_bytes(source)  # for tools that read their own file; not run
        workspace = _workspace(manifest, iso)
        plan = sandbox.prepare(
            sandbox.Request(
                run_dir=tmp,
                filesystem=manifest.capabilities.filesystem,
                network=network,
                python=python,
                workspace=workspace,
                hidden=guard.hidden,
                frozen=guard.frozen,
                sealed=guard.sealed,
                read_extra=[venv.python.parent.parent] if venv is not None else [],
                memory_bytes=iso.memory_bytes,
                max_processes=iso.max_processes,
                engine=engine,
                pid_ns=pid_ns,
                net_ns=net_ns,
                site=venv.site if venv is not None else [],
            )
        )
        if manifest.capabilities.filesystem == "read-write" and iso.workspace is not None:
            why = workspace_refusal(iso.workspace)
            if why:
                plan.lines.insert(0, f"workspace: none, {why}; the tool wrote only its run folder.")
        env, envs_keys = _tool_env(home, tmpdir, work, manifest, env_extra)
        # -I -S: no site, .pth, sitecustomize, usercustomize, PYTHONSTARTUP or working folder
        # before the sandbox; the venv's site-packages are added once confined (sandbox_exec).
        flags = ["-I", "-S", "-X", "utf8"]
        started = time.monotonic()
        try:
            src_fd, feeder = source_fd(source)
        except OSError as exc:
            base.error = f"cannot hand the tool's code to Python: {exc}"
            write_audit(base, manifest, args, runs_dir, envs_keys, plan)
            plan.finish()
            return out, err, None, False, None, plan, [], envs_keys
        # The tool's code goes in by the inherited FD (see LOADER), never read from tool.py.
        cmd = [*prefix, *plan.prefix, *plan.python_command(python, flags, str(src_fd), LOADER)]
        try:
            proc = subprocess.Popen(
                cmd,
                cwd=work,
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                pass_fds=(src_fd, *plan.pass_fds),
                start_new_session=True,  # its own process group, killed as one
                preexec_fn=preexec(limits(timeout), plan.preexec()),
            )
        except (OSError, subprocess.SubprocessError) as exc:
            base.error = f"cannot start the tool: {exc}"
            write_audit(base, manifest, args, runs_dir, envs_keys, plan)
            plan.finish()
            return out, err, None, False, None, plan, [], envs_keys
        finally:
            os.close(src_fd)  # the child holds its own copy; ours would keep a pipe open
            plan.close_fds()
            if feeder is not None:
                feeder.start()  # with no child, its write fails at once and it closes
        try:
            out, err, timed_out, overflow = communicate(proc, stdin, timeout)
            base.duration_ms = int((time.monotonic() - started) * 1000)
        finally:
            notes = plan.finish()
    return out, err, proc, timed_out, overflow, plan, notes, envs_keys
