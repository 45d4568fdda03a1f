"""How `patch-tui inbox list`, `inbox show` and `inbox approve` print an action: everything,
in full.

- every arg, keys sorted (the canonical order the approval's args sha256 binds), one value per
  line as compact JSON, folded to the terminal's width and never cut (a long `body` cannot push
  a `to` out of sight);
- every character through the one display rule (untrusted.text_safety: invisible and control
  characters as `⟦U+XXXX⟧`), and under each value a `⚠` line for each look-alike or hidden
  character it holds, in plain words;
- the args sha256, which `inbox approve TOKEN --yes --args-sha256 HASH` must repeat: a script
  approves only what someone printed and read;
- whether it can be approved, and why not (approvals.approvable, the one answer).
"""

from __future__ import annotations

import json
import shutil
import unicodedata
from pathlib import Path
from typing import Any

from patch_tui.approvals import approvable
from patch_tui.approvals.store import Action
from patch_tui.runtime.toolbox import Toolbox
from patch_tui.untrusted.text_safety import flags, value_flags, visible_line

MARK = "⚠"
FOLD = "↪ "  # starts each continuation of a folded value


def terminal_width() -> int:
    return max(40, shutil.get_terminal_size((100, 24)).columns)


def _cells(ch: str) -> int:
    if ch.isascii():
        return 1
    if unicodedata.combining(ch):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def _units(text: str) -> list[str]:
    """`text` cut into pieces a fold never splits: each `⟦U+XXXX⟧` token whole, else one
    character (with the combining marks on it)."""
    out: list[str] = []
    i = 0
    while i < len(text):
        if text.startswith("⟦U+", i):
            end = text.find("⟧", i)
            if end != -1 and end - i <= 10:
                out.append(text[i : end + 1])
                i = end + 1
                continue
        if out and _cells(text[i]) == 0 and not out[-1].startswith("⟦"):
            out[-1] += text[i]
        else:
            out.append(text[i])
        i += 1
    return out


def fold(text: str, width: int) -> list[str]:
    """`text` (one line, already through the display rule) in lines of at most `width` cells;
    nothing is left out."""
    width = max(8, width)
    lines: list[str] = []
    line, used = "", 0
    for unit in _units(text):
        size = sum(_cells(c) for c in unit)
        if used + size > width and line:
            lines.append(line)
            line, used = "", 0
        line += unit
        used += size
    lines.append(line)
    return lines


def _value_text(value: Any) -> str:
    """A value as compact JSON (a string keeps its quotes: `"1"` is not `1`), on one line."""
    return visible_line(json.dumps(value, ensure_ascii=False, separators=(", ", ": ")))


def _flag_lines(sentences: list[str], indent: str, width: int) -> list[str]:
    out: list[str] = []
    for sentence in sentences:
        first, *rest = fold(f"{MARK} {sentence}", width - len(indent))
        out.append(indent + first)
        out.extend(indent + "  " + more for more in rest)
    return out


def arg_lines(args: dict[str, Any], width: int, indent: str = "      ") -> list[str]:
    """Every arg, keys sorted, each value folded under its key; a ⚠ line per flag."""
    if not args:
        return [indent + "(no args)"]
    out: list[str] = []
    for key in sorted(args, key=str):
        label = f"{visible_line(str(key))}: "
        room = max(16, width - len(indent) - len(FOLD))
        pieces = fold(label + _value_text(args[key]), room)
        out.append(indent + pieces[0])
        out.extend(indent + FOLD + piece for piece in pieces[1:])
        said = [sentence for _, sentence in value_flags({key: args[key]})]
        out.extend(_flag_lines(said, indent + "  ", width))
    return out


