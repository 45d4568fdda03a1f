"""Rules on the manifest's fields (PT001-PT024). PT001-PT003 come from the parser itself.

Rules read the raw YAML data (not the pydantic model) so each problem is reported at its own line,
and several problems in one manifest are all reported at once. Each rule's docstring is its entry
in `patch-tui rules CODE` and docs/rules.md: first line what it catches, then "Why:" and "Fix:".
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterator
from pathlib import PurePath
from typing import Any

from patch_tui.format import yamlio
from patch_tui.format.fields import (
    AUTH_PROVIDERS,
    AUTH_SCOPE_RE,
    CAPABILITY_FIELDS,
    FILESYSTEM_MODES,
    GENERATED_AT_RE,
    INPUT_FIELDS,
    INPUT_TYPES,
    NAME_RE,
    OUTPUT_FIELDS,
    PACKAGE_RE,
    PYTHON_VERSION_RE,
    REQUIRED_FIELDS,
    RUNTIME_FIELDS,
    TOP_LEVEL_FIELDS,
    VERSION_RE,
    fits_json_type,
    json_type,
)
from patch_tui.format.toolfile import Span, ToolFile
from patch_tui.format.yamlio import Path
from patch_tui.lint.engine import Diagnostic, Edit, Fix, LintContext, rule
from patch_tui.untrusted.text_safety import visible

# The parser reports these; registering them makes them selectable and documented.
_PARSER_RULES = (
    (
        "PT001",
        "frontmatter-markers",
        "no opening or no closing `# ---` marker",
        """No opening or no closing `# ---` marker (also: a binary or non-UTF-8 file).

Why: the Patch runtime finds the manifest between the first two lines that read `# ---`. Without
both markers it cannot read the tool at all, and nothing else can be checked.

Fix: put `# ---` on its own line, then the manifest as `# ` comment lines, then `# ---` again,
above the Python code. Save the file as UTF-8 text.""",
    ),
    (
        "PT002",
        "invalid-yaml",
        "frontmatter is not valid YAML, or uses tags or duplicate keys",
        """The frontmatter is not valid YAML, or uses tags or duplicate keys.

Why: the Patch runtime refuses a tool whose frontmatter is not valid YAML or repeats a key.
Tags like `!!python/object/apply` run code in careless readers (patch-tui is stricter than the
runtime here: it refuses every tag, where the runtime reads `!!str` and the like).

Fix: correct the YAML at the reported line (indentation, a missing `:`, an unclosed quote).
Remove `!!tags`, and keep only one of each key.""",
    ),
    (
        "PT003",
        "uncommented-line",
        "a line between the markers that is not a comment",
        """A line between the `# ---` markers that is not a `#` comment.

Why: the frontmatter must stay a Python comment so the file is still valid Python; an
uncommented line is both a YAML and a Python problem.

Fix: start the line with `# ` like the other manifest lines, or move it below the closing
marker.""",
    ),
)


def _parser_rule(doc: str) -> Any:
    """A rule that reports nothing itself: the parser's ParseProblems become its diagnostics."""

    def parser_rule(ctx: LintContext) -> Iterator[Diagnostic]:
        return iter(())

    parser_rule.__doc__ = doc
    return parser_rule


for _code, _name, _summary, _doc in _PARSER_RULES:
    rule(_code, _name, family="structure", summary=_summary, needs_manifest=False)(
        _parser_rule(_doc)
    )


# --- helpers ---------------------------------------------------------------------------------


def _show(value: Any) -> str:
    """A value as it would be written in YAML, safe to print (hidden characters made visible)."""
    if isinstance(value, str):
        return visible(value)
    return visible(json.dumps(value, ensure_ascii=False))


def _node(ctx: LintContext, path: Path) -> yamlio.Node | None:
    return ctx.tf.nodes.get(tuple(path))


def _raw(ctx: LintContext, path: Path) -> str | None:
    node = _node(ctx, path)
    return node.raw if node is not None else None


def _is_plain(ctx: LintContext, path: Path) -> bool:
    node = _node(ctx, path)
    return node is not None and node.plain


def _quote(text: str) -> str:
    """A YAML double-quoted scalar (JSON's escapes are valid YAML ones)."""
    return json.dumps(text, ensure_ascii=False)


def _quote_fix(ctx: LintContext, path: Path, title: str | None = None) -> Fix | None:
    """Quote a plain scalar exactly as written, so every reader sees the same string."""
    node = _node(ctx, path)
    if node is None or not node.plain or node.raw is None:
        return None
    return Fix(title or f"quote it: {_quote(node.raw)}", (ctx.node_edit(path, _quote(node.raw)),))


def _inputs(ctx: LintContext) -> list[tuple[int, dict[str, Any]]]:
    inputs = ctx.get("inputs")
    if not isinstance(inputs, list):
        return []
    return [(i, inp) for i, inp in enumerate(inputs) if isinstance(inp, dict)]


def _suggest(word: str, choices: tuple[str, ...] | list[str], cutoff: float = 0.7) -> list[str]:
    lowered = {c.lower(): c for c in choices}
    if word.lower() in lowered:
        return [lowered[word.lower()]]
    squashed = {re.sub(r"[-_ ]", "", c.lower()): c for c in choices}
    key = re.sub(r"[-_ ]", "", word.lower())
    if key in squashed:
        return [squashed[key]]
    return difflib.get_close_matches(word, list(choices), n=3, cutoff=cutoff)


def _did_you_mean(matches: list[str]) -> str:
    if not matches:
        return ""
    return " (did you mean " + " or ".join(f"`{m}`" for m in matches) + "?)"


# --- PT004 -----------------------------------------------------------------------------------


