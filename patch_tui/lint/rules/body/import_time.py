"""PT037, PT049: work done, and module dunders changed, when the file is imported."""

from __future__ import annotations

from collections.abc import Iterator

from patch_tui.lint.context import LintContext
from patch_tui.lint.diagnostic import Diagnostic
from patch_tui.lint.rule import Rule
from patch_tui.lint.rules.body.helpers import body_diag, facts_of

PT037 = Rule(
    "PT037",
    "import-time-work",
    family="body",
    summary="work at import time: a top-level statement other than imports, defs, classes, constants, the docstring and the main guard",
    needs_manifest=False,
    needs_body=True,
)


@PT037.check
def import_time_work(ctx: LintContext) -> Iterator[Diagnostic]:
    """A top-level statement that does work when the file is imported.

    Why: tools must have no side effects at import time: the runtime and patch-tui load tools to
    inspect them, and code at the top level (a request, a file write, a loop) would run then,
    outside any approval or sandbox decision.

    Fix: move the statement into main() (or a function main() calls). Imports, `def`, `class`,
    constant assignments (literals, `re.compile(...)` and other pure constructors), the
    docstring and the `if __name__ == "__main__":` block may stay at the top level.
    """
    for stmt in facts_of(ctx).import_time_work:
        code = ctx.tf.line_text(stmt.lineno).strip()
        if len(code) > 50:
            code = code[:47] + "..."
        yield body_diag(
            ctx,
            PT037,
            f"`{code}` runs when the file is imported: move it into main()",
            stmt,
            first_line=True,
        )


PT049 = Rule(
    "PT049",
    "module-dunder-assignment",
    family="body",
    summary="a module dunder like `__name__` assigned at import time",
    needs_manifest=False,
    needs_body=True,
    severity="warning",
)


@PT049.check
def module_dunder_assignment(ctx: LintContext) -> Iterator[Diagnostic]:
    """`__name__`, `__builtins__`, `__import__` (or another module dunder) assigned at import
    time (warning).

    Why: the body rules assume Python's own meaning of these names: `__name__ = "__main__"`
    makes the `if __name__ == "__main__":` entry point run on import, and replacing
    `__builtins__` or `__import__` changes what every name and import means. Nothing the rules
    say about the entry point, imports or calls can be trusted after that.

    Fix: remove the assignment. A tool never needs to set these names.
    """
    for use in facts_of(ctx).dunder_assignments:
        yield body_diag(
            ctx,
            PT049,
            f"`{use.what}` is assigned at import time: the entry point and import checks assume "
            "Python's own meaning of it and cannot be trusted; remove the assignment",
            use.node,
            severity="warning",
            first_line=True,
        )
