"""PT031, PT036, PT047: main() and the `__main__` entry point the runtime calls."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from patch_tui.format import toolfile as tfmod
from patch_tui.format.toolfile import Span
from patch_tui.lint.analysis import BodyFacts
from patch_tui.lint.context import LintContext
from patch_tui.lint.diagnostic import Diagnostic, Edit, Fix
from patch_tui.lint.rule import Rule
from patch_tui.lint.rules.body.helpers import (
    body_diag,
    body_start_span,
    facts_of,
    node_span,
    not_a_tool,
)

GUARD_TEXT = (
    'if __name__ == "__main__":',
    "    args = json.loads(sys.stdin.read())",
    "    print(json.dumps(main(**args)))",
)


PT031 = Rule(
    "PT031",
    "missing-main",
    family="body",
    summary="no top-level `def main(...)`",
    needs_manifest=False,
    needs_body=True,
)


@PT031.check
def missing_main(ctx: LintContext) -> Iterator[Diagnostic]:
    """The body has no top-level, plain `def main(...)`.

    Why: the runtime calls `main(**args)` with the inputs as keyword arguments. A missing main,
    a main nested in a class or function, or an `async def main` (which returns a coroutine that
    cannot be printed as JSON) means every call fails.

    Fix: define `def main(...)` at the top level of the body, with one parameter per input, and
    return a JSON-serializable value. Run async code inside it with `asyncio.run(...)`.
    """
    if not_a_tool(ctx):
        return
    facts = facts_of(ctx)
    main = facts.main
    if main is not None and main.is_async:
        yield body_diag(
            ctx,
            PT031,
            "main() is `async def`, but the runtime calls it as a plain function: make it `def main(...)` "
            "and run the coroutine inside with `asyncio.run(...)`",
            main.node,
            first_line=True,
        )
        return
    if main is not None:
        return
    if facts.main_candidates:
        yield body_diag(
            ctx,
            PT031,
            "`main` is not a top-level function: define `def main(...)` at the top level of the body",
            facts.main_candidates[0],
            first_line=True,
        )
        return
    tree = facts.tree
    if tree.body:
        span = node_span(ctx, tree.body[0], first_line=True)
    else:
        line = max(ctx.tf.body_start_line - 1, 1)
        span = Span.line_span(line, ctx.tf.line_text(line))
    yield PT031.at(
        span,
        "no top-level `def main(...)`: add one with a parameter per input; the runtime calls main(**args)",
    )


def _guard_fix(ctx: LintContext, facts: BodyFacts) -> Fix | None:
    """Append the standard entry point, importing json and sys if the body does not."""
    tf = ctx.tf
    nl = tf.newline
    edits: list[Edit] = []
    missing = [m for m in ("json", "sys") if facts.aliases.get(m) != m]
    if missing:
        body = facts.tree.body
        imports = [s for s in body if isinstance(s, ast.Import | ast.ImportFrom)]
        if imports:
            at = (imports[-1].end_lineno or imports[-1].lineno) + 1
        elif body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            at = (body[0].end_lineno or body[0].lineno) + 1
        else:
            at = tf.body_start_line
        edits.append(Edit(at, 1, at, 1, "".join(f"import {m}{nl}" for m in missing)))
    # Replace the trailing newlines with exactly two blank lines, then the guard.
    text = tf.text
    stripped = text.rstrip("\r\n")
    head = tfmod._split_lines(stripped)
    line, col = (len(head), len(head[-1]) + 1) if head else (1, 1)
    lead = nl * 3 if stripped else ""
    end = len(tf.lines) + 1
    edits.append(Edit(line, col, end, 1, lead + nl.join(GUARD_TEXT) + nl))
    return Fix('Add the `if __name__ == "__main__":` entry point', tuple(edits), True)


PT036 = Rule(
    "PT036",
    "missing-main-guard",
    family="body",
    summary='no `if __name__ == "__main__":` block that reads JSON args from stdin and prints json.dumps(main(**args))',
    needs_manifest=False,
    needs_body=True,
    fix="sometimes",
)


@PT036.check
def missing_main_guard(ctx: LintContext) -> Iterator[Diagnostic]:
    """The body has no `if __name__ == "__main__":` entry point that speaks the runtime's protocol.

    Why: the runtime runs the file as a script, writes the arguments as one JSON object to
    stdin and reads the result as JSON from the last line of stdout. Without the guard nothing
    runs; without the JSON read or print the call cannot get its arguments or return a result.

    Fix: end the file with

        if __name__ == "__main__":
            args = json.loads(sys.stdin.read())
            print(json.dumps(main(**args)))

    (the quick fix adds it, with `import json` / `import sys` when missing).
    """
    if not_a_tool(ctx):
        return
    facts = facts_of(ctx)
    guard = facts.guard
    if guard is None:
        fix = _guard_fix(ctx, facts) if facts.main is not None else None
        last = facts.tree.body[-1] if facts.tree.body else None
        span = (
            node_span(ctx, last, first_line=True) if last is not None else body_start_span(ctx.tf)
        )
        yield PT036.at(
            span,
            'no `if __name__ == "__main__":` entry point: add one that does '
            "`args = json.loads(sys.stdin.read())` and `print(json.dumps(main(**args)))`",
            fix=fix,
        )
        return
    if guard.ok:
        return
    missing = []
    if not guard.reads_json_stdin:
        missing.append("read the args as JSON from stdin (`args = json.loads(sys.stdin.read())`)")
    if not guard.calls_main_with_kwargs:
        missing.append("call `main(**args)`")
    if not guard.prints_json_result:
        missing.append("print the result as JSON (`print(json.dumps(result))`)")
    yield body_diag(
        ctx,
        PT036,
        "the `__main__` block must " + ", ".join(missing),
        guard.node,
        first_line=True,
    )


def _is_stub(body: list[ast.stmt]) -> bool:
    """Only a docstring, `pass`, `...`, plain assignments, and a final
    `raise NotImplementedError` (what `patch-tui import` writes)."""

    def trivial(stmt: ast.stmt) -> bool:
        return isinstance(stmt, ast.Pass) or (
            isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
        )

    if all(trivial(s) for s in body):
        return True
    last = body[-1]
    if not isinstance(last, ast.Raise) or last.exc is None:
        return False
    exc = last.exc.func if isinstance(last.exc, ast.Call) else last.exc
    if not (isinstance(exc, ast.Name) and exc.id == "NotImplementedError"):
        return False
    return all(trivial(s) or isinstance(s, ast.Assign) for s in body[:-1])


PT047 = Rule(
    "PT047",
    "stub-main",
    family="body",
    summary="main() is a stub that still has to be written",
    needs_manifest=False,
    needs_body=True,
    severity="info",
)


@PT047.check
def stub_main(ctx: LintContext) -> Iterator[Diagnostic]:
    """main() only raises NotImplementedError (or is just `pass` / `...`): the tool is a stub,
    like the ones `patch-tui import` writes from another format's definition (info).

    Why: the manifest may be complete and correct, but every call fails until main() does the
    work. This is a reminder, not a defect.

    Fix: write main()'s body so it returns the declared output, then drop the stub comment.
    """
    main = facts_of(ctx).main
    if main is not None and _is_stub(list(main.node.body)):
        yield body_diag(
            ctx,
            PT047,
            "main() is a stub: write its body (it returns the declared output as JSON)",
            main.node,
            severity="info",
            first_line=True,
        )
