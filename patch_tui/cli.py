"""`patch-tui`: argument parsing only. Each subcommand lives in `patch_tui.commands.<area>`.

Start-up stays light: this module imports only the standard library, and each command module is
imported when its command runs, so `lint`, `fmt`, `run` and `serve` never import Textual, and
nothing imports anthropic or mcp before it is needed.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence

from patch_tui import __version__
from patch_tui.cli_argv import protect_dash_token

# subcommand -> (module, function); the function takes the parsed args and returns the exit code.
HANDLERS: dict[str, tuple[str, str]] = {
    "tui": ("patch_tui.commands.tui", "run_tui"),
    "lint": ("patch_tui.commands.lintcmd", "run_lint"),
    "fmt": ("patch_tui.commands.lintcmd", "run_fmt"),
    "new": ("patch_tui.commands.lintcmd", "run_new"),
    "rules": ("patch_tui.commands.lintcmd", "run_rules"),
    "run": ("patch_tui.commands.runtime", "run_run"),
    "confirm": ("patch_tui.commands.runtime", "run_confirm"),
    "inbox": ("patch_tui.commands.inboxcmd", "run_inbox"),
    "keys": ("patch_tui.commands.keyscmd", "run_keys"),
    "serve": ("patch_tui.commands.runtime", "run_serve"),
    "guard": ("patch_tui.commands.guardcmd", "run_guard"),
    "store": ("patch_tui.commands.storecmd", "run_store"),
    "generate": ("patch_tui.commands.generate", "run_generate"),
    "export": ("patch_tui.commands.interop", "run_export"),
    "import": ("patch_tui.commands.interop", "run_import"),
    "web": ("patch_tui.commands.webcmd", "run_web"),
}

SUBCOMMANDS = [name for name in HANDLERS if name != "tui"]

# The commands main() ran (`python -m patch_tui`: its one command), with the subcommand when
# there is one ("inbox list").
DISPATCHED: list[str] = []


class _Parser(argparse.ArgumentParser):
    """Usage errors exit 2 with a one-line hint, as argparse does, never a traceback."""


def _global_options(
    parser: argparse.ArgumentParser, *, sub: bool, store: bool = True, toolbox: bool = True
) -> None:
    """--store and --toolbox, on the commands that use them (a command's --help lists only
    what it takes; `patch-tui --store S COMMAND` still reads them before any command)."""
    default = argparse.SUPPRESS if sub else None
    if store:
        parser.add_argument(
            "--store",
            metavar="PATH|URL",
            default=default,
            help="the confirmation store: a file (SQLite) or postgresql://… (the team inbox) "
            "(env PATCH_TUI_STORE, config `store`; default a file in the user state folder)",
        )
    if toolbox:
        parser.add_argument(
            "--toolbox",
            metavar="DIR",
            default=default,
            help="the toolbox (env PATCH_TUI_TOOLBOX; default the Patch runtime's toolbox)",
        )


class _NotBuilt:
    """build_parser(only=C): any other command, not built (argparse's ~10 ms for them all)."""

    def __getattr__(self, name: str) -> object:
        return lambda *args, **kwargs: self


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    parser = _Parser(
        prog="patch-tui",
        description="Author, lint, generate, run and approve Patch tools.",
        epilog="Run `patch-tui` with no command (or a PATH) to open the TUI; `patch-tui help "
        "COMMAND` shows what a command takes.",
    )
    parser.add_argument("--version", action="version", version=f"patch-tui {__version__}")
    _global_options(parser, sub=False)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    def add(
        name: str, help_text: str, *, store: bool = False, toolbox: bool = False
    ) -> argparse.ArgumentParser:
        if only is not None and name != only:
            return _NotBuilt()  # type: ignore[return-value]  # C's parser never reads it
        p = sub.add_parser(name, help=help_text, description=help_text)
        _global_options(p, sub=True, store=store, toolbox=toolbox)
        return p

    # -- authoring (issue: foundation) ---------------------------------------------------------
    p = add("lint", "Check tool files; exit 0 no error, 1 errors, 2 usage or unreadable path.")
    p.add_argument("paths", nargs="+", metavar="PATH", help="tool files or folders (every *.py)")
    p.add_argument(
        "--format",
        choices=["text", "json", "github"],
        default="text",
        help="text (default), json, or github (workflow annotations)",
    )
    p.add_argument(
        "--select", metavar="CODES", default="", help="comma-separated code prefixes to check"
    )
    p.add_argument(
        "--ignore", metavar="CODES", default="", help="comma-separated code prefixes to skip"
    )
    p.add_argument(
        "--fix", action="store_true", help="apply the safe quick fixes, then report the rest"
    )
    p.add_argument("--statistics", action="store_true", help="count diagnostics per code")
    p.add_argument(
        "--jobs",
        metavar="N",
        type=int,
        default=0,
        help="worker processes (default: one per CPU for many files)",
    )
    p.add_argument(
        "--stdin-filename",
        metavar="NAME",
        default=None,
        help="the name to report for `-` (standard input)",
    )

    p = add("fmt", "Rewrite the frontmatter in canonical style; the body is never touched.")
    p.add_argument("paths", nargs="+", metavar="PATH", help="tool files or folders (every *.py)")
    p.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 when a file would change"
    )
    p.add_argument("--diff", action="store_true", help="write nothing; print what would change")
    p.add_argument(
        "--stdin-filename",
        metavar="NAME",
        default=None,
        help="the name to report for `-` (standard input)",
    )

    p = add("new", "Create a new lint-clean tool from a template.", toolbox=True)
    p.add_argument("name", help="the tool's name, snake_case")
    p.add_argument(
        "--dir",
        metavar="DIR",
        default=None,
        help="where to write it (default: the --toolbox's tools/ when given, else here)",
    )
    p.add_argument("--description", default=None, help="one sentence saying what it does")

    p = add("rules", "List the lint rules, or explain one (`patch-tui rules PT040`).")
    p.add_argument("code", nargs="?", help="a rule code (PT040); without it, every rule")

    # -- runtime (issue: runtime) ---------------------------------------------------------------
    p = add(
        "run",
        "Run a tool locally; a human_confirm tool is queued, not run (exit 3).",
        store=True,
        toolbox=True,
    )
    p.add_argument("tool", metavar="TOOL", help="a tool file, or a tool name in the toolbox")
    p.add_argument("--args", metavar="JSON", default="{}", help="the arguments as a JSON object")
    p.add_argument(
        "--timeout",
        metavar="S",
        type=float,
        default=60.0,
        help="seconds before the run is stopped (default 60)",
    )
    p.add_argument("--no-install", action="store_true", help="refuse to install runtime.packages")
    p.add_argument(
        "--as-person",
        action="store_true",
        help="you typed these args yourself: never taken for another tool's output (no taint hold)",
    )

    p = add("confirm", "Run an approved action, once.", store=True, toolbox=True)
    p.add_argument("token", help="the confirmation_token of the held call")

    p = add(
        "inbox",
        "The confirmation inbox: the TUI, or `list`, `show`, `claim`, `approve`, `reject`, `allow`, `grants`, `revoke`, `export` headless.",
        store=True,
        toolbox=True,
    )
    inbox = p.add_subparsers(dest="inbox_command", metavar="ACTION", parser_class=_Parser)
    q = inbox.add_parser("list", help="list pending actions (all with --all)")
    _global_options(q, sub=True, toolbox=False)
    q.add_argument("--json", action="store_true", help="one JSON array, every field of each action")
    q.add_argument("--all", action="store_true", help="include decided, executed, expired actions")
    q = inbox.add_parser("show", help="one action entirely: tool, source, capabilities, every arg")
    _global_options(q, sub=True)
    q.add_argument("token", help="the action's token (see `inbox list`)")
    q = inbox.add_parser(
        "approve",
        help="approve a pending action: shows it and asks y (--yes needs --args-sha256; edited with --args)",
    )
    _global_options(q, sub=True)
    q.add_argument("token", help="the action's token (see `inbox list`)")
    q.add_argument("--note", default=None, help="why, kept with the decision")
    q.add_argument(
        "--yes",
        action="store_true",
        help="do not ask: approve only if --args-sha256 is the args hash `inbox show` printed",
    )
    q.add_argument(
        "--args-sha256",
        metavar="HASH",
        default=None,
        help="the args sha256 of what you read (`inbox list` / `inbox show`); approval fails if it differs",
    )
    q.add_argument(
        "--args",
        metavar="JSON",
        default=None,
        help="approve these args instead of the proposed ones (checked against the tool's inputs)",
    )
    q = inbox.add_parser(
        "claim", help="say you are reading a pending action, so others leave it to you"
    )
    _global_options(q, sub=True)
    q.add_argument("token", help="the action's confirmation token (`inbox list` prints it)")
    q.add_argument(
        "--for",
        dest="seconds",
        metavar="S",
        type=float,
        default=300.0,
        help="how long the claim lasts unless renewed (default 300 s)",
    )
    q.add_argument("--release", action="store_true", help="end your claim now")
    q = inbox.add_parser("reject", help="reject a pending action")
    _global_options(q, sub=True, toolbox=False)
    q.add_argument("token", help="the action's token (see `inbox list`)")
    q.add_argument("--reason", default=None, help="why; the agent is told it")
    q = inbox.add_parser(
        "allow", help="a standing grant: approve later calls of TOOL whose args match, for a while"
    )
    _global_options(q, sub=True)
    q.add_argument("tool", metavar="TOOL", help="a tool name in the toolbox, or a tool file")
    q.add_argument(
        "--where",
        metavar="KEY=GLOB",
        action="append",
        default=[],
        help="the arg KEY must match GLOB (repeatable; all must match)",
    )
    q.add_argument(
        "--for",
        dest="duration",
        metavar="DURATION",
        default="1h",
        help="how long: 30m, 2h, 1d (default 1h, at most 7d)",
    )
    q.add_argument(
        "--dry-run",
        action="store_true",
        help="make no grant: list which of the tool's last 50 calls it would have approved",
    )
    q = inbox.add_parser(
        "sign-grant",
        help="add your signature to a standing grant (a rule requiring two approvers needs two)",
    )
    _global_options(q, sub=True)
    q.add_argument("grant_id", metavar="ID", help="the grant's id (see `inbox grants`)")
    q = inbox.add_parser("grants", help="list the standing grants")
    _global_options(q, sub=True)
    q.add_argument("--json", action="store_true", help="one JSON array, every field of each grant")
    q.add_argument("--all", action="store_true", help="include expired and revoked grants")
    q = inbox.add_parser("revoke", help="end a standing grant now")
    _global_options(q, sub=True, toolbox=False)
    q.add_argument("grant_id", metavar="ID", help="the grant's id (see `inbox grants`)")
    q = inbox.add_parser("export", help="every action with its decision and outcome, for an audit")
    _global_options(q, sub=True, toolbox=False)
    q.add_argument(
        "--format",
        choices=["jsonl", "csv"],
        default="jsonl",
        help="jsonl (default: one JSON object a line) or csv",
    )
    q.add_argument(
        "--since",
        metavar="WHEN",
        default=None,
        help="a date/time (2026-11-20, 2026-11-20T10:00Z) or an age (2h, 1d)",
    )
    q.add_argument("--out", metavar="FILE", default=None, help="write here instead of stdout")

    p = add(
        "keys",
        "Your approver key: `new`, `list`, `show` (approvals are signed with it); "
        "`enroll-web NAME` registers a passkey in the web inbox.",
    )
    keys = p.add_subparsers(dest="keys_command", metavar="ACTION", parser_class=_Parser)
    keys.add_parser("new", help="create your approver key file (Ed25519) in the config folder")
    keys.add_parser("list", help="your key, ssh-agent's Ed25519 keys and the trusted approvers")
    keys.add_parser("show", help="print your approver key's public line (for approvers.toml)")
    q = keys.add_parser(
        "enroll-web",
        help="print a one-time link, signed by your approver key, that registers a passkey",
        description="Print a one-time link, signed with your approver key (the one the "
        "approvers file lists for NAME), that registers a passkey for NAME in the web inbox.",
    )
    q.add_argument("name", metavar="NAME", help="your name in the approvers file")
    q.add_argument(
        "--url", default="http://localhost:8765", help="the web app's address (its --public-url)"
    )
    q.add_argument(
        "--approvers", metavar="FILE", default=None, help="the approvers file (approvers_file)"
    )

    p = add(
        "store",
        "The confirmation store itself: `store migrate` brings its schema up to date.",
        store=True,
    )
    store_sub = p.add_subparsers(dest="store_command", metavar="ACTION", parser_class=_Parser)
    q = store_sub.add_parser(
        "migrate",
        help="apply the schema's missing migrations (a PostgreSQL store: as the schema's owner)",
    )
    _global_options(q, sub=True)
    q = store_sub.add_parser(
        "roles", help="print the SQL granting a team's agent and approver roles what they need"
    )
    q.add_argument("--agent", default="patch_tui_agent", help="the agents' role name")
    q.add_argument("--approver", default="patch_tui_approver", help="the approvers' role name")

    p = add("serve", "MCP server on stdio over a toolbox.", store=True, toolbox=True)
    p.add_argument(
        "--timeout", metavar="S", type=float, default=60.0, help="per tool call (default 60)"
    )
    p.add_argument("--no-install", action="store_true", help="refuse to install runtime.packages")
    p.add_argument(
        "--no-warm",
        action="store_true",
        help="start every call's sandbox from scratch (default: a fork of a warm sandboxed "
        "process per tool)",
    )

    p = add(
        "guard",
        "MCP proxy on stdio: the inbox in front of another MCP server (the Patch runtime, or any).",
        store=True,
        toolbox=True,
    )
    p.add_argument(
        "--hold",
        metavar="GLOB",
        action="append",
        default=[],
        help="hold calls to tools matching GLOB for the inbox (repeatable); tools the server "
        "marks destructiveHint: true are held too",
    )
    p.add_argument(
        "upstream",
        nargs=argparse.REMAINDER,
        metavar="-- COMMAND [ARG...]",
        help="the upstream MCP server's command line, after --",
    )

    # -- generation (issue: generate) ------------------------------------------------------------
    p = add("generate", "Write a new tool with Claude; prints the new file's path.", toolbox=True)
    p.add_argument("prompt", help="what the tool should do, in your words")
    p.add_argument("--model", default=None, help="the Claude model (default: the `model` setting)")
    p.add_argument(
        "--out", metavar="DIR", default=None, help="the folder to write it in (default: here)"
    )
    p.add_argument(
        "--name-hint", metavar="NAME", default=None, help="a name to suggest for the tool"
    )
    p.add_argument(
        "--max-repairs",
        metavar="N",
        type=int,
        default=None,
        help="rounds to fix lint errors (default: the `max_repairs` setting)",
    )
    p.add_argument(
        "--keep-invalid", action="store_true", help="write the file even with lint errors"
    )

    # -- interop (issue: formats) ----------------------------------------------------------------
    p = add("export", "Export a tool to another tool-definition format (JSON on stdout).")
    p.add_argument("path", metavar="PATH", help="the tool file to export")
    p.add_argument(
        "--format",
        required=True,
        choices=["arcade", "otc", "mcp", "shinkai"],
        help="the format to write",
    )
    p.add_argument(
        "--toolkit",
        metavar="NAME",
        default=None,
        help="the toolkit name (arcade; default from the folder)",
    )
    p.add_argument(
        "--out", metavar="FILE", default=None, help="write here instead of stdout (atomically)"
    )
    p.add_argument(
        "--report-format",
        choices=["text", "json"],
        default="text",
        dest="report_format",
        help="the loss report: text on stderr (default), or json with the definition on stdout",
    )

    p = add("import", "Import tool definitions from another format as new Patch tools.")
    p.add_argument("file", metavar="FILE", help="the definitions to import (JSON)")
    p.add_argument(
        "--from",
        dest="from_format",
        required=True,
        choices=["arcade", "otc", "mcp", "shinkai"],
        help="the format FILE is in",
    )
    p.add_argument(
        "--out",
        metavar="DIR",
        default=".",
        help="where to write the tool files (default: here; never over a file)",
    )
    p.add_argument(
        "--report-format",
        choices=["text", "json"],
        default="text",
        dest="report_format",
        help="the loss report: text (default) or json",
    )

    # -- the web inbox (issue 29) ----------------------------------------------------------------
    p = add(
        "web",
        "The approvals web app: decide from a phone, each decision signed with a passkey.",
        store=True,
    )
    p.add_argument(
        "--listen",
        metavar="HOST:PORT",
        default="127.0.0.1:8765",
        help="the socket (default 127.0.0.1:8765; beyond loopback needs TLS or --behind-proxy)",
    )
    p.add_argument(
        "--public-url",
        metavar="URL",
        default=None,
        help="the address people open (default http://localhost:PORT): a reverse proxy's or "
        "Tailscale Serve's https:// URL; passkeys are bound to its host name",
    )
    p.add_argument(
        "--behind-proxy",
        action="store_true",
        help="a TLS-terminating proxy is in front (needs an https:// --public-url)",
    )
    p.add_argument("--tls-cert", metavar="FILE", default=None, help="serve HTTPS with this cert")
    p.add_argument("--tls-key", metavar="FILE", default=None, help="... and this key")
    p.add_argument(
        "--approvers",
        metavar="FILE",
        default=None,
        help="the approvers file (env PATCH_TUI_APPROVERS_FILE; default approvers.toml in the "
        "config folder)",
    )

    return parser


