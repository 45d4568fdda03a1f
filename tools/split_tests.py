"""Move the test files into tests/unit, tests/ui and tests/e2e (issue 14, item 7). Run once, from
the repository root, on a clean tree: `python tools/split_tests.py` (`--dry-run` prints the plan).

What stays in tests/: the kits every folder shares (runtimekit, mcpkit, desk_helpers, inboxkit,
lintkit, fake_anthropic, fake_runtime), their data (fixtures/, interop_data/), and
interop_runtime/ (the checks against the real Patch runtime, run by `make interop`).

Why nothing else has to change: pyproject's `pythonpath = [".", "tests"]` makes both ways the
tests import the kits (`from tests.runtimekit import ...`, `from desk_helpers import ...`) work
from any folder, and the kits name paths from their own file (`runtimekit.TESTS`, `REPO`), not
the test's. What the move does change: the snapshot baselines follow their test files
(`__snapshots__/<module>/` sits beside the module), and the README's commands that name a test
file. A test file in no list is placed by a guess (a Textual app: ui; a real process: e2e; else
unit) and printed; the script refuses to run if a target exists.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"

# Pilot and snapshot tests: they need a Textual app.
UI = [
    "test_alerts.py",
    "test_form_from_table.py",
    "test_help_keys.py",
    "test_key_bar.py",
    "test_lint_panel.py",
    "test_themes.py",
    "test_ui_allow.py",
    "test_ui_batch.py",
    "test_ui_desk_files.py",
    "test_ui_desk_form.py",
    "test_ui_desk_keys.py",
    "test_ui_desk_try.py",
    "test_ui_dialogs.py",
    "test_ui_edit_args.py",
    "test_ui_editor.py",
    "test_ui_generate.py",
    "test_ui_inbox.py",
    "test_ui_interop.py",
    "test_ui_live_reload.py",
    "test_ui_snapshots.py",
    "test_ui_snapshots_inbox.py",
    "test_ui_snapshots_shell.py",
    "test_ui_startup.py",
    "test_ui_store_watch.py",
    "test_ui_untrusted_text.py",
]
# patch-tui driven from outside: the real CLI in a subprocess, serve and guard with the mcp
# client over stdio, tool runs in the sandbox, hostile input through every entry point.
E2E = [
    "test_approval_attacks.py",
    "test_audit_export.py",
    "test_cli_generate.py",
    "test_cli_lint.py",
    "test_confirm_wait.py",
    "test_edit_approve.py",
    "test_fmt.py",
    "test_grants.py",
    "test_guard.py",
    "test_hostile_input.py",
    "test_runner.py",
    "test_runtime_cli.py",
    "test_sample_tools.py",
    "test_sandbox.py",
    "test_sandbox_fallbacks.py",
    "test_serve_e2e.py",
    "test_serve_meta.py",
]
# Everything else: functions and classes called in-process.
UNIT = [
    "test_architecture.py",
    "test_config.py",
    "test_desk_layout.py",
    "test_field_docs.py",
    "test_field_table.py",
    "test_gate.py",
    "test_generate.py",
    "test_headless_imports.py",
    "test_interop.py",
    "test_one_definition.py",
    "test_rule_registry.py",
    "test_rules_body.py",
    "test_rules_manifest.py",
    "test_rules_text.py",
    "test_runtime_fidelity.py",
    "test_safe_text.py",
    "test_serve.py",
    "test_store.py",
    "test_store_guard.py",
    "test_store_migration.py",
    "test_store_watcher.py",
    "test_text_safety.py",
    "test_toolbox.py",
    "test_tool_buffer.py",
    "test_tool_catalog.py",
    "test_toolfile.py",
    "test_try_state.py",
    "test_watch.py",
]
PLAN = {"unit": UNIT, "ui": UI, "e2e": E2E}


def guess(path: Path) -> str:
    """The folder for a test file in no list: a Textual app makes it ui, a real process e2e."""
    text = path.read_text(encoding="utf-8")
    if "run_test(" in text or "snap_compare" in text:
        return "ui"
    if "pytest.mark.slow" in text or "cli(" in text or "Popen(" in text:
        return "e2e"
    return "unit"


def moves() -> list[tuple[Path, Path]]:
    assigned = {name: folder for folder, names in PLAN.items() for name in names}
    for path in sorted(TESTS.glob("test_*.py")):
        if path.name not in assigned:
            assigned[path.name] = guess(path)
            print(f"(not in a list, guessed) {path.name}: {assigned[path.name]}")
    out: list[tuple[Path, Path]] = []
    for name, folder in sorted(assigned.items()):
        src = TESTS / name
        if not src.exists():
            continue  # gone since the lists were written: nothing to move
        out.append((src, TESTS / folder / name))
        snaps = TESTS / "__snapshots__" / src.stem
        if snaps.is_dir():
            out.append((snaps, TESTS / folder / "__snapshots__" / src.stem))
    for _, dest in out:
        if dest.exists():
            sys.exit(f"split_tests: {dest.relative_to(ROOT)} exists already: nothing moved")
    return out


# A moved test file is one folder deeper: paths it builds from its own file go one level up.
DEEPER = [
    ("Path(__file__).resolve().parent.parent", "Path(__file__).resolve().parents[2]"),
    ("Path(__file__).resolve().parents[1]", "Path(__file__).resolve().parents[2]"),
    ("Path(__file__).resolve().parent /", "Path(__file__).resolve().parent.parent /"),
    ("Path(__file__).parent /", "Path(__file__).parent.parent /"),
]


def deeper(text: str) -> str:
    for old, new in DEEPER:
        text = text.replace(old, new)
    return text


def readme_paths(text: str, plan: list[tuple[Path, Path]]) -> str:
    for src, dest in plan:
        if src.suffix == ".py":
            text = text.replace(f"tests/{src.name}", f"tests/{dest.parent.name}/{src.name}")
    return text.replace("tests/test_ui_snapshots*.py", "tests/ui/test_ui_snapshots*.py")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dry-run", action="store_true", help="print the moves, change nothing")
    args = parser.parse_args()
    plan = moves()
    for src, dest in plan:
        print(f"{src.relative_to(ROOT)} -> {dest.relative_to(ROOT)}")
    if args.dry_run:
        return 0
    for src, dest in plan:
        dest.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "mv", str(src), str(dest)], cwd=ROOT, check=True)
    for _, dest in plan:
        if dest.suffix == ".py":
            text = dest.read_text(encoding="utf-8")
            if deeper(text) != text:
                dest.write_text(deeper(text), encoding="utf-8")
                print(f"paths one level up in {dest.relative_to(ROOT)}")
            left = [
                n
                for n, line in enumerate(deeper(text).splitlines(), 1)
                if "__file__" in line and not any(new in line for _, new in DEEPER)
            ]
            for n in left:
                print(f"check by hand: {dest.relative_to(ROOT)}:{n} uses __file__")
    old_snaps = TESTS / "__snapshots__"
    if old_snaps.is_dir() and not any(old_snaps.iterdir()):
        old_snaps.rmdir()
    # Comments and docs that name a moved file.
    for path in [ROOT / "README.md", *TESTS.rglob("*.py"), *(ROOT / "docs").rglob("*.md")]:
        text = path.read_text(encoding="utf-8")
        new = readme_paths(text, plan)
        if new != text:
            path.write_text(new, encoding="utf-8")
            print(f"updated paths in {path.relative_to(ROOT)}")
    print("now: .venv/bin/python -m pytest -q -n 2 -p no:randomly (the same count of tests passes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
