"""What the desk shows at each terminal size, decided without a screen (ui/desk/layout.py)."""

from __future__ import annotations

from dataclasses import replace

from patch_tui.ui.desk.layout import DeskLayout


def test_wide_terminals_show_form_source_and_list_side_by_side() -> None:
    layout = DeskLayout().for_size(160, 45)
    assert layout.shows_form and layout.shows_source and layout.shows_browser
    assert layout.browser_width == 30 and layout.lint_height == 8
    assert DeskLayout().for_size(120, 36).browser_width == 28


def test_at_80x24_form_and_source_share_one_pane() -> None:
    layout = DeskLayout().for_size(80, 24)
    assert layout.narrow and layout.compact and not layout.short
    assert layout.shows_form and not layout.shows_source
    flipped = replace(layout, view="source")
    assert flipped.shows_source and not flipped.shows_form
    assert layout.browser_width == 24 and layout.lint_height == 6


def test_tiny_terminals_hide_the_list_until_asked_and_short_ones_fold_the_panel() -> None:
    layout = DeskLayout().for_size(60, 18)
    assert not layout.shows_browser and layout.short and layout.lint_height == 4
    assert replace(layout, tiny=False).shows_browser  # F3 asks for it explicitly
    assert not replace(layout, browser_wanted=False, tiny=False).shows_browser
    # A resize keeps what was chosen (the pane shown, the list hidden, an empty desk).
    chosen = replace(layout, view="source", browser_wanted=False, empty=True)
    again = chosen.for_size(140, 40)
    assert (again.view, again.browser_wanted, again.empty) == ("source", False, True)
    assert not again.shows_form and not again.shows_source


def test_a_clean_lint_shrinks_the_problems_panel() -> None:
    assert replace(DeskLayout().for_size(140, 40), clean=True).lint_height == 3
