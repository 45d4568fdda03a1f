"""Tool files taken from the Patch runtime's own source: its tests and its generator's examples.

They are TypeScript/JavaScript string literals, so we find every backtick literal that holds a
`# ---` marker, undo its escapes, and split a literal that holds several files (the generator's
prompt: "Few-shot example #N") into one file each. Nothing is executed.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def runtime_source() -> Path:
    """The runtime's source tree: $PATCH_CAT_SRC, else ../shared/reference/patch-cat."""
    env = os.environ.get("PATCH_CAT_SRC")
    return Path(env) if env else REPO.parent / "shared" / "reference" / "patch-cat"


@dataclass(frozen=True)
class Sample:
    name: str  # file-safe: <source file stem>-<n>
    origin: str  # path inside the runtime source and literal number
    text: str


_LITERAL_RE = re.compile(r"`((?:[^`\\]|\\.)*)`", re.S)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "`": "`", "$": "$", '"': '"', "'": "'"}


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), text, flags=re.S)


def _split_examples(text: str) -> list[str]:
    """One file per example: a literal holding prose and several tool files (the generator's
    prompt: "Few-shot example #N") is cut at each heading, and each piece runs from its first
    line that is exactly `# ---` to the end."""
    out = []
    for part in re.split(r"\n(?=Few-shot example|Now: write)", text):
        lines = part.split("\n")
        start = next((i for i, line in enumerate(lines) if line.strip() == "# ---"), None)
        if start is None:
            continue
        piece = "\n".join(lines[start:])
        out.append(piece if part is text else piece.rstrip() + "\n")
    return out


def samples() -> list[Sample]:
    root = runtime_source()
    files = sorted(
        p
        for pattern in ("packages/**/*.ts", "scripts/*.mjs")
        for p in root.glob(pattern)
        if "node_modules" not in p.parts and p.name != "manifest.ts"
    )
    found: list[Sample] = []
    for path in files:
        source = path.read_text(encoding="utf-8")
        n = 0
        for m in _LITERAL_RE.finditer(source):
            literal = m.group(1)
            if "# ---" not in literal or "${" in literal:
                continue
            for text in _split_examples(_unescape(literal)):
                n += 1
                stem = path.name.rsplit(".", 1)[0].replace(".", "_")
                found.append(Sample(f"{stem}-{n:02d}", f"{path.relative_to(root)} #{n}", text))
    return found
