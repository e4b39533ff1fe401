"""How long `plan()` takes without its cache: the work behind every slider move.

    .venv/bin/python -m benchmarks.plan_speed [--runs 15] [--fleet]

For each preset, plans a brief not seen before (the duty cycle, or the request rate, nudged per run) with
every planner cache cleared, and prints the wall-clock and process-CPU medians, plus the share the core
design (steps 1-3 and the SLO budget, what each failure scenario re-plans) takes. Target: median well under
50 ms, so a page re-render stays under 150 ms (issue 17 asks 5 ms).

`--fleet` plans the capstone scaled from 8 to 100,000 nodes (users and every pool scaled with it, so the load on a
replica stays the same) and prints the CPU per plan at each size: fleet searches are bisections, so the time
should grow no faster than the logarithm of the fleet.
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


FLEET_NODES = (8, 64, 1_000, 10_000, 100_000)


def fleet(runs: int) -> None:
    base = load_brief("capstone")
    print(f"{'nodes':>8} {'plan cpu':>9}  verdict")
    for nodes in FLEET_NODES:
        scale = nodes / base.hardware.nodes
        sized = base.with_changes(
            {
                "hardware.nodes": nodes,
                "workload.users": round(base.workload.users * scale),  # type: ignore[operator]
                "deployment.long_context_nodes": round(base.deployment.long_context_nodes * scale),
                "deployment.spare_nodes": round(base.deployment.spare_nodes * scale),
            }
        )
        cpus = [_time(plan, _nudged(sized, i))[1] for i in range(runs)]
        verdict = plan(sized).verdict
        print(f"{nodes:>8,} {statistics.median(cpus):>6.1f} ms  {'meets the SLO' if verdict.meets_slo else 'misses the SLO'}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--fleet", action="store_true", help="plan time against fleet size (8 to 100,000 nodes)")
    args = parser.parse_args()
    if args.fleet:
        fleet(args.runs)
        return
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
