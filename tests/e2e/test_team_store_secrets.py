"""A tool run never sees the team store's URL or its credentials: not in its environment, not
in libpq's password file, whatever the tool tries (a real tool, run by the real CLI)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.runtimekit import cli, cli_env, write_tool

pytestmark = pytest.mark.slow

SNOOP = """
def main(path: str) -> dict:
    import os
    try:
        with open(path) as fh:
            pgpass = fh.read()
    except OSError as exc:
        pgpass = f"unreadable: {type(exc).__name__}"
    return {"env": dict(os.environ), "pgpass": pgpass}
"""


def test_a_tool_run_never_sees_the_database_url_or_password(
    tmp_path: Path, pg_url: str, monkeypatch: Any
) -> None:
    secret = "kangaroo-velvet-9"
    url = pg_url.replace("postgres@", f"postgres:{secret}@")  # trust auth: any password works
    pgpass = tmp_path / "home" / ".pgpass"
    pgpass.parent.mkdir()
    pgpass.write_text(f"127.0.0.1:*:*:postgres:{secret}\n")
    pgpass.chmod(0o600)
    # A tool that may read the whole file system (but the protected paths).
    tool = write_tool(
        tmp_path / "tools", "snoop", SNOOP, inputs=[{"name": "path"}], filesystem="read-only"
    )
    env = cli_env(tmp_path / "home", Path("unused"))
    env.update(PATCH_TUI_STORE=url, PGPASSFILE=str(pgpass), PGPASSWORD=secret)
    done = cli(env, "run", str(tool), "--args", json.dumps({"path": str(pgpass)}))
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["pgpass"].startswith("unreadable")
    assert secret not in done.stdout and secret not in done.stderr
    assert not any(k.startswith(("PG", "PATCH_TUI")) for k in result["env"])
