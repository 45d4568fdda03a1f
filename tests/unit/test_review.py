"""approvals/review.py: what an action shows before a decision, for every front end without a
screen of its own (the web inbox): the source as held, the diff against the last approved
version (from the toolbox's history), and whether it can be approved."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from patch_tui.approvals import decisions
from patch_tui.approvals.review import ToolInfo, review, tool_info
from patch_tui.approvals.store import Action, Store
from patch_tui.format import toolfile
from patch_tui.format.manifest import Manifest
from patch_tui.format.plain_manifest import plain_manifest
from patch_tui.runtime.catalog import ToolCatalog
from patch_tui.runtime.toolbox import Toolbox
from tests.runtimekit import MARK_BODY, MARK_INPUTS, tool_text


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _box(tmp_path: Path) -> tuple[Toolbox, Path]:
    root = tmp_path / "box"
    (root / "tools").mkdir(parents=True)
    (root / "index.json").write_text("{}\n")
    path = root / "tools" / "mark.py"
    path.write_text(tool_text("mark", MARK_BODY, inputs=MARK_INPUTS, human_confirm=True))
    return Toolbox.open(root), path


def _hold(store: Store, path: Path, version: str) -> str:
    return store.create_pending(
        "human_confirm",
        "mark",
        version,
        _sha(path),
        {"marker": "m", "text": "t"},
        "held",
        tool_path=str(path),
    ).token


def test_a_changed_tool_shows_the_diff_against_the_last_approved_version(tmp_path: Path) -> None:
    box, path = _box(tmp_path)
    with Store(tmp_path / "s.sqlite3") as store:
        first = _hold(store, path, "1.0.0")
        assert decisions.approve(store, first).ok and decisions.claim(store, first).ok
        store.finish(first, True, {"written": "t"})
        changed = path.read_text().replace('fh.write(text + "\\n")', "fh.write(text.upper())")
        box.save_new_version(path, changed)
        second = _hold(store, path, "1.0.1")
        action = store.get(second)
        assert action is not None
        rv = review(store, action)
    assert rv.previous_version == "1.0.0"
    assert rv.source == path.read_text()
    removed = [line for line in rv.diff if line.startswith("-") and "fh.write" in line]
    added = [line for line in rv.diff if line.startswith("+") and "fh.write" in line]
    assert removed == ['-        fh.write(text + "\\n")']
    assert added == ["+        fh.write(text.upper())"]
    assert rv.cannot_approve is None


def test_a_file_changed_since_the_hold_cannot_be_approved_and_its_source_is_not_shown(
    tmp_path: Path,
) -> None:
    _box_, path = _box(tmp_path)
    with Store(tmp_path / "s.sqlite3") as store:
        token = _hold(store, path, "1.0.0")
        path.write_text(path.read_text() + "\n# edited after the call was held\n")
        action = store.get(token)
        assert action is not None
        rv = review(store, action)
    assert rv.source is None  # the bytes that would run are not these
    assert rv.cannot_approve is not None and "tool file changed" in rv.cannot_approve
    assert rv.can_reject


def test_the_first_version_has_nothing_to_compare(tmp_path: Path) -> None:
    _box_, path = _box(tmp_path)
    with Store(tmp_path / "s.sqlite3") as store:
        action = store.get(_hold(store, path, "1.0.0"))
        assert action is not None
        rv = review(store, action)
    assert rv.diff == [] and rv.previous_version is None
    assert [i.name for i in rv.tool.inputs] == ["marker", "text"]


# -- the tool part: a run's reading of the manifest, the model's answer ------------------------

SAMPLES = sorted(Path(__file__).resolve().parents[2].joinpath("sample_tools").glob("*.py"))


def _hold_tool(store: Store, path: Path) -> Action:
    return store.create_pending(
        "human_confirm", path.stem, "1.0.0", _sha(path), {}, "held", tool_path=str(path)
    )


def _model_info(path: Path) -> tuple[object, ...] | str:
    """What the tool part showed when it validated every manifest with the model."""
    tf = toolfile.read(path)
    manifest = tf.manifest
    if manifest is None:
        return "the tool's manifest does not parse"
    inputs = [
        (i.name, i.type, i.description, i.required, i.default, i.tainted_ok, i.has_default)
        + ((i.items.type,) if i.items is not None else ())
        for i in manifest.inputs
    ]
    caps = manifest.capabilities.model_dump()
    return (manifest.description, caps, tuple(manifest.external_auth), inputs)


def _shown(info: ToolInfo) -> tuple[object, ...] | str:
    if info.problem is not None:
        return info.problem
    inputs = [
        (i.name, i.type, i.description, i.required, i.default, i.tainted_ok, i.has_default)
        + ((i.items.type,) if i.items is not None else ())
        for i in info.inputs
    ]
    return (info.description, info.capabilities, info.scopes, inputs)


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_the_tool_part_shows_each_sample_as_the_model_reads_it(tmp_path: Path, path: Path) -> None:
    """Read without pydantic (the catalog's run_manifest), a sample tool's part of the details
    says what the model's reading said: description, capabilities, scopes, every input."""
    catalog = ToolCatalog()
    with Store(tmp_path / "s.sqlite3") as store:
        info = tool_info(_hold_tool(store, path), catalog)
    assert not isinstance(catalog.read(path).run_manifest, Manifest)  # the plain reading
    assert info.sha256 == _sha(path)
    assert _shown(info) == _model_info(path)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("# version: 1.0.0", "# version: \u0661.0.0"),  # a Unicode digit: left to the model
        ("#   human_confirm: true", "#   human_confirm: 'yes'"),  # invalid to both
        ("# description: Delete", "# descriptions: Delete"),  # no description: invalid
    ],
)
def test_a_manifest_the_plain_reading_leaves_is_shown_as_the_model_says(
    tmp_path: Path, old: str, new: str
) -> None:
    """The model's answer stands where the plain reading is unsure, and Approve's check (the
    held sha256 against the file's) is the same either way."""
    path = tmp_path / "delete_file.py"
    text = (SAMPLES[0].parent / "delete_file.py").read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    assert plain_manifest(toolfile.read(path).data) is None
    with Store(tmp_path / "s.sqlite3") as store:
        action = _hold_tool(store, path)
        info = tool_info(action, ToolCatalog())
        assert review(store, action, ToolCatalog()).cannot_approve is None
    assert info.sha256 == _sha(path)
    assert _shown(info) == _model_info(path)
