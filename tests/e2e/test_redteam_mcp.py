"""Red team (issues 23/25): the agent over MCP (`patch-tui serve`, the mcp SDK's client over
stdio) using the meta tools to move one tool's output into another tool without a person: a
`patch_compose` step referencing an earlier step's output, in a string or as an object key."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.mcpkit import serve_box, serve_session
from tests.runtimekit import runs_in, write_tool


@pytest.fixture
def box(tmp_path: Path) -> dict[str, Any]:
    box = serve_box(tmp_path)
    write_tool(
        box["tools"],
        "sink_obj",
        'def main(body: dict) -> dict:\n    return {"sent": body}',
        inputs=[{"name": "body", "type": "object"}],
    )
    return box


def data(result: Any) -> Any:
    return json.loads(result.content[0].text)


@pytest.mark.slow
async def test_compose_never_carries_an_output_into_a_sink_unheld(box: dict[str, Any]) -> None:
    marker = box["marker"]
    async with serve_session(box) as client:
        out = data(
            await client.call_tool(
                "patch_compose",
                {
                    "steps": [
                        {"id": "l", "tool": "leak", "args": {}},
                        {"id": "s", "tool": "sink", "args": {"marker": str(marker), "text": "$l"}},
                    ]
                },
            )
        )
        steps = {s["id"]: s for s in out["steps"]}
        assert steps["l"]["status"] == "ok"
        assert steps["s"]["status"] != "ok", out
        assert runs_in(marker) == []
        # The same text, read back by the agent and passed later as an object's key.
        held = data(await client.call_tool("sink_obj", {"body": {out["results"]["l"]: 1}}))
        assert held["status"] == "confirmation_required" and held["kind"] == "tainted_input"
