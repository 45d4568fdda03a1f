"""Push alerts (issue 29 item 3) against real protocol peers on loopback: an HTTP server standing
in for ntfy, Slack, Discord and a generic webhook, and an SMTP server (aiosmtpd) for email. What
a push says (tool, a one-line untrusted args summary, expiry, a link), that it never approves
anything, retries with backoff, the presence delay, and failures kept and logged."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from patch_tui.approvals import decisions
from patch_tui.approvals.push import (
    FailureLog,
    PushDispatcher,
    PushTarget,
    failure_log_path,
    load_targets,
    push_message,
    send,
)
from patch_tui.approvals.store import Store
from tests.runtimekit import hold_mark, mark_box
from tests.webkit import free_port, ssh_key, web_server, write_approvers

HOSTILE = {"text": "\x1b]0;pwned\x07 <!channel> @everyone \u202eevil", "marker": "m"}


class Peer:
    """A loopback HTTP server that records each POST; answers `codes` in turn, then 200."""

    def __init__(self, codes: list[int] | None = None) -> None:
        self.requests: list[dict[str, Any]] = []
        self.codes = list(codes or [])
        peer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                peer.requests.append(
                    {"path": self.path, "headers": dict(self.headers), "body": body}
                )
                code = peer.codes.pop(0) if peer.codes else 200
                self.send_response(code)
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def peer() -> Iterator[Peer]:
    p = Peer()
    yield p
    p.close()


@pytest.fixture
def action(tmp_path: Path) -> Any:
    with Store(tmp_path / "s.sqlite3") as store:
        return store.create_pending("human_confirm", "mark", "1.0.0", "0" * 64, HOSTILE, "held")


BASE = "http://localhost:8765"


def _target(kind: str, url: str, **kw: Any) -> PushTarget:
    return PushTarget(approver="alice", kind=kind, url=url, **kw)


def test_ntfy_gets_the_tool_the_untrusted_summary_the_expiry_and_a_link(
    peer: Peer, action: Any
) -> None:
    result = send(_target("ntfy", peer.url + "/topic"), push_message(action, BASE))
    assert result.ok and result.attempts == 1
    [req] = peer.requests
    assert req["path"] == "/topic"
    body = req["body"].decode()
    assert req["headers"]["Title"] == "patch-tui: mark waits for approval"
    assert req["headers"]["Click"] == f"{BASE}/actions/{action.token}"
    assert "args (untrusted, from the agent):" in body and action.expires_at in body
    # Control and bidi characters arrive as visible names, never themselves.
    assert "\x1b" not in body and "\u202e" not in body and "⟦U+202E⟧" in body
    assert len(body.splitlines()) == 3


def test_slack_discord_and_the_webhook_get_their_own_shapes_and_no_markup(
    peer: Peer, action: Any
) -> None:
    message = push_message(action, BASE)
    for kind in ("slack", "discord", "webhook"):
        assert send(_target(kind, f"{peer.url}/{kind}"), message).ok
    slack, discord, hook = (json.loads(r["body"]) for r in peer.requests)
    assert "<!channel>" not in slack["text"] and "&lt;!channel&gt;" in slack["text"]
    assert discord["allowed_mentions"] == {"parse": []}  # @everyone pings nobody
    assert hook["args_untrusted"] is True
    assert hook["url"] == f"{BASE}/actions/{action.token}"
    assert hook["expires_at"] == action.expires_at and hook["event"] == "action_waiting"


def test_email_goes_through_smtp(action: Any) -> None:
    from aiosmtpd.controller import Controller

    received: list[Any] = []

    class Handler:
        async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802
            received.append(envelope)
            return "250 OK"

    port = free_port()
    controller = Controller(Handler(), hostname="127.0.0.1", port=port)
    controller.start()
    try:
        target = _target("email", f"smtp://127.0.0.1:{port}", to="alice@example.org")
        assert send(target, push_message(action, BASE)).ok
    finally:
        controller.stop()
    [mail] = received
    assert mail.rcpt_tos == ["alice@example.org"]
    text = mail.content.decode()
    assert "Subject: patch-tui: mark waits for approval" in text
    assert f"{BASE}/actions/{action.token}" in text


def test_a_failing_relay_is_retried_with_backoff_then_reported(action: Any) -> None:
    flaky = Peer([500, 503])
    waits: list[float] = []
    try:
        result = send(
            _target("ntfy", flaky.url), push_message(action, BASE), backoff=0.5, sleep=waits.append
        )
        assert result.ok and result.attempts == 3 and waits == [0.5, 1.0]
        down = Peer([500] * 10)
        try:
            failed = send(_target("ntfy", down.url), push_message(action, BASE), sleep=waits.append)
        finally:
            down.close()
    finally:
        flaky.close()
    assert not failed.ok and failed.attempts == 4 and failed.error == "HTTP 500"


def test_the_presence_delay_skips_a_push_when_someone_decided_first(
    peer: Peer, tmp_path: Path
) -> None:
    with Store(tmp_path / "s.sqlite3") as store:
        first = store.create_pending("human_confirm", "mark", "1", "0" * 64, {"text": "a"}, "r")
        second = store.create_pending("human_confirm", "mark", "1", "0" * 64, {"text": "b"}, "r")

        def pending(token: str) -> bool:
            action = store.get(token)
            return action is not None and action.status == "pending"

        dispatcher = PushDispatcher(
            [_target("webhook", peer.url, delay=0.4)], BASE, pending, backoff=0
        )
        dispatcher.arrived([first, second])
        assert decisions.approve(store, first.token).ok  # at the terminal, within the delay
        deadline = time.monotonic() + 5
        while not dispatcher.results and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.2)
    sent = [json.loads(r["body"])["url"] for r in peer.requests]
    assert sent == [f"{BASE}/actions/{second.token}"]


def test_a_bad_push_table_is_one_line(tmp_path: Path) -> None:
    from patch_tui.approvals.push import PushConfigError

    path = tmp_path / "approvers.toml"
    path.write_text(
        '[[approver]]\nname = "alice"\nkey = "k"\n[[approver.push]]\nkind = "pager"\nurl = "x"\n'
    )
    with pytest.raises(PushConfigError, match="kind 'pager'; expected one of ntfy"):
        load_targets(path)


@pytest.mark.slow
def test_the_web_app_pushes_an_arrival_and_the_link_alone_decides_nothing(
    peer: Peer, tmp_path: Path
) -> None:
    box = mark_box(tmp_path)
    _key, pub = ssh_key(tmp_path / "keys", "alice")
    approvers = tmp_path / "approvers.toml"
    broken = Peer([500] * 10)
    write_approvers(
        approvers,
        [("alice", pub)],
        extra=f'[[approver.push]]\nkind = "ntfy"\nurl = "{peer.url}/alice"\n'
        f'[[approver.push]]\nkind = "webhook"\nurl = "{broken.url}/down"\n',
    )
    try:
        reader = FailureLog(failure_log_path(box["store"]))
        with web_server(box["env"], approvers, store=box["store"]) as server:
            time.sleep(0.5)  # the first look at the store is not news
            token = hold_mark(box, "push me")
            deadline = time.monotonic() + 15
            while not peer.requests and time.monotonic() < deadline:
                time.sleep(0.05)
            [req] = peer.requests
            link = req["headers"]["Click"]
            assert link == f"{server.url}/actions/{token}"
            # Whoever gets the push (or a link-preview bot) holds no approval.
            with httpx.Client(timeout=10) as bot:
                assert bot.get(link).status_code == 303
            deadline = time.monotonic() + 20
            while "push failed" not in server.log_text() and time.monotonic() < deadline:
                time.sleep(0.1)
            assert f"push failed: webhook {broken.url} for {token[:8]}...: HTTP 500" in (
                server.log_text()
            )
            # Recorded beside the store for the TUI, with the webhook's path (its secret) left out.
            deadline = time.monotonic() + 5
            failures: list[str] = []
            while not failures and time.monotonic() < deadline:
                failures = reader.read_new()
                time.sleep(0.05)
            assert failures and "webhook" in failures[0] and "/down" not in failures[0]
            assert failure_log_path(box["store"]).stat().st_mode & 0o777 == 0o600
    finally:
        broken.close()
    with Store(box["store"]) as store:
        action = store.get(token)
    assert action is not None and action.status == "pending"
