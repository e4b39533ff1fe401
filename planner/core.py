"""Steps 1-3 and the SLO budget of one brief: the core design every re-plan goes through.

The failure table and the variation analyses re-plan a changed brief with `core_design`; plan() (planner.design)
builds the whole design on top. Nothing here imports the re-planners, so there is no import circle and no
callback: failures and variations import this module directly.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache, partial
from itertools import islice
from operator import attrgetter
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict, PrivateAttr, computed_field

from planner.architecture import long_context_utilization
from planner.brief import MAX_NODES, Brief, ItlMetric, KvPrecision, ObjectiveKind
from planner.capacity import (
    Capacity,
    Demand,
    Memory,
    capacity,
    demand,
    demand_rate_per_s,
    kv_fraction_at,
    memory,
    utilization_at,
    utilization_no_prefix_cache_at,
)
from planner.disagg import (
    DisaggAnalysis,
    SplitP95s,
    apply_disaggregation,
    capacity_scale,
    disaggregated_operating_point,
    disaggregation_analysis,
    meets_by_capacity,
    multi_node_problems,
    pools_meet,
    split_p95s,
)
from planner.errors import BriefError
from planner.fmt import num, pct
from planner.grid_search import Probe, first_meeting
from planner.lora import lora_check
from planner.mechanism_conclusion import mechanism_conclusion
from planner.mechanisms import engine_problems as mechanism_engine_problems
from planner.mechanisms import resolve, ttft_extra_s
from planner.memo import BoundedMemo
from planner.operating_point import (
    Limit,
    OperatingPoint,
    context_tokens,
    full_batch,
    max_num_seqs_meeting,
    operating_point,
    probed_around_capacity,
    steady_state,
)
from planner.pools import SIZING_UTILIZATION, Pools, pools_of, routing_problems, share_problems
from planner.replica import ReplicaShape, shape_of
from planner.slo import SloBudget, batched_tokens_nearest, engine, judged_budget, request_path_s, slo_budget
from planner.speculative import SpeculativeAnalysis, apply_speculation, speculative_analysis
from planner.trusted import trusted
from planner.verdict import InfeasibleDesign, Problem, Verdict

__all__ = [
    "SIZING_UTILIZATION",
    "CapacityReadCore",
    "CoreDesign",
    "LoadPoint",
    "PoolsReadCore",
    "SizingFigures",
    "SizingShares",
    "capacity_read",
    "capacity_read_core",
    "core_design",
    "feasible_replica",
    "fewest_nodes",
    "judged_itl_ms",
    "judged_with_capacity",
    "long_context_busy",
    "not_feasible_before_slo",
    "pools_meet_at",
    "pools_read_core",
    "read_by_pools",
    "replan",
    "replica_capacity",
    "request_path_ms",
    "same_but_fleet_and_traffic",
    "sizing_figures",
    "utilization_no_prefix_cache",
    "verdict_core",
    "verdict_only",
    "verdict_read",
    "worked_out",
]


class CoreDesign(BaseModel):
    """Steps 1-3 and the SLO budget: what a failure scenario or a variation option re-plans (no recursion)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    brief: Brief
    shape: ReplicaShape
    pools: Pools
    demand: Demand
    memory: Memory
    capacity: Capacity
    operating_point: OperatingPoint
    slo: SloBudget  # verdict_core's own: only the p95s the verdict judges (slo.judged_budget), the rest nan (or the design's, _same_point)
    long_context_utilization: float  # the long-context pool's busy share at peak (0 without one)
    verdict: Verdict  # availability is judged by plan() from the failure table (re-plans leave it True)
    disaggregation: DisaggAnalysis | None = None  # the prefill and decode pools when the brief disaggregates
    speculative: SpeculativeAnalysis | None = None  # speculation's gain by batch when the brief turns it on
    _conclusion: _ConclusionInputs | None = PrivateAttr(default=None)  # what mechanism_conclusion is worked out from
    _load_point: OperatingPoint = PrivateAttr()  # the point the SLO budget's running batch is solved at (load_batch_basis)

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def load_batch_basis(self) -> str:
        """Where the running batch of the SLO budget comes from (the aggregated replica's solve, a disaggregated design's
        too), written on first read."""
        return _load_batch_basis(self._load_point)

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def mechanism_conclusion(self) -> str | None:
        """What binds and which mechanism the design turns on, with the arithmetic (None: no mechanism, or a re-plan that
        reads no conclusion). Worked out on first read: a speculative design's compares with its plan without
        speculation, a re-plan a page that shows no conclusion does not pay for."""
        return self._conclusion() if self._conclusion is not None else None


@dataclass(frozen=True)
class _ConclusionInputs:
    """A core design's figures its mechanism conclusion reads (planner.mechanism_conclusion)."""

    brief: Brief
    capacity: Capacity
    disaggregation: DisaggAnalysis | None
    speculative: SpeculativeAnalysis | None
    aggregated: SloBudget | None  # the SLO budget before the mechanism's (None: the plan without speculation's, re-planned)
    slo: SloBudget
    gpus_per_replica: int

    def __call__(self) -> str | None:
        aggregated = self.aggregated
        if aggregated is None:  # a speculative design compares with the design without it
            aggregated = _core_cached(self.brief.with_changes({"speculative.enabled": False}), False, False).slo
        return mechanism_conclusion(
            self.brief, self.capacity, self.disaggregation, self.speculative, aggregated, self.slo, self.gpus_per_replica
        )


def _fatal_problems(brief: Brief, shape: ReplicaShape) -> tuple[Problem, ...]:
    """Designs that cannot be computed: the weights do not fit, not one sequence's KV does, or disaggregation meets a
    replica that spans nodes."""
    if shape.kv_gb_per_gpu <= 0:
        need = shape.weights_gb_per_gpu + shape.reserve_gb_per_gpu
        return (
            Problem(
                field="deployment.tp",
                problem=(
                    f"weights do not fit: {num(shape.weights_gb_per_gpu, 'GB')} weights + {num(shape.reserve_gb_per_gpu, 'GB')} reserve per GPU"
                    f" exceed the {num(shape.usable_gb_per_gpu, 'GB')} usable on a {shape.gpu.name}"
                ),
                change=f"raise TP, add pipeline stages (deployment.pp), quantize the weights, or pick a GPU with more than {num(need, 'GB')}",
            ),
        )
    _, held = context_tokens(brief)
    if shape.kv_capacity_tokens < held:
        return (
            Problem(
                field="deployment.reserve_gb_per_gpu",
                problem=(
                    f"no room for one sequence's KV: {num(shape.kv_capacity_tokens, 'tokens')} fit per replica,"
                    f" one sequence holds {num(held, 'tokens')}"
                ),
                change="raise TP, quantize the weights or the KV cache, lower the reserve, or shorten the context",
            ),
        )
    return multi_node_problems(brief, shape)


_LIMIT_FIELDS = {
    Limit.slots: "deployment.max_num_seqs",
    Limit.kv: "hardware.nodes",
    Limit.prefill: "workload.prefix_hit_rate",
    Limit.batched_tokens: "deployment.max_num_batched_tokens",
}
_LIMIT_WORDS = {
    Limit.slots: "every batch slot (max-num-seqs) is taken",
    Limit.kv: "the running sequences' KV does not fit the pool (more nodes, FP8 KV or shorter contexts lift it)",
    Limit.prefill: "prompts arrive faster than the prefill steps clear them",
    Limit.batched_tokens: "the decode batch the load needs fills max-num-batched-tokens, leaving prompts no room",
}


