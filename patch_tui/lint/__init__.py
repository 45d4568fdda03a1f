"""Lint rules for Patch tools. Codes are a public interface: never renumber them.

engine (run rules, apply fixes) · registry (find the rules) · rule (a rule object) · context
(what a rule reads) · diagnostic (what it reports) · analysis/ (one pass over the body) ·
rules/ (the rules, by family) · docs (docs/rules.md).
"""

from __future__ import annotations

from patch_tui.lint.engine import (
    RULES,
    Diagnostic,
    Edit,
    Fix,
    LintContext,
    Rule,
    apply_edits,
    fix_text,
    iter_codes,
    lint_text,
    lint_toolfile,
    selected_rules,
)

__all__ = [
    "RULES",
    "Diagnostic",
    "Edit",
    "Fix",
    "LintContext",
    "Rule",
    "apply_edits",
    "fix_text",
    "iter_codes",
    "lint_text",
    "lint_toolfile",
    "selected_rules",
]
