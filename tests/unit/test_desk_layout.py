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


def test_the_form_builds_for_its_first_frame_the_sections_whose_first_row_shows() -> None:
    from patch_tui.format import fields
    from patch_tui.ui.desk.manifest_form import SECTION_LINES, _field_lines, fold_index

    data = {"name": "t", "inputs": [{"name": "a"}], "outputs": {"type": "string"}}
    top = fields.fields_of("")
    for height in (18, 24, 30, 36, 40, 45, 50, 60):
        lines = DeskLayout(clean=True).for_size(120, height).form_lines(height)
        fold = fold_index(data, lines)
        starts = [sum(_field_lines(f, data) for f in top[:i]) for i in range(len(top))]
        first_rows = [
            s + (SECTION_LINES if f.section else 0) for s, f in zip(starts, top, strict=True)
        ]
        cards = next(i for i, f in enumerate(top) if f.widget == "cards")
        assert fold > cards  # the tool's own fields and its inputs are always built
        assert all(first_rows[i] < lines for i in range(cards + 1, fold))
        if fold < len(top):
            assert first_rows[fold] >= lines  # below the fold: built right after the frame