def _mappings(ctx: LintContext) -> Iterator[tuple[Path, dict[str, Any], tuple[str, ...], str]]:
    """Every mapping of the manifest with its known keys and a name for messages."""
    yield (), ctx.data, TOP_LEVEL_FIELDS, "the manifest"
    for i, inp in _inputs(ctx):
        yield ("inputs", i), inp, INPUT_FIELDS, "input"
        if isinstance(inp.get("items"), dict):
            yield ("inputs", i, "items"), inp["items"], ("type",), "items"
    for key, fields in (
        ("outputs", OUTPUT_FIELDS),
        ("capabilities", CAPABILITY_FIELDS),
        ("runtime", RUNTIME_FIELDS),
    ):
        value = ctx.get(key)
        if isinstance(value, dict):
            yield (key,), value, fields, f"`{key}`"
    items = ctx.get("outputs", "items")
    if isinstance(items, dict):
        yield ("outputs", "items"), items, ("type",), "`outputs.items`"


@rule("PT004", "unknown-field", family="manifest", summary="an unknown field")
def unknown_field(ctx: LintContext) -> Iterator[Diagnostic]:
    """An unknown field, at any level of the manifest, with "did you mean" for near misses.

    Why: the Patch runtime ignores fields it does not know, so a typo like `human_confrim: true`
    silently leaves the safe default in place: the tool runs without the confirmation you asked
    for. Unknown fields also make the manifest harder to read for reviewers and other tools.

    Fix: rename the field to the suggested one (`patch-tui lint --fix` does it when there is a
    single obvious suggestion), or remove it.
    """
    for path, mapping, known, where in _mappings(ctx):
        for key in mapping:
            if key in known:
                continue
            matches = [m for m in _suggest(str(key), known) if m not in mapping]
            fix = None
            if len(matches) == 1 and (*path, key) in ctx.tf.nodes:
                fix = Fix(
                    f"rename `{_show(key)}` to `{matches[0]}`",
                    (ctx.node_edit((*path, key), matches[0], key=True),),
                )
            if where == "input":  # named only when needed: most manifests have no unknown field
                where = f"input `{_show(mapping.get('name', path[-1]))}`"
            hint = _did_you_mean(matches) or f": {where} has only " + ", ".join(
                f"`{k}`" for k in known
            )
            yield ctx.diag(
                "PT004",
                f"unknown field `{_show(key)}` in {where}{hint}",
                *path,
                key,
                severity="warning",
                key=True,
                fix=fix,
            )


# --- PT010-PT013 -------------------------------------------------------------------------------

_DEFAULTS: dict[str, Any] = {
    "inputs": [],
    "outputs": {"type": "object"},
    "capabilities": {"network": False, "filesystem": "none", "human_confirm": False},
    "runtime": {"language": "python", "python_version": "3.12", "packages": []},
}


@rule("PT010", "missing-field", family="manifest", summary="a required field is missing")
def missing_field(ctx: LintContext) -> Iterator[Diagnostic]:
    """A required field is missing (name, version, description, inputs, outputs, capabilities,
    runtime; an input's name, type or description, or an empty one; `outputs.type`;
    `runtime.language`).

    Why: the Patch runtime refuses a manifest without its required fields, so the tool cannot be
    registered or called, and one such file in the toolbox's index makes its whole tool list
    fail. An input without a name cannot be passed to `main()`; the runtime also requires a
    non-empty description for every input (the host AI reads it to fill the argument in).

    Fix: add the field. `inputs: []` declares a tool without arguments; `capabilities` and
    `runtime` are small mappings, e.g. `capabilities: {network: false, filesystem: none,
    human_confirm: false}`. The quick fix adds the least-privilege defaults for you to review.
    """
    for name in REQUIRED_FIELDS:
        if name in ctx.data:
            continue
        fix = None
        if name in _DEFAULTS:
            fix = ctx.set_value_fix(
                f"add `{name}` with defaults", (name,), _DEFAULTS[name], safe=False
            )
        yield ctx.diag(
            "PT010", f"required field `{name}` is missing: add `{name}:` to the manifest", fix=fix
        )
    for i, inp in _inputs(ctx):
        if "name" not in inp:
            yield ctx.diag(
                "PT010",
                f"input {i + 1} has no `name`: add the name of the matching main() parameter",
                "inputs",
                i,
            )
        label = f"input `{_show(inp['name'])}`" if isinstance(inp.get("name"), str) else f"input {i + 1}"
        if "type" not in inp:
            yield ctx.diag(
                "PT010", f"{label} has no `type`: the runtime refuses it: add e.g. `type: string`", "inputs", i
            )
        description = inp.get("description")
        if "description" not in inp:
            yield ctx.diag(
                "PT010",
                f"{label} has no `description`: the runtime refuses it: say in one sentence what to pass",
                "inputs",
                i,
            )
        elif description == "" or (description is None and _raw(ctx, ("inputs", i, "description")) in ("", None)):
            yield ctx.diag(
                "PT010",
                f"{label} has an empty `description`: the runtime refuses it: say in one sentence what to pass",
                "inputs",
                i,
                "description",
            )
    outputs = ctx.get("outputs")
    if isinstance(outputs, dict) and "type" not in outputs:
        yield ctx.diag(
            "PT010", "`outputs` has no `type`: the runtime refuses it: add e.g. `type: object`", "outputs"
        )
    runtime = ctx.get("runtime")
    if isinstance(runtime, dict) and "language" not in runtime:
        yield ctx.diag(
            "PT010",
            "`runtime` has no `language`: the runtime refuses it: add `language: python`",
            "runtime",
            fix=ctx.set_value_fix("add `language: python`", ("runtime", "language"), "python"),
        )


