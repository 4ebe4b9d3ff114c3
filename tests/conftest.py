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


def pytest_sessionstart(session: pytest.Session) -> None:
    """Compile the packages' bytecode once, up front. The suite starts thousands of Python
    processes (aml-run, aml-lint, supervisors, tracking agents); where PYTHONDONTWRITEBYTECODE
    is set, as on the CI machines, each would otherwise compile every module it imports again
    (about a quarter of a short job's CPU). Up-to-date files are skipped."""
    import compileall

    for package in ("validator", "runner", "quiz"):
        compileall.compile_dir(str(ROOT / package), quiet=1, workers=1)


_LAB_SECONDS: dict[str, float] = {}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "lab: runs a scenario lab for real (its time is summed apart)")


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when in ("setup", "call") and "lab" in report.keywords:
        _LAB_SECONDS[report.nodeid] = _LAB_SECONDS.get(report.nodeid, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _LAB_SECONDS:
        terminalreporter.write_line(f"scenario labs: {len(_LAB_SECONDS)} test(s) ran labs for real, "
                                    f"{sum(_LAB_SECONDS.values()):.0f} s in all")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true",
                     help="rewrite tests/golden/**/*.out from the current output")


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden") or os.environ.get("AMLLAB_UPDATE_GOLDEN"))


@pytest.fixture
def repo_root() -> Path:
    return ROOT
