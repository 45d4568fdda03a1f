"""The web inbox in a real browser (issue 29): chromium with a virtual authenticator standing in
for the person's phone, `patch-tui web` as a subprocess, calls held by the real `serve` and CLI.

Each test is what a person does on the phone: register a passkey from the terminal's link, open
an action, read it, decide with Face ID; and what must never happen: a script in an arg running,
a hidden character hiding, an approval without the passkey.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import anyio
import pytest

from patch_tui.approvals import passkeys
from patch_tui.approvals.statements import Envelope
from patch_tui.approvals.store import Store
from tests.mcpkit import serve_box, serve_session
from tests.runtimekit import cli, hold_mark, mark_box, runs_in
from tests.webkit import (
    Phone,
    browser,
    copy_to_docs,
    enroll_link,
    needs_browser,
    ssh_key,
    web_server,
    write_approvers,
)

pytestmark = [pytest.mark.slow, needs_browser]


@pytest.fixture
def box(tmp_path: Path) -> dict[str, Any]:
    box = mark_box(tmp_path)
    key, pub = ssh_key(tmp_path / "keys", "alice")
    box["key"] = key
    box["approvers"] = tmp_path / "approvers.toml"
    write_approvers(box["approvers"], [("alice", pub)])
    return box


def _envelopes(log: str) -> list[dict[str, Any]]:
    return [json.loads(m) for m in re.findall(r"\(envelope (\{.*\})\)$", log, re.MULTILINE)]


def _approver(name: str, keys: list[passkeys.Passkey]) -> Any:
    """An approver as the trusted approvers list one (name, and its passkeys by credential id)."""
    from types import SimpleNamespace

    tables = {
        p.credential_id: {
            "credential_id": p.credential_id,
            "public_key": p.public_key,
            "rp_id": p.rp_id,
            "origin": p.origin,
        }
        for p in keys
    }
    return SimpleNamespace(name=name, passkey=tables.get)


def _decide(phone: Phone, url: str, token: str, button: str, reason: str | None = None) -> str:
    page = phone.page
    page.goto(f"{url}/actions/{token}")
    if reason is not None:
        page.get_by_label("Reason (the agent reads it)").fill(reason)
    page.get_by_role("button", name=button).click()
    page.wait_for_selector("#action-status:not(:has-text('pending'))")
    return page.inner_text("#action-status")


def test_enroll_then_approve_with_the_passkey_and_the_call_runs_once(
    box: dict[str, Any],
) -> None:
    token = hold_mark(box, "from the phone")
    with web_server(box["env"], box["approvers"], store=box["store"]) as server, browser() as b:
        phone = Phone(b)
        phone.enroll(enroll_link(server, "alice", box["key"]))
        # The passkey lives in the authenticator; the approvers file holds its public key only.
        [credential] = phone.credentials()
        [registered] = passkeys.load_passkeys(box["approvers"])
        assert registered.approver == "alice"
        assert registered.credential_id == credential["credentialId"].rstrip("=").replace(
            "+", "-"
        ).replace("/", "_")
        assert "privateKey" not in box["approvers"].read_text()

        assert _decide(phone, server.url, token, "Approve with passkey") == "approved"
        log = server.log_text()

    r = cli(box["env"], "confirm", token)
    assert r.returncode == 0, r.stderr
    assert runs_in(box["marker"]) == ["from the phone"]
    assert cli(box["env"], "confirm", token).returncode == 1  # once

    # What the passkey signed is the statement of exactly this decision, and nothing else.
    [envelope] = _envelopes(log)
    statement = json.loads(envelope["statement"])
    with Store(box["store"]) as store:
        action = store.get(token)
    assert action is not None
    assert statement["token"] == token and statement["decision"] == "approve"
    assert statement["args_sha256"] == action.args_sha256
    assert statement["source_sha256"] == action.source_sha256
    assert passkeys.verify_envelope(envelope, [registered]) == registered
    # The same check through the decisions service's seam: (envelope, approver, key).
    approver = _approver("alice", [registered])
    sealed = Envelope.from_text(json.dumps(envelope))
    assert passkeys.verify_for_approver(sealed, approver, registered.credential_id) is None
    assert "is not one of alice's passkeys" in str(
        passkeys.verify_for_approver(sealed, approver, "another-credential")
    )
    forged = {**statement, "args_sha256": "0" * 64}
    with pytest.raises(passkeys.PasskeyError):
        passkeys.verify_envelope(
            {**envelope, "statement": json.dumps(forged, sort_keys=True, separators=(",", ":"))},
            [registered],
        )


def test_a_call_held_by_serve_is_approved_on_the_phone_and_runs_for_the_agent(
    tmp_path: Path,
) -> None:
    sbox = serve_box(tmp_path)
    key, pub = ssh_key(tmp_path / "keys", "alice")
    approvers = tmp_path / "approvers.toml"
    write_approvers(approvers, [("alice", pub)])

    async def agent() -> None:
        async with serve_session(sbox) as client:
            held = json.loads(
                (await client.call_tool("mark", {"marker": str(sbox["marker"]), "text": "served"}))
                .content[0]
                .text
            )
            assert held["status"] == "confirmation_required"
            token = held["confirmation_token"]
            await anyio.to_thread.run_sync(phone_approves, token)
            done = await client.call_tool("patch_confirm_action", {"confirmation_token": token})
            answer = json.loads(done.content[0].text)
            assert answer == {"written": "served"}, answer
            again = await client.call_tool("patch_confirm_action", {"confirmation_token": token})
            assert json.loads(again.content[0].text)["status"] == "already_used"

    def phone_approves(token: str) -> None:
        with web_server(sbox["env"], approvers, store=sbox["store"]) as server, browser() as b:
            phone = Phone(b)
            phone.enroll(enroll_link(server, "alice", key))
            # The held call is in the list the phone opens, and its page shows every arg.
            phone.page.goto(server.url + "/")
            phone.page.get_by_role("link", name=re.compile("mark")).first.click()
            assert "served" in phone.page.inner_text(".arg-value >> nth=1")
            phone.page.get_by_role("button", name="Approve with passkey").click()
            phone.page.wait_for_selector("#action-status:has-text('approved')")

    anyio.run(agent)
    assert runs_in(sbox["marker"]) == ["served"]


def test_reject_with_a_reason_the_agent_reads(box: dict[str, Any]) -> None:
    token = hold_mark(box, "delete everything")
    with web_server(box["env"], box["approvers"], store=box["store"]) as server, browser() as b:
        phone = Phone(b)
        phone.enroll(enroll_link(server, "alice", box["key"]))
        # No reason, no rejection: the field is required, the server says so too.
        phone.page.goto(f"{server.url}/actions/{token}")
        phone.page.get_by_role("button", name="Reject with passkey").click()
        assert phone.page.inner_text("#action-status") == "pending"
        assert _decide(phone, server.url, token, "Reject with passkey", "not today") == "rejected"
    r = cli(box["env"], "confirm", token)
    assert r.returncode == 1
    answer = json.loads(r.stdout)
    assert answer["status"] == "rejected" and "not today" in json.dumps(answer)
    assert runs_in(box["marker"]) == []


def test_edit_then_approve_runs_the_edited_args(box: dict[str, Any]) -> None:
    token = hold_mark(box, "rm -rf /")
    with web_server(box["env"], box["approvers"], store=box["store"]) as server, browser() as b:
        phone = Phone(b)
        phone.enroll(enroll_link(server, "alice", box["key"]))
        page = phone.page
        page.goto(f"{server.url}/actions/{token}")
        page.get_by_text("Edit the arguments, then approve").click()
        page.get_by_label(re.compile(r"^text \(string")).fill("rm -rf ./build")
        page.get_by_role("button", name="Approve edited arguments with passkey").click()
        page.wait_for_selector("#action-status:has-text('approved')")
        # The page now shows what the agent proposed beside what runs.
        assert "rm -rf /" in page.inner_text("article")
    r = cli(box["env"], "confirm", token)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["args_changed"]["approved"]["text"] == "rm -rf ./build"
    assert runs_in(box["marker"]) == ["rm -rf ./build"]  # never the proposed args


HOSTILE = (
    "\x1b]52;c;ZWNobyBwd25lZA==\x07<script>window.pwned=1</script>"
    '<img src=x onerror="window.pwned=2">\u202egnp.exe pаypal.com'
)


def test_hostile_args_are_inert_and_flagged_at_phone_and_desk_widths(
    box: dict[str, Any],
) -> None:
    token = hold_mark(box, HOSTILE)
    with web_server(box["env"], box["approvers"], store=box["store"]) as server, browser() as b:
        phone = Phone(b)
        phone.enroll(enroll_link(server, "alice", box["key"]))
        dialogs: list[str] = []
        phone.page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        phone.page.goto(f"{server.url}/actions/{token}")
        page = phone.page
        text = page.inner_text(".arg.flagged .arg-value")
        # The markup is text, never markup; nothing ran.
        assert "<script>window.pwned=1</script>" in text
        assert page.evaluate("window.pwned") is None and dialogs == []
        assert page.locator("article script, article img").count() == 0
        # Every control and bidi character is a visible token, never itself.
        assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
        # (JSON writes ESC and BEL as its own escapes; bidi controls as tokens.)
        assert "\\u001b]52" in text and "\\u0007" in text and "⟦U+202E⟧" in text
        flags = page.inner_text(".arg.flagged .flags")
        assert "hidden characters shown as ⟦U+…⟧" in flags and "U+202E" in flags
        assert "U+001B" in flags and "U+0007" in flags
        assert "mixes Latin and Cyrillic letters" in flags
        assert page.locator(".banner").is_visible()
        # 375 px wide: nothing scrolls sideways, the decision buttons are reachable.
        assert page.evaluate("document.documentElement.scrollWidth") <= 375
        shot = phone.screenshot("action-375x667.png")
        copy_to_docs(shot, "web-action-phone.png")

        desk = Phone(b, width=1280, height=800)
        desk.enroll(enroll_link(server, "alice", box["key"]))
        desk.page.goto(f"{server.url}/actions/{token}")
        assert desk.page.evaluate("document.documentElement.scrollWidth") <= 1280
        desk.screenshot("action-1280x800.png")
        desk.page.goto(server.url + "/")
        desk.screenshot("list-1280x800.png")
        # Keyboard: the first Tab reaches the skip link, and it leads to the content.
        desk.page.keyboard.press("Tab")
        assert desk.page.evaluate("document.activeElement.textContent") == "Skip to content"
        desk.page.keyboard.press("Enter")
        assert desk.page.evaluate("document.activeElement.id") == "main"
        # Screen readers: every field of the action page has a label.
        phone.page.goto(f"{server.url}/actions/{token}")
        unlabelled = phone.page.locator("textarea, input").evaluate_all(
            "els => els.filter(e => e.labels.length === 0).map(e => e.name)"
        )
        assert unlabelled == []


def test_a_call_arrives_on_an_open_list_without_reloading(box: dict[str, Any]) -> None:
    with web_server(box["env"], box["approvers"], store=box["store"]) as server, browser() as b:
        phone = Phone(b)
        phone.enroll(enroll_link(server, "alice", box["key"]))
        page = phone.page
        page.goto(server.url + "/")
        assert page.locator(".action-row").count() == 0
        page.evaluate("window.marker = 'same page'")
        hold_mark(box, "live")
        page.wait_for_selector(".action-row", timeout=10_000)
        assert page.evaluate("window.marker") == "same page"  # no reload
        assert "live" in page.inner_text(".action-row")
        assert "new action" in page.inner_text("#status")
        phone.screenshot("list-375x667.png")


def test_a_stolen_session_cannot_decide_without_the_passkey(box: dict[str, Any]) -> None:
    """The session cookie is HttpOnly and SameSite=Strict; even a copy of it (an agent that got
    one) approves nothing: each decision needs a fresh assertion over its own statement, and a
    replayed assertion from another decision does not verify."""
    import httpx

    first = hold_mark(box, "approved honestly")
    second = hold_mark(box, "the agent's own")
    with web_server(box["env"], box["approvers"], store=box["store"]) as server, browser() as b:
        phone = Phone(b)
        phone.enroll(enroll_link(server, "alice", box["key"]))
        [cookie] = phone.context.cookies()
        assert cookie["httpOnly"] and cookie["secure"] and cookie["sameSite"] == "Strict"
        assert phone.page.evaluate("document.cookie") == ""  # no script reads it
        assert _decide(phone, server.url, first, "Approve with passkey") == "approved"
        [envelope] = _envelopes(server.log_text())
        replay = {
            "id": envelope["signature"]["credential_id"],
            "rawId": envelope["signature"]["credential_id"],
            "type": "public-key",
            "response": {
                "authenticatorData": envelope["signature"]["authenticator_data"],
                "clientDataJSON": envelope["signature"]["client_data_json"],
                "signature": envelope["signature"]["signature"],
            },
        }
        csrf = phone.page.get_attribute('meta[name="csrf-token"]', "content")
        headers = {"Origin": server.url, "X-CSRF-Token": csrf or ""}
        with httpx.Client(base_url=server.url, timeout=10) as agent:
            agent.cookies.set(cookie["name"], cookie["value"])
            with Store(box["store"]) as store:
                action = store.get(second)
            assert action is not None
            start = agent.post(
                f"/actions/{second}/prepare",
                json={"decision": "approve", "shown_args_sha256": action.args_sha256},
                headers=headers,
            )
            assert start.status_code == 200
            answer = agent.post(
                f"/actions/{second}/decide",
                json={"ceremony": start.json()["ceremony"], "credential": replay},
                headers=headers,
            )
            assert answer.status_code == 403
            assert "does not hold" in answer.json()["why"]
            # Without the CSRF token, not even a ceremony starts.
            bare = agent.post(
                f"/actions/{second}/prepare",
                json={"decision": "approve", "shown_args_sha256": action.args_sha256},
                headers={"Origin": server.url},
            )
            assert bare.status_code == 403
        log = server.log_text()
    with Store(box["store"]) as store:
        still = store.get(second)
    assert still is not None and still.status == "pending"
    assert f"refused: a decision on {second[:8]}... by alice" in log


def test_an_enrollment_link_works_once(box: dict[str, Any]) -> None:
    with web_server(box["env"], box["approvers"], store=box["store"]) as server, browser() as b:
        link = enroll_link(server, "alice", box["key"])
        Phone(b).enroll(link)
        thief = Phone(b)
        thief.page.goto(link)
        thief.page.get_by_role("button", name="Register a passkey").click()
        thief.page.wait_for_selector("#status:has-text('already used')")
        assert thief.credentials() == []
    # Nor after the web app restarts within the link's ten minutes (same address: the link
    # names its origin).
    port = int(server.url.rsplit(":", 1)[1])
    with web_server(box["env"], box["approvers"], store=box["store"], port=port), browser() as b:
        thief = Phone(b)
        thief.page.goto(link)
        thief.page.get_by_role("button", name="Register a passkey").click()
        thief.page.wait_for_selector("#status:has-text('already used')")
        assert thief.credentials() == []
    assert len(passkeys.load_passkeys(box["approvers"])) == 1


def test_a_quorum_of_a_passkey_approver_and_a_terminal_approver(
    box: dict[str, Any], tmp_path: Path
) -> None:
    """Two people must approve `mark`: bob at his terminal (his SSH key), alice on her phone
    (her passkey). Neither alone runs it; both do, and it runs once."""
    bob_key, bob_pub = ssh_key(tmp_path / "keys", "bob")
    alice_pub = (box["key"].parent / "id_alice.pub").read_text().strip()
    write_approvers(
        box["approvers"],
        [("alice", alice_pub), ("bob", bob_pub)],
        extra='[[rule]]\ntools = ["mark"]\nrequire = 2\n',
    )
    env = {**box["env"], "PATCH_TUI_APPROVERS_FILE": str(box["approvers"])}
    box["env"] = env
    token = hold_mark(box, "two people said yes")
    with Store(box["store"]) as store:
        action = store.get(token)
    assert action is not None
    bob = {**env, "PATCH_TUI_APPROVER_KEY": str(bob_key)}
    r = cli(bob, "inbox", "approve", token, "--yes", "--args-sha256", action.args_sha256)
    assert r.returncode == 0 and "1 of 2: approved by bob" in r.stdout, r.stderr
    assert cli(env, "confirm", token).returncode == 1  # one approval is not enough

    with web_server(env, box["approvers"], store=box["store"]) as server, browser() as b:
        phone = Phone(b)
        phone.enroll(enroll_link(server, "alice", box["key"]))
        phone.page.goto(f"{server.url}/actions/{token}")
        assert "1 of 2: approved by bob" in phone.page.inner_text("#quorum")
        assert _decide(phone, server.url, token, "Approve with passkey") == "approved"
        assert "alice" in phone.page.inner_text("article")

    r = cli(env, "confirm", token)
    assert r.returncode == 0, r.stderr
    assert runs_in(box["marker"]) == ["two people said yes"]


def test_the_web_inbox_over_a_team_store_on_postgresql(box: dict[str, Any], pg_url: str) -> None:
    """The same app over the team inbox's store (issue 28 with 29): a call held into PostgreSQL
    is approved on the phone with a passkey, and the agent's machine runs it once."""
    box["env"]["PATCH_TUI_STORE"] = pg_url
    token = hold_mark(box, "held in postgres")
    with web_server(box["env"], box["approvers"], store=pg_url) as server, browser() as b:
        phone = Phone(b)
        phone.enroll(enroll_link(server, "alice", box["key"]))
        assert _decide(phone, server.url, token, "Approve with passkey") == "approved"
    r = cli(box["env"], "confirm", token)
    assert r.returncode == 0, r.stderr
    assert runs_in(box["marker"]) == ["held in postgres"]
    assert cli(box["env"], "confirm", token).returncode == 1  # once
