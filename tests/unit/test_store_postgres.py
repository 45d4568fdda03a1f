"""The PostgreSQL store against a real server (tests/pgkit.py): URLs, migrations, roles,
credentials that never show, and the faults a shared database brings, with nothing lost."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from storekit import pending

from patch_tui.approvals.open_store import open_store
from patch_tui.approvals.records import Signature
from patch_tui.approvals.values import StoreBusy, StoreUnavailable, now_iso
from patch_tui.settings.store_location import DatabaseURL, redact_url

pytestmark = pytest.mark.slow


def _sig(approver: str) -> Signature:
    return Signature(approver, "approve", now_iso(), f'{{"by":"{approver}","n":{time.time()}}}')


def _one(*_: Any) -> str:
    return "2999-01-01T00:00:00.000Z"


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    import os

    full = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "patch_tui", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=full,
        stdin=subprocess.DEVNULL,  # a serve that did start ends at once
    )


# -- locations --------------------------------------------------------------------------------


def test_a_unix_socket_url_opens_the_same_store(pg_server: Any, pg_url: str) -> None:
    server, _ = pg_server
    name = pg_url.rsplit("/", 1)[1]
    with open_store(DatabaseURL(pg_url), actor="a@x") as tcp:
        made = pending(tcp)
    with open_store(DatabaseURL(server.socket_url(name)), actor="b@y") as local:
        assert local.get(made.token) == made


def test_a_url_prints_without_its_password() -> None:
    url = "postgresql://alice:s3cr3t-pw@db.example:5432/inbox?sslmode=verify-full&password=x2"
    shown = redact_url(url)
    assert "s3cr3t" not in shown and "x2" not in shown
    assert shown.startswith("postgresql://alice:***@db.example:5432/inbox")
    assert "sslmode=verify-full" in shown  # TLS settings are no secret, and pass through
    location = DatabaseURL(url)
    assert "s3cr3t" not in str(location) and "s3cr3t" not in repr(location)
    assert "s3cr3t" not in f"{[location]}"


# -- migrations and roles ---------------------------------------------------------------------


def test_store_migrate_brings_an_empty_database_up_to_date_once(pg_url: str) -> None:
    first = _cli("store", "migrate", "--store", pg_url)
    assert first.returncode == 0, first.stderr
    from patch_tui.approvals.postgres.migrations import SCHEMA_VERSION

    assert f"applied {SCHEMA_VERSION} migration" in first.stdout
    assert f"the schema is at version {SCHEMA_VERSION}" in first.stdout
    again = _cli("store", "migrate", "--store", pg_url)
    assert again.returncode == 0 and "up to date" in again.stdout


def test_a_newer_schema_is_refused_untouched(pg_server: Any, pg_url: str) -> None:
    server, _ = pg_server
    with open_store(DatabaseURL(pg_url)):
        pass
    db = pg_url.rsplit("/", 1)[1]
    server.sql("INSERT INTO schema_version (version) VALUES (99)", db)
    with pytest.raises(StoreUnavailable, match="newer patch-tui"):
        open_store(DatabaseURL(pg_url))


def _make_roles(server: Any, db: str) -> tuple[str, str]:
    from patch_tui.approvals.postgres.roles import role_sql

    for role in ("patch_tui_agent", "patch_tui_approver"):
        server.sql(
            f"DO $$ BEGIN CREATE ROLE {role} LOGIN; EXCEPTION WHEN duplicate_object THEN "
            "NULL; END $$"
        )
    server.sql("REVOKE CREATE ON SCHEMA public FROM PUBLIC", db)
    server.sql(role_sql(), db)
    base = server.url(db)
    return (
        base.replace("postgres@", "patch_tui_agent@"),
        base.replace("postgres@", "patch_tui_approver@"),
    )


def test_least_privilege_roles_do_their_part_and_no_more(pg_server: Any, pg_url: str) -> None:
    server, _ = pg_server
    db = pg_url.rsplit("/", 1)[1]
    # A role that may not create tables is told what to run, and changes nothing.
    server.sql(
        "DO $$ BEGIN CREATE ROLE patch_tui_agent LOGIN; EXCEPTION WHEN duplicate_object "
        "THEN NULL; END $$"
    )
    server.sql("REVOKE CREATE ON SCHEMA public FROM PUBLIC", db)
    with pytest.raises(StoreUnavailable, match="store migrate"):
        open_store(DatabaseURL(pg_url.replace("postgres@", "patch_tui_agent@")))
    assert _cli("store", "migrate", "--store", pg_url).returncode == 0  # by the owner
    agent_url, approver_url = _make_roles(server, db)
    with open_store(DatabaseURL(agent_url), actor="agent@build") as agent:
        held = pending(agent)
        # The agent's machine cannot even store an approval.
        with pytest.raises(StoreUnavailable, match="may not"):
            agent.add_decision(held.token, _sig("mallory"), complete=_one)
    with open_store(DatabaseURL(approver_url), actor="bob@laptop") as approver:
        assert approver.add_decision(held.token, _sig("bob"), complete=_one).ok
        with pytest.raises(StoreUnavailable, match="may not"):
            pending(approver)  # an approver cannot make up a held call
    with open_store(DatabaseURL(agent_url), actor="agent@build") as agent:
        claimed = agent.claim(held.token, lambda *_: None)
        assert claimed.ok
        assert agent.finish(held.token, True, {"ok": 1}).status == "executed"


# -- credentials ------------------------------------------------------------------------------


def _password_server(server: Any) -> str:
    """The server asks for a password over TCP (the admin, postgres, stays trusted)."""
    hba = server.data / "pg_hba.conf"
    hba.write_text(
        "local all all trust\n"
        "host all postgres 127.0.0.1/32 trust\n"
        "host all all 127.0.0.1/32 scram-sha-256\n"
    )
    server.sql("SELECT pg_reload_conf()")
    server.sql("CREATE ROLE alice LOGIN PASSWORD 'right-horse-battery'")
    return server.create_database().rsplit("/", 1)[1]


def test_credentials_never_show_in_errors(own_pg: Any) -> None:
    db = _password_server(own_pg)
    good = f"postgresql://alice:right-horse-battery@127.0.0.1:{own_pg.port}/{db}"
    own_pg.sql(f"GRANT ALL ON SCHEMA public TO alice; ALTER DATABASE {db} OWNER TO alice", db)
    with open_store(DatabaseURL(good), actor="alice@x") as store:
        pending(store)
    wrong = good.replace("right-horse-battery", "wrong-zebra-staple")
    with pytest.raises(StoreUnavailable) as caught:
        open_store(DatabaseURL(wrong))
    assert "wrong-zebra-staple" not in str(caught.value)
    assert "password authentication failed" in str(caught.value)
    # The CLI: one line, exit 2, no password, no traceback; from --store and from the env.
    for done in (
        _cli("inbox", "list", "--store", wrong),
        _cli("inbox", "list", env={"PATCH_TUI_STORE": wrong}),
    ):
        assert done.returncode == 2, done.stderr
        assert "wrong-zebra-staple" not in done.stderr + done.stdout
        assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    # A URL libpq cannot even parse is named without its secret too.
    broken = f"postgresql://alice:wrong-zebra-staple@127.0.0.1:{own_pg.port}/{db}?bogus=1"
    done = _cli("inbox", "list", "--store", broken)
    assert done.returncode == 2 and "wrong-zebra-staple" not in done.stderr


def test_sslmode_passes_through_to_the_driver(pg_url: str) -> None:
    # The test server speaks no TLS: `require` must reach libpq and be refused by it.
    with pytest.raises(StoreUnavailable, match="SSL"):
        open_store(DatabaseURL(pg_url + "?sslmode=require"))
    with open_store(DatabaseURL(pg_url + "?sslmode=disable")) as store:
        pending(store)


def test_the_database_down_at_start_is_one_line_and_exit_2(tmp_path: Path) -> None:
    # No server listens on this socket folder (a stopped server's TCP port could be taken by
    # another test's server meanwhile).
    (tmp_path / "no-server").mkdir()
    url = f"postgresql://postgres@/postgres?host={tmp_path / 'no-server'}"
    (tmp_path / "box").mkdir()
    for args in (("inbox", "list"), ("serve",), ("guard", "--", "true")):
        done = _cli(args[0], "--store", url, "--toolbox", str(tmp_path / "box"), *args[1:])
        assert done.returncode == 2, (args, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert any("cannot reach the PostgreSQL store" in line for line in lines), done.stderr
        assert "Traceback" not in done.stderr


# -- faults -----------------------------------------------------------------------------------


def test_every_connection_has_the_store_s_time_limits(pg_url: str) -> None:
    """The pool's connections wait their turn at most the busy timeout, cancel a statement
    after 15 s and an idle transaction after 60 s; a URL's own statement_timeout wins."""
    with open_store(DatabaseURL(pg_url), actor="a@x", busy_timeout_ms=4321) as store:
        shown = [
            store._read(f"SHOW {name}")[0][0]
            for name in ("lock_timeout", "statement_timeout", "idle_in_transaction_session_timeout")
        ]
        assert shown == ["4321ms", "15s", "1min"]
    own = DatabaseURL(pg_url + "?options=-c%20statement_timeout%3D300")
    with open_store(own, actor="a@x") as store:
        assert store._read("SHOW statement_timeout")[0][0] == "300ms"


