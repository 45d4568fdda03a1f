"""The desk's commands in the palette (ctrl+p), named "area: verb".

A table of (name, help, action) read off the desk's screen; `EditorCommands` in
`ui/desk/editor.py` hands it to the palette when the desk is the screen shown.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def desk_commands(screen: Any) -> list[tuple[str, str, Callable[[], Any]]]:
    """The desk's palette commands, bound to `screen` (the desk's `EditorScreen`)."""
    return [
        ("tool: save", "Save the open tool (ctrl+s / F2)", screen.action_save),
        (
            "tool: new version",
            "Save as a new version: patch, minor or major (F6)",
            screen.action_save_version,
        ),
        ("tool: new", "Create a tool from the template (ctrl+n)", screen.action_new_tool),
        (
            "tool: rename",
            "Rename the open tool (file and manifest name)",
            lambda: screen._rename(screen.current_path),
        ),
        (
            "tool: duplicate",
            "Copy the open tool under a new name",
            lambda: screen._duplicate(screen.current_path),
        ),
        (
            "tool: delete",
            "Move the open tool to the trash folder",
            lambda: screen._delete(screen.current_path),
        ),
        (
            "tool: history",
            "Earlier versions, diffed against the current text (F10)",
            screen.action_history,
        ),
        (
            "tool: open in $EDITOR",
            "Edit in your own editor; reloads after (ctrl+o / F7)",
            screen.action_open_in_editor,
        ),
        (
            "tool: copy source",
            "Copy the whole source to the clipboard, OSC 52 (F9)",
            screen.action_copy_source,
        ),
        (
            "tool: reload from disk",
            "Throw away the edits and read the file again (undo keeps them)",
            screen.reload_from_disk,
        ),
        (
            "lint: apply fix",
            "Apply the quick fix of the problem at the cursor (F8)",
            screen.action_apply_fix,
        ),
        ("lint: next problem", "Move the cursor to the next problem", screen.action_next_problem),
        ("lint: focus problems", "Go to the problems list (ctrl+l / F5)", screen.action_focus_lint),
        (
            "view: toggle tool browser",
            "Show or hide the tool list (ctrl+b / F3)",
            screen.action_toggle_browser,
        ),
        (
            "view: form / source",
            "Switch between manifest and source when they share a pane (F4)",
            screen.action_toggle_view,
        ),
        (
            "view: soft wrap",
            "Wrap long lines in the source pane, or not (alt+z)",
            screen.action_toggle_wrap,
        ),
    ]
