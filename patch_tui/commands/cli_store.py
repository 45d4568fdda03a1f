"""The store for one inbox command (commands/inboxcmd.py, commands/grantscmd.py): opened for
the command, closed after it, a store error one line on stderr and exit 1, never a traceback."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from patch_tui.commands.runtime import _err, _open_store
from patch_tui.untrusted.text_safety import visible


class _StoreFailed(Exception):
    """The store could not be opened or answered with an error; the one line saying why is
    already on stderr. run_inbox turns it into exit 1."""


@contextmanager
def _cli_store(
    args: argparse.Namespace, *, also: tuple[type[Exception], ...] = ()
) -> Iterator[Any]:
    """The store (as _open_store gives it) for one command, closed after it. A StoreError (or one of `also`) inside is one
    line on stderr and exit 1, never a traceback; the store's messages can carry text another
    process wrote (an actor, a tool name), so they are shown with `visible`."""
    from patch_tui.approvals.values import StoreError

    caught: tuple[type[Exception], ...] = (StoreError, *also)
    # A one-shot command: on PostgreSQL, one connection and no pool.
    store = _open_store(args, "cli", pooled=False)
    if store is None:
        raise _StoreFailed  # _open_store said why
    try:
        yield store
    except caught as exc:
        _err(visible(str(exc)))
        raise _StoreFailed from None
    finally:
        store.close()
