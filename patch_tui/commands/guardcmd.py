"""`patch-tui guard [--store PATH] [--toolbox DIR] [--hold GLOB]... -- COMMAND [ARG...]`.

Exit codes: 0 when the host closed the connection; 1 when the store cannot be opened or the
upstream cannot be started (one line on stderr, never a traceback); 2 usage (no COMMAND), or a
store database that cannot be reached at all.
"""

from __future__ import annotations

import argparse
import sys


def run_guard(args: argparse.Namespace) -> int:
    from patch_tui.commands.runtime import _settings_ttl, _store_location
    from patch_tui.mcp_server.confirm_wait import confirm_wait_setting
    from patch_tui.mcp_server.guard import guard
    from patch_tui.settings import paths

    command = list(args.upstream or [])
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        print(
            "patch-tui: guard needs the upstream server's command after --, e.g. "
            "`patch-tui guard -- npx -y @patch-cat/mcp`",
            file=sys.stderr,
        )
        return 2
    return guard(
        command,
        _store_location(args),
        toolbox_dir=paths.default_toolbox(getattr(args, "toolbox", None)),
        holds=args.hold,
        wait=confirm_wait_setting(),
        ttl=_settings_ttl(),
    )
