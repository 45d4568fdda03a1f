"""The rule registry: finds every rule under `patch_tui/lint/rules/`, by family and code.

Rules are discovered, not listed: each module of the rules package is imported once, on first
use, and every `Rule` it defines at module level is registered under its code. Adding a rule is
adding it to a module there (or a new module); nothing else names it. Rule modules import only
the engine's types (rule, context, diagnostic, analysis), never this module or the engine, so
there is no import cycle.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterable, Iterator

from patch_tui.lint import rules as rules_package
from patch_tui.lint.rule import Rule

RULES: dict[str, Rule] = {}  # code -> rule, filled by load()
_loaded = False


def load() -> dict[str, Rule]:
    """Import every rule module once and register its rules (codes must be unique)."""
    global _loaded
    if _loaded:
        return RULES
    found: dict[str, Rule] = {}
    for name in _rule_modules():
        module = importlib.import_module(name)
        for value in vars(module).values():
            if not isinstance(value, Rule):
                continue
            seen = found.get(value.code)
            if seen is not None and seen is not value:
                raise ValueError(f"rule code {value.code} defined twice")
            found[value.code] = value
    RULES.update(sorted(found.items()))
    _loaded = True
    return RULES


def _rule_modules() -> list[str]:
    """The dotted names of the modules under rules/<family>/ (a plain directory listing: cheaper
    at start-up than pkgutil's walk, which every lint worker process would pay)."""
    base = rules_package.__name__
    names: list[str] = []
    for root in rules_package.__path__:
        with os.scandir(root) as families:
            for family in sorted(families, key=lambda e: e.name):
                if not family.is_dir() or not os.path.exists(
                    os.path.join(family.path, "__init__.py")
                ):
                    continue
                for entry in sorted(os.listdir(family.path)):
                    if entry.endswith(".py") and entry != "__init__.py":
                        names.append(f"{base}.{family.name}.{entry[:-3]}")
    return names


def iter_codes() -> Iterator[Rule]:
    """Every rule, by code."""
    rules = load()
    yield from (rules[c] for c in sorted(rules))


def get(code: str) -> Rule | None:
    return load().get(code)


def selected_rules(select: Iterable[str] = (), ignore: Iterable[str] = ()) -> list[Rule]:
    """Rules chosen by code prefixes, like ruff's --select/--ignore (PT04 selects PT040-PT046)."""
    rules = load()
    sel = [s.strip().upper() for s in select if s.strip()]
    ign = [s.strip().upper() for s in ignore if s.strip()]
    out = []
    for code in sorted(rules):
        if sel and not any(code.startswith(s) for s in sel):
            continue
        if any(code.startswith(i) for i in ign):
            continue
        out.append(rules[code])
    return out
