"""The import rules between patch_tui's packages hold (docs/architecture.md, "Layers").

The rules themselves live in pyproject.toml ([tool.importlinter]): the layers, and that nothing
outside ui/ and commands/ imports Textual. import-linter (grimp) reads every import statement,
the ones inside functions included, so a lazy import cannot hide a wrong-way dependency.
"""

from __future__ import annotations

import pytest

from tests.runtimekit import REPO

ROOT = REPO


def test_import_contracts_are_kept(capsys: pytest.CaptureFixture[str]) -> None:
    try:
        from importlinter.cli import lint_imports
    except ImportError:  # an old .venv: the dev extras gained import-linter
        pytest.fail("import-linter is not installed: run `make .venv/.installed`")
    rc = lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True, no_logo=True)
    out = capsys.readouterr().out
    assert rc == 0, out

