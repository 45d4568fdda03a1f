"""js-yaml 4.1 (the Patch runtime's YAML library) ported: which plain scalars its JSON schema
resolves to numbers, booleans and null (`resolves_int`, `resolves_float`, `construct_plain`),
its `dump` with the options the runtime's serializeManifest passes (`dump_yaml`), and
JavaScript's number and JSON spellings (`js_number`, `js_json`). format.runtime_format (the
runtime's parser, schema and writer) re-exports these names.
"""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal
from typing import Any

# js-yaml's dumper (4.1), with the options serializeManifest passes. Single quotes are its default.
_INDENT = 2
_LINE_WIDTH = 100
_ESCAPES = {
    0x00: "\\0", 0x07: "\\a", 0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0B: "\\v", 0x0C: "\\f",
    0x0D: "\\r", 0x1B: "\\e", 0x22: '\\"', 0x5C: "\\\\", 0x85: "\\N", 0xA0: "\\_",
    0x2028: "\\L", 0x2029: "\\P",
}  # fmt: skip
_COMPAT_BOOLEANS = frozenset("y Y yes Yes YES on On ON n N no No NO off Off OFF".split())
_BASE60_RE = re.compile(r"^[-+]?[0-9_]+(?::[0-9_]+)+(?:\.[0-9_]*)?$")
_FLOAT_PATTERN = re.compile(
    r"^(?:[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?"
    r"|\.[0-9_]+(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
)
_NOT_PLAIN_FIRST = frozenset("-?:,[]{}#&*!|=>'\"%@`")
_FLOW_INDICATORS = frozenset(",[]{}")


def resolves_int(text: str) -> bool:
    """js-yaml's resolveYamlInteger (also `0x`, `0o`, `0b`, `_` separators, a sign)."""
    m = re.fullmatch(r"[-+]?(0b[01_]+|0x[0-9a-fA-F_]+|0o[0-7_]+|[0-9_]+)", text)
    if not m:
        return False
    digits = m.group(1)
    if digits == "0":
        return True
    if digits[:2] in ("0b", "0x", "0o"):
        rest = digits[2:]
        return any(ch != "_" for ch in rest) and not rest.endswith("_")
    return (
        not digits.startswith("_") and any(ch != "_" for ch in digits) and not digits.endswith("_")
    )


def resolves_float(text: str) -> bool:
    return bool(_FLOAT_PATTERN.match(text)) and not text.endswith("_")


def resolves_implicitly(text: str) -> bool:
    """Whether js-yaml's JSON schema reads this plain text as null, a boolean or a number."""
    return (
        text in ("~", "null", "Null", "NULL", "true", "True", "TRUE", "false", "False", "FALSE")
        or resolves_int(text)
        or resolves_float(text)
    )


def construct_plain(text: str) -> Any:
    """The value js-yaml's JSON schema gives a plain scalar (a string when nothing resolves).
    Integers stay exact Python ints (JavaScript would round those beyond 2**53)."""
    if text in ("", "~", "null", "Null", "NULL"):
        return None
    if text in ("true", "True", "TRUE"):
        return True
    if text in ("false", "False", "FALSE"):
        return False
    if resolves_int(text):
        value = text.replace("_", "")
        sign = -1 if value.startswith("-") else 1
        value = value.lstrip("+-")
        if value[:2] in ("0b", "0x", "0o"):
            return sign * int(value[2:], {"0b": 2, "0x": 16, "0o": 8}[value[:2]])
        return sign * int(value, 10)
    if resolves_float(text):
        spelled = text.replace("_", "").lower()
        fsign = -1.0 if spelled.startswith("-") else 1.0
        spelled = spelled.lstrip("+-")
        if spelled == ".inf":
            return fsign * math.inf
        if spelled == ".nan":
            return math.nan
        return fsign * float(spelled)
    return text


def _printable(c: int) -> bool:
    return (
        0x20 <= c <= 0x7E
        or (0xA1 <= c <= 0xD7FF and c not in (0x2028, 0x2029))
        or (0xE000 <= c <= 0xFFFD and c != 0xFEFF)
        or 0x10000 <= c <= 0x10FFFF
    )


def _ns_char_or_ws(c: int) -> bool:
    return _printable(c) and c not in (0xFEFF, 0x0D, 0x0A)


def _plain_safe(c: int, prev: int | None, inblock: bool) -> bool:
    nsws = _ns_char_or_ws(c)
    ns = nsws and c not in (0x20, 0x09)
    safe = nsws if inblock else nsws and chr(c) not in _FLOW_INDICATORS
    prev_ns = prev is not None and _ns_char_or_ws(prev) and prev not in (0x20, 0x09)
    return (
        (safe and c != 0x23 and not (prev == 0x3A and not ns))
        or (prev_ns and c == 0x23)
        or (prev == 0x3A and ns)
    )


