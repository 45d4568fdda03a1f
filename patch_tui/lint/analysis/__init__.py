"""One pass over a tool body's AST that collects every fact the body rules need.

`walker` walks the tree once; `facts` is what it finds; `tables` is what it looks for;
`annotations` reads annotations and literals as the manifest's JSON types.
"""

from __future__ import annotations

from patch_tui.lint.analysis.annotations import (
    TYPE_TO_ANNOTATION,
    annotation_items,
    annotation_types,
    literal_value,
    preferred_type,
    value_type,
    words,
)
from patch_tui.lint.analysis.facts import BodyFacts, FileUse, Guard, ImportUse, MainInfo, Param, Use
from patch_tui.lint.analysis.walker import analyse

__all__ = [
    "TYPE_TO_ANNOTATION",
    "BodyFacts",
    "FileUse",
    "Guard",
    "ImportUse",
    "MainInfo",
    "Param",
    "Use",
    "analyse",
    "annotation_items",
    "annotation_types",
    "literal_value",
    "preferred_type",
    "value_type",
    "words",
]
