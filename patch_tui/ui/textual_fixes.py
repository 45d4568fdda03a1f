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


def _alt_key_before_another_sequence() -> None:
    """An alt+letter (ESC z) followed at once by another escape sequence (ctrl+Home's ESC [1;5H)
    came out as the two keys `^` and `z`: Textual's XTermParser waits after ESC z for more, and
    when the next ESC arrives it reissues what it holds as plain keys, turning the ESC into `^`.
    A person pressing alt+z then ctrl+Home a tenth of a second apart got `^z` typed into the
    source (issue 25). The parser does the right thing when the wait times out (alt+z), so when
    an ESC arrives while it waits on ESC + one character, it is given that time-out first."""
    from textual._parser import ParseTimeout
    from textual._xterm_parser import XTermParser

    if getattr(XTermParser.feed, "_patch_tui_fix", False):
        return
    feed = XTermParser.feed

    def fixed_feed(self: Any, data: str) -> Any:
        if not data:
            yield from feed(self, data)
            return
        for char in data:
            held = getattr(self, "_held_pair", "")
            if char == "\x1b" and len(held) == 2 and self._timeout_time is not None:
                self._timeout_time = None
                self._awaiting = self._gen.throw(ParseTimeout())
                while self._tokens:
                    yield self._tokens.popleft()
            # ESC and one character that starts no longer sequence: alt+character, if it ends.
            self._held_pair = (
                held + char
                if held == "\x1b" and char not in "[O\x1b" and char.isprintable()
                else ("\x1b" if char == "\x1b" else "")
            )
            yield from feed(self, char)

    fixed_feed._patch_tui_fix = True  # type: ignore[attr-defined]
    XTermParser.feed = fixed_feed  # type: ignore[method-assign]


def _style_new_widgets_once() -> None:
    """Textual restyles a node and its descendants whenever a class changes, even a widget
    still being built that is in no DOM yet: Input's validation, Button's variant and Switch's
    slider set classes in their constructors, and each restyled the new widget against the
    whole stylesheet (about a tenth of the desk's work before its first frame). A widget that
    was never registered is styled from scratch when it mounts, classes and all, so nothing
    is lost by leaving it alone until then."""
    from textual.dom import DOMNode

    if getattr(DOMNode.update_node_styles, "_patch_tui_fix", False):
        return
    update_node_styles = DOMNode.update_node_styles

    def fixed(self: DOMNode, animate: bool = True) -> None:
        if self._parent is None and not self._running:
            return  # not mounted yet: styled once, when it mounts
        update_node_styles(self, animate)

    fixed._patch_tui_fix = True  # type: ignore[attr-defined]
    DOMNode.update_node_styles = fixed  # type: ignore[method-assign]


def _reparse_keeps_what_it_parsed() -> None:
    """`Stylesheet.reparse` (a theme is applied) parses every source in a fresh stylesheet and
    keeps its rules but not its parse cache, and the new variables had emptied the old one: the
    next `parse` (when the next new widget class mounts) parsed every source once more, the
    app's own stylesheet too. This is Textual 8's reparse, keeping the fresh sheet's cache, so
    each source is parsed once per theme."""
    from textual.css.stylesheet import Stylesheet

    if getattr(Stylesheet.reparse, "_patch_tui_fix", False):
        return

    def reparse(self: Stylesheet) -> None:
        fresh = Stylesheet(variables=self._variables)
        for read_from, (css, is_defaults, tie_breaker, scope) in self.source.items():
            fresh.add_source(
                css,
                read_from=read_from,
                is_default_css=is_defaults,
                tie_breaker=tie_breaker,
                scope=scope,
            )
        try:
            fresh.parse()
        except Exception:
            self._invalid_css.update(fresh._invalid_css)
            raise
        self._rules = fresh.rules
        self._rules_map = None
        self.source = fresh.source
        self._require_parse = False
        self._parse_cache = fresh._parse_cache

    reparse._patch_tui_fix = True  # type: ignore[attr-defined]
    Stylesheet.reparse = reparse  # type: ignore[method-assign]


def _skip_covered_widgets() -> None:
    """The compositor paints front to back and the first widget to fill a cell wins, but it
    rendered every visible widget first, containers included: a container whose children fill
    its whole area (the desk's screen, its main row, work column and panes: about 130 lines)
    was rendered line by line, every line cut at each child's edges, and all of it thrown
    away. This is Textual 8's `Compositor._render_chops` with one check before a widget is
    rendered: if every cut of every line it would paint is filled already, it is skipped, as
    the loop below it would have kept nothing of it. A skipped widget's lines stay dirty and
    are rendered whenever some of it shows."""
    from textual._compositor import Compositor
    from textual.geometry import Region

    if getattr(Compositor._render_chops, "_patch_tui_fix", False):
        return
    textual_render_chops = Compositor._render_chops

    def _render_chops(
        self: Compositor, crop: Region, is_rendered_line: Any
    ) -> list[dict[int, Any]]:
        cuts = self.cuts
        chops: list[dict[int, Any]] = [dict.fromkeys(cut_set[:-1]) for cut_set in cuts]
        intersection = Region.intersection
        contains_region = Region.contains_region
        crop_overlaps = crop.overlaps if crop else None
        for widget, (region, clip) in self.visible_widgets.items():
            if crop_overlaps is not None and not crop_overlaps(clip):
                continue
            render_region = intersection(region, clip)
            render_x = render_region.x
            first_cut, last_cut = render_region.column_span
            lines = [
                (y, [cut for cut in cuts[y] if last_cut >= cut >= first_cut])
                for y in render_region.line_range
            ]
            # A line is divided at its cuts after the first: one piece per cut but the last.
            if all(
                chops[y].get(cut) is not None
                for y, final_cuts in lines
                if is_rendered_line(y)
                for cut in final_cuts[:-1]
            ):
                continue  # nothing of it would show
            if contains_region(clip, region):
                strips = widget.render_lines(Region(0, 0, region.width, region.height))
            else:
                new_x, new_y, new_width, new_height = render_region
                if not (new_width and new_height):
                    continue
                strips = widget.render_lines(
                    Region(new_x - region.x, new_y - region.y, new_width, new_height)
                )
            for (y, final_cuts), strip in zip(lines, strips, strict=False):
                if not is_rendered_line(y):
                    continue
                chops_line = chops[y]
                cut_strips = strip.divide([cut - render_x for cut in final_cuts[1:]])
                get_chops_line = chops_line.get
                for cut, piece in zip(final_cuts, cut_strips, strict=False):
                    if get_chops_line(cut) is None:
                        chops_line[cut] = piece
        return chops

    _render_chops._patch_tui_fix = True  # type: ignore[attr-defined]
    _render_chops.textual = textual_render_chops  # type: ignore[attr-defined]  # for the tests
    Compositor._render_chops = _render_chops  # type: ignore[method-assign,assignment]


