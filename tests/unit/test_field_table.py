"""The field table (format/fields.py) is the one description of the manifest's fields: the
pydantic model is held to it, and a field added to it reaches the model check, lint's type
table and the help without another edit (the form's side is in test_form_from_table.py)."""

from __future__ import annotations

from typing import Any

import pytest

from patch_tui.format import fields, manifest


def test_model_and_table_agree() -> None:
    assert manifest.table_disagreements() == []


def _with(monkeypatch: pytest.MonkeyPatch, *changed: fields.FieldSpec, drop: str = "") -> None:
    table = [f for f in fields.FIELDS if f.path != drop]
    for new in changed:
        at = next((i for i, f in enumerate(table) if f.path == new.path), None)
        if at is None:
            table.append(new)
        else:
            table[at] = new
    monkeypatch.setattr(fields, "FIELDS", tuple(table))


CAMERA = fields.FieldSpec(
    "capabilities",
    "camera",
    "boolean",
    default=False,
    widget="switch",
    doc="The tool takes pictures.",
)


def test_a_field_added_to_the_table_only_fails_the_model_check(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _with(monkeypatch, CAMERA)
    assert manifest.table_disagreements() == [
        "capabilities.camera: in the table, not in Capabilities"
    ]
    assert fields.field_doc("capabilities.camera") == "The tool takes pictures."


def test_a_field_dropped_from_the_table_fails_the_model_check(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _with(monkeypatch, drop="inputs[].tainted_ok")
    assert manifest.table_disagreements() == ["Input.tainted_ok: in the model, not in the table"]


@pytest.mark.parametrize(
    ("path", "change", "says"),
    [
        ("capabilities.filesystem", {"choices": ("none", "read-only")}, "the model says"),
        ("capabilities.filesystem", {"closed": False, "type": "string"}, "closed=False"),
        ("inputs[].required", {"default": False}, "default True in the model"),
        ("inputs[].required", {"type": "string"}, "the model says"),
        ("outputs.description", {"nullable": False}, "the model says"),
        ("name", {"default": "tool"}, "default NO_DEFAULT in the model"),
        ("runtime.packages", {"of": "inputs[]"}, "the model says"),
        ("version", {"doc": "Another text."}, "the model's doc is not the table's"),
    ],
)
def test_each_kind_of_disagreement_is_found(
    monkeypatch: pytest.MonkeyPatch, path: str, change: dict[str, Any], says: str
) -> None:
    _with(monkeypatch, fields.spec(path)._replace(**change))
    problems = manifest.table_disagreements()
    assert len(problems) >= 1 and all(p.startswith(path) for p in problems), problems
    assert any(says in p for p in problems), problems


def test_the_derived_names_match_the_table() -> None:
    assert fields.REQUIRED_FIELDS == (
        "name",
        "version",
        "description",
        "inputs",
        "outputs",
        "capabilities",
        "runtime",
    )
    assert fields.FIELD_ORDER["capabilities"] == (
        "network",
        "filesystem",
        "human_confirm",
        "browser",
    )
    assert fields.ALWAYS_WRITTEN["inputs[]"] == ("name", "type", "description")
    assert fields.YAML_KINDS[""]["inputs"] == "list"
    assert fields.YAML_KINDS["inputs[]"]["items"] == "mapping"
    assert fields.YAML_KINDS["outputs"]["items"] == "any"


def test_the_table_needs_no_pydantic() -> None:
    import subprocess
    import sys

    code = "import sys, patch_tui.format.fields as f; f.field_doc('name'); print('pydantic' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
