"""Writing a tool file back: the frontmatter rendered in the runtime writer's style, the rest of
the file untouched (`with_frontmatter`, `format_text`, `serialize`), the check that a rewrite
reads back as the same data (`check_exact`), and field edits (`set_field`). format.toolfile
re-exports every name here, so callers keep using `toolfile.format_text` and the like.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from patch_tui.format import yamlio
from patch_tui.format.fields import FIELD_ORDER
from patch_tui.format.runtime_format import MARKER
from patch_tui.format.yamlio import Path

if TYPE_CHECKING:  # format.toolfile imports this module last; nothing here imports it back early
    from patch_tui.format.manifest import Manifest
    from patch_tui.format.toolfile import ToolFile


# --- writing -------------------------------------------------------------------------------


def canonical_order(data: Any, where: str = "") -> Any:
    """Manifest data with mapping keys in the format document's order (unknown keys last)."""
    if isinstance(data, dict):
        order = FIELD_ORDER.get(where, ())
        known = [k for k in order if k in data]
        rest = [k for k in data if k not in order]
        out: dict[str, Any] = {}
        for key in known + rest:
            child_where = {
                ("", "inputs"): "inputs",
                ("", "outputs"): "outputs",
                ("", "capabilities"): "capabilities",
                ("", "runtime"): "runtime",
            }.get((where, key), f"{where}.{key}")
            out[key] = canonical_order(data[key], child_where)
        return out
    if isinstance(data, list):
        item_where = "inputs[]" if where == "inputs" else f"{where}[]"
        return [canonical_order(v, item_where) for v in data]
    return data


def render_frontmatter(data: Any, newline: str = "\n") -> str:
    """The commented YAML lines (without markers) for manifest data, in the Patch runtime
    writer's style: js-yaml's `dump`, each line prefixed `# ` (`#` when empty)."""
    text = yamlio.dump(canonical_order(data)).rstrip("\n")
    return "".join((("# " + line) if line else "#") + newline for line in text.split("\n"))


def with_frontmatter(tf: ToolFile, data: Any) -> str:
    """The file's text with its frontmatter replaced by canonical YAML for `data`.

    The preamble, the marker lines, the body and the line endings are kept as they are. A file
    without frontmatter gets one at the top (after a shebang or encoding line).
    """
    fm = render_frontmatter(data, tf.newline)
    if tf.has_frontmatter:
        assert tf.open_index is not None and tf.close_index is not None
        head = "".join(tf.lines[: tf.open_index + 1])
        if not head.endswith(("\n", "\r")):
            head += tf.newline
        tail = "".join(tf.lines[tf.close_index :])
        return head + fm + tail
    lines = tf.lines
    keep = 0
    while keep < len(lines) and keep < 2 and (
        lines[keep].startswith("#!") or "coding" in lines[keep][:40] and lines[keep].startswith("#")
    ):
        keep += 1
    head = "".join(lines[:keep])
    if head and not head.endswith(("\n", "\r")):
        head += tf.newline
    return head + MARKER + tf.newline + fm + MARKER + tf.newline + "".join(lines[keep:])


def serialize(manifest: Manifest, body: str, *, newline: str = "\n", preamble: str = "") -> str:
    """A whole tool file for a manifest and a body."""
    return preamble + MARKER + newline + render_frontmatter(manifest.to_data(), newline) + MARKER + newline + body


def yaml_comment_lines(tf: ToolFile) -> list[int]:
    """1-based file lines of the frontmatter that hold a YAML comment (`key: 1  # why`).

    The YAML reader drops comments, so rewriting the frontmatter from data would lose them;
    `fmt` uses this to refuse instead. A `#` counts when it starts the text or follows a space
    and is not inside any scalar's span.
    """
    if tf.open_index is None or not tf.yaml_text:
        return []
    rows = tf.yaml_text.split("\n")
    covered: dict[int, list[tuple[int, int]]] = {}
    for node in tf.nodes.values():
        ranges = [(node.key_start, node.key_end)] if node.key_start is not None else []
        if node.raw is not None:
            ranges.append((node.start, node.end))
        for start, end in ranges:
            assert start is not None and end is not None
            for row in range(start.line, end.line + 1):
                a = start.column if row == start.line else 0
                b = end.column if row == end.line else len(rows[row]) if row < len(rows) else 0
                covered.setdefault(row, []).append((a, b))
    found = []
    for row, text in enumerate(rows):
        at = text.find("#")
        while at >= 0:
            if (at == 0 or text[at - 1] in " \t") and not any(
                a <= at < b for a, b in covered.get(row, ())
            ):
                found.append(tf.open_index + 2 + row)
                break
            at = text.find("#", at + 1)
    return found


