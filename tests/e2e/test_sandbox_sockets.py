"""Issue 22: sockets follow the capabilities, under Landlock and under bubblewrap.

- `network: false`: no AF_VSOCK (the VM's port space, outside any namespace), no AF_PACKET, no raw
  sockets, no netlink but routing, no unix sockets;
- `network: true`: the same families refused; a pathname unix socket only where the tool may
  read its path (`filesystem: none` may read no folder holding one: none at all), abstract unix
  sockets out of reach (Landlock's scope) unless the user allows them.
Real tool files through the real runner; each attack first shown real in this process.
"""

from __future__ import annotations

import errno
import os
import socket
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from patch_tui.runtime import sandbox
from patch_tui.runtime.runner import Isolation, run_source
from tests.runtimekit import tool_text

HOST = sandbox.probe()
ENGINES = [
    pytest.param("landlock", marks=pytest.mark.skipif(HOST.landlock_abi < 1, reason="no Landlock")),
    pytest.param(
        "bwrap", marks=pytest.mark.skipif(HOST.bwrap is None, reason="bwrap not installed")
    ),
]
AF_VSOCK = getattr(socket, "AF_VSOCK", 40)
AF_PACKET = getattr(socket, "AF_PACKET", 17)
NETLINK_ROUTE, NETLINK_AUDIT = 0, 9

FAMILIES_BODY = """
def main() -> dict:
    import socket
    out = {}
    tries = {
        "vsock": (40, socket.SOCK_STREAM, 0),
        "packet": (17, socket.SOCK_RAW, 0),
        "raw_icmp": (socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP),
        "netlink_audit": (16, socket.SOCK_RAW, 9),
        "netlink_route": (16, socket.SOCK_RAW, 0),
        "udp": (socket.AF_INET, socket.SOCK_DGRAM, 0),
    }
    for name, (family, kind, proto) in tries.items():
        try:
            s = socket.socket(family, kind, proto)
        except OSError as exc:
            out[name] = "refused: " + (exc.strerror or type(exc).__name__)
            continue
        if name == "vsock":
            try:
                s.bind((0xFFFFFFFF, 0xFFFFFFFF))  # any CID, any port: the VM's port space
                out[name] = "bound"
            except OSError as exc:
                out[name] = "made, bind failed: " + (exc.strerror or "")
        else:
            out[name] = "made"
        s.close()
    return out
"""


def _vsock_here() -> bool:
    try:
        socket.socket(AF_VSOCK, socket.SOCK_STREAM).close()
    except OSError as exc:
        return exc.errno not in (errno.EAFNOSUPPORT, errno.EPROTONOSUPPORT)
    return True


@pytest.mark.parametrize("network", [False, True])
@pytest.mark.parametrize("engine", ENGINES)
def test_vsock_packet_raw_and_netlink_are_refused(engine: str, network: bool) -> None:
    r = run_source(
        tool_text("families", FAMILIES_BODY, network=network, filesystem="read-only"),
        {},
        isolation=Isolation(engine=engine),
    )
    assert r.ok, r.error
    out = r.result
    refused = ["packet", "raw_icmp", "netlink_audit"]
    if _vsock_here():  # the attack is real where this kernel has vsock at all
        refused.append("vsock")
    assert all(out[name].startswith("refused") for name in refused), out
    assert out["vsock"].startswith("refused") or not _vsock_here()
    # What a program needs still works: a UDP socket, the routing netlink getaddrinfo asks.
    assert out["udp"] == "made" and out["netlink_route"] == "made", out
    assert any(c.startswith("sockets:seccomp-") for c in r.enforced["claims"])


UNIX_BODY = """
def main(path: str, abstract: str) -> dict:
    import socket
    out = {}
    for name, address in (("path", path), ("abstract", "\\0" + abstract)):
        try:
            with socket.socket(socket.AF_UNIX) as s:
                s.settimeout(3)
                s.connect(address)
                out[name] = s.recv(16).decode()
        except OSError as exc:
            out[name] = "blocked: " + type(exc).__name__
    return out
"""


