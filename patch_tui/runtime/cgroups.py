"""Per-run caps on total memory and on the number of processes: a cgroup per run.

A cgroup v2 folder where memory and pids are delegated to us (a systemd user scope, or a
writable cgroup), else the v1 memory and pids folders of this process where they are writable.
`find_cgroups` says where a group can be made (probed once, by sandbox.probe); `make_cgroup`
makes one run's group with its caps; `RunCgroup.remove` kills what is left in it and removes
it; `sweep_stale` removes the empty groups of runs that were killed. Where no group can be made,
the sandbox caps processes with RLIMIT_NPROC (`count_user_processes` sets its level) and memory
per process only (RLIMIT_AS), and says so.
"""

from __future__ import annotations

import contextlib
import os
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

STALE_CGROUP_S = 120.0  # an empty run group this old was left by a run that was killed


@dataclass(frozen=True)
class Cgroups:
    """Where a per-run group can be made: a cgroup v2 folder with memory and pids delegated, or
    the v1 memory and pids folders of this process (each may be None)."""

    v2: Path | None = None
    v1_memory: Path | None = None
    v1_pids: Path | None = None


def _mounts() -> list[tuple[str, str, str]]:
    """(mount point, fs type, super options) of each mount of this process."""
    out = []
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            left, _, right = line.partition(" - ")
            fields, rest = left.split(), right.split()
            if len(fields) >= 5 and len(rest) >= 3:
                out.append((fields[4].replace("\\040", " "), rest[0], rest[2]))
    return out


def _writable_dir(path: Path) -> bool:
    """A group can be made here: try it (access() says little to root and nothing to cgroupfs)."""
    probe = path / f"patch-probe-{uuid.uuid4().hex[:8]}"
    try:
        probe.mkdir()
    except OSError:
        return False
    with contextlib.suppress(OSError):
        probe.rmdir()
    return True


def find_cgroups() -> Cgroups:
    if not sys.platform.startswith("linux"):
        return Cgroups()
    try:
        own = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return Cgroups()
    where: dict[str, str] = {}
    for line in own:
        _, ctrls, rel = line.split(":", 2)
        for c in ctrls.split(",") if ctrls else [""]:
            where[c] = rel
    v2 = v1_mem = v1_pids = None
    for mount, fstype, opts in _mounts():
        if fstype == "cgroup2" and "" in where:
            base = Path(mount + where[""])
            try:
                delegated = set((base / "cgroup.subtree_control").read_text().split())
            except OSError:
                continue
            if {"memory", "pids"} <= delegated and _writable_dir(base):
                v2 = base
        elif fstype == "cgroup":
            names = opts.split(",")
            for ctrl in ("memory", "pids"):
                if ctrl in names and ctrl in where:
                    base = Path(mount + where[ctrl])
                    if _writable_dir(base):
                        if ctrl == "memory":
                            v1_mem = base
                        else:
                            v1_pids = base
    return Cgroups(v2=v2, v1_memory=v1_mem, v1_pids=v1_pids)


@dataclass
class RunCgroup:
    kind: str  # "v2" or "v1"
    memory: Path | None
    pids: Path | None

    def folders(self) -> list[Path]:
        return list(dict.fromkeys(p for p in (self.memory, self.pids) if p is not None))

    def oom_kills(self) -> int:
        if self.memory is None:
            return 0
        name = "memory.events" if self.kind == "v2" else "memory.oom_control"
        with contextlib.suppress(OSError, ValueError):
            for line in (self.memory / name).read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        return 0

    def remove(self) -> None:
        import signal
        import time

        for folder in self.folders():
            for _ in range(50):
                with contextlib.suppress(OSError):
                    for pid in (folder / "cgroup.procs").read_text().split():
                        with contextlib.suppress(OSError):
                            os.kill(int(pid), signal.SIGKILL)
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)  # the killed processes are still being reaped


def _write(path: Path, value: str) -> None:
    path.write_text(value)


def make_cgroup(cg: Cgroups, memory_bytes: int, max_processes: int) -> RunCgroup | None:
    name = f"patch-run-{uuid.uuid4().hex[:12]}"
    if cg.v2 is not None:
        folder = cg.v2 / name
        try:
            folder.mkdir()
            _write(folder / "memory.max", str(memory_bytes))
            with contextlib.suppress(OSError):
                _write(folder / "memory.swap.max", "0")
            _write(folder / "pids.max", str(max_processes))
            return RunCgroup("v2", folder, folder)
        except OSError:
            with contextlib.suppress(OSError):
                folder.rmdir()
    made = RunCgroup("v1", None, None)
    if cg.v1_memory is not None:
        folder = cg.v1_memory / name
        try:
            folder.mkdir()
            _write(folder / "memory.limit_in_bytes", str(memory_bytes))
            with contextlib.suppress(OSError):  # only with swap accounting
                _write(folder / "memory.memsw.limit_in_bytes", str(memory_bytes))
            made.memory = folder
        except OSError:
            with contextlib.suppress(OSError):
                folder.rmdir()
    if cg.v1_pids is not None:
        folder = cg.v1_pids / name
        try:
            folder.mkdir()
            _write(folder / "pids.max", str(max_processes))
            made.pids = folder
        except OSError:
            with contextlib.suppress(OSError):
                folder.rmdir()
    return made if made.folders() else None


def sweep_stale(cg: Cgroups) -> None:
    """Remove the empty run groups older than STALE_CGROUP_S (left by runs that were killed)."""
    import time

    now = time.time()
    for base in {p for p in (cg.v2, cg.v1_memory, cg.v1_pids) if p is not None}:
        with contextlib.suppress(OSError):
            for entry in os.scandir(base):
                if not entry.name.startswith("patch-run-"):
                    continue
                with contextlib.suppress(OSError):
                    if now - entry.stat().st_mtime < STALE_CGROUP_S:
                        continue
                    if Path(entry.path, "cgroup.procs").read_text().strip():
                        continue
                    os.rmdir(entry.path)


def count_user_processes(uid: int) -> int:
    n = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if entry.stat().st_uid == uid:
                    n += 1
    return n