@rule("PT011", "name-not-snake-case", family="manifest", summary="name is not snake_case")
def name_not_snake_case(ctx: LintContext) -> Iterator[Diagnostic]:
    """The tool's name (or an input's name) is not snake_case `^[a-z][a-z0-9_]*$`.

    Why: the tool name is its identity in the registry and the function name an AI agent calls;
    input names are Python parameter names of `main()`. Both must be plain identifiers.

    Fix: use lowercase letters, digits and `_`, starting with a letter: `Fetch-URL` becomes
    `fetch_url`.
    """
    targets: list[tuple[Path, Any, str]] = [(("name",), ctx.get("name"), "name")]
    targets += [(("inputs", i, "name"), inp.get("name"), "input name") for i, inp in _inputs(ctx)]
    for path, name, what in targets:
        if isinstance(name, str) and name and not NAME_RE.match(name):
            suggestion = re.sub(r"[^a-z0-9_]+", "_", name.strip().lower()).strip("_")
            suggestion = re.sub(r"_+", "_", suggestion)
            if suggestion and not suggestion[0].isalpha():
                suggestion = "t_" + suggestion
            good = bool(suggestion) and NAME_RE.match(suggestion) is not None
            hint = f", e.g. `{suggestion}`" if good else ""
            fix = None
            if good and path == ("name",) and path in ctx.tf.nodes:
                # Renaming a tool changes its identity in the registry: offered, never automatic.
                fix = Fix(
                    f"rename to `{suggestion}`", (ctx.node_edit(path, suggestion),), safe=False
                )
            yield ctx.diag(
                "PT011",
                f"{what} `{_show(name)}` is not snake_case: use lowercase letters, digits and `_`, "
                f"starting with a letter{hint}",
                *path,
                fix=fix,
            )
        elif isinstance(name, str) and not name and path == ("name",):
            yield ctx.diag("PT011", "name is empty: give the tool a snake_case name", *path)


@rule("PT012", "version-not-semver", family="manifest", summary="version is not strict x.y.z")
def version_not_semver(ctx: LintContext) -> Iterator[Diagnostic]:
    """The version is not strict semver `x.y.z`.

    Why: the registry never overwrites a published version: every change gets a new one, and
    versions are compared as three numbers. `1.0`, `v1.0.0` or `1.0.0-beta` cannot be compared.

    Fix: write three dot-separated numbers without leading zeros, e.g. `version: 1.0.0`.
    """
    version = ctx.get("version")
    if isinstance(version, str) and not VERSION_RE.match(version):
        parts = re.findall(r"\d+", version)
        hint = ""
        fix = None
        if 1 <= len(parts) <= 3:
            guess = ".".join(str(int(p)) for p in (parts + ["0", "0"])[:3])
            hint = f" (e.g. {guess})"
            # "1.0" and "v1.2.3" only lack parts or carry a prefix: the same version.
            same = re.fullmatch(r"[vV]?\d+(\.\d+){0,2}", version.strip()) is not None
            fix = ctx.set_value_fix(f"write {guess}", ("version",), guess, safe=same)
        yield ctx.diag(
            "PT012",
            f"version `{_show(version)}` is not strict semver: write it as x.y.z{hint or ', e.g. 1.0.0'}",
            "version",
            fix=fix,
        )


# A full stop ends a sentence unless it follows one of these (lower-cased, without the dot).
_ABBREVIATIONS = frozenset(
    "e.g i.e etc vs cf approx incl resp no nos fig mr mrs ms dr st jr sr e.x a.k.a u.s et al".split()
)
_SENTENCE_END_RE = re.compile(r"([.!?]+)[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")


def count_sentences(text: str) -> int:
    """How many sentences a description has. "e.g.", "21.5" and "v1.2" do not end one."""
    text = " ".join(text.split())
    if not text:
        return 0
    count = 1
    for match in _SENTENCE_END_RE.finditer(text):
        before = text[: match.start(1)].rsplit(" ", 1)[-1].lower().rstrip(".")
        if match.group(1) == "." and (before in _ABBREVIATIONS or len(before) == 1):
            continue  # "e.g. X", "J. Smith"
        count += 1
    return count


@rule(
    "PT013",
    "description-sentence",
    family="manifest",
    summary="description empty or more than one sentence",
)
def description_sentence(ctx: LintContext) -> Iterator[Diagnostic]:
    """The description is empty (error), or is more than one sentence (warning).

    Why: the description is what an AI agent reads to decide when to call the tool, and what a
    person reads when approving it. The format asks for one sentence: long descriptions hide
    instructions and get truncated by hosts.

    Fix: write one sentence that says what the tool does, e.g. "Extract tables from a PDF file
    as JSON." Put details in the input descriptions or the code's docstring.
    """
    if "description" in ctx.data:
        desc = ctx.get("description")
        if desc is None or (isinstance(desc, str) and not desc.strip()):
            yield ctx.diag(
                "PT013",
                "description is empty: write one sentence saying what the tool does",
                "description",
            )
        elif isinstance(desc, str) and count_sentences(desc) > 1:
            yield ctx.diag(
                "PT013",
                f"description has {count_sentences(desc)} sentences: keep it to one sentence "
                "saying what the tool does",
                "description",
                severity="warning",
            )
    for i, inp in _inputs(ctx):
        desc = inp.get("description")
        if isinstance(desc, str) and count_sentences(desc) > 1:
            yield ctx.diag(
                "PT013",
                f"the description of input `{_show(inp.get('name', i))}` has "
                f"{count_sentences(desc)} sentences: keep it to one",
                "inputs",
                i,
                "description",
                severity="warning",
            )


# --- PT014-PT016: inputs ---------------------------------------------------------------------

# Type names people write out of habit, mapped to the JSON type they mean.
_TYPE_ALIASES = {
    "str": "string",
    "text": "string",
    "int": "integer",
    "float": "number",
    "double": "number",
    "bool": "boolean",
    "list": "array",
    "dict": "object",
    "map": "object",
}


