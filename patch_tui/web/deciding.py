"""A decision from the web: the statement of exactly what is decided, a passkey assertion over
sha256(statement), verified by approvals/passkeys.py, then the store's one conditional
transition. Nothing is decided without a fresh assertion from the session's own passkey."""

from __future__ import annotations

import json
import time
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import (
    JSONResponse,
    Response,
)

from patch_tui.approvals import decisions, edits, passkeys, review
from patch_tui.approvals.open_store import open_store
from patch_tui.approvals.passkeys import PasskeyError
from patch_tui.approvals.statements import DecisionStatement, DecisionVerb, Envelope
from patch_tui.approvals.store import (
    Action,
    args_sha256,
    canonical_json,
    now_iso,
)
from patch_tui.web.pages import find_action, input_fields
from patch_tui.web.sessions import Ceremony, Session
from patch_tui.web.state import (
    Refused,
    WebApp,
    check_post,
    client_of,
    current_session,
    json_body,
    limit,
    log,
    require_session,
)

# -- deciding -------------------------------------------------------------------------------


def _edited_args(rv: review.Review, form: dict[str, Any]) -> dict[str, Any] | None:
    """The person's edit as args (None: not edited), checked against the tool's inputs."""
    values = form.get("args")
    if values is None:
        return None
    if rv.cannot_edit is not None:
        raise Refused(409, f"cannot edit the args: {rv.cannot_edit}")
    if not isinstance(values, dict):
        raise Refused(400, "the edited args must be a JSON object")
    shown = {f["name"]: f for f in input_fields(rv)}
    args: dict[str, Any] = {}
    for inp in rv.tool.inputs:
        if inp.name not in values:
            continue
        raw, field = values[inp.name], shown[inp.name]
        # A field left as shown keeps the agent's exact value: the form shows hidden characters
        # as ⟦U+…⟧ tokens, and those tokens must not replace them in args nobody edited.
        if raw == field["text"] or (inp.type == "boolean" and raw is field["checked"]):
            if field["present"]:
                args[inp.name] = rv.action.args[inp.name]
            continue
        if inp.type == "string":
            args[inp.name] = raw
            continue
        if inp.type == "boolean" and isinstance(raw, bool):
            args[inp.name] = raw
            continue
        if not isinstance(raw, str):
            raise Refused(400, f"{inp.name}: expected the field's text")
        try:
            args[inp.name] = json.loads(raw)
        except ValueError:
            raise Refused(400, f"{inp.name} must be {inp.type} (JSON), not {raw[:40]!r}") from None
    from patch_tui.format.toolfile import parse_bytes

    assert rv.tool.text is not None
    manifest = parse_bytes(rv.tool.text.encode("utf-8")).run_manifest
    if manifest is None:
        raise Refused(409, "the tool's manifest does not parse: the args cannot be checked")
    problem = edits.validate(args, manifest)
    if problem is not None:
        raise Refused(400, problem)
    return args


def decision_statement(
    action: Action,
    *,
    decision: DecisionVerb,
    note: str | None,
    approver: str,
    key: str,
    args: dict[str, Any] | None,
    ttl: float,
) -> bytes:
    """The canonical statement a passkey signs (approvals/statements.py; docs/architecture.md,
    "The statement"): an approval of these args, usable until now + ttl; a rejection, now."""
    now = time.time()
    at = now_iso(now)
    return DecisionStatement(
        token=action.token,
        kind=str(action.kind),
        tool=action.tool,
        tool_path=action.tool_path,
        tool_version=action.version,
        source_sha256=action.source_sha256,
        args_sha256=args_sha256(args) if args is not None else action.args_sha256,
        expires_at=now_iso(now + ttl) if decision == "approve" else at,
        upstream_token=action.upstream_token,
        decision=decision,
        note=note,
        approver=approver,
        key=key,
        at=at,
    ).canonical()