def carry_peak_change(brief: Brief, otherwise: str) -> str:
    """The change for a sizing utilization over 100%: the fleet that re-plans at 100% or under (fewest_nodes), not a
    ratio of the utilization (whole replicas and the pools beside the general one keep it from falling as 1 / nodes);
    `otherwise`, the changes that need no node, after it."""
    nodes = fewest_nodes(brief, 1.0, prefix_cache=True)
    if _utilization_on(brief, nodes, True) > 1:
        return f"no fleet of up to {nodes} nodes brings it to 100%: {otherwise}"
    return f"add nodes: {nodes} in all ({nodes - brief.hardware.nodes} more) bring it to 100% or under, or {otherwise}"


def _problems(brief: Brief, shape: ReplicaShape, cap: Capacity, mem: Memory, op: OperatingPoint, advise: bool = True) -> list[Problem]:
    """The aggregated design's sizing and operating-point problems. A disaggregated design keeps only the sizing
    utilization's (its advice the fix's fleet and split) and the context length's: its pools judge the batch, the KV
    and the queues (DisaggAnalysis.problems), not the aggregated replica's."""
    problems = []
    pooled = brief.disaggregation.enabled
    if cap.utilization > 1:
        otherwise = "raise the prefix hit rate, or quantize"
        if pooled:  # a fleet sized without its split re-plans with one pool short: the fix names both
            change = f"add nodes, with the prefill/decode split the change that fixes it names, or {otherwise}"
        else:
            change = carry_peak_change(brief, otherwise) if advise else f"add nodes, {otherwise}"
        problems.append(
            Problem(
                field="hardware.nodes",
                problem=f"utilization {pct(cap.utilization)} exceeds 100%: the fleet cannot carry the peak (the worked design's sizing arithmetic)",
                change=change,
            )
        )
    if cap.kv_fraction > 1 and not pooled:
        problems.append(
            Problem(
                field="workload.kv_context_tokens",
                problem=f"the KV cache holds {num(mem.max_sequences_per_replica)} sequences per replica, the sizing load needs {num(cap.batch_per_replica)}",
                change="add nodes, use FP8 KV, or shorten the context"
                if brief.deployment.kv_cache is KvPrecision.bf16
                else "add nodes or shorten the context (the KV cache is FP8 already)",
            )
        )
    if not op.stable and op.limit is not None and not pooled:
        problems.append(
            Problem(
                field=_LIMIT_FIELDS[op.limit] if op.limit is not Limit.prefill or brief.deployment.prefix_caching else "hardware.nodes",
                problem=(
                    f"a general-pool replica cannot keep up with {num(op.rate_per_replica_per_s, 'req/s')}: {_LIMIT_WORDS[op.limit]},"
                    " so the queue grows without bound"
                ),
                change=op.fix,
                overrides=op.fix_overrides,
            )
        )
    if brief.deployment.max_model_len > shape.model.max_context_tokens:
        problems.append(
            Problem(
                field="deployment.max_model_len",
                problem=f"{brief.deployment.max_model_len} tokens is beyond the model's {shape.model.max_context_tokens}-token context",
                change=f"set it to at most {shape.model.max_context_tokens}",
            )
        )
    return problems


def _per_token_words(brief: Brief, shape: ReplicaShape, slo: SloBudget) -> str:
    spec = engine(brief, shape).spec
    if spec is None or spec.off_above_batch < 1 or slo.itl_metric is not ItlMetric.tpot:
        return ""
    return f" over the {num(spec.tokens_per_step)} tokens a speculative step emits"


def _irreducible_ms(brief: Brief, shape: ReplicaShape, slo: SloBudget) -> tuple[float, float]:
    """(TTFT, the judged gap) no load or engine setting can go below: the fixed request path; one sequence's step +
    scheduler, which with speculation on emits several tokens, so a reply's mean gap (TPOT) is that over the tokens."""
    eng = engine(brief, shape)
    step_s = eng.engine_step_s(1.0) + eng.sched_s
    if eng.spec is not None and eng.spec.off_above_batch >= 1 and slo.itl_metric is ItlMetric.tpot:
        step_s /= eng.spec.tokens_per_step
    return slo.point.fixed_ms, step_s * 1e3


def _slo_problems(brief: Brief, shape: ReplicaShape, slo: SloBudget, op: OperatingPoint, advise: bool = True) -> list[Problem]:
    """The targets the aggregated SLO budget misses, and targets below what any load reaches. A disaggregated design
    keeps only the latter: its pools' latencies judge it (_mechanism_misses), not the aggregated comparison's."""
    p = slo.point
    problems: list[Problem] = []
    judged = op.stable and not brief.disaggregation.enabled  # the aggregated misses: at a steady state, not pooled
    ttft_floor, itl_floor = _irreducible_ms(brief, shape, slo)
    if slo.ttft_target_ms <= ttft_floor:  # no queueing or prefill advice can help: say so instead
        problems.append(
            Problem(
                field="slo.ttft_p95_ms",
                problem=(
                    f"the {num(slo.ttft_target_ms, 'ms')} TTFT target is below the irreducible {num(ttft_floor, 'ms')}"
                    " (network, gateway, tokenization, first sample, first write) before any queueing or prefill"
                ),
                change=f"set the target above {num(ttft_floor, 'ms')}, or shorten the fixed path (latency.*, e.g. a gateway nearer the users)",
            )
        )
    elif not slo.ttft_ok and judged:
        setting: dict[str, int] = {}
        if p.admission_wait_ms > p.prompt_wait_ms:
            current = brief.deployment.max_num_seqs
            need = max_num_seqs_meeting(brief, shape, p.rate_per_replica_per_s, p.load_batch) if math.isfinite(p.load_batch) else current
            setting = {"deployment.max_num_seqs": need} if need > current else {}
            to = f" from {current} to ~{need}" if setting else ""
            field, change = (
                "deployment.max_num_seqs",
                f"raise max-num-seqs{to} above the {num(p.load_batch)} sequences the load keeps running, or add nodes",
            )
        elif not p.prefill_stage_ms < slo.ttft_target_ms:
            field, change = (
                "deployment.max_num_batched_tokens",
                "raise max-num-batched-tokens so a capped prompt needs fewer chunks, or raise the prefix hit rate",
            )
        else:
            field, change = "hardware.nodes", f"the prefill slot is {pct(p.prefill_slot_busy)} busy; {_nodes_change(op)}"
        problems.append(
            Problem(
                field=field,
                problem=f"p95 TTFT is {num(slo.ttft_p95_ms, 'ms')}, over the {num(slo.ttft_target_ms, 'ms')} target (slo.ttft_p95_ms)",
                change=change,
                overrides=setting,
            )
        )
    if slo.itl_target_ms <= itl_floor:
        problems.append(
            Problem(
                field="slo.itl_p95_ms",
                problem=(
                    f"the {num(slo.itl_target_ms, 'ms')} ITL target is below the irreducible {num(itl_floor, 'ms')}:"
                    f" one sequence's decode step plus the scheduler{_per_token_words(brief, shape, slo)}, at any load"
                ),
                change=f"set the target above {num(itl_floor, 'ms')}, or shorten the step: higher TP, lower-precision weights, a GPU with more bandwidth",
            )
        )
    elif not slo.itl_ok and judged:
        metric = slo.itl_metric.value
        chunk = _chunk_change(brief, shape, slo, op) if advise and _chunk_rides(brief, p.mixed_step_share, metric) else None
        field, change, setting = ("hardware.nodes", _nodes_change(op), {}) if chunk is None else chunk
        problems.append(
            Problem(
                field=field,
                problem=(
                    f"p95 {metric.upper()} is {num(slo.judged_itl_p95_ms, 'ms')}, over the {num(slo.itl_target_ms, 'ms')}"
                    f" target slo.itl_p95_ms (which judges {'gaps between consecutive tokens' if metric == 'itl' else 'each reply’s mean gap, TPOT'})"
                ),
                change=change,
                overrides=setting,
            )
        )
    return problems


