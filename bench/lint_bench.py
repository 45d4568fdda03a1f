"""Lint throughput: `patch-tui lint DIR --format json` over 2,000 tool files, against the floor.

The floor is a fresh Python process that does the least any linter must do: read each file, cut
out the frontmatter, load it with libyaml (CSafeLoader) and `ast.parse` the body. The ratio
CLI time / floor time is the figure we track (target: <= 2.0). Both run as subprocesses over the
same files, so interpreter start-up is counted on both sides; each is run a few times and the
best time kept, because the machine is shared. The CLI is measured twice: with its own choice of
worker processes (or --jobs N), and with `--jobs 1`, whose CPU ratio is the work a single process
does per file with no pool overhead.

    .venv/bin/python bench/lint_bench.py [--files 2000] [--repeat 3] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FLOOR = r"""
import ast, sys, os, yaml
Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
folder = sys.argv[1]
n = 0
for name in sorted(os.listdir(folder)):
    if not name.endswith(".py"):
        continue
    with open(os.path.join(folder, name), "rb") as fh:
        text = fh.read().decode("utf-8")
    lines = text.splitlines(keepends=True)
    marks = [i for i, line in enumerate(lines) if line.strip() == "# ---"][:2]
    if len(marks) < 2:
        continue
    fm = "".join(line.lstrip()[2:] if line.lstrip().startswith("# ") else line.lstrip()[1:]
                 for line in lines[marks[0] + 1 : marks[1]])
    try:
        yaml.load(fm, Loader=Loader)
    except yaml.YAMLError:
        pass
    try:
        ast.parse("".join(lines[marks[1] + 1 :]))
    except SyntaxError:
        pass
    n += 1
