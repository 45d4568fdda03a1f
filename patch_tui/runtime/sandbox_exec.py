"""The first step of a tool's process: confine it, then set up its packages, then run the tool.

    python -I -S -c "$(cat sandbox_exec.py)
    main()" SPEC_FD TOOL

Its text is handed to the tool's own Python with `-c` (standard library only: patch-tui itself is
not importable there). Nothing of the tool's runs before it: `-I -S` start Python without `site`
(no .pth file, no sitecustomize or usercustomize, no PYTHONSTARTUP, no working folder on the
path), Landlock and seccomp are applied first, and only then are the venv's site-packages added
(`site.addsitedir`: a package's .pth line runs confined, like the tool).

The spec comes in through SPEC_FD, a sealed memfd closed once read, never through argv or the
environment (a tool reads its own /proc/self/cmdline and environ): it names the protected paths.
It is a Python literal (a dict of strings, numbers, booleans and lists), evaluated with no
builtins (no json import at run time). It holds:
- "landlock": null, or {"abi", "fs", "read", "write", "own", "hidden", "readonly", "sealed",
  "files_rw", "scope_signal", "scope_abstract_unix", "deny_tcp", "tcp_ports"}: the Landlock
  ruleset (`apply_landlock`); "fs": false handles no filesystem access (under bubblewrap, whose
  mount namespace already does: only the scopes and TCP rules);
- "seccomp": null, or "network-off" / "network-on" / "network-on-no-unix": which sockets the
  seccomp filter allows (`seccomp_program`); io_uring is always denied (it opens sockets without
  socket(2));
- "mask": folders covered by an empty read-only tmpfs first (Landlock with unix sockets allowed:
  the sockets in the protected folders are then out of reach);
- "site": the venv's site-packages folders, added after confinement;
- "module" and "argv": run a module (`python -m`) instead of a tool file (the package install).
Under bubblewrap bwrap loads the seccomp program itself (`--seccomp FD`) before this runs.
Anything that cannot be applied as asked stops the run (exit 126, one line on stderr): the runner
claims it, so the tool never runs without it.
"""

from __future__ import annotations

import ctypes
import os
import struct
import sys

EXIT_CANNOT_CONFINE = 126

# -- Landlock (include/uapi/linux/landlock.h) -------------------------------------------------

SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446  # the same on every arch
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
RULE_NET_PORT = 2
PR_SET_NO_NEW_PRIVS = 38

FS_EXECUTE = 1 << 0
FS_WRITE_FILE = 1 << 1
FS_READ_FILE = 1 << 2
FS_READ_DIR = 1 << 3
FS_REMOVE_DIR = 1 << 4
FS_REMOVE_FILE = 1 << 5
FS_MAKE_CHAR = 1 << 6
FS_MAKE_DIR = 1 << 7
FS_MAKE_REG = 1 << 8
FS_MAKE_SOCK = 1 << 9
FS_MAKE_FIFO = 1 << 10
FS_MAKE_BLOCK = 1 << 11
FS_MAKE_SYM = 1 << 12
FS_REFER = 1 << 13  # ABI 2
FS_TRUNCATE = 1 << 14  # ABI 3
FS_IOCTL_DEV = 1 << 15  # ABI 5
NET_BIND_TCP = 1 << 0  # ABI 4
NET_CONNECT_TCP = 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1

FILE_ONLY = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV


def fs_rights(abi: int) -> int:
    """Every filesystem right this ABI knows: all of them handled, so none is left open."""
    rights = (1 << 13) - 1
    if abi >= 2:
        rights |= FS_REFER
    if abi >= 3:
        rights |= FS_TRUNCATE
    if abi >= 5:
        rights |= FS_IOCTL_DEV
    return rights


def read_rights() -> int:
    return FS_EXECUTE | FS_READ_FILE | FS_READ_DIR


_LIBC: list[ctypes.CDLL] = []


def _libc() -> ctypes.CDLL:
    """libc, loaded once (a rule per granted path: /etc alone is a hundred)."""
    if not _LIBC:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        _LIBC.append(libc)
    return _LIBC[0]


def _fail(message: str) -> None:
    sys.stderr.write(f"patch-tui sandbox: {message}; the tool was not run\n")
    sys.stderr.flush()
    os._exit(EXIT_CANNOT_CONFINE)


def _real(path: str) -> str:
    return os.path.realpath(path)


def _inside(child: str, parent: str) -> bool:
    return child == parent or child.startswith(parent.rstrip("/") + "/")