def args_block(action: Action, width: int) -> list[str]:
    """The args of `action` as `list` and `show` print them, or what stands in their place."""
    if action.damaged:
        return [f"    args:    DAMAGED: {visible_line(action.damaged)}"]
    unknown = approvable.args_unknown_why(action)
    if unknown is not None:
        summary = (action.details or {}).get("args_summary")
        lines = [f"    args:    NOT KNOWN: {visible_line(unknown)}"]
        if isinstance(summary, str):
            lines.append("    the upstream's own summary (cut, never what is approved):")
            lines.extend("      " + piece for piece in fold(visible_line(summary), width - 6))
        return lines
    return [
        f"    args sha256:   {action.args_sha256}",
        "    args (keys sorted, every value in full):",
        *arg_lines(action.args, width),
    ]


def approvable_line(action: Action, tool_sha256: Any = approvable.UNCHECKED) -> str | None:
    """`approvable: no, ...` for a pending action that cannot be approved; None otherwise."""
    if action.status != "pending":
        return None
    problem = approvable.check(action, tool_sha256)
    if problem is None:
        return None
    return f"    CANNOT BE APPROVED: {visible_line(problem.why)} (`inbox reject` still works)"


def header_line(action: Action) -> str:
    # A tampered approval shows as such in the status column: it will never run.
    status = "TAMPERED" if action.tampered else action.status
    return (
        f"{visible_line(action.token)}  {visible_line(status):<11} {visible_line(action.kind):<13} "
        f"{visible_line(action.tool)} {visible_line(action.version)}"
    )


def list_lines(action: Action, width: int) -> list[str]:
    lines = [header_line(action)]
    lines.extend(_flag_lines(flags(action.tool), "    ", width))
    lines.extend(args_block(action, width))
    reason = fold(visible_line(action.reason), width - 13)
    lines.append(f"    reason:  {reason[0]}")
    lines.extend("             " + more for more in reason[1:])
    lines.extend(_flag_lines(flags(action.reason), "      ", width))
    # The store's times are text another program may have written: shown by the display rule.
    created, expires = visible_line(action.created_at), visible_line(action.expires_at)
    lines.append(f"    created: {created}   expires: {expires}")
    if action.decided_at:
        decided = (
            f"    decided: {visible_line(action.decided_at)} by "
            f"{visible_line(action.decided_by or '?')}"
        )
        if action.note:
            decided += f" ({visible_line(action.note)})"
        lines.append(decided)
    if not action.decided_at and action.note:
        # e.g. an approval made before approvals were signed, reopened: why it is pending again.
        lines.append(f"    note:    {visible_line(action.note)}")
    if action.standing:
        lines.append(f"    approvals: {visible_line(action.standing)}")
    warning = _workspace_warning(action)
    if warning is not None:
        lines.append(f"    WARNING: {warning}")
    if action.tampered:
        lines.append(
            f"    TAMPERED: {visible_line(action.tampered)}; never run (status in the store: "
            f"{action.status})"
        )
    cannot = approvable_line(action)
    if cannot is not None:
        lines.append(cannot)
    return lines


def _taint_origin_lines(action: Action) -> list[str]:
    """For a tainted_input hold: which tool output each input matched, and when (gate.py
    `taint_origins`), so a person can tell a value they typed from one an agent passed on."""
    lines: list[str] = []
    for item in (action.details or {}).get("tainted_inputs") or []:
        if not isinstance(item, dict):
            continue
        for hit in item.get("matchedOutputs") or []:
            if not isinstance(hit, dict):
                continue
            lines.append(
                f"matched:       {visible_line(str(item.get('inputName')))} <- output of "
                f"{visible_line(str(hit.get('tool')))} at {visible_line(str(hit.get('at')))}: "
                f"{visible_line(str(hit.get('excerpt')))}"
            )
    return lines


def _workspace_warning(action: Action) -> str | None:
    """What will happen to a read-write call whose paths lie outside the workspace (shown while
    it can still run)."""
    from patch_tui.approvals import workspace

    if action.status not in ("pending", "approved"):
        return None
    warning = workspace.warning(action)
    return None if warning is None else visible_line(warning)


