"""The web inbox's parts without a browser: where it may listen, sessions and ceremonies,
passkeys landing under the right approver in approvers.toml, and untrusted text for a page."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from patch_tui.approvals.passkeys import (
    Passkey,
    PasskeyError,
    append_passkey,
    load_passkeys,
    signature_fields,
)
from patch_tui.web.config import WebConfig, WebConfigError, check, parse_listen
from patch_tui.web.display import args_view, shown
from patch_tui.web.sessions import Ceremony, RateLimiter, Sessions


def _config(**kw: object) -> WebConfig:
    base: dict[str, object] = {
        "host": "127.0.0.1",
        "port": 8765,
        "public_url": "http://localhost:8765",
        "store": Path("s"),
        "approvers_file": Path("a"),
    }
    base.update(kw)
    return WebConfig(**base)  # type: ignore[arg-type]


def test_loopback_needs_nothing_and_the_rp_id_is_the_host_name() -> None:
    config = _config()
    check(config)
    assert (config.rp_id, config.origin) == ("localhost", "http://localhost:8765")
    check(_config(host="::1"))


@pytest.mark.parametrize(
    ("kw", "needle"),
    [
        ({"host": "0.0.0.0"}, "without TLS"),
        ({"host": "192.168.1.4", "behind_proxy": True}, "without TLS"),  # http public URL
        ({"public_url": "https://10.0.0.1"}, "not an IP address"),
        ({"public_url": "http://desk.lan:8765"}, "only on localhost"),
        ({"public_url": "https://inbox.example/sub"}, "root of its host"),
        ({"tls_cert": Path("c")}, "go together"),
    ],
)
def test_refused_configurations(kw: dict[str, object], needle: str) -> None:
    with pytest.raises(WebConfigError, match=needle):
        check(_config(**kw))


def test_beyond_loopback_with_tls_or_a_declared_proxy() -> None:
    check(_config(host="0.0.0.0", tls_cert=Path("c"), tls_key=Path("k")))
    proxied = _config(host="0.0.0.0", behind_proxy=True, public_url="https://inbox.example")
    check(proxied)
    assert proxied.secure_origin and proxied.rp_id == "inbox.example"


def test_parse_listen() -> None:
    assert parse_listen("127.0.0.1:9000") == ("127.0.0.1", 9000)
    assert parse_listen("[::1]:8765") == ("::1", 8765)
    assert parse_listen(":8000") == ("127.0.0.1", 8000)
    with pytest.raises(WebConfigError):
        parse_listen("8765")


def test_a_session_ends_when_idle_and_a_ceremony_answers_once() -> None:
    now = [0.0]
    sessions = Sessions(idle_timeout=600, clock=lambda: now[0])
    session = sessions.open("alice", "cred")
    now[0] = 599
    assert sessions.get(session.sid) is session  # used: the idle clock starts again
    cid = sessions.start(session, Ceremony("decide", b"c"))
    assert sessions.finish(session, cid, "login") is None  # the wrong kind takes nothing...
    cid = sessions.start(session, Ceremony("decide", b"c"))
    assert sessions.finish(session, cid, "decide") is not None
    assert sessions.finish(session, cid, "decide") is None  # ...and an answer counts once
    now[0] = 599 + 601
    assert sessions.get(session.sid) is None
    assert sessions.get("made-up") is None


def test_a_ceremony_left_too_long_is_gone() -> None:
    now = [0.0]
    sessions = Sessions(idle_timeout=600, clock=lambda: now[0])
    cid = sessions.start(None, Ceremony("login", b"c"))
    now[0] = 181
    assert sessions.finish(None, cid, "login") is None


def test_rate_limiter_window() -> None:
    now = [0.0]
    limiter = RateLimiter(2, 60, clock=lambda: now[0])
    assert limiter.allow("a") and limiter.allow("a") and not limiter.allow("a")
    assert limiter.allow("b")
    now[0] = 61
    assert limiter.allow("a")


def _key_line() -> str:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    public = Ed25519PrivateKey.generate().public_key()
    return public.public_bytes(Encoding.OpenSSH, PublicFormat.OpenSSH).decode("ascii")


APPROVERS = f"""# the team
[[approver]]
name = "alice"
key = "{_key_line()} alice"

