"""What the four format modules share, so nothing is written four times.

Here: the loss report (`Loss`, `LossReport`): what could not be carried, by field path; names
(snake_case for Patch, PascalCase tool parts for Arcade and spec 1.0, toolkit names); checks of a
definition's shape. Beside it: `schema` (JSON Schema properties <-> Patch inputs), `oauth`
(external_auth labels <-> OAuth providers and scopes) and `patch_tool` (the Patch fields no format
has a place for; building the imported tool).

Import treats every definition as untrusted: only validated names and `repr()` literals reach the
Python body, and every other string goes through the YAML writer into the frontmatter.
"""

from __future__ import annotations

import keyword
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Literal

from patch_tui.format.manifest import VERSION_RE

Direction = Literal["export", "import"]


class DefinitionError(ValueError):
    """A definition that is not the shape its format says (the CLI prints it and exits 2)."""


# --- the loss report --------------------------------------------------------------------------


@dataclass(frozen=True)
class Loss:
    """One thing that could not be carried. `field` is a dotted path in the *source*: a Patch
    manifest path for an export (`inputs.query.tainted_ok`), a path in the foreign definition for
    an import (`inputSchema.properties.limit.minimum`)."""

    field: str
    message: str

    def to_json(self) -> dict[str, str]:
        return {"field": self.field, "message": self.message}


@dataclass
class LossReport:
    format: str
    direction: Direction
    tool: str = ""
    losses: list[Loss] = field(default_factory=list)

    def add(self, field_path: str, message: str) -> None:
        loss = Loss(field_path, message)
        if loss not in self.losses:
            self.losses.append(loss)

    def fields(self) -> list[str]:
        return [loss.field for loss in self.losses]

    def __bool__(self) -> bool:
        return bool(self.losses)

    def __len__(self) -> int:
        return len(self.losses)

    def to_json(self) -> list[dict[str, str]]:
        return [loss.to_json() for loss in self.losses]

    def text(self) -> str:
        """Plain text for stderr or a panel (the caller renders it as data, never as markup)."""
        title = FORMAT_TITLES.get(self.format, self.format)
        what = f"`{self.tool}` " if self.tool else ""
        if not self.losses:
            return f"{self.direction} {what}{'to' if self.direction == 'export' else 'from'} {title}: nothing lost"
        head = (
            f"{self.direction} {what}{'to' if self.direction == 'export' else 'from'} {title}: "
            f"{len(self.losses)} thing{'s' if len(self.losses) != 1 else ''} not carried"
        )
        return "\n".join([head, *(f"  - {loss.field}: {loss.message}" for loss in self.losses)])


FORMAT_TITLES: dict[str, str] = {
    "arcade": "Arcade",
    "otc": "spec 1.0",
    "mcp": "MCP",
    "shinkai": "Shinkai",
}


# --- names ------------------------------------------------------------------------------------

_ACRONYM_RE = re.compile(r"([A-Z]+)([A-Z][a-z])")
_CAMEL_RE = re.compile(r"([a-z0-9])([A-Z])")


