"""The last step before a tool runs under Landlock: confine this process, then run the tool.

    python -I -S -c "$(cat sandbox_exec.py)
    main(SPEC, 'FD')"

Its text is handed to the tool's own Python with `-c` (standard library only: patch-tui itself is
not importable there), followed by one line the runner adds: `main(SPEC, TOOL)`, SPEC a Python
literal (a dict of strings, numbers, booleans and lists: no json import, no parsing at run time).
It confines the process, then runs the tool in it as `python tool.py` would. Confining in the
tool's own process, after `unshare` made the run's namespaces (Landlock forbids the mount that
gives the run its own /proc), costs no second interpreter start-up. SPEC holds:
- "landlock": null, or {"abi", "read", "write", "own", "hidden", "readonly", "sealed", "files_rw",
  "scope_signal", "scope_abstract_unix", "deny_tcp"}: the Landlock ruleset (`apply_landlock`);
- "seccomp_unix": deny socket(AF_UNIX) and io_uring (network: false; Landlock up to ABI 7 does
  not control connect() on a pathname socket, and io_uring can open sockets without socket(2)).
Under bubblewrap this file is not used in the tool's process: bwrap loads the same seccomp
program (`seccomp_bytes`, built by patch-tui) with its `--seccomp FD`.
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


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


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


def apply_landlock(spec: dict) -> None:
    libc = _libc()
    abi = int(spec["abi"])
    handled_fs = fs_rights(abi)
    handled_net = NET_BIND_TCP | NET_CONNECT_TCP if spec.get("deny_tcp") and abi >= 4 else 0
    scoped = 0
    if abi >= 6:
        if spec.get("scope_signal"):
            scoped |= SCOPE_SIGNAL
        if spec.get("scope_abstract_unix"):
            scoped |= SCOPE_ABSTRACT_UNIX_SOCKET
    if abi >= 6:
        attr = struct.pack("=QQQ", handled_fs, handled_net, scoped)
    elif abi >= 4:
        attr = struct.pack("=QQ", handled_fs, handled_net)
    else:
        attr = struct.pack("=Q", handled_fs)
    buf = ctypes.create_string_buffer(attr, len(attr))
    ruleset = libc.syscall(SYS_CREATE_RULESET, buf, ctypes.c_size_t(len(attr)), 0)
    if ruleset < 0:
        _fail(f"landlock_create_ruleset failed: {os.strerror(ctypes.get_errno())}")

    write = handled_fs & ~FS_EXECUTE | read_rights()
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
    for path, rights in grants:
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            continue  # gone since it was listed: nothing to grant
        try:
            is_dir = os.fstat(fd).st_mode & 0o170000 == 0o040000  # S_ISDIR, without a path
            allowed = (rights if is_dir else rights & FILE_ONLY) & handled_fs
            rule = struct.pack("=Qi", allowed, fd)
            rbuf = ctypes.create_string_buffer(rule, len(rule))
            if libc.syscall(SYS_ADD_RULE, ruleset, RULE_PATH_BENEATH, rbuf, 0) < 0:
                _fail(f"landlock_add_rule({path}) failed: {os.strerror(ctypes.get_errno())}")
        finally:
            os.close(fd)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        _fail("prctl(PR_SET_NO_NEW_PRIVS) failed")
    if libc.syscall(SYS_RESTRICT_SELF, ruleset, 0) < 0:
        _fail(f"landlock_restrict_self failed: {os.strerror(ctypes.get_errno())}")
    os.close(ruleset)


# -- seccomp: no AF_UNIX sockets, no io_uring -------------------------------------------------

PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000
EPERM = 1
AF_UNIX = 1
LD_ABS_W = 0x20  # BPF_LD | BPF_W | BPF_ABS
JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
RET_K = 0x06  # BPF_RET | BPF_K
X32_BIT = 0x40000000
# arch -> (AUDIT_ARCH_*, __NR_socket, __NR_io_uring_setup)
ARCHES = {
    "x86_64": (0xC000003E, 41, 425),
    "aarch64": (0xC00000B7, 198, 425),
}


def seccomp_program(machine: str) -> list[tuple[int, int, int, int]]:
    audit_arch, nr_socket, nr_uring = ARCHES[machine]
    deny = RET_ERRNO | EPERM
    prog = [
        (LD_ABS_W, 0, 0, 4),  # seccomp_data.arch
        (JEQ_K, 1, 0, audit_arch),
        (RET_K, 0, 0, deny),  # another ABI (i386 on x86_64): none of its calls
        (LD_ABS_W, 0, 0, 0),  # seccomp_data.nr
    ]
    if machine == "x86_64":
        prog += [(JGE_K, 0, 1, X32_BIT), (RET_K, 0, 0, deny)]  # the x32 ABI: same
    prog += [
        (JEQ_K, 0, 1, nr_uring),
        (RET_K, 0, 0, deny),
        (JEQ_K, 1, 0, nr_socket),
        (RET_K, 0, 0, RET_ALLOW),
        (LD_ABS_W, 0, 0, 16),  # args[0] (low 32 bits, little endian): the address family
        (JEQ_K, 0, 1, AF_UNIX),
        (RET_K, 0, 0, deny),
        (RET_K, 0, 0, RET_ALLOW),
    ]
    return prog


def seccomp_bytes(machine: str) -> bytes:
    """The program as the kernel (and bwrap's --seccomp) takes it: struct sock_filter[]."""
    return b"".join(struct.pack("=HBBI", *ins) for ins in seccomp_program(machine))


def apply_seccomp() -> None:
    machine = os.uname().machine  # (not platform: its import costs every run)
    if machine not in ARCHES:
        _fail(f"no seccomp filter for {machine}")
    libc = _libc()
    raw = seccomp_bytes(machine)
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


def confine(spec: dict) -> None:
    if spec.get("landlock"):
        apply_landlock(spec["landlock"])
    if spec.get("seccomp_unix"):
        apply_seccomp()


def main(spec: dict, tool: str) -> None:
    """Confined first, then the tool (the line the runner appends to this text calls it)."""
    confine(spec)
    run_tool(tool)
