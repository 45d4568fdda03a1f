"""One pass over the body's AST that collects every fact the body rules (PT031-PT046) need.

The walk is iterative and in source order (a hostile file with a 10,000-term expression must not
blow the Python stack), and each node is visited once. Every stack entry carries where the node
runs: at import time (`MODULE`), inside the `__main__` guard (`GUARD`), or inside a function.
Rules then only read `BodyFacts`; none of them walks the tree again.

Names are resolved through the file's imports (`import urllib.request as ur` makes `ur.urlopen`
read as `urllib.request.urlopen`), which is enough for tool files: they are one short script.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal

from patch_tui.format.fields import json_type

MODULE = ""  # runs at import time
GUARD = "__main__"  # inside `if __name__ == "__main__":`
LAMBDA = "lambda"

FileKind = Literal["read", "create", "append", "write", "delete", "move"]

# --- what the rules look for ------------------------------------------------------------------

# A dotted module (or one of its parents) in here means the code talks to the network.
NETWORK_MODULES: frozenset[str] = frozenset(
    {
        "requests", "httpx", "urllib.request", "urllib3", "http.client", "http.server",
        "socket", "socketserver", "aiohttp", "ftplib", "smtplib", "poplib", "imaplib",
        "nntplib", "telnetlib", "xmlrpc.client", "websockets", "websocket", "paramiko",
        "pycurl", "httplib2", "grpc", "boto3", "botocore", "slack_sdk", "openai", "anthropic",
        "tweepy", "redis", "pymongo", "psycopg2", "psycopg", "pymysql", "asyncpg",
        "feedparser", "selenium", "playwright", "scrapy", "mechanize", "treq",
        "googleapiclient", "google.cloud", "tornado.httpclient", "dns.resolver",
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
    "os.remove": "delete", "os.unlink": "delete", "os.rmdir": "delete",
    "os.removedirs": "delete", "shutil.rmtree": "delete",
    "os.rename": "move", "os.renames": "move", "os.replace": "move", "shutil.move": "move",
    "os.mkdir": "create", "os.makedirs": "create", "os.symlink": "create", "os.link": "create",
    "os.mkfifo": "create", "tempfile.mkstemp": "create", "tempfile.mkdtemp": "create",
    "tempfile.NamedTemporaryFile": "create", "tempfile.TemporaryFile": "create",
    "tempfile.TemporaryDirectory": "create", "tempfile.SpooledTemporaryFile": "create",
    "os.chmod": "write", "os.chown": "write", "os.truncate": "write", "os.utime": "write",
    "shutil.copy": "write", "shutil.copy2": "write", "shutil.copyfile": "write",
    "shutil.copytree": "write", "shutil.copymode": "write", "shutil.copystat": "write",
    "shutil.make_archive": "write", "shutil.unpack_archive": "write", "shutil.chown": "write",
    "sqlite3.connect": "write",
    "os.listdir": "read", "os.scandir": "read", "os.walk": "read", "os.stat": "read",
    "os.lstat": "read", "os.access": "read", "os.path.exists": "read",
    "os.path.lexists": "read", "os.path.isfile": "read", "os.path.isdir": "read",
    "os.path.islink": "read", "os.path.getsize": "read", "os.path.getmtime": "read",
    "os.path.getatime": "read", "os.path.getctime": "read", "os.path.samefile": "read",
    "glob.glob": "read", "glob.iglob": "read", "shutil.disk_usage": "read",
    "filecmp.cmp": "read",
}
# pathlib methods; the first group only exists on paths, so any receiver counts once pathlib
# is imported; the second group (open, rename, replace, ...) also names str/dict methods, so the
# receiver must be a known path.
PATH_ONLY_METHODS: dict[str, FileKind] = {
    "read_text": "read", "read_bytes": "read", "iterdir": "read", "rglob": "read",
    "is_file": "read", "is_dir": "read", "is_symlink": "read",
    "write_text": "write", "write_bytes": "write", "lchmod": "write",
    "mkdir": "create", "touch": "create", "symlink_to": "create", "hardlink_to": "create",
    "unlink": "delete", "rmdir": "delete",
}
PATH_METHODS: dict[str, FileKind] = {
    **PATH_ONLY_METHODS,
    "open": "read", "glob": "read", "stat": "read", "exists": "read", "samefile": "read",
    "owner": "read", "group": "read", "chmod": "write", "rename": "move", "replace": "move",
}
PATH_CONSTRUCTORS: frozenset[str] = frozenset(
    {
        "pathlib.Path", "pathlib.PurePath", "pathlib.PosixPath", "pathlib.WindowsPath",
        "pathlib.Path.home", "pathlib.Path.cwd",
    }
)
PATH_DERIVED: frozenset[str] = frozenset(
    {
        "resolve", "absolute", "expanduser", "with_name", "with_suffix", "with_stem",
        "joinpath", "relative_to",
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
        "subprocess.run", "subprocess.call", "subprocess.check_call", "subprocess.check_output",
        "subprocess.Popen", "subprocess.getoutput", "subprocess.getstatusoutput", "os.system",
        "os.popen", "os.posix_spawn", "os.posix_spawnp", "exec", "eval", "builtins.exec",
        "builtins.eval", "asyncio.create_subprocess_exec", "asyncio.create_subprocess_shell",
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
        "send", "sendall", "sendmail", "post", "publish", "transfer", "pay", "delete",
        "destroy", "purge", "wipe", "erase", "refund", "charge", "withdraw", "revoke",
        "unsubscribe", "rmtree", "unlink", "tweet", "upload", "deploy",
    }
)
WEAK_VERBS: frozenset[str] = frozenset({"remove", "drop", "cancel", "kill", "truncate", "put", "patch"})
_VERBS = STRONG_VERBS | WEAK_VERBS
SQL_DESTRUCTIVE = re.compile(r"^\s*(DELETE|DROP|TRUNCATE|UPDATE)\b", re.IGNORECASE)
HTTP_WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})

# Calls that are fine in a module-level constant: pure constructors and compilers.
PURE_CALLS: frozenset[str] = frozenset(
    {
        "range", "len", "str", "int", "float", "bool", "bytes", "tuple", "list", "dict", "set",
        "frozenset", "sorted", "reversed", "enumerate", "zip", "map", "filter", "min", "max",
        "sum", "abs", "round", "chr", "ord", "object", "type", "repr", "format", "any", "all",
        "isinstance", "hasattr", "getattr", "property", "staticmethod", "classmethod", "slice",
        "re.compile", "re.escape", "collections.namedtuple", "collections.OrderedDict",
        "collections.defaultdict", "collections.Counter", "collections.deque",
        "dataclasses.field", "dataclasses.dataclass", "functools.partial", "functools.lru_cache",
        "functools.cache", "functools.wraps", "functools.total_ordering", "string.Template",
        "datetime.timedelta", "datetime.timezone", "datetime.datetime", "datetime.date",
        "datetime.time", "decimal.Decimal", "fractions.Fraction", "struct.Struct",
        "logging.getLogger", "textwrap.dedent", "uuid.UUID", "os.path.join", "os.path.dirname",
        "os.path.basename", "os.path.splitext", "pathlib.Path", "pathlib.PurePath",
        "pathlib.PurePosixPath", "html.escape", "math.sqrt", "math.log", "math.pow",
    }
)
PURE_PREFIXES: tuple[str, ...] = (
    "typing.", "typing_extensions.", "enum.", "operator.", "itertools.", "ipaddress.",
    "zoneinfo.ZoneInfo", "string.", "collections.abc.",
    # declarative model fields in class bodies
    "pydantic.", "attrs.", "attr.", "msgspec.",
)
# First words that are not the verb they look like (post_process is not an HTTP POST).
NOT_VERBS: frozenset[tuple[str, str]] = frozenset(
    {("post", "process"), ("post", "processing"), ("post", "init"), ("post", "order"),
     ("send", "keys"), ("drop", "duplicates"), ("remove", "duplicates"), ("remove", "empty"),
     ("remove", "blank"), ("remove", "whitespace"), ("remove", "accents"), ("remove", "tags"),
     ("remove", "punctuation"), ("remove", "stopwords")}
)

# --- facts ------------------------------------------------------------------------------------


@dataclass
class Param:
    name: str
    node: ast.arg
    annotation: ast.expr | None
    default: ast.expr | None
    kind: Literal["positional_only", "positional", "keyword_only"]


@dataclass
class MainInfo:
    node: ast.FunctionDef | ast.AsyncFunctionDef
    params: list[Param]
    vararg: ast.arg | None
    kwarg: ast.arg | None

    @property
    def is_async(self) -> bool:
        return isinstance(self.node, ast.AsyncFunctionDef)

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    @property
    def header_end_line(self) -> int:
        """The last line of the `def main(...)` header (signature may span lines)."""
        end = self.node.lineno
        for sub in (*self.params, self.vararg, self.kwarg):
            if sub is None:
                continue
            parts: list[ast.AST | None] = (
                [sub.node, sub.annotation, sub.default] if isinstance(sub, Param) else [sub]
            )
            for part in parts:
                if part is not None:
                    end = max(end, getattr(part, "end_lineno", None) or end)
        if self.node.returns is not None:
            end = max(end, self.node.returns.end_lineno or end)
        return end


@dataclass
class Guard:
    node: ast.If
    reads_json_stdin: bool
    prints_json_result: bool
    calls_main_with_kwargs: bool

    @property
    def ok(self) -> bool:
        return self.reads_json_stdin and self.prints_json_result and self.calls_main_with_kwargs


@dataclass
class FileUse:
    node: ast.AST
    kind: FileKind
    what: str  # the call, for messages: "open(..., 'w')", "os.remove", "Path.unlink"


@dataclass
class Use:
    node: ast.AST
    what: str


@dataclass
class ImportUse:
    module: str  # full dotted module ("urllib.request", "bs4")
    node: ast.Import | ast.ImportFrom
    optional: bool  # inside try/except ImportError or `if TYPE_CHECKING:`


@dataclass
class BodyFacts:
    tree: ast.Module
    imports: list[ImportUse] = field(default_factory=list)
    # top-level module name -> its import statements, for "is X imported" questions
    modules: dict[str, list[ast.Import | ast.ImportFrom]] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)  # local name -> dotted name
    main: MainInfo | None = None
    main_candidates: list[ast.AST] = field(default_factory=list)  # nested or non-function `main`
    guard: Guard | None = None
    import_time_work: list[ast.stmt] = field(default_factory=list)
    network: dict[str, ast.AST] = field(default_factory=dict)  # module -> first use
    file_access: list[FileUse] = field(default_factory=list)
    exec_calls: list[Use] = field(default_factory=list)
    env_reads: dict[str, list[ast.AST]] = field(default_factory=dict)
    token_uses: list[ast.AST] = field(default_factory=list)
    irreversible: list[Use] = field(default_factory=list)
    strings: set[str] = field(default_factory=set)  # short identifier-like string constants
    # The rules' blind spots (PT048, PT049): imports by a name only known at run time, and
    # module dunders (`__name__`, `__builtins__`, ...) assigned at import time.
    dynamic_imports: list[Use] = field(default_factory=list)
    dunder_assignments: list[Use] = field(default_factory=list)

    @property
    def token_read(self) -> bool:
        return bool(self.token_uses)

    def imported(self, top: str) -> bool:
        return top in self.modules


# --- annotations ------------------------------------------------------------------------------

_ANNOTATION_TYPES: dict[str, frozenset[str] | None] = {
    "str": frozenset({"string"}),
    "Path": frozenset({"string"}),
    "PurePath": frozenset({"string"}),
    "LiteralString": frozenset({"string"}),
    "int": frozenset({"integer"}),
    "float": frozenset({"number", "integer"}),  # a float parameter takes ints too
    "complex": frozenset({"number", "integer"}),
    "Decimal": frozenset({"number", "integer"}),
    "bool": frozenset({"boolean"}),
    "list": frozenset({"array"}),
    "List": frozenset({"array"}),
    "tuple": frozenset({"array"}),
    "Tuple": frozenset({"array"}),
    "set": frozenset({"array"}),
    "Set": frozenset({"array"}),
    "frozenset": frozenset({"array"}),
    "FrozenSet": frozenset({"array"}),
    "Sequence": frozenset({"array"}),
    "MutableSequence": frozenset({"array"}),
    "Iterable": frozenset({"array"}),
    "Collection": frozenset({"array"}),
    "dict": frozenset({"object"}),
    "Dict": frozenset({"object"}),
    "Mapping": frozenset({"object"}),
    "MutableMapping": frozenset({"object"}),
    "None": frozenset({"null"}),
    "NoneType": frozenset({"null"}),
    "Any": None,
    "object": None,
}
TYPE_TO_ANNOTATION: dict[str, str] = {
    "string": "str",
    "integer": "int",
    "number": "float",
    "boolean": "bool",
    "array": "list",
    "object": "dict",
}


def _last_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Constant) and node.value is None:
        return "None"
    return None


def annotation_types(node: ast.expr | None) -> frozenset[str] | None:
    """The JSON types a parameter annotation accepts; None means anything (or unknown)."""
    try:
        return _annotation_types(node)
    except RecursionError:  # `int | int | ...` ten thousand times
        return None


def _annotation_types(node: ast.expr | None) -> frozenset[str] | None:
    if node is None:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:  # a string annotation: "list[str]"
            node = ast.parse(node.value, mode="eval").body
        except SyntaxError:
            return None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        left, right = _annotation_types(node.left), _annotation_types(node.right)
        return None if left is None or right is None else left | right
    if isinstance(node, ast.Subscript):
        base = _last_name(node.value)
        args = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if base == "Optional":
            inner = _annotation_types(args[0])
            return None if inner is None else inner | {"null"}
        if base == "Union":
            out: frozenset[str] = frozenset()
            for arg in args:
                got = _annotation_types(arg)
                if got is None:
                    return None
                out |= got
            return out
        if base == "Annotated":
            return _annotation_types(args[0])
        if base == "Literal":
            kinds: set[str] = set()
            for arg in args:
                value = arg.value if isinstance(arg, ast.Constant) else object()
                kinds |= _value_types(value) or {"string"}
            return frozenset(kinds)
        return _ANNOTATION_TYPES.get(base or "", None)
    name = _last_name(node)
    return _ANNOTATION_TYPES.get(name or "", None)


def annotation_items(node: ast.expr | None) -> str | None:
    """The element type of a list annotation (`list[str]` -> "string"), if it says."""
    try:
        return _annotation_items(node)
    except RecursionError:
        return None


def _annotation_items(node: ast.expr | None) -> str | None:
    if isinstance(node, ast.BinOp):
        return _annotation_items(node.left) or _annotation_items(node.right)
    if not isinstance(node, ast.Subscript):
        return None
    base = _last_name(node.value)
    if base in ("Optional", "Annotated"):
        inner = node.slice.elts[0] if isinstance(node.slice, ast.Tuple) else node.slice
        return _annotation_items(inner)
    if _ANNOTATION_TYPES.get(base or "") != frozenset({"array"}):
        return None
    inner = node.slice.elts[0] if isinstance(node.slice, ast.Tuple) else node.slice
    types = annotation_types(inner)
    return preferred_type(types) if types else None


def _value_types(value: object) -> set[str]:
    # A literal that JSON cannot hold (bytes, complex, ...) has no type to compare.
    if value is not None and not isinstance(value, bool | int | float | str | list | tuple | dict):
        return set()
    return {json_type(value)}


def value_type(value: object) -> str | None:
    """The manifest type of a JSON value."""
    found = _value_types(value) - {"null"}
    return next(iter(found)) if found else None


def preferred_type(types: frozenset[str] | None) -> str | None:
    """One manifest type out of what an annotation accepts (float -> number, not integer)."""
    if not types:
        return None
    for t in ("string", "number", "integer", "boolean", "array", "object"):
        if t in types:
            return t
    return None


def literal_value(node: ast.expr | None) -> tuple[bool, object]:
    """(True, value) when node is a JSON-compatible literal."""
    if node is None:
        return False, None
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None
    if isinstance(value, tuple):
        value = list(value)
    return (_json_like(value), value)


def _json_like(value: object, depth: int = 0) -> bool:
    if depth > 20:
        return False
    if value is None or isinstance(value, bool | int | float | str):
        return True
    if isinstance(value, list):
        return all(_json_like(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _json_like(v, depth + 1) for k, v in value.items())
    return False


_WORD_RE = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


@lru_cache(maxsize=4096)
def words(name: str) -> tuple[str, ...]:
    """snake_case and camelCase split into lowercase words (cached: names repeat a lot)."""
    return tuple(w.lower() for w in _WORD_RE.findall(name))


# A call's qualified name -> the fact it gives the region it runs in (json.dump also prints).
_CALL_FLAGS: dict[str, str] = {
    "json.load": "json_load", "json.loads": "json_load",
    "json.dumps": "json_dumps", "json.dump": "json_dumps",
    "print": "print", "sys.stdout.write": "print", "sys.stdout.buffer.write": "print",
    "input": "stdin", "main": "main_kwargs",
}

# --- the pass ---------------------------------------------------------------------------------


def analyse(tree: ast.Module) -> BodyFacts:
    """Collect every fact the body rules need, in one walk of the tree."""
    return _Analyser(tree).run()


# Fields that never hold a node worth visiting: names and flags, expression contexts and
# operators (Load, Add, Eq: a third of all nodes, carrying no fact), import aliases (read by
# _import directly) and a Constant's value.
_SKIP_FIELDS = frozenset(
    {"id", "attr", "name", "arg", "module", "level", "kind", "type_comment", "conversion",
     "is_async", "simple", "ctx", "op", "ops", "names", "tag"}
)
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {ast.Constant: ()}
_TRY_STAR: type | None = getattr(ast, "TryStar", None)


def _child_fields(kind: type) -> tuple[str, ...]:
    fields = getattr(kind, "_fields", ())
    return tuple(f for f in reversed(fields) if f not in _SKIP_FIELDS)


_Item = tuple[ast.AST, str, "ast.stmt | None", bool]  # node, region, module statement, optional


class _Analyser:
    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.facts = BodyFacts(tree)
        self.aliases = self.facts.aliases
        self.path_names: set[str] = set()
        self.top_defs: dict[str, ast.AST] = {}
        self.top_classes: set[str] = set()
        self.flags: dict[str, set[str]] = {}  # region -> guard-relevant facts
        self.region_calls: dict[str, set[str]] = {}  # region -> names of functions it calls
        self.work_ids: set[int] = set()
        self.consumed: set[int] = set()  # constants already counted as env reads
        self.guard_node: ast.If | None = None
        self.http_client = False

    def run(self) -> BodyFacts:
        facts = self.facts
        stack: list[_Item] = [(stmt, MODULE, None, False) for stmt in reversed(self.tree.body)]
        top_ids = {id(s) for s in self.tree.body}
        push = stack.append
        child_fields = _CHILD_FIELDS
        name_type = ast.Name
        while stack:
            node, region, top, optional = stack.pop()
            kind = type(node)
            if region == MODULE and isinstance(node, ast.stmt):
                top = node
                if not self._module_statement(node, id(node) in top_ids, stack, optional):
                    continue  # the statement pushed its own children
            if kind is ast.Call:
                self._call(node, region, top)  # type: ignore[arg-type]
            elif kind is ast.Import or kind is ast.ImportFrom:
                self._import(node, optional)  # type: ignore[arg-type]
            elif kind is ast.Subscript:
                self._subscript(node)  # type: ignore[arg-type]
            elif kind is ast.Constant:
                self._constant(node)  # type: ignore[arg-type]
            elif kind is ast.Attribute:
                if node.attr == "stdin" and self.qualname(node) == "sys.stdin":  # type: ignore[attr-defined]
                    self.flags.setdefault(region, set()).add("stdin")
            elif kind is ast.Assign or kind is ast.AnnAssign:
                self._assign(node)  # type: ignore[arg-type]
            elif kind is ast.For or kind is ast.AsyncFor or kind is ast.comprehension:
                self._loop_target(node)  # type: ignore[arg-type]
            elif kind is ast.FunctionDef or kind is ast.AsyncFunctionDef or kind is ast.Lambda:
                self._function(node, region, top, stack)  # type: ignore[arg-type]
                continue
            elif kind is ast.Await and region == MODULE and top is not None:
                self._work(top)
            elif (kind is ast.Try or kind is _TRY_STAR) and not optional:
                # `try: import x / except ImportError:` inside a function: x is optional.
                if any(_catches_import_error(h) for h in node.handlers):  # type: ignore[attr-defined]
                    for part in reversed((*node.handlers, *node.orelse, *node.finalbody)):  # type: ignore[attr-defined]
                        push((part, region, top, optional))
                    for stmt in reversed(node.body):  # type: ignore[attr-defined]
                        push((stmt, region, top, True))
                    continue
            # Children in reverse so they pop in source order; contexts and operators (Load,
            # Add, Eq: a third of all nodes) carry no fact and are never pushed.
            fields = child_fields.get(kind)
            if fields is None:
                fields = child_fields[kind] = _child_fields(kind)
            for name in fields:
                value = getattr(node, name, None)
                if type(value) is list:
                    for child in reversed(value):
                        # A bare Name carries no fact of its own (its parent reads it).
                        if isinstance(child, ast.AST) and type(child) is not name_type:
                            push((child, region, top, optional))
                elif isinstance(value, ast.AST) and type(value) is not name_type:
                    push((value, region, top, optional))
        self._finish()
        return facts

    # -- module level -----------------------------------------------------------------------

    def _module_statement(
        self, node: ast.stmt, is_top: bool, stack: list[_Item], optional: bool
    ) -> bool:
        """Judge a statement that runs at import time. False when it pushed its children."""
        kind = type(node)
        if kind in (ast.Import, ast.ImportFrom, ast.Pass, ast.Global, ast.Nonlocal):
            return True
        if kind in (ast.FunctionDef, ast.AsyncFunctionDef):
            name = node.name  # type: ignore[attr-defined]
            if is_top:
                self.top_defs[name] = node
            return True
        if kind is ast.ClassDef:
            if is_top:
                self.top_classes.add(node.name)  # type: ignore[attr-defined]
                if node.name == "main":  # type: ignore[attr-defined]
                    self.facts.main_candidates.append(node)
            return True  # the class body is judged statement by statement
        if kind is ast.Expr:
            if not isinstance(node.value, ast.Constant):  # type: ignore[attr-defined]
                self._work(node)
            return True
        if kind in (ast.Assign, ast.AnnAssign, ast.AugAssign) or kind.__name__ == "TypeAlias":
            for target in getattr(node, "targets", None) or [getattr(node, "target", None)]:
                for name in ast.walk(target) if isinstance(target, ast.Tuple | ast.List) else [target]:
                    if isinstance(name, ast.Name) and name.id in MODULE_DUNDERS:
                        self.facts.dunder_assignments.append(Use(node, name.id))
                if is_top and isinstance(target, ast.Name) and target.id == "main":
                    self.facts.main_candidates.append(node)
            return True
        if kind is ast.If:
            test = node.test  # type: ignore[attr-defined]
            if _is_main_test(test):
                if self.guard_node is None:
                    self.guard_node = node  # type: ignore[assignment]
                for child in reversed([*node.body, *node.orelse]):  # type: ignore[attr-defined]
                    stack.append((child, GUARD, None, optional))
                return False
            typing_only = _is_type_checking(test)
            for child in reversed([*node.body, *node.orelse]):  # type: ignore[attr-defined]
                stack.append((child, MODULE, None, optional or typing_only))
            stack.append((test, MODULE, node, optional))
            return False
        if kind is ast.Try or kind.__name__ == "TryStar":
            catches_import = any(_catches_import_error(h) for h in node.handlers)  # type: ignore[attr-defined]
            rest = [
                *node.handlers,  # type: ignore[attr-defined]
                *node.orelse,  # type: ignore[attr-defined]
                *node.finalbody,  # type: ignore[attr-defined]
            ]
            for child in reversed(rest):
                stack.append((child, MODULE, None, optional))
            for child in reversed(node.body):  # type: ignore[attr-defined]
                stack.append((child, MODULE, None, optional or catches_import))
            return False
        # for/while/with/assert/raise/del/match/return...: all of them do work at import time
        self._work(node)
        return True

    def _work(self, stmt: ast.stmt) -> None:
        if id(stmt) not in self.work_ids:
            self.work_ids.add(id(stmt))
            self.facts.import_time_work.append(stmt)

    def _pure_call(self, node: ast.Call, q: str | None) -> bool:
        if q is not None:
            if q in PURE_CALLS or q.startswith(PURE_PREFIXES) or q in self.top_classes:
                return True
            # A method of a constant or a local value (WORDS.split(), w.upper() in a
            # comprehension); a call on an imported module (requests.get) is real work.
            func_root = node.func
            while isinstance(func_root, ast.Attribute):
                func_root = func_root.value
            if "." in q and isinstance(func_root, ast.Name) and func_root.id not in self.aliases:
                return True
        func = node.func
        return isinstance(func, ast.Attribute) and isinstance(func.value, ast.Constant | ast.JoinedStr)

    # -- names ------------------------------------------------------------------------------

    def qualname(self, expr: ast.AST) -> str | None:
        parts: list[str] = []
        while isinstance(expr, ast.Attribute):
            parts.append(expr.attr)
            expr = expr.value
        if not isinstance(expr, ast.Name):
            return None
        parts.append(self.aliases.get(expr.id, expr.id))
        return ".".join(reversed(parts))

    def _import(self, node: ast.Import | ast.ImportFrom, optional: bool) -> None:
        facts = self.facts
        if isinstance(node, ast.Import):
            for alias in node.names:
                full = alias.name
                if alias.asname:
                    self.aliases[alias.asname] = full
                else:
                    top = full.partition(".")[0]
                    self.aliases.setdefault(top, top)
                self._record_import(full, node, optional)
            return
        if node.level:  # relative imports: a single-file tool has no package
            return
        module = node.module or ""
        self._record_import(module, node, optional)
        for alias in node.names:
            if alias.name == "*":
                continue
            full = f"{module}.{alias.name}"
            self.aliases[alias.asname or alias.name] = full
            if _network_module(full) and not _network_module(module):
                facts.network.setdefault(_network_module(full) or full, node)

    def _record_import(self, module: str, node: ast.Import | ast.ImportFrom, optional: bool) -> None:
        facts = self.facts
        facts.imports.append(ImportUse(module, node, optional))
        facts.modules.setdefault(module.partition(".")[0], []).append(node)
        net = _network_module(module)
        if net is not None:
            facts.network.setdefault(net, node)
        if module.partition(".")[0] in HTTP_CLIENTS:
            self.http_client = True

    # -- statements -------------------------------------------------------------------------

    def _function(
        self,
        node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda,
        region: str,
        top: ast.stmt | None,
        stack: list[_Item],
    ) -> None:
        if isinstance(node, ast.Lambda):
            inner = LAMBDA if region == MODULE else region
            stack.append((node.body, inner, None, False))
            stack.append((node.args, region, top, False))
            return
        if region == MODULE and self.top_defs.get(node.name) is node:
            inner = f"def:{node.name}"
            if node.name == "main":
                self._main(node)
        else:
            inner = region if region not in (MODULE, GUARD) else f"def:?{node.name}"
            if node.name == "main" and self.facts.main is None:
                self.facts.main_candidates.append(node)
        for arg in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs):
            if arg.annotation is not None and _last_name(arg.annotation) in ("Path", "PurePath"):
                self.path_names.add(arg.arg)
        for stmt in reversed(node.body):
            stack.append((stmt, inner, None, False))
        # Decorators, defaults and annotations run when the def runs (at import for top level).
        for part in (*node.decorator_list, node.args, node.returns):
            if part is not None:
                stack.append((part, region, top, False))

    def _main(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        args = node.args
        params: list[Param] = []
        positional = [*args.posonlyargs, *args.args]
        defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults))
        defaults += list(args.defaults)
        for i, arg in enumerate(positional):
            kind: Literal["positional_only", "positional"] = (
                "positional_only" if i < len(args.posonlyargs) else "positional"
            )
            params.append(Param(arg.arg, arg, arg.annotation, defaults[i], kind))
        for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=False):
            params.append(Param(arg.arg, arg, arg.annotation, default, "keyword_only"))
        self.facts.main = MainInfo(node, params, args.vararg, args.kwarg)

    def _assign(self, node: ast.Assign | ast.AnnAssign) -> None:
        value = node.value
        targets: list[ast.expr]
        if isinstance(node, ast.AnnAssign):
            targets = [node.target]
            if _last_name(node.annotation) in ("Path", "PurePath") and isinstance(node.target, ast.Name):
                self.path_names.add(node.target.id)
        else:
            targets = node.targets
        if value is not None and self._pathlike(value):
            for target in targets:
                if isinstance(target, ast.Name):
                    self.path_names.add(target.id)

    def _loop_target(self, node: ast.For | ast.AsyncFor | ast.comprehension) -> None:
        it = node.iter
        if (
            isinstance(node.target, ast.Name)
            and isinstance(it, ast.Call)
            and isinstance(it.func, ast.Attribute)
            and it.func.attr in PATH_ITERATORS
            and self._pathlike(it.func.value)
        ):
            self.path_names.add(node.target.id)

    def _pathlike(self, expr: ast.AST) -> bool:
        # Iterative: a hostile file may chain a method 10,000 times.
        while True:
            if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Div):
                expr = expr.left
            elif isinstance(expr, ast.Attribute) and expr.attr in ("parent", "parents"):
                expr = expr.value
            elif isinstance(expr, ast.Subscript):
                expr = expr.value
            elif isinstance(expr, ast.Name):
                return expr.id in self.path_names
            elif isinstance(expr, ast.Call):
                if self.qualname(expr.func) in PATH_CONSTRUCTORS:
                    return True
                func = expr.func
                if not (isinstance(func, ast.Attribute) and func.attr in PATH_DERIVED):
                    return False
                expr = func.value
            else:
                return False

    # -- expressions ------------------------------------------------------------------------

    def _call(self, node: ast.Call, region: str, top: ast.stmt | None) -> None:
        facts = self.facts
        func = node.func
        q = self.qualname(func)
        method = func.attr if isinstance(func, ast.Attribute) else None

        if region == MODULE and top is not None and not self._pure_call(node, q):
            self._work(top)

        # files
        if q is not None and q in OPEN_CALLS:
            index, default_mode = OPEN_CALLS[q]
            mode = _open_mode(node, index, default_mode)
            kind = _mode_kind(mode)
            shown = repr(mode) if mode is not None else "mode"
            label = f"{q}()" if kind == "read" else f"{q}(..., {shown})"
            facts.file_access.append(FileUse(node, kind, label))
        elif q is not None and q in FILE_CALLS and not _in_memory_db(node, q):
            facts.file_access.append(FileUse(node, FILE_CALLS[q], f"{q}()"))
        elif q == "os.open":
            writes = any(
                isinstance(sub, ast.Attribute)
                and sub.attr in ("O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND")
                for arg in node.args[1:]
                for sub in ast.walk(arg)
            )
            facts.file_access.append(FileUse(node, "write" if writes else "read", "os.open()"))
        elif method is not None and method in PATH_METHODS and "pathlib" in facts.modules:
            assert isinstance(func, ast.Attribute)
            if method in PATH_ONLY_METHODS or self._pathlike(func.value):
                kind = PATH_METHODS[method]
                if method == "open":
                    kind = _mode_kind(_open_mode(node, 0, "r"))
                facts.file_access.append(FileUse(node, kind, f"Path.{method}()"))

        # network reached without an import of its own (`import urllib` then urllib.request...)
        if q is not None:
            net = _network_module(q)
            if net is not None:
                facts.network.setdefault(net, node)
            elif q in NETWORK_CALLS:
                facts.network.setdefault(q, node)

        # processes and dynamic code
        if q is not None and (q in EXEC_CALLS or q.startswith(EXEC_PREFIXES)):
            facts.exec_calls.append(Use(node, q))
        if q in DYNAMIC_IMPORTS:
            facts.dynamic_imports.append(Use(node, q))

        # environment
        if q in ENV_GETTERS and node.args and isinstance(node.args[0], ast.Constant):
            key = node.args[0].value
            if isinstance(key, str):
                facts.env_reads.setdefault(key, []).append(node)
                if key == TOKEN_VAR:
                    facts.token_uses.append(node)
                    self.consumed.add(id(node.args[0]))

        self._irreversible(node, q, method)

        # the entry point's contract (the region's set is made only when a flag is added)
        flag = _CALL_FLAGS.get(q) if q is not None else None
        if flag is not None:
            if flag == "main_kwargs" and not any(k.arg is None for k in node.keywords):
                flag = None
            if flag is not None:
                flags = self.flags.get(region)
                if flags is None:
                    flags = self.flags[region] = set()
                flags.add(flag)
                if q == "json.dump":
                    flags.add("print")
        if isinstance(func, ast.Name):
            calls = self.region_calls.get(region)
            if calls is None:
                calls = self.region_calls[region] = set()
            calls.add(func.id)

    def _irreversible(self, node: ast.Call, q: str | None, method: str | None) -> None:
        facts = self.facts
        func = node.func
        # The imported name, not the local alias: `from os import remove as rm; rm(p)`.
        if q is not None and isinstance(func, ast.Name):
            name: str | None = q.rpartition(".")[2]
        else:
            name = method if method is not None else (func.id if isinstance(func, ast.Name) else None)
        if name is None:
            return
        verb: str | None = None
        single, candidates = _verb_candidates(name)
        if candidates:
            root = q.partition(".")[0] if q is not None else None
            on_module = root is not None and root in self.facts.modules and "." in (q or "")
            for w in candidates:
                if w in STRONG_VERBS:
                    verb = w
                elif w in WEAK_VERBS:
                    if on_module:
                        verb = w
                    elif single and w in ("put", "patch"):
                        if self.http_client and method is not None:
                            verb = w  # session.put(...)
                    elif not single and method is not None and self.facts.network:
                        verb = w  # an API client's s3.put_object(...), api.cancel_order(...)
                if verb:
                    break
        if verb is None and method in ("execute", "executemany", "executescript") and node.args:
            first_arg = node.args[0]
            if isinstance(first_arg, ast.Constant) and isinstance(first_arg.value, str):
                m = SQL_DESTRUCTIVE.match(first_arg.value)
                if m:
                    verb = f"SQL {m.group(1).upper()}"
        if verb is None and q is not None and q.endswith(("urllib.request.Request", "urllib.request.urlopen")):
            for kw in node.keywords:
                if kw.arg == "method" and isinstance(kw.value, ast.Constant):
                    if str(kw.value.value).upper() in HTTP_WRITE_METHODS:
                        verb = str(kw.value.value).upper()
                elif kw.arg == "data" and not (
                    isinstance(kw.value, ast.Constant) and kw.value.value is None
                ):
                    verb = verb or "POST"
            if verb is None and len(node.args) >= 2:
                verb = "POST"  # a body makes urllib send a POST
        if verb is not None:
            label = q if q is not None else (f".{name}()" if method else name)
            facts.irreversible.append(Use(node, f"{label} ({verb})" if verb.isupper() else label))

    def _subscript(self, node: ast.Subscript) -> None:
        if isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
            if self.qualname(node.value) in ("os.environ", "os.environb"):
                key = node.slice.value
                self.facts.env_reads.setdefault(key, []).append(node)
                if key == TOKEN_VAR:
                    self.facts.token_uses.append(node)
                    self.consumed.add(id(node.slice))

    def _constant(self, node: ast.Constant) -> None:
        value = node.value
        if isinstance(value, str) and len(value) <= 40:
            if value == TOKEN_VAR and id(node) not in self.consumed:
                self.facts.token_uses.append(node)
            elif value.isidentifier() or "-" in value:
                self.facts.strings.add(value)

    # -- after the walk ---------------------------------------------------------------------

    def _finish(self) -> None:
        facts = self.facts
        if self.guard_node is not None:
            # The guard may delegate to a helper (`if __name__ == "__main__": _run()`).
            regions = {GUARD}
            for name in self.region_calls.get(GUARD, set()):
                if name in self.top_defs and name != "main":
                    regions.add(f"def:{name}")
            got: set[str] = set()
            for region in regions:
                got |= self.flags.get(region, set())
            facts.guard = Guard(
                self.guard_node,
                reads_json_stdin={"json_load", "stdin"} <= got,
                prints_json_result={"json_dumps", "print"} <= got,
                calls_main_with_kwargs="main_kwargs" in got,
            )
        facts.import_time_work.sort(key=lambda s: (s.lineno, s.col_offset))


@lru_cache(maxsize=4096)
def _verb_candidates(name: str) -> tuple[bool, tuple[str, ...]]:
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


def _network_module(dotted: str) -> str | None:
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


def _in_memory_db(node: ast.Call, q: str) -> bool:
    first = node.args[0] if node.args else None
    return q == "sqlite3.connect" and isinstance(first, ast.Constant) and first.value == ":memory:"


def _open_mode(node: ast.Call, index: int, default: str) -> str | None:
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


def _mode_kind(mode: str | None) -> FileKind:
    if mode is None:
        return "write"  # a mode computed at run time may write: assume it does
    if "w" in mode or "+" in mode or mode == "c":
        return "write"
    if "x" in mode:
        return "create"
    if "a" in mode:
        return "append"
    return "read"


def _is_main_test(test: ast.expr) -> bool:
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = [test.left, test.comparators[0]]
    names = [s for s in sides if isinstance(s, ast.Name) and s.id == "__name__"]
    consts = [s for s in sides if isinstance(s, ast.Constant) and s.value == "__main__"]
    return len(names) == 1 and len(consts) == 1


def _is_type_checking(test: ast.expr) -> bool:
    return _last_name(test) == "TYPE_CHECKING"


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(_last_name(t) in ("ImportError", "ModuleNotFoundError", "Exception") for t in types)
