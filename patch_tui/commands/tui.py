"""`patch-tui [PATH]`: the TUI on a tool file, a folder of tools, or the Patch toolbox."""

from __future__ import annotations

import argparse
import gc
import sys
from pathlib import Path
from typing import Any


class FirstRunError(Exception):
    """The first run could not make the user's toolbox (one line for the terminal)."""


def first_run_toolbox(toolbox: Path) -> str:
    """Make the user's toolbox on the first run: copy the shipped sample tools into
    `toolbox/tools` and return the sentence the screen shows. The shipped folder is never opened
    itself: it is the repository (or site-packages after `pip install .`), and edits saved there
    would be lost or land where nobody looks."""
    import shutil

    from patch_tui.runtime.toolbox import Toolbox, ToolboxError
    from patch_tui.settings import paths

    tools = toolbox / "tools"
    samples = sorted(paths.sample_tools_dir().glob("*.py"))
    try:
        # The runtime's whole layout (tools/, runs/, index.json, config.json), and every copied
        # sample registered in index.json: the Patch runtime lists only indexed tools, and this
        # folder is its default toolbox too.
        box = Toolbox.init_patch(toolbox)
        copied = []
        for src in samples:
            dest = tools / src.name
            if not dest.exists():  # never overwrite a file of the user's
                shutil.copyfile(src, dest)
                copied.append(dest)
        box.sync_index(copied)
    except (OSError, ToolboxError) as exc:
        raise FirstRunError(
            f"cannot create the toolbox {tools}: {getattr(exc, 'strerror', None) or exc} (open a folder instead: patch-tui PATH)"
        ) from exc
    return f"First run: {len(samples)} sample tools copied into {_home_short(tools)}, your toolbox. Edits are saved there."


def _home_short(path: Path) -> str:
    home = Path.home()
    try:
        return "~/" + str(path.relative_to(home))
    except ValueError:
        return str(path)


def _target(args: argparse.Namespace) -> tuple[Path, Path | None, str | None]:
    """The folder to browse, the file to open first (None: the first tool), and a notice to
    show (the first run says where it put the samples)."""
    from patch_tui.settings import paths

    if args.path:
        p = Path(args.path).expanduser()
        if not p.exists():
            raise FileNotFoundError(f"{p}: no such file or folder")
        return (p.parent if p.is_file() else p), (p if p.is_file() else None), None
    toolbox = paths.default_toolbox(getattr(args, "toolbox", None))
    tools = toolbox / "tools"
    if tools.is_dir():
        return toolbox, None, None
    notice = first_run_toolbox(toolbox)
    return toolbox, None, notice


def build_app(args: argparse.Namespace) -> Any:
    """The app for parsed arguments (raises FileNotFoundError / ToolboxError / ConfigError)."""
    from patch_tui.runtime.toolbox import Toolbox
    from patch_tui.settings.config import start_settings
    from patch_tui.ui.app import PatchApp

    folder, first, notice = _target(args)
    toolbox = Toolbox.open(first or folder)
    settings = start_settings()  # no pydantic before the first frame; the app checks the rest
    store = getattr(args, "store", None)
    return PatchApp(
        toolbox,
        first,
        settings=settings,
        theme=getattr(args, "theme", None),
        store_path=store or None,  # a path, or a postgresql:// URL (kept as text)
        notice=notice,
    )


def start_app(args: argparse.Namespace) -> Any:
    """What `patch-tui` does before running the app (the start-up benchmark calls this too).

    Start-up allocates a few hundred thousand objects (modules, widgets, styles) and none of
    them is garbage yet: the collector would only scan them again and again, which cost about
    100 ms before the first frame. It is paused here and the app resumes it after that frame,
    with those objects frozen. Stylesheets parsed by an earlier start are read from the cache
    folder (ui/css_cache.py); `run_tui` saves what this one parsed when the app ends."""
    gc.disable()  # before anything imports Textual: the imports alone ran the collector often
    try:
        from patch_tui.ui import css_cache

        css_cache.activate()
        app = build_app(args)
    except BaseException:
        gc.enable()
        raise
    app.resume_gc_after_first_frame = True
    return app


def parse_for_bench(path: str) -> argparse.Namespace:
    """The arguments `patch-tui PATH` would give (the start-up benchmark uses this)."""
    return argparse.Namespace(path=path, theme=None, toolbox=None, store=None)


def run_tui(args: argparse.Namespace) -> int:
    from patch_tui.runtime.toolbox import ToolboxError
    from patch_tui.settings.config import ConfigError

    try:
        app = start_app(args)
    except (FileNotFoundError, ToolboxError, ConfigError, FirstRunError) as exc:
        print(f"patch-tui: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a folder on the way that cannot be read (stat refused)
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"patch-tui: {where}cannot read ({exc.strerror or exc})", file=sys.stderr)
        return 2
    app.run()
    from patch_tui.ui import css_cache

    css_cache.save()
    return 0
