"""Work-arounds for Textual bugs that patch-tui would otherwise live with, applied once when
`patch_tui.ui` is imported. Each names its upstream issue and undoes nothing once Textual fixes it."""

from __future__ import annotations

import functools
from typing import Any

from textual._styles_cache import StylesCache


def _release_styles_caches() -> None:
    """`StylesCache.get_inner_outer` is an `lru_cache` on a method, so the cache's keys hold up to
    1024 StylesCache objects, and every line each one rendered, long after their widgets were
    removed (Textualize/textual#6665). The desk builds its form anew for each tool it opens, so
    a session kept tens of thousands of dead lines alive, and each full garbage collection walked
    them all. The result depends only on the two colours: cache it by those alone."""
    cached = StylesCache.__dict__.get("get_inner_outer")
    if not isinstance(cached, functools._lru_cache_wrapper):
        return  # fixed upstream (a static or class method, or no cache)
    compute = cached.__wrapped__  # type: ignore[attr-defined]

    @functools.lru_cache(1024)
    def by_colours(base_background: Any, background: Any) -> Any:
        return compute(StylesCache, base_background, background)

    def get_inner_outer(self: StylesCache, base_background: Any, background: Any) -> Any:
        return by_colours(base_background, background)

    cached.cache_clear()
    StylesCache.get_inner_outer = get_inner_outer  # type: ignore[method-assign,assignment]


def apply() -> None:
    _release_styles_caches()