def _js_len(text: str) -> int:
    """String length in UTF-16 code units, as JavaScript counts it."""
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


_PLAIN, _SINGLE, _LITERAL, _FOLDED, _DOUBLE = range(5)


def _choose_style(text: str, single_line: bool, width: int, inblock: bool) -> int:
    first, last = ord(text[0]), ord(text[-1])
    plain = (
        _printable(first)
        and first not in (0xFEFF, 0x20, 0x09)
        and chr(first) not in _NOT_PLAIN_FIRST
        and last not in (0x20, 0x09, 0x3A)
    )
    has_break = foldable = False
    prev: int | None = None
    # Columns are counted in UTF-16 units, as js-yaml walks the string.
    units = 0
    prev_break = -1
    for ch in text:
        c = ord(ch)
        if c == 0x0A and not single_line:
            has_break = True
            foldable = foldable or (
                units - prev_break - 1 > width and text_at_units(text, prev_break + 1) != " "
            )
            prev_break = units
        elif not _printable(c):
            return _DOUBLE
        plain = plain and _plain_safe(c, prev, inblock)
        prev = c
        units += 2 if c > 0xFFFF else 1
    if not single_line:
        foldable = foldable or (
            units - prev_break - 1 > width and text_at_units(text, prev_break + 1) != " "
        )
    if not has_break and not foldable:
        if plain and not resolves_implicitly(text):
            return _PLAIN
        return _SINGLE
    return _FOLDED if foldable else _LITERAL


def text_at_units(text: str, index: int) -> str:
    """The character at a UTF-16 index (js-yaml reads `string[i]`)."""
    units = 0
    for ch in text:
        if units == index:
            return ch
        units += 2 if ord(ch) > 0xFFFF else 1
        if units > index:
            return ""  # the second half of a surrogate pair
    return ""


def _block_header(text: str) -> str:
    indicator = str(_INDENT) if re.match(r"^\n* ", text) else ""
    clip = text.endswith("\n")
    keep = clip and (text.endswith("\n\n") or text == "\n")
    return indicator + ("+" if keep else "" if clip else "-") + "\n"


def _indent_string(text: str, spaces: int) -> str:
    pad = " " * spaces
    return "".join(
        (pad + line if line and line != "\n" else line)
        for line in re.findall(r"[^\n]*\n|[^\n]+", text)
    )


def _drop_ending_newline(text: str) -> str:
    return text[:-1] if text.endswith("\n") else text


def _fold_line(line: str, width: int) -> str:
    if not line or line[0] == " ":
        return line
    start = curr = 0
    result = ""
    for m in re.finditer(r" [^ ]", line):
        nxt = m.start()
        if nxt - start > width:
            end = curr if curr > start else nxt
            result += "\n" + line[start:end]
            start = end + 1
        curr = nxt
    result += "\n"
    if len(line) - start > width and curr > start:
        result += line[start:curr] + "\n" + line[curr + 1 :]
    else:
        result += line[start:]
    return result[1:]


def _fold_string(text: str, width: int) -> str:
    first = text.find("\n")
    first = len(text) if first == -1 else first
    result = _fold_line(text[:first], width)
    prev_more = text[:1] in ("\n", " ")
    for m in re.finditer(r"(\n+)([^\n]*)", text[first:]):
        prefix, line = m.group(1), m.group(2)
        more = line[:1] == " "
        result += (
            prefix
            + ("\n" if not prev_more and not more and line != "" else "")
            + _fold_line(line, width)
        )
        prev_more = more
    return result


def _escape(text: str) -> str:
    out = []
    for ch in text:
        c = ord(ch)
        seq = _ESCAPES.get(c)
        if seq is None and _printable(c):
            out.append(ch)
        elif seq is not None:
            out.append(seq)
        elif c <= 0xFF:
            out.append(f"\\x{c:02X}")
        elif c <= 0xFFFF:
            out.append(f"\\u{c:04X}")
        else:
            out.append(f"\\U{c:08X}")
    return "".join(out)


def _scalar(text: str, level: int, iskey: bool, inblock: bool) -> str:
    if not text:
        return "''"
    if text in _COMPAT_BOOLEANS or _BASE60_RE.match(text):
        return f"'{text}'"
    indent = _INDENT * max(1, level)
    width = max(min(_LINE_WIDTH, 40), _LINE_WIDTH - indent)
    style = _choose_style(text, iskey, width, inblock)
    if style == _PLAIN:
        return text
    if style == _SINGLE:
        return "'" + text.replace("'", "''") + "'"
    if style == _LITERAL:
        return "|" + _block_header(text) + _drop_ending_newline(_indent_string(text, indent))
    if style == _FOLDED:
        return (
            ">"
            + _block_header(text)
            + _drop_ending_newline(_indent_string(_fold_string(text, width), indent))
        )
    return '"' + _escape(text) + '"'


