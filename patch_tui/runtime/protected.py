"""What no tool may reach, found by what it is rather than where this process expects it (issue 22).

    protected_paths(store=..., toolbox=..., tool_path=..., runs_dir=..., run_root=...,
                    workspace=...)  -> Protected(hidden, frozen, sealed)
    remember_store(path)      every store patch-tui opens is recorded in the user's state folder
    always_hidden()           /etc/shadow*, /etc/gshadow*, /etc/security/opasswd, ~/.ssh, ...
    aliases(paths)            every other path (bind mount) to the same files

Protected, for every run:
- hidden: every store patch-tui has opened on this machine (the registry), each with its key,
  -wal, -shm and -journal beside the store's real file (a symlinked store keeps them beside the
  link's target), the config and state folders (whatever new files they hold: keys, approvers),
  every run folder, the runs folder, the toolbox's tools and history, the system's password
  files and the user's secret folders;
- frozen (readable, never writable): the venv cache, patch-tui and its Python, and the dotfiles
  and dot-folders at the top of the home folder;
- sealed (nothing made, removed or renamed in the folder itself): each store's folder, a plain
  toolbox's tools folder, the home folder.
Paths are compared with symlinks resolved, and each is hidden under every other name the mount
table gives it (a bind mount, toolbx's /run/host, WSL): a second path to a protected file or to
a folder above it opens nothing.
"""

from __future__ import annotations

import contextlib
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

# The store's files (approvals/store_files.store_files): the database, SQLite's companions, the key.
STORE_SUFFIXES = ("", "-wal", "-shm", "-journal", ".key")
REGISTRY_NAME = "stores.txt"
REGISTRY_MAX = 1000  # lines kept; the oldest go first
# Readable by their owner only where the system is set up right; hidden whenever this user can
# read them (root can): a rule hiding one makes Landlock grant /etc entry by entry.
SYSTEM_SECRETS = ("/etc/shadow*", "/etc/gshadow*", "/etc/security/opasswd")
# The user's secret folders and files, under the home folder.
HOME_SECRETS = (
    ".ssh",
    ".gnupg",
    ".aws",
    ".config/gcloud",
    ".kube",
    ".docker",
    ".netrc",
    ".local/share/keyrings",
    ".password-store",
    # libpq's password and service files and client certificates (a team inbox's store is a
    # PostgreSQL database; a tool run never sees its URL, nor these).
    ".pgpass",
    ".pg_service.conf",
    ".postgresql",
)
# The same files where libpq's environment puts them instead.
LIBPQ_FILE_VARS = ("PGPASSFILE", "PGSERVICEFILE", "PGSSLCERT", "PGSSLKEY", "PGSSLROOTCERT")


@dataclass
class Protected:
    hidden: list[Path] = field(default_factory=list)
    frozen: list[Path] = field(default_factory=list)
    sealed: list[Path] = field(default_factory=list)
    # Why no tool may run now (one line each): a store file with a second name (a hard link)
    # somewhere no mount table or path comparison finds.
    problems: list[str] = field(default_factory=list)


# -- the registry of stores -------------------------------------------------------------------


def registry_path() -> Path:
    from patch_tui.settings import paths

    return paths.state_dir() / REGISTRY_NAME


