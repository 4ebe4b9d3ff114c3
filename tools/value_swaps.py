"""Run the typed-value swap test exhaustively: every value of every valid fixture and golden case
replaced by each value of tests/value_swaps.SWAPS, linted, and any internal error reported.
The suite (tests/validator/test_value_swaps.py) runs a sample of these; this runs them all and says how
many it ran. Exit 1 when a swap made a rule crash.

    PYTHONPATH=. python tools/value_swaps.py [--limit N]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import value_swaps  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=0, help="stop after this many swaps (0: all)")
    args = parser.parse_args()
    started = time.monotonic()
    ran = 0
    crashed: Counter[str] = Counter()
    examples: dict[str, tuple] = {}
    for path, where, index in value_swaps.cases():
        if args.limit and ran >= args.limit:
            break
        _, report = value_swaps.lint_swap(path, where, index)
        ran += 1
        for message in value_swaps.crashes(report):
            crashed[message] += 1
            examples.setdefault(message, (path.relative_to(ROOT), where, value_swaps.SWAPS[index]))
    print(f"{ran:,} swaps in {len(value_swaps.source_files())} files linted in {time.monotonic() - started:.0f} s; "
          f"{sum(crashed.values())} internal errors")
    for message, count in crashed.most_common():
        path, where, value = examples[message]
        print(f"{count:6}  {message}\n        first: {path} at {list(where)} = {value!r:.60}")
    return 1 if crashed else 0


if __name__ == "__main__":
    sys.exit(main())