def test_a_statement_timeout_changes_nothing_and_says_so(pg_server: Any, pg_url: str) -> None:
    import psycopg

    server, _ = pg_server
    slow = DatabaseURL(pg_url + "?options=-c%20statement_timeout%3D300")
    with open_store(slow, actor="a@x", busy_timeout_ms=5000) as store:
        held = pending(store)
        with psycopg.connect(pg_url) as blocker:
            blocker.execute("LOCK TABLE actions IN ACCESS EXCLUSIVE MODE")
            with pytest.raises(StoreBusy, match="did not answer in time"):
                store.list_actions()
            with pytest.raises(StoreBusy):
                store.add_decision(held.token, _sig("bob"), complete=_one)
            blocker.rollback()
        assert store.get(held.token).status == "pending" and store.decisions(held.token) == []


def test_the_database_going_away_mid_approve_records_it_whole_or_not(own_pg: Any) -> None:
    import psycopg

    url = own_pg.create_database()
    with open_store(DatabaseURL(url), actor="bob@laptop") as store:
        held = pending(store)
        # Another writer holds its turn, so this approval is inside its transaction when the
        # server dies.
        blocker = psycopg.connect(url)
        blocker.execute("UPDATE store_version SET n = n")
        outcome: list[Any] = []
        thread = threading.Thread(
            target=lambda: outcome.append(_try(store.add_decision, held.token, _sig("bob"))),
        )
        thread.start()
        time.sleep(0.5)
        own_pg.kill()
        thread.join(30)
        blocker.close()
        assert isinstance(outcome[0], StoreUnavailable)
        assert "recorded whole or not at all" in str(outcome[0])
        own_pg.start()
        after = store.get(held.token)
        assert after.status == "pending" and store.decisions(held.token) == []
        # Once it is back, the person decides again and it holds.
        assert store.add_decision(held.token, _sig("bob"), complete=_one).ok


