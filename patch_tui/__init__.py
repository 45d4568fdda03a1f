from __future__ import annotations

# The one home of the version: pyproject.toml reads it from here (dynamic), and CHANGELOG.md
# has a section for each.
__version__ = "0.1.0"
