"""`patch-tui run` reads a manifest without pydantic (format/plain_manifest.py) only where the
pydantic model certainly reads it the same way: whenever the plain reading exists, the model
accepts the same data and every field of the field table has the same value in both (the gate
decides on them: human_confirm, filesystem, network, inputs, packages). Anything the plain
reading is unsure of goes to the model, whose answer and error message stand as before."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from patch_tui.format import toolfile
from patch_tui.format.fields import fields_of
from patch_tui.format.manifest import Manifest
from patch_tui.format.plain_manifest import plain_manifest

ROOT = Path(__file__).resolve().parents[2]
TOOL_FILES = sorted((ROOT / "sample_tools").glob("*.py")) + sorted(
    (ROOT / "tests" / "interop_runtime" / "edge").glob("*.py")
)


def _facts(value: Any, group: str) -> Any:
    """Every field of the table's `group` as the run path reads it (attribute access), nested
    groups included, plus the helpers it calls."""
    if value is None:
        return None
    out: dict[str, Any] = {}
    for f in fields_of(group):
        got = getattr(value, f.key)
        if f.type == "object" and f.of in ("outputs", "capabilities", "runtime", "items"):
            got = _facts(got, f.of)
        elif f.type == "array" and f.of == "inputs[]":
            got = [_facts(i, "inputs[]") for i in got]
        out[f.key] = got
    if group == "inputs[]":
        out["has_default"] = value.has_default
    if group == "outputs":
        out["item_type"] = value.item_type
    return out


def _model(data: Any) -> Manifest | None:
    try:
        return Manifest.model_validate(data)
    except ValidationError:
        return None


def _assert_same_reading(data: Any) -> bool:
    """The plain reading, where there is one, is the model's. True when there was one."""
    plain = plain_manifest(data)
    if plain is None:
        return False
    model = _model(data)
    assert model is not None, f"the plain reading accepts what the model refuses: {data!r}"
    assert _facts(plain, "") == _facts(model, "")
    assert plain.input("nope") is None
    for inp in plain.inputs:
        assert _facts(plain.input(inp.name), "inputs[]") == _facts(
            model.input(inp.name), "inputs[]"
        )
    return True


@pytest.mark.parametrize("path", TOOL_FILES, ids=lambda p: p.name)
def test_every_sample_and_edge_file_reads_the_same_both_ways(path: Path) -> None:
    tf = toolfile.parse_bytes(path.read_bytes(), path=str(path))
    if not isinstance(tf.data, dict):
        return
    read_plainly = _assert_same_reading(tf.data)
    if path.parent.name == "sample_tools":
        assert read_plainly, "a sample tool takes the fast path"
        assert tf.run_manifest is not None and not isinstance(tf.run_manifest, Manifest)
    elif not read_plainly:
        # the run falls back to the model: its answer, exactly as before
        assert _facts(tf.run_manifest, "") == _facts(tf.manifest, "")


BASE: dict[str, Any] = {
    "name": "echo_tool",
    "version": "1.0.0",
    "description": "Echoes.",
    "inputs": [{"name": "text", "type": "string", "description": "Text."}],
    "outputs": {"type": "object"},
    "capabilities": {"network": False, "filesystem": "none", "human_confirm": True},
    "runtime": {"language": "python", "python_version": "3.12", "packages": []},
}


@pytest.mark.parametrize(
    "change",
    [
        {"version": "1.0.0\n"},  # Python's `$` matches before a final newline; the model's not
        {"name": "echo\n"},
        {"version": "\u0661.0.0"},  # a Unicode digit: left to the model
        {"description": "bad \ud800 surrogate"},  # pydantic refuses a lone surrogate
        {"capabilities": {"human_confirm": 1}},  # an int is not a bool, to either
        {"capabilities": {"human_confirm": "yes"}},
        {"capabilities": {"filesystem": "everything"}},
        {"inputs": [{"name": "x", "type": "string", "description": "d", "tainted_ok": 1}]},
        {"inputs": [{"name": "x", "type": "str", "description": "d"}]},
        {"runtime": {"language": "python", "packages": "requests==2.0"}},
        {"outputs": None},
    ],
)
def test_what_the_plain_reading_is_unsure_of_goes_to_the_model(change: dict[str, Any]) -> None:
    data = {**BASE, **change}
    assert plain_manifest(data) is None
    _assert_same_reading(data)


def test_human_confirm_and_the_capabilities_read_the_same() -> None:
    plain = plain_manifest(BASE)
    assert plain is not None
    assert plain.capabilities.human_confirm is True
    assert plain.capabilities.filesystem == "none"
    assert _assert_same_reading(BASE)
    defaults = plain_manifest({**BASE, "capabilities": {}})
    assert defaults is not None and defaults.capabilities.human_confirm is False
    assert _assert_same_reading({**BASE, "capabilities": {}})


# Generated manifests: a valid one (optional fields present or not), then up to three changes,
# each a field set to a near miss, to any value, or removed.
_SCALAR = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(allow_nan=False),
    st.text(max_size=6),
)
_VALUE = st.recursive(
    _SCALAR,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)
