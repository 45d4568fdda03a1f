"""Pinned `runtime.packages` in a cached virtual environment per package set, installed inside
the sandbox (issue 22).

The key is the sha256 of the sorted pins and the Python version; a venv is made on request
(`allow_install`), one installer per package set even across processes, and reused after.

    check_pins(packages)      each entry `name==1.2.3` (the format's pattern), or RunnerError
    ensure_venv(packages, allow_install=..., venv_root=..., sandbox=InstallSandbox(...)) -> Venv

What an install sees: pip runs under the same engine as the tool (bubblewrap, or Landlock +
seccomp in namespaces), with `filesystem: none` (the system and the Python read-only), writing
only the venv it builds and pip's cache, with a scrubbed environment (no API keys, no
SSH_AUTH_SOCK, no PATCH_TUI_*, no pip config of the user's), TCP only to the package index's
port (and DNS's), no unix sockets. Wheels only (`--only-binary :all:`), so no package code runs
at install time, unless `packages_allow_sdist` is on: the sdist is then built in that same
sandbox, with no pip cache shared with other installs. The venv is read-only to every later run
(the venv cache is frozen for tools). How it was isolated is kept in the venv's `.complete`
record and reported by every run that uses it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from patch_tui.format.fields import PACKAGE_RE

INSTALL_TIMEOUT = 600.0

PIN_RE = PACKAGE_RE  # the format's pattern (fields.py), the Patch runtime's
DEFAULT_INDEX = "https://pypi.org/simple"
LAYOUT = 2  # venvs of layout 1 were installed unsandboxed: never reused
DNS_PORT = 53


class RunnerError(Exception):
    """The tool could not be started at all (its message is for a person)."""


def pin_problem(entry: Any) -> str | None:
    """None when a runtime.packages entry is a pin the format allows, else why not (one clause)."""
    if not isinstance(entry, str):
        return f"runtime.packages entry {entry!r} is not a string"
    if not PIN_RE.match(entry):
        shown = entry if len(entry) <= 80 else entry[:77] + "..."
        return (
            f'runtime.packages entry "{shown}" is not a pinned package (name==1.2.3); '
            "nothing else (no pip option, URL or path) is allowed there"
        )
    return None


def check_pins(packages: list[Any]) -> None:
    for entry in packages:
        why = pin_problem(entry)
        if why is not None:
            raise RunnerError(f"refused: {why}; the tool was not run")


def venv_key(packages: list[str], python: str | None = None) -> str:
    """The cache key of a package set: the same pins on the same Python share one venv."""
    py = python or f"{sys.version_info.major}.{sys.version_info.minor}"
    text = json.dumps({"python": py, "packages": sorted(packages), "layout": LAYOUT})
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def default_venv_root() -> Path:
    from patch_tui.settings import paths

    return paths.cache_dir() / "venvs"


@dataclass
class InstallSandbox:
    """Where the install happens: the same protected set and engine as the tool's run."""

    hidden: list[Path] = field(default_factory=list)
    frozen: list[Path] = field(default_factory=list)
    sealed: list[Path] = field(default_factory=list)
    engine: str | None = None


@dataclass
class Venv:
    python: Path
    site: list[str]  # its site-packages, added by the tool's process once confined
    install: dict[str, Any]  # how it was installed: engine, claims, lines, sdists, index
    made_now: bool = False


def _site_packages(folder: Path) -> list[str]:
    v = f"python{sys.version_info.major}.{sys.version_info.minor}"
    return [str(folder / "lib" / v / "site-packages")]


