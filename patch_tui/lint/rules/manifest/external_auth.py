"""PT020: external_auth entries (provider.scope, with a supported provider)."""

from __future__ import annotations

from collections.abc import Iterator

from patch_tui.format.fields import (
    AUTH_PROVIDERS,
    AUTH_SCOPE_RE,
)
from patch_tui.lint.context import LintContext
from patch_tui.lint.diagnostic import Diagnostic, Fix
from patch_tui.lint.rule import Rule
from patch_tui.lint.rules.manifest.helpers import did_you_mean, show, suggest

PT020 = Rule(
    "PT020",
    "bad-external-auth",
    family="manifest",
    summary="an external_auth entry is not provider.scope",
    fix="sometimes",
)


@PT020.check
def bad_external_auth(ctx: LintContext) -> Iterator[Diagnostic]:
    """An `external_auth` entry is not `provider.scope`, or its provider is not supported.

    Why: the runtime refuses the tool unless every entry matches
    `^[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*$` (one dot: `gmail.read.all` is refused). It mints a
    short-lived token for each `provider.scope` before the call and injects it as
    `PATCH_ACCESS_TOKEN`. Only gmail, google_calendar, slack, github and linear are supported
    (patch-tui is stricter than the runtime here: an unknown provider is an error too); anything
    else means the tool runs without the credentials it expects.

    Fix: write entries like `gmail.read` or `slack.send_message`, with a supported provider.
    """
    entries = ctx.get("external_auth")
    if not isinstance(entries, list):
        return
    for i, entry in enumerate(entries):
        if not isinstance(entry, str):
            continue
        m = AUTH_SCOPE_RE.match(entry)
        if not m:
            yield PT020.diag(
                ctx,
                f"external_auth entry `{show(entry)}` is not `provider.scope`: write e.g. `gmail.read`",
                "external_auth",
                i,
            )
            continue
        provider = m.group(1)
        if provider not in AUTH_PROVIDERS:
            matches = suggest(provider, AUTH_PROVIDERS, cutoff=0.6)
            fix = None
            if len(matches) == 1 and ("external_auth", i) in ctx.tf.nodes:
                fixed = matches[0] + entry[len(provider) :]
                fix = Fix(
                    f"use `{fixed}`", (ctx.node_edit(("external_auth", i), fixed),), safe=False
                )
            yield PT020.diag(
                ctx,
                f"unknown provider `{show(provider)}`{did_you_mean(matches)}: supported are "
                + ", ".join(AUTH_PROVIDERS),
                "external_auth",
                i,
                fix=fix,
            )
