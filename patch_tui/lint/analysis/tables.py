"""What the body rules look for: network modules, file and process calls, irreversible verbs,
pure constructors; and the small classifiers the walker asks about single names and calls."""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from typing import Literal

from patch_tui.lint.analysis.annotations import last_name, words

FileKind = Literal["read", "create", "append", "write", "delete", "move"]

# --- what the rules look for ------------------------------------------------------------------

# A dotted module (or one of its parents) in here means the code talks to the network.
NETWORK_MODULES: frozenset[str] = frozenset(
    {
        "requests",
        "httpx",
        "urllib.request",
        "urllib3",
        "http.client",
        "http.server",
        "socket",
        "socketserver",
        "aiohttp",
        "ftplib",
        "smtplib",
        "poplib",
        "imaplib",
        "nntplib",
        "telnetlib",
        "xmlrpc.client",
        "websockets",
        "websocket",
        "paramiko",
        "pycurl",
        "httplib2",
        "grpc",
        "boto3",
        "botocore",
        "slack_sdk",
        "openai",
        "anthropic",
        "tweepy",
        "redis",
        "pymongo",
        "psycopg2",
        "psycopg",
        "pymysql",
        "asyncpg",
        "feedparser",
        "selenium",
        "playwright",
        "scrapy",
        "mechanize",
        "treq",
        "googleapiclient",
        "google.cloud",
        "tornado.httpclient",
        "dns.resolver",
    }
)
_NETWORK_ROOTS: frozenset[str] = frozenset(m.partition(".")[0] for m in NETWORK_MODULES)
NETWORK_CALLS: frozenset[str] = frozenset(
    {"asyncio.open_connection", "asyncio.start_server", "asyncio.open_unix_connection"}
)
HTTP_CLIENTS: frozenset[str] = frozenset({"requests", "httpx", "aiohttp", "urllib3"})

# open()-like calls: qualified name -> index of the positional `mode` argument, default mode.
OPEN_CALLS: dict[str, tuple[int, str]] = {
    "open": (1, "r"),
    "io.open": (1, "r"),
    "codecs.open": (1, "r"),
    "gzip.open": (1, "rb"),
    "bz2.open": (1, "rb"),
    "lzma.open": (1, "rb"),
    "tarfile.open": (1, "r"),
    "zipfile.ZipFile": (1, "r"),
    "shelve.open": (1, "c"),
    "dbm.open": (1, "r"),
}
FILE_CALLS: dict[str, FileKind] = {
    "os.remove": "delete",
    "os.unlink": "delete",
    "os.rmdir": "delete",
    "os.removedirs": "delete",
    "shutil.rmtree": "delete",
    "os.rename": "move",
    "os.renames": "move",
    "os.replace": "move",
    "shutil.move": "move",
    "os.mkdir": "create",
    "os.makedirs": "create",
    "os.symlink": "create",
    "os.link": "create",
    "os.mkfifo": "create",
    "tempfile.mkstemp": "create",
    "tempfile.mkdtemp": "create",
    "tempfile.NamedTemporaryFile": "create",
    "tempfile.TemporaryFile": "create",
    "tempfile.TemporaryDirectory": "create",
    "tempfile.SpooledTemporaryFile": "create",
    "os.chmod": "write",
    "os.chown": "write",
    "os.truncate": "write",
    "os.utime": "write",
    "shutil.copy": "write",
    "shutil.copy2": "write",
    "shutil.copyfile": "write",
    "shutil.copytree": "write",
    "shutil.copymode": "write",
    "shutil.copystat": "write",
    "shutil.make_archive": "write",
    "shutil.unpack_archive": "write",
    "shutil.chown": "write",
    "sqlite3.connect": "write",
    "os.listdir": "read",
    "os.scandir": "read",
    "os.walk": "read",
    "os.stat": "read",
    "os.lstat": "read",
    "os.access": "read",
    "os.path.exists": "read",
    "os.path.lexists": "read",
    "os.path.isfile": "read",
    "os.path.isdir": "read",
    "os.path.islink": "read",
    "os.path.getsize": "read",
    "os.path.getmtime": "read",
    "os.path.getatime": "read",
    "os.path.getctime": "read",
    "os.path.samefile": "read",
    "glob.glob": "read",
    "glob.iglob": "read",
    "shutil.disk_usage": "read",
    "filecmp.cmp": "read",
}
# pathlib methods; the first group only exists on paths, so any receiver counts once pathlib
# is imported; the second group (open, rename, replace, ...) also names str/dict methods, so the
# receiver must be a known path.
PATH_ONLY_METHODS: dict[str, FileKind] = {
    "read_text": "read",
    "read_bytes": "read",
    "iterdir": "read",
    "rglob": "read",
    "is_file": "read",
    "is_dir": "read",
    "is_symlink": "read",
    "write_text": "write",
    "write_bytes": "write",
    "lchmod": "write",
    "mkdir": "create",
    "touch": "create",
    "symlink_to": "create",
    "hardlink_to": "create",
    "unlink": "delete",
    "rmdir": "delete",
}
PATH_METHODS: dict[str, FileKind] = {
    **PATH_ONLY_METHODS,
    "open": "read",
    "glob": "read",
    "stat": "read",
    "exists": "read",
    "samefile": "read",
    "owner": "read",
    "group": "read",
    "chmod": "write",
    "rename": "move",
    "replace": "move",
}
PATH_CONSTRUCTORS: frozenset[str] = frozenset(
    {
        "pathlib.Path",
        "pathlib.PurePath",
        "pathlib.PosixPath",
        "pathlib.WindowsPath",
        "pathlib.Path.home",
        "pathlib.Path.cwd",
    }
)
PATH_DERIVED: frozenset[str] = frozenset(
    {
        "resolve",
        "absolute",
        "expanduser",
        "with_name",
        "with_suffix",
        "with_stem",
        "joinpath",
        "relative_to",
    }
)
PATH_ITERATORS: frozenset[str] = frozenset({"iterdir", "glob", "rglob"})

