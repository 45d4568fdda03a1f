"""What the app's screens and widgets use, handed to the App once instead of looked up by name.

    Services(settings, toolbox=None, store_path=None)
    services(app)          -> Services          the app's; TypeError for an app given none
    maybe_services(app)    -> Services | None   for screens that also run in a bare host app
    ServicesHost           the App mixin holding `services` (PatchApp, InboxApp, test hosts)

    svc.store()            -> Store   the app's one confirmation store, opened on first use (from
                                      a worker thread: opening may wait on a lock); StoreError
                                      when it cannot be opened
    svc.open_store()       -> Store | None   the store if it is open or its file exists, else
                                      None: watching never creates a store
    svc.resolved_store_path -> Path | DatabaseURL   --store, PATCH_TUI_STORE, the config's
                                      `store`, then the state folder (settings/store_location)
    svc.watch              the store watch (inbox/inbox_badge.py), once made
    svc.catalog            the toolbox's tools (runtime/catalog.py), shared by the tool browser
                           and the inbox

One object, typed, so a screen says `services(self.app).store()` and mypy checks it, where it
used to say `getattr(app, "_patch_store", None)` and hope.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from patch_tui.approvals.store import Store
    from patch_tui.format.toolfile import ToolFile
    from patch_tui.runtime.catalog import ToolCatalog
    from patch_tui.runtime.toolbox import Toolbox
    from patch_tui.settings.config import Settings, StartSettings
    from patch_tui.settings.store_location import DatabaseURL
    from patch_tui.ui.inbox.inbox_badge import PendingWatch

# The TUI waits on a lock for at most this long per store operation, then says "store busy".
TUI_BUSY_TIMEOUT_MS = 1500


@dataclass
class Services:
    settings: Settings | StartSettings
    toolbox: Toolbox | None = None
    # `--store PATH|URL`; None: the default (settings/store_location.py).
    store_path: Path | str | None = None
    watch: PendingWatch | None = None
    _store: Store | None = field(default=None, init=False, repr=False)
    _catalog: ToolCatalog | None = field(default=None, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    @property
    def catalog(self) -> ToolCatalog:
        """The toolbox's tools, read once per file version, with their lint state: the tool
        browser lists it, the inbox describes an action's tool from it."""
        with self._lock:
            if self._catalog is None:
                from patch_tui.runtime.catalog import ToolCatalog

                self._catalog = ToolCatalog(self.toolbox, lint=lint_counts)
            return self._catalog

    @property
    def resolved_store_path(self) -> Path | DatabaseURL:
        from patch_tui.approvals.store import StoreUnavailable
        from patch_tui.settings.store_location import StoreLocationError, store_location

        try:
            return store_location(self.store_path)
        except StoreLocationError as exc:
            raise StoreUnavailable(str(exc)) from None

    @property
    def opened_store(self) -> Store | None:
        return self._store

    def store(self) -> Store:
        """The app's Store (thread-safe; call from workers: opening can block on a lock)."""
        with self._lock:
            if self._store is None:
                # Not at start-up: the desk may never need the store.
                from patch_tui.approvals.open_store import open_store

                try:
                    ttl = float(self._setting("confirm_ttl", 300) or 300)
                except Exception:  # an unreadable config: the default TTL, the store still opens
                    ttl = 300.0
                self._store = open_store(
                    self.resolved_store_path,
                    actor="tui",
                    ttl=ttl,
                    busy_timeout_ms=TUI_BUSY_TIMEOUT_MS,
                )
            return self._store

    def _setting(self, name: str, default: Any) -> Any:
        """A setting the start-up settings lack, read plainly (validating the whole config
        file imports pydantic: about 140 ms the inbox's first frame would wait for)."""
        from patch_tui.settings.config import StartSettings, plain_setting

        if isinstance(self.settings, StartSettings):
            return plain_setting(name, default)
        return getattr(self.settings, name, default)

    def open_store(self) -> Store | None:
        """The store when it is open or its file exists; None otherwise (nothing is created)."""
        location = self.resolved_store_path
        if self._store is None and isinstance(location, Path) and not location.exists():
            return None
        return self.store()


class ServicesHost:
    """Mixin for an App that holds the services. The old attribute names stay readable (and
    settable: tests swap the settings) and lead to the same object."""

    services: Services

    @property
    def settings(self) -> Any:
        return self.services.settings

    @settings.setter
    def settings(self, value: Any) -> None:
        self.services.settings = value

    @property
    def toolbox(self) -> Toolbox | None:
        return self.services.toolbox

    @property
    def store_path(self) -> Path | str | None:
        return self.services.store_path

    @property
    def _pending_watch(self) -> PendingWatch | None:
        return self.services.watch


def lint_counts(tool: ToolFile) -> tuple[int, int]:
    """(errors, warnings) of a tool file, as the browser shows them."""
    from patch_tui.lint.engine import lint_toolfile

    diags = lint_toolfile(tool)
    return (
        sum(d.severity == "error" for d in diags),
        sum(d.severity == "warning" for d in diags),
    )


def maybe_services(app: object) -> Services | None:
    return app.services if isinstance(app, ServicesHost) else None


def services(app: object) -> Services:
    found = maybe_services(app)
    if found is None:
        raise TypeError(f"{type(app).__name__} was not handed the app's services")
    return found