print(n)
"""

WORDS = "count parse fetch convert summarise split merge clean lookup render resize hash".split()
NOUNS = "words text page table csv json date email issue event image url".split()


def _manifest(
    rng: random.Random, name: str, broken: bool
) -> tuple[list[str], list[tuple[str, str]]]:
    kinds = ["string", "integer", "boolean", "array", "number"]
    inputs = []
    for i in range(rng.randint(1, 4)):
        kind = rng.choice(kinds)
        inputs.append((f"{rng.choice(NOUNS)}_{i}", kind))
    network = rng.random() < 0.3
    lines = [
        f"name: {name}",
        f"version: {rng.randint(0, 3)}.{rng.randint(0, 9)}.{rng.randint(0, 20)}",
        f"description: {rng.choice(WORDS).capitalize()} the {rng.choice(NOUNS)} of a {rng.choice(NOUNS)}, e.g. for reports.",
        "inputs:",
    ]
    for i, (arg, kind) in enumerate(inputs):
        lines += [
            f"  - name: {arg}",
            f"    type: {kind}",
            f"    description: The {arg.split('_')[0]} to use.",
        ]
        if i == len(inputs) - 1 and len(inputs) > 1:
            lines += ["    required: false", "    default: null"]
        if kind == "array":
            lines += ["    items:", "      type: string"]
    lines += [
        "outputs:",
        "  type: object",
        "  description: The result.",
        "capabilities:",
        f"  network: {'true' if network else 'false'}",
        "  filesystem: none",
        "  human_confirm: false",
        "runtime:",
        "  language: python",
        '  python_version: "3.12"',
        "  packages: []" if not network else '  packages: ["requests==2.32.3"]',
    ]
    if rng.random() < 0.3:
        lines += ["generated_by: claude-opus-4-7", 'generated_at: "2026-05-04T12:34:56Z"']
    if broken:
        mutation = rng.randrange(8)
        if mutation == 0:
            lines = [line.replace("network: false", "network: no") for line in lines]
        elif mutation == 1:
            lines = [line.replace('"3.12"', "3.12") for line in lines]
        elif mutation == 2:
            # An array input without items (when the tool has one).
            lines = [
                line for line in lines if not line.startswith(("    items:", "      type: string"))
            ]
        elif mutation == 3:
            lines = [line.replace("human_confirm: false", "human_confrim: false") for line in lines]
        elif mutation == 4:
            lines = [line for line in lines if not line.startswith("generated_")]
            lines += ["generated_by: claude-opus-4-7", "generated_at: 2026-05-04T12:34:56Z"]
        elif mutation == 5:
            lines = [line.replace("type: string", "type: str", 1) for line in lines]
        elif mutation == 6:
            lines = [line.replace("filesystem: none", "filesystem: read_only") for line in lines]
        else:
            lines.insert(2, "version: 1.0")
            lines = [
                line
                for i, line in enumerate(lines)
                if not (line.startswith("version: ") and i != 2)
            ]
    return lines, inputs


def _body(
    rng: random.Random, inputs: list[tuple[str, str]], network: bool, target_lines: int
) -> list[str]:
    py_types = {
        "string": "str",
        "integer": "int",
        "boolean": "bool",
        "array": "list",
        "number": "float",
    }
    params = []
    for i, (arg, kind) in enumerate(inputs):
        default = " = None" if i == len(inputs) - 1 and len(inputs) > 1 else ""
        ann = py_types[kind] + (" | None" if default else "")
        params.append(f"{arg}: {ann}{default}")
    body = ['"""A generated benchmark tool."""', "", "import json", "import re", "import sys"]
    if network:
        body.append("import requests")
    body += ["", 'WORD_RE = re.compile(r"\\w+")', ""]
    helpers = 0
    while len(body) < target_lines - 12:
        helpers += 1
        body += [
            "",
            f"def _helper_{helpers}(value):",
            f'    """Step {helpers} of the work."""',
            "    out = []",
            "    for item in str(value).split():",
            "        if WORD_RE.match(item):",
            "            out.append(item.lower())",
            "    return out",
        ]
    body += ["", "", f"def main({', '.join(params)}) -> dict:", "    result = {}"]
    for arg, _ in inputs:
        body.append(
            f'    result["{arg}"] = _helper_1({arg})' if helpers else f'    result["{arg}"] = {arg}'
        )
    if network:
        body.append(
            '    result["status"] = requests.get("https://example.com", timeout=10).status_code'
        )
    body += [
        "    return result",
        "",
        "",
        'if __name__ == "__main__":',
        "    args = json.loads(sys.stdin.read())",
        "    print(json.dumps(main(**args)))",
    ]
    return body


def generate(folder: Path, count: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    for n in range(count):
        name = f"{rng.choice(WORDS)}_{rng.choice(NOUNS)}_{n}"
        broken = rng.random() < 0.4
        lines, inputs = _manifest(rng, name, broken)
        network = any(line.strip() == "network: true" for line in lines)
        target = rng.randint(40, 150)
        body = _body(rng, inputs, network, max(20, target - len(lines) - 2))
        if broken and rng.random() < 0.2:
            body.insert(4, "import yaml")  # an undeclared third-party import
        text = (
            "# ---\n"
            + "".join(f"# {line}\n" for line in lines)
            + "# ---\n"
            + "\n".join(body)
            + "\n"
        )
        (folder / f"{name}.py").write_text(text, encoding="utf-8")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class _Best:
    """Best wall time and best CPU time (user + system, workers included) of one command."""

    def __init__(self, cmd: list[str]) -> None:
        self.cmd = cmd
        self.wall = self.cpu = float("inf")
        self.proc: subprocess.CompletedProcess[bytes] | None = None

    def run(self) -> subprocess.CompletedProcess[bytes]:
        cpu0, start = _children_cpu(), time.perf_counter()
        self.proc = subprocess.run(self.cmd, capture_output=True)
        self.wall = min(self.wall, time.perf_counter() - start)
        self.cpu = min(self.cpu, _children_cpu() - cpu0)
        return self.proc


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", metavar="DIR", default=None, help="generate into DIR and keep it")
    parser.add_argument(
        "--jobs", type=int, default=None, help="pass --jobs N to the CLI (default: its own choice)"
    )
    args = parser.parse_args(argv)

    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="patch-tui-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        generate(folder, args.files)
        lines = [p.read_text().count("\n") for p in folder.glob("*.py")]
        cmd = [sys.executable, "-m", "patch_tui", "lint", str(folder), "--format", "json"]
        if args.jobs is not None:
            cmd += ["--jobs", str(args.jobs)]
        base = [sys.executable, "-m", "patch_tui", "lint", str(folder), "--format", "json"]
        floor_run, cli_run = _Best([sys.executable, "-c", FLOOR, str(folder)]), _Best(cmd)
        single_run = _Best([*base, "--jobs", "1"]) if args.jobs != 1 else None
        # Interleaved, so a burst of load from elsewhere hits every side alike.
        for _ in range(args.repeat):
            floor = floor_run.run()
            if floor.returncode != 0:
                print(floor.stderr.decode(), file=sys.stderr)
                return 1
            for run in (cli_run, single_run):
                if run is None:
                    continue
                out = run.run()
                if out.returncode not in (0, 1) or b"Traceback" in out.stderr:
                    print(out.stderr.decode(errors="replace"), file=sys.stderr)
                    return 1
            cli = cli_run.proc
            assert cli is not None
            if single_run is not None and single_run.proc is not None:
                # Both runs must report the very same diagnostics, or the timing means nothing.
                if single_run.proc.stdout != cli.stdout:
                    print("--jobs 1 and the default run disagree", file=sys.stderr)
                    return 1
        floor_s, floor_cpu = floor_run.wall, floor_run.cpu
        cli_s, cli_cpu = cli_run.wall, cli_run.cpu
        import json

        diagnostics = json.loads(cli.stdout)
        n = args.files
        print(f"files: {n} ({min(lines)}-{max(lines)} lines each), diagnostics: {len(diagnostics)}")
        print(f"load average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        print(
            f"floor (read + libyaml + ast.parse): {floor_s:5.2f} s wall {n / floor_s:7,.0f} files/s | {floor_cpu:5.2f} s CPU"
        )
        print(
            f"patch-tui lint --format json:       {cli_s:5.2f} s wall {n / cli_s:7,.0f} files/s | {cli_cpu:5.2f} s CPU"
        )
        if single_run is not None:
            one_s, one_cpu = single_run.wall, single_run.cpu
            print(
                f"patch-tui lint --jobs 1:            {one_s:5.2f} s wall {n / one_s:7,.0f} files/s | {one_cpu:5.2f} s CPU"
            )
        ratio = cli_s / floor_s
        print(f"ratio (wall): {ratio:.2f}  (target <= 2.0) {'OK' if ratio <= 2.0 else 'TOO SLOW'}")
        # On a shared machine wall time mostly measures the neighbours; CPU time is the work done.
        print(f"ratio (CPU):  {cli_cpu / floor_cpu:.2f}")
        if single_run is not None:
            print(
                f"--jobs 1 ratio (wall): {single_run.wall / floor_s:.2f}  (CPU): {single_run.cpu / floor_cpu:.2f}"
            )
        return 0
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
