"""What the desk shows at a given terminal size: its layout state, as one value.

The desk's screen keeps a `DeskLayout` in a reactive and redraws its panes whenever the value
changes (a resize, F3, F4, an empty toolbox, a clean lint). A plain frozen value: every
decision about what fits is made here, where a test can check it without a screen.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

# Widths below which the layout folds: form and source share one pane, then the browser hides.
SPLIT_MIN_WIDTH = 120
BROWSER_MIN_WIDTH = 70
WIDE_WIDTH = 150  # from here the tool list takes its full width


@dataclass(frozen=True)
class DeskLayout:
    view: str = "form"  # which pane shows when they share one (narrow terminals)
    browser_wanted: bool = True
    narrow: bool = False  # form and source share one pane
    tiny: bool = False  # no room for the tool list (unless asked for with F3)
    wide: bool = False
    compact: bool = False  # a lower problems panel
    short: bool = False  # no header, no problem detail line
    empty: bool = False  # no tool open
    clean: bool = False  # no problems: the panel shrinks

    def for_size(self, width: int, height: int) -> DeskLayout:
        return replace(
            self,
            narrow=width < SPLIT_MIN_WIDTH,
            tiny=width < BROWSER_MIN_WIDTH,
            wide=width >= WIDE_WIDTH,
            compact=height < 30,
            short=height < 20,
        )

    @property
    def shows_form(self) -> bool:
        return not self.empty and (not self.narrow or self.view == "form")

    @property
    def shows_source(self) -> bool:
        return not self.empty and (not self.narrow or self.view == "source")

    @property
    def shows_browser(self) -> bool:
        return self.browser_wanted and not self.tiny

    @property
    def browser_width(self) -> int:
        # The source gets the room: the list is slimmer until the terminal is really wide.
        return 24 if self.narrow else 30 if self.wide else 28

    @property
    def lint_height(self) -> int:
        return 3 if self.clean else 4 if self.short else 6 if self.compact else 8

    def form_lines(self, height: int) -> int:
        """Lines of the form's content at this terminal height (its first frame's fold): the
        height less the header, key bar, problems panel and its detail line, the view tabs
        and the form's border."""
        chrome = 1 + (0 if self.short else 2) + self.lint_height + (1 if self.narrow else 0)
        return max(0, height - chrome - 2)
