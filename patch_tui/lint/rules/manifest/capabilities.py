"""PT017, PT024: the capabilities block (filesystem mode, browser without network)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from patch_tui.format.fields import spec
from patch_tui.lint.context import LintContext
from patch_tui.lint.diagnostic import Diagnostic, Fix
from patch_tui.lint.rule import Rule
from patch_tui.lint.rules.manifest.helpers import did_you_mean, show, suggest

_MODES = spec("capabilities.filesystem").choices  # from the field table

PT017 = Rule(
    "PT017",
    "bad-filesystem",
    family="manifest",
    summary="filesystem is not none / read-only / read-write",
    fix="sometimes",
)


@PT017.check
def bad_filesystem(ctx: LintContext) -> Iterator[Diagnostic]:
    """`capabilities.filesystem` is not `none`, `read-only` or `read-write`.

    Why: the filesystem capability tells people and the runtime what the tool may touch; an
    unknown value cannot be enforced or reviewed, and lint cannot check the code against it.

    Fix: write one of `none`, `read-only`, `read-write` (spelled with a hyphen). The quick fix
    corrects spellings like `read_only` or `ReadOnly`.
    """
    value = ctx.get("capabilities", "filesystem")
    if isinstance(value, str) and value not in _MODES:
        matches = suggest(value, _MODES, cutoff=0.6)
        exact = [
            m for m in matches if re.sub(r"[-_ ]", "", m) == re.sub(r"[-_ ]", "", value.lower())
        ]
        fix = None
        if len(matches) == 1 and ("capabilities", "filesystem") in ctx.tf.nodes:
            fix = Fix(
                f"use `{matches[0]}`",
                (ctx.node_edit(("capabilities", "filesystem"), matches[0]),),
                safe=bool(exact),
            )
        yield PT017.diag(
            ctx,
            f"filesystem `{show(value)}` is not none, read-only or read-write{did_you_mean(matches)}",
            "capabilities",
            "filesystem",
            fix=fix,
        )


PT024 = Rule(
    "PT024",
    "browser-without-network",
    family="manifest",
    summary="capabilities.browser true with network false",
    fix="sometimes",
)


@PT024.check
def browser_without_network(ctx: LintContext) -> Iterator[Diagnostic]:
    """`capabilities.browser` is true while `capabilities.network` is false.

    Why: a headless browser needs the network; the runtime boots the sandbox without internet
    access when network is false, so every page load fails.

    Fix: set `network: true` (and review what the tool may reach), or drop `browser: true`.
    """
    if (
        ctx.get("capabilities", "browser") is True
        and ctx.get("capabilities", "network") is not True
    ):
        yield PT024.diag(
            ctx,
            "browser: true needs network: true (the sandbox has no internet access): set network: true or remove browser",
            "capabilities",
            "browser",
            fix=ctx.set_value_fix(
                "set network: true", ("capabilities", "network"), True, safe=False
            ),
        )
