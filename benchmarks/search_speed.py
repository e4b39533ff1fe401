"""How fast is the design search? Candidates per second per core, simulated frontier points per second, and the
speed-up from one core to all of them, on the default space of a capstone-size brief.

    .venv/bin/python -m benchmarks.search_speed [--preset capstone] [--runs 3]

1. Analytic: every candidate of the default space evaluated in this process (one core): candidates per second of
   wall time and per CPU-second.
2. Frontier: the search's frontier points planned in full and simulated, in this process: points per second, and
   the simulator's share alone.
3. The whole search (evaluation, then the best and the frontier planned and simulated) with one worker (in process)
   and with a process pool of every core: median wall time of --runs each, the speed-up, and whether both give the
   same result. Target (issue 15): at least 20,000 candidates in under 30 s on two cores, the frontier included.
Other work on the machine slows every figure; the load average is printed first.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from planner import load_brief  # noqa: E402
from planner.search import (  # noqa: E402
    DEFAULT_SIM_REQUESTS,
    Chunk,
    Confirm,
    PoolRunner,
    SearchResult,
    SerialRunner,
    confirm_chunk,
    default_workers,
    evaluate_chunk,
    search,
)
from planner.search_space import default_space  # noqa: E402

TARGET_S = 30.0
TARGET_CANDIDATES = 20_000


def _analytic(preset: str) -> tuple[int, float, float]:
    brief = load_brief(preset)
    space = default_space(brief)
    replicas = tuple(range(len(list(space.replicas()))))
    wall, cpu = time.perf_counter(), time.process_time()
    outcome = evaluate_chunk(Chunk(brief=brief, space=space, replicas=replicas))
    return outcome.evaluated, time.perf_counter() - wall, time.process_time() - cpu


def _clear_caches() -> None:
    """Forget every plan and re-plan this process holds, so a timing plans from scratch (plan_speed's: every planner
    cache, by looking them up, where a hand-kept list went stale when a cached function moved)."""
    from benchmarks.plan_speed import _clear_all

    _clear_all()


def _frontier(preset: str, result: SearchResult) -> tuple[int, float, float]:
    from planner.design import plan
    from planner.simulator import SimSettings, simulate

    brief = load_brief(preset)
    _clear_caches()
    overrides = tuple(p.overrides for p in result.frontier)
    start = time.perf_counter()
    confirm_chunk(Confirm(brief=brief, overrides=overrides, requests=DEFAULT_SIM_REQUESTS, seed=0))
    both = time.perf_counter() - start
    designs = [plan(brief.with_changes(o)) for o in overrides]
    start = time.perf_counter()
    for d in designs:
        simulate(d.brief, SimSettings(requests=DEFAULT_SIM_REQUESTS, seed=0))
    return len(overrides), both, time.perf_counter() - start


def _search(preset: str, workers: int) -> SearchResult:
    brief = load_brief(preset)
    space = default_space(brief)
    if workers == 1:
        with SerialRunner() as runner:
            return search(brief, space, runner)
    with PoolRunner(workers) as runner:
        return search(brief, space, runner)


def _cpu_s() -> float:
    """CPU seconds of this process and of its finished children (the pool's workers once it shut down)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _comparable(r: SearchResult) -> dict[str, object]:
    return r.model_dump(exclude={"wall_s", "backend", "workers"})


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--preset", default="capstone")
    parser.add_argument("--runs", type=int, default=3, help="whole searches per worker count (default 3)")
    args = parser.parse_args()
    cores = default_workers()
    print(f"load average {os.getloadavg()[0]:.2f} on {cores} core(s); preset {args.preset}")

    count, wall, cpu = _analytic(args.preset)
    print(
        f"analytic: {count:,} candidates in {wall:.1f} s wall ({cpu:.1f} s CPU): {count / wall:,.0f} per second, {count / cpu:,.0f} per CPU-second (one core)"
    )

    runs: dict[int, list[float]] = {1: [], cores: []}
    cpus: dict[int, list[float]] = {1: [], cores: []}
    results: dict[int, SearchResult] = {}
    for _ in range(args.runs):
        for workers in runs:
            _clear_caches()
            start, cpu = time.perf_counter(), _cpu_s()
            results[workers] = _search(args.preset, workers)
            runs[workers].append(time.perf_counter() - start)
            cpus[workers].append(_cpu_s() - cpu)
    one, many = statistics.median(runs[1]), statistics.median(runs[cores])
    same = _comparable(results[1]) == _comparable(results[cores])
    result = results[cores]
    points, both, sim_only = _frontier(args.preset, result)
    print(
        f"frontier: {points} points planned and simulated ({DEFAULT_SIM_REQUESTS:,} requests each) in {both:.2f} s:"
        f" {points / both:.1f} points per second; the simulator alone {points / sim_only:.0f} per second"
    )
    print(
        f"whole search, median of {args.runs}: 1 core {one:.1f} s ({statistics.median(cpus[1]):.1f} CPU-s),"
        f" {cores} cores {many:.1f} s ({statistics.median(cpus[cores]):.1f} CPU-s, the workers' start included):"
        f" speed-up x{one / many:.2f}; same result: {same}"
    )
    met = result.evaluated >= TARGET_CANDIDATES and many < TARGET_S
    print(
        f"target: {result.evaluated:,} candidates (at least {TARGET_CANDIDATES:,}) in {many:.1f} s on {cores} cores"
        f" (under {TARGET_S:.0f} s), frontier of {len(result.frontier)} confirmed: {'met' if met else 'NOT met'}"
    )


if __name__ == "__main__":
    main()
