"""Spread a large tree over worker processes. Files are independent, so this is a plain map;
workers are forked after the parent has imported everything, so they start in milliseconds."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

from .config import Config
from .engine import FileReport, lint_file

_config: Config | None = None


def _init(config: Config) -> None:
    global _config
    _config = config


def _lint(path: Path) -> FileReport:
    report = lint_file(path, _config)
    if not report.diagnostics:
        report.text = None  # only excerpts need the source: do not ship it back for clean files
    return report


def lint_many(files: list[Path], config: Config, jobs: int) -> list[FileReport]:
    try:
        context = multiprocessing.get_context("fork")
    except ValueError:  # pragma: no cover - platforms without fork
        return [lint_file(p, config) for p in files]
    # Compile the fast schema checks once here so every forked worker inherits them
    # (jsonschema itself is only loaded by a worker that meets an invalid file).
    from .kinds import KINDS
    from .schema_check import _fast

    for kind in KINDS:
        _fast(kind)
    workers = max(1, min(jobs, len(files) // 32))
    chunk = max(1, len(files) // (workers * 4))
    with context.Pool(workers, initializer=_init, initargs=(config,)) as pool:
        return pool.map(_lint, files, chunksize=chunk)