def remember_store(path: str | os.PathLike[str]) -> None:
    """Record a store file this user opened, so every later run hides it, whichever project it
    runs for. Best effort: a state folder that cannot be written loses nothing but the entry."""
    real = os.path.realpath(path)
    recorded = _recorded()
    if real in recorded:
        return
    registry = registry_path()
    with contextlib.suppress(OSError):
        registry.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if len(recorded) >= REGISTRY_MAX:  # stores since deleted are forgotten
            kept = [p for p in recorded if os.path.lexists(p)][-(REGISTRY_MAX - 1) :]
            tmp = registry.with_name(registry.name + f".{os.getpid()}.new")
            tmp.write_bytes(b"".join(os.fsencode(p) + b"\n" for p in kept))
            os.chmod(tmp, 0o600)
            os.replace(tmp, registry)
        fd = os.open(registry, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            os.write(fd, os.fsencode(real) + b"\n")  # one short write: appends do not interleave
        finally:
            os.close(fd)


def _recorded() -> list[str]:
    try:
        text = registry_path().read_bytes()
    except OSError:
        return []
    return list(dict.fromkeys(os.fsdecode(b) for b in text.splitlines() if b.startswith(b"/")))


def known_stores() -> list[str]:
    """Every store recorded on this machine for this user that is still there."""
    return [p for p in _recorded() if os.path.lexists(p)]


def store_files(store: str | os.PathLike[str]) -> list[Path]:
    """A store's files under its own name and, when it is a symlink, beside its target (where
    SQLite keeps the -wal and -shm)."""
    named = Path(os.path.abspath(store))
    real = Path(os.path.realpath(store))
    out: list[Path] = []
    for base in dict.fromkeys([named, real]):
        out += [base.with_name(base.name + suffix) for suffix in STORE_SUFFIXES]
    return out


# -- secrets that are not patch-tui's ---------------------------------------------------------


def homes() -> list[str]:
    """The user's home folder, by $HOME and by the password database (they may differ)."""
    found = [os.path.expanduser("~")]
    with contextlib.suppress(ImportError, KeyError):
        import pwd

        found.append(pwd.getpwuid(os.geteuid()).pw_dir)
    return list(dict.fromkeys(os.path.realpath(h) for h in found if h and h != "/"))


def agent_sockets() -> list[str]:
    """The agents that sign or decrypt for this user: the ssh-agent (SSH_AUTH_SOCK, whose
    folder too when it is the agent's own, /tmp/ssh-XXXX), gpg-agent's and the keyring's
    folders under /run/user/<uid>. An approver key loaded into ssh-agent signs approvals: no
    tool may reach it, whatever its capabilities."""
    out: list[str] = []
    sock = os.environ.get("SSH_AUTH_SOCK")
    if sock and os.path.isabs(sock):
        out.append(sock)
        folder = os.path.dirname(sock)
        if os.path.basename(folder).startswith("ssh-"):
            out.append(folder)
    with contextlib.suppress(AttributeError):
        run_user = f"/run/user/{os.geteuid()}"
        out += [os.path.join(run_user, name) for name in ("gnupg", "keyring", "ssh-agent")]
    return out


def always_hidden() -> list[str]:
    """The system's password files this user can read, the user's secret folders and agents."""
    import glob

    system = [p for pattern in SYSTEM_SECRETS for p in glob.glob(pattern)]
    out = [p for p in system if os.access(p, os.R_OK)]
    for home in homes():
        out += [os.path.join(home, name) for name in HOME_SECRETS]

    out += agent_sockets()
    out += [os.path.expanduser(v) for v in map(os.environ.get, LIBPQ_FILE_VARS) if v]
    return [os.path.realpath(p) for p in out if os.path.lexists(p)]


def home_dotfiles() -> list[Path]:
    """The dotfiles and dot-folders at the top of the home folder (~/.bashrc, ~/.profile,
    ~/.config, ...): never writable by a tool, even from a workspace that holds the home."""
    out: list[Path] = []
    for home in homes():
        with contextlib.suppress(OSError), os.scandir(home) as entries:
            out += [Path(e.path) for e in entries if e.name.startswith(".")]
    return out


# -- every name of a protected path -----------------------------------------------------------


def _unescape(field: str) -> str:
    # mountinfo writes space, tab, newline and backslash as \ooo
    return field.encode().decode("unicode_escape") if "\\" in field else field


def _mounts() -> list[tuple[str, str, str]]:
    """(device, root inside its filesystem, mount point) for every mount, in mountinfo order."""
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        parts = line.split(" ")
        if len(parts) > 4:
            out.append((parts[2], _unescape(parts[3]), _unescape(parts[4])))
    return out


def _inside(child: str, parent: str) -> bool:
    return child == parent or child.startswith(parent.rstrip("/") + "/")


def _join(base: str, rest: str) -> str:
    return base.rstrip("/") + rest if rest else base


def aliases(paths: list[str]) -> list[str]:
    """Every other path the mount table gives to these (real) paths: where the same folder of the
    same filesystem is mounted again (a bind mount), the path under that mount; where a folder
    inside a protected one is mounted elsewhere, that whole mount."""
    mounts = _mounts()
    if not mounts:
        return []
    out: list[str] = []
    for path in paths:
        holder = None
        for mount in mounts:  # the deepest mount holding the path (the last of equals wins)
            if _inside(path, mount[2]) and (holder is None or len(mount[2]) >= len(holder[2])):
                holder = mount
        if holder is None:
            continue
        device, root, point = holder
        # The path as its filesystem knows it, from that filesystem's root.
        in_fs = _join(root, path[len(point.rstrip("/")) :]) if point != "/" else _join(root, path)
        for dev2, root2, point2 in mounts:
            if dev2 != device or (root2, point2) == (root, point):
                continue
            if _inside(in_fs, root2):
                rest = in_fs[len(root2.rstrip("/")) :] if root2 != "/" else in_fs
                out.append(_join(point2, rest) if rest != "/" else point2)
            elif _inside(root2, in_fs):
                out.append(point2)  # the mount shows only what lies inside the protected path
    return [a for a in dict.fromkeys(out) if a not in paths]


# -- one run's protected set ------------------------------------------------------------------


def protected_paths(
    *,
    store: Path | None,
    toolbox: Path | None,
    tool_path: str | None,
    runs_dir: str | os.PathLike[str] | None,
    run_root: Path,
    workspace: Path | None = None,
) -> Protected:
    """(hidden, frozen, sealed) for one run: what no tool may see, what none may change, and
    the folders in which none may make, remove or rename an entry (see the module's text)."""
    from patch_tui.settings import paths

    out = Protected()
    out.hidden += [run_root, paths.config_file(), paths.config_dir(), paths.state_dir()]
    # The key and approvers files wherever the settings put them (PATCH_TUI_CONFIG in a project,
    # `approver_key`, `approvers_file`): hidden, and nothing made beside the config file, so a
    # tool cannot create an approvers file where none was (zero config would then trust it).
    from patch_tui.settings.config import plain_setting

    identity = paths.approval_identity_files(
        plain_setting("approver_key", None), plain_setting("approvers_file", None)
    )
    out.hidden += identity
    out.sealed.append(paths.config_file().expanduser().parent)
    out.frozen += [paths.cache_dir(), Path(__file__).resolve().parent.parent]
    out.frozen += [Path(sys.prefix), Path(sys.base_prefix)]
    stores = [str(paths.default_store()), *known_stores()]
    if store is not None:
        stores.append(str(store))
    for one in dict.fromkeys(stores):
        if "://" in one:
            continue  # a database (the team inbox): no files here; its credentials: always_hidden
        files = store_files(one)
        out.hidden += files
        out.sealed += list(dict.fromkeys(f.parent for f in files))
        out.problems += _second_names(files)
    _toolboxes(out, toolbox, tool_path, paths.default_toolbox())
    if runs_dir is not None:
        out.hidden.append(Path(runs_dir))
    if workspace is not None:
        real_ws = os.path.realpath(workspace)
        for home in homes():
            if _inside(home, real_ws):  # the home is inside the workspace: its dotfiles stay
                out.frozen += home_dotfiles()
                out.sealed.append(Path(home))
    return out


def _second_names(files: list[Path]) -> list[str]:
    """A store file with more than one name: the other name could lie anywhere a tool may read
    (a hard link is the same file under another path), so no run starts until it is removed."""
    out: list[str] = []
    for f in dict.fromkeys(files):
        with contextlib.suppress(OSError):
            st = os.lstat(f)
            if st.st_nlink > 1 and not os.path.isdir(f):
                out.append(
                    f"refused: {f} has {st.st_nlink} names (a hard link elsewhere), which a "
                    f"tool could read; remove the other link (find / -samefile {f}); nothing "
                    "was run"
                )
    return out


def _toolboxes(out: Protected, toolbox: Path | None, tool_path: str | None, default: Path) -> None:
    """The toolboxes' tools, runs, history and trash (a Patch toolbox: all of it)."""
    from patch_tui.runtime.toolbox import Toolbox, ToolboxError

    boxes: list[Path] = [default]
    if toolbox is not None:
        boxes.append(Path(toolbox))
    if tool_path is not None:
        boxes.append(Path(tool_path))
        out.hidden.append(Path(tool_path))
    for ref in boxes:
        try:
            box = Toolbox.open(ref)
        except (ToolboxError, OSError):
            continue
        if box.is_patch_toolbox:
            out.hidden.append(box.root)
            continue
        out.hidden += [box.runs_dir, box.history_dir, box.trash_dir]
        drafts = getattr(box, "drafts_dir", None)
        if drafts is not None:
            out.hidden.append(drafts)
        with contextlib.suppress(OSError):
            out.hidden += list(box.tools_dir.glob("*.py"))
        out.sealed.append(box.tools_dir)
