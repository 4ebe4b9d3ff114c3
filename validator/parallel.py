"""Spread independent work over worker processes: a plain map. Workers are forked after the
parent has imported everything (and run ``prepare``), so they start in milliseconds.

This module knows nothing of linting: the engine hands it the function to run on each item, so
the imports go one way (engine → parallel)."""

from __future__ import annotations

import multiprocessing
from typing import Callable, Sequence, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")

_work: Callable | None = None


def _init(work: Callable) -> None:
    global _work
    _work = work


def _run(item: object) -> object:
    assert _work is not None
    return _work(item)


def map_in_processes(work: Callable[[Item], Result], items: Sequence[Item], jobs: int,
                     prepare: Callable[[], None] | None = None) -> list[Result]:
    """``[work(item) for item in items]``, in order, over up to ``jobs`` forked processes (fewer
    for a short list: a worker costs more than it saves under ~32 items). ``prepare`` runs once
    in the parent before the fork, to warm caches every worker inherits. Where ``fork`` is not
    available the map runs here."""
    try:
        context = multiprocessing.get_context("fork")
    except ValueError:  # pragma: no cover - platforms without fork
        return [work(item) for item in items]
    if prepare is not None:
        prepare()
    workers = max(1, min(jobs, len(items) // 32))
    chunk = max(1, len(items) // (workers * 4))
    # `work` reaches the workers through the fork, never pickled: a closure or partial is fine.
    with context.Pool(workers, initializer=_init, initargs=(work,)) as pool:
        return pool.map(_run, items, chunksize=chunk)  # type: ignore[return-value]
