"""Lint rules for Patch tools. Codes are a public interface: never renumber them."""

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
    rule,
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
    "rule",
    "selected_rules",
]