@rule("PT014", "bad-input-type", family="manifest", summary="an input type is not a JSON type")
def bad_input_type(ctx: LintContext) -> Iterator[Diagnostic]:
    """An input's type (or an `items` or `outputs` type) is not string, number, integer,
    boolean, array or object.

    Why: the runtime and every AI host turn these types into a JSON Schema; Python names like
    `str` or `int` mean nothing there, so the tool is rejected or gets unchecked arguments.

    Fix: use the JSON name: `str` -> `string`, `int` -> `integer`, `float` -> `number`, `bool` ->
    `boolean`, `list` -> `array`, `dict` -> `object` (the quick fix does this).
    """
    targets: list[tuple[Path, tuple[str, ...]]] = []
    for i, _inp in _inputs(ctx):
        targets.append((("inputs", i, "type"), INPUT_TYPES))
        targets.append((("inputs", i, "items", "type"), INPUT_TYPES))
    targets.append((("outputs", "type"), (*INPUT_TYPES, "null")))
    targets.append((("outputs", "items", "type"), INPUT_TYPES))
    if isinstance(ctx.get("outputs", "items"), str):
        targets.append((("outputs", "items"), INPUT_TYPES))
    for path, allowed in targets:
        value = ctx.get(*path)
        if not isinstance(value, str) or value in allowed:
            continue
        alias = _TYPE_ALIASES.get(value.lower())
        matches = [alias] if alias else _suggest(value, allowed)
        fix = None
        if len(matches) == 1 and tuple(path) in ctx.tf.nodes:
            fix = Fix(
                f"use `{matches[0]}`",
                (ctx.node_edit(path, matches[0]),),
                safe=alias is not None or value.lower() == matches[0],
            )
        yield ctx.diag(
            "PT014",
            f"type `{_show(value)}` is not a JSON type{_did_you_mean(matches)}: use one of "
            + ", ".join(allowed),
            *path,
            fix=fix,
        )


def _infer_items_type(default: Any) -> str:
    kinds = {json_type(v) for v in default} if isinstance(default, list) and default else set()
    return kinds.pop() if len(kinds) == 1 else "string"


@rule("PT015", "array-without-items", family="manifest", summary="an array input without items")
def array_without_items(ctx: LintContext) -> Iterator[Diagnostic]:
    """An input of type `array` without `items`.

    Why: hosts build a JSON Schema from the inputs, and an array schema without `items` lets the
    AI send anything in it (strict hosts reject the tool outright). The runtime accepts it and
    lists the array as declared (its own generator writes such tools), so this is a warning.

    Fix: declare the element type, e.g. `items: {type: string}`. The quick fix adds
    `items: {type: string}`, or the type of the default's elements.
    """
    for i, inp in _inputs(ctx):
        if inp.get("type") == "array" and "items" not in inp:
            kind = _infer_items_type(inp.get("default"))
            fix = ctx.set_value_fix(
                f"add `items: {{type: {kind}}}`", ("inputs", i, "items"), {"type": kind}
            )
            yield ctx.diag(
                "PT015",
                f"array input `{_show(inp.get('name', i))}` has no `items`: add `items: {{type: {kind}}}` "
                "(or the type of its elements)",
                "inputs",
                i,
                "type",
                severity="warning",
                fix=fix,
            )


@rule("PT016", "duplicate-input", family="manifest", summary="two inputs share a name")
def duplicate_input(ctx: LintContext) -> Iterator[Diagnostic]:
    """Two inputs share a name.

    Why: inputs become keyword arguments of `main()` and properties of a JSON object: a name can
    only appear once, and which declaration wins depends on the reader.

    Fix: rename one of them (and the matching `main()` parameter), or remove the duplicate.
    """
    seen: dict[str, int] = {}
    for i, inp in _inputs(ctx):
        name = inp.get("name")
        if not isinstance(name, str):
            continue
        if name in seen:
            line = ctx.span("inputs", seen[name], "name").line
            yield ctx.diag(
                "PT016",
                f"input `{_show(name)}` is declared twice (first on line {line}): rename or remove one",
                "inputs",
                i,
                "name",
            )
        else:
            seen[name] = i


# --- PT017-PT021 -----------------------------------------------------------------------------


@rule(
    "PT017",
    "bad-filesystem",
    family="manifest",
    summary="filesystem is not none / read-only / read-write",
)
def bad_filesystem(ctx: LintContext) -> Iterator[Diagnostic]:
    """`capabilities.filesystem` is not `none`, `read-only` or `read-write`.

    Why: the filesystem capability tells people and the runtime what the tool may touch; an
    unknown value cannot be enforced or reviewed, and lint cannot check the code against it.

    Fix: write one of `none`, `read-only`, `read-write` (spelled with a hyphen). The quick fix
    corrects spellings like `read_only` or `ReadOnly`.
    """
    value = ctx.get("capabilities", "filesystem")
    if isinstance(value, str) and value not in FILESYSTEM_MODES:
        matches = _suggest(value, FILESYSTEM_MODES, cutoff=0.6)
        exact = [
            m for m in matches if re.sub(r"[-_ ]", "", m) == re.sub(r"[-_ ]", "", value.lower())
        ]
        fix = None
        if len(matches) == 1 and ("capabilities", "filesystem") in ctx.tf.nodes:
            fix = Fix(
                f"use `{matches[0]}`",
                (ctx.node_edit(("capabilities", "filesystem"), matches[0]),),
                safe=bool(exact),
            )
        yield ctx.diag(
            "PT017",
            f"filesystem `{_show(value)}` is not none, read-only or read-write{_did_you_mean(matches)}",
            "capabilities",
            "filesystem",
            fix=fix,
        )


@rule("PT018", "bad-language", family="manifest", summary="runtime.language is not python")
def bad_language(ctx: LintContext) -> Iterator[Diagnostic]:
    """`runtime.language` is not `python`.

    Why: the Patch runtime only runs Python tools; any other value makes it refuse the tool.

    Fix: write `language: python` (lowercase).
    """
    value = ctx.get("runtime", "language")
    if isinstance(value, str) and value != "python":
        fix = None
        if value.strip().lower() in ("python", "python3", "py", "cpython"):
            fix = Fix("use `python`", (ctx.node_edit(("runtime", "language"), "python"),))
        yield ctx.diag(
            "PT018",
            f"runtime.language `{_show(value)}` is not supported: write `language: python`",
            "runtime",
            "language",
            fix=fix,
        )


