"""``python -m runner.sdk.launch SCRIPT [ARGS...]``: run a script as ``python SCRIPT ARGS``
would (``__main__``, its folder first on ``sys.path``, ``sys.argv`` its own), with the hook that
binds azure-ai-ml's MLClient to the workspace installed first. ``aml-run script`` starts it."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

from .hook import install


def main(argv: list[str]) -> None:
    if not argv:
        sys.stderr.write("usage: python -m runner.sdk.launch SCRIPT [ARGS...]\n")
        raise SystemExit(2)
    script = Path(argv[0])
    install()
    sys.argv = [str(script), *argv[1:]]
    sys.path[0] = str(script.resolve().parent)
    runpy.run_path(str(script), run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])
