"""(being written)"""

from __future__ import annotations

import argparse
import sys


def run_tui(args: argparse.Namespace) -> int:
    print("patch-tui: this command is not built yet", file=sys.stderr)
    return 2
