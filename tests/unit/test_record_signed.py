"""decisions.record_signed: a decision signed away from this process (the web inbox's passkey;
here an SSH key, the other scheme behind the same seam) is recorded only when it verifies
against the trusted approvers and binds the very call, and then counts like approve/reject."""

from __future__ import annotations

import time
from pathlib import Path

from patch_tui.approvals import decisions
from patch_tui.approvals.approvers import parse_approvers
from patch_tui.approvals.keys import create_key_file
from patch_tui.approvals.signing import sign_statement
from patch_tui.approvals.statements import DecisionStatement
from patch_tui.approvals.store import Action, Store
from patch_tui.approvals.values import now_iso


def _statement(action: Action, signer_fp: str, **change: str) -> DecisionStatement:
    now = time.time()
    fields = {
        "token": action.token,
        "kind": str(action.kind),
        "tool": action.tool,
        "tool_path": action.tool_path,
        "tool_version": action.version,
        "source_sha256": action.source_sha256,
        "args_sha256": action.args_sha256,
        "expires_at": now_iso(now + 300),
        "upstream_token": action.upstream_token,
        "decision": "approve",
        "note": None,
        "approver": "alice",
        "key": signer_fp,
        "at": now_iso(now),
    }
    fields.update(change)
    return DecisionStatement(**fields)  # type: ignore[arg-type]


def _setup(tmp_path: Path):  # type: ignore[no-untyped-def]
    alice = create_key_file(tmp_path / "alice", "alice@test")
    mallory = create_key_file(tmp_path / "mallory", "mallory@test")
    trusted = parse_approvers(
        {"approver": [{"name": "alice", "key": alice.public_line, "tools": ["*"]}]}
    )
    store = Store(tmp_path / "s.sqlite3", actor="web")
    action = store.create_pending("human_confirm", "mark", "1.0.0", "0" * 64, {"t": 1}, "held")
    return store, action, alice, mallory, trusted


def test_a_good_signature_binding_the_call_approves_it(tmp_path: Path) -> None:
    store, action, alice, _mallory, trusted = _setup(tmp_path)
    envelope = sign_statement(_statement(action, alice.fingerprint).canonical(), alice)
    decided = decisions.record_signed(store, envelope, approvers=trusted)
    assert decided.ok and decided.action is not None and decided.action.status == "approved"
    assert [s.approver for s in store.decisions(action.token)] == ["alice"]
    store.close()


def test_refused_and_nothing_written_when_it_does_not_hold(tmp_path: Path) -> None:
    store, action, alice, mallory, trusted = _setup(tmp_path)
    cases = {
        # signed for other args: not this call as it stands
        "args_changed": sign_statement(
            _statement(action, alice.fingerprint, args_sha256="1" * 64).canonical(), alice
        ),
        # a key the trusted approvers do not list for alice
        "tampered": sign_statement(_statement(action, mallory.fingerprint).canonical(), mallory),
    }
    for code, envelope in cases.items():
        decided = decisions.record_signed(store, envelope, approvers=trusted)
        assert not decided.ok and decided.code == code, (code, decided)
    # a statement altered after signing
    good = sign_statement(_statement(action, alice.fingerprint).canonical(), alice)
    altered = _statement(action, alice.fingerprint, note="changed").canonical().decode()
    forged = type(good)(good.scheme, altered, good.signature, good.signer)
    decided = decisions.record_signed(store, forged, approvers=trusted)
    assert not decided.ok and decided.code == "tampered"
    assert store.decisions(action.token) == []
    current = store.get(action.token)
    assert current is not None and current.status == "pending"
    store.close()
