"""`patch-tui lint`, `fmt`, `new` and `rules`: the headless authoring commands.

They talk like ruff: `path:line:col: CODE message`, a summary line, exit 0 when there is no
error, 1 when there are errors, 2 for usage errors and unreadable paths. Nothing here imports
Textual, anthropic or mcp (tests/test_headless_imports.py), and every piece of file content that
reaches the terminal goes through `text_safety.visible`, so a hostile file cannot send escape
sequences or reorder what you read.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from patch_tui.untrusted.text_safety import hidden_kind, visible

if TYPE_CHECKING:
    from patch_tui.lint.engine import Diagnostic, Rule

EXIT_OK, EXIT_ERRORS, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """A problem with the command line or a path; exit 2 with this message."""


def _err(message: str) -> None:
    print(f"patch-tui: {visible(message)}", file=sys.stderr)


def _split_codes(value: str | None) -> list[str]:
    return [c.strip().upper() for c in (value or "").split(",") if c.strip()]


def expand_paths(paths: Iterable[str]) -> tuple[list[str], list[str]]:
    """Files to check (a folder means every `*.py` directly in it, sorted) and the paths that do
    not exist or cannot be listed (reported, exit 2)."""
    files: list[str] = []
    bad: list[str] = []
    seen: set[str] = set()
    for raw in paths:
        p = Path(raw)
        try:
            is_dir, exists = p.is_dir(), p.exists()
        except OSError as exc:  # a folder on the way cannot be searched (stat refused)
            bad.append(f"{raw}: cannot read ({exc.strerror or exc})")
            continue
        if raw == STDIN:
            found = [STDIN]
        elif is_dir:
            try:
                found = sorted(str(c) for c in p.iterdir() if c.suffix == ".py" and c.is_file())
            except OSError as exc:
                bad.append(f"{raw}: cannot list the folder ({exc.strerror or exc})")
                continue
            if not found:
                _err(f"warning: no *.py files in {raw}")
        elif exists:
            found = [raw]
        else:
            bad.append(f"{raw}: no such file or folder")
            continue
        for f in found:
            if f not in seen:
                seen.add(f)
                files.append(f)
    return files, bad


STDIN = "-"  # a path of `-` means the text on standard input (for editors and pipes)
_STDIN_NAME = ["-"]  # how diagnostics name it (--stdin-filename)
_stdin_bytes: bytes | None = None


def _read(path: str) -> tuple[bytes | None, str | None]:
    global _stdin_bytes
    from patch_tui.format.toolfile import read_bytes

    if path == STDIN:
        if _stdin_bytes is None:
            _stdin_bytes = sys.stdin.buffer.read()
        return _stdin_bytes, None
    try:
        # Refuses FIFOs, devices and huge files by type and size before reading.
        return read_bytes(path), None
    except OSError as exc:
        return None, f"{path}: cannot read the file ({exc.strerror or exc})"


def _write(path: str, text: str, bom: bool) -> None:
    # The toolbox's writer: temp file in the same folder, fsync, os.replace, mode kept.
    from patch_tui.runtime.toolbox import atomic_write

    atomic_write(path, (("\ufeff" if bom else "") + text).encode("utf-8"))


# --- lint ------------------------------------------------------------------------------------


@dataclass
class LintRun:
    diagnostics: list[Diagnostic] = field(default_factory=list)
    fixed: int = 0
    usage_errors: list[str] = field(default_factory=list)


def _rules(select: list[str], ignore: list[str]) -> list[Rule]:
    from patch_tui.lint.registry import iter_codes, selected_rules

    codes = [r.code for r in iter_codes()]
    for prefix in select + ignore:
        if not any(code.startswith(prefix) for code in codes):
            raise UsageError(f"unknown rule code or prefix `{prefix}`: see `patch-tui rules`")
    return selected_rules(select, ignore)


# Below this many files a worker pool costs more to start than it saves.
PARALLEL_MIN_FILES = 200


def lint_paths(paths: list[str], rules: list[Rule], *, fix: bool = False, jobs: int = 0) -> LintRun:
    """Lint (and with `fix`, fix) every file; many files are shared out to worker processes,
    one per CPU, like ruff does. `jobs` = 0 means one per available CPU."""
    run = LintRun()
    files, run.usage_errors = expand_paths(paths)
    workers = _workers(jobs, len(files))
    if workers <= 1:
        _lint_files(files, rules, fix, run)
        return run
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    codes = [r.code for r in rules]
    # Contiguous chunks keep the output in file order; a few per worker balance the load.
    size = max(1, -(-len(files) // (workers * 4)))
    chunks = [files[i : i + size] for i in range(0, len(files), size)]
    context = multiprocessing.get_context("fork" if sys.platform == "linux" else "spawn")
    parts: list[LintRun] = []
    try:
        with ProcessPoolExecutor(workers, mp_context=context) as pool:
            parts = list(pool.map(_lint_chunk, chunks, [codes] * len(chunks), [fix] * len(chunks)))
    except (OSError, RuntimeError) as exc:  # no processes allowed, a worker killed (OOM), ...
        # Do it all here instead; fixes are idempotent, so files a worker fixed stay right.
        _err(f"warning: worker processes failed ({exc}); linting in one process")
        parts = [LintRun()]
        _lint_files(files, rules, fix, parts[0])
    for part in parts:
        run.diagnostics.extend(part.diagnostics)
        run.fixed += part.fixed
        run.usage_errors.extend(part.usage_errors)
    return run


def _workers(jobs: int, n_files: int) -> int:
    if jobs > 0:
        return min(jobs, max(1, n_files))
    if n_files < PARALLEL_MIN_FILES:
        return 1
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, 8))


def _lint_chunk(files: list[str], codes: list[str], fix: bool) -> LintRun:
    from patch_tui.lint.registry import load

    rules = load()
    run = LintRun()
    _lint_files(files, [rules[c] for c in codes], fix, run)
    return run


def _lint_files(files: list[str], rules: list[Rule], fix: bool, run: LintRun) -> None:
    from patch_tui.format import toolfile
    from patch_tui.lint.engine import fix_text, lint_toolfile

    for path in files:
        raw, error = _read(path)
        if raw is None:
            run.usage_errors.append(error or path)
            continue
        tf = toolfile.parse_bytes(raw, path=_STDIN_NAME[0] if path == STDIN else path)
        # Undecodable files parse to empty text: there is nothing to fix, and nothing to write.
        if fix and tf.text and path != STDIN:
            new_text, applied = fix_text(tf.text, rules)
            if applied and new_text != tf.text:
                try:
                    _write(path, new_text, tf.bom)
                except OSError as exc:
                    run.usage_errors.append(
                        f"{path}: cannot write the fixes ({exc.strerror or exc})"
                    )
                else:
                    run.fixed += applied
                    tf = toolfile.parse(new_text, path=path, bom=tf.bom)
        run.diagnostics.extend(lint_toolfile(tf, rules))


_NON_ASCII = re.compile(r"[^\x00-\x7e]")


def _hidden_escape(match: re.Match[str]) -> str:
    ch = match.group()
    if hidden_kind(ch) is None and unicodedata.category(ch) not in ("Cf", "Zl", "Zp", "Cs"):
        return ch
    # \uXXXX, as a surrogate pair above the BMP: the same JSON value, no raw character.
    return json.dumps(ch, ensure_ascii=True)[1:-1]


def json_escape_hidden(text: str) -> str:
    """JSON text with every C1, bidi, zero-width, tag or other hidden character escaped as
    \\uXXXX: the same value for a JSON reader, nothing a terminal (or a person reading a log)
    could misread when the output is printed. Readable non-ASCII (é, 名) stays as it is."""
    if text.isascii() and "\x7f" not in text:
        return text  # json.dumps escaped every C0 control already (DEL it leaves raw)
    return _NON_ASCII.sub(_hidden_escape, text)


def _github_escape(text: str, *, prop: bool = False) -> str:
    # GitHub workflow commands: % \r \n always; `:` and `,` too inside properties.
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return text


def _one_line(text: str) -> str:
    # One diagnostic per line, whatever a quoted value holds.
    return visible(text).replace("\n", "⏎")


def format_text_line(d: Diagnostic) -> str:
    return f"{_one_line(d.path or '-')}:{d.line}:{d.column}: {d.code} {_one_line(d.message)}"


def format_github_line(d: Diagnostic) -> str:
    level = {"error": "error", "warning": "warning"}.get(d.severity, "notice")
    props = ",".join(
        [
            f"file={_github_escape(visible(d.path or '-'), prop=True)}",
            f"line={d.line}",
            f"col={d.column}",
            f"endLine={d.span.end_line}",
            f"endColumn={d.span.end_column}",
            f"title={d.code}",
        ]
    )
    return f"::{level} {props}::{_github_escape(visible(d.message))}"


def _summary(diags: list[Diagnostic], fixed: int) -> str:
    errors = sum(1 for d in diags if d.severity == "error")
    warnings = sum(1 for d in diags if d.severity == "warning")
    fixable = sum(1 for d in diags if d.fix is not None and d.fix.safe)
    fixed_part = f"Fixed {fixed} problem{'s' if fixed != 1 else ''}. " if fixed else ""
    if not diags:
        return f"{fixed_part}All checks passed!"
    found = f"Found {errors} error{'s' if errors != 1 else ''}, {warnings} warning{'s' if warnings != 1 else ''}"
    notes = len(diags) - errors - warnings
    if notes:
        found += f", {notes} note{'s' if notes != 1 else ''}"
    more = f" ({fixable} fixable with --fix)" if fixable else ""
    return f"{fixed_part}{found}{more}."


def _statistics(diags: list[Diagnostic], out: TextIO) -> None:
    from patch_tui.lint.registry import load

    rules = load()
    counts = Counter(d.code for d in diags)
    fixable = {d.code for d in diags if d.fix is not None and d.fix.safe}
    width = max((len(str(n)) for n in counts.values()), default=1)
    for code, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        name = rules[code].name if code in rules else ""
        mark = "[*]" if code in fixable else "   "
        print(f"{n:>{width}}\t{code}\t{mark} {name}", file=out)


def run_lint(args: argparse.Namespace) -> int:
    fmt = getattr(args, "format", "text") or "text"
    _STDIN_NAME[0] = getattr(args, "stdin_filename", None) or STDIN
    if getattr(args, "fix", False) and STDIN in args.paths:
        _err("--fix cannot rewrite standard input: run `patch-tui fmt -` or fix a file")
        return EXIT_USAGE
    try:
        rules = _rules(
            _split_codes(getattr(args, "select", "")), _split_codes(getattr(args, "ignore", ""))
        )
    except UsageError as exc:
        _err(str(exc))
        return EXIT_USAGE
    # Everything imported so far lives until exit: keep the collector from re-scanning it while
    # thousands of short-lived AST nodes come and go (a measurable share of lint time).
    import gc

    gc.freeze()
    gc.set_threshold(50_000, 50, 100)
    run = lint_paths(
        list(args.paths),
        rules,
        fix=bool(getattr(args, "fix", False)),
        jobs=int(getattr(args, "jobs", 0) or 0),
    )
    for message in run.usage_errors:
        _err(message)
    diags = run.diagnostics
    out = sys.stdout
    if fmt == "json":
        # json.dumps without indent uses the C encoder (json.dump never does): several times faster.
        out.write(
            json_escape_hidden(json.dumps([d.to_json() for d in diags], ensure_ascii=False)) + "\n"
        )
    elif fmt == "github":
        for d in diags:
            print(format_github_line(d), file=out)
    else:
        if getattr(args, "statistics", False):
            _statistics(diags, out)
        else:
            for d in diags:
                print(format_text_line(d), file=out)
        if diags or run.fixed or not run.usage_errors:
            print(_summary(diags, run.fixed), file=out)
    if run.usage_errors:
        return EXIT_USAGE
    return EXIT_ERRORS if any(d.severity == "error" for d in diags) else EXIT_OK


# --- fmt -------------------------------------------------------------------------------------


def run_fmt(args: argparse.Namespace) -> int:
    from patch_tui.format import toolfile

    check = bool(getattr(args, "check", False))
    diff = bool(getattr(args, "diff", False))
    files, bad = expand_paths(args.paths)
    for message in bad:
        _err(message)
    changed: list[str] = []
    unchanged = 0
    failed = 0
    for path in files:
        raw, error = _read(path)
        if raw is None:
            _err(error or path)
            bad.append(path)
            continue
        tf = toolfile.parse_bytes(raw, path=path)
        try:
            new = toolfile.format_text(tf)
        except toolfile.NotExact as exc:
            # Refused rather than written: fmt never changes what a manifest means.
            _err(
                f"{path if path != STDIN else (getattr(args, 'stdin_filename', None) or STDIN)}: {exc} (not formatted)"
            )
            if path == STDIN and not check and not diff:
                sys.stdout.buffer.write((("\ufeff" if tf.bom else "") + tf.text).encode("utf-8"))
            failed += 1
            continue
        if path == STDIN:
            name = getattr(args, "stdin_filename", None) or STDIN
            if new is not None and toolfile.yaml_comment_lines(tf) and new != tf.text:
                new = None  # never drop comments, here either
            if not check and not diff:
                # The formatted text (or the text as it was) goes to stdout, as ruff format does.
                out = new if new is not None else tf.text
                sys.stdout.buffer.write((("\ufeff" if tf.bom else "") + out).encode("utf-8"))
            if new is None:
                _err(f"{name}: the frontmatter cannot be formatted (see `patch-tui lint`)")
                failed += 1
            elif new == tf.text:
                unchanged += 1
            else:
                changed.append(name)
                if diff:
                    _print_diff(name, tf.text, new)
                elif check:
                    print(f"Would reformat: {visible(name)}")
            continue
        if new is None:
            problem = next(iter(tf.problems), None)
            where = (
                f"{problem.span.line}:{problem.span.column}: {problem.code} {problem.message}"
                if problem
                else "the frontmatter cannot be read"
            )
            _err(f"{path}:{where} (not formatted)")
            failed += 1
            continue
        if new == tf.text:
            unchanged += 1
            continue
        comments = toolfile.yaml_comment_lines(tf)
        if comments:
            # The YAML reader drops comments: rewriting would lose what the author wrote.
            _err(
                f"{path}:{comments[0]}: the frontmatter has comments that fmt would drop: move "
                "them below the closing `# ---`, or remove them (not formatted)"
            )
            failed += 1
            continue
        changed.append(path)
        if diff:
            _print_diff(path, tf.text, new)
        if check:
            if not diff:
                print(f"Would reformat: {visible(path)}")
            continue
        if diff:
            continue
        try:
            _write(path, new, tf.bom)
        except OSError as exc:
            _err(f"{path}: cannot write ({exc.strerror or exc})")
            bad.append(path)
            changed.remove(path)
    n = len(changed)
    files_word = "file" if n == 1 else "files"
    if check or diff:
        summary = f"{n} {files_word} would be reformatted"
    else:
        summary = f"{n} {files_word} reformatted"
    if unchanged:
        summary += f", {unchanged} file{'s' if unchanged != 1 else ''} already formatted"
    if failed:
        summary += f", {failed} left as they are"
    if STDIN in files and not (check or diff):
        pass  # stdout carries the formatted text: nothing else may go there
    else:
        print(summary, file=sys.stderr if diff else sys.stdout)
    if bad:
        return EXIT_USAGE
    if failed or ((check or diff) and changed):
        return EXIT_ERRORS
    return EXIT_OK


def _print_diff(path: str, old: str, new: str) -> None:
    import difflib

    shown = visible(path)
    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=shown,
        tofile=shown,
    )
    for line in lines:
        text = line.rstrip("\r\n")
        sys.stdout.write(visible(text) + "\n")


# --- new -------------------------------------------------------------------------------------


def run_new(args: argparse.Namespace) -> int:
    from patch_tui.format.fields import name_hint
    from patch_tui.format.manifest import NAME_RE
    from patch_tui.lint.engine import lint_text
    from patch_tui.runtime.toolbox import new_tool_text

    name = args.name
    if not NAME_RE.match(name):
        _err(f"`{visible(name)}` is not a valid tool name: {name_hint(name)}")
        return EXIT_USAGE
    text = new_tool_text(name, getattr(args, "description", None))
    errors = [d for d in lint_text(text) if d.severity == "error"]
    if errors:
        for d in errors:
            _err(f"{d.code} {d.message}")
        return EXIT_USAGE
    if not getattr(args, "description", None):
        # The file holds a template sentence until someone writes one (PT052 says so too).
        _err(
            f"{name}: its description is a template sentence to replace; "
            '`--description "..."` gives one'
        )
    toolbox_dir = getattr(args, "toolbox", None)
    if toolbox_dir and not getattr(args, "dir", None):
        return _new_in_toolbox(Path(toolbox_dir), name, text)
    folder = Path(getattr(args, "dir", None) or ".")
    target = folder / f"{name}.py"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        # O_EXCL: never overwrite, even if the file appears between a check and the write.
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except FileExistsError:
        _err(f"{target} already exists: choose another name, or edit that file")
        return EXIT_ERRORS
    except OSError as exc:
        _err(f"{target}: cannot create the file ({exc.strerror or exc})")
        return EXIT_USAGE
    with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
        fh.write(text)
    _register(target)
    print(target)
    return EXIT_OK


def _new_in_toolbox(root: Path, name: str, text: str) -> int:
    """`new NAME --toolbox DIR`: the tool goes in the toolbox's tools/ folder and its index, so
    the runtime lists it. A folder that is not yet a toolbox gets the runtime's layout; a plain
    folder of tool files stays one."""
    from patch_tui.runtime.toolbox import Toolbox, ToolboxError

    try:
        plain = root.is_dir() and not (root / "tools").is_dir() and any(root.glob("*.py"))
        tb = Toolbox.open(root) if plain else Toolbox.init_patch(root)
        target = tb.create_tool(name, text=text)
    except (ToolboxError, OSError) as exc:
        _err(f"{root}: cannot create {name}: {exc}")
        return EXIT_ERRORS
    print(target)
    return EXIT_OK


def _register(target: Path) -> None:
    """A new file inside a Patch toolbox's tools/ folder is registered in its index.json."""
    from patch_tui.runtime.toolbox import Toolbox, ToolboxError

    try:
        tb = Toolbox.open(target)
        if tb.is_patch_toolbox and tb.tools_dir == target.resolve().parent:
            tb.sync_index([target])
    except (ToolboxError, OSError) as exc:
        _err(f"{target}: created, but index.json could not be updated: {exc}")


# --- rules -----------------------------------------------------------------------------------


def run_rules(args: argparse.Namespace) -> int:
    from patch_tui.lint.docs import rule_doc
    from patch_tui.lint.registry import iter_codes

    code = (getattr(args, "code", None) or "").strip().upper()
    rules = [r for r in iter_codes() if r.code.startswith(code)]
    if not rules:
        _err(f"no rule `{code}`: run `patch-tui rules` for the list")
        return EXIT_USAGE
    if len(rules) == 1 and code:
        print(rule_doc(rules[0]))
        return EXIT_OK
    sev_w = max(len(r.severity_label) for r in rules)
    name_w = max(len(r.name) for r in rules)
    for r in rules:
        print(f"{r.code}  {r.severity_label:<{sev_w}}  {r.name:<{name_w}}  {r.summary}")
    return EXIT_OK