@pytest.fixture
def unix_servers(tmp_path: Path) -> Iterator[tuple[str, str]]:
    """A listening pathname socket (in a folder a tool may not list) and an abstract one."""
    folder = tmp_path / "agent-private"
    folder.mkdir()
    path = folder / "agent.sock"
    abstract = f"patch-test-{uuid.uuid4().hex}"
    servers = []
    for address in (str(path), "\0" + abstract):
        srv = socket.socket(socket.AF_UNIX)
        srv.bind(address)
        srv.listen(8)
        srv.settimeout(0.2)
        servers.append(srv)
    os.chmod(path, 0o777)
    stop = threading.Event()

    def serve(srv: socket.socket) -> None:
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            conn.sendall(b"hello")
            conn.close()

    threads = [threading.Thread(target=serve, args=(s,), daemon=True) for s in servers]
    for t in threads:
        t.start()
    yield str(path), abstract
    stop.set()
    for t in threads:
        t.join()
    for s in servers:
        s.close()


def _unix(engine: str, filesystem: str, servers: tuple[str, str]) -> dict[str, str]:
    text = tool_text(
        "unix",
        UNIX_BODY,
        inputs=[{"name": "path"}, {"name": "abstract"}],
        filesystem=filesystem,
        network=True,
    )
    r = run_source(
        text, {"path": servers[0], "abstract": servers[1]}, isolation=Isolation(engine=engine)
    )
    assert r.ok, r.error
    return r.result


@pytest.mark.parametrize("engine", ENGINES)
def test_network_true_reaches_a_unix_socket_only_where_it_may_read(
    engine: str, unix_servers: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # read-only may read the socket's folder: its pathname socket is reachable ...
    seen = _unix(engine, "read-only", unix_servers)
    assert seen["path"] == "hello", seen
    # ... filesystem: none may read no such folder: neither socket is.
    blind = _unix(engine, "none", unix_servers)
    assert blind["path"].startswith("blocked") and blind["abstract"].startswith("blocked")
    # A socket inside a hidden folder (the gpg agent's, in ~/.gnupg): out of reach even for
    # read-only, which may connect to sockets it can read.
    home = Path(unix_servers[0]).parent.parent / "home"
    (home / ".gnupg").mkdir(parents=True)
    agent = home / ".gnupg" / "S.gpg-agent"
    os.link(unix_servers[0], agent)  # the same socket, under the secret folder
    monkeypatch.setenv("HOME", str(home))
    hidden = _unix(engine, "read-only", (str(agent), unix_servers[1]))
    assert hidden["path"].startswith("blocked"), hidden
    if HOST.landlock_abi >= 6:
        # Abstract sockets: out of reach for every capability, unless the user allows them.
        assert seen["abstract"].startswith("blocked"), seen
        monkeypatch.setenv("PATCH_TUI_SANDBOX_ALLOW_ABSTRACT_UNIX", "1")
        allowed = _unix(engine, "read-only", unix_servers)
        assert allowed["abstract"] == "hello", allowed  # the attack is real


@pytest.mark.parametrize("engine", ENGINES)
def test_the_ssh_agent_is_out_of_reach_for_every_capability(
    engine: str, unix_servers: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # An approver key loaded into ssh-agent signs approvals: the agent's socket, named by
    # SSH_AUTH_SOCK in patch-tui's environment, is hidden even from read-only network tools.
    agent_dir = Path(unix_servers[0]).parent.parent / "ssh-XXXXabcd"
    agent_dir.mkdir()
    agent = agent_dir / "agent.1234"
    os.link(unix_servers[0], agent)  # the same listening socket, where ssh-agent keeps its own
    seen = _unix(engine, "read-only", (str(agent), unix_servers[1]))
    assert seen["path"] == "hello", seen  # the attack is real while nothing names it
    monkeypatch.setenv("SSH_AUTH_SOCK", str(agent))
    hidden = _unix(engine, "read-only", (str(agent), unix_servers[1]))
    assert hidden["path"].startswith("blocked"), hidden
    # A socket file alone (not in an agent's own folder) is masked too.
    loose = Path(unix_servers[0]).parent.parent / "agent.sock"
    os.link(unix_servers[0], loose)
    monkeypatch.setenv("SSH_AUTH_SOCK", str(loose))
    hidden = _unix(engine, "read-only", (str(loose), unix_servers[1]))
    assert hidden["path"].startswith("blocked"), hidden
