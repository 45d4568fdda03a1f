"""The toolbox: atomic saves, conflict detection, index.json, versions and history."""

from __future__ import annotations

import json
import os
import stat

import pytest

from patch_tui.core import toolfile
from patch_tui.core.lint.engine import lint_text
from patch_tui.core.toolbox import (
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
    (root / "index.json").write_text(json.dumps(index if index is not None else {"tools": []}))
    return Toolbox.open(root)


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


def test_save_updates_index_keeping_unknown_keys(tmp_path):
    tb = _patch_toolbox(
        tmp_path,
        {"schema": 3, "tools": [{"name": "t", "version": "0.0.1", "description": "old", "file": "tools/t.py", "extra": 1}]},
    )
    path = tb.tools_dir / "t.py"
    path.write_text(new_tool_text("t"))
    result = tb.save_tool(path, new_tool_text("t", "New words."), expected_sha256=file_sha256(path))
    assert result.index_updated
    index = json.loads((tb.root / "index.json").read_text())
    assert index["schema"] == 3
    assert index["tools"] == [
        {"name": "t", "version": "0.1.0", "description": "New words.", "file": "tools/t.py", "extra": 1}
    ]
    # A new tool follows the other entries' lead for the file key.
    tb.create_tool("other")
    index = json.loads((tb.root / "index.json").read_text())
    assert index["tools"][1] == {
        "name": "other",
        "version": "0.1.0",
        "description": "Describe what other does in one sentence.",
        "file": "tools/other.py",
    }


def test_index_mapping_shape_kept(tmp_path):
    tb = _patch_toolbox(tmp_path, {"t": {"version": "0.0.1", "description": "old", "x": True}})
    path = tb.tools_dir / "t.py"
    tb.save_tool(path, new_tool_text("t"), expected_sha256=None)
    assert json.loads((tb.root / "index.json").read_text()) == {
        "t": {"version": "0.1.0", "description": "Describe what t does in one sentence.", "x": True}
    }


def test_broken_manifest_is_saved_but_not_indexed(tmp_path):
    tb = _patch_toolbox(tmp_path)
    path = tb.tools_dir / "t.py"
    result = tb.save_tool(path, "# ---\n# name: [\n# ---\n", expected_sha256=None)
    assert not result.index_updated
    assert path.read_text() == "# ---\n# name: [\n# ---\n"
    assert json.loads((tb.root / "index.json").read_text()) == {"tools": []}


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
    assert json.loads((tb.root / "index.json").read_text())["tools"][0]["version"] == "0.2.0"

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

    b = tb.rename_tool(a, "beta")
    assert not a.exists() and b.name == "beta.py"
    assert toolfile.read(str(b)).manifest.name == "beta"
    names = [e["name"] for e in json.loads((tb.root / "index.json").read_text())["tools"]]
    assert names == ["beta"]

    c = tb.duplicate_tool(b, "gamma")
    assert toolfile.read(str(c)).manifest.name == "gamma"
    assert toolfile.read(str(c)).body == toolfile.read(str(b)).body
    with pytest.raises(ToolboxError, match="already exists"):
        tb.duplicate_tool(b, "gamma")

    before = b.read_bytes()
    trashed = tb.delete_tool(b)
    assert not b.exists()
    assert trashed.read_bytes() == before  # moved, never removed
    assert trashed.parent == tb.trash_dir
    names = [e["name"] for e in json.loads((tb.root / "index.json").read_text())["tools"]]
    assert names == ["gamma"]
    assert [p.name for p in tb.tool_paths()] == ["gamma.py"]


def test_bad_index_reports_clearly(tmp_path):
    tb = _patch_toolbox(tmp_path)
    (tb.root / "index.json").write_text("{not json")
    with pytest.raises(ToolboxError, match="not valid JSON"):
        tb.save_tool(tb.tools_dir / "t.py", new_tool_text("t"), expected_sha256=None)
    # The tool itself was saved before the index complained.
    assert (tb.tools_dir / "t.py").exists()
