"""core/ and the headless commands must never import Textual, and nothing imports anthropic or mcp
at start-up (STYLE.md 1). Each import runs in a fresh interpreter so earlier tests cannot mask it."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import pytest

import patch_tui.core

CORE_MODULES = sorted(
    m.name for m in pkgutil.walk_packages(patch_tui.core.__path__, prefix="patch_tui.core.")
)


def _imported_after(code: str) -> set[str]:
    probe = code + "\nimport sys\nprint(','.join(sorted(m.split('.')[0] for m in sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    return set(out.stdout.strip().split(","))


@pytest.mark.parametrize("module", CORE_MODULES)
def test_core_module_never_imports_textual(module: str) -> None:
    loaded = _imported_after(f"import {module}")
    assert "textual" not in loaded
    assert "anthropic" not in loaded
    # serve.py is the MCP server itself; every other core module stays free of mcp at import.
    if not module.endswith(".serve"):
        assert "mcp" not in loaded


def test_lint_command_imports_no_ui_or_sdk(tmp_path) -> None:
    tool = tmp_path / "t.py"
    tool.write_text("print(1)\n")
    code = (
        "import sys\nfrom patch_tui.cli import main\n"
        f"rc = main(['lint', {str(tool)!r}])\n"
    )
    loaded = _imported_after(code)
    assert not {"textual", "anthropic", "mcp"} & loaded