def _chunk_rides(brief: Brief, mixed_step_share: float, metric: str) -> bool:
    """Whether the chunk size is the lever for a missed ITL: the gaps judged one by one, over 5% of them on chunk-carrying
    steps, and chunks beside decode at all (a disaggregated design's decode pool carries none: its problems drop it)."""
    return mixed_step_share > 0.05 and metric == "itl" and not brief.disaggregation.enabled


_CHUNK_TRIES = 3  # values from the trade-off curve re-planned, nearest first


def _chunk_change(brief: Brief, shape: ReplicaShape, slo: SloBudget, op: OperatingPoint) -> tuple[str, str, dict[str, int]] | None:
    """The max-num-batched-tokens the plan's trade-off shows meeting both targets at this operating point, nearest the
    brief's, confirmed by re-planning with it (the operating point moves with the chunk): a smaller chunk does not
    always shorten p95 ITL (more of the gaps fall on chunk-carrying steps), so the direction is the curve's. None when
    none of the nearest _CHUNK_TRIES values meeting both on the curve re-plans as meeting them. The curve's points are
    worked out nearest first, as far as the advice reads, and only for values whose p95 TTFT (worked out first, a
    fraction of a point) meets its target (slo.batched_tokens_nearest): the whole curve only when read. A value is
    re-planned for its verdict (_judged_core: its p95 ITL and TTFT are the whole re-plan's), the core the fleet fix's
    check that the setting alone meets then reads again. The curve's point at the brief's own value is the SLO budget's
    own (at a steady state the budget's engine is the brief's, at the same rate and batch): its p95 ITL is read there."""
    p, current = slo.point, brief.deployment.max_num_batched_tokens
    rate, batch = op.rate_per_replica_per_s, op.in_flight  # the SLO budget's own, which its curve is worked out at
    nearest = batched_tokens_nearest(brief, shape, rate, batch, p.running_batch, slo.ttft_target_ms)  # worked out as reached
    meeting = (t for t in nearest if t.itl_p95_ms <= slo.itl_target_ms)  # their p95 TTFT already within its target
    for t in islice(meeting, _CHUNK_TRIES):
        value = int(t.x)
        overrides = {"deployment.max_num_batched_tokens": value}
        try:
            again = _judged_core(brief.with_changes(overrides))  # its own chunk advice not worked out: no chain of confirmations
        except BriefError:  # the value cannot be planned (out of range, or the replica no longer fits): not a change
            continue
        if not (again.operating_point.stable and again.slo.ttft_ok and again.slo.itl_ok):
            continue
        way = "raise" if value > current else "lower"
        was = f" ({num(slo.itl_p95_ms, 'ms')} at {current} on the same curve)"  # the curve's point there is the budget's
        return (
            "deployment.max_num_batched_tokens",
            f"{pct(p.mixed_step_share)} of token gaps fall on steps carrying a prefill chunk: {way} max-num-batched-tokens"
            f" from {current} to {value}, where the plan's trade-off puts p95 ITL at {num(t.itl_p95_ms, 'ms')}{was};"
            f" re-planned with it, p95 ITL {num(again.slo.itl_p95_ms, 'ms')} and p95 TTFT {num(again.slo.ttft_p95_ms, 'ms')} meet"
            f" both targets; or {_nodes_change(op)}",
            overrides,
        )
    return None


def _nodes_change(op: OperatingPoint) -> str:
    if op.capacity_rate_per_s <= 0:
        return "no load is light enough: change the replica (TP, precision, GPU) or the targets"
    return (
        f"add nodes: a replica meets the SLO up to {num(op.capacity_rate_per_s, 'req/s')} and carries {num(op.rate_per_replica_per_s, 'req/s')}"
        f" (x{num(op.load_vs_capacity)} the replicas), or raise the prefix hit rate"
    )


def _load_batch_basis(op: OperatingPoint) -> str:
    """Where the running batch of the SLO budget and the engine configuration comes from."""
    return f"{op.arithmetic['in_flight']} (Little's law at the engine's pace)"


def feasible_replica(brief: Brief) -> ReplicaShape:
    """The brief's replica; raises InfeasibleDesign when the design cannot be computed at all (the simulator's check)."""
    shape = shape_of(brief)
    fatal = _fatal_problems(brief, shape)
    if fatal:
        raise InfeasibleDesign(fatal)
    return shape


def core_design(brief: Brief, curves: bool = True, capacity: bool = True) -> CoreDesign:
    """Steps 1-3 and the SLO budget; raises InfeasibleDesign when the design cannot be computed at all.

    `curves=False` skips the SLO trade-off curves, a disaggregated design's other splits of its nodes and the mechanism
    conclusion (with a speculative design's plan without speculation it compares with): re-plans read only figures and
    verdicts, and the conclusion shown is the plan's own.
    """
    core = _core_cached(brief, curves, capacity)
    if curves or capacity:
        _WorkedOut.keep(brief, core)
    return core


# The plan's own and its failure rows' core designs by brief, for a check that reads only a verdict: the same brief's
# verdict is then not worked out again without its curves or capacity search (neither decides any rule of it). A plan
# keeps about ten (its own and its failure rows'; its one-node-lost design's, where its own SLO capacity does not tell
# that verdict, with only the judged p95s: judged_with_capacity); emptied with the planner's caches (cache_clear).
_WorkedOut: BoundedMemo[Brief, CoreDesign] = BoundedMemo(128)


def worked_out(brief: Brief) -> CoreDesign | None:
    """The plan's or a failure row's core design for this brief, when one was worked out (its SLO capacity included; the
    one-node-lost design plan() judges N+1 by: only its judged p95s, judged_with_capacity)."""
    return _WorkedOut.get(brief)


def verdict_core(brief: Brief) -> CoreDesign:
    """A core read only for its verdict, the figures the verdict rules judge (busy shares, p95 TTFT and the p95 the ITL
    target judges, a disaggregated design's pools) and its long-context pool's load: the plan's or a failure row's when
    one was worked out for this brief, else one worked out for its verdict alone (_judged_core: its SLO budget holds
    only those p95s, slo.judged_budget, and its verdict lists no SLO miss). Not for a caller that shows its figures or
    its problems (their wording may name the nodes a capacity search counts)."""
    worked_out = _WorkedOut.get(brief)
    return worked_out if worked_out is not None else _judged_core(brief)


def judged_with_capacity(brief: Brief, known: CoreDesign | None = None) -> CoreDesign:
    """verdict_core's figures and the operating point's SLO capacity (the failure table's one-node-lost design as
    plan() reads it where the design's own SLO capacity does not tell its verdict, capacity_read_core: its verdict
    judges N+1, the headroom reads its SLO capacity, nothing reads its other figures or its problems' words). The
    plan's or a failure row's when one was worked out for this brief; kept with them, so
    verdict_core finds it. `known`: a core whose operating point and p95s this brief's are where its pools and load
    are the same (a spare replacing the lost node: _same_point), so only steps 1-2 are worked out."""
    core = _WorkedOut.get(brief)
    if core is None:
        core = _core_design_of(brief, curves=False, with_capacity=True, advise=False, judged_only=True, known=known)
        _WorkedOut.keep(brief, core)
    return core


