"""Where a held taint came from (issue 25): for each tainted input, the recent tool output it
matched, when that output was recorded, and the matched text in its context. The gate
(approvals/gate.py) decides what is tainted; this only says, for a person, which output and when,
so a value they typed can be told from one an agent passed on.

    recent_outputs_at(store) -> [(tool, text, recorded_at)] | None
    taint_origins(tainted, texts, outputs)   adds `matchedOutputs` to each tainted input
    origin_words(tainted, sources) -> str     "file_stats (its output of 2026-…Z)"
"""

from __future__ import annotations

from typing import Any

from patch_tui.approvals.values import now_iso

EXCERPT_CHARS = 80


def _excerpt(output: str, text: str) -> str:
    """The matched text with a little of the output around it, for a person to recognise."""
    at = output.find(text)
    if at < 0:
        return output[:EXCERPT_CHARS]
    start = max(0, at - 20)
    piece = output[start : start + max(EXCERPT_CHARS, len(text) + 40)]
    return ("…" if start else "") + piece + ("…" if start + len(piece) < len(output) else "")


def taint_origins(
    tainted: list[dict[str, Any]],
    texts: dict[str, list[str]],
    outputs: list[tuple[str, str, float]],
) -> None:
    """Adds to each tainted input `matchedOutputs`: which recent output it matched (the tool,
    when it was recorded, an excerpt), newest first, so a person can tell whether it really came
    from there (issue 25: a path typed by hand was "output of file_stats")."""
    for item in tainted:
        mine = texts.get(item["inputName"], [])
        found: list[dict[str, str]] = []
        for tool, output, at in outputs:
            if tool not in item["matchedTools"]:
                continue
            hit = next((t for t in mine if t in output), None)
            if hit is not None:
                found.append({"tool": tool, "at": now_iso(at), "excerpt": _excerpt(output, hit)})
        if found:
            item["matchedOutputs"] = found


def origin_words(tainted: list[dict[str, Any]], sources: list[str]) -> str:
    """ "file_stats (its output of 2026-11-26T13:02:11.000Z)": each source tool with the time of
    the newest output matched."""
    newest: dict[str, str] = {}
    for item in tainted:
        for hit in item.get("matchedOutputs", []):
            newest.setdefault(hit["tool"], hit["at"])
    return ", ".join(
        f"{tool} (its output of {newest[tool]})" if tool in newest else tool for tool in sources
    )


def recent_outputs_at(store: Any) -> list[tuple[str, str, float]] | None:
    # A store backend without the times (the interface's recent_outputs has none) still works:
    # the hold then names the tools only.
    reader = getattr(store, "recent_outputs_at", None)
    return reader() if callable(reader) else None
