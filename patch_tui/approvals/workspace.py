"""Will a held call be able to run? Path args outside the workspace, flagged at hold time.

A read-write tool may write only inside the workspace (runtime/sandbox.py): the folder the call
is made from for `run`, `confirm` and try-it, `serve_workspace` for serve (none when unset). A
call whose path argument lies outside it is approved, then fails with "Read-only file system",
its token used up (issue 25). So the gate checks at hold time and keeps what it found on the
action (`details["workspace"]`); every front end (the held answer, the inbox's row, detail and
approve dialog, `inbox list` / `show`) shows the same sentence, `warning(action)`.

    outside_workspace(args, manifest, workspace) -> list[dict]   [{"input", "path"}]
    check(args, manifest, workspace) -> dict | None               what the action keeps
    warning(action) -> str | None                                  one sentence for a person

Path args are the inputs whose name or description says path, file, folder or dir (their string
values), and any string value that is an absolute path (`/…` or `~/…`). A relative path runs in
the tool's own run folder, which it may always write, so it is never flagged.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from patch_tui.format.plain_manifest import RunManifest
    from patch_tui.runtime.runner import Isolation

_PATH_WORDS = re.compile(r"\b(path|paths|file|files|filename|folder|folders|dir|dirs|directory)\b")
_NAME_WORDS = re.compile(r"(^|_)(path|paths|file|files|filename|folder|dir|dirs|directory)(_|$)")
HOW_TO_SET = (
    "run `patch-tui confirm` (or `run`, or the TUI) from a folder that holds the path, "
    "or set serve_workspace (env PATCH_TUI_SERVE_WORKSPACE) for `patch-tui serve`"
)


def _says_path(name: str, description: str) -> bool:
    return bool(_NAME_WORDS.search(name.lower()) or _PATH_WORDS.search(description.lower()))


def _absolute(value: str) -> Path | None:
    """The absolute path a string names, or None (a relative path, a URL, a sentence)."""
    if not value or "\n" in value or "\x00" in value or len(value) > 4096:
        return None
    if value.startswith("~/") or value == "~":
        value = os.path.expanduser(value)
    if not value.startswith("/"):
        return None
    return Path(os.path.normpath(value))


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _real(path: Path) -> Path:
    # As the sandbox sees it: symlinks resolved (a path that does not exist yet resolves as far
    # as it does).
    try:
        return Path(os.path.realpath(path))
    except (OSError, ValueError):
        return path


def _path_args(args: dict[str, Any], manifest: RunManifest) -> list[tuple[str, str, Path]]:
    """(input, value, absolute path) for each path arg of the call."""
    found: list[tuple[str, str, Path]] = []
    for inp in manifest.inputs:
        if inp.name not in args:
            continue
        path_input = _says_path(inp.name, inp.description or "")
        for text in _strings(args[inp.name]):
            path = _absolute(text)
            if path is None:
                continue  # relative: the run folder, always writable
            if path_input or text.startswith(("/", "~")):
                found.append((inp.name, text, path))
    return found


def outside_workspace(
    args: dict[str, Any], manifest: RunManifest, workspace: Path | None
) -> list[dict[str, str]]:
    """[{"input", "path"}] for each path arg a read-write tool could not write: outside the
    workspace (every absolute path, when there is none). Empty for other tools."""
    if manifest.capabilities.filesystem != "read-write":
        return []
    ws = _real(workspace) if workspace is not None else None
    return [
        {"input": name, "path": text}
        for name, text, path in _path_args(args, manifest)
        if ws is None or not _inside(_real(path), ws)
    ]


def _walked_folders(workspace: Path, protected: list[Path], sealed: list[Path]) -> set[Path]:
    """The folders Landlock cannot grant as a whole (runtime/sandbox_exec.py `expand`): the
    workspace and each folder on the way down to a protected path inside it. Their entries are
    granted one by one, so no entry can be made, removed or renamed in the folders themselves."""
    ws = _real(workspace)
    walked: set[Path] = set()
    for item in protected:
        real = _real(item)
        if real == ws or not _inside(real, ws):
            continue
        walked.update(p for p in real.parents if _inside(p, ws))
    walked.update(_real(s) for s in sealed if _inside(_real(s), ws))
    return walked


def landlock_blocked(
    args: dict[str, Any],
    manifest: RunManifest,
    workspace: Path | None,
    protected: list[Path],
    sealed: list[Path] | None = None,
) -> list[dict[str, str]]:
    """[{"input", "path"}] for each path arg inside the workspace that names an entry of a
    folder Landlock cannot open to new entries (a workspace that holds tool files or the store):
    creating, deleting or renaming it fails with Permission denied."""
    if manifest.capabilities.filesystem != "read-write" or workspace is None:
        return []
    walked = _walked_folders(workspace, protected, sealed or [])
    if not walked:
        return []
    ws = _real(workspace)
    found: list[dict[str, str]] = []
    for name, text, path in _path_args(args, manifest):
        real = _real(path)
        if _inside(real, ws) and real.parent in walked:
            found.append({"input": name, "path": text})
    return found


def check(
    args: dict[str, Any],
    manifest: RunManifest,
    workspace: Path | None,
    *,
    engine: str | None = None,
    protected: list[Path] | None = None,
    sealed: list[Path] | None = None,
) -> dict[str, Any] | None:
    """What a held action keeps about its workspace, or None when every path arg can be
    written. `engine`, `protected` (the run's hidden and frozen paths) and `sealed` add the
    Landlock case."""
    outside = outside_workspace(args, manifest, workspace)
    blocked = (
        landlock_blocked(args, manifest, workspace, protected or [], sealed)
        if engine == "landlock"
        else []
    )
    if not outside and not blocked:
        return None
    flag: dict[str, Any] = {"workspace": None if workspace is None else str(workspace)}
    if outside:
        flag["outside"] = outside
    if blocked:
        flag["landlock_top_level"] = blocked
    return flag


def flag_for_call(
    args: dict[str, Any],
    manifest: RunManifest,
    tool_path: Path,
    iso: Isolation,
    runs_dir: Path | None,
) -> dict[str, Any] | None:
    """`check` for a call about to be held, with the run's isolation: the engine that will run
    it and, under Landlock, the paths it protects (runtime/runner.py `protected_paths`)."""
    from patch_tui.runtime import sandbox
    from patch_tui.runtime.protected import protected_paths
    from patch_tui.runtime.runner import workspace_refusal

    if manifest.capabilities.filesystem != "read-write":
        return None
    # The workspace the run will have: none when the caller's is refused (the home folder, /).
    workspace = iso.workspace
    if workspace is not None and workspace_refusal(workspace):
        workspace = None
    engine = sandbox.choose_engine(iso.engine)
    protected: list[Path] = []
    sealed: list[Path] = []
    if engine == "landlock" and workspace is not None:
        try:
            guard = protected_paths(
                store=iso.store,
                toolbox=iso.toolbox,
                tool_path=str(tool_path),
                runs_dir=runs_dir,
                run_root=sandbox.runs_root(),
                workspace=workspace,
            )
        except OSError:
            pass
        else:
            protected, sealed = [*guard.hidden, *guard.frozen], guard.sealed
    return check(args, manifest, workspace, engine=engine, protected=protected, sealed=sealed)


def _named(items: list[Any]) -> str:
    items = [o for o in items if isinstance(o, dict)]
    named = ", ".join(f"{o.get('input')}={o.get('path')}" for o in items[:3])
    if len(items) > 3:
        named += f" and {len(items) - 3} more"
    return named


def describe(flag: dict[str, Any], *, held: bool = True) -> str | None:
    """The one sentence for a person, from what the action kept (None when it is not a flag).
    `held`: said of a held call (approving it would use the approval up), else of a run."""
    workspace = flag.get("workspace")
    outside = flag.get("outside")
    if isinstance(outside, list) and outside:
        where = (
            f"outside the workspace {workspace}"
            if isinstance(workspace, str)
            else "outside the workspace (none is set: the tool may write only its own run folder)"
        )
        return (
            f"{_named(outside)} lies {where}: the tool can read it but not change it, so this "
            + (
                "call will fail (Read-only file system) and use up its approval"
                if held
                else "run will fail (Read-only file system)"
            )
            + f". To let it run, {HOW_TO_SET}."
        )
    blocked = flag.get("landlock_top_level")
    if isinstance(blocked, list) and blocked:
        return (
            f"{_named(blocked)} is an entry of a folder that holds files patch-tui protects "
            f"(tool files, the store) inside the workspace {workspace}: under Landlock a tool "
            "can change the files already there but cannot create, delete or rename one there, "
            f"so this {'call' if held else 'run'} will fail (Permission denied). Put the file "
            "in a subfolder, or run from a folder that holds no tool files."
        )
    return None


def warning(action: Any) -> str | None:
    """The sentence for an action held with path args outside the workspace, else None."""
    details = getattr(action, "details", None) or {}
    flag = details.get("workspace") if isinstance(details, dict) else None
    return describe(flag) if isinstance(flag, dict) else None


def short(action: Any) -> str | None:
    """A few words for a list row ("⚠ will fail: outside workspace"), else None."""
    details = getattr(action, "details", None) or {}
    flag = details.get("workspace") if isinstance(details, dict) else None
    if not isinstance(flag, dict) or describe(flag) is None:
        return None
    if flag.get("outside"):
        return "⚠ will fail: outside workspace"
    return "⚠ will fail: Landlock top level"