def _same_point(known: CoreDesign, brief: Brief, shape: ReplicaShape, pools: Pools, dem: Demand) -> bool:
    """Whether `brief` (with its replica, pools and demand) loads a general-pool replica as `known` does, so its
    operating point and its SLO budget's p95s are known's: the same brief but for the fleet's sizes, the same replica
    and first-token path, the same pools but for the spares, the same load; and known's point has a steady state (a
    fix without one counts the fleet's nodes) and its SLO capacity. Not for a disaggregated or speculative design (its
    pools' and draft's figures replace the point's)."""
    op, stated = known.operating_point, known.brief
    if brief.disaggregation.enabled or brief.speculative.enabled or not op.stable or math.isnan(op.capacity_rate_per_s):
        return False
    w, kw = brief.workload, stated.workload
    if (w.request_rate, w.users) != (kw.request_rate, kw.users) or not same_but_fleet_and_traffic(stated, brief):
        return False
    spares = {"spare_nodes": known.pools.spare_nodes, "arithmetic": known.pools.arithmetic}
    return (
        dem.request_rate_per_s == known.demand.request_rate_per_s
        and pools.model_copy(update=spares) == known.pools
        and shape.replica_key == known.shape.replica_key
        and _same_first_token_path(known, brief, shape)
    )


def _same_first_token_path(known: CoreDesign, brief: Brief, shape: ReplicaShape) -> bool:
    """Whether `brief` on its replica adds to the first token what `known` adds (a KV reload's share, an adapter load's,
    the vision encoder): the figure alone, no engine built for a brief read only for this."""
    return ttft_extra_s(brief, shape)[0] == engine(known.brief, known.shape).extra_ttft_s


_UNDER_CAPACITY = 1e-4  # a load this far under the SLO capacity (the search's own tolerance) is read as meeting
_OVER_CAPACITY = 1e-3  # and this far over it (ten times that tolerance) as missing
_PROBED_SLACK = 1e-6  # between those, a load this far past a rate the search probed is read as that probe's side


_FLEET_AND_TRAFFIC = {"hardware": ("nodes",), "deployment": ("spare_nodes", "long_context_nodes"), "workload": ("request_rate", "users")}


def _fields_but(section: str, moved: tuple[str, ...]) -> Callable[[BaseModel], object]:
    """A getter of a brief section's fields but `moved`, all at once (what two sections compare on)."""
    section_type = Brief.model_fields[section].annotation
    assert isinstance(section_type, type) and issubclass(section_type, BaseModel)
    return attrgetter(*(name for name in section_type.model_fields if name not in moved))


_SECTION_NAMES = tuple(Brief.model_fields)
_SECTIONS = attrgetter(*_SECTION_NAMES)  # a brief's sections, in order, in one call
_KEPT = {section: _fields_but(section, moved) for section, moved in _FLEET_AND_TRAFFIC.items()}  # what does not move


def same_but_fleet_and_traffic(a: Brief, b: Brief) -> bool:
    """Whether two briefs are the same but for the fleet's sizes (nodes, spare and long-context pools) and how much
    traffic comes (the request rate or the users, given the same way)."""
    if a.workload.rate_given != b.workload.rate_given:
        return False
    for section, x, y in zip(_SECTION_NAMES, _SECTIONS(a), _SECTIONS(b), strict=True):
        if x is y:  # a section with_changes kept: pydantic's == would compare it field by field
            continue
        kept = _KEPT.get(section)
        if kept is None:
            if x != y:
                return False
        elif kept(x) != kept(y):
            return False
    return True


def capacity_read(known: CoreDesign, brief: Brief) -> bool | None:
    """Whether `brief` (resolved) is feasible and meets its SLO as verdict_core judges it, read on `known`, a core with
    its SLO capacity whose brief is this one but for the fleet (nodes, spare and long-context pools) and the traffic:
    the same replica, the same shape of traffic and first-token path, so the same SLO capacity (the search keys on
    neither). A general-pool replica's load under that capacity meets both p95s (the capacity is the highest rate
    found to meet, each p95 rising with the load), one well over it misses; every other rule of the verdict is worked
    out from steps 1-2, as _core_design_of works it. None where it cannot tell: within the search's tolerance of the
    capacity, a disaggregated or deadline design, a speculative one whose speculation turns off at a batch its replica
    runs (_speculating_at_every_batch), or a brief that differs otherwise. Raises InfeasibleDesign as verdict_core
    does."""
    load = _load_read(known, brief)
    if load is None:
        return None
    if load.over:
        return False  # a p95 misses, whatever the other rules
    steps = _steps_read(brief, load.shape, load.pools)
    return _sizing_holds(brief, load.shape, load.pools, *steps.capacity, steps.long_context_utilization)


class _LoadRead(NamedTuple):
    """A brief's general-pool load against a known core's SLO capacity (capacity_read's first step)."""

    shape: ReplicaShape
    pools: Pools
    rate_per_replica_per_s: float
    capacity_rate_per_s: float
    over: bool  # well over the capacity (a p95 misses); else well under it (both meet)


def _load_read(known: CoreDesign, brief: Brief) -> _LoadRead | None:
    """capacity_read's load against known's SLO capacity, None where it cannot tell (capacity_read says when)."""
    stated = known.brief
    slo_rate = known.operating_point.capacity_rate_per_s
    if brief.disaggregation.enabled or brief.objective.kind is not ObjectiveKind.latency:
        return None
    if brief.speculative.enabled and not _speculating_at_every_batch(known):
        return None
    if not 0 < slo_rate < math.inf:
        return None
    if not same_but_fleet_and_traffic(stated, brief):
        return None
    shape = feasible_replica(brief)
    if shape.replica_key != known.shape.replica_key:
        return None
    pools, _ = pools_of(brief, shape)
    rate = pools.general_rate_per_replica(demand_rate_per_s(brief))  # as operating_point loads a replica
    under, over = rate <= slo_rate * (1 - _UNDER_CAPACITY), rate >= slo_rate * (1 + _OVER_CAPACITY)
    if not (under or over):
        under, over = _probed_side(known, rate)
        if not (under or over):
            return None
    if not _same_first_token_path(known, brief, shape):
        return None
    return _LoadRead(shape, pools, rate, slo_rate, over)


def _probed_side(known: CoreDesign, rate: float) -> tuple[bool, bool]:
    """(under, over) for a load within the bands around known's SLO capacity: at or under the highest rate its search
    probed meeting both p95s, or at or over the lowest it probed with one over (operating_point.probed_around_capacity;
    each p95 rises with the load), each by _PROBED_SLACK (a running-batch solve's own tolerance); neither where the
    load lies between them or the search is not kept."""
    probed = probed_around_capacity(known.brief, known.shape)
    if probed is None or not probed.met_rate_per_s <= known.operating_point.capacity_rate_per_s < probed.missed_rate_per_s:
        return False, False
    return rate <= probed.met_rate_per_s * (1 - _PROBED_SLACK), rate >= probed.missed_rate_per_s * (1 + _PROBED_SLACK)


def _speculating_at_every_batch(known: CoreDesign) -> bool:
    """Whether a speculative design speculates at every batch its replica runs: its switch (vLLM disable_by_batch_size)
    at or above max-num-seqs. The latency model is then the speculative step by batch throughout, each p95 rising with
    the load as without speculation, so the SLO capacity tells the verdict (tests/test_replan_reads.py). A switch below
    it makes a p95 fall where speculation turns off (a token gap is one whole step; the step per token changes), so a
    load under the capacity may miss and one over it meet. A draft the target cannot verify has no switch: the design
    is not feasible, and re-planned."""
    spec = engine(known.brief, known.shape).spec
    return spec is not None and spec.off_above_batch >= known.brief.deployment.max_num_seqs


class LoadPoint(NamedTuple):
    """The general pool's load against its SLO capacity, as an operating point states it (a CapacityReadCore's)."""

    rate_per_replica_per_s: float
    capacity_rate_per_s: float
    load_vs_capacity: float  # rate / capacity, as operating_point divides it


