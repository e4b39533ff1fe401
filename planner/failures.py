"""Step 6 of the method: stress the design. Each failure mode is the brief with one thing changed, re-planned
through the core design (steps 1-3 and the SLO budget, never the failure modes again, so no recursion).

How load scales: the decode batch per node follows the load (generating sequences / serving nodes, by
Little's law), so a bigger batch makes each decode token cheaper and utilization grows less than
linearly. The worked design scales its no-prefix-cache utilization linearly instead; that figure is kept
beside ours (`utilization_linear_no_prefix_cache`) so the two can be compared.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from planner.architecture import LONG_PROMPT_FACTOR, long_context_utilization
from planner.brief import Brief, ComputePeak, KvPrecision, Precision, QueueBasis
from planner.errors import BriefError
from planner.fmt import num, pct
from planner.operating_point import context_tokens
from planner.slo import latency_point
from planner.verdict import InfeasibleDesign

if TYPE_CHECKING:
    from planner.design import CoreDesign

__all__ = [
    "BURST_SHARE_FACTOR",
    "HIT_RATE_AFTER_DROP",
    "FailureMode",
    "FailureSummary",
    "Scenario",
    "failure_modes",
    "hit_rate_floor",
]

HIT_RATE_AFTER_DROP = 0.20  # e.g. a product change puts a timestamp at the top of every prompt
BURST_SHARE_FACTOR = 2.0  # a long-context burst doubles the share of long prompts


class Scenario(StrEnum):
    one_node_lost = "one_node_lost"
    two_nodes_lost = "two_nodes_lost"
    traffic_doubles = "traffic_doubles"
    inputs_double = "inputs_double"
    prefix_hit_rate_drops = "prefix_hit_rate_drops"
    long_context_burst = "long_context_burst"
    revert_to_bf16 = "revert_to_bf16"


TITLES = {
    Scenario.one_node_lost: "One node lost",
    Scenario.two_nodes_lost: "Two nodes lost",
    Scenario.traffic_doubles: "Traffic doubles",
    Scenario.inputs_double: "Input lengths double",
    Scenario.prefix_hit_rate_drops: f"Prefix hit rate drops to {HIT_RATE_AFTER_DROP:.0%}",
    Scenario.long_context_burst: "Long-context burst",
    Scenario.revert_to_bf16: "Quantization reverted to BF16",
}


class FailureMode(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    scenario: Scenario
    title: str
    change: str  # what the scenario changes in the brief
    utilization: float  # at the scenario's prefix hit rate
    utilization_no_prefix_cache: float
    utilization_linear_no_prefix_cache: float  # the worked design's basis: baseline scaled linearly
    ttft_p95_ms: float
    itl_p95_ms: float
    ttft_ok: bool
    itl_ok: bool
    ok: bool
    note: str


class FailureSummary(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    binding_scenario: Scenario
    binding_reason: str
    n_plus_one_ok: bool
    availability_note: str
    load_scaling: str


CorePlanner = Callable[[Brief], "CoreDesign"]  # planner.design.core_design


def _changes(brief: Brief, scenario: Scenario) -> tuple[dict[str, Any], str]:
    hw, dep, w = brief.hardware, brief.deployment, brief.workload
    if scenario in (Scenario.one_node_lost, Scenario.two_nodes_lost):
        lost = 1 if scenario is Scenario.one_node_lost else 2
        spare = max(dep.spare_nodes - lost, 0)
        return {"hardware.nodes": max(hw.nodes - lost, 0), "deployment.spare_nodes": spare}, (
            f"{hw.nodes} -> {hw.nodes - lost} nodes; the spare{'s' if dep.spare_nodes > 1 else ''} ({dep.spare_nodes}) step in first"
        )
    if scenario is Scenario.traffic_doubles:
        if w.request_rate is not None:
            return {"workload.request_rate": w.request_rate * 2}, f"{num(w.request_rate, 'req/s')} -> {num(w.request_rate * 2, 'req/s')}"
        assert w.users is not None
        return {"workload.users": w.users * 2}, f"{num(w.users, 'users')} -> {num(w.users * 2, 'users')}"
    if scenario is Scenario.inputs_double:
        changes: dict[str, Any] = {
            "workload.input_tokens_mean": w.input_tokens_mean * 2,
            "workload.input_tokens_p95": w.input_tokens_p95 * 2,
        }
        text = f"mean prompt {num(w.input_tokens_mean)} -> {num(w.input_tokens_mean * 2)} tokens (p95 {num(w.input_tokens_p95 * 2)})"
        if w.kv_context_tokens is not None:
            changes["workload.kv_context_tokens"] = w.kv_context_tokens + w.input_tokens_mean
            text += f"; KV context {num(w.kv_context_tokens)} -> {num(w.kv_context_tokens + w.input_tokens_mean)}"
        return changes, text
    if scenario is Scenario.prefix_hit_rate_drops:
        hit = min(w.prefix_hit_rate, HIT_RATE_AFTER_DROP)
        return {"workload.prefix_hit_rate": hit}, f"prefix hit rate {pct(w.prefix_hit_rate)} -> {pct(hit)}"
    if scenario is Scenario.long_context_burst:
        share = min(w.long_context_share * BURST_SHARE_FACTOR, 1.0)
        if dep.long_context_nodes > 0:
            return {}, f"long-context share {pct(w.long_context_share)} -> {pct(share)}, routed to the long-context pool"
        extra = (share - w.long_context_share) * LONG_PROMPT_FACTOR * w.long_context_threshold_tokens
        changes = {
            "workload.input_tokens_mean": w.input_tokens_mean + extra,
            "workload.input_tokens_p95": max(w.input_tokens_p95, w.input_tokens_mean + extra),
        }
        if w.kv_context_tokens is not None:
            changes["workload.kv_context_tokens"] = w.kv_context_tokens + extra
        return (
            changes,
            f"long-context share {pct(w.long_context_share)} -> {pct(share)}; no long-context pool, so +{num(extra)} tokens per mean prompt",
        )
    changes = {"deployment.weights": Precision.bf16.value, "deployment.kv_cache": KvPrecision.bf16.value}
    if brief.efficiency.compute_peak is not ComputePeak.auto:
        changes["efficiency.compute_peak"] = ComputePeak.bf16.value
    peak_moves = brief.efficiency.compute_peak not in (ComputePeak.bf16,) and dep.weights is not Precision.bf16
    return changes, f"weights {dep.weights.value} -> bf16, KV {dep.kv_cache.value} -> bf16" + (
        ", prefill math at the BF16 peak" if peak_moves else ""
    )


def _linear(base: CoreDesign, brief: Brief, scenario: Scenario, scenario_core: CoreDesign | None) -> float:
    """The worked design's basis: the baseline's no-cache utilization scaled by the load or fleet ratio."""
    cap = base.capacity
    prefill, decode = cap.prefill_fraction_no_prefix_cache, cap.decode_fraction
    nodes = brief.hardware.nodes
    if scenario in (Scenario.one_node_lost, Scenario.two_nodes_lost):
        left = nodes - (1 if scenario is Scenario.one_node_lost else 2)
        return float(cap.utilization_no_prefix_cache * nodes / left) if left > 0 else math.inf
    if scenario is Scenario.traffic_doubles:
        return float(cap.utilization_no_prefix_cache * 2)
    if scenario is Scenario.inputs_double:
        return float(prefill * 2 + decode)
    if scenario is Scenario.revert_to_bf16 and scenario_core is not None:
        prefill_ratio = base.shape.peak_tflops_per_gpu / scenario_core.shape.peak_tflops_per_gpu  # 1, or 2 when prefill ran at the FP8 peak
        return float(prefill * prefill_ratio + decode * 2)
    return float(cap.utilization_no_prefix_cache)


def _note(base: CoreDesign, brief: Brief, scenario: Scenario, core: CoreDesign, mode_ok: bool) -> str:
    slo = core.slo
    parts = []
    if scenario is Scenario.long_context_burst and brief.deployment.long_context_nodes > 0:
        replicas = base.pools.long_context_nodes * base.shape.replicas_per_node
        before = long_context_utilization(brief, base.shape, base.demand, replicas)
        during = _long_context_pool_during(base, scenario)
        parts.append(
            f"the long-context pool goes from {pct(before)} to {pct(during)} busy"
            f"{' and queues its own requests' if during > 1 else ''}; the general pool is untouched (that is why it is segregated)"
        )
    p = slo.point
    if not math.isfinite(p.load_batch):
        parts.append("the load has no steady state: sequences pile up faster than the replica finishes them")
    elif p.load_batch > brief.deployment.max_num_seqs * 0.97 and scenario is not Scenario.long_context_burst:
        need = math.ceil(p.load_batch * 1.2 / 8) * 8
        parts.append(
            f"the load keeps {num(p.load_batch)} sequences per replica running against max-num-seqs {brief.deployment.max_num_seqs}:"
            f" raise it to ~{need} (decode step {num(core.shape.decode_step_real_s(need, context_tokens(core.brief)[0]) * 1e3, 'ms')}) or add nodes"
        )
    if core.capacity.utilization > 1:
        u = core.capacity.utilization
        more = f"add ~{math.ceil((u - 1) * brief.hardware.nodes)} nodes" if math.isfinite(u) else "add nodes"
        parts.append(f"utilization {pct(u)}: the fleet cannot carry the peak; {more} or shed load")
    elif not slo.ttft_ok:
        parts.append(f"p95 TTFT {num(slo.ttft_p95_ms, 'ms')} over the {num(slo.ttft_target_ms, 'ms')} target")
    elif not slo.itl_ok:
        parts.append(f"p95 ITL {num(slo.itl_p95_ms, 'ms')} over the {num(slo.itl_target_ms, 'ms')} target")
    if mode_ok and not parts:
        parts.append(
            f"fits: {pct(core.capacity.utilization)} busy, p95 TTFT {num(slo.ttft_p95_ms, 'ms')}, p95 ITL {num(slo.itl_p95_ms, 'ms')}"
        )
    return "; ".join(parts)


def _long_context_pool_during(base: CoreDesign, scenario: Scenario) -> float:
    """The long-context pool's utilization during a burst of long prompts (0 for other scenarios or no pool)."""
    brief = base.brief
    if scenario is not Scenario.long_context_burst or base.pools.long_context_nodes == 0:
        return 0.0
    share = min(brief.workload.long_context_share * BURST_SHARE_FACTOR, 1.0)
    replicas = base.pools.long_context_nodes * base.shape.replicas_per_node
    return long_context_utilization(brief, base.shape, base.demand, replicas, share=share)


