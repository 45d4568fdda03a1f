"""May this action be approved, and if not, why: the one answer every front end gives.

    unseen(action)                          -> NotApprovable | None   what no one can have seen
    check(action, tool_sha256=UNCHECKED)    -> NotApprovable | None   unseen, not pending, or a
                                                                      tool file that changed
    ARGS_DISPLAY_LIMIT                      the longest args (canonical JSON) shown in full

An approval is worth what the person saw, so an action whose exact args are not known can never
be approved: singly, in a batch, by a standing grant, headless or from the web. It can always be
rejected. "Not known" is one of:

- `damaged`: the stored row cannot be read (its args are not a JSON object, ...), or its args
  do not match the args sha256 stored beside them, which is what an approval signs;
- `args_unknown`: `patch-tui guard` could not recover the exact args of a call its upstream
  held (a call nested in `patch_compose` that matches no step the agent sent, or whose args the
  runtime filled in from earlier steps); the upstream's `args_summary` is cut at 200 characters
  and is never taken for the args;
- `args_too_long`: the args are longer than any screen shows in full.

The store refuses to approve such an action inside the approval's own transaction
(`Store.approve`), so no path around the front ends exists; the TUI, the CLI, guard and the web
app call `check` to say so before anyone tries, with the same words.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Final

from patch_tui.approvals.values import Action, canonical_text

# Characters of canonical JSON. The inbox shows every value in full (long strings behind an
# explicit expand, the CLI folds them); past this, no person reads them through.
ARGS_DISPLAY_LIMIT: Final = 64 * 1024


class _Unchecked:
    def __repr__(self) -> str:
        return "UNCHECKED"


UNCHECKED: Final = _Unchecked()


@dataclass(frozen=True)
class NotApprovable:
    """Why an action may not be approved: `code` for programs, `why` for a person."""

    code: str  # damaged | args_unknown | args_too_long | not_pending | tool_changed
    why: str


def args_unknown_why(action: Action) -> str | None:
    """guard's reason the exact args of `action` are not known, or None when they are."""
    details = action.details or {}
    if details.get("args_known") is not False:
        return None
    why = details.get("args_unknown")
    return str(why) if why else "patch-tui guard could not recover them from what the agent sent"


def unseen(action: Action) -> NotApprovable | None:
    """Why no one can have seen exactly what `action` would do, or None."""
    if action.damaged:
        return NotApprovable(
            "damaged",
            f"{action.damaged}: it cannot be approved; reject it, then ask for the call again",
        )
    unknown = args_unknown_why(action)
    if unknown is not None:
        return NotApprovable(
            "args_unknown",
            f"its exact args are not known ({unknown}): it cannot be approved; reject it, and "
            "the agent can make the call again on its own",
        )
    try:
        text = canonical_text(action.args)
    except (TypeError, ValueError, RecursionError):
        return NotApprovable("damaged", "its args are not plain JSON: it cannot be approved")
    if len(text) > ARGS_DISPLAY_LIMIT:
        return NotApprovable(
            "args_too_long",
            f"its args are {len(text):,} characters, more than the {ARGS_DISPLAY_LIMIT:,} that "
            "can be shown in full: it cannot be approved; reject it",
        )
    # An approval signs the stored args_sha256 (what `inbox show` prints and scripts pass back):
    # a store that kept another call's hash beside these args would have a person approve, under
    # a hash that names other args, args it then swaps in. (Red team: it ran them.)
    try:
        bound = hashlib.sha256(text.encode("utf-8")).hexdigest() == action.args_sha256
    except UnicodeEncodeError:  # a lone surrogate: no UTF-8, so no hash binds it
        bound = False
    if not bound:
        return NotApprovable(
            "damaged",
            "its args do not match the sha256 stored with them (the store was edited): it "
            "cannot be approved; reject it, then ask for the call again",
        )
    return None


def check(action: Action, tool_sha256: str | None | _Unchecked = UNCHECKED) -> NotApprovable | None:
    """Why `action` may not be approved now, or None. `tool_sha256`: the sha256 of the tool
    file as the caller found it now (None: no file found, so not compared); left out, the file
    is not compared (guard's upstream tools, the store)."""
    if action.status != "pending":
        return NotApprovable("not_pending", f"it is {action.status}, not pending")
    problem = unseen(action)
    if problem is not None:
        return problem
    if isinstance(tool_sha256, str) and tool_sha256 != action.source_sha256:
        return NotApprovable(
            "tool_changed",
            "the tool file changed since this call was held, so confirming it would refuse to "
            "run it (make the call again to approve the new source)",
        )
    return None
