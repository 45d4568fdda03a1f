"""Try it's memory: the last args and named cases per tool, in one JSON file
(`<state dir>/try_it.json`, written atomically). No screen here: the desk's Try it panel and the
inbox's edit-args dialog read it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

STATE_FILE = "try_it.json"
MAX_CASES = 50


def state_path() -> Path:
    from patch_tui.settings import paths

    return paths.state_dir() / STATE_FILE


class TryState:
    """Last args and named cases per tool, in one JSON file. A broken file is read as empty
    (and replaced on the next save): remembered args are a convenience, never worth a crash."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or state_path()
        self.data: dict[str, Any] = self._load()

    def _load(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {"tools": {}}
        if not isinstance(data, dict) or not isinstance(data.get("tools"), dict):
            return {"tools": {}}
        return data

    def _tool(self, tool: str) -> dict[str, Any]:
        entry = self.data["tools"].setdefault(tool, {})
        if not isinstance(entry.get("cases"), dict):
            entry["cases"] = {}
        return entry

    def last(self, tool: str) -> dict[str, Any] | None:
        last = self._tool(tool).get("last")
        return last if isinstance(last, dict) else None

    def cases(self, tool: str) -> dict[str, dict[str, Any]]:
        return {k: v for k, v in self._tool(tool)["cases"].items() if isinstance(v, dict)}

    def remember(self, tool: str, args: dict[str, Any]) -> None:
        self._tool(tool)["last"] = args
        self.save()

    def save_case(self, tool: str, name: str, args: dict[str, Any]) -> None:
        cases = self._tool(tool)["cases"]
        cases[name] = args
        while len(cases) > MAX_CASES:
            cases.pop(next(iter(cases)))
        self.save()

    def delete_case(self, tool: str, name: str) -> None:
        self._tool(tool)["cases"].pop(name, None)
        self.save()

    def save(self) -> None:
        from patch_tui.runtime.toolbox import atomic_write

        text = json.dumps(self.data, ensure_ascii=False, indent=2, sort_keys=True) + "\n"
        atomic_write(self.path, text.encode("utf-8"))
