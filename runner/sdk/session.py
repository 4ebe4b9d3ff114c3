"""What ``aml-run notebook``/``aml-run script`` hands the notebook's kernel (or the script's
interpreter) and what that process hands back, through the environment and one file.

    AMLLAB_WORKSPACE        the workspace the offline MLClient is bound to
    AMLLAB_SDK_SESSION      the session file: one JSON line per event the client records
                            (a job submitted, a verb that needs the cloud), appended under a lock
    AMLLAB_SDK_SETTINGS     JSON: the overrides (--set-sweep, --set-input) and lint codes to ignore

Standard library only: ``aml-run`` reads the session without importing azure-ai-ml.
"""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path
from typing import Any

WORKSPACE = "AMLLAB_WORKSPACE"
SESSION = "AMLLAB_SDK_SESSION"
SETTINGS = "AMLLAB_SDK_SETTINGS"


def record(event: dict[str, Any]) -> None:
    """Append ``event`` to the session file, when there is one (a notebook or script run by
    aml-run); elsewhere the client records nothing."""
    path = os.environ.get(SESSION)
    if not path:
        return
    line = json.dumps(event, default=str) + "\n"
    with open(path, "a", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        handle.write(line)
        handle.flush()


def events(path: Path) -> list[dict[str, Any]]:
    """The session's events in order; a line a killed writer left half-written is skipped."""
    found = []
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return found
    for line in text.splitlines():
        try:
            found.append(json.loads(line))
        except ValueError:
            continue
    return found


def settings() -> dict[str, Any]:
    """The run's settings (overrides, lint codes to ignore); empty outside aml-run."""
    text = os.environ.get(SETTINGS)
    if not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
