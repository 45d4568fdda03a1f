"""Lint rules for Patch tools. Codes are a public interface: never renumber them.

engine (run rules, apply fixes) · registry (find the rules) · rule (a rule object) · context
(what a rule reads) · diagnostic (what it reports) · analysis/ (one pass over the body) ·
rules/ (the rules, by family) · docs (docs/rules.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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


def __getattr__(name: str) -> Any:
    # The engine (and its rule registry) loads on first use, not with the package: the desk
    # lints only after its first frame (and imports nothing of lint/ before it).
    if name in __all__:
        from patch_tui.lint import engine

        return getattr(engine, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
