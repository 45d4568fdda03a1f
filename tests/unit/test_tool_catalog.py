"""The shared tool catalog (runtime/catalog.py): read once per file version, lint on demand and
once, unreadable files as entries, and serve lists through it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from patch_tui.format.toolfile import ToolFile
from patch_tui.runtime.catalog import ToolCatalog
from patch_tui.runtime.toolbox import Toolbox

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_tools"


def _box(tmp_path: Path, *names: str) -> Toolbox:
    folder = tmp_path / "tools"
    folder.mkdir()
    for name in names:
        shutil.copy(SAMPLES / f"{name}.py", folder / f"{name}.py")
    return Toolbox.open(folder)


def test_a_file_is_read_once_per_version(tmp_path: Path) -> None:
    box = _box(tmp_path, "slugify")
    path = box.tools_dir / "slugify.py"
    catalog = ToolCatalog(box)
    first = catalog.read(path)
    assert first.manifest is not None and first.name == "slugify" and first.sha256
    assert catalog.read(path) is first  # same stat: not read again
    path.write_text(path.read_text().replace("description:", "description: Changed.", 1))
    second = catalog.read(path)
    assert second is not first and second.sha256 != first.sha256
    assert second.description.startswith("Changed.")


def test_lint_runs_once_per_version_and_only_when_asked(tmp_path: Path) -> None:
    box = _box(tmp_path, "slugify", "word_count")
    calls: list[str | None] = []

    def lint(tool: ToolFile) -> tuple[int, int]:
        calls.append(tool.path)
        return (0, 2)

    catalog = ToolCatalog(box, lint=lint)
    entries = catalog.scan()
    assert [e.path.name for e in entries] == ["slugify.py", "word_count.py"]
    assert calls == []  # serve and the inbox never lint
    assert catalog.lint_counts(entries[0]) == (0, 2)
    assert catalog.lint_counts(catalog.scan()[0]) == (0, 2)
    assert len(calls) == 1


def test_an_unreadable_file_is_an_entry_not_an_exception(tmp_path: Path) -> None:
    box = _box(tmp_path, "slugify")
    fifo = box.tools_dir / "pipe.py"
    os.mkfifo(fifo)  # reading it would block: refused by type, never opened
    catalog = ToolCatalog(box, lint=lambda tool: (0, 0))
    entry = catalog.read(fifo)
    assert entry.tool is None and entry.error
    assert catalog.lint_counts(entry) == (1, 0)
    gone = catalog.read(box.tools_dir / "missing.py")
    assert gone.tool is None and gone.error


def test_scan_forgets_deleted_files(tmp_path: Path) -> None:
    box = _box(tmp_path, "slugify", "word_count")
    catalog = ToolCatalog(box)
    assert len(catalog.scan()) == 2
    (box.tools_dir / "word_count.py").unlink()
    assert [e.name for e in catalog.scan()] == ["slugify"]
    assert box.tools_dir / "word_count.py" not in catalog._entries


def test_serve_lists_through_the_shared_catalog(tmp_path: Path) -> None:
    from patch_tui.mcp_server.catalog import ToolCatalog as ServeCatalog

    box = _box(tmp_path, "slugify")
    serve = ServeCatalog(box)
    assert set(serve.scan()) == {"slugify"}
    path = box.tools_dir / "slugify.py"
    assert serve.files.read(path).sha256 == serve.scan()["slugify"].sha256
