"""A real PostgreSQL for the tests: the server binaries the `pgserver` wheel bundles (PostgreSQL
16), run by this kit directly, so a test can stop, restart or starve the server it was given.

    server = PgServer.create(folder)   initdb (or a copy of an initdb'd template) into folder
    server.start() / stop() / restart() / kill()
    server.url("db")                   postgresql://postgres@127.0.0.1:PORT/db (trust auth)
    server.create_database()           a fresh database's URL
    server.sql("...")                  one statement on the admin database

PostgreSQL refuses to run as root. As root (CI, this machine) the binaries run as `nobody`
(subprocess's user=/group=, no helper binary), from a world-readable copy in /tmp (the venv may
sit where nobody cannot reach, under /root say), the data folder owned by nobody and placed under
/tmp (pytest's own temp root is 0700 root's). As any other user they run as that user, in place.

One server per test run is shared by every xdist worker (`shared_server`): the first worker to
ask starts it under a lock in the run's temp root and writes where it listens; the others read
that. A small watchdog process stops it (and removes its folder) once the run's main process is
gone, so an interrupted run leaves no server behind. Tests that restart or kill a server get
their own (`private_server`), copied from the shared template folder (no second initdb).
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.util
import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Settings for a test server: no fsync (a test's data is thrown away; a killed server still
# keeps every commit, which the OS holds), room for the
# end-to-end test's concurrent processes, and no listening anywhere but loopback.
_SERVER_OPTIONS = (
    "-c fsync=off -c full_page_writes=off "
    "-c max_connections=400 -c shared_buffers=32MB -c listen_addresses=127.0.0.1 "
    "-c log_min_messages=warning -c log_statement=none"
)


class PgUnavailable(Exception):
    """Why no PostgreSQL can run here (one line, for the skip)."""


def bin_dir() -> Path:
    spec = importlib.util.find_spec("pgserver")
    if spec is None or not spec.submodule_search_locations:
        raise PgUnavailable("the pgserver wheel is not installed (make test installs it)")
    install = Path(next(iter(spec.submodule_search_locations))) / "pginstall"
    if not (install / "bin" / "postgres").exists():
        raise PgUnavailable(f"the pgserver wheel has no server binaries at {install}")
    if _run_as() is None:
        return install / "bin"
    return _world_readable_copy(install) / "bin"


def _world_readable_copy(install: Path) -> Path:
    """As root the server runs as nobody, who may not reach the venv (a checkout under /root,
    say): a copy of the binaries (34 MB, once per machine and wheel) in /tmp, readable by all.
    Their libraries sit beside the package (RPATH $ORIGIN/../../../pgserver.libs): copied too."""
    import hashlib

    key = hashlib.sha256(str(install.resolve()).encode()).hexdigest()[:12]
    target = Path("/tmp") / f"patch-tui-pgbin-{key}"
    done = target / "pgserver" / "pginstall"
    if (done / "bin" / "postgres").exists():
        return done
    with open(f"/tmp/patch-tui-pgbin-{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (done / "bin" / "postgres").exists():
            partial = Path(tempfile.mkdtemp(prefix=f"patch-tui-pgbin-{key}.", dir="/tmp"))
            shutil.copytree(install, partial / "pgserver" / "pginstall", symlinks=True)
            libs = install.parent.parent / "pgserver.libs"
            if libs.is_dir():
                shutil.copytree(libs, partial / "pgserver.libs", symlinks=True)
            for path in [partial, *partial.rglob("*")]:
                if not path.is_symlink():
                    path.chmod(path.stat().st_mode | (0o555 if path.is_dir() else 0o444))
            partial.rename(target)
    return done


def _run_as() -> tuple[int, int] | None:
    """(uid, gid) to run the server as when we are root (PostgreSQL refuses root), else None."""
    if os.geteuid() != 0:
        return None
    try:
        entry = pwd.getpwnam("nobody")
    except KeyError:
        raise PgUnavailable("running as root and there is no `nobody` user to run it") from None
    return entry.pw_uid, entry.pw_gid


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class PgServer:
    root: Path  # owned by the server's user: data/, the socket, the log
    port: int

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def log(self) -> Path:
        return self.root / "server.log"

    # -- creating --------------------------------------------------------------------------

    @classmethod
    def create(cls, template: Path | None = None) -> PgServer:
        """A new server folder under /tmp: initdb'd, or a copy of `template` (an initdb'd data
        folder) when given."""
        run_as = _run_as()
        root = Path(tempfile.mkdtemp(prefix="patch-tui-pg-", dir="/tmp"))
        if run_as is not None:
            os.chown(root, *run_as)
        server = cls(root=root, port=_free_port())
        if template is not None:
            # As root, copying keeps the owner (nobody): the server accepts the folder.
            subprocess.run(["cp", "-a", str(template), str(server.data)], check=True)
        else:
            server._pg(
                "initdb",
                "-D",
                str(server.data),
                "-U",
                "postgres",
                "--auth=trust",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync",
            )
        return server

    def _pg(self, program: str, *args: str, timeout: float = 60) -> str:
        run_as = _run_as()
        extra: dict[str, Any] = {}
        if run_as is not None:
            extra = {"user": run_as[0], "group": run_as[1], "extra_groups": []}
        env = {"PATH": "/usr/bin:/bin", "LC_ALL": "C", "HOME": str(self.root)}
        done = subprocess.run(
            [str(bin_dir() / program), *args],
            capture_output=True,
            text=True,
            env=env,
            cwd=self.root,
            timeout=timeout,
            **extra,
        )
        if done.returncode != 0:
            log = self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""
            raise PgUnavailable(
                f"{program} failed ({done.returncode}): {done.stderr.strip()[-500:]} {log}"
            )
        return done.stdout

    # -- running ---------------------------------------------------------------------------

    def start(self) -> None:
        self._pg(
            "pg_ctl",
            "-D",
            str(self.data),
            "-w",
            "-t",
            "60",
            "-l",
            str(self.log),
            "-o",
            f"-p {self.port} -k {self.root} {_SERVER_OPTIONS}",
            "start",
        )

    def stop(self, mode: str = "fast") -> None:
        if self.running():
            self._pg("pg_ctl", "-D", str(self.data), "-w", "-t", "60", "-m", mode, "stop")

    def restart(self) -> None:
        self.stop()
        self.start()

    def kill(self) -> None:
        """The server dies at once (SIGKILL to the postmaster): no goodbye to any client."""
        pid = self.pid()
        if pid is not None:
            os.kill(pid, signal.SIGKILL)
            for _ in range(200):
                if not _alive(pid):
                    break
                time.sleep(0.05)
            # The children notice the postmaster is gone and exit on their own; wait for the
            # port so a restart can bind it.
            for _ in range(200):
                if not self._listening():
                    break
                time.sleep(0.05)
            # Its lock files name its pid, which may linger as a zombie no one reaps here; a
            # new postmaster would take it for alive and refuse to start.
            (self.data / "postmaster.pid").unlink(missing_ok=True)
            (self.root / f".s.PGSQL.{self.port}.lock").unlink(missing_ok=True)
            (self.root / f".s.PGSQL.{self.port}").unlink(missing_ok=True)

    def pid(self) -> int | None:
        try:
            return int((self.data / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def running(self) -> bool:
        pid = self.pid()
        return pid is not None and _alive(pid)

    def _listening(self) -> bool:
        with socket.socket() as s:
            s.settimeout(0.2)
            return s.connect_ex(("127.0.0.1", self.port)) == 0

    def remove(self) -> None:
        with contextlib.suppress(PgUnavailable, subprocess.TimeoutExpired):
            self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)

    # -- using -----------------------------------------------------------------------------

    def url(self, database: str = "postgres", user: str = "postgres") -> str:
        return f"postgresql://{user}@127.0.0.1:{self.port}/{database}"

    def socket_url(self, database: str = "postgres") -> str:
        """The same server through its unix socket (libpq's `host=` a folder)."""
        return f"postgresql://postgres@/{database}?host={self.root}&port={self.port}"

    def sql(self, statement: str, database: str = "postgres") -> list[tuple[Any, ...]]:
        import psycopg

        with psycopg.connect(self.url(database), autocommit=True, connect_timeout=10) as conn:
            cur = conn.execute(statement.encode())
            return cur.fetchall() if cur.description else []

    def sql_ignoring_errors(self, statement: str, database: str = "postgres") -> None:
        """One statement whose failure is expected (filling a disk, say)."""
        with contextlib.suppress(Exception):
            self.sql(statement, database)

    def create_database(self) -> str:
        name = "t_" + uuid.uuid4().hex[:16]
        self.sql(f"CREATE DATABASE {name}")
        return self.url(name)

    def drop_database(self, url: str) -> None:
        name = url.rsplit("/", 1)[1].split("?")[0]
        with contextlib.suppress(Exception):
            self.sql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def to_json(self) -> dict[str, Any]:
        return {"root": str(self.root), "port": self.port}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie (our own child, not yet reaped) is gone for our purposes.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0] != "Z"
    except (OSError, IndexError):
        return True


