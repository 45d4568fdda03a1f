"""Writing a tool file back: the frontmatter rendered in the runtime writer's style, the rest of
the file untouched (`with_frontmatter`, `serialize`), and field edits (`set_field`).
format.toolfile re-exports every name here (and keeps fmt's `format_text` / `check_exact`,
which parse the rewrite back), so callers keep using `toolfile.with_frontmatter` and the like.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from patch_tui.format import yamlio
from patch_tui.format.fields import FIELD_ORDER
from patch_tui.format.runtime_format import MARKER
from patch_tui.format.yamlio import Path

if TYPE_CHECKING:  # for annotations only: format.toolfile imports this module, never the reverse
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
    while (
        keep < len(lines)
        and keep < 2
        and (
            lines[keep].startswith("#!")
            or "coding" in lines[keep][:40]
            and lines[keep].startswith("#")
        )
    ):
        keep += 1
    head = "".join(lines[:keep])
    if head and not head.endswith(("\n", "\r")):
        head += tf.newline
    return head + MARKER + tf.newline + fm + MARKER + tf.newline + "".join(lines[keep:])


def serialize(manifest: Manifest, body: str, *, newline: str = "\n", preamble: str = "") -> str:
    """A whole tool file for a manifest and a body."""
    return (
        preamble
        + MARKER
        + newline
        + render_frontmatter(manifest.to_data(), newline)
        + MARKER
        + newline
        + body
    )


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
