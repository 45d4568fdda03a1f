"""PT030: the body is not valid Python."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from patch_tui.format.toolfile import Span
from patch_tui.lint.context import LintContext, python_lines
from patch_tui.lint.diagnostic import Diagnostic
from patch_tui.lint.rule import Rule
from patch_tui.lint.rules.body.helpers import body_start_span

PT030 = Rule(
    "PT030",
    "body-syntax-error",
    family="body",
    summary="the body is not valid Python",
    needs_manifest=False,
)


@PT030.check
def body_syntax_error(ctx: LintContext) -> Iterator[Diagnostic]:
    """The Python after the closing `# ---` does not parse.

    Why: the runtime cannot load the tool at all, and none of the body checks (PT031-PT046) can
    run until it parses, so a tool with this error may hide many others.

    Fix: correct the syntax at the reported line and column (the message is Python's own).
    """
    tf = ctx.tf
    if ctx.body_tree is not None or (tf.open_index is not None and tf.close_index is None):
        return
    # The engine keeps only the tree; the error is recomputed here, for broken files only.
    offset = tf.body_start_line - 1
    source = "\n" * offset + tf.body
    try:
        ast.parse(source)
    except SyntaxError as exc:
        last = max(len(tf.lines), 1)
        line = min(exc.lineno or tf.body_start_line, last)  # "unexpected EOF" is past the end
        col = max(exc.offset or 1, 1)
        end_line = min(exc.end_lineno or line, last)
        end_col = exc.end_offset if exc.end_offset and exc.end_offset > 0 else col + 1
        table = python_lines(source)  # Python's lines are not the file's after a lone \r
        if table is not None:
            start, end = table[min(line, len(table) - 1)], table[min(end_line, len(table) - 1)]
            line, col, end_line, end_col = start[0], col + start[2], end[0], end_col + end[2]
        if (end_line, end_col) <= (line, col):
            end_line, end_col = line, col + 1
        yield PT030.at(
            Span(line, col, end_line, end_col),
            f"the body is not valid Python ({exc.msg}): fix the syntax here; "
            "the other body checks run once it parses",
        )
    except (RecursionError, MemoryError):
        yield PT030.at(
            body_start_span(tf),
            "the body is nested too deeply for Python to parse it: flatten the expression",
        )
    except ValueError as exc:  # e.g. NUL characters in the source
        yield PT030.at(
            body_start_span(tf),
            f"the body is not valid Python ({exc}): remove the offending characters",
        )
