from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# The MLflow tracking agents that runner tests start (one per workspace) exit soon after the suite.
os.environ.setdefault("AMLLAB_TRACKING_IDLE", "30")
# Tests of the command-line face run the installed entry points of this venv.
BIN = Path(sys.executable).parent


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true",
                     help="rewrite tests/golden/**/*.out from the current output")


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden") or os.environ.get("AMLLAB_UPDATE_GOLDEN"))


@pytest.fixture
def repo_root() -> Path:
    return ROOT