class SizingShares(NamedTuple):
    """capacity()'s utilization and KV share alone (a CapacityReadCore's)."""

    utilization: float
    kv_fraction: float


@dataclass(frozen=True)
class _StepsRead:
    """Steps 1-2 of a design read for its verdict without a re-plan (_steps_read), with its fields named as a
    CoreDesign's so the headroom's limits read either: the brief, replica, pools, demand, memory, the sizing shares and
    the long-context pool's busy share. A read core adds its load against an SLO capacity (operating_point)."""

    brief: Brief
    shape: ReplicaShape
    pools: Pools
    demand: Demand
    memory: Memory
    capacity: SizingShares
    long_context_utilization: float


@dataclass(frozen=True)
class CapacityReadCore(_StepsRead):
    """A core design read on a known core's SLO capacity (capacity_read) for its verdict and what the headroom's limits
    read of it (planner.headroom: the operating point's load against the SLO capacity, the long-context pool, the sizing
    shares): steps 1-2 and the known capacity, no running-batch solve and no p95. It has no SLO budget, no verdict's
    problems, no operating point beyond the load, so no reader of those can take it."""

    operating_point: LoadPoint
    meets: bool  # feasible and meets the SLO, as verdict_core's verdict judges it
    disaggregation: None = None  # as a CoreDesign's: a disaggregated design is never read so


def capacity_read_core(known: CoreDesign, brief: Brief) -> CapacityReadCore | None:
    """capacity_read's verdict of `brief` (resolved) with the figures its headroom limits read, None where capacity_read
    cannot tell. Raises InfeasibleDesign as verdict_core does."""
    load = _load_read(known, brief)
    if load is None:
        return None
    shape, pools, rate, slo_rate = load.shape, load.pools, load.rate_per_replica_per_s, load.capacity_rate_per_s
    steps = _steps_read(brief, shape, pools)
    meets = not load.over and _sizing_holds(brief, shape, pools, *steps.capacity, steps.long_context_utilization)
    return CapacityReadCore(**vars(steps), operating_point=LoadPoint(rate, slo_rate, rate / slo_rate), meets=meets)


def _steps_read(brief: Brief, shape: ReplicaShape, pools: Pools) -> _StepsRead:
    """Steps 1-2 as a verdict read on the SLO capacity reads them: the demand, the memory, capacity()'s utilization and
    KV share (utilization_at, kv_fraction_at: its own arithmetic, without its other shares and text) and the
    long-context pool's busy share; with the brief, replica and pools: what CapacityReadCore and PoolsReadCore share."""
    dem, mem = demand(brief, shape), memory(brief, shape)
    shares = SizingShares(utilization_at(brief, shape, dem), kv_fraction_at(shape, dem, mem))
    long_util = _long_pool_utilization(brief, shape, dem, pools)
    return _StepsRead(brief=brief, shape=shape, pools=pools, demand=dem, memory=mem, capacity=shares, long_context_utilization=long_util)


def _sizing_holds(brief: Brief, shape: ReplicaShape, pools: Pools, utilization: float, kv_fraction: float, long_util: float) -> bool:
    """The verdict's rules but the operating point's, for a load steady and within both targets under the SLO capacity:
    the sizing shares and the long-context pool's (_steps_read), the adapters, the engine's and the router's rules, as
    _core_design_of works them out."""
    return utilization <= 1 and kv_fraction <= 1 and long_util <= 1 and _setting_rules_hold(brief, shape, pools)


def _setting_rules_hold(brief: Brief, shape: ReplicaShape, pools: Pools) -> bool:
    """The verdict's rules on the brief's settings, whatever the load: the adapters fit, and neither the mechanisms'
    engine rules nor the long-context router's find a problem (as _core_design_of works them out)."""
    adapters_fit, _ = lora_check(brief, shape.model, shape.tp, shape.pp, shape.kv_gb_per_gpu)
    engine_problems = (
        mechanism_engine_problems(brief)
        or share_problems(brief, pools.long_context_nodes)
        or routing_problems(brief, pools.long_context_nodes, shape.model.max_context_tokens)
    )
    return adapters_fit and not engine_problems


@dataclass(frozen=True)
class PoolsReadCore(_StepsRead):
    """A disaggregated latency design without speculative decoding read for its verdict (pools_read_core): steps 1-2
    and its two pools at the peak on their closed forms (disagg.split_p95s at its own split), and with its capacity the
    pools' SLO-capacity search (disagg.capacity_scale); no running-batch solve of the aggregated replica, no SLO
    budget. Its verdict is verdict_core's and its SLO capacity judged_with_capacity's, which read nothing else of such a
    design: the pools replace the aggregated replica's operating point and p95s (its operating_point: a decode replica's
    load against the pools' SLO capacity, nan where that was not searched)."""

    operating_point: LoadPoint
    disaggregation: SplitP95s  # the two pools at the peak: their steady state and p95s
    fixed_ms: float  # the request path outside the engine the pools' TTFT adds (a core's slo.point.fixed_ms)
    feasible: bool
    meets: bool  # feasible and both p95s within their targets (the verdict's meets_slo)


def read_by_pools(brief: Brief) -> bool:
    """Whether verdict_core's verdict of the brief is its two pools' (pools_read_core): a disaggregated latency design
    without speculative decoding (whose draft changes the gaps and the feasibility)."""
    return brief.disaggregation.enabled and brief.objective.kind is ObjectiveKind.latency and not brief.speculative.enabled


def pools_read_core(brief: Brief, with_capacity: bool = False) -> PoolsReadCore:
    """verdict_core's verdict of `brief` (resolved; read_by_pools), with `with_capacity` the pools' SLO capacity as
    judged_with_capacity finds it, and the figures a margin, a split search and the headroom's limits read, from steps
    1-2 and the two pools: feasible where the sizing utilization, the long-context pool and the settings' rules hold and
    the pools have a steady state at the peak (the decode pool's KV is its rule: capacity()'s KV share is not one);
    meeting the SLO where the pools' p95s are within both targets too (disagg.apply_disaggregation's rules). Raises
    InfeasibleDesign as verdict_core does (the replica, the prefill pool's). Kept (emptied with the planner's caches):
    a fleet search asks a split's verdict and then its headroom, the failure table a lost pool's capacity and verdict."""
    kept = _PoolsRead.get(brief)
    if kept is not None and not (with_capacity and math.isnan(kept.operating_point.capacity_rate_per_s)):
        return kept
    read = kept if kept is not None else _pools_read(brief)
    if with_capacity:
        point = read.operating_point
        scale, _ = capacity_scale(brief, read.shape, read.pools, read.demand.request_rate_per_s, read.fixed_ms)
        load_point = LoadPoint(point.rate_per_replica_per_s, scale * point.rate_per_replica_per_s, 1 / scale if scale > 0 else math.inf)
        read = replace(read, operating_point=load_point)  # as disaggregated_operating_point states them
    _PoolsRead.keep(brief, read)
    return read


_PoolsRead: BoundedMemo[Brief, PoolsReadCore] = BoundedMemo(128)


