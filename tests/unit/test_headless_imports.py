"""Everything outside ui/ (and the headless commands) must never import Textual, and nothing imports anthropic or mcp
at start-up (docs/architecture.md, A core that does not know the UI). Each import runs in a fresh interpreter so earlier
tests cannot mask it: for the per-module check, a process forked from an interpreter that has imported nothing but
the standard library, yaml and pydantic (one interpreter start instead of one per module)."""

from __future__ import annotations

import fcntl
import json
import os
import pkgutil
import subprocess
import sys

import pytest

import patch_tui

# Every module outside ui/ (format, lint, runtime, approvals, mcp_server, generate, interop, ...).
CORE_MODULES = sorted(
    m.name
    for m in pkgutil.walk_packages(patch_tui.__path__, prefix="patch_tui.")
    if not m.name.startswith("patch_tui.ui") and m.name != "patch_tui.__main__"
)


def _imported_after(code: str) -> set[str]:
    probe = code + "\nimport sys\nprint(','.join(sorted(m.split('.')[0] for m in sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    return set(out.stdout.strip().split(","))


# Run by a bare interpreter: for each module, a forked child imports it and reports the top-level
# names in sys.modules (or the error), so no module's imports can mask another's. The parent first
# loads the two libraries nearly every module needs (yaml, and pydantic with its schema builder),
# so each child does not pay for them again; neither of them imports textual, anthropic or mcp,
# which the probe checks before forking.
_FORK_PROBE = """
import json, os, sys
import yaml, pydantic
class _Warm(pydantic.BaseModel):
    x: int = 0
assert not {"textual", "anthropic", "mcp"} & {m.split(".")[0] for m in sys.modules}
found = {}
for name in sys.argv[1:]:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            __import__(name)
            out = ",".join(sorted({m.split(".")[0] for m in sys.modules}))
        except BaseException as exc:
            out = "!" + repr(exc)
        os.write(write, out.encode())
        os._exit(0)
    os.close(write)
    data = b""
    while chunk := os.read(read, 1 << 16):
        data += chunk
    os.close(read)
    os.waitpid(pid, 0)
    found[name] = data.decode()
print(json.dumps(found))
"""