def js_number(value: float | int) -> str:
    """JavaScript's Number.prototype.toString() for a double."""
    x = float(value)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    digits_t = Decimal(repr(abs(x))).normalize().as_tuple()
    digits = "".join(str(d) for d in digits_t.digits)
    exp = int(digits_t.exponent)  # value = digits * 10**exp
    k = len(digits)
    n = exp + k  # position of the decimal point
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    e = n - 1
    mantissa = digits[0] + ("." + digits[1:] if k > 1 else "")
    return f"{sign}{mantissa}e{'+' if e >= 0 else '-'}{abs(e)}"


def js_json(value: Any) -> str:
    """JavaScript's `JSON.stringify(value)` of the JSON value Python holds: numbers as doubles
    (`2.0` and `2` are both "2", `1e21` is "1e+21"; NaN and infinities "null"), strings escaped
    as JavaScript escapes them, keys in their order. The runtime compares outputs this way."""
    if value is None or value is True or value is False:
        return "null" if value is None else ("true" if value else "false")
    if isinstance(value, int | float):
        x = float(value) if not isinstance(value, int) or abs(value) >= 2**53 else None
        if x is None:
            return str(value)
        return "null" if math.isnan(x) or math.isinf(x) else js_number(x)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, dict):
        return (
            "{"
            + ",".join(
                f"{json.dumps(str(k), ensure_ascii=False)}:{js_json(v)}" for k, v in value.items()
            )
            + "}"
        )
    if isinstance(value, list | tuple):
        return "[" + ",".join(js_json(v) for v in value) + "]"
    return json.dumps(str(value), ensure_ascii=False)


def _number(value: int | float) -> str:
    raw = getattr(value, "raw", None)
    if isinstance(raw, str):
        return raw  # yamlio.RawFloat / RawInt: a spelling fmt keeps on purpose
    if isinstance(value, int):
        # Exact digits: below 2**53 this is JavaScript's own spelling; above, the runtime reads
        # the same (rounded) number from these digits, and no digit the user wrote is lost.
        return str(value)
    x = float(value) if not isinstance(value, float) else value
    if math.isnan(x):
        return ".nan"
    if math.isinf(x):
        return ".inf" if x > 0 else "-.inf"
    if x == 0 and math.copysign(1, x) < 0:
        return "-0.0"
    text = js_number(x)
    if x == int(x):  # an integral double is js-yaml's int: decimal toString
        return text
    return text.replace("e", ".e", 1) if re.match(r"^[-+]?[0-9]+e", text) else text


def _node(value: Any, level: int, block: bool, compact: bool, iskey: bool = False) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int | float):
        return _number(value)
    if isinstance(value, str):
        return _scalar(value, level, iskey, block)
    if isinstance(value, dict):
        if block and value:
            return _block_mapping(value, level, compact)
        return _flow_mapping(value, level)
    if isinstance(value, list | tuple):
        if block and value:
            return _block_sequence(list(value), level, compact)
        return "[" + ", ".join(_node(v, level, False, False) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} as YAML")


def _next_line(level: int) -> str:
    return "\n" + " " * (_INDENT * level)


def _block_sequence(items: list[Any], level: int, compact: bool) -> str:
    out = ""
    for item in items:
        dumped = _node(item, level + 1, True, True)
        if not compact or out:
            out += _next_line(level)
        out += ("-" if dumped.startswith("\n") else "- ") + dumped
    return out or "[]"


def _block_mapping(mapping: dict[str, Any], level: int, compact: bool) -> str:
    out = ""
    for key, value in mapping.items():
        pair = "" if compact and not out else _next_line(level)
        key_text = _node(str(key), level + 1, True, True, iskey=True)
        explicit = len(key_text) > 1024
        if explicit:
            pair += "? " + key_text + _next_line(level)
        else:
            pair += key_text
        dumped = _node(value, level + 1, True, explicit)
        pair += (":" if dumped.startswith("\n") else ": ") + dumped
        out += pair
    return out or "{}"


def _flow_mapping(mapping: dict[str, Any], level: int) -> str:
    parts = []
    for key, value in mapping.items():
        key_text = _node(str(key), level, False, False)
        parts.append(
            ("? " if len(key_text) > 1024 else "")
            + key_text
            + ": "
            + _node(value, level, False, False)
        )
    return "{" + ", ".join(parts) + "}"


def dump_yaml(data: Any) -> str:
    """js-yaml dump(data, {indent: 2, lineWidth: 100, noRefs: true, sortKeys: false,
    schema: JSON_SCHEMA}), ending with a newline."""
    return _node(data, 0, True, True) + "\n"