@rule(
    "PT019",
    "unpinned-package",
    family="manifest",
    summary="a package is not pinned as name==version",
)
def unpinned_package(ctx: LintContext) -> Iterator[Diagnostic]:
    """A package in `runtime.packages` is not pinned as `name==x.y.z`.

    Why: an unpinned package installs whatever version is newest when the tool runs, so the same
    tool can behave differently tomorrow, or pull in a compromised release. The runtime only
    accepts `^[a-zA-Z0-9._-]+==\\d+(\\.\\d+){0,2}$`.

    Fix: pin the exact version you tested, e.g. `requests==2.32.3` (no ranges, extras or URLs).
    """
    packages = ctx.get("runtime", "packages")
    if not isinstance(packages, list):
        return
    for i, pkg in enumerate(packages):
        if not isinstance(pkg, str) or PACKAGE_RE.match(pkg):
            continue
        name = re.split(r"[\s\[<>=!~;@]", pkg.strip(), maxsplit=1)[0] or "package"
        yield ctx.diag(
            "PT019",
            f"package `{_show(pkg)}` is not pinned: write `{_show(name)}==x.y.z` with the exact version you tested",
            "runtime",
            "packages",
            i,
        )


@rule(
    "PT020",
    "bad-external-auth",
    family="manifest",
    summary="an external_auth entry is not provider.scope",
)
def bad_external_auth(ctx: LintContext) -> Iterator[Diagnostic]:
    """An `external_auth` entry is not `provider.scope`, or its provider is not supported.

    Why: the runtime refuses the tool unless every entry matches
    `^[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*$` (one dot: `gmail.read.all` is refused). It mints a
    short-lived token for each `provider.scope` before the call and injects it as
    `PATCH_ACCESS_TOKEN`. Only gmail, google_calendar, slack, github and linear are supported
    (patch-tui is stricter than the runtime here: an unknown provider is an error too); anything
    else means the tool runs without the credentials it expects.

    Fix: write entries like `gmail.read` or `slack.send_message`, with a supported provider.
    """
    entries = ctx.get("external_auth")
    if not isinstance(entries, list):
        return
    for i, entry in enumerate(entries):
        if not isinstance(entry, str):
            continue
        m = AUTH_SCOPE_RE.match(entry)
        if not m:
            yield ctx.diag(
                "PT020",
                f"external_auth entry `{_show(entry)}` is not `provider.scope`: write e.g. `gmail.read`",
                "external_auth",
                i,
            )
            continue
        provider = m.group(1)
        if provider not in AUTH_PROVIDERS:
            matches = _suggest(provider, AUTH_PROVIDERS, cutoff=0.6)
            fix = None
            if len(matches) == 1 and ("external_auth", i) in ctx.tf.nodes:
                fixed = matches[0] + entry[len(provider) :]
                fix = Fix(
                    f"use `{fixed}`", (ctx.node_edit(("external_auth", i), fixed),), safe=False
                )
            yield ctx.diag(
                "PT020",
                f"unknown provider `{_show(provider)}`{_did_you_mean(matches)}: supported are "
                + ", ".join(AUTH_PROVIDERS),
                "external_auth",
                i,
                fix=fix,
            )


@rule(
    "PT021",
    "bad-provenance",
    family="manifest",
    summary="generated_at not ISO 8601 UTC, or only one of generated_by/generated_at",
)
def bad_provenance(ctx: LintContext) -> Iterator[Diagnostic]:
    """`generated_at` is not ISO 8601 UTC, or only one of `generated_by` / `generated_at` is set.

    Why: the provenance stamp tells reviewers which model wrote a tool and when; half a stamp, or
    a time in an unknown zone, cannot be trusted or compared.

    Fix: set both, e.g. `generated_by: claude-opus-4-7` and
    `generated_at: "2026-05-04T12:34:56Z"` (UTC, with seconds and a `Z`), or remove both.
    """
    by, at = ctx.get("generated_by"), ctx.get("generated_at")
    if isinstance(at, str) and not GENERATED_AT_RE.match(at):
        fix = None
        utc = _to_utc(at)
        if utc is not None and ("generated_at",) in ctx.tf.nodes:
            fix = Fix(f"write {utc}", (ctx.node_edit(("generated_at",), _quote(utc)),))
        yield ctx.diag(
            "PT021",
            f'generated_at `{_show(at)}` is not ISO 8601 UTC: write it like "2026-05-04T12:34:56Z"'
            + (f' (here "{utc}")' if utc else ""),
            "generated_at",
            fix=fix,
        )
    has_by, has_at = (
        by is not None and "generated_by" in ctx.data,
        at is not None and "generated_at" in ctx.data,
    )
    if has_by and not has_at:
        yield ctx.diag(
            "PT021",
            "generated_by is set without generated_at: add when the tool was generated (UTC), or remove both",
            "generated_by",
            key=True,
        )
    if has_at and not has_by:
        yield ctx.diag(
            "PT021",
            "generated_at is set without generated_by: add the model that generated the tool, or remove both",
            "generated_at",
            key=True,
        )


def _to_utc(text: str) -> str | None:
    """A timestamp with an explicit zone, converted to the canonical UTC stamp."""
    from datetime import UTC, datetime

    try:
        parsed = datetime.fromisoformat(text.strip().replace("z", "Z"))
    except ValueError:
        return None
    if parsed.tzinfo is None:
        return None  # an unknown zone: guessing would change the meaning
    return parsed.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# --- PT022-PT024 -----------------------------------------------------------------------------

_STR, _BOOL, _LIST, _DICT, _ANY = "string", "boolean", "list", "mapping", "any"