def _pools_read(brief: Brief) -> PoolsReadCore:
    """pools_read_core without the SLO-capacity search (its operating point's capacity and load nan)."""
    shape = feasible_replica(brief)
    pools, _ = pools_of(brief, shape)
    steps = _steps_read(brief, shape, pools)
    fixed_ms = request_path_s(brief, ttft_extra_s(brief, shape)[0]) * 1e3  # as the core's judged budget states it
    at = split_p95s(brief, shape, pools, steps.demand.request_rate_per_s, fixed_ms, brief.disaggregation.prefill_nodes)
    feasible = (
        steps.capacity.utilization <= 1 and at.stable and steps.long_context_utilization <= 1 and _setting_rules_hold(brief, shape, pools)
    )
    return PoolsReadCore(
        **vars(steps),
        operating_point=LoadPoint(at.decode_rate_per_replica_per_s, math.nan, math.nan),
        disaggregation=at,
        fixed_ms=fixed_ms,
        feasible=feasible,
        meets=feasible and at.meets,
    )


def request_path_ms(core: CoreDesign | PoolsReadCore) -> float:
    """The request path outside the engine a disaggregated design's TTFT adds: a core's SLO budget keeps the aggregated
    budget's point, whose fixed path it is."""
    return core.fixed_ms if isinstance(core, PoolsReadCore) else core.slo.point.fixed_ms


def pools_meet_at(core: CoreDesign | PoolsReadCore, rate_per_s: float) -> bool:
    """Whether a disaggregated core's two pools meet the SLO at `rate_per_s` (disagg.pools_meet on its pools and fixed
    request path): told by its SLO-capacity search where that ran and the rate lies clear of it (meets_by_capacity),
    else worked out."""
    op, peak = core.operating_point, core.demand.request_rate_per_s
    if isinstance(core, PoolsReadCore):
        scale = op.capacity_rate_per_s / op.rate_per_replica_per_s if op.rate_per_replica_per_s > 0 else math.nan
    else:
        scale = core.disaggregation.capacity_scale if core.disaggregation is not None else math.nan
    known = meets_by_capacity(scale, rate_per_s / peak) if peak > 0 else None
    if known is not None:
        return known
    return pools_meet(core.brief, core.shape, core.pools, rate_per_s, request_path_ms(core))


def judged_itl_ms(core: CoreDesign | PoolsReadCore) -> float:
    """The p95 gap the ITL target judges: the SLO budget's, or the pools' (a pure decode step's: its ITL and TPOT alike)."""
    if isinstance(core, PoolsReadCore):
        itl_p95_ms = core.disaggregation.itl_p95_ms
        return core.brief.slo.itl_metric.judged(itl_p95_ms, itl_p95_ms)
    return core.slo.judged_itl_p95_ms


def verdict_read(brief: Brief) -> CoreDesign | PoolsReadCore:
    """verdict_core, or where the brief's verdict is its two pools' and no core was worked out for it (read_by_pools)
    their read (pools_read_core): the same verdict and pools without the aggregated replica's solve."""
    worked_out = _WorkedOut.get(brief)
    if worked_out is not None:
        return worked_out
    return pools_read_core(brief) if read_by_pools(brief) else _judged_core(brief)


def replan(brief: Brief) -> CoreDesign:
    return core_design(brief, curves=False)


def worded_replan(brief: Brief) -> CoreDesign:
    """replan's core without its problems' advice: the same problems in the same order and words, each with its plain
    change and no overrides (the advice only words the change: the chunk size, the fleet that carries the peak, the
    long-context pool), for a reader of the problems' words alone (the words of a lost N+1, design._lost_cause), which
    then works out no search or re-plan to name a change nobody reads. A brief judged on its deadline gets no advice
    from replan either: its core is replan's own (cached for the failure table)."""
    if brief.objective.kind is not ObjectiveKind.latency:
        return replan(brief)
    return _worded_cached(brief)


@lru_cache(maxsize=64)
def _worded_cached(brief: Brief) -> CoreDesign:
    return _core_design_of(brief, curves=False, with_capacity=True, advise=False)


def worded_core(brief: Brief) -> CoreDesign:
    """worded_replan's core as far as a reader of its problems' words alone reads it (a lost N+1's first problem,
    failures.lost_first_problem): the same problems in the same order and words. An aggregated design's is worked out
    without what no problem's words read: the SLO-capacity search (an added node's advice counts it, in a change) and
    the SLO budget's figures but the p95s its targets judge (slo.judged_budget, by slo_budget's own calls: a miss is
    worded with those, a target below the floor with the fixed request path), so its other figures and its problems'
    fields and changes are not to be read. A disaggregated, speculative or deadline design: worded_replan's."""
    if brief.disaggregation.enabled or brief.speculative.enabled or brief.objective.kind is not ObjectiveKind.latency:
        return worded_replan(brief)
    return _core_design_of(brief, curves=False, with_capacity=False, advise=False, judged_figures=True)


def verdict_only(brief: Brief) -> CoreDesign:
    """A re-plan read only for its verdict: no trade-off curves, no SLO-capacity search (its fields are NaN)."""
    return core_design(brief, curves=False, capacity=False)


@lru_cache(maxsize=512)
def _core_cached(brief: Brief, curves: bool, with_capacity: bool = True) -> CoreDesign:
    # no advice that re-plans or searches where nothing reads it: a re-plan read only for its verdict (verdict_only:
    # neither curves nor capacity), and a design an objective other than latency judges (an offline job's or a rollout's
    # verdict is its deadline's, mechanisms.mechanism_verdict, which keeps none of these problems)
    advise = (curves or with_capacity) and brief.objective.kind is ObjectiveKind.latency
    return _core_design_of(brief, curves, with_capacity, advise=advise)


@lru_cache(maxsize=256)
def _judged_core(brief: Brief) -> CoreDesign:
    # the fleet, split and headroom searches make most of these: they read feasible, meets and the margin alone (the
    # chunk advice's confirmations the p95s too, each one its fleet fix's check of the setting reads again)
    # (a plan makes about ten; ~45 KB each kept, with their replica's engines)
    return _core_design_of(brief, curves=False, with_capacity=False, advise=False, judged_only=True)


