"""Helpers for the runtime tests: write real tool files, run the real CLI in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

PATCH_TUI = [sys.executable, "-m", "patch_tui"]
# Where the kits and the data files are, for tests in any folder below tests/.
TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent


def tool_text(
    name: str,
    body: str,
    *,
    inputs: list[dict[str, Any]] | None = None,
    output_type: str = "object",
    network: bool = False,
    filesystem: str = "none",
    human_confirm: bool = False,
    packages: list[str] | None = None,
    version: str = "1.0.0",
) -> str:
    """A tool file; `body` defines main(...) (the stdin/stdout wrapper is added)."""
    lines = [
        "# ---",
        f"# name: {name}",
        f"# version: {version}",
        f"# description: Test tool {name}.",
    ]
    ins = inputs if inputs is not None else []
    if ins:
        lines.append("# inputs:")
        for inp in ins:
            lines.append(f"#   - name: {inp['name']}")
            lines.append(f"#     type: {inp.get('type', 'string')}")
            lines.append(f"#     description: The {inp['name']}.")
            if inp.get("tainted_ok"):
                lines.append("#     tainted_ok: true")
    else:
        lines.append("# inputs: []")
    lines += [
        "# outputs:",
        f"#   type: {output_type}",
        "# capabilities:",
        f"#   network: {'true' if network else 'false'}",
        f"#   filesystem: {filesystem}",
        f"#   human_confirm: {'true' if human_confirm else 'false'}",
        "# runtime:",
        "#   language: python",
        '#   python_version: "3.12"',
        f"#   packages: {json.dumps(packages or [])}",
        "# ---",
        "import json",
        "import sys",
        "",
        "",
        body.strip("\n"),
        "",
        "",
        'if __name__ == "__main__":',
        "    args = json.loads(sys.stdin.read())",
        "    print(json.dumps(main(**args)))",
        "",
    ]
    return "\n".join(lines)


def write_tool(folder: Path, name: str, body: str, **kw: Any) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.py"
    path.write_text(tool_text(name, body, **kw))
    return path


# A human_confirm tool that appends one line per run to a marker file: runs are countable.
MARK_BODY = """
def main(marker: str, text: str) -> dict:
    with open(marker, "a") as fh:
        fh.write(text + "\\n")
    return {"written": text}
"""
MARK_INPUTS = [{"name": "marker"}, {"name": "text"}]


def runs_in(marker: Path) -> list[str]:
    return marker.read_text().splitlines() if marker.exists() else []


def cli_env(home: Path, store: Path, toolbox: Path | None = None) -> dict[str, str]:
    """The CLI's environment for a test. Read-write tools may write only in the workspace:
    `home/ws`, the folder `cli()` runs from (run, confirm) and serve's configured workspace."""
    ws = home / "ws"
    ws.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env.update(
        PATCH_TUI_SERVE_WORKSPACE=str(ws),
        PATCH_TUI_CONFIG=str(home / "config.toml"),
        PATCH_TUI_STORE=str(store),
        XDG_CACHE_HOME=str(home / "cache"),
        XDG_STATE_HOME=str(home / "state"),
        # patch_confirm_action answers at once unless a test is about its waiting.
        PATCH_TUI_CONFIRM_WAIT="0",
    )
    if toolbox is not None:
        env["PATCH_TUI_TOOLBOX"] = str(toolbox)
    return env


def workspace(env: dict[str, str]) -> Path:
    return Path(env["PATCH_TUI_SERVE_WORKSPACE"])


def approve_argv(env: dict[str, str], token: str, *extra: str) -> list[str]:
    """`inbox approve TOKEN --yes --args-sha256 HASH`, as a script that read `inbox show TOKEN`
    runs it: the hash is the action's args sha256 as stored, the value `inbox show` prints."""
    from patch_tui.approvals.open_store import open_store
    from patch_tui.settings.store_location import as_location

    with open_store(as_location(env["PATCH_TUI_STORE"]), actor="reader@test") as store:
        action = store.get(token)
    sha = action.args_sha256 if action is not None else "0" * 64
    return ["inbox", "approve", token, "--yes", "--args-sha256", sha, *extra]


def replay_on_postgres(db: Any, token: str) -> None:
    """What a team database's superuser does to run an executed call again, on an autocommit
    psycopg connection whose events trigger is disabled: the `claimed` event erased, the call
    set back to approved (its signatures still verify)."""
    db.execute(
        "DELETE FROM events WHERE event = 'claimed' AND action_id = "
        "(SELECT id FROM actions WHERE token = %s)",
        (token,),
    )
    db.execute(
        "UPDATE actions SET status = 'approved', claimed_at = NULL, claimed_by = NULL, "
        "finished_at = NULL, result_json = NULL WHERE token = %s",
        (token,),
    )


def cli(env: dict[str, str], *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """The real CLI in a subprocess, started from the test's workspace."""
    return subprocess.run(
        [*PATCH_TUI, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=env.get("PATCH_TUI_SERVE_WORKSPACE"),
    )


def mark_box(tmp_path: Path, *, echo: bool = False) -> dict[str, Any]:
    """A toolbox with `mark` (human_confirm, appends to a marker file in the workspace) and, with
    `echo`, a plain `echo`; the store and the CLI's env for it."""
    tools = tmp_path / "box" / "tools"
    write_tool(
        tools, "mark", MARK_BODY, inputs=MARK_INPUTS, human_confirm=True, filesystem="read-write"
    )
    if echo:
        write_tool(
            tools,
            "echo",
            'def main(text: str) -> dict:\n    return {"echo": text}',
            inputs=[{"name": "text"}],
        )
    store = tmp_path / "store.sqlite3"
    return {
        "env": cli_env(tmp_path, store, tmp_path / "box"),
        "store": store,
        "tools": tools,
        "marker": tmp_path / "ws" / "marker.txt",  # in the workspace (cli_env): writable
        "tmp": tmp_path,
    }


def hold_mark(box: dict[str, Any], text: str) -> str:
    """`patch-tui run mark` in `box` (from mark_box): held for a person, its confirmation token."""
    r = cli(
        box["env"],
        "run",
        "mark",
        "--args",
        json.dumps({"marker": str(box["marker"]), "text": text}),
    )
    assert r.returncode == 3, r.stderr
    return json.loads(r.stdout)["confirmation_token"]


# A tool that forks up to `limit` children (each ends by itself within 2 s), and says how many
# forks went through and the errno of the first refused one.
BOMB_BODY = """
def main(limit: int) -> dict:
    import os, select, time
    forked = 0
    refused = None
    # Each child lives until the tool ends (its end of the pipe closes), so no child frees a
    # slot while the bomb is still forking, however slow the machine; and at most 10 s.
    alive_r, alive_w = os.pipe()
    deadline = time.monotonic() + 3
    while forked < limit and time.monotonic() < deadline:
        try:
            pid = os.fork()
        except OSError as exc:
            refused = exc.errno
            break
        if pid == 0:
            os.close(alive_w)
            select.select([alive_r], [], [], 10)
            os._exit(0)
        forked += 1
    return {"forked": forked, "refused": refused}
"""
