"""Sign-in with a passkey (a session to read the inbox) and enrollment (a passkey registered from
the one-time link `patch-tui keys enroll-web` printed, signed by the approver's SSH key)."""

from __future__ import annotations

import secrets

from starlette.requests import Request
from starlette.responses import (
    JSONResponse,
    RedirectResponse,
    Response,
)

from patch_tui.approvals import passkeys
from patch_tui.approvals.enrollment import EnrollError, verify_link_token
from patch_tui.approvals.passkeys import PasskeyError
from patch_tui.approvals.store import (
    canonical_json,
    now_iso,
)
from patch_tui.web.sessions import Ceremony
from patch_tui.web.state import (
    COOKIE,
    Refused,
    WebApp,
    check_post,
    client_of,
    current_session,
    json_body,
    limit,
    log,
    require_session,
    set_session_cookie,
)

# -- login and enrollment -------------------------------------------------------------------


async def login_page(app: WebApp, request: Request) -> Response:
    if current_session(app, request) is not None:
        return RedirectResponse("/", status_code=303)
    return app.page("login.html", request, enrolled=bool(app.passkeys()))


def _login_statement(app: WebApp) -> bytes:
    return canonical_json(
        {
            "v": 1,
            "type": "patch-tui.login",
            "origin": app.config.origin,
            "nonce": secrets.token_urlsafe(18),
            "at": now_iso(),
        }
    ).encode("utf-8")


async def login_options(app: WebApp, request: Request) -> Response:
    check_post(app, request, None)
    limit(app.login_limit, request, "login")
    registered = app.passkeys()
    if not registered:
        raise Refused(409, "no passkey is registered yet: run `patch-tui keys enroll-web NAME`")
    statement = _login_statement(app)
    ceremony = Ceremony("login", passkeys.statement_challenge(statement), statement=statement)
    cid = app.sessions.start(None, ceremony)
    options = passkeys.assertion_options(
        rp_id=app.config.rp_id, challenge=ceremony.challenge, passkeys=registered
    )
    return JSONResponse({"ceremony": cid, "options": options})


async def login_finish(app: WebApp, request: Request) -> Response:
    check_post(app, request, None)
    limit(app.login_limit, request, "login")
    form = await json_body(request)
    ceremony = app.sessions.finish(None, str(form.get("ceremony", "")), "login")
    if ceremony is None:
        raise Refused(409, "that sign-in took too long: try again")
    credential = form.get("credential")
    if not isinstance(credential, dict):
        raise Refused(400, "the passkey answer is missing")
    try:
        signature = passkeys.signature_fields(credential)
        passkey = next(
            (p for p in app.passkeys() if p.credential_id == signature["credential_id"]), None
        )
        if passkey is None:
            raise PasskeyError("that passkey is not registered here")
        passkeys.verify_assertion(ceremony.statement, signature, passkey)
    except PasskeyError as exc:
        log.warning("refused: a sign-in: %s (from %s)", exc, client_of(request))
        raise Refused(403, str(exc)) from None
    session = app.sessions.open(passkey.approver, passkey.credential_id)
    log.info("signed in: %s from %s", passkey.approver, client_of(request))
    response = JSONResponse({"ok": True, "approver": passkey.approver})
    set_session_cookie(app, response, session)
    return response


async def logout(app: WebApp, request: Request) -> Response:
    session = require_session(app, request, "sign-out")
    check_post(app, request, session)
    app.sessions.close(session.sid)
    response = JSONResponse({"ok": True})
    response.delete_cookie(COOKIE, path="/", secure=True, httponly=True, samesite="strict")
    return response


async def enroll_page(app: WebApp, request: Request) -> Response:
    return app.page("enroll.html", request)


async def enroll_options(app: WebApp, request: Request) -> Response:
    check_post(app, request, None)
    limit(app.login_limit, request, "enrollment")
    form = await json_body(request)
    try:
        claim = verify_link_token(str(form.get("link", "")), app.approvers())
    except EnrollError as exc:
        log.warning("refused: an enrollment link: %s (from %s)", exc, client_of(request))
        raise Refused(403, str(exc)) from None
    if claim.origin != app.config.origin:
        raise Refused(
            403,
            f"this link is for {claim.origin}, and this inbox is {app.config.origin}: "
            "run `patch-tui keys enroll-web` with --url set to this address",
        )
    if claim.nonce in app.used_enroll_nonces:
        log.warning(
            "refused: a used enrollment link of %s (from %s)", claim.approver, client_of(request)
        )
        raise Refused(403, "this enrollment link was already used: make a new one")
    challenge = secrets.token_bytes(32)
    ceremony = Ceremony(
        "enroll",
        challenge,
        data={"approver": claim.approver, "nonce": claim.nonce, "expires_at": claim.expires_at},
    )
    cid = app.sessions.start(None, ceremony)
    existing = [p for p in app.passkeys() if p.approver == claim.approver]
    options = passkeys.registration_options(
        rp_id=app.config.rp_id, approver=claim.approver, challenge=challenge, exclude=existing
    )
    return JSONResponse({"ceremony": cid, "options": options, "approver": claim.approver})


async def enroll_finish(app: WebApp, request: Request) -> Response:
    check_post(app, request, None)
    limit(app.login_limit, request, "enrollment")
    form = await json_body(request)
    ceremony = app.sessions.finish(None, str(form.get("ceremony", "")), "enroll")
    if ceremony is None:
        raise Refused(409, "that enrollment took too long: open the link again")
    nonce = ceremony.data["nonce"]
    if nonce in app.used_enroll_nonces:
        raise Refused(403, "this enrollment link was already used: make a new one")
    credential = form.get("credential")
    if not isinstance(credential, dict):
        raise Refused(400, "the passkey answer is missing")
    approver = ceremony.data["approver"]
    passkey = passkeys.verify_registration(
        credential,
        challenge=ceremony.challenge,
        rp_id=app.config.rp_id,
        origin=app.config.origin,
        approver=approver,
    )
    app.used_enroll_nonces.add(nonce, ceremony.data["expires_at"])
    passkeys.append_passkey(app.approvers().source or app.config.approvers_file, passkey)
    log.info("passkey registered for %s: %s", approver, passkey.credential_id[:12])
    session = app.sessions.open(approver, passkey.credential_id)
    response = JSONResponse({"ok": True, "approver": approver})
    set_session_cookie(app, response, session)
    return response