def _share_component_styles() -> None:
    """A widget's component classes (an Input's cursor, placeholder, suggestion...) are styled
    by applying the whole stylesheet to a made-up child node per class, for every widget: the
    desk's first frame styled about eighty of them, a seventh of its styling. Widgets that
    Textual itself would style alike (mounted together, with the same parent, type, classes
    and hover / focus / disabled state, the key of `Stylesheet.apply`'s own cache) get the same
    component styles, so within one mount the second such widget reuses what the first one
    got. Never when a rule that can reach those nodes names one of their ids or depends on
    position (first-child, odd, focus-within...): Textual does not cache those either."""
    from textual.app import App
    from textual.css.model import SelectorType
    from textual.css.stylesheet import Stylesheet
    from textual.dom import DOMNode

    if getattr(Stylesheet._process_component_classes, "_patch_tui_fix", False):
        return
    process = Stylesheet._process_component_classes
    register = App._register
    batches: list[dict[tuple[Any, ...], dict[str, Any]]] = []
    # What the rules that can match a component node name: its ids, and whether any depends
    # on position. By the stylesheet's rules map (a new one whenever the rules change).
    reach: dict[tuple[int, frozenset[str]], tuple[Any, frozenset[str] | None]] = {}
    positional = Stylesheet._EXCLUDE_PSEUDO_CLASSES_FROM_CACHE

    def ids_named(sheet: Stylesheet, components: frozenset[str]) -> frozenset[str] | None:
        rules_map = sheet.rules_map
        known = reach.get((id(rules_map), components))
        if known is not None and known[0] is rules_map:
            return known[1]
        names = {"*", "DOMNode", *(f".{c}" for c in components)}
        rules = [rule for name in names for rule in rules_map.get(name, ())]
        ids: frozenset[str] | None = frozenset(
            selector.name
            for rule in rules
            for selector_set in rule.selector_set
            for selector in selector_set.selectors
            if selector.type == SelectorType.ID
        )
        if any(not positional.isdisjoint(rule.pseudo_classes) for rule in rules):
            ids = None
        reach[(id(rules_map), components)] = (rules_map, ids)
        return ids

    def shared_register(self: App[Any], parent: Any, *widgets: Any, **kwargs: Any) -> Any:
        batches.append({})
        try:
            return register(self, parent, *widgets, **kwargs)
        finally:
            batches.pop()

    def process_component_classes(self: Stylesheet, node: DOMNode) -> None:
        components = node._get_component_classes()
        if not batches or not components or node._parent is None:
            return process(self, node)
        ids = ids_named(self, components)
        if ids is None:
            return process(self, node)
        key = (
            node._parent,
            node._id if node._id in ids else None,
            frozenset(node._classes),
            node._pseudo_classes_cache_key,
            node._css_type_name,
        )
        batch = batches[-1]
        shared = batch.get(key)
        learned: dict[str, Any] = {}
        refresh_node = False
        old_component_styles = node._component_styles.copy()
        node._component_styles.clear()
        for component in sorted(components):
            virtual_node = DOMNode(classes=component)
            virtual_node._attach(node)
            if shared is None:
                self.apply(virtual_node, animate=False)
                learned[component] = virtual_node._css_styles.get_rules()
            elif shared[component]:
                rules = shared[component].copy()  # a RulesMap (a typed dict), as apply gives
                self.replace_rules(virtual_node, rules, animate=False)
            if not refresh_node and old_component_styles.get(component) != virtual_node.styles:
                refresh_node = True
            node._component_styles[component] = virtual_node.styles
        if shared is None:
            batch[key] = learned
        if refresh_node:
            node.refresh()

    shared_register._patch_tui_fix = True  # type: ignore[attr-defined]
    process_component_classes._patch_tui_fix = True  # type: ignore[attr-defined]
    process_component_classes.textual = process  # type: ignore[attr-defined]  # for the tests
    App._register = shared_register  # type: ignore[method-assign]
    Stylesheet._process_component_classes = process_component_classes  # type: ignore[method-assign]


def apply() -> None:
    _release_styles_caches()
    _alt_key_before_another_sequence()
    _style_new_widgets_once()
    _reparse_keeps_what_it_parsed()
    _skip_covered_widgets()
    _share_component_styles()