def _try(fn: Any, *args: Any) -> Any:
    try:
        return fn(*args, complete=_one)
    except Exception as exc:
        return exc


_CONFIRMER = textwrap.dedent(
    """
    import os, sys, time
    from patch_tui.approvals.open_store import open_store
    from patch_tui.settings.store_location import DatabaseURL
    store = open_store(DatabaseURL(sys.argv[1]), actor="mcp")
    assert store.claim(sys.argv[2], lambda *_: None).ok
    print("claimed", flush=True)
    sys.stdin.readline()  # the test kills the server meanwhile
    try:
        store.finish(sys.argv[2], True, {"ran": 1})
        print("finished", flush=True)
    except Exception as exc:
        print("lost:", exc, flush=True)
    os._exit(0)  # the confirming process is gone without recording the run
    """
)


def test_the_database_going_away_mid_confirm_leaves_it_interrupted_never_run_twice(
    own_pg: Any,
) -> None:
    url = own_pg.create_database()
    with open_store(DatabaseURL(url), actor="bob@laptop") as store:
        held = pending(store)
        assert store.add_decision(held.token, _sig("bob"), complete=_one).ok
    confirmer = subprocess.Popen(
        [sys.executable, "-c", _CONFIRMER, url, held.token],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert confirmer.stdout is not None and confirmer.stdin is not None
    assert confirmer.stdout.readline().strip() == "claimed"
    own_pg.kill()
    confirmer.stdin.write("go\n")
    confirmer.stdin.flush()
    said = confirmer.stdout.read()
    confirmer.wait(30)
    assert said.startswith("lost:") and "cannot reach" in said
    own_pg.start()
    with open_store(DatabaseURL(url), actor="mcp") as store:
        assert store.settle() == 1
        action = store.get(held.token)
        assert action.status == "interrupted"
        again = store.claim(held.token, lambda *_: None)
        assert not again.ok and again.code == "already_used"


# -- a one-shot command's connection ----------------------------------------------------------


def _sessions(server: Any, name: str) -> int:
    """How many sessions the database `name` has had, once none is open any more (the server
    counts a session when it ends)."""
    deadline = time.monotonic() + 20
    while server.sql(f"SELECT count(*) FROM pg_stat_activity WHERE datname = '{name}'")[0][0]:
        assert time.monotonic() < deadline, "a session stayed open"
        time.sleep(0.05)
    last = -1
    while True:  # until the count holds still
        now = server.sql(f"SELECT sessions FROM pg_stat_database WHERE datname = '{name}'")[0][0]
        if now == last:
            return int(now)
        assert time.monotonic() < deadline
        last = now
        time.sleep(0.3)


def test_inbox_list_opens_one_connection_and_lists_what_a_pooled_store_reads(
    pg_server: Any, pg_url: str
) -> None:
    server, _ = pg_server
    name = pg_url.rsplit("/", 1)[1]
    with open_store(DatabaseURL(pg_url), actor="a@x") as store:
        made = [pending(store, args={"n": n}) for n in range(3)]
    before = _sessions(server, name)
    done = _cli("inbox", "list", "--json", "--store", pg_url)
    assert done.returncode == 0, done.stderr
    assert [row["token"] for row in json.loads(done.stdout)] == [a.token for a in reversed(made)]
    # One: the connection that checked the schema is the one the listing reads through (a
    # pool would open its own beside it).
    assert _sessions(server, name) - before == 1


def test_a_one_shot_store_serves_threads_and_a_read_inside_a_write(pg_url: str) -> None:
    """Without a pool, a second connection is opened while the first is busy: concurrent
    deciders still have exactly one winner, and a read made inside a write's callback does not
    wait for the write's own connection."""
    with open_store(DatabaseURL(pg_url), actor="a@x", pooled=False) as store:
        held = pending(store)
        seen: list[Any] = []

        def complete(action: Any, signatures: Any) -> str:
            seen.append(store.get(action.token))  # another connection: the committed row
            return _one()

        outcomes: list[Any] = []
        threads = [
            threading.Thread(
                target=lambda n=n: outcomes.append(
                    store.add_decision(held.token, _sig(f"p{n}"), complete=complete)
                )
            )
            for n in range(12)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert len(outcomes) == 12 and sum(o.ok for o in outcomes) == 1
        assert seen and seen[0].status == "pending"
        assert store.get(held.token).status == "approved"


def test_a_one_shot_store_reconnects_after_the_server_restarted(
    own_pg: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A person may answer `inbox approve`'s question minutes later: a kept connection idle for
    a while is checked first, as the pool checks one, and replaced when the server restarted."""
    from patch_tui.approvals.postgres import connection

    monkeypatch.setattr(connection, "IDLE_CHECK_S", 0.0)
    url = DatabaseURL(own_pg.create_database())
    with open_store(url, actor="bob@laptop", pooled=False) as store:
        held = pending(store)
        own_pg.restart()
        assert store.add_decision(held.token, _sig("bob"), complete=_one).ok
        assert store.get(held.token).status == "approved"


# -- the change feed --------------------------------------------------------------------------


def test_a_waiter_wakes_on_another_process_commit_and_survives_a_restart(own_pg: Any) -> None:
    url = DatabaseURL(own_pg.create_database())
    with open_store(url, actor="mcp") as waiter:
        seen = waiter.data_version()
        woke: list[int] = []

        def wait() -> None:
            woke.append(waiter.wait_for_change(seen, 30))

        thread = threading.Thread(target=wait)
        thread.start()
        time.sleep(0.2)
        with open_store(url, actor="bob@laptop") as other:
            pending(other)
        thread.join(30)
        assert woke and woke[0] != seen  # woken by the commit, long before the 30 s

        feed = waiter.feed()
        assert feed.status.connected
        own_pg.kill()
        deadline = time.monotonic() + 20
        while feed.status.connected and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not feed.status.connected and "cannot reach" in (feed.status.error or "")
        own_pg.start()
        while not feed.status.connected and time.monotonic() < deadline + 20:
            time.sleep(0.05)
        assert feed.status.connected and feed.status.reconnects == 1
        seen = waiter.data_version()
        woke.clear()
        thread = threading.Thread(target=wait)
        thread.start()
        time.sleep(0.2)
        with open_store(url, actor="bob@laptop") as other:
            pending(other)
        thread.join(30)
        assert woke and woke[0] != seen


def test_store_roles_prints_the_grants_without_opening_anything(tmp_path: Path) -> None:
    done = _cli("store", "roles", "--agent", "ci_agent")
    assert done.returncode == 0
    assert "GRANT INSERT, UPDATE ON actions TO ci_agent;" in done.stdout
    bad = _cli("store", "roles", "--agent", "x; DROP TABLE actions")
    assert bad.returncode == 2 and "not a plain role name" in bad.stderr


async def test_a_held_call_waiting_for_a_decision_survives_the_database_restarting(
    own_pg: Any,
) -> None:
    import anyio

    from patch_tui.mcp_server.confirm_wait import wait_for_decision

    url = DatabaseURL(own_pg.create_database())
    with open_store(url, actor="mcp") as serve_store:
        held = pending(serve_store)
        progress: list[float] = []

        async def report(done: float, total: float | None, message: str | None) -> None:
            progress.append(done)

        def restart_then_decide() -> None:
            time.sleep(0.5)
            own_pg.kill()
            time.sleep(1.5)
            own_pg.start()
            with open_store(url, actor="bob@laptop") as approver:
                assert approver.add_decision(held.token, _sig("bob"), complete=_one).ok

        started = time.monotonic()
        async with anyio.create_task_group() as tg:
            tg.start_soon(anyio.to_thread.run_sync, restart_then_decide)
            await wait_for_decision(serve_store, held.token, wait=60, report=report)
        # It returned because the decision arrived, before its deadline.
        assert time.monotonic() < started + 60
        assert serve_store.get(held.token).status == "approved"
        assert progress  # the client heard from it while it waited


def test_a_full_disk_records_nothing_and_says_so(own_pg: Any) -> None:
    import os

    if os.geteuid() != 0:
        pytest.skip("a full disk is made with a small tmpfs, which only root can mount")
    tiny = own_pg.root / "tiny"
    tiny.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3M", "tmpfs", str(tiny)])
    if mounted.returncode != 0:
        pytest.skip("cannot mount a small tmpfs here to fill")
    try:
        os.chown(tiny, *_owner(own_pg))
        own_pg.sql(f"CREATE TABLESPACE tiny LOCATION '{tiny}'")
        own_pg.sql("CREATE DATABASE full_disk TABLESPACE tiny")
        url = DatabaseURL(own_pg.url("full_disk"))
        with open_store(url, actor="mcp") as store:
            kept = pending(store)
            before = store.data_version()
            own_pg.sql("CREATE TABLE filler (x text)", "full_disk")
            with pytest.raises(StoreUnavailable, match="nothing was recorded"):
                # Fill what is left, then hold a call: one of them hits the wall.
                for _ in range(40):
                    own_pg.sql_ignoring_errors(
                        "INSERT INTO filler SELECT md5(random()::text) "
                        "FROM generate_series(1, 20000)",
                        "full_disk",
                    )
                for i in range(400):  # incompressible args, 20 kB each
                    pending(store, args={"n": i, "pad": os.urandom(10_000).hex()})
            # What was recorded is all there, and the store still reads.
            assert store.get(kept.token) == kept
            assert store.data_version() >= before
            own_pg.sql("DROP TABLE filler", "full_disk")
            assert pending(store).status == "pending"  # space again: it works again
    finally:
        own_pg.stop("immediate")
        subprocess.run(["umount", "-l", str(tiny)])


def _owner(server: Any) -> tuple[int, int]:
    stat = server.data.stat()
    return stat.st_uid, stat.st_gid
