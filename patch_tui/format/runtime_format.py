"""The Patch runtime's reading and writing of a tool file, reimplemented in Python.

The runtime (its `packages/shared/src/manifest.ts`) is the authority on what a
tool file means to our users: which files its `tools/list` loads, the manifest it sees (zod,
defaults filled in, unknown keys dropped), the bytes its writer produces (`serializeManifest`,
js-yaml `dump` with the JSON schema) and the input schema it advertises. patch-tui is stricter
in places (lint), but it must never disagree with the runtime on these facts, so they live here,
in one place, and `make interop` checks them against the real runtime on every sample.

- `parse(text)`: the runtime's parseManifest: the manifest (as the runtime's plain data, in its
  key order, defaults filled in) and the body, or `RuntimeRejects` with the runtime's reasons.
- `serialize(manifest, body)`: serializeManifest, byte for byte.
- `dump_yaml(data)` (format.jsyaml, with js-yaml's scalar resolution): js-yaml `dump(data, {indent: 2, lineWidth: 100, noRefs: true, schema:
  JSON_SCHEMA})`, the style `fmt` writes.
- `input_schema(manifest)`: manifestToInputSchema.
- `source_sha256(manifest, body)`: the hash the runtime's audit records and replay compare.
"""

from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

from patch_tui.format.jsyaml import (  # noqa: F401 - re-exported: callers use runtime_format.NAME
    construct_plain,
    dump_yaml,
    js_json,
    js_number,
    resolves_float,
    resolves_implicitly,
    resolves_int,
    text_at_units,
)

MARKER = "# ---"

# JavaScript's String.prototype.trim() strips these (WhiteSpace + LineTerminator).
_JS_WS = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"

NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")
VERSION_RE = re.compile(r"^\d+\.\d+\.\d+$")
SCOPE_RE = re.compile(r"^[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*$")
INPUT_TYPES = ("string", "number", "integer", "boolean", "array", "object")
FILESYSTEM_MODES = ("none", "read-only", "read-write")


@dataclass(frozen=True)
class Issue:
    """One reason the runtime refuses a manifest: where (a path into the data) and why."""

    path: tuple[str | int, ...]
    message: str

    def __str__(self) -> str:
        where = ".".join(str(p) for p in self.path) or "(root)"
        return f"{where}: {self.message}"


