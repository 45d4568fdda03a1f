"""The Textual user interface. Importing it applies the fixes for Textual's own bugs (textual_fixes)."""

from patch_tui.ui import textual_fixes

textual_fixes.apply()
