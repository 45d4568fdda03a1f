"""Edit, then approve: a person's changed args, checked against the tool's inputs, and what
changed, said to the agent.

    validate(args, manifest)          -> str | None   one line saying why the args cannot run
    changes(proposed, approved)       -> list[Change]  per input, in the tool's input order
    agent_note(action)                -> dict          what the agent's result says about the edit

Validation is what the inputs declare: every key is an input, every required input without a
default is present, and every value has the input's type (`string`, `number` (int or float, not a
boolean), `integer` (int, not a boolean, not 1.0), `boolean`, `array` (each element of the `items`
type when one is declared), `object`). `null` is accepted only for an input that is not required.
Patch manifests declare no enums for inputs, so none is checked here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from patch_tui.approvals.store import Action

if TYPE_CHECKING:  # a run's reading of the manifest: pydantic only when the model must say
    from patch_tui.format.plain_manifest import RunManifest

_ABSENT = object()


def type_ok(value: Any, kind: str) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "array":
        return isinstance(value, list)
    if kind == "object":
        return isinstance(value, dict)
    return True


def _short(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def validate(args: Any, manifest: RunManifest) -> str | None:
    if not isinstance(args, dict):
        return "the arguments must be a JSON object"
    names = [i.name for i in manifest.inputs]
    for key in args:
        if key not in names:
            return f"{manifest.name} has no input {key!r} (inputs: {', '.join(names) or 'none'})"
    for inp in manifest.inputs:
        if inp.name not in args:
            if inp.required and not inp.has_default:
                return f"{manifest.name} needs the input {inp.name!r}"
            continue
        value = args[inp.name]
        if value is None:
            if inp.required:
                return f"{inp.name} is required and cannot be null"
            continue
        if not type_ok(value, inp.type):
            return f"{inp.name} must be {_article(inp.type)}, not {_short(value)}"
        if inp.type == "array" and inp.items is not None:
            for n, element in enumerate(value):
                if not type_ok(element, inp.items.type):
                    return (
                        f"{inp.name}[{n}] must be {_article(inp.items.type)}, not {_short(element)}"
                    )
    return None


def _article(kind: str) -> str:
    return f"an {kind}" if kind[0] in "aeiou" else f"a {kind}"


@dataclass(frozen=True)
class Change:
    input: str
    proposed: Any  # _ABSENT when the agent did not pass it
    approved: Any  # _ABSENT when the person removed it

    @property
    def kind(self) -> str:
        if self.proposed is _ABSENT:
            return "added"
        if self.approved is _ABSENT:
            return "removed"
        return "changed"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"input": self.input, "change": self.kind}
        if self.proposed is not _ABSENT:
            out["proposed"] = self.proposed
        if self.approved is not _ABSENT:
            out["approved"] = self.approved
        return out

    def line(self) -> str:
        if self.kind == "added":
            return f"{self.input}: added {_short(self.approved)}"
        if self.kind == "removed":
            return f"{self.input}: removed (was {_short(self.proposed)})"
        return f"{self.input}: {_short(self.proposed)} -> {_short(self.approved)}"


def changes(proposed: dict[str, Any], approved: dict[str, Any]) -> list[Change]:
    """Inputs whose value differs (as JSON: 1 and 1.0 differ, key order in objects does not)."""
    from patch_tui.approvals.store import canonical_json

    out: list[Change] = []
    for key in dict.fromkeys([*proposed, *approved]):
        before = proposed.get(key, _ABSENT)
        after = approved.get(key, _ABSENT)
        if before is _ABSENT or after is _ABSENT:
            out.append(Change(key, before, after))
        elif canonical_json(before) != canonical_json(after):
            out.append(Change(key, before, after))
    return out


def agent_note(action: Action) -> dict[str, Any] | None:
    """For an edited action, what the agent is told next to the result: who changed which args."""
    if action.proposed_args is None:
        return None
    diff = changes(action.proposed_args, action.args)
    return {
        "message": (
            f"A person ({action.decided_by}) changed the arguments before approving; the tool ran "
            "with the approved arguments, not the proposed ones: "
            + "; ".join(c.line() for c in diff)
        ),
        "by": action.decided_by,
        "proposed": action.proposed_args,
        "approved": action.args,
        "changes": [c.to_json() for c in diff],
    }
