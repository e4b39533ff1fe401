"""How long `plan()` takes: cold, and for a slider move in the app.

    .venv/bin/python -m benchmarks.plan_speed [--runs 15] [--fleet]

For each preset, plans a brief not seen before (the duty cycle, or the request rate, nudged per run), two ways,
and prints the process-CPU medians:
- cold: every planner cache emptied first (every lru_cache in planner.*, the SLO-capacity searches), as a fresh
  `python -m planner plan` process meets it (a variation preset plans the capstone baseline too);
- slider: the preset planned first, then the nudged brief, as the app meets a slider move: the capacity searches of
  an unchanged replica and traffic shape are reused.
Plus the share of the cold plan the core design takes (steps 1-3 and the SLO budget, what each failure scenario
re-plans). Target (issue 17): 5 ms.

`--fleet` plans the capstone scaled from 8 to 100,000 nodes (users and every pool scaled with it, so the load on a
replica stays the same) and prints the CPU per cold plan at each size: fleet searches are bisections, so the time
should grow no faster than the logarithm of the fleet.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from planner import Brief, load_brief, plan, preset_names
from planner.core import core_design
from planner.operating_point import _CAPACITIES

TARGET_MS = 5.0


def _nudged(brief: Brief, i: int) -> Brief:
    if brief.workload.request_rate is not None:
        return brief.with_changes({"workload.request_rate": brief.workload.request_rate * (1 + 0.001 * (i + 1))})
    return brief.with_changes({"workload.duty_cycle": min(1.0, brief.workload.duty_cycle * (1 + 0.001 * (i + 1)))})


def _clear_all() -> None:
    """Empty every cache the planner keeps: each lru_cache of its modules and the SLO-capacity searches."""
    for name, module in list(sys.modules.items()):
        if name == "planner" or name.startswith("planner."):
            for value in list(vars(module).values()):
                if callable(getattr(value, "cache_clear", None)):
                    value.cache_clear()
    _CAPACITIES.clear()


def _time(fn: object, brief: Brief) -> tuple[float, float]:
    """Wall and CPU ms of fn(brief) from cold: every planner cache emptied first."""
    _clear_all()
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
    print(f"{'preset':<20} {'cold cpu':>9} {'slider cpu':>11} {'core share':>11}")
    worst_cold = worst_slider = 0.0
    for name in preset_names():
        base = load_brief(name)
        colds = [_time(plan, _nudged(base, i))[1] for i in range(args.runs)]
        cores = [_time(core_design, _nudged(base, i))[1] for i in range(args.runs)]
        sliders = []
        for i in range(args.runs):
            plan(base)  # the design on screen before the move
            cpu = time.process_time()
            plan(_nudged(base, i))
            sliders.append((time.process_time() - cpu) * 1e3)
        cold, slider, core = statistics.median(colds), statistics.median(sliders), statistics.median(cores)
        worst_cold, worst_slider = max(worst_cold, cold), max(worst_slider, slider)
        print(f"{name:<20} {cold:>6.1f} ms {slider:>8.1f} ms {core / cold:>10.0%}")
    print(f"slowest preset: cold {worst_cold:.1f} ms, slider {worst_slider:.1f} ms of CPU per plan (target {TARGET_MS:.0f} ms)")


if __name__ == "__main__":
    main()
