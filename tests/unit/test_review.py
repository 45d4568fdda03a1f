"""approvals/review.py: what an action shows before a decision, for every front end without a
screen of its own (the web inbox): the source as held, the diff against the last approved
version (from the toolbox's history), and whether it can be approved."""

from __future__ import annotations

import hashlib
from pathlib import Path

from patch_tui.approvals import decisions
from patch_tui.approvals.review import review
from patch_tui.approvals.store import Store
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