# The watchdog: stops the server and removes its folder once the run's main process is gone.
_WATCHDOG = """
import os, shutil, subprocess, sys, time
owner, root, pg_ctl = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
while True:
    try:
        os.kill(owner, 0)
    except ProcessLookupError:
        break
    time.sleep(1)
subprocess.run(pg_ctl, capture_output=True, timeout=60)
shutil.rmtree(root, ignore_errors=True)
for extra in os.environ.get("PGKIT_REMOVE", "").split(os.pathsep):
    if extra:
        shutil.rmtree(extra, ignore_errors=True)
"""


def _run_owner() -> int:
    """The pid whose end ends the run: the xdist controller for a worker, else this process."""
    return os.getppid() if "PYTEST_XDIST_WORKER" in os.environ else os.getpid()


def _watch(server: PgServer, template: Path) -> None:
    run_as = _run_as()
    pg_ctl = [str(bin_dir() / "pg_ctl"), "-D", str(server.data), "-w", "-m", "immediate", "stop"]
    if run_as is not None:
        pg_ctl = ["setpriv", f"--reuid={run_as[0]}", f"--regid={run_as[1]}", "--clear-groups"]
        pg_ctl += [str(bin_dir() / "pg_ctl"), "-D", str(server.data), "-w", "-m"]
        pg_ctl += ["immediate", "stop"]
    subprocess.Popen(
        [sys.executable, "-c", _WATCHDOG, str(_run_owner()), str(server.root), *pg_ctl],
        env={**os.environ, "PGKIT_REMOVE": str(template.parent)},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def shared_server(run_root: Path) -> tuple[PgServer, Path]:
    """The run's one server (started by whichever worker asks first) and the template data
    folder private servers copy. `run_root`: the run's temp root, shared by the workers."""
    info = run_root / "pgkit.json"
    with open(run_root / "pgkit.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if info.exists():
            data = json.loads(info.read_text())
            if "error" in data:
                raise PgUnavailable(data["error"])
            server = PgServer(root=Path(data["root"]), port=int(data["port"]))
            return server, Path(data["template"])
        try:
            template_server = PgServer.create()
            template = template_server.data
            server = PgServer.create(template)
            server.start()
        except (PgUnavailable, OSError, subprocess.SubprocessError) as exc:
            info.write_text(json.dumps({"error": str(exc).splitlines()[0][:300]}))
            raise PgUnavailable(str(exc).splitlines()[0][:300]) from None
        _watch(server, template)
        info.write_text(json.dumps({**server.to_json(), "template": str(template)}))
        return server, template


@contextlib.contextmanager
def private_server(template: Path) -> Iterator[PgServer]:
    """A server of one's own (to stop, kill or fill), removed afterwards."""
    server = PgServer.create(template)
    try:
        server.start()
        yield server
    finally:
        server.remove()