async def prepare(app: WebApp, request: Request) -> Response:
    session = require_session(app, request, "a decision")
    check_post(app, request, session)
    limit(app.decide_limit, request, "decision")
    form = await json_body(request)
    action = find_action(app, request)
    decision = form.get("decision")
    if decision not in ("approve", "reject"):
        raise Refused(400, "the decision must be approve or reject")
    if form.get("shown_args_sha256") != action.args_sha256:
        raise Refused(409, "its args changed since the page was shown: reload it")
    rv = review.review(app.store(), action, app.catalog)
    if decision == "approve" and rv.cannot_approve is not None:
        raise Refused(409, f"cannot approve: {rv.cannot_approve}")
    if decision == "reject" and not rv.can_reject:
        raise Refused(409, f"cannot reject: it is {action.status}")
    note = form.get("note")
    if note is not None and (not isinstance(note, str) or len(note) > 2000):
        raise Refused(400, "the note must be text of at most 2000 characters")
    note = note.strip() or None if isinstance(note, str) else None
    if decision == "reject" and note is None:
        raise Refused(400, "say why you reject it: the agent reads the reason")
    args = _edited_args(rv, form) if decision == "approve" else None
    # The statement names one key, the passkey that opened this session: it is the one asked.
    passkey = next((p for p in app.passkeys() if p.credential_id == session.credential_id), None)
    if passkey is None or passkey.approver != session.approver:
        raise Refused(409, "the passkey you signed in with is no longer registered: sign in again")
    mine = [passkey]
    statement = decision_statement(
        action,
        decision=decision,
        note=note,
        approver=session.approver,
        key=passkey.credential_id,
        args=args,
        ttl=app.config.ttl,
    )
    ceremony = Ceremony(
        "decide",
        passkeys.statement_challenge(statement),
        statement=statement,
        data={
            "token": action.token,
            "decision": decision,
            "note": note,
            "args": args,
            "shown": action.args_sha256,
            "credential_id": passkey.credential_id,
        },
    )
    cid = app.sessions.start(session, ceremony)
    options = passkeys.assertion_options(
        rp_id=app.config.rp_id, challenge=ceremony.challenge, passkeys=mine
    )
    return JSONResponse({"ceremony": cid, "options": options})


async def decide(app: WebApp, request: Request) -> Response:
    session = current_session(app, request)
    if session is None:
        log.warning("refused: a decision without a session, from %s", client_of(request))
        raise Refused(401, "sign in with your passkey first")
    check_post(app, request, session)
    limit(app.decide_limit, request, "decision")
    form = await json_body(request)
    ceremony = app.sessions.finish(session, str(form.get("ceremony", "")), "decide")
    token = str(request.path_params["token"])
    if ceremony is None or ceremony.data.get("token") != token:
        log.warning(
            "refused: a decision on %s... with no open ceremony, from %s",
            token[:8],
            client_of(request),
        )
        raise Refused(409, "that decision was not started here or took too long: try again")
    credential = form.get("credential")
    if not isinstance(credential, dict):
        raise Refused(400, "the passkey answer is missing")
    passkey = next(
        (p for p in app.passkeys() if p.credential_id == ceremony.data["credential_id"]), None
    )
    if passkey is None or passkey.approver != session.approver:
        raise Refused(409, "that passkey is no longer registered")
    try:
        signature = passkeys.signature_fields(credential)
        passkeys.verify_assertion(ceremony.statement, signature, passkey)
    except PasskeyError as exc:
        log.warning(
            "refused: a decision on %s... by %s: %s (from %s)",
            token[:8],
            session.approver,
            exc,
            client_of(request),
        )
        raise Refused(403, str(exc)) from None
    envelope = {
        "scheme": passkeys.SCHEME,
        "statement": ceremony.statement.decode("utf-8"),
        "signature": signature,
        "signer": passkey.credential_id,
    }
    # The store waits on its write lock (another decider, a busy PostgreSQL): off the loop.
    result = await run_in_threadpool(_apply, app, session, ceremony, envelope)
    return JSONResponse(result, status_code=200 if result["ok"] else 409)


def _apply(
    app: WebApp, session: Session, ceremony: Ceremony, envelope: dict[str, Any]
) -> dict[str, Any]:
    """Records a passkey-signed decision through the decisions service, which verifies it again
    against the trusted approvers as they are now and counts the quorum in the store's own
    transaction (a decision made meanwhile at a terminal wins, and this one says so)."""
    data = ceremony.data
    sealed = Envelope(
        envelope["scheme"], envelope["statement"], envelope["signature"], envelope["signer"]
    )
    store = open_store(
        app.config.store, actor=f"{session.approver}@web-passkey", ttl=app.config.ttl
    )
    try:
        decided = decisions.record_signed(
            store,
            sealed,
            args=data["args"],
            shown_args_sha256=data["shown"],
            approvers=app.approvers(),
        )
    finally:
        store.close()
    log.info(
        "%s %s... by %s with passkey %s: %s (envelope %s)",
        data["decision"],
        data["token"][:8],
        session.approver,
        envelope["signer"][:12],
        "done" if decided.ok else decided.why,
        canonical_json(envelope),
    )
    status = decided.action.status if decided.action is not None else None
    return {"ok": decided.ok, "why": decided.why, "code": decided.code, "status": status}
