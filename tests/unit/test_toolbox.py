"""The toolbox: atomic saves, conflict detection, index.json, versions and history."""

from __future__ import annotations

import json
import os
import stat

import pytest

from patch_tui.format import toolfile
from patch_tui.lint.engine import lint_text
from patch_tui.runtime.toolbox import (
    FileChangedOnDisk,
    Toolbox,
    ToolboxError,
    atomic_write,
    file_sha256,
    new_tool_text,
    sha256_bytes,
)


def _patch_toolbox(tmp_path, index=None):
    root = tmp_path / "box"
    (root / "tools").mkdir(parents=True)
    (root / "index.json").write_text(json.dumps(index if index is not None else {}))
    return Toolbox.open(root)


def _index(tb):
    return json.loads((tb.root / "index.json").read_text())


RUNTIME_KEYS = [
    "name",
    "version",
    "description",
    "filePath",
    "embedding",
    "lastUsedAt",
    "createdAt",
]


def test_template_is_lint_clean():
    text = new_tool_text("my_tool", "Does a thing.")
    errors = [d for d in lint_text(text) if d.severity == "error"]
    assert errors == []
    assert toolfile.parse(text).manifest.name == "my_tool"


def test_open_kinds(tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "a.py").write_text(new_tool_text("a"))
    tb = Toolbox.open(plain / "a.py")
    assert tb.root == plain.resolve() and tb.tools_dir == plain.resolve()
    assert not tb.is_patch_toolbox
    assert tb.history_dir == plain.resolve() / ".history"

    box = _patch_toolbox(tmp_path)
    assert box.is_patch_toolbox and box.tools_dir == box.root / "tools"
    # The tools/ folder of a Patch toolbox opens the whole toolbox.
    assert Toolbox.open(box.tools_dir).root == box.root
    with pytest.raises(ToolboxError, match="no such file"):
        Toolbox.open(tmp_path / "missing")


def test_tool_paths_and_find(tmp_path):
    tb = Toolbox.open(tmp_path)
    (tmp_path / "b.py").write_text(new_tool_text("b"))
    (tmp_path / "odd_file.py").write_text(new_tool_text("real_name"))
    (tmp_path / ".hidden.py").write_text("x")
    (tmp_path / "notes.txt").write_text("x")
    assert [p.name for p in tb.tool_paths()] == ["b.py", "odd_file.py"]
    assert tb.find("real_name") == tmp_path.resolve() / "odd_file.py"
    assert tb.find("b") == tmp_path.resolve() / "b.py"
    assert tb.find("odd_file") == tmp_path.resolve() / "odd_file.py"  # by stem
    assert tb.find("nothing") is None


def test_atomic_write_keeps_mode_and_symlink(tmp_path):
    real = tmp_path / "real.py"
    real.write_text("old")
    os.chmod(real, 0o751)
    link = tmp_path / "link.py"
    link.symlink_to(real)
    written = atomic_write(link, b"new")
    assert written == real.resolve()
    assert link.is_symlink()
    assert real.read_bytes() == b"new"
    assert stat.S_IMODE(real.stat().st_mode) == 0o751
    # No temporary files left behind.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.py", "real.py"]


def test_save_refuses_changed_file(tmp_path):
    tb = Toolbox.open(tmp_path)
    path = tmp_path / "t.py"
    path.write_text(new_tool_text("t"))
    loaded = file_sha256(path)
    path.write_text(new_tool_text("t", "Changed by another editor."))
    with pytest.raises(FileChangedOnDisk) as info:
        tb.save_tool(path, new_tool_text("t", "Mine."), expected_sha256=loaded)
    assert "Changed by another editor." in path.read_text()  # nothing overwritten
    assert info.value.actual == file_sha256(path)
    # "Keep mine": the person chose to overwrite.
    result = tb.save_tool(path, new_tool_text("t", "Mine."), expected_sha256=None)
    assert "Mine." in path.read_text()
    assert result.sha256 == sha256_bytes(path.read_bytes())


def test_save_refuses_deleted_file(tmp_path):
    tb = Toolbox.open(tmp_path)
    path = tmp_path / "t.py"
    path.write_text("x")
    loaded = file_sha256(path)
    path.unlink()
    with pytest.raises(FileChangedOnDisk, match="deleted"):
        tb.save_tool(path, "y", expected_sha256=loaded)


