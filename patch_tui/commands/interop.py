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
through `text_safety.visible`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from patch_tui.core.text_safety import find_hidden, visible

EXIT_OK, EXIT_WRITE, EXIT_INPUT = 0, 1, 2


def _err(message: str) -> None:
    print(f"patch-tui: {visible(message)}", file=sys.stderr)


def json_text(value: Any) -> str:
    """Pretty JSON, readable (UTF-8 kept) yet safe on a terminal: hidden characters are written
    as \\u escapes, which is the same JSON value."""
    text = json.dumps(value, indent=2, ensure_ascii=False) + "\n"
    hidden = find_hidden(text)
    if not hidden:
        return text
    parts: list[str] = []
    last = 0
    for h in hidden:
        parts.append(text[last : h.index])
        parts.append(json.dumps(text[h.index])[1:-1])  # "\u202e", or a surrogate pair
        last = h.index + 1
    parts.append(text[last:])
    return "".join(parts)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def run_export(args: argparse.Namespace) -> int:
    from patch_tui.core import toolfile
    from patch_tui.core.interop import default_toolkit, export_manifest
    from patch_tui.core.toolbox import atomic_write

    path = args.path
    try:
        tf = toolfile.read(path)
    except OSError as exc:
        _err(f"{path}: cannot read it ({exc.strerror or exc})")
        return EXIT_INPUT
    if tf.manifest is None:
        _err(f"{path}: the manifest is not valid, so there is nothing to export: run `patch-tui lint {path}`")
        return EXIT_INPUT
    toolkit = args.toolkit or default_toolkit(path)
    definition, report = export_manifest(tf.manifest, args.format, toolkit=toolkit)
    text = json_text(definition)
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
        sys.stdout.write(json_text(out))
    else:
        sys.stdout.write(f"{visible(args.out)}\n" if args.out else text)
        print(visible(report.text()), file=sys.stderr)
    return EXIT_OK


def run_import(args: argparse.Namespace) -> int:
    from patch_tui.core import toolfile
    from patch_tui.core.interop import DefinitionError, import_definition, split_definitions
    from patch_tui.core.lint import lint_text
    from patch_tui.core.toolbox import atomic_write

    src, fmt = args.file, args.from_format
    try:
        raw = Path(src).read_bytes()
    except OSError as exc:
        _err(f"{src}: cannot read it ({exc.strerror or exc})")
        return EXIT_INPUT
    try:
        data = json.loads(raw.decode("utf-8-sig"), parse_constant=_reject_constant)
    except UnicodeDecodeError:
        _err(f"{src}: not UTF-8 text, so not a JSON definition")
        return EXIT_INPUT
    except json.JSONDecodeError as exc:
        _err(f"{src}: not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})")
        return EXIT_INPUT
    except (ValueError, RecursionError) as exc:
        _err(f"{src}: not usable JSON ({exc})")
        return EXIT_INPUT
    try:
        definitions = split_definitions(data, fmt)
    except DefinitionError as exc:
        _err(f"{src}: {exc}")
        return EXIT_INPUT
    if not definitions:
        _err(f"{src}: no definitions in the file")
        return EXIT_INPUT

    imported: list[tuple[str, str, Any]] = []  # (name, text, report)
    problems: list[str] = []
    for i, definition in enumerate(definitions, 1):
        where = f"{src}: definition {i}" if len(definitions) > 1 else src
        try:
            text, report = import_definition(definition, fmt)
        except DefinitionError as exc:
            problems.append(f"{where}: {exc}")
            continue
        except RecursionError:
            problems.append(f"{where}: nested too deeply")
            continue
        imported.append((report.tool, text, report))
    if problems:
        for message in problems:
            _err(message)
        _err("nothing written")
        return EXIT_INPUT

    # Two definitions with one name get distinct tool names, not one file twice.
    taken: set[str] = set()
    for index, (name, text, report) in enumerate(imported):
        new, n = name, 2
        while new in taken:
            new, n = f"{name}_{n}", n + 1
        taken.add(new)
        if new != name:
            tf = toolfile.parse(text)
            text = toolfile.with_frontmatter(tf, {**tf.data, "name": new})
            report.add("name", f"renamed to `{new}`: another definition in the file has the name `{name}`")
            report.tool = new
            imported[index] = (new, text, report)

    out_dir = Path(args.out)
    targets = [out_dir / f"{name}.py" for name, _, _ in imported]
    existing = [t for t in targets if t.exists() or t.is_symlink()]
    if existing:
        for t in existing:
            _err(f"{t} exists: not overwritten (import into another folder with --out, or move it away)")
        _err("nothing written")
        return EXIT_WRITE
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        _err(f"{out_dir}: cannot create the folder ({exc.strerror or exc})")
        return EXIT_WRITE

    results: list[dict[str, Any]] = []
    for target, (name, text, report) in zip(targets, imported, strict=True):
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
            atomic_write(target, text.encode("utf-8"))
        except OSError as exc:
            target.unlink(missing_ok=True)
            _err(f"{target}: cannot write it ({exc.strerror or exc})")
            return EXIT_WRITE
        counts = {"error": 0, "warning": 0, "info": 0}
        for diag in lint_text(text, path=str(target)):
            counts[diag.severity] += 1
        results.append({"path": str(target), "name": name, "losses": report.to_json(), "lint": counts})
        if args.report_format != "json":
            print(visible(str(target)), flush=True)
            print(visible(report.text()), file=sys.stderr)
            print(
                f"  lint: {counts['error']} errors, {counts['warning']} warnings, {counts['info']} info"
                f" (`patch-tui lint {visible(str(target))}` shows them)",
                file=sys.stderr,
            )
    if args.report_format == "json":
        sys.stdout.write(json_text(results))
    return EXIT_OK