def expand(roots: list[str], exclude: list[str], sealed: list[str] | None = None) -> list[str]:
    """The paths to grant so that everything under `roots` is covered except `exclude`.

    Landlock rules only grant, and a rule on a folder covers all of it: a protected path inside
    a granted folder would be reachable. So a root holding a protected path is not granted
    itself; its entries are, one by one, down the way to the protected path, which is left out.
    (The folders on that way can then not be listed, and entries created in them after the run
    started are out of reach: the price of never granting a protected path.) A `sealed` folder is
    walked the same way: what it holds is granted, but no entry can be made, removed or renamed
    in the folder itself (the store's folder: no forged -wal planted beside the store)."""
    ex = [_real(e) for e in exclude]
    seal = {_real(s) for s in sealed or []}
    out: list[str] = []

    def walk(path: str) -> None:
        if any(_inside(path, e) for e in ex):
            return  # the path is protected or lies inside a protected one
        if path not in seal and not any(_inside(e, path) for e in ex):
            out.append(path)
            return
        try:
            with os.scandir(path) as entries:  # file types from the listing: no stat per entry
                children = [e.path for e in entries if not e.is_symlink()]
        except OSError:
            return
        for child in children:  # a symlink's target is granted (or not) under its own name
            walk(child)

    for root in roots:
        if os.path.lexists(root):
            walk(_real(root))
    return out


def _ruleset(abi: int, handled_fs: int, handled_net: int, scoped: int) -> int:
    if abi >= 6:
        attr = struct.pack("=QQQ", handled_fs, handled_net, scoped)
    elif abi >= 4:
        attr = struct.pack("=QQ", handled_fs, handled_net)
    else:
        attr = struct.pack("=Q", handled_fs)
    buf = ctypes.create_string_buffer(attr, len(attr))
    ruleset = _libc().syscall(SYS_CREATE_RULESET, buf, ctypes.c_size_t(len(attr)), 0)
    if ruleset < 0:
        _fail(f"landlock_create_ruleset failed: {os.strerror(ctypes.get_errno())}")
    return int(ruleset)


def _path_grants(spec: dict) -> list[tuple[str, int]]:
    """Every (path, rights) rule of the filesystem part of the ruleset."""
    write = fs_rights(int(spec["abi"])) & ~FS_EXECUTE | read_rights()
    grants: list[tuple[str, int]] = []
    hidden = list(spec.get("hidden", []))
    readonly = list(spec.get("readonly", []))
    grants += [(p, read_rights()) for p in expand(spec.get("read", []), hidden)]
    sealed = list(spec.get("sealed", []))
    grants += [(p, write) for p in expand(spec.get("write", []), hidden + readonly, sealed)]
    # The run's own folders and the devices a program expects: granted as they are, even where
    # they sit inside a protected folder (a run's own folder lives in the protected runs root).
    grants += [(_real(p), write) for p in spec.get("own", []) if os.path.exists(p)]
    for dev in spec.get("files_rw", []):
        if os.path.exists(dev):
            grants.append((dev, FS_READ_FILE | FS_WRITE_FILE | FS_IOCTL_DEV))
    return grants