class NotExact(ValueError):
    """Rewriting the frontmatter would change a value (the message says which and how)."""


def format_text(tf: ToolFile) -> str | None:
    """The file with canonical frontmatter, or None when its frontmatter cannot be read (or
    holds a value no reader reads exactly: the problems say where).

    Raises NotExact when the rewritten frontmatter would not read back as the same data: fmt
    must never change what a manifest means, whatever the writer does with odd values."""
    if tf.data is None or tf.problems:
        return None
    # Numbers are written as the runtime's writer writes them (`1.50` as `1.5`), except where
    # the field must be a string: there a number is an error whose fix quotes the digits as
    # written, so `python_version: 3.10` must not turn into `3.1` first.
    new = with_frontmatter(tf, _raw_only_in_strings(yamlio.keep_number_text(tf.data, tf.nodes)))
    check_exact(tf, new)
    return new


# Fields whose value must be a string (by path, `[]` for any list index).
_STRING_FIELDS = frozenset(
    {
        ("name",), ("version",), ("description",), ("generated_by",), ("generated_at",),
        ("inputs", "[]", "name"), ("inputs", "[]", "type"), ("inputs", "[]", "description"),
        ("inputs", "[]", "items", "type"), ("outputs", "type"), ("outputs", "description"),
        ("runtime", "language"), ("runtime", "python_version"), ("runtime", "packages", "[]"),
        ("external_auth", "[]"),
    }
)  # fmt: skip


def _raw_only_in_strings(data: Any, path: tuple[str, ...] = ()) -> Any:
    if isinstance(data, dict):
        return {k: _raw_only_in_strings(v, (*path, k)) for k, v in data.items()}
    if isinstance(data, list):
        return [_raw_only_in_strings(v, (*path, "[]")) for v in data]
    if isinstance(data, yamlio.RawFloat | yamlio.RawInt) and path not in _STRING_FIELDS:
        return float(data) if isinstance(data, float) else int(data)
    return data


def check_exact(tf: ToolFile, new_text: str) -> None:
    """Raise NotExact unless `new_text`'s manifest reads back as exactly `tf`'s data (the same
    values of the same types: `1` and `1.0` and `true` differ)."""
    from patch_tui.format.toolfile import parse

    again = parse(new_text)
    if again.problems or again.data is None:
        first = again.problems[0].message if again.problems else "the frontmatter cannot be read"
        raise NotExact(f"the rewritten frontmatter would not read back ({first})")
    where = _first_difference(tf.data, again.data)
    if where is not None:
        label = ".".join(str(p) for p in where) or "the manifest"
        raise NotExact(f"`{label}` cannot be written back exactly")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _first_difference(a: Any, b: Any, path: Path = ()) -> Path | None:
    if _is_number(a) and _is_number(b):
        # The runtime has one number type: its writer spells 0.0 as 0, which reads back equal.
        # Compared as the runtime's doubles (JavaScript reads every number as one).
        try:
            same = a == b or float(a) == float(b) or (a != a and b != b)
        except OverflowError:
            same = False
        return None if same else path
    if type(a) is not type(b) and not (isinstance(a, str) and isinstance(b, str)):
        return path
    if isinstance(a, dict):
        if a.keys() != b.keys():  # the order may change (canonical order), the keys may not
            return path
        for key in a:
            found = _first_difference(a[key], b[key], (*path, key))
            if found is not None:
                return found
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return path
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            found = _first_difference(x, y, (*path, i))
            if found is not None:
                return found
        return None
    if isinstance(a, float) and a != a and b != b:  # NaN is not equal to itself
        return None
    return None if a == b else path



def set_field(data: dict[str, Any], path: Path, value: Any) -> dict[str, Any]:
    """A copy of manifest data with one field set (creating mappings on the way)."""
    import copy

    out = copy.deepcopy(data)
    target: Any = out
    for step in path[:-1]:
        if isinstance(target, dict):
            if not isinstance(target.get(step), dict | list):
                target[step] = {}
            target = target[step]
        else:
            target = target[step]  # type: ignore[index]
    last = path[-1]
    if isinstance(target, dict) and value is _DELETE:
        target.pop(last, None)
    elif isinstance(target, list) and value is _DELETE:
        del target[last]  # type: ignore[arg-type]
    else:
        target[last] = value  # type: ignore[index]
    return out


class _Delete:
    def __repr__(self) -> str:
        return "DELETE"


_DELETE: Any = _Delete()
DELETE: Any = _DELETE
"""Pass as the value to `set_field` to remove a field."""
