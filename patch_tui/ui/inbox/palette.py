"""The inbox's commands in the palette (ctrl+p), named "inbox: verb".

A table of (name, help, action) read off the inbox screen; `InboxCommands` in
`ui/inbox/inbox.py` hands it to the palette when the inbox is the screen shown.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def inbox_commands(screen: Any) -> list[tuple[str, str, Callable[[], Any]]]:
    """The inbox's palette commands, bound to `screen` (the `InboxScreen`)."""
    return [
        (
            "inbox: approve",
            "Approve the selected action, once all of it was shown (a)",
            screen.action_approve,
        ),
        (
            "inbox: reject",
            "Reject the selected action, with an optional reason (r)",
            screen.action_reject,
        ),
        (
            "inbox: select",
            "Select or deselect the action under the cursor, for a batch (space)",
            screen.action_toggle_select,
        ),
        (
            "inbox: select all",
            "Select every pending action listed (ctrl+a)",
            screen.action_select_all,
        ),
        (
            "inbox: select down",
            "Select this action and the next (shift+down; shift+up goes up)",
            lambda: screen.action_extend_selection(1),
        ),
        (
            "inbox: invert selection",
            "Select the unselected and deselect the selected (*)",
            screen.action_invert_selection,
        ),
        ("inbox: clear selection", "Deselect everything (esc)", screen.clear_batch),
        ("inbox: expand all", "Show every collapsed value in full (E)", screen.action_expand),
        ("inbox: read on", "Scroll the details a page on (d)", screen.action_read_on),
        (
            "inbox: history",
            "Decided, run, failed and expired actions / back to pending (h)",
            screen.action_toggle_history,
        ),
        (
            "inbox: export history",
            "Write the filtered history as the audit export does, JSONL or CSV (x)",
            screen.action_export,
        ),
        (
            "inbox: grants",
            "The standing grants, active and ended; revoke one (G)",
            screen.action_grants,
        ),
        (
            "inbox: open tool source",
            "The selected action's tool file (o)",
            screen.action_open_source,
        ),
    ]
