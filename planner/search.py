"""Design search: the cheapest design that meets the SLO with N+1, and the cost/latency frontier.

    space ──replicas──▶ evaluate_chunk (a task takes whole replicas and walks each one's node counts)
          ──rows────▶ best      the cheapest candidate meeting the SLO with N+1, confirmed by plan()
                      frontier  candidates meeting the SLO that no other beats on $/M output tokens, p95 TTFT and
                                p95 ITL at once, each planned with plan() and run through the simulator

Every candidate is the brief with its overrides, judged by the same core design plan() uses; a brief with a
long-context pool has it sized for each replica, as the verdict's fix sizes it (the fewest nodes that carry its share). A replica that
cannot be formed rejects all its node counts at once; most other infeasible candidates fall to steps 1-2 and the
steady state (core.not_feasible_before_slo, a fraction of a millisecond); the rest get the core verdict
(`verdict_only`: no trade-off curves, no SLO-capacity search, about a millisecond), and N+1 (the one-node-lost
re-plan) up to the replica's first fleet that has it. Only the best and the frontier are planned in full and
simulated. Workers are this process, a process pool (planner.search_runners) or Ray tasks (planner.search_ray);
results are put back in the space's order, so every backend and worker count gives the same answer. The fewest
nodes each failure scenario needs, a search over the fleet only, is planner.survival.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from planner.brief import MAX_NODES, Brief
from planner.catalog import GPUS
from planner.core import CoreDesign, feasible_replica, not_feasible_before_slo, verdict_only
from planner.cost import HOURS_PER_YEAR, SECONDS_PER_YEAR, per_million
from planner.design import Design, plan
from planner.errors import BriefError
from planner.failures import judged, n_plus_one
from planner.fmt import num, pct
from planner.guard import checked
from planner.mechanisms import resolve
from planner.resize import goal_words, keeps_headroom, long_context_nodes_needed, split_meeting
from planner.search_runners import PoolRunner, Progress, Runner, SerialRunner, default_workers
from planner.search_space import AXES, PRICE_PATH, REPLICA_AXES, SearchSpace
from planner.verdict import InfeasibleDesign

__all__ = [
    "DEFAULT_SIM_REQUESTS",
    "BestGap",
    "Knob",
    "Point",
    "PoolRunner",
    "Runner",
    "SearchResult",
    "SerialRunner",
    "Simulated",
    "default_workers",
    "gap_from_uncomputable",
    "gap_to_best",
    "is_dominated",
    "long_context_pool",
    "search",
    "set_args",
]

DEFAULT_SIM_REQUESTS = 2000  # requests a frontier point's simulated check runs
CHUNKS_PER_WORKER = 8  # tasks per worker: enough to balance slow and fast replicas and to report progress


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Simulated(_Frozen):
    """One general-pool replica of the design run through the simulator at the plan's rate (simulate BRIEF)."""

    requests: int
    seed: int
    ttft_p95_ms: float
    itl_p95_ms: float
    tpot_p95_ms: float
    slo_attainment: float
    meets_slo: bool
    agrees: bool  # the run's verdict is the plan's on the replica it runs (the SLO budget's TTFT and ITL checks)


class Point(_Frozen):
    """One design of the space: its overrides (`plan --set` with them reproduces it) and its figures from plan()."""

    overrides: dict[str, Any]
    label: str
    usd_per_million_output_tokens: float
    usd_per_hour: float
    gpus: int
    ttft_p95_ms: float
    itl_p95_ms: float
    utilization: float  # capacity.utilization: the fleet's busy share at peak (the sizing arithmetic)
    output_tokens_per_s_per_gpu: float  # the peak's output tokens over the fleet's GPUs
    feasible: bool
    meets_slo: bool
    availability_ok: bool
    simulated: Simulated | None
    simulation_note: str = ""  # why there is no simulated check, when there is none
    headroom_multiple: float = math.inf  # x the peak before a limit of the verdict is reached (plan()'s headroom)
    headroom_ok: bool = True  # it keeps the slo.headroom the brief states with every node up (none stated: True)
    kept_multiple: float | None = None  # a stated headroom's judge: the pools' SLO capacity over the peak, every node up


class Knob(_Frozen):
    """How much one axis moves the cheapest design that meets the SLO with N+1: each of its values with every other
    axis at the best design's value (one knob turned at a time), the fleet sized again for each."""

    axis: str
    path: str
    best_value: str | None  # the best design's value (None when no candidate meets the SLO: then over all candidates)
    cheapest_usd_per_million: dict[str, float | None]  # per value of the axis; None: no fleet in the space meets with it
    spread: float  # the dearest value with a design over the cheapest, less one (0 with fewer than two)
    values_without_design: int  # values of the axis with which no fleet in the space meets the SLO with N+1