_TOP_TYPES = {
    "name": _STR,
    "version": _STR,
    "description": _STR,
    "inputs": _LIST,
    "outputs": _DICT,
    "capabilities": _DICT,
    "runtime": _DICT,
    "external_auth": _LIST,
    "generated_by": _STR,
    "generated_at": _STR,
}
_INPUT_TYPES = {
    "name": _STR,
    "type": _STR,
    "description": _STR,
    "required": _BOOL,
    "default": _ANY,
    "tainted_ok": _BOOL,
    "items": _DICT,
}
_OUTPUT_TYPES = {"type": _STR, "description": _STR, "items": _ANY}
_CAP_TYPES = {"network": _BOOL, "filesystem": _STR, "human_confirm": _BOOL, "browser": _BOOL}
_RUNTIME_TYPES = {"language": _STR, "python_version": _ANY, "packages": _LIST}
_ITEMS_TYPES = {"type": _STR}

# The first characters of every plain scalar YAML 1.1 reads as a bool, null, number or date.
_YAML11_NUMBER_START = frozenset("0123456789+-.~")
_YAML11_WORD_START = frozenset("yYnNtTfFoO")


def _type_name(value: Any) -> str:
    if value is None:
        return "empty"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return "a string"


_FINE_TYPES = {(_BOOL, bool), (_LIST, list), (_DICT, dict)}


def _fine(value: Any, expected: str) -> bool:
    """The quick answer for nearly every value of a real manifest (checked before building the
    generator and the label of _check_value)."""
    kind = type(value)
    if kind is str:
        if expected != _STR:
            return False
        if not value:
            return True
        first = value[0]
        # YAML 1.1 reads numbers and dates (a digit, sign, dot) and words of at most five
        # letters (yes, no, on, off, true, False, null, y, n) as non-strings.
        if first in _YAML11_NUMBER_START:
            return False
        return first not in _YAML11_WORD_START or len(value) > 5
    return (expected, kind) in _FINE_TYPES


def _check_value(
    ctx: LintContext, path: Path, value: Any, expected: str, label: str
) -> Iterator[Diagnostic]:
    if _fine(value, expected):
        return
    kind = type(value)
    node = ctx.tf.nodes.get(tuple(path))
    raw = node.raw if node is not None else None
    plain = node.plain if node is not None else False
    if expected == _STR and kind is str and not plain:
        return
    shown = _show(raw if raw is not None else value)
    if expected == _STR:
        if isinstance(value, str):
            # The runtime reads a string, as meant (`generated_at: 2026-05-04T12:34:56Z`, a
            # description `yes`): its own writer leaves these unquoted or quotes them itself.
            return
        elif value is None and plain and raw:
            yield ctx.diag(
                "PT022",
                f"`{label}: {shown}` is read as null, not a string: quote it: {_quote(raw)}",
                *path,
                fix=_quote_fix(ctx, path),
            )
        elif value is None:
            if path != ("description",):  # PT013 reports an empty description
                yield ctx.diag("PT022", f"`{label}` is empty: give it a value", *path)
        elif path == ("version",) and plain and raw and re.fullmatch(r"\d+(\.\d+)?", raw):
            # `version: 1.0` is a number; quoting alone would leave a non-semver "1.0".
            guess = ".".join(str(int(p)) for p in (raw.split(".") + ["0", "0"])[:3])
            yield ctx.diag(
                "PT022",
                f"`version: {shown}` is read as a number, not a string: write it as x.y.z: {guess}",
                *path,
                fix=Fix(f"write {guess}", (ctx.node_edit(path, guess),)),
            )
        elif isinstance(value, bool | int | float) and plain and raw is not None:
            yield ctx.diag(
                "PT022",
                f"`{label}: {shown}` is read as {_type_name(value)}, not a string: quote it: {_quote(raw)}",
                *path,
                fix=_quote_fix(ctx, path),
            )
        else:
            yield ctx.diag("PT022", f"`{label}` must be a string, not {_type_name(value)}", *path)
    elif expected == _BOOL:
        if isinstance(value, bool):
            return
        if isinstance(value, str) and plain and yamlio.YAML11_BOOL_RE.match(value):
            meant = value.lower() in ("y", "yes", "true", "on")
            word = "true" if meant else "false"
            yield ctx.diag(
                "PT022",
                f'`{label}: {shown}`: the Patch runtime reads it as the string "{visible(value)}", '
                f"not a boolean: write {word}",
                *path,
                fix=ctx.set_value_fix(f"write {word}", path, meant),
            )
        elif isinstance(value, str) and not plain and value.strip().lower() in ("true", "false"):
            word = value.strip().lower()
            yield ctx.diag(
                "PT022",
                f"`{label}` is the string {_quote(value)} in quotes, not a boolean: write {word} without quotes",
                *path,
                fix=ctx.set_value_fix(f"write {word}", path, word == "true"),
            )
        else:
            yield ctx.diag(
                "PT022", f"`{label}: {shown}` must be true or false, not {_type_name(value)}", *path
            )
    elif expected == _LIST:
        if isinstance(value, list):
            return
        fix = None
        if value is None:
            fix = ctx.set_value_fix("write []", path, [])
            message = f"`{label}` is empty: write `{label}: []` for none"
        elif isinstance(value, str):
            fix = ctx.set_value_fix(f"make it a list: [{visible(value)}]", path, [value])
            message = f"`{label}` must be a list: write [{shown}]"
        else:
            message = f"`{label}` must be a list, not {_type_name(value)}"
        yield ctx.diag("PT022", message, *path, fix=fix)
    elif expected == _DICT:
        if isinstance(value, dict):
            return
        fix = None
        if isinstance(value, str) and value in INPUT_TYPES and path[-1] == "items":
            fix = ctx.set_value_fix(f"write {{type: {value}}}", path, {"type": value})
            message = f"`{label}` must be a mapping: write `{label}: {{type: {value}}}`"
        else:
            message = f"`{label}` must be a mapping of fields, not {_type_name(value)}"
        yield ctx.diag("PT022", message, *path, fix=fix)