def to_snake(text: str) -> str:
    """`getHTTPResponse`, `Gmail_GetEmails`, `get-weather` -> `get_http_response`,
    `gmail_get_emails`, `get_weather`. May return "" or a name starting with a digit: callers
    pass the result through `patch_name`/`input_name`."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    # A run of separators (` - `) is one `_`; existing underscores stay as they are, which
    # keeps `a__b` and `from_` reversible through to_pascal.
    s = re.sub(r"^[^A-Za-z0-9_]+|[^A-Za-z0-9_]+$", "", ascii_text)
    s = re.sub(r"[^A-Za-z0-9_]+", "_", s)
    s = _ACRONYM_RE.sub(r"\1_\2", s)
    s = _CAMEL_RE.sub(r"\1_\2", s)
    return s.lower().lstrip("_")


def patch_name(text: str, *, fallback: str = "imported_tool") -> str:
    """A valid Patch tool name for any foreign name."""
    s = to_snake(text)
    if not s:
        return fallback
    if not s[0].isalpha():
        s = f"tool_{s}"
    return s[:64]


def input_name(text: str) -> str:
    """A valid Patch input name that is also a Python parameter name."""
    s = to_snake(text)
    if not s:
        s = "arg"
    if not s[0].isalpha():
        s = f"arg_{s}"
    if keyword.iskeyword(s) or s in ("args",):
        s += "_"
    return s


def unique(name: str, taken: set[str]) -> str:
    out, n = name, 2
    while out in taken:
        out, n = f"{name}_{n}", n + 1
    taken.add(out)
    return out


def to_pascal(name: str) -> str:
    """`extract_pdf_table` -> `ExtractPdfTable`, reversible through `to_snake`: when the plain
    join would not come back (`tool_2`, `a_b`), the parts keep their underscores (`Tool_2`)."""
    parts = name.split("_")
    joined = "".join(p[:1].upper() + p[1:] for p in parts)
    if to_snake(joined) == name:
        return joined
    return "_".join(p[:1].upper() + p[1:] for p in parts)


def toolkit_name(text: str) -> str:
    """A toolkit name safe inside `Toolkit.Name@version` and spec 1.0's name pattern:
    `sample_tools` -> `SampleTools`; an already CamelCase name (`Gmail`, `SMS`) is kept."""
    if re.fullmatch(r"[A-Za-z][A-Za-z0-9]*", text):
        return text[0].upper() + text[1:]
    s = to_snake(text).strip("_")
    if not s:
        return "Tools"
    pascal = "".join(p[:1].upper() + p[1:] for p in s.split("_"))
    return pascal if pascal[0].isalpha() else f"T{pascal}"


_QUALIFIED_RE = re.compile(r"^(?P<toolkit>[^.@]+)\.(?P<tool>[^@]+)@(?P<version>.+)$")


def split_qualified(text: Any) -> tuple[str, str, str] | None:
    """`Toolkit.Name@1.0.0` -> (toolkit, name, version), or None."""
    if not isinstance(text, str):
        return None
    m = _QUALIFIED_RE.match(text)
    return (m["toolkit"], m["tool"], m["version"]) if m else None


def import_version(value: Any, where: str, report: LossReport) -> str:
    """A strict x.y.z version for any foreign version (padding `1.2` to `1.2.0`)."""
    if value is None:
        return "1.0.0"
    text = str(value).strip()
    if VERSION_RE.match(text):
        return text
    m = re.fullmatch(r"v?(\d+)(?:\.(\d+))?(?:\.(\d+))?", text)
    if m:
        out = ".".join(str(int(g or 0)) for g in m.groups())
        report.add(where, f"version `{text}` is not strict x.y.z: written as {out}")
        return out
    report.add(where, f"version `{text}` is not semver: written as 1.0.0")
    return "1.0.0"


def one_line(text: Any) -> str:
    """A description on one line (YAML keeps it either way; Patch descriptions are sentences)."""
    return " ".join(str(text).split()) if text is not None else ""


def with_enum(description: str, values: list[Any]) -> str:
    """Keep an enum where Patch has room for it: in the description, in the same sentence."""
    shown = ", ".join(str(v) for v in values)
    base = description.rstrip().rstrip(".")
    return f"{base} (one of: {shown})." if base else f"One of: {shown}."


def require_mapping(definition: Any, what: str) -> dict[str, Any]:
    if not isinstance(definition, dict):
        raise DefinitionError(
            f"a {what} definition must be a JSON object, not {type(definition).__name__}"
        )
    return definition


def require_str(definition: dict[str, Any], key: str, what: str) -> str:
    value = definition.get(key)
    if not isinstance(value, str) or not value.strip():
        raise DefinitionError(f"a {what} definition needs `{key}` (a non-empty string)")
    return value


def report_unknown_keys(
    definition: dict[str, Any], known: set[str], report: LossReport, prefix: str = ""
) -> None:
    for key in definition:
        if key not in known:
            report.add(f"{prefix}{key}", f"`{key}` has no place in a Patch tool (not kept)")
