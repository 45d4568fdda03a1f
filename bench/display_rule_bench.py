"""The one display rule's cost: `visible()` and `flags()` (untrusted/text_safety.py) on args-sized
text, as a ratio to `json.dumps(text)` of the same text in the same run (the least the CLI and
the export do with a value anyway).

Three texts of ~10,000 characters: plain ASCII (the common case, a fast path), Latin with accents
and CJK, and a hostile mix (look-alike addresses, invisible characters, lone marks). Each is timed
a few times and the best kept, because the machine is shared.

    .venv/bin/python bench/display_rule_bench.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import sys
import timeit
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

TEXTS = {
    "ascii": "Send the quarterly report to boss@corp.example now, please. " * 160,
    "accents+cjk": "Café naïve Ångström, 日本語のテキスト and Python入門 at /srv/data/file. " * 140,
    "hostile": (
        "pay payments@асе.com or billing@pаypal.com \u034f\u180b\u17b5\u2800\U0001d173 "
        " \u0301 \u202e x\u200by /home/документы/a "
    )
    * 90,
}


def best(fn, repeat: int, number: int = 20) -> float:
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    opts = parser.parse_args()
    from patch_tui.untrusted.text_safety import flags, visible

    for text in TEXTS.values():  # warm the caches and the lazy imports, as a running app has
        flags(text)
    print(f"{'text':<12} {'chars':>6} {'json.dumps':>11} {'visible':>9} {'flags':>9}  ratios")
    for name, text in TEXTS.items():
        base = best(lambda t=text: json.dumps(t, ensure_ascii=False), opts.repeat)
        shown = best(lambda t=text: visible(t), opts.repeat)
        said = best(lambda t=text: flags(t), opts.repeat)
        print(
            f"{name:<12} {len(text):>6} {base * 1e3:>9.3f}ms {shown * 1e3:>7.3f}ms "
            f"{said * 1e3:>7.3f}ms  visible {shown / base:5.1f}x  flags {said / base:5.1f}x"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