def _tui_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="patch-tui", description="Open the TUI on a tool file or a folder of tools."
    )
    parser.add_argument(
        "path",
        nargs="?",
        default=None,
        metavar="PATH",
        help="a tool file or a folder of tools (default: the toolbox)",
    )
    parser.add_argument(
        "--theme", default=None, help="a theme name (remembered when chosen in the app)"
    )
    _global_options(parser, sub=False)
    return parser


_VALUED_GLOBALS = ("--store", "--toolbox", "--theme")


def _first_positional(args: list[str]) -> str | None:
    skip = False
    for arg in args:
        if skip:
            skip = False
            continue
        if arg in _VALUED_GLOBALS:
            skip = True
            continue
        if not arg.startswith("-"):
            return arg
    return None


def _help(args_list: list[str]) -> int:
    """`patch-tui help [COMMAND]`: the commands, or one command's options."""
    rest = [a for a in args_list[args_list.index("help") + 1 :] if not a.startswith("-")]
    if rest and rest[0] in SUBCOMMANDS:
        build_parser().parse_args([rest[0], "--help"])  # prints it and exits 0
    elif rest:
        print(_unknown_command(rest[0]), file=sys.stderr)
        return 2
    build_parser().print_help()
    return 0


def _unknown_command(word: str) -> str:
    """One line for a word that is neither a command nor a path: the nearest command, if any."""
    import difflib

    near = difflib.get_close_matches(word, [*SUBCOMMANDS, "help"], n=1, cutoff=0.6)
    commands = ", ".join(SUBCOMMANDS)
    if near:
        return (
            f"patch-tui: {word!r} is not a command; did you mean `patch-tui {near[0]}`? "
            f"(commands: {commands}, help)"
        )
    return (
        f"patch-tui: {word!r} is neither a command nor a tool file or folder "
        f"(commands: {commands}; `patch-tui help` says what each does)"
    )