[[approver]]
name = "bob"   # bob's laptop
key = "{_key_line()} bob"
tools = ["*"]

[[approver.passkey]]
credential_id = "old"
public_key = "x"
rp_id = "localhost"
origin = "http://localhost:8765"

[[rule]]
tools = ["delete_*"]
require = 2
"""


def _passkey(approver: str, cid: str) -> Passkey:
    return Passkey(approver, cid, "pk", "localhost", "http://localhost:8765")


def test_a_passkey_lands_under_its_approver_and_nothing_else_moves(tmp_path: Path) -> None:
    path = tmp_path / "approvers.toml"
    path.write_text(APPROVERS)
    path.chmod(0o600)
    append_passkey(path, _passkey("alice", "a1"))
    append_passkey(path, _passkey("bob", "b2"))
    data = tomllib.loads(path.read_text())
    alice, bob = data["approver"]
    assert [p["credential_id"] for p in alice["passkey"]] == ["a1"]
    assert [p["credential_id"] for p in bob["passkey"]] == ["old", "b2"]
    assert data["rule"] == [{"tools": ["delete_*"], "require": 2}]
    text = path.read_text()
    assert "# the team" in text and "# bob's laptop" in text  # comments kept
    assert path.stat().st_mode & 0o777 == 0o600
    assert {p.credential_id for p in load_passkeys(path)} == {"a1", "old", "b2"}


def test_no_such_approver_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "approvers.toml"
    path.write_text(APPROVERS)
    with pytest.raises(PasskeyError, match="no \\[\\[approver\\]\\] named 'carol'"):
        append_passkey(path, _passkey("carol", "c"))
    assert path.read_text() == APPROVERS


def test_a_browser_answer_must_carry_every_field_as_base64url() -> None:
    good = {
        "rawId": "YWJj",
        "response": {"authenticatorData": "YQ", "clientDataJSON": "Yg", "signature": "Yw"},
    }
    assert signature_fields(good)["credential_id"] == "YWJj"
    for broken in (
        {"rawId": "YWJj"},
        {**good, "response": {**good["response"], "signature": ""}},
        {**good, "response": {**good["response"], "signature": "not base64!"}},
    ):
        with pytest.raises(PasskeyError):
            signature_fields(broken)


def test_untrusted_text_is_cut_into_text_and_tokens_with_flags() -> None:
    result = shown("pay \u202epаypal\u200b")
    assert result.text == "pay ⟦U+202E⟧pаypal⟦U+200B⟧"
    assert [s.text for s in result.segments if s.token] == ["⟦U+202E⟧", "⟦U+200B⟧"]
    assert any("hidden characters" in f for f in result.flags)
    assert any("mixes Latin and Cyrillic" in f for f in result.flags)
    assert shown("plain").flags == ()


def test_every_arg_in_full_sorted_with_its_type_and_its_own_flags() -> None:
    long = "x" * 5000
    view = args_view({"z": long, "a": {"k": "\x1b[2J"}, "n": 3})
    assert [a.name.text for a in view] == ["a", "n", "z"]
    assert view[2].value.text == f'"{long}"' and view[2].kind == "string, 5000 characters"
    assert view[0].value.flagged and "\x1b" not in view[0].value.text
    assert not view[1].value.flagged and view[1].kind == "integer"


def test_without_the_web_extra_one_line_names_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import importlib.util

    from patch_tui.cli import main

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name in ("webauthn", "uvicorn") else real(name, *a),
    )
    assert main(["web"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == (
        "patch-tui: `patch-tui web` needs the web extra (uvicorn, webauthn missing): "
        "pip install 'patch-tui[web]'"
    )


def test_listening_does_not_keep_a_session_alive() -> None:
    now = [0.0]
    sessions = Sessions(idle_timeout=600, clock=lambda: now[0])
    session = sessions.open("alice", "cred")
    now[0] = 500
    assert sessions.alive(session.sid)
    now[0] = 601
    assert not sessions.alive(session.sid)  # alive() never restarted the idle clock
