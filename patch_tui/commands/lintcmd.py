"""(being written)"""

from __future__ import annotations

import argparse
import sys


def run_lint(args: argparse.Namespace) -> int:
    print("patch-tui: this command is not built yet", file=sys.stderr)
    return 2


def run_fmt(args: argparse.Namespace) -> int:
    print("patch-tui: this command is not built yet", file=sys.stderr)
    return 2


def run_new(args: argparse.Namespace) -> int:
    print("patch-tui: this command is not built yet", file=sys.stderr)
    return 2


def run_rules(args: argparse.Namespace) -> int:
    print("patch-tui: this command is not built yet", file=sys.stderr)
    return 2
