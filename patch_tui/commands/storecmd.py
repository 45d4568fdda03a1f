"""`patch-tui store migrate`: bring the confirmation store's schema up to date; `store roles`:
the SQL for a team's least-privilege roles (approvals/postgres/roles.py).

A SQLite store migrates itself when opened; a PostgreSQL one does on first use only when the
connecting role may create tables in its schema. A team's agents and approvers connect with
roles that may not (docs/guide/team-inbox.md), so the schema's owner runs this once per release.

Exit codes: 0 up to date (after applying what was missing), 1 the store refused (a newer schema,
no privilege), 2 usage or a database that cannot be reached.
"""

from __future__ import annotations

import argparse
import sys

from patch_tui.commands.runtime import EXIT_FAILED, EXIT_OK, EXIT_USAGE, _err, _store_location
from patch_tui.untrusted.text_safety import visible


def run_store(args: argparse.Namespace) -> int:
    command = getattr(args, "store_command", None)
    if command == "roles":
        return _roles(args)
    if command != "migrate":
        print(
            "patch-tui: store needs an action: `patch-tui store migrate` or `store roles`",
            file=sys.stderr,
        )
        return EXIT_USAGE
    from patch_tui.approvals.open_store import migrate_store
    from patch_tui.approvals.values import StoreError
    from patch_tui.commands.runtime import _cannot_start

    location = _store_location(args)
    try:
        applied, version = migrate_store(location)
    except StoreError as exc:
        _err(visible(str(exc)))
        return EXIT_USAGE if _cannot_start(exc) else EXIT_FAILED
    if applied:
        noun = "migration" if applied == 1 else "migrations"
        print(f"{location}: applied {applied} {noun}; the schema is at version {version}")
    else:
        print(f"{location}: the schema is up to date (version {version})")
    return EXIT_OK


def _roles(args: argparse.Namespace) -> int:
    """The least-privilege GRANTs (plain SQL on stdout, for psql); no database is opened."""
    from patch_tui.approvals.postgres.roles import role_sql

    try:
        print(role_sql(args.agent, args.approver), end="")
    except ValueError as exc:
        _err(str(exc))
        return EXIT_USAGE
    return EXIT_OK
