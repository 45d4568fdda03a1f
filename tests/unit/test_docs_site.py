"""The README stays a short introduction whose links all lead somewhere, and every page of the
documentation site is in its nav (`make docs` builds the site strictly in CI; these checks need no
mkdocs and run with the suite)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
LINK = re.compile(r"\]\(([^)\s]+)\)")


def nav_pages(nav: object) -> set[str]:
    """Every page path named in mkdocs.yml's nav, however deep."""
    if isinstance(nav, str):
        return {nav}
    if isinstance(nav, list):
        return set().union(*(nav_pages(item) for item in nav))
    if isinstance(nav, dict):
        return set().union(*(nav_pages(value) for value in nav.values()))
    return set()


def test_the_readme_is_short_and_its_links_lead_to_files() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) < 200
    targets = [t for t in LINK.findall(readme) if "://" not in t and not t.startswith("#")]
    assert targets, "the README links to the docs"
    missing = [t for t in targets if not (REPO / t.split("#")[0]).exists()]
    assert missing == []


def test_every_page_is_in_the_nav_and_every_nav_entry_is_a_page() -> None:
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))
    in_nav = nav_pages(config["nav"])
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    assert pages - in_nav == set(), "pages the nav leaves out"
    assert in_nav - pages == set(), "nav entries with no page"


def load_hooks() -> Any:
    spec = importlib.util.spec_from_file_location("docs_hooks", DOCS / "hooks.py")
    assert spec is not None and spec.loader is not None
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    return hooks


def test_the_cli_reference_shows_every_command_as_its_help_prints_it(monkeypatch) -> None:
    """docs/hooks.py writes the options into docs/reference/cli.md at build time."""
    from patch_tui.cli import build_parser

    hooks = load_hooks()
    page = (DOCS / "reference" / "cli.md").read_text(encoding="utf-8")
    assert hooks.MARK in page
    built = hooks.on_page_markdown(page, None, None, None)
    assert hooks.MARK not in built
    monkeypatch.setenv("COLUMNS", hooks.WIDTH)  # the width the page is written at
    for words, parser in hooks._commands(build_parser(), ()):
        assert f"# patch-tui {' '.join(words)}\n" in built
        assert parser.format_help().rstrip() in built
    assert "patch-tui inbox approve" in built and "--theme" in built


def test_the_config_page_lists_every_setting_with_its_default() -> None:
    from patch_tui.settings.schema import SETTINGS

    hooks = load_hooks()
    page = (DOCS / "guide" / "config.md").read_text(encoding="utf-8")
    assert hooks.SETTINGS_MARK in page
    built = hooks.on_page_markdown(page, None, None, None)
    for s in SETTINGS:
        [row] = [line for line in built.splitlines() if line.startswith(f"| `{s.name}` |")]
        assert s.doc.replace("|", "\\|") in row
        if s.bounds:
            assert f"{s.bounds[0]} to {s.bounds[1]}" in row


def test_each_screenshot_is_on_a_page() -> None:
    shown = "\n".join(p.read_text(encoding="utf-8") for p in DOCS.rglob("*.md"))
    for svg in DOCS.glob("screenshot-*.svg"):
        assert f"{svg.name})" in shown, svg.name
