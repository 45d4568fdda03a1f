"""Which sockets a run may reach: the sandbox plan's socket step (sandbox.prepare calls
`plan_sockets`).

- a seccomp filter on socket families under both engines (sandbox_exec.SOCKET_POLICIES): no
  vsock, packet or raw sockets, no netlink but routing, no io_uring; unix sockets only with
  `network: true` and a filesystem capability that can read a folder holding one;
- Landlock's scopes (ABI 6: no abstract unix socket outside the run, unless
  `sandbox_allow_abstract_unix`; no signal outside it) and TCP port rules (ABI 4: none with
  `network: false`, only the package index's with a port list);
- under Landlock, with unix sockets allowed, the hidden folders masked by an empty read-only
  tmpfs in the run's mount namespace (Landlock does not check connect() on a pathname socket).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from patch_tui.runtime.sandbox import Host, Plan, Request, _Layout


def allow_abstract_unix() -> bool:
    """`sandbox_allow_abstract_unix` (env PATCH_TUI_SANDBOX_ALLOW_ABSTRACT_UNIX): tools with
    network: true may reach abstract unix sockets (D-Bus, X11 and the like). Default false."""
    from patch_tui.settings.config import plain_setting

    return plain_setting("sandbox_allow_abstract_unix", False) is True


def _is_socket(path: str) -> bool:
    import stat

    try:
        return stat.S_ISSOCK(os.lstat(path).st_mode)
    except OSError:
        return False


def _inside(child: str, parent: str) -> bool:
    return child == parent or child.startswith(parent.rstrip("/") + "/")


def _outermost(paths: list[str]) -> list[str]:
    unique = list(dict.fromkeys(paths))
    return [p for p in unique if not any(q != p and _inside(p, q) for q in unique)]


def socket_policy(network: bool, filesystem: str) -> str:
    """Which sockets a run may make (sandbox_exec.SOCKET_POLICIES). With network: true and
    filesystem: none, no unix socket: a pathname socket is reached by its path, which no
    engine's path rules check on connect(), and the tool may read no folder holding one."""
    if not network:
        return "network-off"
    return "network-on-no-unix" if filesystem == "none" else "network-on"


_POLICY_WORDS = {
    "network-off": "no unix sockets",
    "network-on": "unix sockets only by path",
    "network-on-no-unix": "no unix sockets",
}


def _unix_masks(req: Request, lay: _Layout, plan: Plan, spec: dict[str, Any]) -> bool:
    """Under Landlock, with unix sockets allowed: no engine's path rules check connect() on a
    pathname socket, so each hidden folder is covered by an empty read-only tmpfs in the run's
    own mount namespace (the runner's unshare) before Landlock applies; its sockets are then
    out of reach as under bubblewrap. False when there is no mount namespace to do it in."""
    if not req.pid_ns:
        return False  # no unshare: no mount namespace of the run's own
    masks = [
        h
        for h in lay.hidden
        if os.path.isdir(h) and h != "/proc" and not any(_inside(o, h) for o in lay.own)
    ]
    spec["mask"] = _outermost(masks)
    # A hidden socket outside those folders (an ssh-agent's): /dev/null bound over it.
    spec["mask_files"] = [h for h in lay.hidden if _is_socket(h)]
    plan.claims.append("sockets:unix-hidden-masked")
    plan.lines.append(
        "unix sockets: those inside the protected folders masked (an empty read-only tmpfs in "
        "the run's mount namespace)."
    )
    return True


def plan_sockets(req: Request, host: Host, lay: _Layout, plan: Plan, spec: dict[str, Any]) -> None:
    """network: the namespace (the runner's unshare, or bwrap's), the seccomp filter on socket
    families, Landlock's abstract-socket scope and TCP port rules."""
    engine = plan.engine
    abi = host.landlock_abi
    policy = socket_policy(req.network, req.filesystem)
    if policy == "network-on" and engine == "landlock" and not _unix_masks(req, lay, plan, spec):
        policy = "network-on-no-unix"  # a socket in a hidden folder would be reachable
    # Landlock's scopes and TCP rules: in the landlock spec, or (bwrap, whose mount namespace
    # does the filesystem part) a spec handling no filesystem access.
    scoped = abi >= 6 and engine != "none"
    tcp_rules = abi >= 4 and engine != "none" and (not req.network or req.tcp_ports is not None)
    if scoped or tcp_rules:
        ll = spec.setdefault("landlock", {"abi": abi, "fs": False})
        ll["scope_signal"] = scoped
        ll["scope_abstract_unix"] = scoped and not allow_abstract_unix()
        ll["deny_tcp"] = tcp_rules
        ll["tcp_ports"] = list(req.tcp_ports or []) if req.network else []
    if host.seccomp:
        if engine == "bwrap":
            from patch_tui.runtime.bwrap import seccomp_fd

            # bwrap loads the filter itself (--seccomp FD) just before it execs the tool.
            fd = seccomp_fd(policy)
            plan.pass_fds.append(fd)
            plan.prefix[1:1] = ["--seccomp", str(fd)]
        else:
            spec["seccomp"] = policy
        plan.claims.append(f"sockets:seccomp-{policy}")
        plan.lines.append(
            f"sockets: a seccomp filter ({_POLICY_WORDS[policy]}; no raw, packet or vsock "
            "sockets, no netlink but routing, no io_uring)."
        )
    if scoped and spec["landlock"]["scope_abstract_unix"]:
        plan.claims.append("sockets:landlock-abstract-unix")
        plan.lines.append("abstract unix sockets outside the run: out of reach (Landlock scope).")
    if req.network:
        if req.tcp_ports is not None and tcp_rules:
            ports = ",".join(str(p) for p in req.tcp_ports)
            plan.claims.append(f"network:tcp-ports-{ports}")
            plan.lines.append(f"network: TCP connections only to port(s) {ports} (Landlock).")
        else:
            plan.claims.append("network:allowed")
            plan.lines.append("network: true declared; the tool had network access.")
        return
    parts = []
    if engine == "bwrap" or req.net_ns:
        parts.append("netns")
    if host.seccomp:
        parts.append("seccomp-unix")
    if tcp_rules:
        parts.append("landlock-tcp")
    if scoped:
        parts.append("landlock-abstract-unix")
    if not parts:
        plan.claims.append("network:NOT-enforced")
        plan.lines.append(
            "network: false declared but NOT enforced: no network namespace on this host, "
            "so the tool could reach the network."
        )
        return
    plan.claims.append("network:" + "+".join(parts))
    held = []
    if "netns" in parts:
        held.append("a network namespace (no interface up)")
    if "seccomp-unix" in parts:
        held.append("a seccomp filter (no unix sockets, no io_uring)")
    if "landlock-tcp" in parts:
        held.append("Landlock TCP rules")
    plan.lines.append("network: false declared; enforced with " + ", ".join(held) + ".")
    if "netns" not in parts:
        plan.lines.append(
            "no network namespace on this host: UDP and other sockets were NOT blocked."
        )
    if "seccomp-unix" not in parts:
        plan.lines.append("unix sockets NOT blocked: no seccomp filter on this host.")
