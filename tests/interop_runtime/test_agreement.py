"""patch-tui and the real runtime agree on every tool file of the runtime's own tests and
generator examples (plus the edge cases of issue 15): what loads, lint's verdict, fmt's output,
and tools/list."""

from __future__ import annotations

from pathlib import Path

import pytest

from patch_tui.format import runtime_format, toolfile
from patch_tui.lint import lint_text
from patch_tui.runtime.toolbox import Toolbox
from tests.interop_runtime.kit import (
    descriptors,
    runtime_parse,
    runtime_save,
    runtime_serialize,
    runtime_tools,
    serve_client,
)
from tests.interop_runtime.samples import samples

pytestmark = pytest.mark.slow

EDGE = Path(__file__).parent / "edge"

# Rules where patch-tui is documented as stricter than the runtime (docs/guide/patch-runtime.md,
# "Sharing a toolbox with the Patch runtime"): an error on a file the runtime loads is allowed
# only from these.
STRICTER = {
    "PT011",  # input names must be Python identifiers in snake_case
    "PT012",  # version strictly x.y.z without leading zeros
    "PT014",  # types must be JSON types (outputs.type, items.type)
    "PT019",  # packages pinned
    "PT020",  # known providers
    "PT021",  # ISO 8601 UTC dates, generated_by with generated_at
    "PT023",  # python_version like "3.12"
    "PT026",  # code above the opening marker (the runtime parses it but never runs it)
    "PT027",  # a lone \r in the frontmatter (the runtime loads it, dropping what follows)
    "PT030", "PT031", "PT032", "PT033", "PT036", "PT037",  # the main() contract
    "PT040", "PT041", "PT043", "PT044",  # capabilities honest about the body
    "PT050",  # hidden Unicode
}  # fmt: skip


def _read(path: Path) -> str:
    """A file's text exactly (read_text would turn a lone \r into \n, as universal newlines do)."""
    return path.read_bytes().decode("utf-8")


def _files(tmp_path: Path) -> list[Path]:
    out = []
    for sample in samples():
        path = tmp_path / f"{sample.name}.py"
        path.write_text(sample.text, encoding="utf-8")
        out.append(path)
    out += sorted(EDGE.glob("*.py"))
    return out


def test_lint_and_the_model_agree_with_the_runtime_parser(tmp_path: Path) -> None:
    files = _files(tmp_path)
    verdicts = runtime_parse(files)
    assert len(verdicts) == len(files) >= 60
    agree, stricter = 0, {}
    for path in files:
        row = verdicts[str(path)]
        text = _read(path)
        ours = runtime_format.accepts(text)
        assert ours == row["ok"], (path, row.get("error"))
        errors = {d.code for d in lint_text(text) if d.severity == "error"}
        if row["ok"]:
            # The model loads every manifest the runtime loads ...
            assert toolfile.parse(text).manifest is not None, path
            # ... and our reading is the runtime's, defaults, order and input schema included.
            parsed = runtime_format.parse(text)
            assert parsed.manifest == row["manifest"], path
            assert runtime_format.input_schema(parsed.manifest) == row["inputSchema"], path
            assert errors <= STRICTER, (path, errors - STRICTER)
            if errors:
                stricter[path.name] = sorted(errors)
            else:
                agree += 1
        else:
            # Nothing the runtime refuses passes lint.
            assert errors, (path, row["error"])
            agree += 1
    print(
        f"\nlint agrees with the runtime on {agree} of {len(files)} files; stricter on {stricter}"
    )


def test_fmt_is_the_runtime_writer(tmp_path: Path) -> None:
    files = [p for p in _files(tmp_path) if runtime_format.accepts(_read(p))]
    box = tmp_path / "box"
    runtime_save(box, files)
    written = Toolbox.open(box).tool_paths()
    assert len(written) >= 30
    for path in written:
        # Every file the runtime wrote: fmt leaves it byte for byte.
        text = _read(path)
        assert toolfile.format_text(toolfile.parse(text)) == text, path
    for path in files:
        # Every sample: our writer is the runtime's, byte for byte, and fmt keeps its meaning.
        text = _read(path)
        parsed = runtime_format.parse(text)
        assert runtime_format.serialize(parsed.manifest, parsed.body) == runtime_serialize(path), (
            path
        )
        out = toolfile.format_text(toolfile.parse(text))
        if out is None:  # fmt refuses to drop YAML comments; nothing written
            continue
        assert runtime_format.parse(out).manifest == parsed.manifest, path


async def test_serve_lists_tools_as_the_runtime_does(tmp_path: Path) -> None:
    files = [p for p in _files(tmp_path) if runtime_format.accepts(_read(p))]
    box = tmp_path / "box"
    runtime_save(box, files)
    # A tool patch-tui made and one the runtime refuses sit in the same toolbox.
    tb = Toolbox.open(box)
    tb.create_tool("made_here")
    (box / "tools" / "refused.py").write_text(
        (box / "tools" / "made_here.py")
        .read_text()
        .replace("made_here", "refused")
        .replace("    description: The text to work on.\n", "")
    )
    theirs = await runtime_tools(box)
    async with serve_client(box, tmp_path / "store.sqlite3") as client:
        listed = await client.list_tools()
    ours = descriptors(
        listed.tools, {"patch_confirm_action", "patch_list_tools", "patch_list_runs"}
    )
    ours = {k: v for k, v in ours.items() if not k.startswith("patch_")}
    assert "made_here" in theirs and "refused" not in theirs
    assert ours == theirs


async def test_serve_lists_the_edge_files_verbatim_as_the_runtime_does(tmp_path: Path) -> None:
    """The edge cases as written (tags, anchors, a lone \\r, ...), not re-saved by the runtime's
    writer: indexed as the runtime indexes them, listed by both servers identically."""
    from tests.interop_runtime.kit import _node

    tools = tmp_path / "box" / "tools"
    tools.mkdir(parents=True)
    for path in sorted(EDGE.glob("*.py")):
        text = _read(path)
        if not runtime_format.accepts(text):
            continue
        name = f"edge_{path.stem}"
        (tools / f"{name}.py").write_bytes(
            text.replace("name: edge_tool", f"name: {name}").encode()
        )
    made = _node("mkindex.js", str(tools.parent))
    assert made.returncode == 0, made.stderr
    theirs = await runtime_tools(tools.parent)
    async with serve_client(tools.parent, tmp_path / "store.sqlite3") as client:
        listed = await client.list_tools()
    ours = descriptors(
        listed.tools, {"patch_confirm_action", "patch_list_tools", "patch_list_runs"}
    )
    ours = {k: v for k, v in ours.items() if not k.startswith("patch_")}
    assert {"edge_tags_known", "edge_lone_cr", "edge_anchor"} <= set(theirs)
    # Where we differ on purpose (DESIGN.md, issue 22): a tool whose runtime.packages holds
    # anything but pins (a pip option, a URL, a path) is never served, though the runtime lists it.
    unpinned = {name for name in theirs if _packages_unpinned(tools / f"{name}.py")}
    assert unpinned == {"edge_pkg_strings"}
    assert not unpinned & set(ours)
    assert ours == {k: v for k, v in theirs.items() if k not in unpinned}


def _packages_unpinned(path: Path) -> bool:
    from patch_tui.format import toolfile
    from patch_tui.runtime.venvs import pin_problem

    data = toolfile.parse(path.read_bytes().decode("utf-8")).data or {}
    packages = (data.get("runtime") or {}).get("packages") or []
    return any(pin_problem(entry) is not None for entry in packages)
