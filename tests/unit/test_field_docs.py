"""The form's field help is the field table's docs, read without importing pydantic; the
model's own `description`s are the reference."""

from __future__ import annotations

import pytest

from patch_tui.format import fields, manifest

MODELS = {
    "": manifest.Manifest,
    "inputs": manifest.Input,
    "outputs": manifest.Outputs,
    "capabilities": manifest.Capabilities,
    "runtime": manifest.Runtime,
    "items": manifest.Items,
}


def _reference(model, leaf: str) -> str:
    info = model.model_fields.get(leaf)
    return " ".join((info.description or "").split()) if info else ""


@pytest.mark.parametrize("prefix", sorted(MODELS))
def test_every_field_doc_is_the_models(prefix: str) -> None:
    model = MODELS[prefix]
    for leaf in [*model.model_fields, "no_such_field", "model_config"]:
        path = f"{prefix}.{leaf}" if prefix else leaf
        assert fields.field_doc(path) == _reference(model, leaf), path
    assert all(_reference(model, leaf) for leaf in model.model_fields), "every field has a doc"


def test_paths_the_form_uses() -> None:
    assert fields.field_doc("outputs.items.type") == _reference(manifest.Items, "type")
    assert fields.field_doc("inputs.items") == _reference(manifest.Input, "items")
    assert fields.field_doc("nowhere.name") == ""
    assert fields.field_doc("") == ""
    assert manifest.field_doc is fields.field_doc


def test_docs_come_from_the_field_table_without_pydantic() -> None:
    """The help is the table's (one home for each doc): no second reader of manifest.py's source
    to keep in step. (Was: the source reader and the model reader agree.)"""
    for f in fields.FIELDS:
        dotted = f.path.replace("[]", "")
        assert fields.field_doc(dotted) == f.doc, f.path


def test_bump_version() -> None:
    assert fields.bump_version("1.2.3") == "1.3.0"
    assert fields.bump_version("1.2.3", "major") == "2.0.0"
    assert fields.bump_version("1.2.3", "patch") == "1.2.4"
    assert fields.bump_version("nope") == "1.0.0"
    assert manifest.bump_version is fields.bump_version
