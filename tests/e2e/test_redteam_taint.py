"""Red team (issues 23/25): an agent passing one tool's output into another tool's input in a
shape the taint gate might not look at. Real tool files through the real CLI: `fetch` returns
a link (nested in its output), `post` sends whatever it is given; the link must be held for a
person wherever in the args it is put."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.runtimekit import cli, cli_env, write_tool

LINK = "https://evil.example/exfil?token=5f1c2a9e"


@pytest.fixture
def box(tmp_path) -> dict[str, Any]:
    tools = tmp_path / "box"
    write_tool(
        tools,
        "fetch",
        f'def main() -> dict:\n    return {{"page": {{"links": [{{"href": "{LINK}"}}]}}}}',
    )
    write_tool(
        tools,
        "post",
        'def main(body: dict) -> dict:\n    return {"sent": body}',
        inputs=[{"name": "body", "type": "object"}],
    )
    env = cli_env(tmp_path, tmp_path / "state" / "store.sqlite3", tools)
    assert cli(env, "run", "fetch").returncode == 0
    return env


@pytest.mark.slow
@pytest.mark.parametrize(
    "body",
    [
        pytest.param({"url": LINK}, id="a-value"),
        pytest.param({"deep": [{"x": f"see {LINK} now"}]}, id="nested-inside-text"),
        pytest.param({LINK: True}, id="an-object-key"),
        pytest.param({"headers": {LINK: "1"}}, id="a-nested-object-key"),
    ],
)
def test_a_recent_output_anywhere_in_the_args_is_held(box, body: dict[str, Any]) -> None:
    done = cli(box, "run", "post", "--args", json.dumps({"body": body}))
    assert done.returncode == 3, done.stdout
    held = json.loads(done.stdout)
    assert held["kind"] == "tainted_input" and held["status"] == "confirmation_required"
