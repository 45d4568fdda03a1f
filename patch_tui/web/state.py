"""The web app's state and the helpers every route shares: the store, sessions, rate limits,
the live feed and push alerts (WebApp); who is asking (session, origin, CSRF); refusals as one
sentence; the security headers on every response."""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.requests import Request
from starlette.responses import (
    HTMLResponse,
    JSONResponse,
    RedirectResponse,
    Response,
)

from patch_tui.approvals.approvers import Approvers
from patch_tui.approvals.enrollment import EnrollError
from patch_tui.approvals.identity import trusted
from patch_tui.approvals.open_store import open_store
from patch_tui.approvals.passkeys import Passkey, PasskeyError
from patch_tui.approvals.push import (
    FailureLog,
    PushConfigError,
    PushDispatcher,
    failure_log_path,
    load_targets,
)
from patch_tui.approvals.store import (
    ActionStatus,
    Store,
    StoreError,
)
from patch_tui.approvals.watcher import StoreChanged
from patch_tui.runtime.catalog import ToolCatalog
from patch_tui.settings import paths
from patch_tui.web.config import WebConfig
from patch_tui.web.live import LiveFeed
from patch_tui.web.nonces import UsedNonces
from patch_tui.web.sessions import RateLimiter, Session, Sessions

log = logging.getLogger("patch_tui.web")

HERE = Path(__file__).parent
COOKIE = "patch_tui_session"
MAX_BODY = 256 * 1024
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)


