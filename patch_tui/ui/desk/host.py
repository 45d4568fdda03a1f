"""The app that holds the desk, as the screens opened over it see it.

Try it, export/import, generate/refine, the inbox and its badge open over the desk in
`patch-tui`, but the inbox also runs alone (`patch-tui inbox`) and tests host screens in bare
apps. So they ask `desk_editor(self.app)`, typed, for the editor screen: None where there is no
desk behind them.

    DeskHost              the App mixin holding the desk (PatchApp): `editor`, `action_open_screen`
    desk_editor(app)  ->  EditorScreen | None
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from patch_tui.ui.desk.editor import EditorScreen


class DeskHost:
    """Mixin for the App that holds the desk's editor screen and opens the other screens by
    name (SCREENS_LAZY in ui/app.py)."""

    editor: EditorScreen

    if TYPE_CHECKING:

        def action_open_screen(self, name: str) -> None: ...


def desk_editor(app: object) -> EditorScreen | None:
    """The desk's editor screen, or None for an app without a desk (the standalone inbox)."""
    return app.editor if isinstance(app, DeskHost) else None
