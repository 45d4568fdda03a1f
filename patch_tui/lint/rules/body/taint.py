"""PT046: inputs that carry outside content without `tainted_ok: true`."""

from __future__ import annotations

from collections.abc import Iterator

from patch_tui.lint.analysis import words
from patch_tui.lint.context import LintContext
from patch_tui.lint.diagnostic import Diagnostic
from patch_tui.lint.rule import Rule
from patch_tui.lint.rules.body.helpers import named_inputs, set_value

# Words in an input's name that say it carries content from outside (PT046).
TAINT_WORDS: frozenset[str] = frozenset(
    {
        "url",
        "urls",
        "uri",
        "link",
        "links",
        "href",
        "html",
        "text",
        "texts",
        "content",
        "contents",
        "body",
        "query",
        "message",
        "messages",
        "prompt",
        "email",
        "emails",
        "markdown",
        "document",
        "documents",
        "doc",
        "page",
        "comment",
        "comments",
        "post",
        "tweet",
        "snippet",
        "payload",
        "xml",
        "feed",
        "rss",
        "webpage",
        "website",
        "search",
        "subject",
        "note",
        "notes",
        "transcript",
        "article",
        "reply",
        "input",
    }
)


# ...unless the name's head noun (its last word) says it is something else: `message_id`,
# `input_path` and `text_format` are not content.
NOT_CONTENT_HEADS: frozenset[str] = frozenset(
    {
        "id",
        "ids",
        "path",
        "paths",
        "file",
        "files",
        "filename",
        "dir",
        "directory",
        "folder",
        "format",
        "type",
        "lang",
        "language",
        "encoding",
        "count",
        "limit",
        "size",
        "length",
        "mode",
        "key",
        "keys",
        "color",
        "style",
        "name",
        "names",
        "field",
        "fields",
        "column",
        "columns",
        "selector",
        "separator",
        "delimiter",
        "index",
        "number",
        "token",
    }
)


CONTENT_TYPES = ("string", "array", "object")


PT046 = Rule(
    "PT046",
    "tainted-input",
    family="body",
    summary="an input that carries outside content without `tainted_ok: true`",
    severity="warning",
    fix="sometimes",
)


@PT046.check
def tainted_input(ctx: LintContext) -> Iterator[Diagnostic]:
    """An input whose name says it carries outside content (url, html, text, content, body,
    query, message, email, ...) without `tainted_ok: true`.

    Why: the runtime blocks data that came from untrusted sources (web pages, emails, other
    tools' output) from flowing into inputs not marked `tainted_ok`, so the tool fails exactly
    when an agent uses it as intended. Marking it is a security decision: the code must treat
    the value as data, never as instructions, a command or a path to trust.

    Fix: after checking the code handles hostile values safely, set `tainted_ok: true` on the
    input (the quick fix, offered in the editor only); otherwise rename the input if it does
    not carry outside content.
    """
    for index, name, raw in named_inputs(ctx):
        if raw.get("tainted_ok") is True or raw.get("type", "string") not in CONTENT_TYPES:
            continue
        ws = words(name)
        hits = [w for w in ws if w in TAINT_WORDS]
        if not hits or ws[-1] in NOT_CONTENT_HEADS:
            continue
        yield PT046.diag(
            ctx,
            f"input `{name}` looks like it carries outside content ({hits[0]}), and the runtime "
            "blocks untrusted data from inputs without `tainted_ok: true`: set it once the code "
            "treats the value as data only",
            "inputs",
            index,
            "name",
            severity="warning",
            fix=set_value(
                ctx,
                f"Set `tainted_ok: true` on input `{name}`",
                ("inputs", index, "tainted_ok"),
                True,
                safe=False,
            ),
        )
