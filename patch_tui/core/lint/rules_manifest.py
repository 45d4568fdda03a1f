"""Rules on the manifest's fields (PT001-PT024). PT001-PT003 come from the parser itself."""

from __future__ import annotations

from collections.abc import Iterator

from patch_tui.core.lint.engine import Diagnostic, LintContext, rule
from patch_tui.core.manifest import NAME_RE, REQUIRED_FIELDS, VERSION_RE

# The parser reports these; registering them makes them selectable and documented.
for _code, _name, _summary in (
    ("PT001", "frontmatter-markers", "no opening or no closing `# ---` marker"),
    ("PT002", "invalid-yaml", "frontmatter is not valid YAML, or uses anchors, aliases, tags or duplicate keys"),
    ("PT003", "uncommented-line", "a line between the markers that is not a comment"),
):
    rule(_code, _name, family="structure", summary=_summary, needs_manifest=False)(lambda ctx: ())


@rule("PT010", "missing-field", family="manifest", summary="a required field is missing")
def missing_field(ctx: LintContext) -> Iterator[Diagnostic]:
    for name in REQUIRED_FIELDS:
        if name not in ctx.data:
            yield ctx.diag("PT010", f"required field `{name}` is missing: add `{name}:` to the manifest")


@rule("PT011", "name-not-snake-case", family="manifest", summary="name is not snake_case")
def name_not_snake_case(ctx: LintContext) -> Iterator[Diagnostic]:
    name = ctx.get("name")
    if isinstance(name, str) and name and not NAME_RE.match(name):
        yield ctx.diag(
            "PT011",
            f"name `{name}` is not snake_case: use lowercase letters, digits and `_`, starting with a letter",
            "name",
        )


@rule("PT012", "version-not-semver", family="manifest", summary="version is not strict x.y.z")
def version_not_semver(ctx: LintContext) -> Iterator[Diagnostic]:
    version = ctx.get("version")
    if isinstance(version, str) and not VERSION_RE.match(version):
        yield ctx.diag("PT012", f"version `{version}` is not strict semver: write it as x.y.z, e.g. 1.0.0", "version")