class SearchResult(_Frozen):
    best: Point | None  # None when no candidate meets the SLO with N+1
    frontier: tuple[Point, ...]  # designs that meet the SLO (with N+1 or not), by $/M output tokens, then p95 TTFT
    evaluated: int  # candidates in the space, every one re-planned or rejected
    accepted: int  # candidates meeting the SLO with N+1
    rejected: dict[str, int]  # the others, by why they cannot be the best
    wall_s: float
    backend: str
    workers: int
    seed: int
    space: dict[str, list[Any]]
    usd_per_gpu_hour: dict[str, float]
    knobs: tuple[Knob, ...]  # the axes that move the cheapest design most, first
    why_no_best: str = ""  # when there is no best: why, in the verdict's words where no design can meet the target
    judged: str = ""  # what a candidate must meet, in words (judged_words)
    stated_headroom: float | None = None  # the brief's slo.headroom: a candidate keeps it to be the best (Point.headroom_ok)


# --- one candidate -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Row:
    """The figures of one feasible candidate (the space's replica index and node count name it)."""

    replica: int
    nodes: int
    usd_per_million: float
    usd_per_hour: float
    gpus: int
    ttft_p95_ms: float
    itl_p95_ms: float
    utilization: float
    tokens_per_s_per_gpu: float
    meets_slo: bool
    availability_ok: bool | None  # False where it misses the SLO; None where N+1 was left unchecked (NOT_CHECKED)
    headroom_ok: bool = True  # it keeps the brief's stated slo.headroom with every node up (none stated: True)
    long_context_nodes: int | None = None  # the long-context pool sized for the replica (None: the brief's, unchanged)
    prefill_nodes: int | None = None  # a disaggregated design's split of the fleet (None: the brief is not disaggregated)


def _cost(brief: Brief, core: CoreDesign) -> tuple[int, float, float]:
    """(GPUs, $/hour, $/M output tokens) as planner.cost computes them."""
    gpus = brief.hardware.nodes * brief.hardware.gpus_per_node
    per_hour = gpus * brief.cost.usd_per_gpu_hour
    out_year = core.demand.output_tokens_per_s * brief.cost.average_duty * SECONDS_PER_YEAR
    return gpus, per_hour, per_million(per_hour * HOURS_PER_YEAR, out_year)


def _uncomputable(exc: InfeasibleDesign) -> str:
    problem = exc.problems[0]
    if problem.problem.startswith("weights do not fit"):
        return "cannot be computed: the weights do not fit"
    if problem.problem.startswith("no room for one sequence"):
        return "cannot be computed: no room for one sequence's KV"
    if problem.field == "deployment.tp":
        return "cannot be computed: TP does not split the node or the KV heads"
    return f"cannot be computed: {problem.field}"


UNREACHABLE = "misses the SLO, as every design does: "  # the rejection of a target under the fixed request path


def _missed(core: CoreDesign) -> str:
    _, goal = judged(core)
    if goal is not None:
        return "misses its deadline"
    floor = next((p for p in core.verdict.problems if p.field == "slo.ttft_p95_ms"), None)  # the verdict's own words
    if floor is not None:  # the fixed request path alone is over the target: no replica, fleet or setting meets it
        return f"{UNREACHABLE}{floor.problem}; {floor.change}"
    slo = core.slo
    missed = [name for name, ok in (("p95 TTFT", slo.ttft_ok), ("p95 ITL", slo.itl_ok)) if not ok]
    return f"misses the SLO: {' and '.join(missed) or 'the targets'}"


NOT_CHECKED = "meets the SLO; N+1 (and a stated headroom) not checked: a smaller fleet of the same replica has them, and costs less"


def evaluate(
    brief: Brief,
    overrides: dict[str, Any],
    index: int,
    check_n_plus_one: bool = True,
    long_context_nodes: int | None = None,
    prefill_nodes: int | None = None,
) -> tuple[Row | None, str | None]:
    """One candidate: its row when the design is feasible (meeting the SLO or not), and why it cannot be the best
    (None when it can: it meets the SLO with N+1). Most infeasible candidates are rejected from steps 1-2 and the
    steady state alone (core.not_feasible_before_slo); the rest get plan()'s core verdict (verdict_only)."""
    try:
        design = brief.with_changes(overrides)
        planned = resolve(design)  # as plan() plans it: image tokens, the hit rate the KV tiers give at this candidate's fleet
        early = checked(not_feasible_before_slo, planned)
        core = None if early else checked(verdict_only, planned)
    except InfeasibleDesign as exc:
        return None, _uncomputable(exc)
    except BriefError as exc:  # a value out of range, or figures that overflow (planner.guard names the field)
        return None, f"does not compute: {exc.field}"
    if core is None or not core.verdict.feasible:
        return None, f"not feasible: {early or _late_infeasibility(core)}"
    gpus, per_hour, per_m = _cost(design, core)
    verdict, goal = judged(core)  # an offline job or a rollout: met by its deadline, priced at its full-batch throughput
    if goal is not None:
        per_m = goal.usd_per_m_output_tokens
    meets = verdict.feasible and verdict.meets_slo
    available = (n_plus_one(design) if check_n_plus_one else None) if meets else False
    # a stated headroom is judged as plan() judges it, with every node up: asked only of a fleet that has its N+1
    kept = keeps_headroom(design)[0] if available else True
    row = Row(
        replica=index,
        nodes=design.hardware.nodes,
        usd_per_million=per_m,
        usd_per_hour=per_hour,
        gpus=gpus,
        ttft_p95_ms=core.slo.ttft_p95_ms,
        itl_p95_ms=core.slo.itl_p95_ms,
        utilization=core.capacity.utilization,
        tokens_per_s_per_gpu=core.demand.output_tokens_per_s / gpus,
        meets_slo=meets,
        availability_ok=available,
        headroom_ok=kept,
        long_context_nodes=long_context_nodes,
        prefill_nodes=prefill_nodes,
    )
    if not meets:
        return row, _missed(core)
    if available is None:
        return row, NOT_CHECKED
    if not available:
        return row, "no N+1: one node lost misses the SLO"
    return row, None if kept else SHORT_OF_HEADROOM


