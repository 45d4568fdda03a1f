"""The web app's routes (Starlette): pages, their JSON twins, the live feed and the passkey
ceremonies. A thin front end: what an action shows comes from approvals/review.py, decisions go
to the store's own conditional transitions, edits are checked by approvals/edits.py, and every
untrusted string is shown through web/display.py.

    GET  /                          the pending list (live: /events, /fragments/list)
    GET  /actions/{token}           one action, exactly what would run; .json for programs
    POST /actions/{token}/prepare   the decision's statement -> passkey options (challenge =
                                    sha256(statement))
    POST /actions/{token}/decide    the passkey's assertion -> verified -> decided
    GET  /login, POST /login/{options,finish}      a session, opened by a passkey
    GET  /enroll, POST /enroll/{options,finish}    a passkey registered from a signed link
    POST /logout

Every POST needs the page's origin (Origin header) and, inside a session, its CSRF token
(X-CSRF-Token); every response carries a CSP without 'unsafe-inline'. A request that tries to
decide without a session or without a valid passkey answer is refused and logged, with the
client's address: an agent on this machine that finds the port can read nothing and decide
nothing.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from patch_tui.web import deciding, pages, signin
from patch_tui.web.config import WebConfig
from patch_tui.web.state import HERE, SecurityHeaders, WebApp, route

# -- the app --------------------------------------------------------------------------------


def create_app(config: WebConfig) -> Starlette:
    web = WebApp(config)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        web.live.start()
        try:
            yield
        finally:
            web.live.stop()
            if web.push is not None:
                web.push.stop()

    routes = [
        Route("/", route(web, pages.index, page=True)),
        Route("/fragments/list", route(web, pages.list_fragment)),
        Route("/events", route(web, pages.events)),
        Route("/actions/{token}.json", route(web, pages.action_json)),
        Route("/actions/{token}", route(web, pages.action_page, page=True)),
        Route("/actions/{token}/prepare", route(web, deciding.prepare), methods=["POST"]),
        Route("/actions/{token}/decide", route(web, deciding.decide), methods=["POST"]),
        Route("/login", route(web, signin.login_page, page=True)),
        Route("/login/options", route(web, signin.login_options), methods=["POST"]),
        Route("/login/finish", route(web, signin.login_finish), methods=["POST"]),
        Route("/logout", route(web, signin.logout), methods=["POST"]),
        Route("/enroll", route(web, signin.enroll_page, page=True)),
        Route("/enroll/options", route(web, signin.enroll_options), methods=["POST"]),
        Route("/enroll/finish", route(web, signin.enroll_finish), methods=["POST"]),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        middleware=[Middleware(SecurityHeaders, secure_origin=config.secure_origin)],
    )
    app.state.web = web
    return app
