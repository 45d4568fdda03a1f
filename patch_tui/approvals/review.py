"""What an action shows before a person decides it, for every front end without a screen of
its own (the web app; the TUI's detail pane reads `tool_info` and `blocked` from here too).

    tool_info(action, catalog)     -> ToolInfo     the tool file behind an action
    blocked(action, catalog)       -> str | None   why approving it could never run it
    review(store, action, catalog) -> Review       everything a page shows: the tool, its source
                                                   as held, the diff against the last approved
                                                   version, the inputs (for edit-then-approve),
                                                   whether Approve is possible and why not
                                                   (approvals/approvable.py's answer), the
                                                   workspace warning

The source shown is the tool file's bytes only when their sha256 is the one the call was held
with (the bytes that would run); otherwise Approve is off and the page says the file changed.
The "last approved version" is the source of the newest earlier action of the same tool that a
person approved (approved, running or run) with another source sha256, found among the tool's
history files (runtime/toolbox.py keeps every superseded version) by that sha256.
"""

from __future__ import annotations

import difflib
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from patch_tui.approvals import approvable, workspace
from patch_tui.approvals.values import OPEN_STATUSES, Action, ActionStatus
from patch_tui.runtime.catalog import ToolCatalog

if TYPE_CHECKING:
    from patch_tui.approvals.store import Store
    from patch_tui.format import manifest as model
    from patch_tui.format import plain_manifest as plain

# Statuses whose source a person approved.
APPROVED_STATUSES = (
    ActionStatus.APPROVED,
    ActionStatus.EXECUTING,
    ActionStatus.EXECUTED,
    ActionStatus.FAILED,
)
# Earlier actions of one tool looked at to find the last approved source: a bound, not a goal.
HISTORY_WINDOW = 200


@dataclass(frozen=True)
class ToolInfo:
    """What is known of the tool behind an action (from its file, if found)."""

    path: Path | None
    description: str | None = None
    capabilities: dict[str, Any] | None = None
    scopes: tuple[str, ...] = ()
    sha256: str | None = None
    problem: str | None = None
    text: str | None = None
    inputs: tuple[model.Input | plain.Input, ...] = ()

    @property
    def destructive(self) -> bool:
        caps = self.capabilities or {}
        # As the MCP annotations say it: human_confirm or read-write is destructive; unknown is too.
        return self.capabilities is None or bool(
            caps.get("human_confirm") or caps.get("filesystem") == "read-write"
        )


# Without a caller's catalog (a bare host, a module-level helper): one for the module.
_CATALOG = ToolCatalog()


def tool_info(action: Action, catalog: ToolCatalog | None = None) -> ToolInfo:
    """The tool file named by the action, from the catalog (read once per file version)."""
    if not action.tool_path:
        return ToolInfo(None, problem="the action does not say where the tool file is")
    path = Path(action.tool_path)
    if not path.exists():
        return ToolInfo(path, problem=f"the tool file is gone: {path}")
    tool = (catalog or _CATALOG).read(path)
    if tool.tool is None:
        return ToolInfo(path, problem=f"cannot read the tool file: {tool.error}")
    # Read without pydantic when the model is certain to read it the same way (a run's reading,
    # format/plain_manifest.py); else the model says (an invalid manifest among them).
    manifest = tool.run_manifest
    if manifest is None:
        return ToolInfo(
            path,
            sha256=tool.sha256,
            text=tool.tool.text,
            problem="the tool's manifest does not parse",
        )
    return ToolInfo(
        path,
        description=manifest.description,
        capabilities=_capabilities(manifest.capabilities),
        scopes=tuple(manifest.external_auth),
        sha256=tool.sha256,
        text=tool.tool.text,
        inputs=tuple(manifest.inputs),
    )


def _capabilities(caps: model.Capabilities | plain.Capabilities) -> dict[str, Any]:
    """The capabilities as a mapping, by the fields both readings share (the model's dump)."""
    from patch_tui.format.plain_manifest import Capabilities

    return {name: getattr(caps, name) for name in Capabilities._fields}


def blocked(action: Action, catalog: ToolCatalog | None = None) -> str | None:
    """Why `action` may not be approved (approvals.approvable, the one answer: args no one can
    have seen, or a tool file that changed since the call was held), or None."""
    problem = approvable.check(action, tool_info(action, catalog).sha256)
    if problem is None or problem.code == "not_pending":
        return None
    return problem.why


@dataclass(frozen=True)
class Review:
    action: Action
    tool: ToolInfo
    # The source that would run (the tool file's text when its sha256 is the held one), or None.
    source: str | None
    # Unified diff lines from the last approved version to `source` ([] when none was found).
    diff: list[str] = field(default_factory=list)
    previous_version: str | None = None
    # Why Approve is not possible now (not pending, tool file changed, damaged), or None.
    cannot_approve: str | None = None
    # Why the args cannot be edited (guard's upstream runs the args it was given), or None.
    cannot_edit: str | None = None
    # A path arg outside the workspace: the call would fail once approved (approvals/workspace.py).
    workspace_warning: str | None = None

    @property
    def can_reject(self) -> bool:
        return self.action.status == ActionStatus.PENDING


def review(store: Store, action: Action, catalog: ToolCatalog | None = None) -> Review:
    info = tool_info(action, catalog)
    source = info.text if info.sha256 == action.source_sha256 else None
    diff, previous_version = _diff_against_last_approved(store, action, source)
    # The one answer every front end gives (approvals/approvable.py): unseen args, not
    # pending, or a tool file that changed since the call was held.
    problem = approvable.check(action, info.sha256)
    cannot = problem.why if problem is not None else None
    cannot_edit = None
    if action.upstream_token is not None:
        cannot_edit = "the upstream server runs the args it was given: reject instead"
    elif not info.inputs:
        cannot_edit = "the tool declares no inputs to edit"
    warning = workspace.warning(action) if action.status in OPEN_STATUSES else None
    return Review(action, info, source, diff, previous_version, cannot, cannot_edit, warning)


def _diff_against_last_approved(
    store: Store, action: Action, source: str | None
) -> tuple[list[str], str | None]:
    if source is None or not action.tool_path:
        return [], None
    earlier = store.list_actions(statuses=APPROVED_STATUSES, tool=action.tool, limit=HISTORY_WINDOW)
    last = next(
        (
            a
            for a in earlier
            if a.token != action.token
            and a.created_at <= action.created_at
            and a.source_sha256 != action.source_sha256
        ),
        None,
    )
    if last is None:
        return [], None
    old = _history_text(Path(action.tool_path), action.tool, last.source_sha256)
    if old is None:
        return [], last.version
    lines = difflib.unified_diff(
        old.splitlines(),
        source.splitlines(),
        fromfile=f"{action.tool} {last.version} (last approved)",
        tofile=f"{action.tool} {action.version} (this call)",
        lineterm="",
    )
    return list(lines), last.version


def _history_text(tool_path: Path, name: str, sha256: str) -> str | None:
    """The history file of `name` whose bytes have this sha256 (Patch toolbox or plain folder)."""
    folders: Sequence[Path] = (
        tool_path.parent.parent / "history" / name,
        tool_path.parent / ".history" / name,
    )
    for folder in folders:
        if not folder.is_dir():
            continue
        for candidate in sorted(folder.glob("*.py")):
            try:
                data = candidate.read_bytes()
            except OSError:
                continue
            if hashlib.sha256(data).hexdigest() == sha256:
                return data.decode("utf-8", "replace")
    return None
