"""The store guards its decisions (issues 11 and 23): an approval counts only with a person's
signature over exactly that call, and the store refuses files and folders that other users own or
may write.

The attacker here writes arbitrary SQL into the store file (what a tool could do if it reached the
file: the sandbox is meant to stop that; this is the layer that holds without it)."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
from pathlib import Path

import pytest

from patch_tui.approvals import decisions
from patch_tui.approvals.keys import create_key_file
from patch_tui.approvals.statements import Envelope
from patch_tui.approvals.store import (
    Store,
    StoreUnsafe,
    args_sha256,
    canonical_json,
    parse_iso,
    store_files,
)

SHA = "b" * 64
OTHER_UID = 4242  # we run the tests as root: chown hands files to "another user"


def _hold(store: Store, **kw):
    base = dict(
        kind="human_confirm",
        tool="wipe",
        version="1.0.0",
        source_sha256=SHA,
        args={"path": "/srv/harmless.txt"},
        reason="irreversible",
        tool_path="/t/wipe.py",
    )
    base.update(kw)
    return store.create_pending(**base)


@pytest.fixture
def store(tmp_path: Path):
    with Store(tmp_path / "state" / "c.sqlite3", actor="alice@test") as s:
        yield s


def _sql(store: Store, sql: str, *params) -> None:
    with sqlite3.connect(store.path) as db:
        db.execute(sql, params)


def _events(store: Store, token: str) -> list[str]:
    return [e.event for e in store.events(token)]


# -- an approval needs a person's signature -------------------------------------------------------
# Each attacker below can write any SQL into the store, but holds no approver's private key.


def test_status_set_to_approved_without_a_signature_is_refused(store: Store) -> None:
    action = _hold(store)
    _sql(
        store,
        "UPDATE actions SET status = 'approved', decided_by = 'alice', "
        "decided_at = created_at WHERE token = ?",
        action.token,
    )
    claim = decisions.claim(store, action.token)
    assert not claim.ok and claim.code == "tampered"
    assert "no one's signed approval" in claim.why
    after = store.get(action.token)
    # Visible, final, never run: failed with the refusal as its result, not approved or executing.
    assert after.status == "failed" and after.result["status"] == "tampered"
    assert after.tampered and after.to_json()["tampered"] == after.tampered
    assert _events(store, action.token) == ["created", "refused"]
    assert not decisions.claim(store, action.token).ok  # and it stays refused


def _approve_by_sql(store: Store, token: str, envelope: str, approver: str) -> None:
    """What an attacker with the store file can do: a signature row and the approved status."""
    with sqlite3.connect(store.path) as db:
        action_id, sha = db.execute(
            "SELECT id, args_sha256 FROM actions WHERE token = ?", (token,)
        ).fetchone()
        db.execute(
            "INSERT INTO signatures (action_id, approver, decision, at, note, args_sha256, "
            "envelope) VALUES (?, ?, 'approve', '2026-01-01T00:00:00.000Z', NULL, ?, ?)",
            (action_id, approver, sha, envelope),
        )
        db.execute("UPDATE actions SET status = 'approved' WHERE id = ?", (action_id,))


def test_forged_copied_and_unlisted_signatures_are_refused(store: Store, tmp_path: Path) -> None:
    genuine = _hold(store, args={"path": "/srv/ok.txt"})
    assert decisions.approve(store, genuine.token).ok
    (real,) = store.decisions(genuine.token)
    envelope = json.loads(real.envelope)
    statement = json.loads(envelope["statement"])

    def victim() -> str:
        return _hold(store, args={"path": "/etc/passwd"}).token

    # 1. The genuine signature copied onto another call (a replay): it names the other token.
    replayed = victim()
    _approve_by_sql(store, replayed, real.envelope, real.approver)
    # 2. The statement re-pointed at the victim, the genuine signature kept: it no longer verifies.
    repointed = victim()
    moved = dict(statement, token=repointed, args_sha256=store.get(repointed).args_sha256)
    forged = dict(envelope, statement=canonical_json(moved))
    _approve_by_sql(store, repointed, canonical_json(forged), real.approver)
    # 3. A statement signed with the attacker's own key, in the approver's name.
    mine = victim()
    attacker = create_key_file(tmp_path / "attacker_key", "attacker")
    theirs = dict(statement, token=mine, args_sha256=store.get(mine).args_sha256)
    text = canonical_json(theirs)
    signed = Envelope("sshsig", text, attacker.sign(text.encode()), attacker.public_line)
    _approve_by_sql(store, mine, signed.to_text(), real.approver)
    # 4. The same, under a name of the attacker's choosing (not a trusted approver).
    unlisted = victim()
    named = dict(theirs, token=unlisted, approver="mallory", key=attacker.fingerprint)
    text = canonical_json(named)
    signed = Envelope("sshsig", text, attacker.sign(text.encode()), attacker.public_line)
    _approve_by_sql(store, unlisted, signed.to_text(), "mallory")
    for token in (replayed, repointed, mine, unlisted):
        decision = decisions.claim(store, token)
        assert not decision.ok and decision.code == "tampered", decision
        assert store.get(token).status == "failed"
    # The genuine approval still runs.
    assert decisions.claim(store, genuine.token).ok


def test_args_changed_after_approval_are_refused(store: Store) -> None:
    action = _hold(store)
    assert decisions.approve(store, action.token).ok
    evil = {"path": "/home/alice/thesis.tex"}
    # Both the args and their stored hash, consistently: only the signed statement remembers.
    _sql(
        store,
        "UPDATE actions SET args_json = ?, args_sha256 = ? WHERE token = ?",
        json.dumps(evil),
        args_sha256(evil),
        action.token,
    )
    claim = decisions.claim(store, action.token)
    assert not claim.ok and claim.code == "args_changed"
    assert store.get(action.token).status == "failed"
    assert _events(store, action.token) == ["created", "approved", "refused"]


@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("source_sha256", "c" * 64),  # another tool version passed off as the approved one
        ("kind", "tainted_input"),
        ("tool_path", "/t/other.py"),
        ("tool", "other_tool"),
        ("upstream_token", "someone-elses-upstream-token"),
    ],
)
def test_signed_fields_changed_after_approval_are_refused(
    store: Store, column: str, value: str
) -> None:
    action = _hold(store)
    assert decisions.approve(store, action.token).ok
    _sql(store, f"UPDATE actions SET {column} = ? WHERE token = ?", value, action.token)
    claim = decisions.claim(store, action.token)
    assert not claim.ok and claim.code == "tampered" and column in claim.why


def test_a_longer_expiry_written_into_the_row_does_not_extend_the_approval(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    action = _hold(store)
    assert decisions.approve(store, action.token).ok
    signed_until = store.get(action.token).expires_at
    _sql(
        store,
        "UPDATE actions SET expires_at = '2999-01-01T00:00:00.000Z' WHERE token = ?",
        action.token,
    )
    later = parse_iso(signed_until) + 1
    monkeypatch.setattr(store, "_now", lambda: later)
    claim = decisions.claim(store, action.token)
    assert not claim.ok and claim.code == "tampered" and "expired" in claim.why


# -- the store protects itself -------------------------------------------------------------------


def test_new_store_is_private(tmp_path: Path) -> None:
    path = tmp_path / "new" / "deeper" / "c.sqlite3"
    with Store(path) as s:
        decisions.approve(s, _hold(s).token)  # the WAL files exist now
        for f in store_files(path):
            if f.exists():
                assert stat.S_IMODE(f.stat().st_mode) == 0o600, f
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


@pytest.mark.parametrize("which", ["", "-wal", "-shm"])
def test_files_writable_by_others_are_refused(tmp_path: Path, which: str) -> None:
    path = tmp_path / "c.sqlite3"
    with Store(path) as s:
        decisions.approve(s, _hold(s).token)
        target = Path(f"{path}{which}")
        assert target.exists()
        target.chmod(0o666)
        with pytest.raises(StoreUnsafe) as err:
            Store(path)
        message = str(err.value)
        assert f"chmod 600 {target}" in message and "\n" not in message
        target.chmod(0o600)
        Store(path).close()  # fixed as the message says: it opens again


def test_pre_created_0666_store_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite3"
    path.touch()
    path.chmod(0o666)
    with pytest.raises(StoreUnsafe, match=r"writable by other users \(mode 0666\).*chmod 600"):
        Store(path)
    assert path.read_bytes() == b"" and not Path(f"{path}.key").exists()


@pytest.mark.parametrize("which", ["", "-wal", "folder"])
def test_files_owned_by_another_user_are_refused(tmp_path: Path, which: str) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to give a file away")
    folder = tmp_path / "st"
    path = folder / "c.sqlite3"
    with Store(path) as s:
        decisions.approve(s, _hold(s).token)
        target = folder if which == "folder" else Path(f"{path}{which}")
        os.chown(target, OTHER_UID, -1)
        with pytest.raises(StoreUnsafe, match=f"another user \\(uid {OTHER_UID}\\)"):
            Store(path)


def test_shared_folders_are_refused(tmp_path: Path) -> None:
    loose = tmp_path / "loose"
    loose.mkdir()
    loose.chmod(0o777)
    with pytest.raises(StoreUnsafe, match=f"chmod go-w {loose}"):
        Store(loose / "c.sqlite3")
    assert list(loose.iterdir()) == []  # nothing created there
    # A sticky shared folder (like /tmp): others cannot rename our files but could plant the
    # store's -wal or key before we create them, so the store needs a folder of its own.
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    with pytest.raises(StoreUnsafe, match=f"mkdir -m 700 {shared}/patch-tui"):
        Store(shared / "c.sqlite3")
    Store(shared / "patch-tui" / "c.sqlite3").close()  # the suggested fix works
    # A folder above, writable by others and not sticky: the store's folder could be swapped.
    above = tmp_path / "above"
    (above / "mine").mkdir(parents=True)
    (above / "mine").chmod(0o700)
    above.chmod(0o777)
    with pytest.raises(StoreUnsafe, match=f"{above}: a folder above"):
        Store(above / "mine" / "c.sqlite3")


def test_planted_symlink_companion_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite3"
    Store(path).close()
    Path(f"{path}-wal").unlink(missing_ok=True)
    Path(f"{path}-wal").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(StoreUnsafe, match="symbolic link"):
        Store(path)


def test_the_sandbox_hides_every_store_file(tmp_path: Path) -> None:
    from patch_tui.runtime import sandbox

    path = tmp_path / "c.sqlite3"
    assert store_files(path) == [Path(f"{path}{s}") for s in sandbox.STORE_SUFFIXES]