# Calls that import a module by a name given as a value (PT048): the body rules only see
# `import` statements.
DYNAMIC_IMPORTS: frozenset[str] = frozenset(
    {"__import__", "builtins.__import__", "importlib.import_module", "importlib.__import__"}
)
# Module attributes whose assignment changes what the body rules assume (PT049): the entry
# point test, how names and imports resolve.
MODULE_DUNDERS: frozenset[str] = frozenset(
    {"__name__", "__builtins__", "__import__", "__spec__", "__loader__", "__package__"}
)
EXEC_CALLS: frozenset[str] = frozenset(
    {
        "subprocess.run",
        "subprocess.call",
        "subprocess.check_call",
        "subprocess.check_output",
        "subprocess.Popen",
        "subprocess.getoutput",
        "subprocess.getstatusoutput",
        "os.system",
        "os.popen",
        "os.posix_spawn",
        "os.posix_spawnp",
        "exec",
        "eval",
        "builtins.exec",
        "builtins.eval",
        "asyncio.create_subprocess_exec",
        "asyncio.create_subprocess_shell",
        "pty.spawn",
    }
)
EXEC_PREFIXES: tuple[str, ...] = ("os.exec", "os.spawn")

ENV_GETTERS: frozenset[str] = frozenset(
    {"os.environ.get", "os.getenv", "os.environ.setdefault", "os.environ.pop", "os.environb.get"}
)
TOKEN_VAR = "PATCH_ACCESS_TOKEN"

# Verbs whose calls cannot be taken back. "Weak" ones also name everyday in-memory operations
# (list.remove, DataFrame.drop, queue.put): they count only on a module function (os.remove)
# or, for put/patch, on an HTTP client.
STRONG_VERBS: frozenset[str] = frozenset(
    {
        "send",
        "sendall",
        "sendmail",
        "post",
        "publish",
        "transfer",
        "pay",
        "delete",
        "destroy",
        "purge",
        "wipe",
        "erase",
        "refund",
        "charge",
        "withdraw",
        "revoke",
        "unsubscribe",
        "rmtree",
        "unlink",
        "tweet",
        "upload",
        "deploy",
    }
)
WEAK_VERBS: frozenset[str] = frozenset(
    {"remove", "drop", "cancel", "kill", "truncate", "put", "patch"}
)
_VERBS = STRONG_VERBS | WEAK_VERBS
SQL_DESTRUCTIVE = re.compile(r"^\s*(DELETE|DROP|TRUNCATE|UPDATE)\b", re.IGNORECASE)
HTTP_WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})