SHORT_OF_HEADROOM = "meets the SLO with N+1, short of the stated headroom: its pools' SLO capacity is under (1 + headroom) x the peak"


def accepted(row: Row) -> bool:
    """A candidate that can be the best: it meets the SLO with N+1 and keeps the stated headroom, as plan() judges it."""
    return row.meets_slo and bool(row.availability_ok) and row.headroom_ok


def _late_infeasibility(core: CoreDesign | None) -> str:
    """The feasibility rules not_feasible_before_slo leaves to the core verdict: LoRA adapters, engine limits."""
    problems = core.verdict.problems if core is not None else ()
    return problems[-1].field if problems else "brief"


@dataclass(frozen=True)
class Chunk:
    """What one task evaluates: whole replicas, every node count of each."""

    brief: Brief
    space: SearchSpace
    replicas: tuple[int, ...]


@dataclass(frozen=True)
class ChunkResult:
    rows: tuple[Row, ...]
    rejected: dict[str, int]
    evaluated: int


def evaluate_chunk(chunk: Chunk) -> ChunkResult:
    """Every candidate of the chunk's replicas, node counts in increasing order. A replica that cannot be formed
    rejects all its node counts at once; its long-context pool is sized once (long_context_pool); N+1 is checked up to
    the replica's first fleet that has it (a larger fleet of the same replica costs more, so it cannot be the best).
    A disaggregated brief's fleets are first split at the brief's prefill share, then judged at the split that meets
    (_split_fleets)."""
    replicas = list(chunk.space.replicas())
    rows: list[Row] = []
    rejected: Counter[str] = Counter()
    evaluated = 0
    share = prefill_share(chunk.brief)
    for index in chunk.replicas:
        replica = replicas[index]
        evaluated += len(chunk.space.nodes)
        shape_reason = _shape_rejection(chunk.brief, chunk.space.overrides(replica, chunk.space.nodes[0]))
        if shape_reason is not None:  # no node count can help a replica that cannot be formed
            rejected[shape_reason] += len(chunk.space.nodes)
            continue
        long_context = long_context_pool(chunk.brief, chunk.space.overrides(replica, chunk.space.nodes[0]))
        judged_at: dict[int, tuple[Row | None, str | None]] = {}
        has_n_plus_one = False  # a smaller fleet of this replica is accepted (N+1, and a stated headroom)
        for nodes in sorted(chunk.space.nodes):
            overrides = chunk.space.overrides(replica, nodes, long_context)
            prefill = None if share is None else _split_at(chunk.brief, nodes, long_context, share)
            if prefill is not None:
                overrides[PREFILL_PATH] = prefill
            row, reason = evaluate(
                chunk.brief, overrides, index, check_n_plus_one=not has_n_plus_one, long_context_nodes=long_context, prefill_nodes=prefill
            )
            judged_at[nodes] = (row, reason)
            has_n_plus_one = has_n_plus_one or bool(row is not None and accepted(row))
        if share is not None:
            _split_fleets(chunk, index, long_context, share, judged_at)
        for row, reason in judged_at.values():
            if reason is not None:
                rejected[reason] += 1
            if row is not None:
                rows.append(row)
    return ChunkResult(rows=tuple(rows), rejected=dict(rejected), evaluated=evaluated)


PREFILL_PATH = "disaggregation.prefill_nodes"


def prefill_share(brief: Brief) -> float | None:
    """The share of the general pool a disaggregated brief gives its prefill pool (12 of 16 nodes: 0.75); None when
    the brief is not disaggregated."""
    if not brief.disaggregation.enabled:
        return None
    dep = brief.deployment
    return brief.disaggregation.prefill_nodes / max(brief.hardware.nodes - dep.spare_nodes - dep.long_context_nodes, 1)