def _core_design_of(
    brief: Brief,
    curves: bool,
    with_capacity: bool,
    advise: bool = True,
    judged_only: bool = False,
    known: CoreDesign | None = None,
    judged_figures: bool = False,
) -> CoreDesign:
    """The core design; `advise=False` (a re-plan read only for its verdict) leaves out the advice that re-plans or
    searches to name its change (the fleet that carries the peak, the long-context pool, the chunk size).
    `judged_only` (verdict_core's) works out of the SLO budget only the p95s the verdict judges (slo.judged_budget;
    none for a disaggregated design, whose pools' replace them) and lists no SLO miss: no rule of the verdict reads
    the words, only the figures; with `known` (judged_with_capacity's), its operating point and SLO budget are
    known's where they are the same (_same_point). `judged_figures` (worded_core's) takes judged_only's SLO budget but
    lists every problem: their words read no other figure of it."""
    shape = feasible_replica(brief)
    pools, pool_problems = pools_of(brief, shape)
    dem = demand(brief, shape)
    mem = memory(brief, shape)
    cap = capacity(brief, shape, dem, mem)
    same = known if known is not None and judged_only and with_capacity and _same_point(known, brief, shape, pools, dem) else None
    op = (
        same.operating_point
        if same is not None
        else operating_point(
            brief, shape, pools, dem.request_rate_per_s, with_capacity and not brief.disaggregation.enabled, with_seed=curves
        )
    )
    load_point = op  # the running batch's solve, which a disaggregated design's decode replica replaces below
    rate = op.rate_per_replica_per_s
    capped = int(full_batch(brief, shape, rate)) if op.limit is Limit.batched_tokens else None  # the budget's batch
    if same is not None:
        slo = same.slo  # its p95s are this design's (and its other figures, which no reader of a judged core reads)
    elif judged_only or judged_figures:
        slo = judged_budget(brief, shape, rate, op.in_flight, capped, quantiles=not brief.disaggregation.enabled)
    else:
        slo = slo_budget(brief, shape, rate, op.in_flight, partial(_load_batch_basis, load_point), curves, full_batch=capped)
    long_util = _long_pool_utilization(brief, shape, dem, pools)
    problems = pool_problems + _problems(brief, shape, cap, mem, op, advise)
    if not judged_only:
        problems += _slo_problems(brief, shape, slo, op, advise)
    adapters_fit, lora_problems = lora_check(brief, shape.model, shape.tp, shape.pp, shape.kv_gb_per_gpu)
    engine_problems = (
        mechanism_engine_problems(brief)
        + share_problems(brief, pools.long_context_nodes)
        + routing_problems(brief, pools.long_context_nodes, shape.model.max_context_tokens)
    )
    problems += _long_pool_problems(brief, long_util, pools, advise) + list(lora_problems) + engine_problems
    feasible = cap.utilization <= 1 and cap.kv_fraction <= 1 and op.stable and long_util <= 1 and adapters_fit and not engine_problems
    dis, spec = None, None
    aggregated: SloBudget | None = slo  # what the mechanism conclusion compares with
    if brief.disaggregation.enabled:  # the prefill and decode pools replace the aggregated SLO budget
        dis = disaggregation_analysis(brief, shape, pools, dem.request_rate_per_s, slo, cap, splits=curves)  # every split: a curve
        op, dis = disaggregated_operating_point(brief, shape, pools, dem.request_rate_per_s, op, dis, slo, cap, with_capacity)
        slo = apply_disaggregation(slo, dis, brief, shape)
        problems += list(dis.problems)  # the pools' own: the aggregated replica's queue and SLO misses are not listed
        feasible = cap.utilization <= 1 and dis.stable and long_util <= 1 and adapters_fit and not engine_problems
    if brief.speculative.enabled:  # at the running batch: the decode pool's when disaggregated
        batch = dis.decode_batch if dis is not None else min(op.in_flight, float(brief.deployment.max_num_seqs))
        spec = speculative_analysis(
            brief, shape, batch if math.isfinite(batch) else float(brief.deployment.max_num_seqs), brief.running_context_tokens
        )
        aggregated = None  # the conclusion compares with the design without it: re-planned when it is read
        slo = apply_speculation(slo, spec, brief, shape, modelled=dis is None)  # the decode pool's steps are not the latency model's
        problems += list(spec.problems)
        feasible = feasible and not any(p.field == "speculative.draft_model" for p in spec.problems)  # its tokens cannot be verified
    meets_slo = feasible and slo.ttft_ok and slo.itl_ok
    if feasible and not meets_slo and (dis is not None or not problems) and not judged_only:  # a mechanism's own latency missed
        problems += _mechanism_misses(slo, dis, {p.field for p in problems})
    core = trusted(
        CoreDesign,
        brief=brief,
        shape=shape,
        pools=pools,
        demand=dem,
        memory=mem,
        capacity=cap,
        operating_point=op,
        slo=slo,
        long_context_utilization=long_util,
        verdict=trusted(Verdict, feasible=feasible, meets_slo=meets_slo, availability_ok=True, problems=tuple(problems)),
        disaggregation=dis,
        speculative=spec,
    )
    core._load_point = load_point
    if curves:
        core._conclusion = _ConclusionInputs(brief, cap, dis, spec, aggregated, slo, shape.gpus_per_replica)
    return core


def _mechanism_misses(slo: SloBudget, dis: DisaggAnalysis | None, named: set[str]) -> list[Problem]:
    """The targets a disaggregated or speculative design misses, each with the pool that sets it, when no rule of the
    aggregated design named them (a disaggregated design's misses are always its pools'): a verdict that misses always
    says what binds (issue 11). A target below what any load reaches (a problem on its `named` field) says so instead."""
    gap = "TPOT" if slo.itl_metric.value == "tpot" else "ITL"
    misses = []
    if not slo.ttft_ok and "slo.ttft_p95_ms" not in named:
        where, change = (
            ("disaggregation.prefill_nodes", f"the prefill pool is {pct(dis.prefill_busy)} busy: give it more of the nodes, or add nodes")
            if dis is not None
            else ("hardware.nodes", "add nodes")
        )
        misses.append(
            Problem(
                field=where,
                problem=f"p95 TTFT is {num(slo.ttft_p95_ms, 'ms')}, over the {num(slo.ttft_target_ms, 'ms')} target (slo.ttft_p95_ms)",
                change=change,
            )
        )
    if not slo.itl_ok and "slo.itl_p95_ms" not in named:
        change = (
            f"the decode pool runs a batch of {num(dis.decode_batch)}: give it more of the nodes, or add nodes"
            if dis is not None
            else "add nodes"
        )
        misses.append(
            Problem(
                field="hardware.nodes",
                problem=f"p95 {gap} is {num(slo.judged_itl_p95_ms, 'ms')}, over the {num(slo.itl_target_ms, 'ms')} target (slo.itl_p95_ms)",
                change=change,
            )
        )
    return misses


def _long_pool_utilization(brief: Brief, shape: ReplicaShape, dem: Demand, pools: Pools) -> float:
    """The long-context pool's busy share; unbounded when its nodes hold no whole (multi-node) replica."""
    replicas = shape.replicas_in(pools.long_context_nodes)
    if pools.long_context_nodes and not replicas and brief.workload.long_context_share > 0:
        return math.inf
    return long_context_utilization(brief, shape, dem, replicas)


def replica_capacity(brief: Brief) -> tuple[ReplicaShape, Memory, OperatingPoint]:
    """A re-plan's replica, its memory and its operating point with the SLO capacity, as replan works them out, without
    the SLO budget and the verdict (a scale-out option reads none of them). A disaggregated or speculative brief, whose
    pools or draft change the operating point or refuse the design later, is re-planned whole. Raises InfeasibleDesign
    as core_design does."""
    if brief.disaggregation.enabled or brief.speculative.enabled:
        core = replan(brief)
        return core.shape, core.memory, core.operating_point
    shape = feasible_replica(brief)
    pools, _ = pools_of(brief, shape)
    op = operating_point(brief, shape, pools, demand(brief, shape).request_rate_per_s, True, with_seed=False)
    return shape, memory(brief, shape), op


def long_context_busy(brief: Brief) -> float:
    """The long-context pool's busy share at peak (core_design's long_context_utilization) from steps 1-2 alone: the
    SLO budget does not enter it. Raises InfeasibleDesign when the replica cannot be formed, as core_design does."""
    shape = feasible_replica(brief)
    pools, _ = pools_of(brief, shape)
    return _long_pool_utilization(brief, shape, demand(brief, shape), pools)


class SizingFigures(NamedTuple):
    """Steps 1-2 of a core design: what its verdict's sizing rules read, before any operating point."""

    pools: Pools
    demand: Demand
    capacity: Capacity
    long_context_utilization: float  # the long-context pool's busy share at peak (0 without one)


def sizing_figures(brief: Brief) -> SizingFigures:
    """Steps 1-2 of core_design alone (no operating point, no SLO budget). Raises InfeasibleDesign as core_design does."""
    shape = feasible_replica(brief)
    pools, _ = pools_of(brief, shape)
    dem = demand(brief, shape)
    return SizingFigures(pools, dem, capacity(brief, shape, dem, memory(brief, shape)), _long_pool_utilization(brief, shape, dem, pools))


