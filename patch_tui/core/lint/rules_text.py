"""Rules on the text people and agents read: hidden Unicode, instructions to an AI (PT050-PT051)."""

from __future__ import annotations
