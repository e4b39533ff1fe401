"""The design search on a Ray cluster: the same tasks as the process pool, as Ray tasks.

Imported only by `search --ray` and the app's Ray option: `import ray` costs start-up time the other commands
should not pay. Without an address Ray starts a local cluster of `workers` CPUs; with one it joins that cluster
and ships this package to it (runtime_env py_modules), so the cluster's Python needs only the requirements.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import ray

from planner.errors import BriefError

__all__ = ["RayRunner"]

_T = TypeVar("_T")
_R = TypeVar("_R")
PACKAGE_DIR = Path(__file__).resolve().parent


class RayRunner:
    """Tasks on Ray workers; results come back in the tasks' order whatever order they finish in."""

    name = "ray"

    def __init__(self, address: str | None = None, workers: int | None = None) -> None:
        self.address = address or None
        self.workers = workers or 1
        self._requested = workers
        self._started = False

    def __enter__(self) -> RayRunner:
        options: dict[str, Any] = {
            "include_dashboard": False,
            "log_to_driver": False,
            "logging_level": logging.ERROR,
            "configure_logging": True,
        }
        if self.address is None:
            options["num_cpus"] = self._requested
            options["runtime_env"] = {"env_vars": {"PYTHONPATH": str(PACKAGE_DIR.parent)}}
        else:
            options["address"] = self.address
            options["runtime_env"] = {"py_modules": [str(PACKAGE_DIR)]}
        try:
            ray.init(**options)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise BriefError(
                "--ray", f"cannot start or join the Ray cluster ({type(exc).__name__}: {str(exc).splitlines()[0][:160]})"
            ) from None
        self._started = True
        self.workers = max(int(ray.cluster_resources().get("CPU", 1)), 1)  # type: ignore[no-untyped-call]
        return self

    def __exit__(self, *exc: object) -> None:
        if self._started:
            ray.shutdown()
            self._started = False

    def map(self, fn: Callable[[_T], _R], tasks: Sequence[_T], done: Callable[[int], None]) -> list[_R]:
        remote = ray.remote(num_cpus=1)(fn)
        refs = [remote.remote(task) for task in tasks]
        index = {ref: i for i, ref in enumerate(refs)}
        results: dict[int, _R] = {}
        pending = list(refs)
        while pending:
            finished, pending = ray.wait(pending, num_returns=1)
            for ref in finished:
                results[index[ref]] = ray.get(ref)
                done(1)
        return [results[i] for i in range(len(tasks))]
