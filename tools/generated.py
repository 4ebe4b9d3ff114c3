"""What every generator of a committed file does with its text: write it (atomically), or with
``--check`` say whether the committed file is current (exit 1 when it is stale)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def write_or_check(target: Path, text: str, argv: list[str]) -> int:
    generator = Path(sys.argv[0]).resolve().relative_to(ROOT)
    shown = target.relative_to(ROOT)
    if "--check" in argv:
        if not target.is_file() or target.read_text() != text:
            sys.stderr.write(f"{shown} is stale: run python {generator}\n")
            return 1
        return 0
    target.parent.mkdir(exist_ok=True)
    staging = target.with_suffix(".tmp")
    staging.write_text(text)
    staging.replace(target)
    print(f"wrote {shown}")
    return 0