class RuntimeRejects(Exception):
    """The runtime's parser refuses the file; `issues` holds the schema's reasons, if any."""

    def __init__(self, message: str, issues: list[Issue] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.issues = issues or []


@dataclass
class Parsed:
    manifest: dict[str, Any]
    body: str
    open_line: int  # 0-based line index of the opening marker (runtime's line split)
    close_line: int
    issues: list[Issue] = field(default_factory=list)


# --- reading ---------------------------------------------------------------------------------


def split_lines(text: str) -> list[str]:
    """The runtime's `split(/\\r?\\n/)` (a lone \\r does not end a line)."""
    return re.split(r"\r?\n", text)


def is_marker(line: str) -> bool:
    """Whether the runtime takes this line (without its ending) as a `# ---` marker."""
    return line.strip(_JS_WS) == MARKER


def find_markers(lines: list[str]) -> tuple[int | None, int | None]:
    start = next((i for i, line in enumerate(lines) if is_marker(line)), None)
    if start is None:
        return None, None
    end = next((i for i in range(start + 1, len(lines)) if is_marker(lines[i])), None)
    return start, end


def _strip_comment(line: str) -> str:
    if line.startswith("# "):
        return line[2:]
    if line.startswith("#"):
        return line[1:]
    return line


def yaml_text(lines: list[str], start: int, end: int) -> str:
    return "\n".join(_strip_comment(line) for line in lines[start + 1 : end])


def parse(text: str) -> Parsed:
    """The runtime's parseManifest. Raises RuntimeRejects."""
    from patch_tui.format import yamlio

    lines = split_lines(text)
    start, end = find_markers(lines)
    if start is None:
        raise RuntimeRejects(f'Missing opening "{MARKER}" frontmatter marker.')
    if end is None:
        raise RuntimeRejects(f'Missing closing "{MARKER}" frontmatter marker.')
    try:
        data = yamlio.load(yaml_text(lines, start, end)).data
    except yamlio.YamlError as exc:
        raise RuntimeRejects(f"Frontmatter is not valid YAML: {exc.message}") from None
    manifest, issues = validate(data)
    if manifest is None:
        raise RuntimeRejects(
            "Manifest failed schema validation: " + "; ".join(str(i) for i in issues), issues
        )
    body = "\n".join(lines[end + 1 :]).lstrip("\n")
    return Parsed(manifest, body, start, end)


def accepts(text: str) -> bool:
    try:
        parse(text)
    except RuntimeRejects:
        return False
    return True


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if _is_number(value):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


class _Check:
    """A small port of the zod schema: collects every issue, as zod does, and builds the output
    in the schema's key order with defaults filled in and unknown keys dropped."""

    def __init__(self) -> None:
        self.issues: list[Issue] = []

    def fail(self, path: tuple[str | int, ...], message: str) -> None:
        self.issues.append(Issue(path, message))

    def typed(self, path: tuple[str | int, ...], value: Any, kind: str) -> bool:
        if value is _MISSING:
            self.fail(path, "Required")
            return False
        if _kind(value) != kind:
            self.fail(path, f"Expected {kind}, received {_kind(value)}")
            return False
        return True

    def string(
        self,
        path: tuple[str | int, ...],
        value: Any,
        *,
        min1: bool = False,
        regex: re.Pattern[str] | None = None,
        regex_msg: str = "Invalid",
    ) -> Any:
        if not self.typed(path, value, "string"):
            return _MISSING
        ok = True
        if min1 and len(value) < 1:
            self.fail(path, "String must contain at least 1 character(s)")
            ok = False
        if regex is not None and not regex.search(value):
            self.fail(path, regex_msg)
            ok = False
        return value if ok else _MISSING

    def boolean(self, path: tuple[str | int, ...], value: Any, default: bool | None = None) -> Any:
        if value is _MISSING and default is not None:
            return default
        return value if self.typed(path, value, "boolean") else _MISSING

    def enum(
        self,
        path: tuple[str | int, ...],
        value: Any,
        options: tuple[str, ...],
        default: str | None = None,
    ) -> Any:
        if value is _MISSING and default is not None:
            return default
        if value is _MISSING:
            self.fail(path, "Required")
            return _MISSING
        if not isinstance(value, str) or value not in options:
            self.fail(path, f"Invalid enum value. Expected {' | '.join(repr(o) for o in options)}")
            return _MISSING
        return value

    def obj(self, path: tuple[str | int, ...], value: Any) -> bool:
        return self.typed(path, value, "object")


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


_MISSING: Any = _Missing()


def _get(mapping: dict[str, Any], key: str) -> Any:
    return mapping.get(key, _MISSING)


def validate(data: Any) -> tuple[dict[str, Any] | None, list[Issue]]:
    """The zod ToolManifestSchema: (manifest, []) or (None, issues)."""
    c = _Check()
    if data is None:
        c.fail((), "Required")  # js-yaml loads an empty document as undefined
        return None, c.issues
    if not c.obj((), data):
        return None, c.issues
    out: dict[str, Any] = {}
    out["name"] = c.string(
        ("name",),
        _get(data, "name"),
        min1=True,
        regex=NAME_RE,
        regex_msg="Tool name must be snake_case starting with a lowercase letter.",
    )
    out["version"] = c.string(
        ("version",),
        _get(data, "version"),
        regex=VERSION_RE,
        regex_msg="Version must be semver (x.y.z).",
    )
    out["description"] = c.string(("description",), _get(data, "description"), min1=True)
    inputs = _get(data, "inputs")
    if inputs is _MISSING:
        out["inputs"] = []
    elif c.typed(("inputs",), inputs, "array"):
        out["inputs"] = [_input(c, ("inputs", i), inp) for i, inp in enumerate(inputs)]
    out["outputs"] = _outputs(c, _get(data, "outputs"))
    out["capabilities"] = _capabilities(c, _get(data, "capabilities"))
    out["runtime"] = _runtime(c, _get(data, "runtime"))
    auth = _get(data, "external_auth")
    if auth is _MISSING:
        out["external_auth"] = []
    elif c.typed(("external_auth",), auth, "array"):
        out["external_auth"] = [
            c.string(
                ("external_auth", j),
                scope,
                regex=SCOPE_RE,
                regex_msg="external_auth scopes must be '<provider>.<scope>' in snake_case",
            )
            for j, scope in enumerate(auth)
        ]
    for key in ("generated_by", "generated_at"):
        value = _get(data, key)
        if value is not _MISSING:
            out[key] = c.string((key,), value)
    if c.issues:
        return None, c.issues
    return out, []


def _input(c: _Check, path: tuple[str | int, ...], inp: Any) -> Any:
    if not c.obj(path, inp):
        return _MISSING
    out: dict[str, Any] = {}
    out["name"] = c.string((*path, "name"), _get(inp, "name"), min1=True)
    out["type"] = c.enum((*path, "type"), _get(inp, "type"), INPUT_TYPES)
    out["description"] = c.string((*path, "description"), _get(inp, "description"), min1=True)
    out["required"] = c.boolean((*path, "required"), _get(inp, "required"), True)
    if "default" in inp:
        out["default"] = inp["default"]
    out["tainted_ok"] = c.boolean((*path, "tainted_ok"), _get(inp, "tainted_ok"), False)
    items = _get(inp, "items")
    if items is not _MISSING and c.obj((*path, "items"), items):
        out["items"] = {"type": c.string((*path, "items", "type"), _get(items, "type"))}
    return out


def _outputs(c: _Check, value: Any) -> Any:
    if not c.obj(("outputs",), value):
        return _MISSING
    out: dict[str, Any] = {"type": c.string(("outputs", "type"), _get(value, "type"))}
    description = _get(value, "description")
    if description is not _MISSING:
        out["description"] = c.string(("outputs", "description"), description)
    if "items" in value:
        out["items"] = value["items"]
    return out


def _capabilities(c: _Check, value: Any) -> Any:
    if not c.obj(("capabilities",), value):
        return _MISSING
    p = ("capabilities",)
    out = {
        "network": c.boolean((*p, "network"), _get(value, "network"), False),
        "filesystem": c.enum(
            (*p, "filesystem"), _get(value, "filesystem"), FILESYSTEM_MODES, "none"
        ),
        "human_confirm": c.boolean((*p, "human_confirm"), _get(value, "human_confirm"), False),
        "browser": c.boolean((*p, "browser"), _get(value, "browser"), False),
    }
    if out["browser"] is True and out["network"] is False:
        c.fail((*p, "browser"), "capabilities.browser requires capabilities.network: true")
    return out


def _runtime(c: _Check, value: Any) -> Any:
    if not c.obj(("runtime",), value):
        return _MISSING
    p = ("runtime",)
    language = _get(value, "language")
    if language is _MISSING:
        c.fail((*p, "language"), "Required")
    elif language != "python":
        c.fail((*p, "language"), 'Invalid literal value, expected "python"')
    version = _get(value, "python_version")
    packages = _get(value, "packages")
    out: dict[str, Any] = {
        "language": "python",
        "python_version": "3.12"
        if version is _MISSING
        else c.string((*p, "python_version"), version),
    }
    if packages is _MISSING:
        out["packages"] = []
    elif c.typed((*p, "packages"), packages, "array"):
        out["packages"] = [c.string((*p, "packages", j), v) for j, v in enumerate(packages)]
    return out


# --- the listing -----------------------------------------------------------------------------


def input_schema(manifest: dict[str, Any]) -> dict[str, Any]:
    """The runtime's manifestToInputSchema."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    for inp in manifest["inputs"]:
        prop: dict[str, Any] = {"type": inp["type"], "description": inp["description"]}
        if "items" in inp:
            prop["items"] = inp["items"]
        if "default" in inp:
            prop["default"] = inp["default"]
        if inp["tainted_ok"]:
            prop["x-tainted-ok"] = True
        properties[inp["name"]] = prop
        if inp["required"]:
            required.append(inp["name"])
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


def tool_descriptor(manifest: dict[str, Any]) -> dict[str, Any]:
    """One entry of the runtime's tools/list for a tool."""
    return {
        "name": manifest["name"],
        "description": manifest["description"],
        "inputSchema": input_schema(manifest),
    }


# --- writing ---------------------------------------------------------------------------------


def serialize(manifest: dict[str, Any], body: str) -> str:
    """The runtime's serializeManifest(manifest, body)."""
    return f"{MARKER}\n{comment(dump_yaml(manifest))}\n{MARKER}\n\n{body.lstrip(chr(10))}"


def comment(text: str) -> str:
    """YAML lines as `# ` comments (`#` for an empty line), as serializeManifest prefixes them."""
    return "\n".join("#" if not line else f"# {line}" for line in text.rstrip(_JS_WS).split("\n"))


def source_sha256(manifest: dict[str, Any], body: str) -> str:
    """What the runtime's audit records as `tool.source_sha256` and replay compares."""
    return hashlib.sha256(serialize(manifest, body).encode("utf-8")).hexdigest()


@functools.lru_cache(maxsize=64)
def body_bytes(text: str, whole: bytes) -> bytes:
    """What the runtime runs of a file: only the body after the closing marker, with blank
    lines standing in for the lines before it (tracebacks keep the file's line numbers);
    `whole` (the file's bytes) without both markers. Cached by the text: serve runs the same
    tool again and again."""
    lines = split_lines(text)
    start, end = find_markers(lines)
    if start is None or end is None:
        return whole
    return ("\n" * (end + 1) + "\n".join(lines[end + 1 :])).encode("utf-8")


@functools.lru_cache(maxsize=64)
def text_sha256(text: str) -> str | None:
    """`source_sha256` of a file's text as the runtime parses it, or None where it refuses it.
    Cached by the text (its parse and writer cost a few ms a call)."""
    try:
        parsed = parse(text)
    except RuntimeRejects:
        return None
    return source_sha256(parsed.manifest, parsed.body)
