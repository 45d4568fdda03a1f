"""Pinned `runtime.packages` in a cached virtual environment per package set.

The key is the sha256 of the sorted pins and the Python version; a venv is made on request
(`allow_install`), one installer per package set even across processes, and reused after.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

INSTALL_TIMEOUT = 600.0


class RunnerError(Exception):
    """The tool could not be started at all (its message is for a person)."""


def venv_key(packages: list[str], python: str | None = None) -> str:
    """The cache key of a package set: the same pins on the same Python share one venv."""
    py = python or f"{sys.version_info.major}.{sys.version_info.minor}"
    text = json.dumps({"python": py, "packages": sorted(packages)})
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def default_venv_root() -> Path:
    from patch_tui.settings import paths

    return paths.cache_dir() / "venvs"


def ensure_venv(packages: list[str], *, allow_install: bool, venv_root: Path | None = None) -> Path:
    """The Python of a cached venv holding exactly these pins, creating it if allowed."""
    root = venv_root or default_venv_root()
    folder = root / venv_key(packages)
    python = folder / "bin" / "python"
    ready = folder / ".complete"
    if ready.exists():
        return python
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
        if ready.exists():
            return python
        shutil.rmtree(folder, ignore_errors=True)  # a half-made venv from a crash
        try:
            # Our own pip installs into the new venv (`pip --python`): no pip copy per venv, and
            # much faster. Without pip here (a uv-made install), the venv gets its own.
            import importlib.util

            own_pip = importlib.util.find_spec("pip") is not None
            venv_cmd = [sys.executable, "-m", "venv", str(folder)]
            if own_pip:
                venv_cmd.insert(3, "--without-pip")
            subprocess.run(venv_cmd, check=True, capture_output=True, timeout=300)
            pip = (
                [sys.executable, "-m", "pip", "--python", str(python)]
                if own_pip
                else [str(python), "-m", "pip"]
            )
            cmd = [
                *pip,
                "install",
                "--no-input",
                "--disable-pip-version-check",
                "--quiet",
                *packages,
            ]
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=INSTALL_TIMEOUT)
        except subprocess.TimeoutExpired:
            raise RunnerError(f"installing {', '.join(packages)} took too long") from None
        except (OSError, subprocess.CalledProcessError) as exc:
            raise RunnerError(f"cannot create a virtual environment: {exc}") from None
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
            raise RunnerError(f"installing {', '.join(packages)} failed: " + " | ".join(tail))
        ready.write_text(json.dumps(sorted(packages)) + "\n")
    return python
