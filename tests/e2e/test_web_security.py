"""The web inbox against a client without a passkey (issue 29, security): an agent on the same
machine that finds the port. It talks HTTP to the real `patch-tui web` process and can neither
read the inbox nor decide anything, and every try is logged. Also: the app refuses to listen in
the open without TLS, and every response carries the CSP and friends."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from patch_tui.approvals.store import Store
from tests.runtimekit import cli, hold_mark, mark_box
from tests.webkit import ssh_key, web_server, write_approvers

pytestmark = pytest.mark.slow


@pytest.fixture
def box(tmp_path: Path) -> dict[str, Any]:
    box = mark_box(tmp_path)
    _key, pub = ssh_key(tmp_path / "keys", "alice")
    box["approvers"] = tmp_path / "approvers.toml"
    write_approvers(box["approvers"], [("alice", pub)])
    return box


def _status(store_path: Path, token: str) -> str:
    with Store(store_path) as store:
        action = store.get(token)
    assert action is not None
    return str(action.status)


def _wait_for_log(server: Any, needle: str) -> str:
    deadline = time.monotonic() + 5
    while needle not in server.log_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    return str(server.log_text())


def test_an_http_client_without_a_passkey_reads_nothing_and_decides_nothing(
    box: dict[str, Any],
) -> None:
    token = hold_mark(box, "agent wants this")
    with web_server(box["env"], box["approvers"], store=box["store"]) as server:
        origin = {"Origin": server.url}
        with httpx.Client(base_url=server.url, follow_redirects=False, timeout=10) as agent:
            assert agent.get("/").status_code == 303  # to the passkey sign-in
            assert agent.get(f"/actions/{token}.json").status_code == 401
            page = agent.get(f"/actions/{token}")
            assert page.status_code == 303 and "agent wants this" not in page.text
            assert agent.get("/events").status_code == 401
            for path in ("prepare", "decide"):
                answer = agent.post(
                    f"/actions/{token}/{path}",
                    json={"decision": "approve", "ceremony": "x", "credential": {}},
                    headers=origin,
                )
                assert answer.status_code == 401, answer.text
            # A made-up session cookie is no session.
            agent.cookies.set("patch_tui_session", "forged")
            answer = agent.post(f"/actions/{token}/decide", json={}, headers=origin)
            assert answer.status_code == 401
            # A made-up passkey answer to a sign-in opens nothing.
            start = agent.post("/login/options", headers=origin)
            assert start.status_code == 409  # nobody has a passkey yet
            # Another origin's page posting here is refused before anything else.
            answer = agent.post("/login/options", headers={"Origin": "http://evil.localhost:1"})
            assert answer.status_code == 403
        log = _wait_for_log(server, "refused: a decision without a session")
    assert _status(box["store"], token) == "pending"
    assert "refused: a decision without a session, from 127.0.0.1" in log
    assert "refused: POST /login/options from origin 'http://evil.localhost:1'" in log
    assert cli(box["env"], "confirm", token).returncode == 1  # still not approved


def test_sign_in_attempts_are_rate_limited(box: dict[str, Any]) -> None:
    with web_server(box["env"], box["approvers"], store=box["store"]) as server:
        with httpx.Client(base_url=server.url, timeout=10) as agent:
            codes = [
                agent.post("/login/options", headers={"Origin": server.url}).status_code
                for _ in range(12)
            ]
        log = _wait_for_log(server, "too many login attempts")
    assert codes[:10] == [409] * 10 and codes[10:] == [429, 429]
    assert "refused: too many login attempts from 127.0.0.1" in log


def test_every_response_carries_the_csp_without_unsafe_inline(box: dict[str, Any]) -> None:
    with web_server(box["env"], box["approvers"], store=box["store"]) as server:
        with httpx.Client(base_url=server.url, timeout=10) as agent:
            for path in ("/login", "/static/app.js", "/enroll", "/nope"):
                headers = agent.get(path).headers
                csp = headers["content-security-policy"]
                assert "script-src 'self'" in csp and "unsafe-inline" not in csp, path
                assert "frame-ancestors 'none'" in csp
                assert headers["x-content-type-options"] == "nosniff"
                assert "server" not in headers
            assert agent.get("/login").headers["cache-control"] == "no-store"


@pytest.mark.parametrize(
    ("options", "needle"),
    [
        (("--listen", "0.0.0.0:8765"), "refusing to listen on 0.0.0.0:8765 without TLS"),
        (
            ("--listen", "0.0.0.0:8765", "--behind-proxy"),
            "refusing to listen on 0.0.0.0:8765 without TLS",
        ),
        (("--public-url", "http://192.168.1.5:8765"), "passkeys need a host name"),
        (("--public-url", "http://inbox.example"), "only on localhost"),
        (("--listen", "nonsense"), "expected HOST:PORT"),
        (("--tls-cert", "c.pem"), "--tls-cert and --tls-key go together"),
    ],
)
def test_the_app_refuses_to_listen_in_the_open_in_one_line(
    box: dict[str, Any], options: tuple[str, ...], needle: str
) -> None:
    r = cli(box["env"], "web", "--approvers", str(box["approvers"]), *options, timeout=30)
    assert r.returncode == 2
    assert needle in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_keys_enroll_web_refuses_a_key_the_approvers_file_does_not_trust(
    box: dict[str, Any], tmp_path: Path
) -> None:
    other, _pub = ssh_key(tmp_path / "keys", "mallory")
    env = {**box["env"], "PATCH_TUI_APPROVER_KEY": str(other)}
    r = cli(env, "keys", "enroll-web", "alice", "--approvers", str(box["approvers"]))
    assert r.returncode == 1
    assert "is not one of alice's keys in the trusted approvers" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and r.stdout == ""
    r = cli(env, "keys", "enroll-web", "bob", "--approvers", str(box["approvers"]))
    assert r.returncode == 1 and "approver named 'bob'" in r.stderr
