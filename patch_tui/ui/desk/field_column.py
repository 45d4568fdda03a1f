"""The manifest form's column of fields, which paints their labels and the sections' titles
(one widget per field: the desk's start-up cost grows with the widget count)."""

from __future__ import annotations

from textual.containers import Vertical
from textual.content import Content

__all__ = ["FieldColumn"]


class FieldColumn(Vertical):
    """A column of the form's fields, which paints each field's label in the margin left of it,
    and a section's title on the line above the section's first field.

    A field is one widget: the labels and titles are the column's own content, drawn on the
    lines its fields are laid out on. A row widget per field (a label and its field on one
    line) doubled the form's widget count, and the desk's start-up cost grows with it; a
    section's title was a Label of its own, as costly as a field."""

    COMPONENT_CLASSES = {"field-column--label", "field-column--section"}
    DEFAULT_CSS = """
    FieldColumn > .field { margin-left: 14; }
    FieldColumn > Label.field { color: $text; }
    FieldColumn > .field-column--label { color: $text-muted; }
    /* A blank line and the title above a section's first field (one margin: Textual's
       margin-top would replace the whole margin of the rule above). */
    FieldColumn > .field.-section-start { margin: 2 0 0 14; }
    FieldColumn > .field-column--section { color: $primary; text-style: bold; }
    """
    LABEL_WIDTH = 13

    def render(self) -> Content:
        size = self.content_region.size
        width = min(self.LABEL_WIDTH, size.width)
        lines = [""] * size.height
        titles: set[int] = set()
        for placement in self.arrange(size).placements:
            widget, y = placement.widget, placement.region.y
            if not widget.display:
                continue
            label = getattr(widget, "field_label", None)
            if label is not None and 0 <= y < size.height:
                lines[y] = label[:width]
            title = getattr(widget, "field_section", None)
            if title is not None and 0 <= y - 1 < size.height:
                lines[y - 1] = title[: size.width]
                titles.add(y - 1)
        label_style = self.get_visual_style("field-column--label")
        title_style = self.get_visual_style("field-column--section")
        content = Content("\n".join(lines))
        start = 0
        for y, line in enumerate(lines):
            if line:
                style = title_style if y in titles else label_style
                content = content.stylize(style, start, start + len(line))
            start += len(line) + 1
        return content

    def _clear_arrangement_cache(self) -> None:
        # A field moved (one above it was shown, hidden or resized): its label moves with it.
        super()._clear_arrangement_cache()
        self.refresh()