def test_save_writes_the_runtime_entry_keeping_fields_we_do_not_own(tmp_path):
    tb = _patch_toolbox(tmp_path)
    path = tb.tools_dir / "t.py"
    created = tb.create_tool("t")
    assert created == path
    entry = _index(tb)["t"]
    # The runtime's ToolEntry, with filePath absolute: its listTools finds the tool.
    assert list(entry) == RUNTIME_KEYS
    assert entry["filePath"] == str(path) and os.path.isabs(entry["filePath"])
    assert entry["embedding"] is None and entry["lastUsedAt"] is None
    assert entry["createdAt"].endswith("Z")
    # The runtime (or a person) adds fields; a save keeps them and what it does not derive.
    index = _index(tb)
    index["t"] |= {"embedding": [0.5, 0.25], "lastUsedAt": "2026-01-01T00:00:00.000Z", "extra": 1}
    (tb.root / "index.json").write_text(json.dumps(index))
    result = tb.save_tool(path, new_tool_text("t", "New words."), expected_sha256=file_sha256(path))
    assert result.index_updated
    assert _index(tb) == {
        "t": {
            **index["t"],
            "description": "New words.",
        }
    }
    # Written as the runtime writes it: 2-space JSON and a newline.
    assert (tb.root / "index.json").read_text() == json.dumps(_index(tb), indent=2) + "\n"


def test_an_older_index_shape_becomes_the_runtimes(tmp_path):
    # patch-tui used to write {"tools": [...]}: the runtime lists nothing from it.
    tb = _patch_toolbox(
        tmp_path,
        {
            "tools": [
                {
                    "name": "t",
                    "version": "0.0.1",
                    "description": "old",
                    "file": "tools/t.py",
                    "extra": 1,
                }
            ]
        },
    )
    path = tb.tools_dir / "t.py"
    tb.save_tool(path, new_tool_text("t"), expected_sha256=None)
    entry = _index(tb)["t"]
    assert entry["filePath"] == str(path) and entry["version"] == "0.1.0" and entry["extra"] == 1
    assert list(_index(tb)) == ["t"]


def test_broken_manifest_is_saved_but_not_indexed(tmp_path):
    tb = _patch_toolbox(tmp_path)
    path = tb.tools_dir / "t.py"
    result = tb.save_tool(path, "# ---\n# name: [\n# ---\n", expected_sha256=None)
    assert not result.index_updated
    assert path.read_text() == "# ---\n# name: [\n# ---\n"
    assert _index(tb) == {}


def test_a_file_the_runtime_refuses_is_never_indexed(tmp_path):
    # An input without a description: the runtime's schema refuses the file, and one such
    # entry would make its whole tools/list fail. The save keeps the bytes; the entry goes.
    tb = _patch_toolbox(tmp_path)
    path = tb.create_tool("t")
    assert "t" in _index(tb)
    text = path.read_text().replace("#     description: The text to work on.\n", "")
    result = tb.save_tool(path, text, expected_sha256=file_sha256(path))
    assert not result.index_updated and path.read_text() == text
    assert _index(tb) == {}


def test_sync_registers_parseable_tools_and_never_drops_them(tmp_path):
    tb = _patch_toolbox(tmp_path)
    good = tb.tools_dir / "good.py"
    good.write_text(new_tool_text("good"))
    # Stricter patch-tui rules (a patch-level python_version) do not keep a tool out.
    loose = tb.tools_dir / "loose.py"
    loose.write_text(new_tool_text("loose").replace('"3.12"', '"3.12.1"'))
    bad = tb.tools_dir / "bad.py"
    bad.write_text(new_tool_text("bad").replace("  language: python\n", "  language: ruby\n"))
    gone = str(tb.tools_dir / "gone.py")
    index = {"gone": {"name": "gone", "version": "1.0.0", "description": "x", "filePath": gone}}
    (tb.root / "index.json").write_text(json.dumps(index))
    tb.sync_index()
    assert sorted(_index(tb)) == ["good", "loose"]
    before = (tb.root / "index.json").read_bytes()
    tb.sync_index()
    assert (tb.root / "index.json").read_bytes() == before  # nothing to change: not rewritten