def _check_fields(
    ctx: LintContext, base: Path, mapping: dict[str, Any], types: dict[str, str], where: str
) -> Iterator[Diagnostic]:
    for key, expected in types.items():
        if key in mapping and expected != _ANY and not _fine(mapping[key], expected):
            label = f"{where}.{key}" if where else key
            yield from _check_value(ctx, (*base, key), mapping[key], expected, label)


@rule(
    "PT022",
    "wrong-type",
    family="manifest",
    summary="a field of the wrong type, or read differently by YAML 1.1",
)
def wrong_type(ctx: LintContext) -> Iterator[Diagnostic]:
    """A field has the wrong type as the Patch runtime reads it.

    Why: the runtime reads YAML with js-yaml's JSON schema: `true`/`True`/`TRUE` and the falses
    are booleans, `no`, `yes`, `on` and `off` are strings, dates stay strings, `null`, `Null`
    and `~` are null, and `1.0`, `0755`, `0x1F` and `1_000` are numbers. A value it reads as
    another type than the field needs makes it refuse the tool (`network: no` is the string
    "no", not false; `description: 1.0` is a number). Strings it reads as strings are fine
    however they are written: its own writer leaves `generated_at: 2026-05-04T12:34:56Z`
    unquoted.

    Fix: write booleans as `true` / `false` without quotes, quote strings that look like numbers
    or null (`version: "1.0.0"`), and use lists and mappings where the format asks for them.
    `patch-tui fmt` writes values as the runtime's own writer does.
    """
    data = ctx.data
    for key, expected in _TOP_TYPES.items():
        if key not in data or expected == _ANY:
            continue
        if key in REQUIRED_FIELDS[3:] and data[key] is None and key != "inputs":
            yield ctx.diag("PT022", f"`{key}` is empty: fill in its fields", key)
            continue
        if not _fine(data[key], expected):
            yield from _check_value(ctx, (key,), data[key], expected, key)
    inputs = ctx.get("inputs")
    if isinstance(inputs, list):
        for i, inp in enumerate(inputs):
            if not isinstance(inp, dict):
                yield ctx.diag(
                    "PT022",
                    f"input {i + 1} must be a mapping with name, type and description, not {_type_name(inp)}",
                    "inputs",
                    i,
                )
                continue
            where = f"inputs[{i}]"
            yield from _check_fields(ctx, ("inputs", i), inp, _INPUT_TYPES, where)
            if isinstance(inp.get("items"), dict):
                yield from _check_fields(
                    ctx, ("inputs", i, "items"), inp["items"], _ITEMS_TYPES, f"{where}.items"
                )
            yield from _check_default(ctx, i, inp)
    for key, types in (
        ("outputs", _OUTPUT_TYPES),
        ("capabilities", _CAP_TYPES),
        ("runtime", _RUNTIME_TYPES),
    ):
        mapping = ctx.get(key)
        if isinstance(mapping, dict):
            yield from _check_fields(ctx, (key,), mapping, types, key)
    items = ctx.get("outputs", "items")
    if isinstance(items, dict):
        yield from _check_fields(ctx, ("outputs", "items"), items, _ITEMS_TYPES, "outputs.items")
    elif items is not None and not isinstance(items, str):
        yield ctx.diag(
            "PT022",
            "`outputs.items` must be a type like `object` or `{type: object}`",
            "outputs",
            "items",
        )
    for list_path in (("runtime", "packages"), ("external_auth",)):
        values = ctx.get(*list_path)
        if isinstance(values, list):
            for j, v in enumerate(values):
                if _fine(v, _STR):
                    continue
                yield from _check_value(
                    ctx, (*list_path, j), v, _STR, f"{'.'.join(map(str, list_path))}[{j}]"
                )


def _check_default(ctx: LintContext, i: int, inp: dict[str, Any]) -> Iterator[Diagnostic]:
    if "default" not in inp or inp["default"] is None:
        return
    kind = inp.get("type", "string")
    if kind not in INPUT_TYPES:
        return
    value = inp["default"]
    path: Path = ("inputs", i, "default")
    label = f"inputs[{i}].default"
    if kind == "boolean" or kind == "string":
        yield from _check_value(ctx, path, value, _BOOL if kind == "boolean" else _STR, label)
        return
    if not fits_json_type(value, kind):
        yield ctx.diag(
            "PT022",
            f"the default of {kind} input `{_show(inp.get('name', i))}` is {_type_name(value)}: "
            f"give a default of type {kind}",
            *path,
        )


@rule("PT023", "bad-python-version", family="manifest", summary='python_version is not like "3.12"')
def bad_python_version(ctx: LintContext) -> Iterator[Diagnostic]:
    """`runtime.python_version` is not a quoted string like `"3.12"`.

    Why: unquoted, `3.12` is the number 3.12 to the runtime's YAML reader, and `3.10` becomes
    `3.1`: the tool asks for a Python that does not exist. The runtime wants major.minor only.

    Fix: quote it: `python_version: "3.12"` (the quick fix keeps the digits exactly as you wrote
    them).
    """
    path: Path = ("runtime", "python_version")
    if not isinstance(ctx.get("runtime"), dict) or "python_version" not in ctx.get("runtime"):
        return
    value = ctx.get(*path)
    raw = _raw(ctx, path)
    if (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and _is_plain(ctx, path)
        and raw
    ):
        bad = "" if PYTHON_VERSION_RE.match(raw) else " (and use major.minor, like 3.12)"
        lost = f", which is {value}" if str(value) != raw else ""
        yield ctx.diag(
            "PT023",
            f"python_version {raw} is read as a number{lost}: quote it: {_quote(raw)}{bad}",
            *path,
            fix=_quote_fix(ctx, path) if not bad else None,
        )
    elif isinstance(value, str):
        if not PYTHON_VERSION_RE.match(value):
            m = re.match(r"^(?:python|py)?\s*(3\.\d{1,2})(?:\.\d+)?$", value.strip(), re.I)
            fix = None
            if m and path in ctx.tf.nodes:
                fix = Fix(
                    f'write "{m.group(1)}"', (ctx.node_edit(path, _quote(m.group(1))),), safe=False
                )
            yield ctx.diag(
                "PT023",
                f'python_version `{_show(value)}` is not major.minor: write it like "3.12"',
                *path,
                fix=fix,
            )
    else:
        yield ctx.diag("PT023", 'python_version must be a quoted string like "3.12"', *path)