def _add_path_rule(ruleset: int, path: str, rights: int, handled_fs: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # gone since it was listed: nothing to grant
    try:
        is_dir = os.fstat(fd).st_mode & 0o170000 == 0o040000  # S_ISDIR, without a path
        allowed = (rights if is_dir else rights & FILE_ONLY) & handled_fs
        rule = struct.pack("=Qi", allowed, fd)
        rbuf = ctypes.create_string_buffer(rule, len(rule))
        if _libc().syscall(SYS_ADD_RULE, ruleset, RULE_PATH_BENEATH, rbuf, 0) < 0:
            _fail(f"landlock_add_rule({path}) failed: {os.strerror(ctypes.get_errno())}")
    finally:
        os.close(fd)


def _add_port_rule(ruleset: int, port: int) -> None:
    """TCP connect() to this port allowed (the package index, DNS over TCP)."""
    rule = struct.pack("=QQ", NET_CONNECT_TCP, port)
    rbuf = ctypes.create_string_buffer(rule, len(rule))
    if _libc().syscall(SYS_ADD_RULE, ruleset, RULE_NET_PORT, rbuf, 0) < 0:
        _fail(f"landlock_add_rule(tcp port {port}) failed: {os.strerror(ctypes.get_errno())}")


def apply_landlock(spec: dict) -> None:
    libc = _libc()
    abi = int(spec["abi"])
    handled_fs = fs_rights(abi) if spec.get("fs", True) else 0
    handled_net = NET_BIND_TCP | NET_CONNECT_TCP if spec.get("deny_tcp") and abi >= 4 else 0
    scoped = 0
    if abi >= 6:
        if spec.get("scope_signal"):
            scoped |= SCOPE_SIGNAL
        if spec.get("scope_abstract_unix"):
            scoped |= SCOPE_ABSTRACT_UNIX_SOCKET
    if not (handled_fs or handled_net or scoped):
        return  # nothing this kernel's Landlock could add (the caller claimed nothing of it)
    ruleset = _ruleset(abi, handled_fs, handled_net, scoped)
    if handled_fs:
        for path, rights in _path_grants(spec):
            _add_path_rule(ruleset, path, rights, handled_fs)
    if handled_net:
        for port in spec.get("tcp_ports", []):
            _add_port_rule(ruleset, int(port))
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        _fail("prctl(PR_SET_NO_NEW_PRIVS) failed")
    if libc.syscall(SYS_RESTRICT_SELF, ruleset, 0) < 0:
        _fail(f"landlock_restrict_self failed: {os.strerror(ctypes.get_errno())}")
    os.close(ruleset)


# -- seccomp: which sockets, no io_uring ------------------------------------------------------

PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000
EPERM = 1
AF_UNIX, AF_INET, AF_INET6, AF_NETLINK = 1, 2, 10, 16
SOCK_STREAM, SOCK_DGRAM = 1, 2
NETLINK_ROUTE = 0  # what getaddrinfo and if_nameindex ask the kernel about interfaces
LD_ABS_W = 0x20  # BPF_LD | BPF_W | BPF_ABS
AND_K = 0x54  # BPF_ALU | BPF_AND | BPF_K
JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
RET_K = 0x06  # BPF_RET | BPF_K
X32_BIT = 0x40000000
# arch -> (AUDIT_ARCH_*, __NR_socket, __NR_io_uring_setup)
ARCHES = {
    "x86_64": (0xC000003E, 41, 425),
    "aarch64": (0xC00000B7, 198, 425),
}
# Which socket families each policy lets socket(2) make. Everything else is refused: AF_VSOCK
# (the VM's port space, outside any namespace), AF_PACKET, raw sockets of every family, netlink
# other than NETLINK_ROUTE, AF_UNIX where the policy says so. (socketpair(2) stays: a connected
# pair reaches nothing outside the process.)
SOCKET_POLICIES = {
    "network-off": (),  # in the run's own network namespace: nothing to reach, unix neither
    "network-on": (AF_UNIX,),
    "network-on-no-unix": (),
}
# seccomp_data: nr at 0, arch at 4, args[i] at 16 + 8 i (low 32 bits first, little endian)
_NR, _ARCH, _ARG0, _ARG1, _ARG2 = 0, 4, 16, 24, 32


def _assemble(code: list) -> list[tuple[int, int, int, int]]:
    """BPF from a list of instructions and labels: a jump names its targets by label."""
    where: dict[str, int] = {}
    for item in code:
        if isinstance(item, str):
            where[item] = sum(1 for c in code[: code.index(item)] if not isinstance(c, str))
    out: list[tuple[int, int, int, int]] = []
    for item in code:
        if isinstance(item, str):
            continue
        op, jt, jf, k = item
        here = len(out)
        jt = where[jt] - here - 1 if isinstance(jt, str) else jt
        jf = where[jf] - here - 1 if isinstance(jf, str) else jf
        out.append((op, jt, jf, k))
    return out


def seccomp_program(machine: str, policy: str = "network-off") -> list[tuple[int, int, int, int]]:
    audit_arch, nr_socket, nr_uring = ARCHES[machine]
    deny = RET_ERRNO | EPERM
    code: list = [
        (LD_ABS_W, 0, 0, _ARCH),
        (JEQ_K, 0, "deny", audit_arch),  # another ABI (i386 on x86_64): none of its calls
        (LD_ABS_W, 0, 0, _NR),
    ]
    if machine == "x86_64":
        code += [(JGE_K, "deny", 0, X32_BIT)]  # the x32 ABI: the same
    code += [
        (JEQ_K, "deny", 0, nr_uring),
        (JEQ_K, 0, "allow", nr_socket),
        (LD_ABS_W, 0, 0, _ARG0),  # the address family
        (JEQ_K, "inet", 0, AF_INET),
        (JEQ_K, "inet", 0, AF_INET6),
        (JEQ_K, "netlink", 0, AF_NETLINK),
    ]
    for family in SOCKET_POLICIES[policy]:
        code += [(JEQ_K, "allow", 0, family)]
    code += [
        (RET_K, 0, 0, deny),  # any other family
        "inet",  # stream and datagram only: no raw sockets, no SOCK_PACKET
        (LD_ABS_W, 0, 0, _ARG1),
        (AND_K, 0, 0, 0xF),  # the type without SOCK_NONBLOCK / SOCK_CLOEXEC
        (JEQ_K, "allow", 0, SOCK_STREAM),
        (JEQ_K, "allow", "deny", SOCK_DGRAM),
        "netlink",
        (LD_ABS_W, 0, 0, _ARG2),
        (JEQ_K, "allow", "deny", NETLINK_ROUTE),
        "deny",  # (BPF jumps only forward: both ends come last)
        (RET_K, 0, 0, deny),
        "allow",
        (RET_K, 0, 0, RET_ALLOW),
    ]
    return _assemble(code)


def seccomp_bytes(machine: str, policy: str = "network-off") -> bytes:
    """The program as the kernel (and bwrap's --seccomp) takes it: struct sock_filter[]."""
    return b"".join(struct.pack("=HBBI", *ins) for ins in seccomp_program(machine, policy))


def apply_seccomp(policy: str) -> None:
    machine = os.uname().machine  # (not platform: its import costs every run)
    if machine not in ARCHES:
        _fail(f"no seccomp filter for {machine}")
    libc = _libc()
    raw = seccomp_bytes(machine, policy)
    filters = ctypes.create_string_buffer(raw, len(raw))

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = SockFprog(len(raw) // 8, ctypes.cast(filters, ctypes.c_void_p))
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        _fail("prctl(PR_SET_NO_NEW_PRIVS) failed")
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        _fail(f"seccomp filter refused: {os.strerror(ctypes.get_errno())}")


def run_tool(path: str) -> None:
    """Run the tool file as `python tool.py` would: a fresh `__main__` module, argv[0] = path.

    `path` all digits: an inherited FD holding the tool's bytes (the runner's sealed memfd, the
    approved bytes); the copy in the working folder is then only for the tool to read."""
    import builtins
    import types

    if path.isdigit():
        fd = int(path)
        source = b"".join(iter(lambda: os.read(fd, 65536), b""))
        os.close(fd)
        path = os.path.join(os.getcwd(), "tool.py")
    else:
        with open(path, "rb") as fh:
            source = fh.read()
    code = compile(source, path, "exec", dont_inherit=True)
    main = types.ModuleType("__main__")
    main.__dict__.update(__file__=path, __builtins__=builtins, __cached__=None)
    sys.modules["__main__"] = main
    sys.argv[:] = [path]
    exec(code, main.__dict__)


MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8


def _mount_libc() -> ctypes.CDLL:
    libc = _libc()
    libc.mount.argtypes = [
        ctypes.c_char_p,
        ctypes.c_char_p,
        ctypes.c_char_p,
        ctypes.c_ulong,
        ctypes.c_void_p,
    ]
    return libc


def mask(folders: list) -> None:
    """An empty read-only tmpfs over each folder, in the run's own mount namespace (unshare's):
    the unix sockets inside are out of reach (Landlock does not check connect())."""
    libc = _mount_libc()
    flags = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC
    for folder in folders:
        if not os.path.isdir(folder):
            continue
        if libc.mount(b"none", os.fsencode(folder), b"tmpfs", flags, None) != 0:
            _fail(f"cannot mask {folder}: {os.strerror(ctypes.get_errno())}")


MS_BIND = 4096


def mask_files(paths: list) -> None:
    """/dev/null bound over each file (a hidden socket outside the masked folders)."""
    libc = _mount_libc()
    for path in paths:
        if not os.path.lexists(path):
            continue
        if libc.mount(b"/dev/null", os.fsencode(path), None, MS_BIND, None) != 0:
            _fail(f"cannot mask {path}: {os.strerror(ctypes.get_errno())}")


def confine(spec: dict) -> None:
    if spec.get("mask"):
        mask(spec["mask"])
    if spec.get("mask_files"):
        mask_files(spec["mask_files"])
    if spec.get("landlock"):
        apply_landlock(spec["landlock"])
    if spec.get("seccomp"):
        apply_seccomp(spec["seccomp"])


def read_spec(fd: int) -> dict:
    """The spec from its memfd (closed once read): a literal written by patch-tui, evaluated
    with no builtins."""
    data = b"".join(iter(lambda: os.read(fd, 65536), b""))
    os.close(fd)
    spec = eval(data.decode("utf-8"), {"__builtins__": {}})  # noqa: S307 - our own literal
    if not isinstance(spec, dict):
        _fail("the sandbox spec is not readable")
    return spec


def add_site(folders: list) -> None:
    """The venv's packages, after confinement: its .pth lines run sandboxed, like the tool."""
    if folders:
        import site

        for folder in folders:
            site.addsitedir(folder)


def run_module(module: str, argv: list) -> None:
    """`python -m module argv...` (the package install's pip), confined like a tool."""
    import runpy

    sys.argv[:] = [module, *argv]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


def main() -> None:
    """Confined first, then the packages' paths, then the tool (`-c SOURCE SPEC_FD TOOL`)."""
    spec = read_spec(int(sys.argv[1]))
    confine(spec)
    add_site(spec.get("site", []))
    if spec.get("module"):
        run_module(spec["module"], list(spec.get("argv", [])))
    else:
        run_tool(sys.argv[2])
