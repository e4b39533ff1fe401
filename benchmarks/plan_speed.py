"""How long `plan()` takes without its cache: the work behind every slider move.

    .venv/bin/python -m benchmarks.plan_speed [--runs 15]

For each preset, plans a brief not seen before (the duty cycle, or the request rate, nudged per run) with
every planner cache cleared, and prints the wall-clock and process-CPU medians, plus the share the core
design (steps 1-3 and the SLO budget, what each failure scenario re-plans) takes. Target: median well under
50 ms, so a page re-render stays under 150 ms.
"""

from __future__ import annotations

import argparse
import statistics
import time

from planner import Brief, load_brief, plan, preset_names
from planner.core import _core_cached, core_design, utilization_no_prefix_cache
from planner.design import _plan_cached
from planner.operating_point import _CAPACITIES

TARGET_MS = 50.0


def _nudged(brief: Brief, i: int) -> Brief:
    if brief.workload.request_rate is not None:
        return brief.with_changes({"workload.request_rate": brief.workload.request_rate * (1 + 0.001 * (i + 1))})
    return brief.with_changes({"workload.duty_cycle": min(1.0, brief.workload.duty_cycle * (1 + 0.001 * (i + 1)))})


def _clear() -> None:
    """Empty the planner's caches, then re-plan the capstone: the app keeps it cached as every variation's baseline."""
    _plan_cached.cache_clear()
    _core_cached.cache_clear()
    utilization_no_prefix_cache.cache_clear()
    _CAPACITIES.clear()
    plan(load_brief("capstone"))


def _time(fn: object, brief: Brief) -> tuple[float, float]:
    _clear()
    wall, cpu = time.perf_counter(), time.process_time()
    fn(brief)  # type: ignore[operator]
    return (time.perf_counter() - wall) * 1e3, (time.process_time() - cpu) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    print(f"{'preset':<14} {'plan wall':>10} {'plan cpu':>9} {'core cpu':>9} {'core share':>10}")
    worst = 0.0
    for name in preset_names():
        base = load_brief(name)
        plan(base)  # warm imports and the capstone baseline of the variations
        plans = [_time(plan, _nudged(base, i)) for i in range(args.runs)]
        cores = [_time(core_design, _nudged(base, i)) for i in range(args.runs)]
        wall = statistics.median(w for w, _ in plans)
        cpu = statistics.median(c for _, c in plans)
        core_cpu = statistics.median(c for _, c in cores)
        worst = max(worst, cpu)
        print(f"{name:<14} {wall:>8.1f} ms {cpu:>6.1f} ms {core_cpu:>6.1f} ms {core_cpu / cpu:>9.0%}")
    print(
        f"slowest preset: median {worst:.1f} ms CPU per uncached plan (target {TARGET_MS:.0f} ms): {'ok' if worst <= TARGET_MS else 'OVER'}"
    )


if __name__ == "__main__":
    main()