@rule(
    "PT024",
    "browser-without-network",
    family="manifest",
    summary="capabilities.browser true with network false",
)
def browser_without_network(ctx: LintContext) -> Iterator[Diagnostic]:
    """`capabilities.browser` is true while `capabilities.network` is false.

    Why: a headless browser needs the network; the runtime boots the sandbox without internet
    access when network is false, so every page load fails.

    Fix: set `network: true` (and review what the tool may reach), or drop `browser: true`.
    """
    if (
        ctx.get("capabilities", "browser") is True
        and ctx.get("capabilities", "network") is not True
    ):
        yield ctx.diag(
            "PT024",
            "browser: true needs network: true (the sandbox has no internet access): set network: true or remove browser",
            "capabilities",
            "browser",
            fix=ctx.set_value_fix(
                "set network: true", ("capabilities", "network"), True, safe=False
            ),
        )


@rule("PT025", "yaml-anchor", family="manifest", summary="a YAML anchor or alias")
def yaml_anchor(ctx: LintContext) -> Iterator[Diagnostic]:
    """The frontmatter uses a YAML anchor (`&name`) or alias (`*name`).

    Why: the Patch runtime reads them, so the tool loads; but a manifest is read by people,
    editors and other tools too, and a value defined in one place and used in another is easy to
    misread (and some readers refuse aliases). patch-tui reads them like the runtime and refuses
    aliases that expand past a size limit (the "billion laughs" attack).

    Fix: write the repeated value out in full where it is used, and drop the `&name`.
    """
    tf = ctx.tf
    if not tf.anchors or tf.open_index is None:
        return
    pos = tf.anchors[0]
    line, col = tf.yaml_pos_to_file(pos)
    more = f" (and {len(tf.anchors) - 1} more)" if len(tf.anchors) > 1 else ""
    yield ctx.diag(
        "PT025",
        f"a YAML anchor or alias{more}: the runtime reads it, but write the value out in full so every reader sees the same manifest",
        severity="warning",
        span=Span(line, col, line, col + 1),
    )


# What may stand above the opening marker: the runtime never runs it, so only lines that do
# nothing (blank lines and comments: a shebang, an encoding line) are harmless there.
def _code_above(ctx: LintContext) -> list[int]:
    tf = ctx.tf
    if tf.open_index is None:
        return []
    return [
        i + 1
        for i in range(tf.open_index)
        if tf.lines[i].strip() and not tf.lines[i].lstrip().startswith("#")
    ]


@rule(
    "PT026",
    "code-above-frontmatter",
    family="structure",
    summary="code above the opening `# ---` marker",
    needs_manifest=False,
)
def code_above_frontmatter(ctx: LintContext) -> Iterator[Diagnostic]:
    """Code above the opening `# ---` marker.

    Why: the Patch runtime runs only the body, the lines after the closing marker. Code above
    the frontmatter never runs there: an `import` written at the top is missing at run time (a
    NameError), although the file looks complete. `patch-tui run` runs what the runtime runs.
    Only a shebang, an encoding line, comments and blank lines belong above the marker.

    Fix: move the code below the closing `# ---` line.
    """
    rows = _code_above(ctx)
    if not rows:
        return
    first = rows[0]
    more = f" (and {len(rows) - 1} more lines)" if len(rows) > 1 else ""
    yield ctx.diag(
        "PT026",
        f"code above the opening `# ---` marker{more}: the runtime runs only what follows the closing marker: move it below",
        span=Span.line_span(first, ctx.tf.line_text(first)),
    )


def starter_manifest_fix(tf: ToolFile) -> Fix | None:
    """PT001's fix for a text file with no frontmatter at all: insert a starter manifest above
    the Python there (an empty file gets the whole starter tool), named after the file. None for a file the fix
    cannot help (binary, undecodable, or markers that are only unbalanced)."""
    from patch_tui.format import toolfile
    from patch_tui.format.fields import NAME_RE

    if tf.open_index is not None or not any(p.message == toolfile.NO_FRONTMATTER for p in tf.problems):
        return None
    stem = PurePath(tf.path).stem if tf.path else ""
    name = stem if NAME_RE.match(stem) else "my_tool"
    data = {
        "name": name,
        "version": "0.1.0",
        "description": f"Describe what {name} does in one sentence.",
        "inputs": [],
        "outputs": {"type": "object", "description": "The result."},
        "capabilities": {"network": False, "filesystem": "none", "human_confirm": False},
        "runtime": {"language": "python", "python_version": "3.12", "packages": []},
    }
    nl = tf.newline or "\n"
    if not tf.text.strip():
        # Nothing to keep: the whole starter tool (toolbox's template), which lints clean.
        from patch_tui.runtime.toolbox import new_tool_text

        return Fix("insert a starter tool", (Edit(1, 1, 1, 1, new_tool_text(name)),), safe=False)
    text = f"# ---{nl}{toolfile.render_frontmatter(data, nl)}# ---{nl}{nl}"
    # Not applied by `lint --fix`: the starter's description is a placeholder to write.
    return Fix("insert a starter manifest", (Edit(1, 1, 1, 1, text),), safe=False)
