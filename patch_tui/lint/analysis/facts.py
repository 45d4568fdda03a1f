"""What the one pass over a body finds: main(), the entry point, imports, and the uses of the
network, files, processes, the access token and irreversible actions. Rules only read these."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Literal

from patch_tui.lint.analysis.tables import FileKind


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
