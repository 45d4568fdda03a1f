"""Rules on the Python body (PT030-PT046), all fed by one AST pass (lint/body.py)."""

from __future__ import annotations
