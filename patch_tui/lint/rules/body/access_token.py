"""PT044: PATCH_ACCESS_TOKEN against external_auth."""

from __future__ import annotations

from collections.abc import Iterator

from patch_tui.lint.context import LintContext
from patch_tui.lint.diagnostic import Diagnostic
from patch_tui.lint.rule import Rule
from patch_tui.lint.rules.body.helpers import body_diag, facts_of, quoted_names

PT044 = Rule(
    "PT044",
    "access-token-vs-external-auth",
    family="body",
    summary="PATCH_ACCESS_TOKEN read without external_auth (error); external_auth declared and the token never read (warning)",
    needs_body=True,
    severity=("error", "warning"),
)


@PT044.check
def access_token(ctx: LintContext) -> Iterator[Diagnostic]:
    """The body reads `PATCH_ACCESS_TOKEN` but `external_auth` declares no scope (error), or
    `external_auth` declares scopes and the body never reads the token (warning).

    Why: the runtime mints the short-lived token and injects it as `PATCH_ACCESS_TOKEN` only for
    the scopes in `external_auth`, so without them the variable is empty. Scopes the code never
    uses ask the user for access the tool does not need.

    Fix: list the scopes the tool uses (`external_auth: [slack.send_message]`) and read the
    token with `os.environ["PATCH_ACCESS_TOKEN"]`; drop scopes it does not use.
    """
    facts = facts_of(ctx)
    auth = ctx.get("external_auth", default=[])
    if not isinstance(auth, list):
        return  # PT022 reports the wrong type
    has_auth = isinstance(auth, list) and len(auth) > 0
    if facts.token_uses and not has_auth:
        yield body_diag(
            ctx,
            PT044,
            "the body reads PATCH_ACCESS_TOKEN but `external_auth` is empty, so the runtime injects "
            "no token: declare the scopes it needs, e.g. `external_auth: [slack.send_message]`",
            facts.token_uses[0],
            field=("external_auth",),
        )
    elif has_auth and not facts.token_uses:
        yield PT044.diag(
            ctx,
            f"`external_auth` declares {quoted_names([str(a) for a in auth])} but the body never reads "
            'PATCH_ACCESS_TOKEN: read it with os.environ["PATCH_ACCESS_TOKEN"], or drop the scopes',
            "external_auth",
            severity="warning",
            key=True,
        )
