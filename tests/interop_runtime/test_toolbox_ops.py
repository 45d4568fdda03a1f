"""After each patch-tui operation on a shared toolbox, the real runtime still lists every tool.

The toolbox starts as the runtime itself writes one (its generator's stamp, its writer, its
index.json, via save.js) from the runtime's own sample tools; then patch-tui creates, saves,
renames, duplicates, versions, formats and deletes tools, and after each step the runtime's
tools/list (over stdio, through the mcp client) must show exactly the tools the folder holds.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from patch_tui.cli import main as cli_main
from patch_tui.format import runtime_format
from patch_tui.runtime.toolbox import Toolbox, file_sha256
from tests.interop_runtime.kit import runtime_save, runtime_tools
from tests.interop_runtime.samples import samples

pytestmark = pytest.mark.slow


def _accepted_samples(folder: Path) -> list[Path]:
    """The runtime's sample tools it accepts, one file each (distinct names)."""
    folder.mkdir(parents=True, exist_ok=True)
    out: list[Path] = []
    names: set[str] = set()
    for sample in samples():
        try:
            name = runtime_format.parse(sample.text).manifest["name"]
        except runtime_format.RuntimeRejects:
            continue
        if name in names:
            continue
        names.add(name)
        path = folder / f"{sample.name}.py"
        path.write_text(sample.text, encoding="utf-8")
        out.append(path)
    return out


def _names_in_folder(tb: Toolbox) -> set[str]:
    names = set()
    for p in tb.tool_paths():
        try:
            names.add(runtime_format.parse(p.read_text(encoding="utf-8")).manifest["name"])
        except runtime_format.RuntimeRejects:
            pass
    return names


async def test_every_operation_keeps_the_runtime_listing_every_tool(tmp_path: Path, capsys) -> None:
    root = tmp_path / "box"
    sources = _accepted_samples(tmp_path / "src")
    runtime_save(root, sources)
    tb = Toolbox.open(root)
    start = await runtime_tools(root)
    assert len(start) == len(sources) > 20

    async def check(step: str) -> dict:
        listed = await runtime_tools(root)
        assert set(listed) == _names_in_folder(tb), step
        return listed

    # new --toolbox: the new tool is registered and listed.
    assert cli_main(["new", "made_here", "--toolbox", str(root)]) == 0
    listed = await check("new --toolbox")
    assert "made_here" in listed

    # save (the desk's save): an edited description shows in the runtime's listing.
    path = tb.find("word_count")
    assert path is not None
    text = path.read_text(encoding="utf-8").replace(
        "Count words, characters, and lines in a text string.", "Count the words of a text."
    )
    tb.save_tool(path, text, expected_sha256=file_sha256(path))
    listed = await check("save")
    assert listed["word_count"]["description"] == "Count the words of a text."

    # rename, duplicate, new version.
    renamed = tb.rename_tool(path, "count_words")
    listed = await check("rename")
    assert "count_words" in listed and "word_count" not in listed
    tb.duplicate_tool(renamed, "count_words_copy")
    assert "count_words_copy" in await check("duplicate")
    tb.save_new_version(renamed, renamed.read_text(encoding="utf-8"), "minor")
    await check("new version")
    index = json.loads((root / "index.json").read_text())
    assert index["count_words"]["version"] == "1.1.0"

    # fmt on the whole folder, then delete.
    assert cli_main(["fmt", str(root / "tools")]) in (0, 1)
    capsys.readouterr()
    await check("fmt")
    tb.delete_tool(tb.find("count_words_copy"))
    listed = await check("delete")
    assert "count_words_copy" not in listed
    assert len(listed) == len(sources) + 1  # every runtime tool, plus the one made here


async def test_a_file_the_runtime_refuses_never_breaks_its_listing(tmp_path: Path) -> None:
    root = tmp_path / "box"
    tb = Toolbox.init_patch(root)
    good = tb.create_tool("good_tool")
    bad = tb.create_tool("bad_tool")
    # Saved without an input description: the runtime's schema refuses it.
    text = bad.read_text().replace("#     description: The text to work on.\n", "")
    tb.save_tool(bad, text, expected_sha256=file_sha256(bad))
    assert bad.read_text() == text  # the work is kept
    assert set(await runtime_tools(root)) == {"good_tool"}
    assert good.exists()
