"""A lint rule as one object: its code, name, family, severity, fix availability and docs.

Each code is bound once, where its rule is defined (`PT012 = Rule("PT012", ...)`); the rule's
check function reports through that object (`PT012.diag(ctx, ...)`), and docs/rules.md and
`patch-tui rules` read the same object. The check's docstring is the rule's documentation: the
first paragraphs say what it catches, then a "Why:" paragraph and a "Fix:" paragraph.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Literal

from patch_tui.format.toolfile import Span
from patch_tui.lint.diagnostic import Diagnostic, Fix, Severity

if TYPE_CHECKING:
    from patch_tui.format.toolfile import ParseProblem, ToolFile
    from patch_tui.lint.context import LintContext

# Like ruff's FixAvailability: whether a diagnostic of this rule can come with a quick fix.
FixAvailability = Literal["none", "sometimes", "always"]

RuleFunc = Callable[["LintContext"], Iterable[Diagnostic]]
ProblemFix = Callable[["ToolFile"], "Fix | None"]


def _reports_nothing(ctx: LintContext) -> Iterator[Diagnostic]:
    return iter(())


class Rule:
    """One rule. `severity` is what its diagnostics carry unless one says otherwise; a rule that
    reports at more than one severity lists them all, the usual one first."""

    def __init__(
        self,
        code: str,
        name: str,
        *,
        family: str,
        summary: str,
        severity: Severity | tuple[Severity, ...] = "error",
        fix: FixAvailability = "none",
        needs_manifest: bool = True,  # skip when the frontmatter could not be read
        needs_body: bool = False,  # skip when the body is not valid Python
        doc: str | None = None,  # for rules without a check of their own (the parser's)
    ) -> None:
        self.code = str(code)
        self.name = name
        self.family = family
        self.summary = summary
        self.severities: tuple[Severity, ...] = (
            (severity,) if isinstance(severity, str) else tuple(severity)
        )
        self.severity: Severity = self.severities[0]
        self.fix = fix
        self.needs_manifest = needs_manifest
        self.needs_body = needs_body
        self.func: RuleFunc = _reports_nothing
        self._has_check = False
        if doc is not None:
            # A rule without a check of its own still has a function carrying its docs.
            def reports_nothing(ctx: LintContext) -> Iterator[Diagnostic]:
                return iter(())

            reports_nothing.__doc__ = doc
            self.func = reports_nothing
        # The fix offered for a problem the parser reports under this code (PT001's starter).
        self.problem_fix: ProblemFix | None = None

    def __repr__(self) -> str:
        return f"Rule({self.code!r}, {self.name!r})"

    # -- defining -----------------------------------------------------------------------------

    def check(self, func: RuleFunc) -> RuleFunc:
        """Decorator: the function that checks a file for this rule."""
        if self._has_check:
            raise ValueError(f"rule {self.code} has two checks")
        self.func = func
        self._has_check = True
        return func

    def fixes_problems(self, func: ProblemFix) -> ProblemFix:
        """Decorator: the quick fix for the parser's problems reported under this code."""
        self.problem_fix = func
        return func

    # -- documentation ------------------------------------------------------------------------

    @property
    def doc(self) -> str:
        return inspect.cleandoc(self.func.__doc__ or "")

    @property
    def severity_label(self) -> str:
        """ "error", or "error / warning" for a rule that reports at both."""
        return " / ".join(self.severities)

    def sections(self) -> tuple[str, str, str]:
        """(what it catches, why, fix) from the rule's docs."""
        what: list[str] = []
        why: list[str] = []
        fix: list[str] = []
        current = what
        for para in self.doc.split("\n\n"):
            text = " ".join(para.split())
            if text.startswith("Why:"):
                current = why
                text = text[4:].strip()
            elif text.startswith("Fix:"):
                current = fix
                text = text[4:].strip()
            if text:
                current.append(text[0].upper() + text[1:])
        return (" ".join(what) or self.summary, "\n\n".join(why), "\n\n".join(fix))

    # -- reporting ----------------------------------------------------------------------------

    def diag(
        self,
        ctx: LintContext,
        message: str,
        *path: str | int,
        severity: Severity | None = None,
        key: bool = False,
        fix: Fix | None = None,
        span: Span | None = None,
    ) -> Diagnostic:
        """A diagnostic pointing at a manifest field (the frontmatter when no path is given)."""
        return Diagnostic(
            self.code,
            self._severity(severity, fix),
            message,
            span if span is not None else ctx.span(*path, key=key),
            fix,
            tuple(path) if path else None,
        )

    def at(
        self,
        span: Span,
        message: str,
        *,
        severity: Severity | None = None,
        fix: Fix | None = None,
        field: tuple[str | int, ...] | None = None,
    ) -> Diagnostic:
        """A diagnostic at a span of the file; `field` names the manifest field it concerns,
        so the form can focus it."""
        return Diagnostic(self.code, self._severity(severity, fix), message, span, fix, field)

    def _severity(self, severity: Severity | None, fix: Fix | None) -> Severity:
        # The declaration is what docs/rules.md and `patch-tui rules` show: a rule must keep to
        # it (the engine turns this error into a PT000 diagnostic, which the tests catch).
        if severity is not None and severity not in self.severities:
            raise ValueError(f"{self.code} reports {severity} but declares {self.severity_label}")
        if fix is not None and self.fix == "none":
            raise ValueError(f"{self.code} offers a fix but declares none")
        return severity or self.severity

    def problem(self, problem: ParseProblem, tf: ToolFile) -> Diagnostic:
        """A problem the parser found, reported under this rule."""
        fix = self.problem_fix(tf) if self.problem_fix is not None else None
        return Diagnostic(self.code, "error", problem.message, problem.span, fix=fix)