def _split_at(brief: Brief, nodes: int, long_context: int | None, share: float) -> int:
    """The prefill nodes nearest the brief's share of a fleet's general pool, at least one and one short of the pool
    (as planner.resize.split_meeting tries first)."""
    general = nodes - brief.deployment.spare_nodes - (brief.deployment.long_context_nodes if long_context is None else long_context)
    return max(min(round(general * share), general - 1), 1)


def _split_fleets(
    chunk: Chunk, index: int, long_context: int | None, share: float, judged_at: dict[int, tuple[Row | None, str | None]]
) -> None:
    """A disaggregated replica's fleets judged at the split that meets, as the levers and the verdict's fix size them
    (planner.resize.split_meeting, the brief's share first): downwards from the first fleet that meets with N+1 at the
    brief's share (from the largest when none does), while one does. More nodes never hurt, so the first fleet at which
    no split meets ends the walk; the fewest that meets is the replica's cheapest, with N+1, and the larger ones it
    replaces meet the SLO with N+1 left unchecked."""
    order = sorted(judged_at)
    first = next((n for n in order if (row := judged_at[n][0]) is not None and accepted(row)), None)
    below = order[: order.index(first)] if first is not None else order
    replica = list(chunk.space.replicas())[index]
    fewest = first
    for nodes in reversed(below):
        overrides = chunk.space.overrides(replica, nodes, long_context)
        try:
            prefill, _ = split_meeting(chunk.brief.with_changes(overrides), share, headroom=chunk.brief.slo.headroom is not None)
        except (BriefError, ArithmeticError):
            break
        if prefill is None:
            break
        row, reason = evaluate(chunk.brief, overrides | {PREFILL_PATH: prefill}, index, False, long_context, prefill)
        if row is None or not row.meets_slo:  # split_meeting's re-plan and this one disagree: keep what was judged
            break
        judged_at[nodes] = (row, reason)
        fewest = nodes
    if fewest is None or fewest == first:
        return
    for nodes in order:  # the fewest meets with N+1 (split_meeting re-planned it); the larger fleets need no N+1 check
        row, reason = judged_at[nodes]
        if nodes == fewest and row is not None:  # split_meeting judged the stated headroom too
            judged_at[nodes] = (replace(row, availability_ok=True, headroom_ok=True), None)
        elif nodes > fewest and row is not None and row.meets_slo:
            judged_at[nodes] = (replace(row, availability_ok=None), NOT_CHECKED)


