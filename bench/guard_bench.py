"""What `patch-tui guard` adds to a call that passes through: the same upstream (the test's
fake runtime, tests/fake_runtime.py, on the mcp SDK) called directly and through guard, over
stdio with the mcp client, alternating, N calls each; median and p90 per call.

    .venv/bin/python bench/guard_bench.py [N]

The tool is `echo` (a Python subprocess per run upstream), so both sides include that run; the
difference is guard's relay: one more JSON-RPC hop and the hold check.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.runtimekit import write_tool  # noqa: E402


async def timed_calls(params: object, n: int) -> list[float]:
    from mcp import Client
    from mcp.client.stdio import stdio_client

    out: list[float] = []
    with open(os.devnull, "w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode="legacy", cache=None) as client:
            await client.list_tools()
            await client.call_tool("echo", {"text": "warm"})
            for i in range(n):
                t0 = time.perf_counter()
                await client.call_tool("echo", {"text": f"call {i}"})
                out.append((time.perf_counter() - t0) * 1000)
    return out


def main() -> None:
    from mcp.client.stdio import StdioServerParameters

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "box"
        write_tool(
            root / "tools",
            "echo",
            'def main(text: str) -> dict:\n    return {"echo": text}',
            inputs=[{"name": "text"}],
        )
        env = dict(
            os.environ,
            PATCH_CAT_TOOLBOX_DIR=str(root),
            PATCH_TUI_STORE=str(Path(tmp) / "store.sqlite3"),
            PATCH_TUI_CONFIG=str(Path(tmp) / "config.toml"),
        )
        fake = [sys.executable, str(REPO / "tests" / "fake_runtime.py")]
        direct = StdioServerParameters(command=fake[0], args=fake[1:], env=env)
        guarded = StdioServerParameters(
            command=sys.executable, args=["-m", "patch_tui", "guard", "--", *fake], env=env
        )
        results: dict[str, list[float]] = {"direct": [], "guard": []}
        for _round in range(2):  # alternate, so load changes hit both sides alike
            results["direct"] += anyio.run(timed_calls, direct, n // 2)
            results["guard"] += anyio.run(timed_calls, guarded, n // 2)
    for name, values in results.items():
        values.sort()
        p90 = values[int(len(values) * 0.9) - 1]
        print(
            f"{name:6} median {statistics.median(values):6.1f} ms   p90 {p90:6.1f} ms   n={len(values)}"
        )
    added = statistics.median(results["guard"]) - statistics.median(results["direct"])
    print(f"guard adds {added:.1f} ms per passed-through call (median)")


if __name__ == "__main__":
    main()
