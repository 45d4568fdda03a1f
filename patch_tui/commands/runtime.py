"""(being written)"""

from __future__ import annotations

import argparse
import sys


def run_run(args: argparse.Namespace) -> int:
    print("patch-tui: this command is not built yet", file=sys.stderr)
    return 2


def run_confirm(args: argparse.Namespace) -> int:
    print("patch-tui: this command is not built yet", file=sys.stderr)
    return 2


def run_inbox(args: argparse.Namespace) -> int:
    print("patch-tui: this command is not built yet", file=sys.stderr)
    return 2


def run_serve(args: argparse.Namespace) -> int:
    print("patch-tui: this command is not built yet", file=sys.stderr)
    return 2