def _infeasible(scenario: Scenario, change: str, note: str, linear: float) -> FailureMode:
    """A scenario whose changed brief cannot run at all: every figure unbounded, nothing met."""
    return FailureMode(
        scenario=scenario,
        title=TITLES[scenario],
        change=change,
        utilization=math.inf,
        utilization_no_prefix_cache=math.inf,
        utilization_linear_no_prefix_cache=linear,
        ttft_p95_ms=math.inf,
        itl_p95_ms=math.inf,
        ttft_ok=False,
        itl_ok=False,
        ok=False,
        note=note,
    )


def failure_mode(base: CoreDesign, scenario: Scenario, core_planner: CorePlanner) -> FailureMode:
    brief = base.brief
    changes, change = _changes(brief, scenario)
    if changes.get("hardware.nodes", 1) < 1:
        return _infeasible(scenario, change, "no node left to serve", _linear(base, brief, scenario, None))
    try:
        core = core_planner(brief.with_changes(changes)) if changes else base
    except InfeasibleDesign as exc:
        return _infeasible(scenario, change, f"cannot run at all: {exc.problems[0].problem}", _linear(base, brief, scenario, None))
    except BriefError as exc:  # the changed brief leaves a field's valid range
        return _infeasible(scenario, change, f"cannot run at all: {exc}", _linear(base, brief, scenario, None))
    slo = core.slo
    pool_holds = _long_context_pool_during(base, scenario) <= 1  # a burst that swamps its own pool fails too
    ok = bool(core.verdict.feasible and slo.ttft_ok and slo.itl_ok and pool_holds)
    return FailureMode(
        scenario=scenario,
        title=TITLES[scenario],
        change=change,
        utilization=core.capacity.utilization,
        utilization_no_prefix_cache=core.capacity.utilization_no_prefix_cache,
        utilization_linear_no_prefix_cache=_linear(base, brief, scenario, core),
        ttft_p95_ms=slo.ttft_p95_ms,
        itl_p95_ms=slo.itl_p95_ms,
        ttft_ok=slo.ttft_ok,
        itl_ok=slo.itl_ok,
        ok=ok,
        note=_note(base, brief, scenario, core, ok),
    )


