"""The manifest as a run reads it, without pydantic (issue 27: `patch-tui run` within 2x of
`python3 tool.py`; importing pydantic and building the model was about a third of a run).

    plain_manifest(data) -> PlainManifest | None

A `PlainManifest` has the pydantic model's fields and the few helpers a run uses (`input()`,
`Input.has_default`, `Outputs.item_type`); nothing else, and it cannot be changed (named tuples:
a tenth of the import time of frozen dataclasses). It is made only when the model is certain to
accept the same data and read it the same way:

- the Patch runtime's own schema accepts it (`runtime_format.validate`, the port of its zod
  schema, which a run checks anyway): every field has the model's type, each enum one of the
  model's values, defaults filled in as the model fills them, unknown keys dropped;
- the data is plain YAML data (dicts with string keys, lists, strings that are valid Unicode,
  numbers, booleans, null): nothing pydantic's strict mode could read otherwise;
- `name` and `version` match the model's patterns over the whole string (ASCII digits).

Anything else returns None, and the caller takes the model (`ToolFile.manifest`): its answer and
its error message, exactly as before. tests/unit/test_plain_manifest.py holds the two equal,
field by field (from the field table), over every sample tool and generated manifests.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, NamedTuple, TypeAlias

from patch_tui.format import runtime_format
from patch_tui.format.fields import NAME_RE

if TYPE_CHECKING:
    from patch_tui.format.manifest import Manifest

# The model's version pattern, digits in ASCII only (a Unicode digit goes to the model).
_VERSION = re.compile(r"[0-9]+\.[0-9]+\.[0-9]+")


class Items(NamedTuple):
    type: str


class Input(NamedTuple):
    name: str
    type: str
    description: str
    required: bool
    default: Any
    tainted_ok: bool
    items: Items | None
    has_default: bool  # the model's `"default" in model_fields_set`: the key was written


class Outputs(NamedTuple):
    type: str
    description: str | None
    items: Any

    @property
    def item_type(self) -> str | None:
        return item_type(self.items)


class Capabilities(NamedTuple):
    network: bool
    filesystem: str
    human_confirm: bool
    browser: bool


class Runtime(NamedTuple):
    language: str
    python_version: str
    packages: list[str]


class PlainManifest(NamedTuple):
    name: str
    version: str
    description: str
    inputs: list[Input]
    outputs: Outputs
    capabilities: Capabilities
    runtime: Runtime
    external_auth: list[str]
    generated_by: str | None
    generated_at: str | None

    def input(self, name: str) -> Input | None:
        return next((i for i in self.inputs if i.name == name), None)


# What the run path takes: the model, or the plain reading of the same data.
RunManifest: TypeAlias = "Manifest | PlainManifest"


def item_type(items: Any) -> str | None:
    """The element type `outputs.items` names (`object` or `{type: object}`), if it names one."""
    if isinstance(items, str):
        return items
    if isinstance(items, dict) and isinstance(items.get("type"), str):
        return items["type"]
    type_ = getattr(items, "type", None)  # the model's Items
    return type_ if isinstance(type_, str) else None


def _plain(value: Any) -> bool:
    """Plain YAML data, as pydantic's strict mode reads it unchanged (exact types; strings that
    encode, since pydantic refuses lone surrogates)."""
    kind = type(value)
    if kind is str:
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return False
        return True
    if kind is dict:
        return all(type(k) is str and _plain(k) and _plain(v) for k, v in value.items())
    if kind is list:
        return all(_plain(v) for v in value)
    return value is None or kind in (bool, int, float)


def plain_manifest(data: Any) -> PlainManifest | None:
    """The manifest read without pydantic, or None: then only the model can say (see above)."""
    if type(data) is not dict or not _plain(data):
        return None
    valid, _issues = runtime_format.validate(data)
    if valid is None:
        return None
    if not NAME_RE.fullmatch(valid["name"]) or not _VERSION.fullmatch(valid["version"]):
        return None
    out = valid["outputs"]
    caps = valid["capabilities"]
    rt = valid["runtime"]
    return PlainManifest(
        name=valid["name"],
        version=valid["version"],
        description=valid["description"],
        inputs=[
            Input(
                name=i["name"],
                type=i["type"],
                description=i["description"],
                required=i["required"],
                default=i.get("default"),
                tainted_ok=i["tainted_ok"],
                items=Items(i["items"]["type"]) if "items" in i else None,
                has_default="default" in i,
            )
            for i in valid["inputs"]
        ],
        outputs=Outputs(out["type"], out.get("description"), out.get("items")),
        capabilities=Capabilities(
            caps["network"], caps["filesystem"], caps["human_confirm"], caps["browser"]
        ),
        runtime=Runtime(rt["language"], rt["python_version"], list(rt["packages"])),
        external_auth=list(valid["external_auth"]),
        generated_by=valid.get("generated_by"),
        generated_at=valid.get("generated_at"),
    )
