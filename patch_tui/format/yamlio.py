"""YAML read the way the Patch runtime reads it, and written the way it writes it.

Reading uses YAML's JSON schema: only `true`/`false` are booleans, only `null` (or nothing) is
null, numbers look like JSON numbers, and everything else (timestamps, `yes`, `0o17`) is a string.
We build values from parser *events* rather than PyYAML's constructors so that:
- explicit tags mean what they mean to the runtime's js-yaml JSON schema (`!!str`, `!!int`,
  `!!float`, `!!bool`, `!!null`, `!!seq`, `!!map`, and `!`); any other tag (`!!timestamp`,
  `!!python/object/apply`, `!custom`) is refused before anything is built, as the runtime
  refuses it; aliases are bounded (no alias bombs), and duplicate keys are errors instead of
  silently merged;
- every value gets a source span, so lint and the UI can point at `inputs[1].type`;
- deep nesting cannot blow the Python stack (the builder is iterative).

Writing uses PyYAML's emitter with sequences indented under their key; a string is quoted
whenever *either* YAML 1.1 or the JSON schema would read it as something other than a string, so
the file means the same thing to every reader.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import yaml

from patch_tui.format.jsyaml import construct_plain, resolves_float, resolves_int

_BaseLoader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

MAX_DEPTH = 64
MAX_EVENTS = 200_000

_INT_RE = re.compile(r"^-?(0|[1-9][0-9]*)$")
_FLOAT_RE = re.compile(r"^-?(0|[1-9][0-9]*)(\.[0-9]*)?([eE][-+]?[0-9]+)?$")

# Plain (unquoted) scalars that YAML 1.1 (PyYAML's default) reads as something other than a
# string, while the JSON schema reads them as strings: lint warns about these.
YAML11_BOOL_RE = re.compile(
    r"^(y|Y|yes|Yes|YES|n|N|no|No|NO|True|TRUE|False|FALSE|on|On|ON|off|Off|OFF)$"
)


class Pos(NamedTuple):
    """0-based line and column inside the YAML text."""

    line: int
    column: int


class Node(NamedTuple):
    """Where a value sits in the YAML text, and how it was written.

    (NamedTuples rather than frozen dataclasses: one is built per value of every file linted,
    and a frozen dataclass's __init__ costs several times more.)
    """

    start: Pos
    end: Pos
    key_start: Pos | None = None
    key_end: Pos | None = None
    plain: bool = False  # an unquoted scalar
    raw: str | None = None  # the scalar's text as written


Path = tuple[str | int, ...]


@dataclass
class YamlError(Exception):
    message: str
    pos: Pos | None = None
    end: Pos | None = None


@dataclass
class Loaded:
    data: Any
    nodes: dict[Path, Node] = field(default_factory=dict)
    # Where anchors (`&name`) and aliases (`*name`) sit: the runtime's js-yaml reads them, so we
    # do too; lint warns because other readers may not.
    anchors: list[Pos] = field(default_factory=list)
    # Where a plain number out of every reader's range was written (see OutOfRange).
    out_of_range: list[tuple[Pos, Pos, str]] = field(default_factory=list)
    # Where explicit tags (`!!str 3.12`) sit: read as the runtime reads them; lint warns.
    tags: list[Pos] = field(default_factory=list)


def _pos(mark: Any) -> Pos:
    return Pos(mark.line, mark.column)


# Python refuses to convert decimal integers longer than this from text
# (sys.get_int_max_str_digits, CVE-2020-10735), and to write longer ones back.
MAX_INT_DIGITS = 4300
_MAX_INT_BITS = int(MAX_INT_DIGITS * 3.3219)  # the same bound for 0x / 0o / 0b spellings
_INFINITIES = (float("inf"), float("-inf"))


class OutOfRange(str):
    """A plain number no reader can hold exactly: an integer of more than MAX_INT_DIGITS digits
    (Python refuses to read or write it, JavaScript rounds it), or a finite spelling beyond a
    double's range (`1e400`, which readers turn into infinity). It is kept as the text written,
    so nothing fails on it and writing it back is exact; `load` reports where each one is
    (`Loaded.out_of_range`) and lint makes that a PT022 error."""

    __slots__ = ()


_WORDS: dict[str, Any] = {
    "~": None, "null": None, "Null": None, "NULL": None,
    "true": True, "True": True, "TRUE": True,
    "false": False, "False": False, "FALSE": False,
}  # fmt: skip
_NUMBER_START = frozenset("-+.0123456789")


def resolve_plain(text: str) -> Any:
    """A plain scalar's value as the Patch runtime's js-yaml (JSON_SCHEMA) reads it: `null`,
    `Null`, `NULL`, `~` or nothing is null; `true`/`True`/`TRUE` and the falses are booleans;
    integers (also `0x1F`, `0o17`, `0b1`, `1_000`, `+1`) and floats (`1.5`, `.5`, `1e3`,
    `.inf`, `.nan`) are numbers; everything else (timestamps, `yes`, `01.0.0`) is a string.
    (Tested by first character: this runs for every key and value of every file linted.)"""
    if not text:
        return None
    first = text[0]
    if first in _NUMBER_START:
        try:
            value = construct_plain(text)
        except ValueError:  # more digits than Python converts
            return OutOfRange(text)
        kind = type(value)
        if kind is int and value.bit_length() > _MAX_INT_BITS:
            return OutOfRange(text)
        if kind is float and value in _INFINITIES and "inf" not in text.lower():
            return OutOfRange(text)  # `1e400`: only `.inf` means infinity
        return value
    if len(text) <= 5:
        return _WORDS.get(text, text)
    return text


_INFINITIES = (float("inf"), float("-inf"))


_ScalarEvent = yaml.ScalarEvent
_MappingStart = yaml.MappingStartEvent
_SequenceStart = yaml.SequenceStartEvent
_MappingEnd = yaml.MappingEndEvent
_SequenceEnd = yaml.SequenceEndEvent


_YAML_TAG = "tag:yaml.org,2002:"
# The explicit tags js-yaml's JSON schema knows, and the node kind each takes.
_TAG_KINDS = {
    "str": "scalar", "null": "scalar", "bool": "scalar", "int": "scalar", "float": "scalar",
    "seq": "sequence", "map": "mapping",
}  # fmt: skip


def _tag_error(message: str, event: Any) -> YamlError:
    return YamlError(message, _pos(event.start_mark), _pos(event.end_mark))


def _shown(tag: str) -> str:
    return "!!" + tag[len(_YAML_TAG) :] if tag.startswith(_YAML_TAG) else tag


def _tag_kind(tag: str, event: Any, kind: str, empty: bool) -> str:
    """The known tag's name (`str`, `int`, ...) after js-yaml's checks: an unknown tag, or a tag
    on the wrong kind of node (an empty node takes any), is the runtime's error too."""
    name = tag[len(_YAML_TAG) :] if tag.startswith(_YAML_TAG) else None
    if name not in _TAG_KINDS:
        raise _tag_error(f"unknown tag {_shown(tag)}: the runtime refuses it", event)
    if not empty and _TAG_KINDS[name] != kind:
        raise _tag_error(
            f"tag {_shown(tag)} is for a {_TAG_KINDS[name]}, not a {kind}: the runtime refuses it",
            event,
        )
    return name


def _tagged_scalar(event: Any) -> Any:
    """A scalar with an explicit tag, as js-yaml's JSON schema constructs it (the text is not
    resolved implicitly: `!!str 3.12` is the string "3.12", `!!int "5"` the number 5)."""
    raw = event.value
    if event.tag == "!":
        return raw  # the non-specific tag: a string, never resolved
    empty = raw == "" and not event.style  # no node at all (js-yaml's null result)
    name = _tag_kind(event.tag, event, "scalar", empty)
    if name == "str":
        return raw
    if name == "seq":
        return []
    if name == "map":
        return {}
    if empty and name == "null":
        return None
    resolved = {
        "null": raw in ("~", "null", "Null", "NULL"),
        "bool": raw in ("true", "True", "TRUE", "false", "False", "FALSE"),
        "int": not empty and resolves_int(raw),
        "float": not empty and resolves_float(raw),
    }[name]
    if not resolved:
        raise _tag_error(
            f"{raw!r} is not a valid {_shown(event.tag)}: the runtime refuses it", event
        )
    value = construct_plain(raw)
    if name == "float" and isinstance(value, int) and not isinstance(value, bool):
        return float(value)  # `!!float 1`: a number either way to the runtime (JavaScript)
    return value


def load(text: str) -> Loaded:
    """Parse one YAML document into plain data and a span for every value.

    Raises YamlError with a position for syntax errors, anchors, aliases, tags, duplicate keys,
    too deep nesting, or more than one document.
    """
    nodes: dict[Path, Node] = {}
    out_of_range: list[tuple[Pos, Pos, str]] = []
    # Each frame: [container, path, pending_key(str|None), key_start, key_end, start_mark,
    #              anchor, expanded size]
    stack: list[list[Any]] = []
    result: Any = None
    have_result = False
    documents = 0
    count = 0
    # An alias shares the anchored value (no copy); `expanded` counts the values it stands for,
    # so an alias bomb ("billion laughs") is refused long before anything expands it.
    anchored: dict[str, tuple[Any, int]] = {}
    anchor_marks: list[Pos] = []
    tag_marks: list[Pos] = []
    expanded = 0
    event: Any
    try:
        for event in yaml.parse(text, Loader=_BaseLoader):
            count += 1
            if count > MAX_EVENTS:
                raise YamlError(f"frontmatter is too large (more than {MAX_EVENTS} YAML nodes)")
            kind = type(event)
            size = 1
            anchor = None
            tagged = False
            if kind is _ScalarEvent:
                anchor = event.anchor
                sm, em = event.start_mark, event.end_mark
                start, end = Pos(sm.line, sm.column), Pos(em.line, em.column)
                raw = event.value
                if event.tag is not None and (event.tag == "!" or _explicit(event)):
                    value: Any = _tagged_scalar(event)
                    plain = False
                    tagged = True
                    tag_marks.append(start)
                elif not event.style:
                    value = resolve_plain(raw)
                    plain = True
                    if type(value) is OutOfRange:
                        out_of_range.append((start, end, raw))
                else:
                    value = raw
                    plain = False
            elif kind is _MappingStart or kind is _SequenceStart:
                if event.tag is not None and event.tag != "!" and _explicit(event):
                    _tag_kind(
                        event.tag, event, "mapping" if kind is _MappingStart else "sequence", False
                    )
                if event.tag is not None and _explicit(event):
                    tag_marks.append(_pos(event.start_mark))
                if event.anchor is not None:
                    anchor_marks.append(_pos(event.start_mark))
                if len(stack) >= MAX_DEPTH:
                    raise YamlError(
                        f"nesting deeper than {MAX_DEPTH} levels", _pos(event.start_mark)
                    )
                container: Any = {} if kind is _MappingStart else []
                path = _child_path(stack)
                stack.append(
                    [
                        container,
                        path,
                        None,
                        None,
                        None,
                        event.start_mark,
                        event.anchor,
                        1,
                        not event.flow_style,
                    ]
                )
                continue
            elif kind is _MappingEnd or kind is _SequenceEnd:
                frame = stack.pop()
                value, start, end, plain, raw = (
                    frame[0],
                    _pos(frame[5]),
                    _pos(event.end_mark),
                    False,
                    None,
                )
                anchor, size = frame[6], frame[7]
            elif kind is yaml.AliasEvent:
                if event.anchor not in anchored:
                    raise YamlError(
                        f"alias *{event.anchor} names no anchor defined before it",
                        _pos(event.start_mark),
                        _pos(event.end_mark),
                    )
                value, size = anchored[event.anchor]
                expanded += size
                if expanded > MAX_EVENTS:
                    raise YamlError(
                        f"aliases expand to more than {MAX_EVENTS} YAML nodes",
                        _pos(event.start_mark),
                    )
                anchor_marks.append(_pos(event.start_mark))
                sm, em = event.start_mark, event.end_mark
                start, end = Pos(sm.line, sm.column), Pos(em.line, em.column)
                plain, raw = False, None
            elif kind is yaml.DocumentStartEvent:
                documents += 1
                if documents > 1:
                    raise YamlError(
                        "more than one YAML document: remove the extra `---` line",
                        _pos(event.start_mark),
                    )
                continue
            else:  # stream start/end, document end
                continue
            if anchor is not None:
                anchored[anchor] = (value, size)
                if kind is _ScalarEvent:
                    anchor_marks.append(start)

            if not stack:
                result, have_result = value, True
                nodes[()] = Node(start, end, None, None, plain, raw)
                continue
            parent = stack[-1]
            parent[7] += size
            container = parent[0]
            if type(container) is dict:
                if parent[2] is None:
                    if tagged and not container and parent[8] and _pos(parent[5]) == start:
                        # js-yaml takes a tag before a block mapping's first key as the
                        # mapping's own, then refuses the line ("bad indentation").
                        raise YamlError(
                            "a tag on the first key of a block mapping: the runtime refuses "
                            "it (bad indentation of a mapping entry); remove the tag",
                            start,
                            end,
                        )
                    # This scalar is a key.
                    if not isinstance(value, str | int | float | bool) and value is not None:
                        raise YamlError("a mapping key must be a plain word", start, end)
                    key = (
                        value
                        if isinstance(value, str)
                        else ("" if value is None else str(raw if raw is not None else value))
                    )
                    if key in container:
                        raise YamlError(f"duplicate key {key!r}: keep only one", start, end)
                    parent[2], parent[3], parent[4] = key, start, end
                    container[key] = None  # reserve the order
                    continue
                key = parent[2]
                container[key] = value
                nodes[(*parent[1], key)] = Node(start, end, parent[3], parent[4], plain, raw)
                parent[2] = None
            else:
                index = len(container)
                container.append(value)
                nodes[(*parent[1], index)] = Node(start, end, None, None, plain, raw)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "invalid YAML"
        raise YamlError(problem, _pos(mark) if mark else None) from None
    except yaml.reader.ReaderError as exc:
        # A forbidden character (control, etc.): point at it and show its code, never the raw byte.
        where = text[: exc.position]
        line = where.count("\n")
        column = exc.position - (where.rfind("\n") + 1)
        char = exc.character
        code = char if isinstance(char, int) else ord(char[:1] or "\0")
        raise YamlError(
            f"character U+{code:04X} is not allowed in YAML: remove it",
            Pos(line, column),
        ) from None
    except yaml.YAMLError as exc:
        raise YamlError(str(exc).splitlines()[0] if str(exc) else "invalid YAML") from None
    except RecursionError:
        raise YamlError(f"nesting deeper than {MAX_DEPTH} levels") from None
    return Loaded(result if have_result else None, nodes, anchor_marks, out_of_range, tag_marks)


def _explicit(event: Any) -> bool:
    """Whether a node event's tag was written (`!!str x`), not implied by the node's style."""
    implicit = event.implicit
    if isinstance(implicit, tuple):
        return not implicit[0] and not implicit[1]
    return not implicit


def _child_path(stack: list[list[Any]]) -> Path:
    if not stack:
        return ()
    parent = stack[-1]
    if isinstance(parent[0], dict):
        return (*parent[1], parent[2])
    return (*parent[1], len(parent[0]))


# --- writing -------------------------------------------------------------------------------


class _Dumper(yaml.SafeDumper):
    """Block style, lists indented under their key, strings quoted only when a reader needs it."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        return super().increase_indent(flow, False)

    def choose_scalar_style(self) -> str:
        # The format document quotes with double quotes ("3.12"); they can also hold any text.
        style = super().choose_scalar_style()
        return '"' if style == "'" else style


# Quote a string when the JSON schema would read it as another type, on top of YAML 1.1's rules.
_Dumper.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT_RE, list("-0123456789"))
_Dumper.add_implicit_resolver("tag:yaml.org,2002:null", re.compile(r"^null$"), ["n"])


def _str_representer(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    # Multi-line strings read best as literal blocks; trailing spaces force quoting because a
    # literal block cannot keep them reliably.
    if "\n" in value and not any(line.endswith(" ") for line in value.split("\n")):
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


_Dumper.add_representer(str, _str_representer)


class RawFloat(float):
    """A number that is written back exactly as it was read (`3.10` stays `3.10`, not `3.1`)."""

    raw: str

    def __new__(cls, value: float, raw: str) -> RawFloat:
        obj = super().__new__(cls, value)
        obj.raw = raw
        return obj


class RawInt(int):
    """An integer written back exactly as it was read."""

    raw: str

    def __new__(cls, value: int, raw: str) -> RawInt:
        obj = super().__new__(cls, value)
        obj.raw = raw
        return obj


def _raw_number_representer(dumper: yaml.SafeDumper, value: RawFloat | RawInt) -> yaml.ScalarNode:
    tag = "tag:yaml.org,2002:float" if isinstance(value, float) else "tag:yaml.org,2002:int"
    return dumper.represent_scalar(tag, value.raw)


_Dumper.add_representer(RawFloat, _raw_number_representer)
_Dumper.add_representer(RawInt, _raw_number_representer)


def _out_of_range_representer(dumper: yaml.SafeDumper, value: OutOfRange) -> yaml.ScalarNode:
    # Written back as it was read, so rewriting a frontmatter (a rename, a form edit) never
    # turns `1e400` into `.inf` or a huge integer into a string.
    number = any(c in value for c in ".eE")
    tag = "tag:yaml.org,2002:float" if number else "tag:yaml.org,2002:int"
    return dumper.represent_scalar(tag, str(value))


_Dumper.add_representer(OutOfRange, _out_of_range_representer)


def _yaml11_number(text: str) -> Any:
    try:
        value = yaml.load(text, Loader=_BaseLoader)
    except yaml.YAMLError:
        return None
    return value if type(value) in (int, float) else None


def keep_number_text(data: Any, nodes: dict[Path, Node], path: Path = ()) -> Any:
    """A copy of loaded data where each plain number that a writer would spell differently
    (`3.10`, `1e3`, `-0`) carries its original text, so rewriting the YAML keeps it."""
    if isinstance(data, dict):
        return {k: keep_number_text(v, nodes, (*path, k)) for k, v in data.items()}
    if isinstance(data, list):
        return [keep_number_text(v, nodes, (*path, i)) for i, v in enumerate(data)]
    if type(data) in (int, float):
        node = nodes.get(path)
        if node is not None and node.plain and node.raw is not None:
            written = repr(data) if type(data) is float else str(data)
            # Only when YAML 1.1 readers agree on the number too (`1e3` is a string to them).
            if node.raw != written and _yaml11_number(node.raw) == data:
                return RawFloat(data, node.raw) if type(data) is float else RawInt(data, node.raw)
    return data


def dump(data: Any) -> str:
    """YAML text exactly as the Patch runtime's writer (js-yaml `dump`, JSON schema) writes it,
    no document markers. A RawFloat/RawInt keeps the number's spelling."""
    from patch_tui.format.jsyaml import dump_yaml

    return dump_yaml(data)