class Refused(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class WebApp:
    """The state behind the routes: config, sessions, rate limits, the live feed, the store."""

    def __init__(self, config: WebConfig) -> None:
        self.config = config
        self.sessions = Sessions(config.idle_timeout)
        self.login_limit = RateLimiter(10, 60.0)
        self.decide_limit = RateLimiter(30, 60.0)
        self.catalog = ToolCatalog()
        self.used_enroll_nonces = UsedNonces(paths.state_dir() / "web-enroll-nonces.jsonl")
        self._store: Store | None = None
        self.templates = Environment(
            loader=FileSystemLoader(HERE / "templates"),
            autoescape=select_autoescape(default=True, default_for_string=True),
        )
        self.push: PushDispatcher | None = None
        self.push_problem: str | None = None
        try:
            targets = load_targets(config.approvers_file)
        except PushConfigError as exc:
            targets, self.push_problem = [], str(exc)
            log.warning("push alerts off: %s", exc)
        if targets:
            self.push = PushDispatcher(
                targets,
                config.origin,
                self._still_pending,
                failures=FailureLog(failure_log_path(config.store)),
            )
        self.live = LiveFeed(self.open_store, config.poll_interval, self._arrived)

    # -- the store ------------------------------------------------------------------------------

    def open_store(self) -> Store | None:
        """The store, once it exists: a SQLite file appears with the first held call; a
        PostgreSQL store (the team inbox) is opened, and migrated if need be, at once."""
        if self._store is None:
            location = self.config.store
            if isinstance(location, Path) and not location.exists():
                return None
            self._store = open_store(location, actor="web")
        return self._store

    def store(self) -> Store:
        store = self.open_store()
        if store is None:
            raise Refused(404, "there is no confirmation store yet: nothing was ever held")
        return store

    def _still_pending(self, token: str) -> bool:
        store = self.open_store()
        action = store.get(token) if store is not None else None
        return action is not None and action.status == ActionStatus.PENDING

    def _arrived(self, changed: StoreChanged) -> None:
        if self.push is not None:
            self.push.arrived(changed.arrived)

    def approvers(self) -> Approvers:
        """The trusted approvers as they are now (re-read each time: one removed from the file
        stops counting at once), as every decision reads them (approvals/identity.py)."""
        return trusted()

    def passkeys(self, approvers: Approvers | None = None) -> list[Passkey]:
        found = [
            Passkey(a.name, pk["credential_id"], pk["public_key"], pk["rp_id"], pk["origin"])
            for a in (approvers or self.approvers()).approvers
            for pk in a.passkeys
        ]
        # A passkey registered for another RP ID or origin never verifies here.
        return [p for p in found if p.rp_id == self.config.rp_id and p.origin == self.config.origin]

    # -- rendering ------------------------------------------------------------------------------

    def page(self, name: str, request: Request, status: int = 200, **context: Any) -> HTMLResponse:
        session: Session | None = request.scope.get("session_record")
        html = self.templates.get_template(name).render(
            session=session, csrf=session.csrf if session else "", **context
        )
        return HTMLResponse(html, status_code=status)


# -- middleware-like helpers ----------------------------------------------------------------


def client_of(request: Request) -> str:
    return request.client.host if request.client else "?"


def current_session(app: WebApp, request: Request) -> Session | None:
    session = app.sessions.get(request.cookies.get(COOKIE))
    request.scope["session_record"] = session
    return session


def require_session(app: WebApp, request: Request, what: str) -> Session:
    session = current_session(app, request)
    if session is None:
        log.warning("refused: %s without a session, from %s", what, client_of(request))
        raise Refused(401, "sign in with your passkey first")
    return session


def check_post(app: WebApp, request: Request, session: Session | None) -> None:
    """Same-origin POSTs only, and inside a session the CSRF token of that session."""
    origin = request.headers.get("origin")
    if origin != app.config.origin:
        log.warning(
            "refused: %s %s from origin %r (expected %s), from %s",
            request.method,
            request.url.path,
            origin,
            app.config.origin,
            client_of(request),
        )
        raise Refused(403, "this request did not come from the inbox's own page")
    if session is not None:
        token = request.headers.get("x-csrf-token", "")
        if not secrets.compare_digest(token, session.csrf):
            log.warning(
                "refused: %s without its CSRF token, from %s", request.url.path, client_of(request)
            )
            raise Refused(403, "the page is out of date: reload it")


async def json_body(request: Request) -> dict[str, Any]:
    body = await request.body()
    if len(body) > MAX_BODY:
        raise Refused(413, "the request is too large")
    try:
        data = json.loads(body or b"{}")
    except ValueError:
        raise Refused(400, "the request is not JSON") from None
    if not isinstance(data, dict):
        raise Refused(400, "the request must be a JSON object")
    return data


def limit(limiter: RateLimiter, request: Request, what: str) -> None:
    if not limiter.allow(f"{client_of(request)}:{what}"):
        log.warning("refused: too many %s attempts from %s", what, client_of(request))
        raise Refused(429, "too many attempts: wait a minute")


def set_session_cookie(app: WebApp, response: Response, session: Session) -> None:
    response.set_cookie(
        COOKIE,
        session.sid,
        max_age=None,
        path="/",
        secure=True,  # browsers treat http://localhost as a secure context and keep it
        httponly=True,
        samesite="strict",
    )


Handler = Callable[[WebApp, Request], Awaitable[Response]]


def route(
    app: WebApp, handler: Handler, *, page: bool = False
) -> Callable[[Request], Awaitable[Response]]:
    """An endpoint whose refusals are a page (`page`: sign-in redirect, an error page) or JSON."""

    async def endpoint(request: Request) -> Response:
        try:
            response = await handler(app, request)
        except Refused as exc:
            if page and exc.status == 401:
                response = RedirectResponse("/login", status_code=303)
            elif page:
                response = app.page("error.html", request, exc.status, message=str(exc))
            else:
                response = JSONResponse({"ok": False, "why": str(exc)}, status_code=exc.status)
        except (StoreError, PasskeyError, EnrollError) as exc:
            log.warning("%s %s: %s", request.method, request.url.path, exc)
            response = JSONResponse({"ok": False, "why": str(exc)}, status_code=409)
        return response

    return endpoint


class SecurityHeaders:
    """Every response, static files included: the CSP (no inline script or style, nothing from
    elsewhere), no sniffing, no framing, no referrer, no caching of pages of pending actions."""

    def __init__(self, app: Any, secure_origin: bool) -> None:
        self.app = app
        self.headers = [
            (b"content-security-policy", CSP.encode()),
            (b"x-content-type-options", b"nosniff"),
            (b"referrer-policy", b"no-referrer"),
            (b"x-frame-options", b"DENY"),
            (b"cross-origin-opener-policy", b"same-origin"),
            (b"permissions-policy", b"camera=(), microphone=(), geolocation=()"),
        ]
        if secure_origin:
            self.headers.append((b"strict-transport-security", b"max-age=31536000"))

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                headers = [h for h in message.get("headers", []) if h[0] != b"cache-control"]
                cache = b"no-cache" if scope["path"].startswith("/static/") else b"no-store"
                message["headers"] = [*headers, *self.headers, (b"cache-control", cache)]
            await send(message)

        await self.app(scope, receive, send_with_headers)
