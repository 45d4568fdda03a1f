"""The lint engine: run the registered rules over a file, and apply their safe fixes.

A rule (lint/rule.py) is an object bound to its stable code, with a check that receives a
`LintContext` (the parsed file, its raw manifest data and one shared analysis of the body) and
yields `Diagnostic`s. Rules live by family under lint/rules/ and are found by the registry.
Rules never raise on bad input: the engine turns a crash inside a rule into a PT000 diagnostic
so one buggy rule can never hide the others or produce a traceback.
"""

from __future__ import annotations

import traceback

from patch_tui.format import toolfile as tfmod
from patch_tui.format.toolfile import Span, ToolFile
from patch_tui.lint.context import LintContext, scalar_text
from patch_tui.lint.diagnostic import (
    SEVERITY_RANK,
    Diagnostic,
    Edit,
    Fix,
    Severity,
    apply_edits,
)
from patch_tui.lint.registry import RULES, iter_codes, selected_rules
from patch_tui.lint.rule import Rule

__all__ = [
    "RULES",
    "Diagnostic",
    "Edit",
    "Fix",
    "LintContext",
    "Rule",
    "Severity",
    "apply_edits",
    "fix_text",
    "iter_codes",
    "lint_text",
    "lint_toolfile",
    "scalar_text",
    "selected_rules",
]

# Not a rule of the registry: what the engine reports when a rule itself fails.
INTERNAL_ERROR = Rule(
    "PT000", "internal-error", family="engine", summary="a rule crashed on this file"
)


def lint_toolfile(tf: ToolFile, rules: list[Rule] | None = None) -> list[Diagnostic]:
    """All diagnostics for a parsed file, sorted by position then severity."""
    rules = rules if rules is not None else selected_rules()
    by_code = {r.code: r for r in rules}
    ctx = LintContext(tf)
    out: list[Diagnostic] = []
    for problem in tf.problems:
        reporter = by_code.get(problem.code)
        if reporter is not None:
            out.append(reporter.problem(problem, tf))
    manifest_ok = isinstance(tf.data, dict)
    for r in rules:
        if r.needs_manifest and not manifest_ok:
            continue
        if r.needs_body and ctx.body_tree is None:
            continue
        try:
            out.extend(r.func(ctx))
        except Exception:  # a bug in a rule must never hide the others
            last = traceback.format_exc().strip().splitlines()[-1]
            out.append(
                INTERNAL_ERROR.at(Span(1, 1, 1, 2), f"internal error in rule {r.code}: {last}")
            )
    if tf.path is not None:
        out = [d if d.path else _with_path(d, tf.path) for d in out]
    out.sort(key=lambda d: (d.span.line, d.span.column, SEVERITY_RANK[d.severity], d.code))
    return out


def _with_path(d: Diagnostic, path: str) -> Diagnostic:
    return Diagnostic(d.code, d.severity, d.message, d.span, d.fix, d.field, path)


def lint_text(
    text: str, path: str | None = None, rules: list[Rule] | None = None
) -> list[Diagnostic]:
    return lint_toolfile(tfmod.parse(text, path=path), rules)


def fix_text(
    text: str, rules: list[Rule] | None = None, *, max_rounds: int = 25
) -> tuple[str, int]:
    """Apply safe fixes until none are left (each round re-lints). Returns (text, fixes applied).

    One fix is applied per round when fixes overlap, and at most one fix to the frontmatter:
    two fixes that each add or rename a key of one mapping (PT004 renaming `human_confirn`,
    PT045 adding `human_confirm`) do not overlap as text, yet together would write the key
    twice. Every fix sees the text the previous one produced.
    """
    applied = 0
    for _ in range(max_rounds):
        tf = tfmod.parse(text)
        diags = lint_toolfile(tf, rules)
        fixes = [d.fix for d in diags if d.fix is not None and d.fix.safe]
        if not fixes:
            break
        # 1-based lines of the frontmatter, markers included.
        fm_lines = range(
            (tf.open_index or 0) + 1, (tf.close_index if tf.close_index is not None else -1) + 2
        )
        frontmatter_fixed = False
        chosen: list[Edit] = []
        taken: list[tuple[tuple[int, int], tuple[int, int]]] = []
        for fx in fixes:
            in_frontmatter = any(e.line in fm_lines or e.end_line in fm_lines for e in fx.edits)
            if in_frontmatter and frontmatter_fixed:
                continue
            ranges = [((e.line, e.column), (e.end_line, e.end_column)) for e in fx.edits]
            # Ranges that overlap or touch conflict: two fixes inserting at one point (each
            # adding `human_confirm:` to capabilities, say) would write the key twice. The
            # second waits for the next round, which sees the first one's text.
            if any(a <= d and c <= b for a, b in ranges for c, d in taken):
                continue
            taken.extend(ranges)
            chosen.extend(fx.edits)
            frontmatter_fixed = frontmatter_fixed or in_frontmatter
            applied += 1
        new = apply_edits(text, chosen)
        if new == text:
            break
        text = new
    return text, applied
