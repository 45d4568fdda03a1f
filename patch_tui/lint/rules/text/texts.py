"""The texts people and agents read: the name and the descriptions.

They travel from the tool file into an AI agent's context and onto the approval screen: the
place an attacker hides text a person cannot see, or words that steer the agent.
"""

from __future__ import annotations

from collections.abc import Iterator

from patch_tui.format.yamlio import Path
from patch_tui.lint.context import LintContext


def texts_of(ctx: LintContext) -> Iterator[tuple[Path, str, str]]:
    """(path, text, label) of every field people and agents read."""
    for key in ("name", "description"):
        value = ctx.get(key)
        if isinstance(value, str):
            yield (key,), value, key
    inputs = ctx.get("inputs")
    if isinstance(inputs, list):
        for i, inp in enumerate(inputs):
            if not isinstance(inp, dict):
                continue
            for key in ("name", "description"):
                value = inp.get(key)
                if isinstance(value, str):
                    yield ("inputs", i, key), value, f"inputs[{i}].{key}"
    value = ctx.get("outputs", "description")
    if isinstance(value, str):
        yield ("outputs", "description"), value, "outputs.description"