def ensure_venv(
    packages: list[str],
    *,
    allow_install: bool,
    venv_root: Path | None = None,
    sandbox: InstallSandbox | None = None,
) -> Venv:
    """The cached venv holding exactly these pins, installing them (sandboxed) if allowed."""
    check_pins(packages)
    root = venv_root or default_venv_root()
    folder = root / venv_key(packages)
    ready = folder / ".complete"
    found = _read_record(folder, ready)
    if found is not None:
        return found
    if not allow_install:
        raise RunnerError(
            f"the tool needs {', '.join(packages)}, which are not installed yet, and installing "
            "was refused (--no-install); run it once without --no-install"
        )
    import fcntl

    root.mkdir(parents=True, exist_ok=True)
    # One installer per package set, even across processes; the others wait, then reuse it.
    with open(root / f"{folder.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        found = _read_record(folder, ready)
        if found is not None:
            return found
        shutil.rmtree(folder, ignore_errors=True)  # a half-made venv from a crash
        _make_venv(folder)
        install = _install(folder, packages, root, sandbox or InstallSandbox())
        record = {"packages": sorted(packages), "install": install}
        tmp = folder / ".complete.new"
        tmp.write_text(json.dumps(record) + "\n")
        os.replace(tmp, ready)
    return Venv(folder / "bin" / "python", _site_packages(folder), install, made_now=True)


def _read_record(folder: Path, ready: Path) -> Venv | None:
    try:
        record = json.loads(ready.read_text())
    except (OSError, ValueError):
        return None
    install = record.get("install") if isinstance(record, dict) else None
    if not isinstance(install, dict):
        return None
    return Venv(folder / "bin" / "python", _site_packages(folder), install)


def _make_venv(folder: Path) -> None:
    """An empty venv (no pip in it): the standard library's venv, run by patch-tui's own Python;
    no package's code is involved yet."""
    cmd = [sys.executable, "-I", "-m", "venv", "--without-pip", str(folder)]
    try:
        subprocess.run(cmd, check=True, capture_output=True, timeout=300)
    except subprocess.TimeoutExpired:
        raise RunnerError("creating the package venv took too long") from None
    except (OSError, subprocess.CalledProcessError) as exc:
        raise RunnerError(f"cannot create a virtual environment: {exc}") from None


def pip_location() -> str:
    """The folder holding the pip that installs (ours, else the base Python's): trusted code,
    read-only to the install, run confined."""
    import importlib.util
    import sysconfig

    spec = importlib.util.find_spec("pip")
    if spec is not None and spec.origin:
        return str(Path(spec.origin).parent.parent)
    base = {"base": sys.base_prefix, "platbase": sys.base_prefix}
    for key in ("purelib", "platlib"):
        folder = Path(sysconfig.get_paths(vars=base)[key])
        if (folder / "pip" / "__init__.py").exists():
            return str(folder)
    raise RunnerError(
        "cannot install the tool's packages: no pip here (install it: python3 -m ensurepip)"
    )


def index_url() -> str:
    from patch_tui.settings.config import plain_setting

    configured = plain_setting("packages_index_url", None)
    return str(configured or os.environ.get("PIP_INDEX_URL") or DEFAULT_INDEX)


def allow_sdist() -> bool:
    from patch_tui.settings.config import plain_setting

    return plain_setting("packages_allow_sdist", False) is True


def _index_ports(url: str) -> list[int]:
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    if port is None:
        port = 80 if parts.scheme == "http" else 443
    return sorted({port, DNS_PORT})


def pip_args(folder: Path, packages: list[str], cache: Path | None, sdists: bool) -> list[str]:
    args = [
        "--python",  # pip runs itself again with the venv's Python (still confined)
        str(folder / "bin" / "python"),
        "install",
        "--no-input",
        "--disable-pip-version-check",
        "--quiet",
        "--index-url",
        index_url(),
    ]
    if not sdists:
        args += ["--only-binary", ":all:"]
    args += ["--cache-dir", str(cache)] if cache is not None else ["--no-cache-dir"]
    return [*args, *packages]


def _install(folder: Path, packages: list[str], root: Path, box: InstallSandbox) -> dict[str, Any]:
    """pip, inside the sandbox: the named steps of one confined process."""
    from patch_tui.runtime import sandbox
    from patch_tui.runtime.process import communicate, limits, preexec, sandbox_prefix

    sdists = allow_sdist()
    # A build of an sdist runs the package's code: it gets no cache another install reads.
    cache = None if sdists else root.parent / "pip"
    if cache is not None:
        cache.mkdir(parents=True, exist_ok=True, mode=0o700)
    url = index_url()
    engine = sandbox.choose_engine(box.engine)
    if engine == "bwrap":
        prefix: list[str] = []
        pid_ns = True
    else:
        prefix, pid_ns, _ = sandbox_prefix(True)
    with sandbox.run_folder() as run_dir:
        req = sandbox.Request(
            run_dir=run_dir,
            filesystem="none",
            network=True,
            python=str(folder / "bin" / "python"),
            hidden=box.hidden,
            frozen=box.frozen,
            sealed=box.sealed,
            read_extra=[Path(pip_location())],
            engine=engine,
            pid_ns=pid_ns,
            net_ns=False,
            writable=[folder, *([cache] if cache is not None else [])],
            tcp_ports=_index_ports(url),
            site=[pip_location()],
        )
        plan = sandbox.prepare(req)
        assert plan.spec is not None  # it holds the site and module at least
        plan.spec["module"] = "pip"
        plan.spec["argv"] = pip_args(folder, packages, cache, sdists)
        env = {
            "PATH": sandbox.SAFE_PATH,
            "LANG": "C.UTF-8",
            "HOME": str(run_dir / "home"),
            "TMPDIR": str(run_dir / "tmp"),
            "PIP_CONFIG_FILE": os.devnull,  # no user or system pip config (indexes, find-links)
        }
        cmd = [
            *prefix,
            *plan.prefix,
            *plan.python_command(sys.executable, ["-I", "-S", "-X", "utf8"], "-"),
        ]
        try:
            proc = subprocess.Popen(
                cmd,
                cwd=run_dir / "work",
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                pass_fds=tuple(plan.pass_fds),
                start_new_session=True,
                preexec_fn=preexec(limits(INSTALL_TIMEOUT), plan.preexec()),
            )
        except (OSError, subprocess.SubprocessError) as exc:
            plan.finish()
            raise RunnerError(f"cannot start the package install: {exc}") from None
        finally:
            plan.close_fds()
        out, err, timed_out, _ = communicate(proc, b"", INSTALL_TIMEOUT)
        plan.finish()
    if timed_out:
        raise RunnerError(f"installing {', '.join(packages)} took too long")
    if proc.returncode != 0:
        text = (err or out).decode("utf-8", "replace").strip().splitlines()
        tail = " | ".join(text[-5:])
        hint = ""
        if not sdists and "no matching distribution" in tail.lower():
            hint = (
                " (only wheels are installed: a package with no wheel for this Python needs "
                "packages_allow_sdist = true in config.toml, and is then built in the sandbox)"
            )
        raise RunnerError(f"installing {', '.join(packages)} failed: {tail}{hint}")
    return {
        "engine": plan.engine,
        "claims": plan.claims,
        "lines": _install_lines(plan, sdists, url),
        "sdists": sdists,
        "index": url,
    }


def _install_lines(plan: Any, sdists: bool, url: str) -> list[str]:
    how = {
        "landlock": "inside the sandbox (Landlock, seccomp, namespaces)",
        "bwrap": "inside the sandbox (bubblewrap, seccomp)",
    }.get(plan.engine, "NOT isolated (no sandbox engine here), with a scrubbed environment")
    built = "sdists built in the sandbox" if sdists else "wheels only (no package code ran)"
    return [
        f"packages: installed {how}: the system read-only, writes only in the venv and pip's "
        f"cache, no user files or patch-tui state, a scrubbed environment, network only to "
        f"{urlsplit(url).netloc or url}; {built}.",
    ]


def install_summary(install: dict[str, Any]) -> dict[str, Any]:
    """What a run's `enforced["install"]` says about the venv it used."""
    with contextlib.suppress(AttributeError):
        return {
            "engine": install.get("engine"),
            "claims": list(install.get("claims", [])),
            "sdists": bool(install.get("sdists")),
            "index": install.get("index"),
        }
    return {}
