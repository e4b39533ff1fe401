"""How long `plan()` takes: cold, and for a slider move in the app.

    .venv/bin/python -m benchmarks.plan_speed [--runs 15] [--fleet | --loads]

For each preset, plans a brief not seen before (the duty cycle, or the request rate, nudged per run), and prints the
process-CPU medians; the runs go round by round over the presets (each round times every preset once), so a minute
when this shared machine runs slow weighs on every preset alike rather than on the one timed then:
- cold: every planner cache emptied first (every lru_cache in planner.*, the SLO-capacity searches), as a fresh
  `python -m planner plan` process meets it (a variation preset plans the capstone baseline too);
- whole: the cold plan and then every part a Design works out on first read (the failure table, the engine
  configuration with its dependencies, the cost levers and a variation's analysis: what the Failure modes,
  Architecture, Cost and Variations pages, `plan --json` and the document read);
- slider: the preset planned first, then one step of the sidebar's traffic control (duty cycle +0.01, or the request
  rate +1 req/s; the runs before December 2026's last pass moved it x2 by mistake), as the app meets a slider move on
  a page that shows none of those parts (SLO budget, Search, Compare; Capacity where the brief poses no variation):
  the capacity searches of an unchanged replica and traffic shape are reused;
- slider, whole: the same with every part read (the Failure modes page).
Plus the share of the cold plan the core design takes (steps 1-3 and the SLO budget, what each failure scenario
re-plans), and a fixed pure-Python reference timed just before each cold plan: how fast the machine ran Python then
(this shared machine's figures move 1.5-2x between minutes, the reference's with them, while nothing else runs on it:
the host's other tenants), and each preset's cold plan over the reference timed beside it ("cold / ref": the median of
those ratios). That ratio times the fastest reference of the run is the cold plan at the machine's quiet speed: a
figure to compare runs by, printed beside the medians, not in their place. Target (issue 17): 5 ms.

`--loads` plans each preset cold at 0.8-1.3x its traffic (users or request rate), as far as a user drags the traffic
control from a preset: a design that loses its SLO, its N+1 or its stated headroom there works out the advice and the
fleet that fixes it, so a brief near a preset may cost more than the preset itself. Prints the median CPU per plan at
each load, round by round as above, with the reference.

`--fleet` plans the capstone scaled from 8 to 100,000 nodes (users and every pool scaled with it, so the load on a
replica stays the same) and prints the CPU per cold plan at each size: fleet searches are bisections, so the time
should grow no faster than the logarithm of the fleet.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time

from benchmarks.machine import OtherWork
from planner import Brief, load_brief, plan, preset_names
from planner.core import core_design
from planner.operating_point import _CAPACITIES

TARGET_MS = 5.0


def _nudged(brief: Brief, i: int) -> Brief:
    if brief.workload.request_rate is not None:
        return brief.with_changes({"workload.request_rate": brief.workload.request_rate * (1 + 0.001 * (i + 1))})
    return brief.with_changes({"workload.duty_cycle": min(1.0, brief.workload.duty_cycle * (1 + 0.001 * (i + 1)))})


def _clear_all() -> None:
    """Empty every cache the planner keeps: each lru_cache and bounded memo of its modules and the SLO-capacity searches."""
    for name, module in list(sys.modules.items()):
        if name == "planner" or name.startswith("planner."):
            for value in list(vars(module).values()):
                if not isinstance(value, type) and callable(getattr(value, "cache_clear", None)):  # a memo, not its class
                    value.cache_clear()
    _CAPACITIES.clear()


def whole(brief: Brief) -> None:
    """plan() and every part of the Design worked out on first read."""
    design = plan(brief)
    design.failures, design.config, design.cost.levers, design.variation  # noqa: B018  (reading them works them out)


def _time(fn: object, brief: Brief) -> tuple[float, float]:
    """Wall and CPU ms of fn(brief) from cold: every planner cache emptied first."""
    _clear_all()
    wall, cpu = time.perf_counter(), time.process_time()
    fn(brief)  # type: ignore[operator]
    return (time.perf_counter() - wall) * 1e3, (time.process_time() - cpu) * 1e3


FLEET_NODES = (8, 64, 1_000, 10_000, 100_000)
LOADS = (0.8, 0.9, 1.0, 1.1, 1.2, 1.3)


def _at_load(brief: Brief, load: float, i: int) -> Brief:
    """The brief at `load` x its traffic (the duty cycle capped at 1), nudged by a millionth per run: a brief not planned before."""
    w, nudge = brief.workload, load * (1 + 1e-6 * (i + 1))
    if w.request_rate is not None:
        return brief.with_changes({"workload.request_rate": w.request_rate * nudge})
    return brief.with_changes({"workload.duty_cycle": min(1.0, w.duty_cycle * nudge)})


def loads(runs: int) -> None:
    names = preset_names()
    bases = {name: load_brief(name) for name in names}
    cpus: dict[tuple[str, float], list[float]] = {(name, load): [] for name in names for load in LOADS}
    references: dict[str, list[float]] = {name: [] for name in names}  # timed before each preset's loads, each round
    others = OtherWork()
    for i in range(runs):
        for name in names:
            references[name].append(_reference_ms())
            for load in LOADS:
                cpus[name, load].append(_time(plan, _at_load(bases[name], load, i))[1])
    print(f"{'preset':<20}" + "".join(f"{f'x{load}':>9}" for load in LOADS))
    for name in names:
        print(f"{name:<20}" + "".join(f"{statistics.median(cpus[name, load]):>6.1f} ms" for load in LOADS))
    slowest = max(cpus, key=lambda key: statistics.median(cpus[key]))
    every = [ms for timed in references.values() for ms in timed]
    relative = _per_reference(cpus[slowest], references[slowest[0]])
    print(
        f"slowest: {slowest[0]} at x{slowest[1]}, {statistics.median(cpus[slowest]):.1f} ms a cold plan"
        f" ({relative:.2f}x the reference timed beside it: {relative * min(every):.1f} ms at the machine's quiet speed;"
        f" the reference's median {statistics.median(every):.2f} ms, min {min(every):.2f})"
    )
    print(others.line())


def fleet(runs: int) -> None:
    base = load_brief("capstone")
    print(f"{'nodes':>8} {'plan cpu':>9}  verdict")
    others = OtherWork()
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
    print(others.line())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--fleet", action="store_true", help="plan time against fleet size (8 to 100,000 nodes)")
    parser.add_argument("--loads", action="store_true", help="plan time at 0.8-1.3x each preset's traffic")
    args = parser.parse_args()
    if args.fleet:
        fleet(args.runs)
        return
    if args.loads:
        loads(args.runs)
        return
    names = preset_names()
    bases = {name: load_brief(name) for name in names}
    figures: dict[str, list[list[float]]] = {name: [[], [], [], [], []] for name in names}
    references: dict[str, list[float]] = {name: [] for name in names}  # timed before each cold plan
    others = OtherWork()
    for i in range(args.runs):  # round by round over the presets: a slow minute of the machine lands on every preset alike
        for name in names:
            base, kept = bases[name], figures[name]
            references[name].append(_reference_ms())
            kept[0].append(_time(plan, _nudged(base, i))[1])
            kept[1].append(_time(whole, _nudged(base, i))[1])
            kept[2].append(_time(core_design, _nudged(base, i))[1])
            kept[3].append(_slider(base, plan, i))
            kept[4].append(_slider(base, whole, args.runs + i))
    print(f"{'preset':<20} {'cold':>9} {'whole':>9} {'slider':>9} {'slider, whole':>14} {'core share':>11} {'cold / ref':>11}")
    worst = [0.0, 0.0, 0.0, 0.0, 0.0]
    for name in names:
        cold, full, core, slider, slider_full = (statistics.median(x) for x in figures[name])
        relative = _per_reference(figures[name][0], references[name])
        worst = [max(w, f) for w, f in zip(worst, (cold, full, slider, slider_full, relative), strict=True)]
        print(
            f"{name:<20} {cold:>6.1f} ms {full:>6.1f} ms {slider:>6.1f} ms {slider_full:>11.1f} ms {core / cold:>10.0%} {relative:>10.2f}x"
        )
    print(
        f"slowest preset, CPU per plan: cold {worst[0]:.1f} ms, whole {worst[1]:.1f} ms, slider {worst[2]:.1f} ms,"
        f" slider whole {worst[3]:.1f} ms (target {TARGET_MS:.0f} ms)"
    )
    every = [ms for timed in references.values() for ms in timed]
    quiet = min(every)
    print(
        f"the machine meanwhile: a fixed pure-Python reference took {statistics.median(every):.2f} ms (median of one"
        f" before each cold plan; min {quiet:.2f}): compare two runs by it, the plan's code aside; the slowest preset's cold"
        f" plan took {worst[4]:.2f}x the reference timed beside it (median over rounds), {worst[4] * quiet:.1f} ms at the"
        " machine's quiet speed (that ratio x the fastest reference)"
    )
    print(others.line())


def _per_reference(cpus_ms: list[float], references_ms: list[float]) -> float:
    """The median over rounds of a plan's CPU over the reference's timed just before it: the plan's cost in units of how
    fast the machine ran Python then, steadier between minutes than either figure alone."""
    return statistics.median(cpu / ref for cpu, ref in zip(cpus_ms, references_ms, strict=True))


def _reference_ms() -> float:
    """CPU ms of a fixed pure-Python workload (float arithmetic, calls, a dict and a list: what a plan is made of), the
    same every run: how fast the machine runs Python code at the time, whatever the planner's code."""
    cpu = time.process_time()
    kept: dict[int, float] = {}
    total = 0.0
    for k in range(20_000):
        x = math.exp(-k * 1e-4) + math.log1p(k)
        kept[k % 512] = max(x, total * 1e-9)
        total += _square(x) + len(kept)
    return (time.process_time() - cpu) * 1e3


def _square(x: float) -> float:
    return x * x


def _moved(brief: Brief, i: int) -> Brief:
    """One step of the sidebar's traffic control (the duty-cycle slider's 0.01, down where up would pass 1; the request
    rate's 1 req/s), nudged by a millionth per run so no run's brief was planned before."""
    w, nudge = brief.workload, 1 + 1e-6 * (i + 1)
    if w.request_rate is not None:
        return brief.with_changes({"workload.request_rate": (w.request_rate + 1.0) * nudge})
    step = SLIDER_STEP if w.duty_cycle + SLIDER_STEP <= 1.0 else -SLIDER_STEP
    return brief.with_changes({"workload.duty_cycle": (w.duty_cycle + step) * nudge})


SLIDER_STEP = 0.01  # the duty-cycle slider's step (ui/sidebar.py)


def _slider(base: Brief, fn: object, i: int) -> float:
    """CPU ms of fn on the moved brief right after the preset's own design was planned and read whole (on screen)."""
    whole(base)  # the design on screen before the move
    cpu = time.process_time()
    fn(_moved(base, i))  # type: ignore[operator]
    return (time.process_time() - cpu) * 1e3


if __name__ == "__main__":
    main()
