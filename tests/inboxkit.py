"""Set-up shared by the inbox and try-it tests: tmp folders for every user path, a folder of
sample tools, the app with watchers off, and waits on the screens' counters."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from pilotkit import HANG, until

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "sample_tools"

HOSTILE = {
    "close_tag": "[/]",
    "open_close": "[/",
    "click": "[@click=app.quit]x[/]",
    "link": "[link=https://evil.example]good[/link]",
    "clear": "\x1b[2J",
    "osc52_bel": "\x1b]52;c;ZXZpbA==\x07",
    "osc52_st": "\x1b]52;c;ZXZpbA==\x1b\\",
    "osc8": "\x1b]8;;https://evil.example\x1b\\click me\x1b]8;;\x1b\\",
    "osc2": "\x1b]2;pwned title\x07",
    "c1_csi": "\x9b31m red",
    "cr": "safe\rEVIL",
    "rlo": "invoice\u202etxt.exe",
    "zero_width": "pay\u200bpal",
    "tags": "hi\U000e0041\U000e0042",
}


def isolate(monkeypatch: Any, tmp_path: Path) -> Path:
    """Every user folder under tmp_path; returns the store path."""
    store = tmp_path / "store.sqlite3"
    monkeypatch.setenv("PATCH_TUI_STORE", str(store))
    monkeypatch.setenv("PATCH_TUI_CONFIG", str(tmp_path / "config.toml"))
    for var in ("XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME"):
        monkeypatch.setenv(var, str(tmp_path / var.lower()))
    monkeypatch.setenv("PATCH_CAT_TOOLBOX_DIR", str(tmp_path / "patch-cat"))
    return store


def tools(tmp_path: Path, *names: str) -> Path:
    folder = tmp_path / "tools"
    folder.mkdir(exist_ok=True)
    for name in names or ("delete_file", "slugify", "slack_send_message", "word_count"):
        shutil.copy(SAMPLES / f"{name}.py", folder / f"{name}.py")
    return folder


def make_app(folder: Path, store: Path, path: Path | None = None):
    from patch_tui.runtime.toolbox import Toolbox
    from patch_tui.settings.config import Settings
    from patch_tui.ui.app import PatchApp

    settings = Settings(watch_tools=False, watch_themes=False)
    return PatchApp(Toolbox.open(path or folder), path, settings=settings, store_path=store)


def inbox_app(store: Path):
    """`patch-tui inbox --store STORE`: the inbox on its own."""
    from patch_tui.settings.config import Settings
    from patch_tui.ui.inbox.inbox_app import InboxApp

    return InboxApp(store, settings=Settings(watch_tools=False, watch_themes=False))


def hold(
    store_path: Path,
    tool_file: Path,
    args: dict[str, Any],
    *,
    actor: str = "agent",
    ttl: float | None = None,
    kind: str = "human_confirm",
    details: dict[str, Any] | None = None,
):
    """A pending action, created by another process's Store as an agent's call would be."""
    from patch_tui.approvals.store import Store
    from patch_tui.format import toolfile

    tf = toolfile.read(tool_file)
    assert tf.manifest is not None
    with Store(store_path, actor=actor) as store:
        return store.create_pending(
            kind,
            tf.manifest.name,
            tf.manifest.version,
            tf.sha256,
            args,
            "Tool is marked capabilities.human_confirm: true (irreversible action).",
            tool_path=str(tool_file),
            ttl=ttl,
            details=details,
        )


async def wait_for(pilot: Any, cond: Any, timeout: float = HANG, what: str = "condition") -> float:
    """Wait until cond() is true; returns the seconds it took."""
    return await until(pilot, cond, timeout, what)


async def read_to_end(pilot: Any, screen: Any, what: str = "everything shown") -> None:
    """Scroll the detail to its end until Approve is enabled, as a person does who reads on: the
    detail may still grow (the call's source arriving) after the first scroll."""

    def shown() -> bool:
        screen.detail.scroll_end(animate=False, immediate=True)
        return bool(screen.can_approve)

    await until(pilot, shown, what=what)


async def open_inbox(pilot: Any, app: Any) -> Any:
    from patch_tui.ui.inbox.inbox import InboxScreen

    if not isinstance(app.screen, InboxScreen):
        await pilot.press("ctrl+r")
    await wait_for(
        pilot,
        lambda: isinstance(app.screen, InboxScreen) and app.screen.load_count > 0,
        what="the inbox",
    )
    return app.screen


async def open_grants(pilot: Any, app: Any) -> Any:
    """The inbox's grants view (G), once its grants are read."""
    from patch_tui.ui.inbox.grants_view import GrantsScreen

    await open_inbox(pilot, app)
    await pilot.press("G")
    await wait_for(
        pilot,
        lambda: isinstance(app.screen, GrantsScreen) and app.screen.load_count > 0,
        what="the grants",
    )
    return app.screen
