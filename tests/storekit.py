"""The store backends side by side: conftest's `store_location` / `any_store` give each (SQLite in
tmp_path, PostgreSQL in a fresh database of the run's server), opened through the one
`open_store`, so a contract test is written once and runs against both (STYLE.md 16)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from patch_tui.settings.store_location import DatabaseURL

BACKENDS = ("sqlite", "postgresql")
SHA = "a" * 64


def location(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    if backend == "sqlite":
        return tmp_path / "state" / "store.sqlite3"
    return DatabaseURL(request.getfixturevalue("pg_url"))


def pending(store: Any, **kw: Any) -> Any:
    base: dict[str, Any] = dict(
        kind="human_confirm",
        tool="send_mail",
        version="1.0.0",
        source_sha256=SHA,
        args={"to": "bob@example.com", "body": "hi"},
        reason="irreversible",
    )
    base.update(kw)
    return store.create_pending(**base)
