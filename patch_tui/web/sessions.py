"""Sessions, CSRF tokens, pending passkey ceremonies and rate limits, all server-side.

A session is a random id in a cookie (HttpOnly, SameSite=Strict, Secure) naming a record kept in
this process: the approver it was opened for (by a passkey assertion), its CSRF token, when it was
last used, and the statements it is about to ask a passkey to sign. Nothing a browser holds says
who it is or what it may do, so a copied cookie cannot be edited into more. Sessions end after
the idle timeout and when the process stops.

A session only lets a person see the inbox: every decision needs a passkey assertion of its own,
over that decision's statement (app.py), so a stolen session cookie approves nothing.

Rate limits are a sliding window per (client, route class): login and enrollment, decisions.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# How long a started ceremony (login, enrollment, a decision) may wait for the passkey (seconds).
CEREMONY_TTL = 180.0
MAX_PENDING = 16


@dataclass
class Ceremony:
    """A passkey ceremony the server started: what it will accept the answer for."""

    kind: str  # "login" | "enroll" | "decide"
    challenge: bytes
    statement: bytes = b""
    data: dict[str, Any] = field(default_factory=dict)
    started: float = 0.0


@dataclass
class Session:
    sid: str
    approver: str
    # The passkey that opened the session: the one each decision asks to sign.
    credential_id: str
    csrf: str
    last_seen: float
    pending: dict[str, Ceremony] = field(default_factory=dict)


class Sessions:
    """Sessions by id, and ceremonies not yet tied to a session (login, enrollment)."""

    def __init__(self, idle_timeout: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.idle_timeout = idle_timeout
        self._clock = clock
        self._lock = threading.Lock()
        self._sessions: dict[str, Session] = {}
        self._open_ceremonies: dict[str, Ceremony] = {}

    def open(self, approver: str, credential_id: str) -> Session:
        now = self._clock()
        session = Session(
            secrets.token_urlsafe(32), approver, credential_id, secrets.token_urlsafe(32), now
        )
        with self._lock:
            self._sessions[session.sid] = session
        return session

    def get(self, sid: str | None) -> Session | None:
        """The live session for this cookie value, its idle clock restarted; None if unknown or
        idle past the timeout (then forgotten)."""
        if not sid:
            return None
        now = self._clock()
        with self._lock:
            session = self._sessions.get(sid)
            if session is None:
                return None
            if now - session.last_seen > self.idle_timeout:
                del self._sessions[sid]
                return None
            session.last_seen = now
            return session

    def alive(self, sid: str) -> bool:
        """Whether the session is still open, without counting this as use (a live feed that
        only listens must not keep an idle session open)."""
        with self._lock:
            session = self._sessions.get(sid)
            return session is not None and self._clock() - session.last_seen <= self.idle_timeout

    def close(self, sid: str) -> None:
        with self._lock:
            self._sessions.pop(sid, None)

    def start(self, session: Session | None, ceremony: Ceremony) -> str:
        """Keeps a ceremony (in the session, or apart for login and enrollment); its id."""
        ceremony.started = self._clock()
        cid = secrets.token_urlsafe(18)
        with self._lock:
            table = session.pending if session is not None else self._open_ceremonies
            self._drop_stale(table)
            while len(table) >= (MAX_PENDING if session is not None else 1024):
                table.pop(next(iter(table)))
            table[cid] = ceremony
        return cid

    def finish(self, session: Session | None, cid: str, kind: str) -> Ceremony | None:
        """Takes a ceremony out (once: an answer can be used only one time)."""
        with self._lock:
            table = session.pending if session is not None else self._open_ceremonies
            self._drop_stale(table)
            ceremony = table.pop(cid, None)
        if ceremony is None or ceremony.kind != kind:
            return None
        return ceremony

    def _drop_stale(self, table: dict[str, Ceremony]) -> None:
        now = self._clock()
        for key in [k for k, c in table.items() if now - c.started > CEREMONY_TTL]:
            del table[key]


class RateLimiter:
    """At most `limit` hits per `window` seconds per key."""

    def __init__(
        self, limit: int, window: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.limit = limit
        self.window = window
        self._clock = clock
        self._hits: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def allow(self, key: str) -> bool:
        now = self._clock()
        with self._lock:
            hits = self._hits.setdefault(key, deque())
            while hits and now - hits[0] > self.window:
                hits.popleft()
            if len(hits) >= self.limit:
                return False
            hits.append(now)
            if len(self._hits) > 10_000:
                self._hits = {k: v for k, v in self._hits.items() if v}
            return True
