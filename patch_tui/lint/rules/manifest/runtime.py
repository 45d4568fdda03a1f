"""PT018, PT019, PT023: the runtime block (language, pinned packages, python_version)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from patch_tui.format.fields import (
    PACKAGE_RE,
    PYTHON_VERSION_RE,
)
from patch_tui.format.yamlio import Path
from patch_tui.lint.context import LintContext
from patch_tui.lint.diagnostic import Diagnostic, Fix
from patch_tui.lint.rule import Rule
from patch_tui.lint.rules.manifest.helpers import is_plain, quote, quote_fix, raw_of, show

PT018 = Rule(
    "PT018",
    "bad-language",
    family="manifest",
    summary="runtime.language is not python",
    fix="sometimes",
)


@PT018.check
def bad_language(ctx: LintContext) -> Iterator[Diagnostic]:
    """`runtime.language` is not `python`.

    Why: the Patch runtime only runs Python tools; any other value makes it refuse the tool.

    Fix: write `language: python` (lowercase).
    """
    value = ctx.get("runtime", "language")
    if isinstance(value, str) and value != "python":
        fix = None
        if value.strip().lower() in ("python", "python3", "py", "cpython"):
            fix = Fix("use `python`", (ctx.node_edit(("runtime", "language"), "python"),))
        yield PT018.diag(
            ctx,
            f"runtime.language `{show(value)}` is not supported: write `language: python`",
            "runtime",
            "language",
            fix=fix,
        )


PT019 = Rule(
    "PT019",
    "unpinned-package",
    family="manifest",
    summary="a package is not pinned as name==version",
)


@PT019.check
def unpinned_package(ctx: LintContext) -> Iterator[Diagnostic]:
    """A package in `runtime.packages` is not pinned as `name==x.y.z`.

    Why: an unpinned package installs whatever version is newest when the tool runs, so the same
    tool can behave differently tomorrow, or pull in a compromised release. The runtime only
    accepts `^[a-zA-Z0-9._-]+==\\d+(\\.\\d+){0,2}$`.

    Fix: pin the exact version you tested, e.g. `requests==2.32.3` (no ranges, extras or URLs).
    """
    packages = ctx.get("runtime", "packages")
    if not isinstance(packages, list):
        return
    for i, pkg in enumerate(packages):
        if not isinstance(pkg, str) or PACKAGE_RE.match(pkg):
            continue
        name = re.split(r"[\s\[<>=!~;@]", pkg.strip(), maxsplit=1)[0] or "package"
        yield PT019.diag(
            ctx,
            f"package `{show(pkg)}` is not pinned: write `{show(name)}==x.y.z` with the exact version you tested",
            "runtime",
            "packages",
            i,
        )


PT023 = Rule(
    "PT023",
    "bad-python-version",
    family="manifest",
    summary='python_version is not like "3.12"',
    fix="sometimes",
)


@PT023.check
def bad_python_version(ctx: LintContext) -> Iterator[Diagnostic]:
    """`runtime.python_version` is not a quoted string like `"3.12"`.

    Why: unquoted, `3.12` is the number 3.12 to the runtime's YAML reader, and `3.10` becomes
    `3.1`: the tool asks for a Python that does not exist. The runtime wants major.minor only.

    Fix: quote it: `python_version: "3.12"` (the quick fix keeps the digits exactly as you wrote
    them).
    """
    path: Path = ("runtime", "python_version")
    if not isinstance(ctx.get("runtime"), dict) or "python_version" not in ctx.get("runtime"):
        return
    value = ctx.get(*path)
    raw = raw_of(ctx, path)
    if (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and is_plain(ctx, path)
        and raw
    ):
        bad = "" if PYTHON_VERSION_RE.match(raw) else " (and use major.minor, like 3.12)"
        lost = f", which is {value}" if str(value) != raw else ""
        yield PT023.diag(
            ctx,
            f"python_version {raw} is read as a number{lost}: quote it: {quote(raw)}{bad}",
            *path,
            fix=quote_fix(ctx, path) if not bad else None,
        )
    elif isinstance(value, str):
        if not PYTHON_VERSION_RE.match(value):
            m = re.match(r"^(?:python|py)?\s*(3\.\d{1,2})(?:\.\d+)?$", value.strip(), re.I)
            fix = None
            if m and path in ctx.tf.nodes:
                fix = Fix(
                    f'write "{m.group(1)}"', (ctx.node_edit(path, quote(m.group(1))),), safe=False
                )
            yield PT023.diag(
                ctx,
                f'python_version `{show(value)}` is not major.minor: write it like "3.12"',
                *path,
                fix=fix,
            )
    else:
        yield PT023.diag(ctx, 'python_version must be a quoted string like "3.12"', *path)