@lru_cache(maxsize=1024)
def long_pool_carries(brief: Brief, long_context_nodes: int, /) -> bool:
    """Whether a long-context pool of this many nodes carries its share (busy at most 100%), on a fleet grown so the
    general pool has at least the brief's whole fleet beside the spare and long-context pools (a fleet too small to
    hold its pools, which runs them smaller, still asks the pool at its full size). Its busy share is steps 1-2's (long_context_busy); a disaggregated or speculative
    brief, whose later steps may refuse the design, is re-planned for its verdict where that share carries (a pool
    short at steps 1-2 is short in any re-plan: its core asks no search of its own).

    Cached (positional only, as lru_cache keys a keyword call apart): the fleet fix asks whether the brief's own pool
    carries, which the core design's advice (long_context_nodes_needed) asked first."""
    dep = brief.deployment
    grown = brief.with_changes(
        {
            "deployment.long_context_nodes": long_context_nodes,
            "hardware.nodes": dep.spare_nodes + long_context_nodes + brief.hardware.nodes,
        }
    )
    try:
        resolved = resolve(grown)
        if long_context_busy(resolved) > 1:
            return False
        if resolved.disaggregation.enabled or resolved.speculative.enabled:
            return verdict_core(resolved).long_context_utilization <= 1
    except BriefError:
        return False
    return True


@lru_cache(maxsize=256)
def long_context_nodes_needed(brief: Brief, limit: int) -> int | None:
    """The fewest long-context nodes whose pool carries its share (busy at most 100%), None when `limit` do not. Cached:
    the plan's core design advises it and its fleet fix grows the pool to it, for the same brief."""
    dep = brief.deployment
    if dep.long_context_nodes == 0 or brief.workload.long_context_share <= 0:
        return dep.long_context_nodes

    def carries(lc: int) -> bool:
        return long_pool_carries(brief, lc)

    low, high = 0, dep.long_context_nodes
    while not carries(high):
        if high >= limit:
            return None
        low, high = high, min(high * 2, limit)  # the pool that did not carry bounds the answer from below
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if carries(mid) else (mid, high)
    return high


def not_feasible_before_slo(brief: Brief) -> str | None:
    """Why the design is not feasible, judged from steps 1-2 and the steady state alone (no latency quantiles, no
    capacity search), or None when those rules pass. Each rule is one of _core_cached's `feasible` rules, so a
    design named here is one core_design finds not feasible too; one passing here still needs core_design's verdict.
    Raises InfeasibleDesign when the design cannot be computed at all. A design search rejects most candidates here."""
    shape = feasible_replica(brief)
    pools, _ = pools_of(brief, shape)
    dem = demand(brief, shape)
    cap = capacity(brief, shape, dem, memory(brief, shape))
    if cap.utilization > 1:
        return "utilization over 100%"
    if cap.kv_fraction > 1:
        return "the KV cache cannot hold the load"
    if _long_pool_utilization(brief, shape, dem, pools) > 1:
        return "the long-context pool is over 100%"
    if routing_problems(brief, pools.long_context_nodes, shape.model.max_context_tokens):
        return "the general pool refuses prompts the router sends it (max-model-len)"
    if share_problems(brief, pools.long_context_nodes):
        return "the stated long-context share is not what the prompt lengths put over the threshold"
    _, binding = steady_state(brief, shape, pools.general_rate_per_replica(dem.request_rate_per_s))
    return None if binding is None else f"no steady state ({binding.words} binds)"


def _long_pool_problems(brief: Brief, long_busy: float, pools: Pools, advise: bool = True) -> list[Problem]:
    """The long-context pool busier than 100% cannot carry its share of the peak (the general pool's limit is the
    operating point's steady state). The change names the pool that re-plans as carrying it (the fix's own count): its
    busy share is not linear in its nodes (whole replicas, the longest prompts' queue), so no ratio of it does."""
    if long_busy <= 1:
        return []
    needed = long_context_nodes_needed(brief, LONG_CONTEXT_NODES_LIMIT) if advise else -1  # -1: not searched
    now = pools.long_context_nodes
    if needed is None:
        change = f"no long-context pool of up to {LONG_CONTEXT_NODES_LIMIT} nodes carries its share: move load off it"
    elif needed < 0:
        change = "give the long-context pool more nodes, or move load off it"
    else:
        change = f"give the long-context pool {needed} node{'s' if needed != 1 else ''} ({now} now), the fewest that carry its share, or move load off it"
    return [
        Problem(
            field="deployment.long_context_nodes",
            problem=f"the long-context pool is {pct(long_busy)} busy at peak: it cannot carry its share",
            change=change,
        )
    ]


LONG_CONTEXT_NODES_LIMIT = MAX_NODES // 2  # the largest long-context pool a fix or an advice tries


def utilization_no_prefix_cache(brief: Brief, nodes: int) -> float:
    """Peak utilization without prefix cache on a fleet of `nodes` (steps 1-2 only: no operating point)."""
    return _utilization_on(brief, nodes, False)


@lru_cache(maxsize=1024)
def _utilization_on(brief: Brief, nodes: int, prefix_cache: bool, /) -> float:
    """Peak utilization on a fleet of `nodes`, with the brief's prefix cache or without any (steps 1-2 only).
    Positional only: lru_cache keys a keyword call apart from a positional one, which would work a pass out twice."""
    smaller = brief.with_changes({"hardware.nodes": nodes})
    try:
        shape = shape_of(smaller)
    except InfeasibleDesign:  # fewer nodes than one (multi-node) replica spans: no fleet at all
        return math.inf
    if shape.kv_gb_per_gpu <= 0:
        return math.inf
    dem = demand(smaller, shape)
    return utilization_at(smaller, shape, dem) if prefix_cache else utilization_no_prefix_cache_at(smaller, shape, dem)


def fewest_nodes(brief: Brief, target: float = SIZING_UTILIZATION, limit: int = MAX_NODES, prefix_cache: bool = False) -> int:
    """Fewest nodes (at most `limit`) whose peak utilization without prefix cache (with the brief's, `prefix_cache`) is at
    or under `target`.

    Utilization falls as nodes are added, so the answer is where it first reaches the target. It falls about as
    1 / nodes: the search starts where that predicts from the brief's own fleet, widens a step at a time (doubling)
    until the answer is bracketed, then narrows the bracket by the margins (grid_search.first_meeting): a few re-plans
    of steps 1-2 instead of log2(limit). `limit` when no fleet up to it is under the target.
    """
    own = brief.hardware.nodes
    at_own = _utilization_on(brief, own, prefix_cache)
    if not math.isfinite(at_own):
        return limit

    def probe(nodes: int) -> tuple[bool, float]:  # under the target, and the log of utilization / target (<= 0 under)
        util = _utilization_on(brief, nodes, prefix_cache)
        return util <= target, math.log(util / target) if 0 < util < math.inf else math.inf

    bracket = _fleet_bracket(probe, min(max(math.ceil(own * at_own / target), 1), limit), limit)
    if bracket is None:  # `limit` nodes are over the target too
        return limit
    low, high = bracket
    return first_meeting(probe, low[0], high[0], low[1], high[1])


def _fleet_bracket(probe: Probe, guess: int, limit: int) -> tuple[tuple[int, float], tuple[int, float]] | None:
    """((a fleet over the target, its margin), (one at or under it, its margin)), found from `guess` in steps that double
    (0 nodes: over, no margin); None when `limit` nodes are over it too (asked only when the steps reach it)."""
    under, margin = probe(guess)
    step = 1
    if under:
        high = (guess, margin)
        while True:
            at = max(high[0] - step, 0)
            if at == 0:
                return (0, math.inf), high
            under, margin = probe(at)
            if not under:
                return (at, margin), high
            high, step = (at, margin), step * 2
    low = (guess, margin)
    while True:
        at = min(low[0] + step, limit)
        under, margin = probe(at)
        if under:
            return low, (at, margin)
        if at == limit:
            return None
        low, step = (at, margin), step * 2
