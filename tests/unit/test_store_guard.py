"""The store guards its decisions (issue 11, items 4 and 5): an approval counts only with its sealed
decision event, and the store refuses files and folders that other users own or may write.

The attacker here writes arbitrary SQL into the store file (what a tool could do if it reached the
file: the sandbox is meant to stop that; this is the layer that holds without it)."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
from pathlib import Path

import pytest

from patch_tui.approvals.store import (
    Store,
    StoreUnsafe,
    args_sha256,
    canonical_json,
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


# -- an approval needs its decision --------------------------------------------------------------


def test_status_set_to_approved_without_event_is_refused(store: Store) -> None:
    action = _hold(store)
    _sql(
        store,
        "UPDATE actions SET status = 'approved', decided_by = 'alice@tui', "
        "decided_at = created_at WHERE token = ?",
        action.token,
    )
    seen = store.get(action.token)
    assert seen.status == "approved" and "no one's approval was ever recorded" in seen.tampered
    assert seen.to_json()["tampered"] == seen.tampered
    claim = store.claim(action.token)
    assert not claim.ok and claim.code == "tampered"
    after = store.get(action.token)
    # Visible, final, never run: failed with the refusal as its result, not approved or executing.
    assert after.status == "failed" and after.result["status"] == "tampered"
    assert after.tampered
    assert _events(store, action.token) == ["created", "refused"]
    assert not store.claim(action.token).ok  # and it stays refused


def test_forged_and_copied_decision_events_are_refused(store: Store) -> None:
    genuine = _hold(store, args={"path": "/srv/ok.txt"})
    assert store.approve(genuine.token).ok
    ev = store.events(genuine.token)[-1]
    assert ev.event == "approved" and ev.detail["bound"]["mac"]

    def forge(detail_for) -> str:
        """A new held call, set to approved with an `approved` event of the attacker's making."""
        victim = _hold(store, args={"path": "/etc/passwd"})
        with sqlite3.connect(store.path) as db:
            action_id = db.execute(
                "SELECT id FROM actions WHERE token = ?", (victim.token,)
            ).fetchone()[0]
            db.execute(
                "UPDATE actions SET status = 'approved', decided_by = ?, decided_at = ? "
                "WHERE id = ?",
                (ev.actor, ev.at, action_id),
            )
            db.execute(
                "INSERT INTO events (action_id, at, actor, event, detail) "
                "VALUES (?, ?, ?, 'approved', ?)",
                (action_id, ev.at, ev.actor, canonical_json(detail_for(victim))),
            )
        return victim.token

    def rebound(victim, mac=None) -> dict:
        # The genuine seal's fields re-pointed at the victim: only the HMAC cannot follow.
        bound = dict(ev.detail["bound"])
        bound.update(
            token=victim.token, args_sha256=victim.args_sha256, expires_at=victim.expires_at
        )
        if mac is not None:
            bound["mac"] = mac
        return {"bound": bound}

    forged = [
        forge(lambda victim: ev.detail),  # the genuine event's detail, copied as is
        forge(rebound),  # ... re-pointed at the victim's token, args and expiry
        forge(lambda victim: rebound(victim, mac="0" * 64)),  # a seal made up from scratch
        forge(lambda victim: {"note": "looks fine"}),  # an event with no seal at all
    ]
    for t in forged:
        assert store.get(t).tampered, t
        decision = store.claim(t)
        assert not decision.ok and decision.code == "tampered", decision
        assert store.get(t).status == "failed"
    # The genuine approval still runs.
    assert store.get(genuine.token).tampered is None
    assert store.claim(genuine.token).ok


def test_args_changed_after_approval_is_refused(store: Store) -> None:
    action = _hold(store)
    assert store.approve(action.token).ok
    evil = {"path": "/home/alice/thesis.tex"}
    # Both the args and their stored hash, consistently: only the seal remembers.
    _sql(
        store,
        "UPDATE actions SET args_json = ?, args_sha256 = ? WHERE token = ?",
        json.dumps(evil),
        args_sha256(evil),
        action.token,
    )
    assert "args were changed" in store.get(action.token).tampered
    claim = store.claim(action.token)
    assert not claim.ok and claim.code == "args_changed"
    assert store.get(action.token).status == "failed"
    assert _events(store, action.token) == ["created", "approved", "refused"]


