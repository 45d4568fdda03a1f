"""`patch-tui --version` says the version that was installed, and CHANGELOG.md has its section."""

from __future__ import annotations

import importlib.metadata
import re
import subprocess
import sys
from pathlib import Path

import patch_tui

REPO = Path(__file__).resolve().parents[2]


def test_version_prints_the_installed_version() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "patch_tui", "--version"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"patch-tui {importlib.metadata.version('patch-tui')}"
    assert proc.stdout.strip() == f"patch-tui {patch_tui.__version__}"


def test_the_changelog_has_a_section_for_this_version() -> None:
    changelog = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    released = re.findall(r"^## \[(\d+\.\d+\.\d+)\]", changelog, flags=re.M)
    assert released and released[0] == patch_tui.__version__
