"""Export Patch tools to other tool-definition formats, and import theirs as new Patch tools.

Each format module has `export(manifest, *, toolkit=None) -> (definition, LossReport)` and
`import_definition(definition) -> (tool file text, LossReport)`; `FORMATS` is the registry the CLI
and the TUI use. A loss report names, by field path, everything that could not be carried.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from patch_tui.format.manifest import Manifest
from patch_tui.interop import arcade, mcp, otc, shinkai
from patch_tui.interop.common import (
    FORMAT_TITLES,
    DefinitionError,
    Loss,
    LossReport,
    toolkit_name,
)
from patch_tui.untrusted.text_safety import hidden_kind

ExportFunc = Callable[..., tuple[dict[str, Any], LossReport]]
ImportFunc = Callable[[Any], tuple[str, LossReport]]


@dataclass(frozen=True)
class Format:
    key: str
    title: str
    export: ExportFunc
    import_: ImportFunc  # `import` is a keyword: the modules call it import_definition


FORMATS: dict[str, Format] = {
    module.FORMAT: Format(
        module.FORMAT, FORMAT_TITLES[module.FORMAT], module.export, module.import_definition
    )
    for module in (arcade, otc, mcp, shinkai)
}


def get_format(key: str) -> Format:
    try:
        return FORMATS[key]
    except KeyError:
        raise DefinitionError(f"unknown format `{key}`: use one of {', '.join(FORMATS)}") from None


def export_manifest(
    manifest: Manifest, fmt: str, *, toolkit: str | None = None
) -> tuple[dict[str, Any], LossReport]:
    return get_format(fmt).export(manifest, toolkit=toolkit)


def import_definition(definition: Any, fmt: str) -> tuple[str, LossReport]:
    return get_format(fmt).import_(definition)


def default_toolkit(tool_path: str | Path | None) -> str:
    """The toolkit a tool belongs to when none is given: its folder's name, CamelCase."""
    if tool_path is None:
        return "Tools"
    return toolkit_name(Path(tool_path).resolve().parent.name)


def split_definitions(data: Any, fmt: str) -> list[Any]:
    """The definitions in an import file: one object or a list of them. For MCP, a
    `tools/list` result (`{"tools": [...]}`, or a JSON-RPC response around one) works too."""
    if fmt == "mcp" and isinstance(data, dict):
        if isinstance(data.get("result"), dict) and "jsonrpc" in data:
            data = data["result"]
        if isinstance(data.get("tools"), list) and "name" not in data:
            return list(data["tools"])
    if isinstance(data, list):
        return data
    if isinstance(data, dict):
        return [data]
    raise DefinitionError(
        f"expected a {FORMAT_TITLES.get(fmt, fmt)} definition (a JSON object) or a list of them"
    )


def _reject_constant(name: str) -> Any:
    raise DefinitionError(f"{name} is not JSON")


def load_definitions(raw: bytes, fmt: str) -> list[Any]:
    """The definitions in an import file's bytes (DefinitionError says why there are none)."""
    try:
        data = json.loads(raw.decode("utf-8-sig"), parse_constant=_reject_constant)
    except UnicodeDecodeError:
        raise DefinitionError("not UTF-8 text, so not a JSON definition") from None
    except json.JSONDecodeError as exc:
        raise DefinitionError(
            f"not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None
    except RecursionError:
        raise DefinitionError("the JSON is nested too deeply") from None
    definitions = split_definitions(data, fmt)
    if not definitions:
        raise DefinitionError("no definitions in the file")
    return definitions


@dataclass
class Imported:
    """One imported tool: its (unique) name, its file text and its loss report."""

    name: str
    text: str
    report: LossReport


class ImportProblems(DefinitionError):
    """Several definitions could not be imported; `problems` has one message each."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


def import_all(definitions: list[Any], fmt: str) -> list[Imported]:
    """Import every definition, or none: ImportProblems lists each one that failed. Two
    definitions with one name get distinct tool names (`name`, `name_2`)."""
    from patch_tui.format import toolfile

    out: list[Imported] = []
    problems: list[str] = []
    for i, definition in enumerate(definitions, 1):
        prefix = f"definition {i}: " if len(definitions) > 1 else ""
        try:
            text, report = import_definition(definition, fmt)
        except DefinitionError as exc:
            problems.append(f"{prefix}{exc}")
            continue
        except RecursionError:
            problems.append(f"{prefix}nested too deeply")
            continue
        out.append(Imported(report.tool, text, report))
    if problems:
        raise ImportProblems(problems)
    taken: set[str] = set()
    for item in out:
        new, n = item.name, 2
        while new in taken:
            new, n = f"{item.name}_{n}", n + 1
        taken.add(new)
        if new != item.name:
            tf = toolfile.parse(item.text)
            item.text = toolfile.with_frontmatter(tf, {**tf.data, "name": new})
            item.report.add(
                "name",
                f"renamed to `{new}`: another definition in the file has the name `{item.name}`",
            )
            item.report.tool = item.name = new
    return out


_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Zl", "Zp"})


def definition_json(value: Any) -> str:
    """Pretty JSON for a definition: readable (UTF-8 kept) yet safe on a terminal and in the
    UI, because control, format (bidi, zero-width, tags), separator and surrogate characters are
    written as \\u escapes, which is the same JSON value."""
    text = json.dumps(value, indent=2, ensure_ascii=False) + "\n"
    if text.isascii() and "\x7f" not in text:  # json.dumps already escaped C0 controls
        return text
    return "".join(
        json.dumps(c)[1:-1]
        if c != "\n"
        and (unicodedata.category(c) in _UNSAFE_CATEGORIES or hidden_kind(c) is not None)
        else c
        for c in text
    )


__all__ = [
    "FORMATS",
    "DefinitionError",
    "Format",
    "ImportProblems",
    "Imported",
    "Loss",
    "LossReport",
    "default_toolkit",
    "export_manifest",
    "get_format",
    "definition_json",
    "import_all",
    "import_definition",
    "load_definitions",
    "split_definitions",
]
