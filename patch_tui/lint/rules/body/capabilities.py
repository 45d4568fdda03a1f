"""PT040-PT042, PT045: what the body does against the capabilities the manifest declares."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from patch_tui.format.fields import FILESYSTEM_MODES
from patch_tui.lint.context import LintContext
from patch_tui.lint.diagnostic import Diagnostic
from patch_tui.lint.rule import Rule
from patch_tui.lint.rules.body.helpers import body_diag, facts_of, set_value

PT040 = Rule(
    "PT040",
    "undeclared-network",
    family="body",
    summary="network use with `network: false`",
    needs_body=True,
    fix="sometimes",
)


@PT040.check
def undeclared_network(ctx: LintContext) -> Iterator[Diagnostic]:
    """The body uses the network (requests, httpx, urllib.request, http.client, socket, aiohttp,
    smtplib, ...) while `capabilities.network` is false.

    Why: the runtime enforces `network: false` by booting the sandbox without internet access,
    so the tool fails at its first request; and users grant tools by their declared
    capabilities, so the declaration must be honest.

    Fix: set `capabilities.network: true` if the tool really needs the network (the quick fix,
    offered in the editor only: it widens what the tool may do), or remove the network code.
    """
    if not isinstance(ctx.get("capabilities"), dict):
        return  # missing or malformed: PT010/PT022 say so
    network = ctx.get("capabilities", "network", default=False)
    if network is not False:
        return
    for module, node in facts_of(ctx).network.items():
        yield body_diag(
            ctx,
            PT040,
            f"`{module}` reaches the network but `capabilities.network` is false, so the sandbox "
            "blocks it: set `network: true` or remove the network code",
            node,
            fix=set_value(
                ctx, "Set capabilities.network: true", ("capabilities", "network"), True, safe=False
            ),
            field=("capabilities", "network"),
        )


_KIND_WORDS = {
    "read": "reads the file system",
    "create": "creates files",
    "append": "appends to a file",
    "write": "writes files",
    "delete": "deletes files",
    "move": "moves files",
}


PT041 = Rule(
    "PT041",
    "undeclared-file-access",
    family="body",
    summary="file access beyond `filesystem`",
    needs_body=True,
    fix="sometimes",
)


@PT041.check
def undeclared_file_access(ctx: LintContext) -> Iterator[Diagnostic]:
    """The body touches files beyond `capabilities.filesystem`: any access with `none`; a
    write, delete or move with `read-only`.

    Why: people approve tools by what they declare. A "read-only" tool that deletes, or a
    "none" tool that reads `~/.ssh`, is exactly what the declaration exists to rule out.

    Fix: declare what the code does (`filesystem: read-only` for reads, `read-write` for
    anything that changes files; the quick fix is offered in the editor only), or remove the
    file access.
    """
    if not isinstance(ctx.get("capabilities"), dict):
        return
    fs = ctx.get("capabilities", "filesystem", default="none")
    if fs not in FILESYSTEM_MODES or fs == "read-write":
        return
    for use in facts_of(ctx).file_access:
        if fs == "read-only" and use.kind == "read":
            continue
        need = "read-only" if use.kind == "read" else "read-write"
        yield body_diag(
            ctx,
            PT041,
            f"`{use.what}` {_KIND_WORDS[use.kind]} but `capabilities.filesystem` is `{fs}`: "
            f"declare `filesystem: {need}` or remove the file access",
            use.node,
            fix=set_value(
                ctx,
                f"Set capabilities.filesystem: {need}",
                ("capabilities", "filesystem"),
                need,
                safe=False,
            ),
            field=("capabilities", "filesystem"),
        )


PT042 = Rule(
    "PT042",
    "subprocess-or-eval",
    family="body",
    summary="subprocess, os.system, exec, eval",
    needs_manifest=False,
    needs_body=True,
    severity="warning",
)


@PT042.check
def subprocess_or_eval(ctx: LintContext) -> Iterator[Diagnostic]:
    """The body starts other programs (subprocess, os.system, os.popen, os.exec*) or runs code
    built at run time (exec, eval).

    Why: these escape everything the manifest declares: another program can reach the network
    or the disk, and input that reaches a shell or eval() becomes code an attacker controls.

    Fix: do the work in Python (a library instead of a command line tool); parse data with
    `json.loads` or `ast.literal_eval` instead of eval(). When a command is unavoidable, pass
    a list of arguments, never `shell=True` with input in it.
    """
    for use in facts_of(ctx).exec_calls:
        if use.what.endswith(("eval", "exec")):
            message = (
                f"`{use.what}()` runs code built at run time: parse data with json.loads or "
                "ast.literal_eval instead"
            )
        else:
            message = (
                f"`{use.what}()` starts another program, outside what the manifest declares: "
                "do the work in Python, or pass a fixed argument list (never shell=True with input)"
            )
        yield body_diag(ctx, PT042, message, use.node, severity="warning")


PT045 = Rule(
    "PT045",
    "irreversible-without-confirm",
    family="body",
    summary="an irreversible action with `human_confirm: false`",
    needs_body=True,
    severity="warning",
    fix="sometimes",
)


@PT045.check
def irreversible_without_confirm(ctx: LintContext) -> Iterator[Diagnostic]:
    """The body does something that cannot be taken back (send, post, delete, remove, drop,
    transfer, pay, publish, HTTP POST/PUT/PATCH/DELETE, destructive SQL, or file writes with
    `filesystem: read-write`) while `capabilities.human_confirm` is false.

    Why: an agent can be talked into calling any tool (prompt injection through a web page or
    an email is enough). With `human_confirm: true` the runtime returns
    `confirmation_required` and a person approves the exact arguments first.

    Fix: set `capabilities.human_confirm: true` (the quick fix).
    """
    if not isinstance(ctx.get("capabilities"), dict):
        return
    confirm = ctx.get("capabilities", "human_confirm", default=False)
    if confirm is not False:
        return
    facts = facts_of(ctx)
    actions: list[tuple[ast.AST, str]] = [(u.node, u.what) for u in facts.irreversible]
    if ctx.get("capabilities", "filesystem") == "read-write":
        seen = {id(n) for n, _ in actions}
        actions += [
            (u.node, u.what)
            for u in facts.file_access
            if u.kind in ("write", "delete", "move") and id(u.node) not in seen
        ]
    if not actions:
        return
    actions.sort(key=lambda a: (getattr(a[0], "lineno", 0), getattr(a[0], "col_offset", 0)))
    node, what = actions[0]
    more = ""
    if len(actions) > 1:
        lines = sorted({getattr(n, "lineno", 0) for n, _ in actions[1:]})
        more = f" (and {len(actions) - 1} more, line{'s' if len(lines) > 1 else ''} {', '.join(map(str, lines))})"
    yield body_diag(
        ctx,
        PT045,
        f"`{what}` is an irreversible action{more} but `capabilities.human_confirm` is false: set "
        "`human_confirm: true` so a person approves each call",
        node,
        severity="warning",
        fix=set_value(
            ctx,
            "Set capabilities.human_confirm: true",
            ("capabilities", "human_confirm"),
            True,
            safe=True,
        ),
        field=("capabilities", "human_confirm"),
    )