def tool_file(action: Action, toolbox: Toolbox | None) -> Path | None:
    """The held call's tool file: the path it was held with, else the toolbox's tool of its name."""
    if action.tool_path and Path(action.tool_path).is_file():
        return Path(action.tool_path)
    if toolbox is not None:
        found = toolbox.find(action.tool)
        return Path(found) if found is not None else None
    return None


def _capabilities(action: Action, toolbox: Toolbox | None) -> tuple[str, Any]:
    """What the tool may do as its file says, and the file's sha256 now (UNCHECKED when the
    call is bound to an upstream's listing, None when no file is found)."""
    from patch_tui.format import toolfile

    if (action.details or {}).get("source_basis") == "listing":
        return (
            "not known: a tool of another MCP server (bound to its listing by the upstream)",
            approvable.UNCHECKED,
        )
    path = tool_file(action, toolbox)
    if path is None:
        return "not known: the tool file is not found", None
    try:
        tf = toolfile.read(str(path))
    except OSError as exc:
        return f"not known: {visible_line(str(exc))}", None
    if tf.manifest is None:
        return "not known: the tool file's manifest does not parse", tf.sha256
    caps = tf.manifest.capabilities
    text = (
        f"network: {str(caps.network).lower()}, filesystem: {caps.filesystem}, "
        f"human_confirm: {str(caps.human_confirm).lower()}, browser: {str(caps.browser).lower()}"
    )
    if tf.sha256 != action.source_sha256:
        text += "  (the file CHANGED since the call was held: these are the new file's)"
    return text, tf.sha256


def show_lines(action: Action, toolbox: Toolbox | None, width: int) -> list[str]:
    """One action entirely: what `inbox show TOKEN` prints and `inbox approve` asks about."""
    capabilities, tool_sha = _capabilities(action, toolbox)
    status = "TAMPERED" if action.tampered else action.status
    lines = [
        f"token:         {visible_line(action.token)}",
        f"status:        {visible_line(status)}",
        f"kind:          {visible_line(action.kind)}",
        f"tool:          {visible_line(action.tool)}",
    ]
    lines.extend(_flag_lines(flags(action.tool), "               ", width))
    lines += [
        f"version:       {visible_line(action.version) or '(none: not a Patch tool file)'}",
        f"path:          {visible_line(action.tool_path or '(none)')}",
        f"source sha256: {action.source_sha256}",
        f"capabilities:  {capabilities}",
        f"created:       {visible_line(action.created_at)}",
        f"expires:       {visible_line(action.expires_at)}",
    ]
    reason = fold(visible_line(action.reason), width - 15)
    lines.append(f"reason:        {reason[0]}")
    lines.extend("               " + more for more in reason[1:])
    lines.extend(_flag_lines(flags(action.reason), "               ", width))
    lines.extend(_taint_origin_lines(action))
    lines.extend(line[4:] for line in args_block(action, width))  # list indents them by 4
    lines.extend(_flags_summary(action))
    warning = _workspace_warning(action)
    if warning is not None:
        lines.append(f"WARNING:       {warning}")
    if not action.decided_at and action.note:
        lines.append(f"note:          {visible_line(action.note)}")
    if action.standing:
        lines.append(f"approvals:     {visible_line(action.standing)}")
    if action.tampered:
        lines.append(f"TAMPERED: {visible_line(action.tampered)}; never run")
    problem = approvable.check(action, tool_sha) if action.status == "pending" else None
    if action.status == "pending":
        lines.append(
            "approvable:    yes"
            if problem is None
            else f"approvable:    NO: {visible_line(problem.why)}"
        )
    return lines


def _flags_summary(action: Action) -> list[str]:
    """`flags:` with how many look-alike and hidden-character warnings the action carries."""
    found = flags(action.tool) + flags(action.reason)
    if not action.damaged:
        found += [sentence for _, sentence in value_flags(action.args)]
    if not found:
        return ["flags:         none (no hidden characters, no look-alikes)"]
    return [
        f"flags:         {MARK} {len(found)} warning{'s' if len(found) != 1 else ''}: "
        f"read the {MARK} lines"
    ]