def failure_modes(base: CoreDesign, core_planner: CorePlanner) -> tuple[tuple[FailureMode, ...], FailureSummary]:
    """Every scenario re-planned through `core_planner`, and which one binds."""
    modes = tuple(failure_mode(base, s, core_planner) for s in Scenario)
    return modes, _summary(base, modes)


def _summary(base: CoreDesign, modes: tuple[FailureMode, ...]) -> FailureSummary:
    brief = base.brief
    failing = [m for m in modes if not m.ok]
    pool = failing or list(modes)
    binding = max(pool, key=lambda m: m.utilization if math.isfinite(m.utilization) else 1e18)
    if failing:
        reason = f"{binding.title} fails first among {len(failing)} failing scenario(s): {binding.note}"
    else:
        reason = f"every scenario fits; {binding.title} comes closest at {pct(binding.utilization)} busy"
    one = next(m for m in modes if m.scenario is Scenario.one_node_lost)
    downtime_h = (1 - brief.slo.availability) * 8760
    spare = brief.deployment.spare_nodes
    availability = (
        f"{pct(brief.slo.availability)} allows {num(downtime_h, 'h')} of downtime a year;"
        f" {'with ' + str(spare) + ' spare node(s)' if spare else 'with no spare node'}, losing one node leaves"
        f" {pct(one.utilization)} busy ({pct(one.utilization_no_prefix_cache)} without prefix cache) and the SLO"
        f" {'holds' if one.ok else 'breaks'}: {'N+1 holds, so rolling one node at a time for deploys is safe' if one.ok else 'no N+1: a node failure or a rolling deploy breaches the SLO'}"
    )
    return FailureSummary(
        binding_scenario=binding.scenario,
        binding_reason=reason,
        n_plus_one_ok=one.ok,
        availability_note=availability,
        load_scaling=(
            "The decode batch per node follows the load by Little's law (generating sequences / serving nodes), so a"
            " bigger batch makes each decode token cheaper and utilization grows less than linearly with load or with"
            " lost nodes; `utilization_linear_no_prefix_cache` is the worked design's linear scaling of its no-cache"
            " utilization, kept for comparison. `utilization` is at the scenario's prefix hit rate, `utilization_no_prefix_cache`"
            " without any hits."
        ),
    )


def hit_rate_floor(base: CoreDesign) -> float | None:
    """Lowest prefix hit rate at which a general-pool replica still meets both targets under 100% busy, on the brief's
    queue basis (cold_cache: the other prompts miss either way); None if even 0% does."""
    brief = base.brief
    if not brief.deployment.prefix_caching:
        return None
    p = base.slo.point

    def fine(hit: float) -> bool:
        others = 0.0 if brief.slo.queue_basis is QueueBasis.cold_cache else hit  # the other prompts, on the brief's basis
        q = latency_point(brief, base.shape, p.rate_per_replica_per_s, p.load_batch, hit_rate=hit, load_hit_rate=others)
        return q.prefill_slot_busy < 1 and q.ttft_p95_ms <= brief.slo.ttft_p95_ms and q.itl_p95_ms <= brief.slo.itl_p95_ms

    if fine(0.0):
        return None
    high = brief.workload.prefix_hit_rate
    if not fine(high):
        return high
    low = 0.0
    for _ in range(12):  # 1/4096 of the hit rate: finer than any brief states it
        mid = (low + high) / 2
        low, high = (low, mid) if fine(mid) else (mid, high)
    return high
