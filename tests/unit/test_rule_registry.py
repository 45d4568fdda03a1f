"""Each lint code is bound once, and everything that lists the rules lists the same ones.

A code is a public interface: it is written once, where its rule object is defined (or, for the
problems the parser finds itself, in format/toolfile.py's ProblemCode), and every other place
reaches it through that object. The registry, docs/rules.md and `patch-tui rules` read the same
objects, so they always name the same codes.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

import pytest
from lintkit import CLEAN

from patch_tui.cli import main as cli
from patch_tui.format.toolfile import Span
from patch_tui.lint import docs, registry
from patch_tui.lint.diagnostic import Fix
from patch_tui.lint.engine import lint_text
from patch_tui.lint.rule import Rule

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "patch_tui"
LINT = PACKAGE / "lint"
CODE_RE = re.compile(r"PT\d{3}")
CLEAN_SPAN = Span(1, 1, 1, 2)


def _code_literals() -> dict[str, list[tuple[str, int, bool]]]:
    """code -> (file, line, is a binding) for every string literal in patch_tui/ that is a code.

    A binding is the first argument of a `Rule(...)` call, or a member of format/toolfile.py's
    ProblemCode. Prose that mentions codes (docstrings, messages, comments) is not a literal
    that is exactly a code, so it is not counted.
    """
    found: dict[str, list[tuple[str, int, bool]]] = defaultdict(list)
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = str(path.relative_to(ROOT))
        tree = ast.parse(path.read_text(encoding="utf-8"))
        bindings: set[int] = set()
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "Rule"
                and node.args
            ):
                bindings.add(id(node.args[0]))
            if isinstance(node, ast.ClassDef) and node.name == "ProblemCode":
                for stmt in node.body:
                    if isinstance(stmt, ast.Assign):
                        bindings.add(id(stmt.value))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if CODE_RE.fullmatch(node.value):
                    found[node.value].append((rel, node.lineno, id(node) in bindings))
    return found


def test_every_code_is_written_once_where_its_rule_is_defined() -> None:
    found = _code_literals()
    strays = [
        f"{code} at {file}:{line}"
        for code, places in found.items()
        for file, line, binding in places
        if not binding
    ]
    assert not strays, (
        "a code written outside its rule's definition: use the rule object: " + ", ".join(strays)
    )
    twice = {code: places for code, places in found.items() if len(places) > 1}
    assert not twice, f"codes bound more than once: {twice}"
    # Every registered rule's code is one of these bindings (and nothing else is bound).
    assert set(registry.load()) | {"PT000"} == set(found)


def test_registry_docs_page_and_rules_command_list_the_same_codes(capsys) -> None:
    codes = list(registry.load())
    assert codes == sorted(codes) and len(codes) == len(set(codes))
    page = docs.DOCS_PATH.read_text(encoding="utf-8")
    assert re.findall(r"^## (PT\d{3})$", page, re.M) == codes
    assert re.findall(r"^\| \[(PT\d{3})\]", page, re.M) == codes
    assert cli(["rules"]) == 0
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert listed == codes
    for rule in registry.iter_codes():
        assert cli(["rules", rule.code]) == 0
        out = capsys.readouterr().out
        assert out.startswith(f"{rule.code} {rule.name} ({rule.severity_label})\n")
        assert f"**{rule.name}** · {rule.severity_label} · {rule.family}" in page


def test_each_rule_lives_in_the_folder_of_its_family() -> None:
    import sys

    for rule in registry.iter_codes():
        module = next(
            name
            for name, mod in sys.modules.items()
            if name.startswith("patch_tui.lint.rules.") and getattr(mod, rule.code, None) is rule
        )
        assert module.split(".")[3] == rule.family, (rule.code, module)
        what, why, fix = rule.sections()
        assert what and why and fix, rule.code


def test_a_rule_reporting_outside_its_declaration_becomes_pt000() -> None:
    """docs/rules.md shows each rule's severities and whether it offers fixes: a rule that
    reports otherwise is a bug the engine surfaces, never a silent lie in the docs."""
    quiet = Rule("PT998", "test-only", family="test", summary="s", severity="warning")
    with pytest.raises(ValueError, match="reports error"):
        quiet.at(CLEAN_SPAN, "m", severity="error")
    with pytest.raises(ValueError, match="offers a fix"):
        quiet.at(CLEAN_SPAN, "m", fix=Fix("t", ()))
    assert quiet.at(CLEAN_SPAN, "m").severity == "warning"

    @quiet.check
    def lies(ctx):  # type: ignore[no-untyped-def]
        yield quiet.diag(ctx, "m", "name", severity="error")

    found = lint_text(CLEAN, rules=[quiet])
    assert [d.code for d in found] == ["PT000"]
    assert "PT998 reports error but declares warning" in found[0].message


def test_no_import_cycle_inside_lint() -> None:
    """The registry imports the rule modules; rule modules import only the engine's types
    (rule, context, diagnostic, analysis), never the engine or the registry. grimp reads every
    import, function-local ones included."""
    grimp = pytest.importorskip("grimp")
    graph = grimp.build_graph("patch_tui")
    modules = sorted(m for m in graph.modules if m.startswith("patch_tui.lint"))
    cycles = []
    for module in modules:
        for imported in graph.find_modules_directly_imported_by(module):
            if imported.startswith("patch_tui.lint") and imported != module:
                back = graph.find_shortest_chain(importer=imported, imported=module)
                if back is not None:
                    cycles.append((module, *back))
    assert not cycles, cycles
    for module in modules:
        if module.startswith("patch_tui.lint.rules."):
            imported = graph.find_modules_directly_imported_by(module)
            assert not imported & {"patch_tui.lint.engine", "patch_tui.lint.registry"}, module


# A value of the wrong YAML shape for each kind of field the table knows.
_WRONG_SHAPE = {"string": [1, 2], "boolean": [1, 2], "list": {"a": 1}, "mapping": [1, 2]}
# Where each group of the field table sits in a manifest built from lintkit's CLEAN tool (its
# second input is an array with `items`).
_GROUP_PATH = {
    "": (),
    "inputs[]": ("inputs", 1),
    "outputs": ("outputs",),
    "capabilities": ("capabilities",),
    "runtime": ("runtime",),
    "items": ("inputs", 1, "items"),
}


def test_the_type_check_follows_the_field_table() -> None:
    """PT022's type checks come from format/fields.py: every field the table types is checked
    at its path, so adding a field to the table is all lint needs."""
    from patch_tui.format import fields, toolfile
    from patch_tui.lint.engine import selected_rules

    pt022 = selected_rules(["PT022"])
    tf = toolfile.parse(CLEAN)
    checked = 0
    for spec in fields.FIELDS:
        if spec.yaml_kind == "any" or spec.path == "runtime.python_version":  # PT023's own
            continue
        path = (*_GROUP_PATH[spec.group], spec.key)
        text = toolfile.with_frontmatter(
            tf, toolfile.set_field(tf.data, path, _WRONG_SHAPE[spec.yaml_kind])
        )
        found = [d for d in lint_text(text, rules=pt022) if d.field == path]
        assert found, f"{spec.path}: a {spec.yaml_kind} field given the wrong shape is not reported"
        checked += 1
    assert checked >= 20