def _exists(word: str) -> bool:
    from pathlib import Path

    return Path(word).exists()


def _looks_like_a_command(word: str) -> bool:
    """A word the TUI would take for a PATH but that names nothing on disk and has no path
    shape: a mistyped command (`lnit`), answered as one instead of "no such file"."""
    if any(c in word for c in "/\\.~") or not word.replace("-", "").replace("_", "").isalnum():
        return False
    return not _exists(word)


def main(
    argv: Sequence[str] | None = None, on_dispatch: Callable[[str], None] | None = None
) -> int:
    """Run one command; `on_dispatch` hears which (the DISPATCHED name) before it runs."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    first = _first_positional(args_list)
    if first == "help" and not _exists("help"):
        return _help(args_list)
    if first is not None and first not in SUBCOMMANDS and _looks_like_a_command(first):
        print(_unknown_command(first), file=sys.stderr)
        return 2
    wants_help_or_version = any(a in ("-h", "--help", "--version") for a in args_list)
    if first in SUBCOMMANDS or (first is None and wants_help_or_version):
        only = first if first in SUBCOMMANDS and not wants_help_or_version else None
        args = build_parser(only).parse_args(protect_dash_token(args_list))
        command = args.command
    else:
        # `patch-tui [PATH] [--theme T]`: the TUI.
        args = _tui_parser().parse_args(args_list)
        command = "tui"
    module_name, func_name = HANDLERS[command]
    sub = getattr(args, f"{command}_command", None)
    DISPATCHED.append(f"{command} {sub}" if isinstance(sub, str) else command)
    if on_dispatch is not None:
        on_dispatch(DISPATCHED[-1])
    module = importlib.import_module(module_name)
    try:
        return int(getattr(module, func_name)(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