@pytest.fixture(scope="module")
def loaded_by_module(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    # Under xdist the parametrized tests spread over every worker; the probe runs once and the
    # other workers read its report (pytest-xdist's pattern for a fixture computed once per run).
    # The run's own temp root: a worker's basetemp is <run>/popen-gwN, a lone process's is <run>.
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if "PYTEST_XDIST_WORKER" in os.environ else base
    report = shared / "headless_imports.json"
    with open(shared / "headless_imports.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not report.exists():
            out = subprocess.run(
                [sys.executable, "-c", _FORK_PROBE, *CORE_MODULES],
                capture_output=True,
                text=True,
                check=True,
                timeout=300,
            )
            report.write_text(out.stdout)
    return json.loads(report.read_text())


@pytest.mark.parametrize("module", CORE_MODULES)
def test_core_module_never_imports_textual(module: str, loaded_by_module: dict[str, str]) -> None:
    report = loaded_by_module[module]
    assert not report.startswith("!"), f"importing {module} failed: {report[1:]}"
    loaded = set(report.split(","))
    assert "textual" not in loaded
    assert "anthropic" not in loaded
    # serve.py is the MCP server itself; every other core module stays free of mcp at import.
    if not module.endswith(".serve"):
        assert "mcp" not in loaded


def test_lint_command_imports_no_ui_or_sdk(tmp_path) -> None:
    tool = tmp_path / "t.py"
    tool.write_text("print(1)\n")
    code = f"import sys\nfrom patch_tui.cli import main\nrc = main(['lint', {str(tool)!r}])\n"
    loaded = _imported_after(code)
    assert not {"textual", "anthropic", "mcp"} & loaded


# What the desk's start-up must not import: pydantic (the settings and the manifest and theme
# models are validated after the first frame, or read plainly), highlighting (after the first
# paint), the confirmation store and the SDKs (when first used).
START_FREE = ("pydantic", "pydantic_settings", "pygments", "anthropic", "mcp")

_DESK_PROBE = """
import asyncio, json, sys
from patch_tui.ui import first_frame as hooks

seen = {}
later = hooks.after_first_frame

def after_first_frame(widget, callback):
    # The first of the work that follows the first frame starting: what it imports comes after
    # (on a loaded machine it can start before the polling below sees the frame).
    def first_of_the_rest():
        if frame_shown():
            seen.setdefault("shown", sorted(sys.modules))
        return callback()
    later(widget, first_of_the_rest)

hooks.after_first_frame = after_first_frame  # before the desk's modules take the name
from patch_tui.commands.tui import build_app, parse_for_bench
from patch_tui.ui.desk.manifest_form import ManifestForm
from patch_tui.ui.desk.source_pane import SourceArea

app = build_app(parse_for_bench(sys.argv[1]))
seen["built"] = sorted(sys.modules)

def frame_shown():
    # The bench's "first frame": the tool's source and its manifest form are shown.
    forms, sources = app.screen.query(ManifestForm), app.screen.query(SourceArea)
    return bool(forms and sources and forms.first().is_populated and sources.first().text)

async def first_frame(pilot):
    while not frame_shown():
        await asyncio.sleep(0.005)
    seen.setdefault("shown", sorted(sys.modules))
    app.exit()

app.run(headless=True, size=(120, 36), auto_pilot=first_frame)
print(json.dumps(seen))
"""


def test_desk_start_imports_no_pydantic_store_or_sdk(tmp_path) -> None:
    """`patch-tui PATH` up to the desk's first frame (what bench/tui_bench.py measures)."""
    import json
    import os

    from patch_tui.settings import paths

    env = dict(os.environ)
    env.update(
        PATCH_TUI_CONFIG=str(tmp_path / "config.toml"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_STATE_HOME=str(tmp_path / "state"),
        PATCH_TUI_STORE=str(tmp_path / "store.sqlite3"),
        PATCH_TUI_WATCH_TOOLS="false",
        PATCH_TUI_WATCH_THEMES="false",
    )
    (tmp_path / "config.toml").write_text('theme = "patch-light"\n[keymap]\n"desk.save" = "f2"\n')
    tool = sorted(paths.sample_tools_dir().glob("*.py"))[0]
    out = subprocess.run(
        [sys.executable, "-c", _DESK_PROBE, str(tool)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    built = {m.split(".")[0] for m in seen["built"]}
    shown = {m.split(".")[0] for m in seen["shown"]}
    assert not set(START_FREE) & built
    assert "sqlite3" not in built  # the pending-count watch opens the store after the first frame
    assert not set(START_FREE) & shown
    assert "patch_tui.format.manifest" not in seen["shown"]
    assert "patch_tui.settings.model" not in seen["shown"]


# The inbox's first frame (`patch-tui inbox`, as the command opens it): the list and the first
# action's details shown ("shown"); then the frame with the details' tool part, the tool's
# description (argv[3]) read from its file ("tool"). The config file's check (pydantic-settings,
# ui/first_frame.check_config_later) is held off: it needs pydantic on a timer of its own, and
# this probe asks what the tool part needs.
_INBOX_PROBE = """
import argparse, json, os, sys
from patch_tui.commands import inboxcmd
from patch_tui.ui import first_frame
from patch_tui.ui.inbox.inbox_app import InboxApp

first_frame.CONFIG_CHECK_DELAY = 3600
run = InboxApp.run
seen = {}

def first_frame_run(app, *args, **kwargs):
    display = app._display

    def shown(screen, renderable):
        display(screen, renderable)
        if renderable is None or "tool" in seen:
            return
        parts = app.screen.query("#detail Static")
        if "shown" not in seen and any(sys.argv[2] in str(part.render()) for part in parts):
            seen["shown"] = sorted(sys.modules)
        tool = app.screen.query("#detail-tool")
        if "shown" in seen and tool and sys.argv[3] in str(tool.first().render()):
            seen["tool"] = sorted(sys.modules)
            app.exit()

    app._display = shown
    return run(app, headless=True, size=(120, 36))

InboxApp.run = first_frame_run
args = argparse.Namespace(inbox_command=None, store=sys.argv[1], toolbox=None, theme=None)
inboxcmd.run_inbox(args)
print(json.dumps(seen))
"""


def _first_frame_env(tmp_path) -> dict[str, str]:
    import os

    env = dict(os.environ)
    env.update(
        PATCH_TUI_CONFIG=str(tmp_path / "config.toml"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_STATE_HOME=str(tmp_path / "state"),
        PATCH_TUI_STORE=str(tmp_path / "store.sqlite3"),
        PATCH_TUI_WATCH_TOOLS="false",
        PATCH_TUI_WATCH_THEMES="false",
    )
    # A config with a setting the start-up does not read: validating it (pydantic) must wait.
    (tmp_path / "config.toml").write_text('theme = "patch-light"\nconfirm_ttl = 120\n')
    return env


def _lazy_loaded(modules: list[str], *, inbox: bool = False, tool_part: bool = False) -> list[str]:
    from patch_tui.ui.first_frame import (
        INBOX_LAZY_MODULES,
        LAZY_MODULES,
        TOOL_PART_LAZY_MODULES,
    )

    loaded = set(modules)
    lazy_modules = (
        [*TOOL_PART_LAZY_MODULES]
        if tool_part
        else [*LAZY_MODULES, *(INBOX_LAZY_MODULES if inbox else ())]
    )
    return [
        lazy
        for lazy in lazy_modules
        if lazy in loaded or any(m.startswith(lazy + ".") for m in loaded)
    ]


def test_desk_first_frame_leaves_the_lazy_modules_unimported(tmp_path) -> None:
    """Every module listed in ui/first_frame.py LAZY_MODULES is still unimported when the desk
    shows its first frame (the tool's source and form)."""
    from patch_tui.settings import paths

    tool = paths.sample_tools_dir() / "word_count.py"
    out = subprocess.run(
        [sys.executable, "-c", _DESK_PROBE, str(tool)],
        capture_output=True,
        text=True,
        timeout=60,
        env=_first_frame_env(tmp_path),
    )
    assert out.returncode == 0, out.stderr[-3000:]
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert _lazy_loaded(seen["shown"]) == []


@pytest.mark.parametrize("older", [0, 204], ids=["one action", "more than a first page"])
def test_inbox_first_frame_leaves_the_lazy_modules_unimported(tmp_path, older: int) -> None:
    """`patch-tui inbox` shows its list and the first action's details without importing any
    LAZY_MODULES or INBOX_LAZY_MODULES (pydantic-settings among them: the config file is
    validated after the first frame; the manifest model, for the details' tool part, follows
    it too), whether the list is read at once or its first page first (ui/inbox/inbox.py)."""
    from patch_tui.approvals.store import Store
    from patch_tui.format import toolfile
    from patch_tui.settings import paths
    from patch_tui.ui.inbox.inbox import FIRST_PAGE

    assert older + 1 < FIRST_PAGE or older + 1 > FIRST_PAGE
    tool = paths.sample_tools_dir() / "delete_file.py"
    tf = toolfile.read(tool)
    store = tmp_path / "inbox.sqlite3"
    held = Store(store)
    try:
        for n in [*range(older), None]:  # the newest, shown first, is the one looked for
            path = "/srv/data/first-frame.csv" if n is None else f"/srv/data/older-{n}.csv"
            held.create_pending(
                "human_confirm",
                "delete_file",
                "1.0.0",
                tf.sha256,
                {"path": path},
                "Tool is marked capabilities.human_confirm: true.",
                tool_path=str(tool),
            )
    finally:
        held.close()
    out = subprocess.run(
        [sys.executable, "-c", _INBOX_PROBE, str(store), "first-frame.csv", tf.data["description"]],
        capture_output=True,
        text=True,
        timeout=60,
        env=_first_frame_env(tmp_path),
    )
    assert out.returncode == 0, out.stderr[-3000:]
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert "shown" in seen, "the inbox never showed the action's details"
    assert _lazy_loaded(seen["shown"], inbox=True) == []
    assert "tool" in seen, "the inbox never showed the details' tool part"
    # An ordinary tool file's manifest is read without pydantic (format/plain_manifest.py).
    assert _lazy_loaded(seen["tool"], tool_part=True) == []


# What the inbox uses after its tool part to decide (approve, reject, edit then approve, allow):
# none of it needs the manifest model for an ordinary tool file, which they read as a run does.
INBOX_DECIDING_MODULES = (
    "patch_tui.approvals.decisions",
    "patch_tui.approvals.edits",
    "patch_tui.approvals.review",
    "patch_tui.ui.inbox.allow_dialog",
    "patch_tui.ui.inbox.edit_args_dialog",
    "patch_tui.ui.inbox.inbox_dialogs",
)


def test_inbox_deciding_imports_no_manifest_model() -> None:
    """Importing what the inbox decides with, and checking an edit of a sample tool's args
    (approvals/edits.validate on the catalog's reading), leaves pydantic unimported."""
    from patch_tui.settings import paths

    tool = paths.sample_tools_dir() / "delete_file.py"
    code = (
        "\n".join(f"import {m}" for m in INBOX_DECIDING_MODULES)
        + "\nfrom patch_tui.runtime.catalog import ToolCatalog"
        + f"\nmanifest = ToolCatalog().read({str(tool)!r}).run_manifest"
        + "\nassert patch_tui.approvals.edits.validate({'path': 'x'}, manifest) is None"
        + "\nassert 'needs the input' in patch_tui.approvals.edits.validate({}, manifest)"
    )
    loaded = _imported_after(code)
    assert "pydantic" not in loaded
