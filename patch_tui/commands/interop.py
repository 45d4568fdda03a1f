"""`patch-tui export` and `patch-tui import`: other tool-definition formats.

export: the definition as JSON on stdout (or `--out FILE`, written atomically, its path printed),
the loss report on stderr. With `--report-format json`, stdout is one object
`{"format", "tool", "definition" | "path", "losses": [{"field", "message"}]}` and stderr is quiet.

import: a file with one definition or a list of them (for MCP also a `tools/list` result). Every
definition is checked before anything is written; each becomes `<out>/<name>.py`, and an existing
file is never overwritten (exit 1, nothing written). Paths written go to stdout, one per line;
each tool's loss report and lint summary go to stderr (with `--report-format json`, stdout is a
list of `{"path", "name", "losses", "lint"}`).

Exit codes: 0 done, 1 a file exists or cannot be written, 2 bad input (unreadable, not JSON, not
the format's shape, a tool whose manifest is invalid). Untrusted text reaching the terminal goes
through `text_safety.visible`; JSON goes out with hidden characters as \\u escapes.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from patch_tui.untrusted.text_safety import visible

EXIT_OK, EXIT_WRITE, EXIT_INPUT = 0, 1, 2


def _err(message: str) -> None:
    print(f"patch-tui: {visible(message)}", file=sys.stderr)


def run_export(args: argparse.Namespace) -> int:
    from patch_tui.format import toolfile
    from patch_tui.interop import default_toolkit, definition_json, export_manifest
    from patch_tui.runtime.toolbox import atomic_write

    path = args.path
    try:
        tf = toolfile.read(path)
    except OSError as exc:
        _err(f"{path}: cannot read it ({exc.strerror or exc})")
        return EXIT_INPUT
    if tf.manifest is None:
        _err(
            f"{path}: the manifest is not valid, so there is nothing to export: run `patch-tui lint {path}`"
        )
        return EXIT_INPUT
    toolkit = args.toolkit or default_toolkit(path)
    definition, report = export_manifest(tf.manifest, args.format, toolkit=toolkit)
    text = definition_json(definition)
    if args.out:
        try:
            atomic_write(args.out, text.encode("utf-8"))
        except OSError as exc:
            _err(f"{args.out}: cannot write it ({exc.strerror or exc})")
            return EXIT_WRITE
    if args.report_format == "json":
        out: dict[str, Any] = {"format": args.format, "tool": tf.manifest.name}
        out |= {"path": args.out} if args.out else {"definition": definition}
        out["losses"] = report.to_json()
        sys.stdout.write(definition_json(out))
    else:
        sys.stdout.write(f"{visible(args.out)}\n" if args.out else text)
        print(visible(report.text()), file=sys.stderr)
    return EXIT_OK


def run_import(args: argparse.Namespace) -> int:
    from patch_tui.interop import (
        DefinitionError,
        ImportProblems,
        definition_json,
        import_all,
        load_definitions,
    )
    from patch_tui.lint import lint_text
    from patch_tui.runtime.toolbox import atomic_write

    src, fmt = args.file, args.from_format
    try:
        raw = Path(src).read_bytes()
    except OSError as exc:
        _err(f"{src}: cannot read it ({exc.strerror or exc})")
        return EXIT_INPUT
    try:
        imported = import_all(load_definitions(raw, fmt), fmt)
    except ImportProblems as exc:
        for problem in exc.problems:
            _err(f"{src}: {problem}")
        _err("nothing written")
        return EXIT_INPUT
    except DefinitionError as exc:
        _err(f"{src}: {exc}")
        return EXIT_INPUT

    out_dir = Path(args.out)
    targets = [out_dir / f"{item.name}.py" for item in imported]
    existing = [t for t in targets if t.exists() or t.is_symlink()]
    if existing:
        for t in existing:
            _err(
                f"{t} exists: not overwritten (import into another folder with --out, or move it away)"
            )
        _err("nothing written")
        return EXIT_WRITE
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        _err(f"{out_dir}: cannot create the folder ({exc.strerror or exc})")
        return EXIT_WRITE

    results: list[dict[str, Any]] = []
    for target, item in zip(targets, imported, strict=True):
        try:
            # O_EXCL reserves the name, so a file that appeared since the check is never
            # replaced; atomic_write then fills the reserved file in one rename.
            os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        except FileExistsError:
            _err(f"{target} exists: not overwritten")
            return EXIT_WRITE
        except OSError as exc:
            _err(f"{target}: cannot write it ({exc.strerror or exc})")
            return EXIT_WRITE
        try:
            atomic_write(target, item.text.encode("utf-8"))
        except OSError as exc:
            target.unlink(missing_ok=True)
            _err(f"{target}: cannot write it ({exc.strerror or exc})")
            return EXIT_WRITE
        counts = {"error": 0, "warning": 0, "info": 0}
        for diag in lint_text(item.text, path=str(target)):
            counts[diag.severity] += 1
        results.append(
            {
                "path": str(target),
                "name": item.name,
                "losses": item.report.to_json(),
                "lint": counts,
            }
        )
        if args.report_format != "json":
            print(visible(str(target)), flush=True)
            print(visible(item.report.text()), file=sys.stderr)
            print(
                f"  lint: {counts['error']} errors, {counts['warning']} warnings, {counts['info']} info"
                f" (`patch-tui lint {visible(str(target))}` shows them)",
                file=sys.stderr,
            )
    if args.report_format == "json":
        sys.stdout.write(definition_json(results))
    return EXIT_OK