@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("source_sha256", "c" * 64),  # another tool version passed off as the approved one
        ("kind", "tainted_input"),
        ("tool_path", "/t/other.py"),
        ("expires_at", "2999-01-01T00:00:00.000Z"),  # an approval that never expires
    ],
)
def test_sealed_fields_changed_after_approval_are_refused(
    store: Store, column: str, value: str
) -> None:
    action = _hold(store)
    assert store.approve(action.token).ok
    _sql(store, f"UPDATE actions SET {column} = ? WHERE token = ?", value, action.token)
    assert column in store.get(action.token).tampered
    claim = store.claim(action.token)
    assert not claim.ok and claim.code == "tampered"


def test_the_key_matters(tmp_path: Path) -> None:
    # A store copied (or a key swapped) elsewhere: approvals sealed with another key do not pass.
    path = tmp_path / "a" / "c.sqlite3"
    with Store(path) as s:
        action = _hold(s)
        assert s.approve(action.token).ok
    key = Path(f"{path}.key")
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and key in store_files(path)
    key.write_text(os.urandom(32).hex() + "\n")
    with Store(path) as s:
        assert not s.claim(action.token).ok


def test_approvals_from_before_seals(tmp_path: Path) -> None:
    # A store written by the previous release (same schema, approved events without a seal) opens
    # as is; its history is not flagged, but a still-approved call must be approved again.
    path = tmp_path / "c.sqlite3"
    with Store(path, actor="alice@test") as s:
        old_run, old_live = _hold(s), _hold(s)
    with sqlite3.connect(path) as db:
        for token, status in ((old_run.token, "executed"), (old_live.token, "approved")):
            action_id = db.execute("SELECT id FROM actions WHERE token = ?", (token,)).fetchone()[0]
            db.execute(
                "UPDATE actions SET status = ?, decided_at = created_at, decided_by = 'alice@cli' "
                "WHERE id = ?",
                (status, action_id),
            )
            db.execute(
                "INSERT INTO events (action_id, at, actor, event, detail) "
                "VALUES (?, '2026-01-01T00:00:00.000Z', 'alice@cli', 'approved', '{\"note\":null}')",
                (action_id,),
            )
    with Store(path) as s:
        assert s.get(old_run.token).tampered is None
        assert "no seal" in s.get(old_live.token).tampered
        assert s.claim(old_live.token).code == "tampered"


# -- the store protects itself -------------------------------------------------------------------


def test_new_store_is_private(tmp_path: Path) -> None:
    path = tmp_path / "new" / "deeper" / "c.sqlite3"
    with Store(path) as s:
        s.approve(_hold(s).token)  # the WAL files exist now
        for f in store_files(path):
            if f.exists():
                assert stat.S_IMODE(f.stat().st_mode) == 0o600, f
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


@pytest.mark.parametrize("which", ["", "-wal", "-shm", ".key"])
def test_files_writable_by_others_are_refused(tmp_path: Path, which: str) -> None:
    path = tmp_path / "c.sqlite3"
    with Store(path) as s:
        s.approve(_hold(s).token)
        target = Path(f"{path}{which}")
        assert target.exists()
        target.chmod(0o666)
        with pytest.raises(StoreUnsafe) as err:
            Store(path)
        message = str(err.value)
        assert f"chmod 600 {target}" in message and "\n" not in message
        target.chmod(0o600)
        Store(path).close()  # fixed as the message says: it opens again


def test_key_readable_by_others_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite3"
    Store(path).close()
    Path(f"{path}.key").chmod(0o644)
    with pytest.raises(StoreUnsafe, match=r"readable or writable by other users .*chmod 600"):
        Store(path)


def test_pre_created_0666_store_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite3"
    path.touch()
    path.chmod(0o666)
    with pytest.raises(StoreUnsafe, match=r"writable by other users \(mode 0666\).*chmod 600"):
        Store(path)
    assert path.read_bytes() == b"" and not Path(f"{path}.key").exists()


@pytest.mark.parametrize("which", ["", "-wal", ".key", "folder"])
def test_files_owned_by_another_user_are_refused(tmp_path: Path, which: str) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to give a file away")
    folder = tmp_path / "st"
    path = folder / "c.sqlite3"
    with Store(path) as s:
        s.approve(_hold(s).token)
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