def test_new_toolbox_layout_is_the_runtimes(tmp_path):
    tb = Toolbox.init_patch(tmp_path / "fresh")
    assert tb.is_patch_toolbox
    for name in ("index.json", "config.json"):
        assert (tmp_path / "fresh" / name).read_text() == "{}\n"
    assert (tmp_path / "fresh" / "runs").is_dir()
    tb.create_tool("made")
    assert _index(tb)["made"]["filePath"] == str(tmp_path / "fresh" / "tools" / "made.py")


def test_new_version_keeps_history(tmp_path):
    tb = _patch_toolbox(tmp_path)
    path = tb.tools_dir / "t.py"
    original = new_tool_text("t")
    tb.save_tool(path, original, expected_sha256=None)
    edited = original.replace("Describe what t does", "Say what t does")
    result = tb.save_new_version(path, edited, "minor", expected_sha256=file_sha256(path))
    assert result.version == "0.2.0"
    saved = toolfile.read(str(path))
    assert saved.manifest.version == "0.2.0"
    assert "Say what t does" in saved.text
    assert saved.body == toolfile.parse(original).body  # the body is untouched
    assert result.history_path == tb.history_dir / "t" / "0.1.0.py"
    assert result.history_path.read_text() == original
    assert _index(tb)["t"]["version"] == "0.2.0"

    tb.save_new_version(path, path.read_text(), "major")
    assert [v for v, _ in tb.history("t")] == ["0.1.0", "0.2.0"]
    assert toolfile.read(str(path)).manifest.version == "1.0.0"


def test_new_version_never_overwrites_a_kept_version(tmp_path):
    tb = Toolbox.open(tmp_path)
    path = tmp_path / "t.py"
    path.write_text(new_tool_text("t"))
    tb.save_new_version(path, path.read_text(), "patch")  # keeps 0.1.0, now 0.1.1
    # Someone edits 0.1.1 in place and saves another new version; then a version 0.1.1 again.
    text = path.read_text().replace("0.1.1", "0.1.0").replace("Describe", "Explain")
    path.write_text(text)
    tb.save_new_version(path, text, "patch")
    kept = [p.read_text() for _, p in tb.history("t")]
    assert new_tool_text("t") in kept and text in kept and len(kept) == 2


def test_new_version_refuses_broken_manifest(tmp_path):
    tb = Toolbox.open(tmp_path)
    with pytest.raises(ToolboxError, match="fix the manifest"):
        tb.save_new_version(tmp_path / "t.py", "print(1)\n", "patch")


def test_create_rename_duplicate_delete(tmp_path):
    tb = _patch_toolbox(tmp_path)
    a = tb.create_tool("alpha", "Alpha tool.")
    with pytest.raises(ToolboxError, match="already exists"):
        tb.create_tool("alpha")
    with pytest.raises(ToolboxError, match="not a valid tool name"):
        tb.create_tool("Bad-Name")

    created_at = _index(tb)["alpha"]["createdAt"]
    b = tb.rename_tool(a, "beta")
    assert not a.exists() and b.name == "beta.py"
    assert toolfile.read(str(b)).manifest.name == "beta"
    assert list(_index(tb)) == ["beta"]
    assert _index(tb)["beta"]["filePath"] == str(b)
    assert _index(tb)["beta"]["createdAt"] == created_at  # the same tool, renamed

    c = tb.duplicate_tool(b, "gamma")
    assert list(_index(tb)) == ["beta", "gamma"]
    assert toolfile.read(str(c)).manifest.name == "gamma"
    assert toolfile.read(str(c)).body == toolfile.read(str(b)).body
    with pytest.raises(ToolboxError, match="already exists"):
        tb.duplicate_tool(b, "gamma")

    before = b.read_bytes()
    trashed = tb.delete_tool(b)
    assert not b.exists()
    assert trashed.read_bytes() == before  # moved, never removed
    assert trashed.parent == tb.trash_dir
    assert list(_index(tb)) == ["gamma"]
    assert _index(tb)["gamma"]["filePath"] == str(c)
    assert [p.name for p in tb.tool_paths()] == ["gamma.py"]


def test_bad_index_reports_clearly(tmp_path):
    tb = _patch_toolbox(tmp_path)
    (tb.root / "index.json").write_text("{not json")
    with pytest.raises(ToolboxError, match="not valid JSON"):
        tb.save_tool(tb.tools_dir / "t.py", new_tool_text("t"), expected_sha256=None)
    # The tool itself was saved before the index complained.
    assert (tb.tools_dir / "t.py").exists()
