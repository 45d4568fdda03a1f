"""Enrollment links used once, across restarts. A link is good for ENROLL_TTL (10 minutes);
remembering its nonce only in memory let a captured link enroll a second passkey after the web
app restarted within that time. Each used nonce is kept, with the link's expiry, in one file in
the user state folder (hidden from every tool run, like the rest of that folder) until it
expires."""

from __future__ import annotations

import json
import os
from pathlib import Path

from patch_tui.approvals.values import now_iso


class UsedNonces:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._used: dict[str, str] = {}  # nonce -> the link's expires_at (ISO, sorts as text)
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError:
            lines = []
        now = now_iso()
        for line in lines:
            try:
                nonce, expires = json.loads(line)
            except (ValueError, TypeError):
                continue  # a damaged line forgets nothing else
            if isinstance(nonce, str) and isinstance(expires, str) and expires > now:
                self._used[nonce] = expires

    def __contains__(self, nonce: object) -> bool:
        return nonce in self._used

    def add(self, nonce: str, expires_at: str) -> None:
        """Remember `nonce` until `expires_at`, on disk before the passkey is added: a crash
        in between loses one enrollment, never lets the link work twice."""
        self._used[nonce] = expires_at
        now = now_iso()
        live = [json.dumps([n, e]) for n, e in self._used.items() if e > now]
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = self.path.with_name(self.path.name + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write("".join(line + "\n" for line in live))
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, self.path)