_REMOVED = object()
_NEAR_MISSES = [
    _REMOVED,
    None,
    0,
    1,
    1.0,
    "",
    "true",
    "yes",
    "x",
    "Text",
    "str",
    "rw",
    "None",
    "node",
    "1.0",
    "01.0.0",
    "1.0.0\n",
    "echo\n",
    "\u0661.0.0",
    "x\ud800",
    "ech\u00f6",
    "echo-tool",
    [],
    {},
    ["a"],
    {"type": "string"},
    {"type": 3},
]
_BOOL = st.booleans()
_INPUT = st.fixed_dictionaries(
    {
        "name": st.sampled_from(["text", "n", "a_b"]),
        "type": st.sampled_from(["string", "number", "integer", "boolean", "array", "object"]),
        "description": st.sampled_from(["A thing.", "d"]),
    },
    optional={
        "required": _BOOL,
        "default": _VALUE,
        "tainted_ok": _BOOL,
        "items": st.fixed_dictionaries({"type": st.sampled_from(["string", "x"])}),
        "extra": _VALUE,
    },
)
_VALID = st.fixed_dictionaries(
    {
        "name": st.sampled_from(["echo_tool", "a", "a1_b"]),
        "version": st.sampled_from(["1.0.0", "0.1.22", "10.0.3"]),
        "description": st.sampled_from(["Does a thing.", "x"]),
        "outputs": st.fixed_dictionaries(
            {"type": st.sampled_from(["object", "array", "string", "x"])},
            optional={"description": st.sampled_from(["Out.", ""]), "items": _VALUE},
        ),
        "capabilities": st.fixed_dictionaries(
            {},
            optional={
                "network": _BOOL,
                "filesystem": st.sampled_from(["none", "read-only", "read-write"]),
                "human_confirm": _BOOL,
                "browser": _BOOL,
            },
        ),
        "runtime": st.fixed_dictionaries(
            {"language": st.just("python")},
            optional={
                "python_version": st.sampled_from(["3.12", "3.11", ""]),
                "packages": st.lists(st.sampled_from(["a==1.0", "b"]), max_size=2),
            },
        ),
    },
    optional={
        "inputs": st.lists(_INPUT, max_size=3),
        "external_auth": st.lists(st.sampled_from(["gmail.read", "slack.send"]), max_size=2),
        "generated_by": st.sampled_from(["claude", ""]),
        "generated_at": st.just("2026-01-01T00:00:00Z"),
        "unknown": _VALUE,
    },
)
_PATHS = [
    ("name",),
    ("version",),
    ("description",),
    ("inputs",),
    ("outputs",),
    ("capabilities",),
    ("runtime",),
    ("external_auth",),
    ("generated_by",),
    ("generated_at",),
    ("inputs", 0),
    ("inputs", 0, "name"),
    ("inputs", 0, "type"),
    ("inputs", 0, "description"),
    ("inputs", 0, "required"),
    ("inputs", 0, "tainted_ok"),
    ("inputs", 0, "items"),
    ("inputs", 0, "items", "type"),
    ("outputs", "type"),
    ("outputs", "description"),
    ("capabilities", "network"),
    ("capabilities", "filesystem"),
    ("capabilities", "human_confirm"),
    ("capabilities", "browser"),
    ("runtime", "language"),
    ("runtime", "python_version"),
    ("runtime", "packages"),
    ("runtime", "packages", 0),
    ("external_auth", 0),
]
_CHANGE = st.tuples(st.sampled_from(_PATHS), st.one_of(st.sampled_from(_NEAR_MISSES), _VALUE))


def _changed(data: dict[str, Any], changes: list[tuple[tuple[Any, ...], Any]]) -> Any:
    for path, shared_value in changes:
        # The near misses are shared between examples: a copy, so that no change writes into
        # one (a later change could put a value inside itself, which YAML never yields: the
        # frontmatter's reader refuses an alias to an anchor still open).
        value = shared_value if shared_value is _REMOVED else copy.deepcopy(shared_value)
        holder: Any = data
        for key in path[:-1]:
            ok = isinstance(holder, dict) and key in holder
            ok = ok or (isinstance(holder, list) and isinstance(key, int) and key < len(holder))
            if not ok:
                break
            holder = holder[key]
        else:
            last = path[-1]
            if isinstance(holder, dict) and not isinstance(last, int):
                if value is _REMOVED:
                    holder.pop(last, None)
                else:
                    holder[last] = value
            elif isinstance(holder, list) and isinstance(last, int) and last < len(holder):
                if value is _REMOVED:
                    del holder[last]
                else:
                    holder[last] = value
    return data


@settings(max_examples=800, deadline=None)
@given(_VALID, st.lists(_CHANGE, max_size=3))
def test_generated_manifests_read_plainly_only_as_the_model_reads_them(
    data: dict[str, Any], changes: list[tuple[tuple[Any, ...], Any]]
) -> None:
    _assert_same_reading(_changed(data, changes))