def long_context_pool(brief: Brief, overrides: dict[str, Any]) -> int | None:
    """The fewest long-context nodes that carry the pool's share with the candidate's replica, as the verdict's fix sizes
    that pool (planner.resize): a faster replica needs fewer, a slower one more, whatever the fleet. None when the brief
    has no long-context pool, or when no pool of up to half the largest fleet carries it (the brief's count stays and
    each candidate says why)."""
    if brief.deployment.long_context_nodes == 0 or brief.workload.long_context_share <= 0:
        return None
    try:
        return long_context_nodes_needed(brief.with_changes(overrides), MAX_NODES // 2)
    except (BriefError, ArithmeticError):
        return None


def _shape_rejection(brief: Brief, overrides: dict[str, Any]) -> str | None:
    """The reason every node count of a replica is rejected when the replica itself cannot be formed (the weights
    or one sequence do not fit, TP does not split): what each candidate's re-plan would say, once."""
    try:
        feasible_replica(resolve(brief.with_changes(overrides)))
    except InfeasibleDesign as exc:
        return _uncomputable(exc)
    except (BriefError, ArithmeticError):
        return None  # each candidate is judged on its own (planner.guard names the field)
    return None


# --- the frontier ------------------------------------------------------------------------------------


def is_dominated(point: Sequence[float], others: np.ndarray) -> bool:
    """Whether some row of `others` is no worse on every objective and better on one (all minimized)."""
    if others.size == 0:
        return False
    p = np.asarray(point, dtype=float)
    no_worse = np.all(others <= p, axis=1)
    better = np.any(others < p, axis=1)
    return bool(np.any(no_worse & better))


def frontier_rows(rows: Sequence[Row]) -> list[Row]:
    """The non-dominated rows on ($/M, p95 TTFT, p95 ITL), by $/M then TTFT; of rows with the same three figures the
    first in the space's order is kept."""
    finite = [r for r in rows if math.isfinite(r.usd_per_million) and math.isfinite(r.ttft_p95_ms) and math.isfinite(r.itl_p95_ms)]
    order = sorted(finite, key=lambda r: (r.usd_per_million, r.ttft_p95_ms, r.itl_p95_ms, r.replica, r.nodes))
    kept: list[Row] = []
    kept_objectives = np.empty((0, 3))
    for row in order:
        objective = (row.usd_per_million, row.ttft_p95_ms, row.itl_p95_ms)
        # Sorted by $/M first, a row can only be dominated by one before it: compare with the kept ones.
        if is_dominated(objective, kept_objectives) or (kept_objectives.size and np.any(np.all(kept_objectives == objective, axis=1))):
            continue
        kept.append(row)
        kept_objectives = np.vstack([kept_objectives, objective])
    return kept


# --- confirming a point: the whole plan and the simulator --------------------------------------------


def set_args(overrides: dict[str, Any]) -> list[str]:
    """The overrides as `--set PATH=VALUE` arguments (values as `--set` parses them)."""
    return [f"{path}={value}" for path, value in overrides.items()]


def label(brief: Brief) -> str:
    """A design in one line: fleet, replica and engine limits."""
    hw, dep = brief.hardware, brief.deployment
    split = f" ({brief.disaggregation.prefill_nodes} prefill)" if brief.disaggregation.enabled else ""
    return (
        f"{hw.nodes} x {hw.gpus_per_node} {GPUS[hw.gpu].name if hw.gpu in GPUS else hw.gpu}{split}, TP{dep.tp},"
        f" {dep.weights.value} weights, {dep.kv_cache.value} KV, max-num-seqs {dep.max_num_seqs},"
        f" max-num-batched-tokens {dep.max_num_batched_tokens}"
    )


@dataclass(frozen=True)
class Confirm:
    """Plan and simulate these candidates (by their overrides)."""

    brief: Brief
    overrides: tuple[dict[str, Any], ...]
    requests: int
    seed: int


def _simulated(design: Design, requests: int, seed: int) -> tuple[Simulated | None, str]:
    from planner.simulator import SimSettings, simulate  # numba: only when a search confirms its points

    if design.objective is not None:
        return None, "not simulated: an offline job or a rollout is judged on its deadline, which the simulator does not time"

    try:
        run = simulate(design.brief, SimSettings(requests=requests, seed=seed))
    except BriefError as exc:
        return None, f"not simulated: {exc}"
    if run.slo is None:
        return None, "not simulated: the run gave no SLO check"
    return Simulated(
        requests=run.requests,
        seed=seed,
        ttft_p95_ms=run.slo.ttft_p95_ms,
        itl_p95_ms=run.slo.itl_p95_ms,
        tpot_p95_ms=run.slo.tpot_p95_ms,
        slo_attainment=run.slo_attainment,
        meets_slo=run.slo.meets_slo,
        # like with like: the run is one general-pool replica, so it is set beside the plan's verdict on that replica, not
        # on pools it does not run (a long-context pool the plan finds short is in run.slo.not_simulated)
        agrees=run.slo.meets_slo == (design.slo.ttft_ok and design.slo.itl_ok),
    ), ""


def confirm_point(brief: Brief, overrides: dict[str, Any], requests: int, seed: int) -> Point:
    """The candidate planned in full (plan(), as `plan --set` gives it) and simulated."""
    changed = brief.with_changes(overrides)
    design = plan(changed)
    gpus = design.cost.gpus
    simulated, note = _simulated(design, requests, seed)
    goal = design.objective  # an offline job or a rollout: priced at its full-batch throughput, as the search ranks it
    return Point(
        overrides=overrides,
        label=label(design.brief),
        usd_per_million_output_tokens=design.cost.usd_per_million_output_tokens if goal is None else goal.usd_per_m_output_tokens,
        usd_per_hour=design.cost.usd_per_hour,
        gpus=gpus,
        ttft_p95_ms=design.slo.ttft_p95_ms,
        itl_p95_ms=design.slo.itl_p95_ms,
        utilization=design.capacity.utilization,
        output_tokens_per_s_per_gpu=design.demand.output_tokens_per_s / gpus,
        feasible=design.verdict.feasible,
        meets_slo=design.verdict.meets_slo,
        availability_ok=design.verdict.availability_ok,
        simulated=simulated,
        simulation_note=note,
        headroom_multiple=design.headroom.multiple,
        headroom_ok=design.verdict.headroom_ok,
        kept_multiple=keeps_headroom(changed)[1] if changed.slo.headroom is not None else None,
    )


def confirm_chunk(task: Confirm) -> tuple[Point, ...]:
    return tuple(confirm_point(task.brief, o, task.requests, task.seed) for o in task.overrides)


# --- the search --------------------------------------------------------------------------------------


def _chunks(count: int, workers: int) -> list[tuple[int, ...]]:
    """Replica indices dealt round-robin into tasks, so that each task mixes cheap (infeasible) and dear replicas."""
    tasks = max(1, min(count, workers * CHUNKS_PER_WORKER))
    return [tuple(range(start, count, tasks)) for start in range(tasks)]


COST_DIGITS = 12  # significant digits at which two costs tie (the same fleet and price computed along two paths)


def _departures(brief: Brief, replica: dict[str, Any]) -> int:
    """How many of the replica's axes leave the brief's own value."""
    data = brief.model_dump(mode="json")
    return sum(data[AXES[axis].split(".")[0]][AXES[axis].split(".")[1]] != value for axis, value in replica.items())


def _best_row(rows: Iterable[Row], brief: Brief, replicas: Sequence[dict[str, Any]]) -> list[Row]:
    """Accepted rows, cheapest first. Of rows that cost the same, the one that keeps more of the brief's own values
    first: a change that saves nothing is no reason to leave the brief (a lower weight precision risks quality), then
    lower p95 TTFT, ITL and the space's order."""
    ranked = [r for r in rows if accepted(r)]
    departures = {i: _departures(brief, replicas[i]) for i in {r.replica for r in ranked}}
    return sorted(
        ranked,
        key=lambda r: (
            float(f"{r.usd_per_million:.{COST_DIGITS}g}"),
            departures[r.replica],
            r.ttft_p95_ms,
            r.itl_p95_ms,
            r.replica,
            r.nodes,
        ),
    )


def _knobs(rows: Sequence[Row], space: SearchSpace, best: Row | None) -> tuple[Knob, ...]:
    """Each replica axis turned alone around the best design (over every candidate when there is no best): the
    largest spread first, then the most values without a design."""
    replicas = list(space.replicas())
    kept = [r for r in rows if accepted(r)]
    knobs = []
    for axis in REPLICA_AXES:
        if best is not None:
            others = {a: v for a, v in replicas[best.replica].items() if a != axis}
            pool = [r for r in kept if all(replicas[r.replica][a] == v for a, v in others.items())]
        else:
            pool = kept
        cheapest: dict[str, float] = {}
        for row in pool:
            value = str(replicas[row.replica][axis])
            cheapest[value] = min(cheapest.get(value, math.inf), row.usd_per_million)
        by_value: dict[str, float | None] = {str(v): cheapest.get(str(v)) for v in getattr(space, axis)}
        known = [c for c in by_value.values() if c is not None]
        spread = max(known) / min(known) - 1 if len(known) >= 2 and min(known) > 0 else 0.0
        knobs.append(
            Knob(
                axis=axis,
                path=AXES[axis],
                best_value=str(replicas[best.replica][axis]) if best is not None else None,
                cheapest_usd_per_million=by_value,
                spread=spread,
                values_without_design=sum(c is None for c in by_value.values()),
            )
        )
    return tuple(sorted(knobs, key=lambda k: (-k.spread, -k.values_without_design)))


def _row_of(point: Point | None, ranked: list[Row], space: SearchSpace, replicas: list[dict[str, Any]]) -> Row | None:
    if point is None:
        return None
    return next((r for r in ranked if _overrides_of(r, space, replicas) == point.overrides), None)


def _overrides_of(row: Row, space: SearchSpace, replicas: list[dict[str, Any]]) -> dict[str, Any]:
    overrides = space.overrides(replicas[row.replica], row.nodes, row.long_context_nodes)
    return overrides if row.prefill_nodes is None else overrides | {PREFILL_PATH: row.prefill_nodes}


def search(
    brief: Brief,
    space: SearchSpace,
    runner: Runner,
    *,
    seed: int = 0,
    requests: int = DEFAULT_SIM_REQUESTS,
    progress: Progress | None = None,
) -> SearchResult:
    """Every candidate of the space re-planned; the best and the frontier planned in full and simulated."""
    start = time.perf_counter()
    report = progress or (lambda fraction, text: None)
    replicas = list(space.replicas())
    chunks = _chunks(len(replicas), runner.workers)
    finished = [0]

    def evaluated(n: int) -> None:
        finished[0] += n
        report(0.85 * finished[0] / len(chunks), f"evaluated {finished[0]} of {len(chunks)} task(s) of {space.size:,} candidates")

    report(0.0, f"{space.size:,} candidates on {runner.workers} worker(s) ({runner.name})")
    outcomes = runner.map(evaluate_chunk, [Chunk(brief=brief, space=space, replicas=c) for c in chunks], evaluated)
    rows = sorted((r for o in outcomes for r in o.rows), key=lambda r: (r.replica, r.nodes))
    rejected: Counter[str] = Counter()
    for outcome in outcomes:
        rejected.update(outcome.rejected)

    ranked = _best_row(rows, brief, replicas)
    front = frontier_rows([r for r in rows if r.meets_slo])  # a frontier of designs that meet: a cheaper miss is no trade-off
    # The best is confirmed by plan() with the frontier; should plan() disagree, the next cheapest is tried.
    candidates = [_overrides_of(r, space, replicas) for r in front]
    best_tries = [_overrides_of(r, space, replicas) for r in ranked[:1]]
    todo = list(dict.fromkeys(_key(o) for o in best_tries + candidates))
    lookup = {_key(o): o for o in best_tries + candidates}
    confirmed = _confirm(brief, [lookup[k] for k in todo], runner, seed, requests, report)
    points = dict(zip(todo, confirmed, strict=True))
    best = _confirmed_best(brief, ranked, best_tries, points, space, replicas, seed, requests)
    frontier = tuple(p for p in (points[_key(o)] for o in candidates) if p.feasible and p.meets_slo)  # as plan() judges them
    report(1.0, f"done: {len(frontier)} frontier point(s), best {'found' if best else 'none'}")
    return SearchResult(
        best=best,
        frontier=frontier,
        evaluated=sum(o.evaluated for o in outcomes),
        accepted=len(ranked),
        rejected=dict(sorted(rejected.items(), key=lambda kv: (-kv[1], kv[0]))),
        wall_s=time.perf_counter() - start,
        backend=runner.name,
        workers=runner.workers,
        seed=seed,
        space=space.as_table(),
        usd_per_gpu_hour=dict(space.usd_per_gpu_hour),
        knobs=_knobs(rows, space, _row_of(best, ranked, space, replicas)),
        why_no_best="" if best is not None else _why_no_best(rejected),
        judged=judged_words(brief),
        stated_headroom=brief.slo.headroom,
    )


def judged_words(brief: Brief) -> str:
    """What the search asks of a candidate, as plan()'s verdict judges a design: the SLO (a job's deadline) with the
    N+1 its availability asks for, and a stated headroom with every node up; a disaggregated fleet at the split that
    meets."""
    words = f"Each candidate is judged as plan()'s verdict judges a design: it meets {goal_words(brief)}"
    if brief.disaggregation.enabled:
        words += ", each fleet at the prefill/decode split that meets (the brief's share first)"
    if brief.slo.headroom is not None:
        words += f", and keeps the stated {pct(brief.slo.headroom)} headroom above the peak with every node up"
    return words + "."


def _why_no_best(rejected: Counter[str]) -> str:
    """Why no candidate meets the SLO with N+1: a target under the fixed request path, which no design meets (the
    verdict's words and its change), or else the space and the targets."""
    floor = next((reason for reason in rejected if reason.startswith(UNREACHABLE)), None)
    if floor is not None:
        problem, _, change = floor.removeprefix(UNREACHABLE).partition("; ")
        return f"No design can meet the SLO: {problem}. Change: {change}."
    return "No candidate meets the SLO with N+1: widen the space (more nodes, other GPUs) or relax the targets."


def _key(overrides: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted(overrides.items()))


def _confirm(brief: Brief, overrides: list[dict[str, Any]], runner: Runner, seed: int, requests: int, report: Progress) -> list[Point]:
    if not overrides:
        return []
    size = max(1, -(-len(overrides) // (runner.workers * 2)))
    tasks = [
        Confirm(brief=brief, overrides=tuple(overrides[i : i + size]), requests=requests, seed=seed) for i in range(0, len(overrides), size)
    ]
    finished = [0]

    def confirmed(n: int) -> None:
        finished[0] += n
        report(
            0.85 + 0.15 * finished[0] / len(tasks),
            f"planned and simulated {min(finished[0] * size, len(overrides))} of {len(overrides)} point(s)",
        )

    return [p for chunk in runner.map(confirm_chunk, tasks, confirmed) for p in chunk]


def _confirmed_best(
    brief: Brief,
    ranked: list[Row],
    tried: list[dict[str, Any]],
    points: dict[tuple[tuple[str, Any], ...], Point],
    space: SearchSpace,
    replicas: list[dict[str, Any]],
    seed: int,
    requests: int,
) -> Point | None:
    """The cheapest accepted candidate whose full plan agrees (meets the SLO with N+1, keeps a stated headroom)."""
    for i, row in enumerate(ranked):
        overrides = tried[i] if i < len(tried) else _overrides_of(row, space, replicas)
        point = points.get(_key(overrides)) or confirm_point(brief, overrides, requests, seed)
        if point.meets_slo and point.availability_ok and point.headroom_ok:
            return point
    return None


# --- how far a design is from the best ------------------------------------------------------------------


class BestGap(_Frozen):
    """The current design against the search's best: what it costs more, and the changes that reach the best."""

    current_usd_per_million: float
    best_usd_per_million: float
    saving: float  # 1 - best / current: the share of the current cost the best saves (negative: the current is cheaper)
    current_meets: bool  # the current design meets the SLO with N+1 (and keeps a stated headroom)
    changes: dict[str, tuple[Any, Any]]  # path -> (current value, the best's value), only where they differ
    text: str


def _where_saving_comes_from(changes: dict[str, tuple[Any, Any]], knobs: Sequence[Knob]) -> str:
    """Each changed axis turned back alone to the current value (the search's knobs: every other axis at the best's
    value, the fleet sized again): the axes that make the saving, and those that save nothing."""
    makes, nothing = [], []
    for knob in knobs:
        if knob.path not in changes or knob.best_value is None:
            continue
        old = str(changes[knob.path][0])
        best_cost = knob.cheapest_usd_per_million.get(knob.best_value)
        if best_cost is None or old not in knob.cheapest_usd_per_million:
            continue  # the current value is not in the space: the knob cannot say
        back = knob.cheapest_usd_per_million[old]
        if back is None:
            makes.append(f"{knob.axis} (with {old}, no fleet in the space meets)")
        elif float(f"{back:.{COST_DIGITS}g}") > float(f"{best_cost:.{COST_DIGITS}g}"):
            makes.append(f"{knob.axis} (with {old}, everything else as the best, the cheapest is ${num(back)})")
        else:
            nothing.append(knob.axis)
    parts = []
    if makes:
        parts.append(f"The saving comes from the {' and the '.join(makes)}.")
    if nothing:
        parts.append(f"Turned back alone, the {', the '.join(nothing)} would cost the same.")
    return " ".join(parts)


def _changes(brief: Brief, best: Point) -> dict[str, tuple[Any, Any]]:
    """path -> (the brief's value, the best's value), where they differ."""
    data = brief.model_dump(mode="json")
    changes: dict[str, tuple[Any, Any]] = {}
    for path, value in best.overrides.items():
        section, name = path.split(".")
        mine = data[section][name]
        if mine != value:
            changes[path] = (mine, value)
    return changes


def _moves(changes: dict[str, tuple[Any, Any]]) -> str:
    """The changes in words, the GPU-hour price with them (the link and `plan --set` carry it)."""
    return ", ".join(
        f"GPU price ${num(old)} -> ${num(new)} an hour" if path == PRICE_PATH else f"{path.split('.')[-1]} {old} -> {new}"
        for path, (old, new) in changes.items()
    )


def gap_from_uncomputable(brief: Brief, best: Point) -> BestGap:
    """The search's best where the brief's own design cannot be computed (its weights do not fit, say): the changes
    that reach a design that meets; no cost of the current design to set it against."""
    changes = _changes(brief, best)
    return BestGap(
        current_usd_per_million=math.nan,
        best_usd_per_million=best.usd_per_million_output_tokens,
        saving=math.nan,
        current_meets=False,
        changes=changes,
        text=(
            f"The current design cannot be computed; the best design meets the SLO with N+1 at"
            f" ${num(best.usd_per_million_output_tokens)} per M output tokens ({_moves(changes)})."
        ),
    )


def _accepted_words(brief: Brief) -> str:
    """What the best meets, in words: 'the SLO with N+1', and the stated headroom where the brief states one."""
    kept = f" and keeps its {pct(brief.slo.headroom)} headroom" if brief.slo.headroom is not None else ""
    return f"the SLO with N+1{kept}"


def gap_to_best(design: Design, best: Point, knobs: Sequence[Knob] = ()) -> BestGap:
    """The current design against the best; with the search's knobs, which changed axes make the saving."""
    goal = design.objective  # an offline job or a rollout: priced at its full-batch throughput, as the search ranks it
    current = design.cost.usd_per_million_output_tokens if goal is None else goal.usd_per_m_output_tokens
    against = ""
    if goal is None and not design.cost.carries_peak:  # its $/M is no cost of serving: set the best against the fix's
        at_fix = design.cost.usd_per_million_output_tokens_at_fix
        current = at_fix if at_fix is not None else math.nan
        against = " with the change that fixes it (this fleet cannot carry the peak)"
    changes = _changes(design.brief, best)
    saving = 1 - best.usd_per_million_output_tokens / current if current > 0 and math.isfinite(current) else math.nan
    v = design.verdict
    meets = v.feasible and v.meets_slo and v.availability_ok and v.headroom_ok
    wanted = _accepted_words(design.brief)
    moves = _moves(changes)
    if not changes:
        text = "The current design is the best the search found."
    elif not math.isfinite(current):
        text = (
            f"The best design meets {wanted} at ${num(best.usd_per_million_output_tokens)} per M output tokens ({moves});"
            " this fleet cannot carry the peak and no fleet size fixes it, so it has no cost of serving to set against."
        )
    elif abs(best.usd_per_million_output_tokens - current) <= 1e-9 * max(current, 1.0):
        unlike = "" if meets else f" and, unlike the current design, meets {wanted}"
        text = f"The best design costs the same, ${num(current)} per M output tokens{against},{unlike}; it differs in {moves}."
    else:
        verb = "saves" if saving >= 0 else "costs"
        text = (
            f"The best design costs ${num(best.usd_per_million_output_tokens)} per M output tokens against ${num(current)} now{against}:"
            f" it {verb} {pct(abs(saving))}{'' if meets else f' and, unlike the current design, meets {wanted}'} ({moves})."
        )
        text = f"{text} {_where_saving_comes_from(changes, knobs)}".rstrip()
    return BestGap(
        current_usd_per_million=current,
        best_usd_per_million=best.usd_per_million_output_tokens,
        saving=saving,
        current_meets=meets,
        changes=changes,
        text=text,
    )
