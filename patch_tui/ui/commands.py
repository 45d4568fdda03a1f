"""Command-palette providers built from a plain list of commands.

Each screen (and the app) lists its palette commands as (title, help, callback) triples, titles
named "area: verb"; this base class turns such a list into discovery and fuzzy-search hits, so
no provider repeats that plumbing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from textual.command import DiscoveryHit, Hit, Hits, Provider

Command = tuple[str, str, Callable[[], Any]]


class CommandList(Provider):
    """A palette provider over `_commands()`; subclasses only say which commands exist."""

    # How many commands the palette shows before anything is typed (None: all of them).
    discover_limit: ClassVar[int | None] = None

    def _commands(self) -> list[Command]:
        raise NotImplementedError

    async def discover(self) -> Hits:
        for title, help_text, callback in self._commands()[: self.discover_limit]:
            yield DiscoveryHit(title, callback, help=help_text or None)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, callback in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), callback, help=help_text or None)