# Calls that are fine in a module-level constant: pure constructors and compilers.
PURE_CALLS: frozenset[str] = frozenset(
    {
        "range",
        "len",
        "str",
        "int",
        "float",
        "bool",
        "bytes",
        "tuple",
        "list",
        "dict",
        "set",
        "frozenset",
        "sorted",
        "reversed",
        "enumerate",
        "zip",
        "map",
        "filter",
        "min",
        "max",
        "sum",
        "abs",
        "round",
        "chr",
        "ord",
        "object",
        "type",
        "repr",
        "format",
        "any",
        "all",
        "isinstance",
        "hasattr",
        "getattr",
        "property",
        "staticmethod",
        "classmethod",
        "slice",
        "re.compile",
        "re.escape",
        "collections.namedtuple",
        "collections.OrderedDict",
        "collections.defaultdict",
        "collections.Counter",
        "collections.deque",
        "dataclasses.field",
        "dataclasses.dataclass",
        "functools.partial",
        "functools.lru_cache",
        "functools.cache",
        "functools.wraps",
        "functools.total_ordering",
        "string.Template",
        "datetime.timedelta",
        "datetime.timezone",
        "datetime.datetime",
        "datetime.date",
        "datetime.time",
        "decimal.Decimal",
        "fractions.Fraction",
        "struct.Struct",
        "logging.getLogger",
        "textwrap.dedent",
        "uuid.UUID",
        "os.path.join",
        "os.path.dirname",
        "os.path.basename",
        "os.path.splitext",
        "pathlib.Path",
        "pathlib.PurePath",
        "pathlib.PurePosixPath",
        "html.escape",
        "math.sqrt",
        "math.log",
        "math.pow",
    }
)
PURE_PREFIXES: tuple[str, ...] = (
    "typing.",
    "typing_extensions.",
    "enum.",
    "operator.",
    "itertools.",
    "ipaddress.",
    "zoneinfo.ZoneInfo",
    "string.",
    "collections.abc.",
    # declarative model fields in class bodies
    "pydantic.",
    "attrs.",
    "attr.",
    "msgspec.",
)
# First words that are not the verb they look like (post_process is not an HTTP POST).
NOT_VERBS: frozenset[tuple[str, str]] = frozenset(
    {
        ("post", "process"),
        ("post", "processing"),
        ("post", "init"),
        ("post", "order"),
        ("send", "keys"),
        ("drop", "duplicates"),
        ("remove", "duplicates"),
        ("remove", "empty"),
        ("remove", "blank"),
        ("remove", "whitespace"),
        ("remove", "accents"),
        ("remove", "tags"),
        ("remove", "punctuation"),
        ("remove", "stopwords"),
    }
)


@lru_cache(maxsize=4096)
def verb_candidates(name: str) -> tuple[bool, tuple[str, ...]]:
    """Whether `name` is a single word, and the words of it that may be an irreversible verb.

    The verb comes first (send_message, sendMessage), or first in the last segment of a
    namespaced API name (chat_postMessage). Cached, and empty for nearly every name (append,
    lower, get), so most calls are judged by one lookup.
    """
    ws = words(name)
    if not ws:
        return False, ()
    candidates = [ws[0]]
    last_segment = name.rsplit("_", 1)[-1]
    if last_segment != name and last_segment != last_segment.lower():
        candidates += words(last_segment)[:1]
    if ws[:2] in NOT_VERBS:
        candidates = candidates[1:]
    return len(ws) == 1, tuple(w for w in candidates if w in _VERBS)


def network_module(dotted: str) -> str | None:
    # Asked for every call of every file: almost no name starts with a network module's root,
    # so that one set lookup answers before any splitting and joining.
    if dotted.partition(".")[0] not in _NETWORK_ROOTS:
        return None
    parts = dotted.split(".")
    for n in range(1, len(parts) + 1):
        prefix = ".".join(parts[:n])
        if prefix in NETWORK_MODULES:
            return prefix
    return None


def in_memory_db(node: ast.Call, q: str) -> bool:
    first = node.args[0] if node.args else None
    return q == "sqlite3.connect" and isinstance(first, ast.Constant) and first.value == ":memory:"


def open_mode(node: ast.Call, index: int, default: str) -> str | None:
    """The mode string an open()-like call uses; None when it is computed at run time."""
    mode: ast.expr | None = node.args[index] if len(node.args) > index else None
    for kw in node.keywords:
        if kw.arg == "mode":
            mode = kw.value
    if mode is None:
        return default
    if isinstance(mode, ast.Constant) and isinstance(mode.value, str):
        return mode.value
    return None


def mode_kind(mode: str | None) -> FileKind:
    if mode is None:
        return "write"  # a mode computed at run time may write: assume it does
    if "w" in mode or "+" in mode or mode == "c":
        return "write"
    if "x" in mode:
        return "create"
    if "a" in mode:
        return "append"
    return "read"


def is_main_test(test: ast.expr) -> bool:
    if not (
        isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)
    ):
        return False
    sides = [test.left, test.comparators[0]]
    names = [s for s in sides if isinstance(s, ast.Name) and s.id == "__name__"]
    consts = [s for s in sides if isinstance(s, ast.Constant) and s.value == "__main__"]
    return len(names) == 1 and len(consts) == 1


def is_type_checking(test: ast.expr) -> bool:
    return last_name(test) == "TYPE_CHECKING"


def catches_import_error(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(last_name(t) in ("ImportError", "ModuleNotFoundError", "Exception") for t in types)
