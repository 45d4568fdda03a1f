"""PT011-PT012: the tool's name and version."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from patch_tui.format.fields import (
    NAME_RE,
    VERSION_RE,
)
from patch_tui.format.yamlio import Path
from patch_tui.lint.context import LintContext
from patch_tui.lint.diagnostic import Diagnostic, Fix
from patch_tui.lint.rule import Rule
from patch_tui.lint.rules.manifest.helpers import inputs_of, show

PT011 = Rule(
    "PT011",
    "name-not-snake-case",
    family="manifest",
    summary="name is not snake_case",
    fix="sometimes",
)


@PT011.check
def name_not_snake_case(ctx: LintContext) -> Iterator[Diagnostic]:
    """The tool's name (or an input's name) is not snake_case `^[a-z][a-z0-9_]*$`.

    Why: the tool name is its identity in the registry and the function name an AI agent calls;
    input names are Python parameter names of `main()`. Both must be plain identifiers.

    Fix: use lowercase letters, digits and `_`, starting with a letter: `Fetch-URL` becomes
    `fetch_url`.
    """
    targets: list[tuple[Path, Any, str]] = [(("name",), ctx.get("name"), "name")]
    targets += [(("inputs", i, "name"), inp.get("name"), "input name") for i, inp in inputs_of(ctx)]
    for path, name, what in targets:
        if isinstance(name, str) and name and not NAME_RE.match(name):
            suggestion = re.sub(r"[^a-z0-9_]+", "_", name.strip().lower()).strip("_")
            suggestion = re.sub(r"_+", "_", suggestion)
            if suggestion and not suggestion[0].isalpha():
                suggestion = "t_" + suggestion
            good = bool(suggestion) and NAME_RE.match(suggestion) is not None
            hint = f", e.g. `{suggestion}`" if good else ""
            fix = None
            if good and path == ("name",) and path in ctx.tf.nodes:
                # Renaming a tool changes its identity in the registry: offered, never automatic.
                fix = Fix(
                    f"rename to `{suggestion}`", (ctx.node_edit(path, suggestion),), safe=False
                )
            yield PT011.diag(
                ctx,
                f"{what} `{show(name)}` is not snake_case: use lowercase letters, digits and `_`, "
                f"starting with a letter{hint}",
                *path,
                fix=fix,
            )
        elif isinstance(name, str) and not name and path == ("name",):
            yield PT011.diag(ctx, "name is empty: give the tool a snake_case name", *path)


PT012 = Rule(
    "PT012",
    "version-not-semver",
    family="manifest",
    summary="version is not strict x.y.z",
    fix="sometimes",
)


@PT012.check
def version_not_semver(ctx: LintContext) -> Iterator[Diagnostic]:
    """The version is not strict semver `x.y.z`.

    Why: the registry never overwrites a published version: every change gets a new one, and
    versions are compared as three numbers. `1.0`, `v1.0.0` or `1.0.0-beta` cannot be compared.

    Fix: write three dot-separated numbers without leading zeros, e.g. `version: 1.0.0`.
    """
    version = ctx.get("version")
    if isinstance(version, str) and not VERSION_RE.match(version):
        parts = re.findall(r"\d+", version)
        hint = ""
        fix = None
        if 1 <= len(parts) <= 3:
            guess = ".".join(str(int(p)) for p in (parts + ["0", "0"])[:3])
            hint = f" (e.g. {guess})"
            # "1.0" and "v1.2.3" only lack parts or carry a prefix: the same version.
            same = re.fullmatch(r"[vV]?\d+(\.\d+){0,2}", version.strip()) is not None
            fix = ctx.set_value_fix(f"write {guess}", ("version",), guess, safe=same)
        yield PT012.diag(
            ctx,
            f"version `{show(version)}` is not strict semver: write it as x.y.z{hint or ', e.g. 1.0.0'}",
            "version",
            fix=fix,
        )
