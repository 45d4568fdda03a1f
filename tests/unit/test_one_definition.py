"""Config, theme files and manifest field docs are each described once (a plain table), read
by one plain reader at start-up, with a pydantic model over the same table for unusual input;
and none of these pairs imports the other back (function-local imports included)."""

from __future__ import annotations

import ast
import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

from patch_tui.settings import config, model, schema
from patch_tui.ui.theming import theme_file, theme_schema

PACKAGE = Path(__file__).resolve().parents[2] / "patch_tui"


def test_settings_model_and_table_agree() -> None:
    assert model.schema_disagreements() == []
    assert config.START_FIELDS == ("theme", "keymap", "watch_tools", "watch_themes")
    assert {f.name for f in dataclasses.fields(config.StartSettings)} == set(schema.START_FIELDS)


@pytest.mark.parametrize(
    ("name", "change", "says"),
    [
        ("confirm_ttl", {"default": 301}, "default 300 in Settings"),
        ("confirm_ttl", {"bounds": (1, 60)}, "bounds (1, 2592000) in Settings"),
        ("watch_tools", {"kind": "str"}, "in Settings"),
        ("model", {"doc": "Another text."}, "Settings' doc is not the table's"),
    ],
)
def test_a_settings_table_change_alone_fails_the_check(
    monkeypatch: pytest.MonkeyPatch, name: str, change: dict, says: str
) -> None:
    table = tuple(s._replace(**change) if s.name == name else s for s in schema.SETTINGS)
    monkeypatch.setattr(model, "SETTINGS", table)
    monkeypatch.setattr(model, "BY_NAME", {s.name: s for s in table})
    problems = model.schema_disagreements()
    assert len(problems) == 1 and problems[0].startswith(name) and says in problems[0], problems


def test_a_setting_added_to_the_table_alone_fails_the_check(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    extra = schema.Setting("alert_sound", "bool", True, doc="Play a sound.")
    monkeypatch.setattr(model, "SETTINGS", (*schema.SETTINGS, extra))
    assert any("alert_sound" in p for p in model.schema_disagreements())


def test_the_theme_model_is_the_table() -> None:
    fields = theme_file.ThemeFile.model_fields
    assert list(fields) == [k.name for k in theme_schema.THEME_KEYS]
    for key in theme_schema.THEME_KEYS:
        info = fields[key.name]
        assert info.is_required() is (key.default is theme_schema.REQUIRED), key.name
        if not info.is_required():
            made = info.default_factory() if info.default_factory else info.default  # type: ignore[call-arg]
            assert made == key.default, key.name


def test_the_plain_theme_reader_reads_by_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    data = {"name": "sea", "primary": "#112233"}
    assert (
        theme_schema.plain_theme({**data, "glow": True}) is None
    )  # unknown key: the model decides
    glow = theme_schema.ThemeKey("dark", "bool", False)
    monkeypatch.setattr(
        theme_schema,
        "THEME_KEYS",
        tuple(glow if k.name == "dark" else k for k in theme_schema.THEME_KEYS),
    )
    assert theme_schema.plain_theme(data).dark is False  # the table's default, not a second copy


def _imports(path: Path) -> set[str]:
    """Every patch_tui module a file imports, at the top or inside a function."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("patch_tui"):
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("patch_tui"))
    return found


def _module(path: Path) -> str:
    return ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)


@pytest.mark.parametrize(
    "patterns",
    [("settings/*.py",), ("ui/theming/*.py",), ("format/fields.py", "format/manifest.py")],
)
def test_no_import_cycles_function_local_included(patterns: tuple[str, ...]) -> None:
    files = sorted(f for pattern in patterns for f in PACKAGE.glob(pattern))
    graph = {_module(f): {m for m in _imports(f) if m != _module(f)} for f in files}
    modules = set(graph)
    graph = {m: {d for d in deps if d in modules} for m, deps in graph.items()}

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        for nxt in graph[start]:
            if nxt == goal or (nxt not in seen and reaches(nxt, goal, seen | {nxt})):
                return True
        return False

    cycles = [m for m in graph if reaches(m, m, {m})]
    assert cycles == []


@pytest.mark.parametrize(
    ("module", "absent"),
    [
        ("patch_tui.settings.config", "pydantic"),
        ("patch_tui.ui.theming.themes", "pydantic"),
        ("patch_tui.format.fields", "pydantic"),
        ("patch_tui.settings.model", "patch_tui.settings.config"),
        ("patch_tui.ui.theming.theme_file", "patch_tui.ui.theming.themes"),
        ("patch_tui.format.fields", "patch_tui.format.manifest"),
    ],
)
def test_the_plain_side_loads_without_the_other(module: str, absent: str) -> None:
    code = f"import sys, {module}; print({absent!r} in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
