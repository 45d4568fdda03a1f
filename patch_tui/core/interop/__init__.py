"""Export Patch tools to other tool-definition formats, and import theirs as new Patch tools.

Each format module has `export(manifest, *, toolkit=None) -> (definition, LossReport)` and
`import_definition(definition) -> (tool file text, LossReport)`; `FORMATS` is the registry the CLI
and the TUI use. A loss report names, by field path, everything that could not be carried.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from patch_tui.core.interop import arcade, mcp, otc, shinkai
from patch_tui.core.interop.common import (
    FORMAT_TITLES,
    DefinitionError,
    Loss,
    LossReport,
    toolkit_name,
)
from patch_tui.core.manifest import Manifest

ExportFunc = Callable[..., tuple[dict[str, Any], LossReport]]
ImportFunc = Callable[[Any], tuple[str, LossReport]]


@dataclass(frozen=True)
class Format:
    key: str
    title: str
    export: ExportFunc
    import_: ImportFunc  # `import` is a keyword: the modules call it import_definition


FORMATS: dict[str, Format] = {
    module.FORMAT: Format(module.FORMAT, FORMAT_TITLES[module.FORMAT], module.export, module.import_definition)
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
    raise DefinitionError(f"expected a {FORMAT_TITLES.get(fmt, fmt)} definition (a JSON object) or a list of them")


__all__ = [
    "FORMATS",
    "DefinitionError",
    "Format",
    "Loss",
    "LossReport",
    "default_toolkit",
    "export_manifest",
    "get_format",
    "import_definition",
    "split_definitions",
]
