"""What a grant's patterns match: values as the tool will see them (approvals/grants.py says the
rule in words). Pure functions, no store."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from patch_tui.approvals.records import Pattern
from patch_tui.approvals.values import canonical_json

# What joins several values into one string: a glob matches a value holding one only if the
# glob holds it too.
SEPARATORS = (",", ";", "\n", "\r", "\t", " ", "\x00")


def arg_text(value: Any) -> str:
    """A value as a person reads it in a pattern: a string itself, anything else its JSON."""
    return value if isinstance(value, str) else canonical_json(value)


def literal_glob(text: str) -> str:
    """A glob matching exactly `text`: each metacharacter (`*`, `?`, `[`, `]`) in brackets.
    The TUI starts a grant from a call's exact values, so it is as narrow as it can be."""
    return "".join(f"[{c}]" if c in "*?[]" else c for c in text)


def glob_regex(glob: str) -> re.Pattern[str]:
    """The glob as a regular expression: `**` anything, `*` and `?` never `/`, classes."""
    out: list[str] = []
    i, n = 0, len(glob)
    while i < n:
        c = glob[i]
        if c == "*":
            if glob.startswith("**", i):
                out.append(".*")
                i += 2
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = i + 1
            if j < n and glob[j] == "!":
                j += 1
            if j < n and glob[j] == "]":
                j += 1
            while j < n and glob[j] != "]":
                j += 1
            if j >= n:
                out.append(re.escape(c))  # no closing bracket: a literal [
            else:
                body = glob[i + 1 : j]
                negate = body.startswith("!")
                if negate:
                    body = body[1:]
                body = "".join(f"\\{ch}" if ch in "\\^[&~|" else ch for ch in body)
                # A negated class never matches `/` either: it stands for one path character.
                out.append(f"[^/{body}]" if negate else f"[{body}]")
                i = j
        else:
            out.append(re.escape(c))
        i += 1
    return re.compile("".join(out), re.DOTALL)


def _absolute(path: str, workspace: str | os.PathLike[str] | None, *, real: bool) -> str:
    base = Path(workspace) if workspace is not None else Path.cwd()
    joined = os.path.join(os.path.abspath(base), os.path.expanduser(path))
    # `//x` is a POSIX path of its own; collapsed here, as the tool's open() would.
    joined = re.sub("/+", "/", joined)
    return os.path.realpath(joined) if real else os.path.normpath(joined)


_NOT_JSON = object()


def json_literal(glob: str) -> Any:
    """The non-string JSON value a glob spells (`3`, `true`, `null`, `[1,2]`, `{"a":1}`), else
    a marker meaning "a glob on text"."""
    try:
        value = json.loads(glob)
    except ValueError:
        return _NOT_JSON
    return _NOT_JSON if isinstance(value, str) else value


def value_matches(glob: str, value: Any, workspace: str | os.PathLike[str] | None = None) -> bool:
    """Whether one argument value means what the glob says (see the module)."""
    literal = json_literal(glob)
    if literal is not _NOT_JSON:
        # An exact JSON value: that value, or the very same text (a string input "3").
        if isinstance(value, str):
            return value == glob
        return canonical_json(value) == canonical_json(literal)
    if not isinstance(value, str):
        return False  # a number, list or object is never matched by a wildcard
    if "**" not in glob and any(sep in value and sep not in glob for sep in SEPARATORS):
        return False
    if "/" in glob:
        value = _absolute(value, workspace, real=True)
        glob = _absolute(glob, workspace, real=False)
    return glob_regex(glob).fullmatch(value) is not None


def patterns_match(
    patterns: tuple[Pattern, ...] | list[Pattern],
    args: dict[str, Any],
    workspace: str | os.PathLike[str] | None = None,
) -> bool:
    return all(p.key in args and value_matches(p.glob, args[p.key], workspace) for p in patterns)
