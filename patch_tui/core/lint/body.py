"""One pass over the body's AST that collects every fact the body rules need."""

from __future__ import annotations

import ast
from dataclasses import dataclass


@dataclass
class BodyFacts:
    tree: ast.Module


def analyse(tree: ast.Module) -> BodyFacts:
    return BodyFacts(tree)
