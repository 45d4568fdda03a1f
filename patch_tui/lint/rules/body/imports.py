"""PT043, PT048: imports against runtime.packages, and imports the rules cannot see."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from patch_tui.format import toolfile as tfmod
from patch_tui.lint import distributions as dists
from patch_tui.lint.analysis import BodyFacts
from patch_tui.lint.context import LintContext
from patch_tui.lint.diagnostic import Diagnostic
from patch_tui.lint.rule import Rule
from patch_tui.lint.rules.body.helpers import body_diag, facts_of, manifest_set
from patch_tui.untrusted.text_safety import visible


def _third_party(facts: BodyFacts) -> dict[str, tuple[str, ast.AST]]:
    """Top-level import name -> (dotted module, first import) for non-stdlib, non-optional imports."""
    out: dict[str, tuple[str, ast.AST]] = {}
    for imp in facts.imports:
        top = imp.module.partition(".")[0]
        if not top or imp.optional or dists.is_stdlib(top) or top in out:
            continue
        out[top] = (imp.module, imp.node)
    return out


PT043 = Rule(
    "PT043",
    "undeclared-package",
    family="body",
    summary="a third-party import not covered by runtime.packages (error); a declared package never imported (warning)",
    needs_body=True,
    severity=("error", "warning"),
    fix="sometimes",
)


@PT043.check
def undeclared_package(ctx: LintContext) -> Iterator[Diagnostic]:
    """A third-party import that `runtime.packages` does not declare (error), or a declared
    package the body never imports (warning). Import names are mapped to distributions:
    `bs4` is `beautifulsoup4`, `yaml` is `pyyaml`, `PIL` is `pillow`, `sklearn` is
    `scikit-learn`, ...

    Why: the runtime installs exactly the declared packages, so an undeclared import fails with
    `ModuleNotFoundError` on the first call; a package declared for nothing slows every cold
    start and widens the supply chain for no reason.

    Fix: add the distribution pinned (`beautifulsoup4==4.12.3`); the quick fix pins the version
    installed here when there is one. Remove packages the tool does not use (keep one that
    another package loads by name, like a parser).
    """
    packages = ctx.get("runtime", "packages", default=[])
    if not isinstance(packages, list) or not isinstance(ctx.get("runtime", default={}), dict):
        return
    facts = facts_of(ctx)
    declared: dict[str, int] = {}
    for i, entry in enumerate(packages):
        if isinstance(entry, str) and dists.declared_name(entry):
            declared[dists.normalize(dists.declared_name(entry))] = i
    used: set[str] = set()
    for top, (module, node) in _third_party(facts).items():
        candidates = [dists.normalize(d) for d in dists.distributions_for(module)]
        hit = next((c for c in candidates if c in declared), None)
        if hit is None:
            installed = [dists.normalize(d) for d in dists.installed_distributions(module)]
            hit = next((c for c in installed if c in declared), None)
        if hit is not None:
            used.add(hit)
            continue
        dist = dists.distribution_for(module)
        version = dists.installed_version(dist)
        if version is not None:
            pin = f"{dist}=={version}"
            fix = manifest_set(
                ctx,
                f"Add `{pin}` to runtime.packages",
                [(("runtime", "packages"), [*packages, pin])],
                safe=True,
            )
            hint = f"add `{pin}` to runtime.packages"
        else:
            fix = None
            hint = f"add it pinned to runtime.packages, like `{dist}==X.Y.Z`"
        yield body_diag(
            ctx,
            PT043,
            f"`{top}` is imported but the runtime installs only runtime.packages, which does not "
            f"declare `{dist}`: {hint}",
            node,
            fix=fix,
            field=("runtime", "packages"),
        )
    # Distributions also count as used when named in a string (BeautifulSoup(html, "lxml")).
    for text in facts.strings:
        norm = dists.normalize(text)
        if norm in declared:
            used.add(norm)
    for norm, index in declared.items():
        if norm in used:
            continue
        # Optional imports (try/except ImportError) still use the package when present.
        if any(
            norm in {dists.normalize(d) for d in dists.distributions_for(imp.module)}
            for imp in facts.imports
        ):
            continue
        entry = packages[index]
        yield PT043.diag(
            ctx,
            f"`{entry}` is declared but never imported: remove it from runtime.packages "
            "(keep it only if another package loads it at run time)",
            "runtime",
            "packages",
            index,
            severity="warning",
            fix=manifest_set(
                ctx,
                f"Remove `{entry}` from runtime.packages",
                [(("runtime", "packages", index), tfmod.DELETE)],
                safe=False,
            ),
        )


PT048 = Rule(
    "PT048",
    "dynamic-import",
    family="body",
    summary="a module imported by a name the rules cannot read",
    needs_manifest=False,
    needs_body=True,
    severity="warning",
)


@PT048.check
def dynamic_import(ctx: LintContext) -> Iterator[Diagnostic]:
    """A module imported through `__import__(...)` or `importlib.import_module(...)` (warning).

    Why: the body rules (network, files, processes, packages: PT040-PT045) read `import`
    statements. A module imported by a call is invisible to them, and one whose name is built at
    run time (`__import__("sq" + "lite3")`) cannot be known at all: the manifest's capabilities
    can no longer be checked against what the code does.

    Fix: write a plain `import sqlite3` (or `from x import y`) at the top of the file. If the
    module really is chosen at run time, review by hand that the capabilities cover every
    module it can be.
    """
    for use in facts_of(ctx).dynamic_imports:
        node = use.node
        assert isinstance(node, ast.Call)
        first = node.args[0] if node.args else None
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            shown = visible(first.value[:60])
            message = (
                f'`{use.what}("{shown}")` imports {shown} out of the rules\' sight: write '
                f"`import {shown}` so network, file and package checks see it"
            )
        else:
            message = (
                f"`{use.what}()` imports a module whose name is computed at run time: no check "
                "can tell which module it is (network, files, processes); import it by name"
            )
        yield body_diag(ctx, PT048, message, node, severity="warning")
