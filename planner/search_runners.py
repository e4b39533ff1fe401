"""Where a design search's tasks run: in this process, or on a pool of worker processes (planner.search_ray adds
Ray). Every runner gives results back in the tasks' order, whatever order they finish in, so the search's answer
does not depend on the runner or the number of workers."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from multiprocessing import get_context
from typing import Protocol, TypeVar

__all__ = ["PoolRunner", "Progress", "Runner", "SerialRunner", "default_workers"]

_T = TypeVar("_T")
_R = TypeVar("_R")
Progress = Callable[[float, str], None]


class Runner(Protocol):
    """Runs tasks on workers; results come back in the tasks' order."""

    name: str
    workers: int

    def map(self, fn: Callable[[_T], _R], tasks: Sequence[_T], done: Callable[[int], None]) -> list[_R]: ...


def default_workers() -> int:
    return max(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1), 1)


class SerialRunner:
    """Every task in this process (one core)."""

    name = "serial"
    workers = 1

    def __enter__(self) -> SerialRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def map(self, fn: Callable[[_T], _R], tasks: Sequence[_T], done: Callable[[int], None]) -> list[_R]:
        results = []
        for task in tasks:
            results.append(fn(task))
            done(1)
        return results


class PoolRunner:
    """A pool of worker processes on this machine. Workers start fresh (spawn): the app's server threads are never
    forked, and each worker imports the planner once and keeps its caches for the whole search."""

    name = "process pool"

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._pool: ProcessPoolExecutor | None = None

    def __enter__(self) -> PoolRunner:
        self._pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=get_context("spawn"))
        return self

    def __exit__(self, *exc: object) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None

    def map(self, fn: Callable[[_T], _R], tasks: Sequence[_T], done: Callable[[int], None]) -> list[_R]:
        if self._pool is None:
            raise RuntimeError("PoolRunner.map outside its `with` block")
        futures = {self._pool.submit(fn, task): i for i, task in enumerate(tasks)}
        results: dict[int, _R] = {}
        pending = set(futures)
        while pending:
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                results[futures[future]] = future.result()
                done(1)
        return [results[i] for i in range(len(tasks))]
