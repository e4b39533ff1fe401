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
from dataclasses import dataclass
from enum import StrEnum
from functools import partial
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict

from planner.architecture import LONG_PROMPT_FACTOR
from planner.brief import Brief, ComputePeak, KvPrecision, ObjectiveKind, Precision
from planner.catalog import gpu_spec
from planner.core import (
    CapacityReadCore,
    CoreDesign,
    PoolsReadCore,
    capacity_read,
    capacity_read_core,
    judged_itl_ms,
    judged_with_capacity,
    pools_meet_at,
    pools_read_core,
    read_by_pools,
    replan,
    sizing_figures,
    verdict_core,
    verdict_read,
    worded_core,
    worded_replan,
)
from planner.cost import HOURS_PER_YEAR
from planner.disagg import clear_above
from planner.errors import BriefError
from planner.fmt import PCT_STEP, num, pct
from planner.grid_search import LastAnswers, confirmed, first_meeting, question_key, slo_margin_of
from planner.lengths import share_above
from planner.mechanisms import mechanism_verdict, resolve
from planner.multimodal import with_image_tokens
from planner.objective import ObjectiveAnalysis, duration_text, objective_analysis
from planner.operating_point import Limit
from planner.pools import pools_of
from planner.quantization import prefill_peak
from planner.replica import shape_of
from planner.verdict import InfeasibleDesign, Verdict

__all__ = [
    "BURST_SHARE_FACTOR",
    "HIT_RATE_AFTER_DROP",
    "FailureMode",
    "FailureSummary",
    "HitRateFloor",
    "LostNode",
    "Scenario",
    "failure_modes",
    "hit_rate_floor",
    "hit_rate_overrides",
    "judged",
    "lost_by_a_pool",
    "lost_first_problem",
    "lost_read",
    "n_plus_one_check",
    "one_node_lost",
    "pressure",
    "read_check",
    "row_core",
    "scenario_check",
    "scenario_holds",
    "scenario_overrides",
    "verdict_margin",
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
    overrides: dict[str, Any]  # the brief paths and values it applies: `plan --set` with them gives this row
    utilization: float  # at the scenario's prefix hit rate
    utilization_no_prefix_cache: float
    utilization_linear_no_prefix_cache: float  # the worked design's basis: baseline scaled linearly
    ttft_p95_ms: float
    itl_p95_ms: float  # per-token gaps
    tpot_p95_ms: float  # each reply's mean gap: what a brief with slo.itl_metric = tpot judges against its ITL target
    load_vs_capacity: float  # a general-pool replica's load against the rate at which it stops meeting the SLO
    long_context_utilization: float  # share of the long-context pool's GPU time its requests take (0 without the pool)
    ttft_ok: bool
    itl_ok: bool
    ok: bool  # the re-planned design is feasible and meets its SLO (its verdict; an offline job's or a rollout's: its deadline)
    note: str
    runs: bool = True  # False: the changed brief cannot be computed at all (every figure unbounded)
    limit: Limit | None = None  # what stops a general-pool replica keeping up, when it has no steady state
    pool: str = ""  # a disaggregated design's lost nodes: the pool they are lost from (prefill, decode; spare: none)
    applicable: bool = True  # False: the scenario changes nothing for this brief (the note says why); not counted or charted
    # an offline job or a rollout batch (None for a latency brief, which no deadline judges): the re-planned design's
    # time to finish its work (the job's time, the batch's makespan; inf when it cannot finish) and that time over the
    # deadline (1 = the deadline; what the row's `ok` judges)
    objective_time_s: float | None = None
    objective_share: float | None = None


class FailureSummary(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    binding_scenario: Scenario
    binding_reason: str
    n_plus_one_ok: bool
    scenarios_within_slo: int  # applicable scenarios whose re-plan meets the SLO
    scenarios_applicable: int  # scenarios that change something for this brief
    availability_note: str
    load_scaling: str


def judged(core: CoreDesign) -> tuple[Verdict, ObjectiveAnalysis | None]:
    """(the verdict a re-plan is judged by, the objective's analysis): the core verdict for a latency brief; for an
    offline job or a rollout batch its deadline's, as plan() gives it (mechanism_verdict), so a failure row or a
    search candidate is judged on the deadline, not on a TTFT or ITL it has no target for."""
    goal = objective_analysis(core.brief, core.shape, core.memory)
    return (core.verdict, None) if goal is None else (mechanism_verdict(core.verdict, core, None, None, goal), goal)


def _deadline_figures(goal: ObjectiveAnalysis | None) -> dict[str, float]:
    """A row's time to finish and its share of the deadline, from the objective analysis its verdict was judged by
    (judged()); none for a latency brief."""
    if goal is None:
        return {}
    return {"objective_time_s": goal.time_s, "objective_share": goal.time_s / goal.deadline_s}


def _cannot_finish(brief: Brief) -> dict[str, float]:
    """A row whose changed brief cannot run: a deadline brief's work never finishes (a latency brief: no figure)."""
    return {} if brief.objective.kind is ObjectiveKind.latency else {"objective_time_s": math.inf, "objective_share": math.inf}


def _work_doubles(brief: Brief) -> tuple[dict[str, Any], str]:
    """The overrides and words that double an objective's work (none for a latency brief): a job's tokens, a rollout's
    prompts; the time the verdict judges grows with them, not with the rate."""
    o = brief.objective
    if o.kind is ObjectiveKind.throughput:
        return {"objective.job_tokens": o.job_tokens * 2}, f"; the job {num(o.job_tokens / 1e9)}B -> {num(o.job_tokens * 2 / 1e9)}B tokens"
    if o.kind is ObjectiveKind.batch_completion:
        return {"objective.batch_prompts": o.batch_prompts * 2}, f"; the batch {o.batch_prompts:,} -> {o.batch_prompts * 2:,} prompts"
    return {}, ""


def _replica_nodes(brief: Brief) -> int:
    """Nodes one replica spans (pipeline stages, EP over nodes); 1 when the brief forms no replica."""
    try:
        return shape_of(brief).replica_nodes
    except BriefError:
        return 1


def _long_context_pool(brief: Brief) -> bool:
    """Whether the fleet holds a long-context pool (planner.pools: a fleet too small for it holds none)."""
    try:
        return pools_of(brief, shape_of(brief))[0].long_context_nodes > 0
    except BriefError:
        return brief.deployment.long_context_nodes > 0


def _inputs_double(brief: Brief) -> tuple[dict[str, Any], str]:
    """The overrides and words that double every prompt: its text and, on the multimodal path, its images' tokens
    (each image twice the pixels: twice the tokens and the encoder's patches), so the whole prompt doubles, mean and
    p95, and the encoder's work with it."""
    w, mm = brief.workload, brief.multimodal
    whole = with_image_tokens(brief).workload  # the prompt as planned: the text and the image tokens the planner adds
    changes: dict[str, Any] = {
        "workload.input_tokens_mean": w.input_tokens_mean * 2,
        "workload.input_tokens_p95": w.input_tokens_p95 * 2,
    }
    text = (
        f"mean prompt {num(whole.input_tokens_mean)} -> {num(whole.input_tokens_mean * 2)} tokens (p95 {num(whole.input_tokens_p95 * 2)})"
    )
    if mm.enabled:
        changes["multimodal.tokens_per_image"] = mm.tokens_per_image * 2
        changes["multimodal.encoder_patches_per_image"] = mm.encoder_patches_per_image * 2
        text_tokens = "" if mm.prompt_includes_images else f"text {num(w.input_tokens_mean)} -> {num(w.input_tokens_mean * 2)} tokens and "
        text += (
            f": {text_tokens}each image {num(mm.tokens_per_image)} -> {num(mm.tokens_per_image * 2)} tokens"
            f" ({num(mm.encoder_patches_per_image)} -> {num(mm.encoder_patches_per_image * 2)} encoder patches)"
        )
    if w.kv_context_tokens is not None:
        changes["workload.kv_context_tokens"] = w.kv_context_tokens + whole.input_tokens_mean
        text += f"; KV context {num(w.kv_context_tokens)} -> {num(w.kv_context_tokens + whole.input_tokens_mean)}"
    if brief.deployment.long_context_nodes > 0 or w.long_context_share > 0:  # the router sends the longer prompts on
        tail = share_above(whole.input_tokens_mean * 2, whole.input_tokens_p95 * 2, w.long_context_threshold_tokens)
        share = round(max(tail, w.long_context_share), 4)  # a stated share above the lengths' stands (pools.share_problems)
        changes["workload.long_context_share"] = share
        text += f"; over the {num(w.long_context_threshold_tokens, 'tokens')} threshold {pct(w.long_context_share)} -> {pct(share)}"
    if brief.objective.kind is ObjectiveKind.throughput:  # the same documents, each longer: the job's tokens grow
        prompt, output = whole.input_tokens_mean, w.output_tokens_mean
        grown = brief.objective.job_tokens * (2 * prompt + output) / (prompt + output)
        changes["objective.job_tokens"] = grown
        text += f"; the same documents: the job {num(brief.objective.job_tokens / 1e9)}B -> {num(grown / 1e9)}B tokens"
    return changes, text


def _changes(brief: Brief, scenario: Scenario) -> tuple[dict[str, Any], str]:
    dep, w = brief.deployment, brief.workload
    if scenario in (Scenario.one_node_lost, Scenario.two_nodes_lost):
        return _nodes_lost(brief, 1 if scenario is Scenario.one_node_lost else 2, _replica_nodes(brief))
    if scenario is Scenario.traffic_doubles:
        work, work_text = _work_doubles(brief)  # an offline job or a rollout: its work doubles with its rate
        if w.request_rate is not None:
            return {"workload.request_rate": w.request_rate * 2, **work}, (
                f"{num(w.request_rate, 'req/s')} -> {num(w.request_rate * 2, 'req/s')}{work_text}"
            )
        assert w.users is not None
        return {"workload.users": w.users * 2, **work}, f"{num(w.users, 'users')} -> {num(w.users * 2, 'users')}{work_text}"
    if scenario is Scenario.inputs_double:
        return _inputs_double(brief)
    if scenario is Scenario.prefix_hit_rate_drops:
        if brief.kv_tiers.enabled:  # the tiers derive the hit rate: a stated one counts only with the tiers off
            derived = resolve(brief).workload.prefix_hit_rate
            hit = min(derived, HIT_RATE_AFTER_DROP)
            return hit_rate_overrides(brief, hit), (
                f"prefix hit rate {pct(derived)} (derived from the KV tiers) -> {pct(hit)}: planned with the tiers off,"
                " so the stated hit rate applies"
            )
        hit = min(w.prefix_hit_rate, HIT_RATE_AFTER_DROP)
        return {"workload.prefix_hit_rate": hit}, f"prefix hit rate {pct(w.prefix_hit_rate)} -> {pct(hit)}"
    if scenario is Scenario.long_context_burst:
        share = min(w.long_context_share * BURST_SHARE_FACTOR, 1.0)
        if _long_context_pool(brief):
            return {
                "workload.long_context_share": share
            }, f"long-context share {pct(w.long_context_share)} -> {pct(share)}, routed to the long-context pool"
        extra = (share - w.long_context_share) * LONG_PROMPT_FACTOR * w.long_context_threshold_tokens
        changes: dict[str, Any] = {
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
    gpu = gpu_spec(brief.hardware.gpu)  # prefill moves to the BF16 peak only from a higher one it was sized at
    peak_moves = gpu.peak_tflops(prefill_peak(dep.weights, brief.efficiency.compute_peak, gpu).precision) > gpu.peak_tflops("bf16")
    return changes, _revert_text(dep.weights, dep.kv_cache) + (", prefill math at the BF16 peak" if peak_moves else "")


def _nodes_lost(brief: Brief, lost: int, span: int) -> tuple[dict[str, Any], str]:
    """The overrides and words of `lost` nodes lost from a fleet whose replicas span `span` nodes each."""
    hw, dep = brief.hardware, brief.deployment
    spare = max(dep.spare_nodes - lost, 0)
    if span > 1:  # a lost node stops its whole multi-node replica; at worst each lost node is in a different one
        out = min(lost * span, hw.nodes)
        return {"hardware.nodes": hw.nodes - out, "deployment.spare_nodes": spare}, (
            f"{hw.nodes} -> {hw.nodes - out} serving nodes: each lost node stops its {span}-node replica"
        )
    spares = (
        f"the spare{'s' if dep.spare_nodes > 1 else ''} ({dep.spare_nodes}) step{'' if dep.spare_nodes > 1 else 's'} in first"
        if dep.spare_nodes
        else "no spare to step in"
    )
    return {
        "hardware.nodes": max(hw.nodes - lost, 0),
        "deployment.spare_nodes": spare,
    }, f"{hw.nodes} -> {max(hw.nodes - lost, 0)} nodes; {spares}"


def _revert_text(weights: Precision, kv: KvPrecision) -> str:
    """What reverting to BF16 changes, naming only what is not BF16 already."""
    moves = [f"{name} {p.value.upper()} -> BF16" for name, p in (("weights", weights), ("KV cache", kv)) if p.value != "bf16"]
    return "; ".join(moves) if moves else "already BF16: nothing to revert"


def scenario_overrides(brief: Brief, scenario: Scenario) -> dict[str, Any]:
    """The brief paths and values a scenario applies (a failure row's `overrides`)."""
    return _changes(brief, scenario)[0]


def scenario_holds(brief: Brief, scenario: Scenario) -> bool:
    """Whether the design still meets its SLO under the scenario: the `ok` of its failure row, from a verdict-only
    re-plan (the row's figures are not computed)."""
    return scenario_check(brief, scenario)[0]


def scenario_check(brief: Brief, scenario: Scenario) -> tuple[bool, float]:
    """scenario_holds, and the re-plan's verdict_margin (inf when the changed brief cannot run). A disaggregated design
    losing nodes holds only if it holds whichever pool loses them, as its failure row judges (_pool_node_lost): each
    pool's loss is judged (on its two pools where they judge it: core.verdict_read)."""
    changes = scenario_overrides(brief, scenario)
    prefill = brief.disaggregation.prefill_nodes
    lost = lost_by_a_pool(brief, scenario)
    holds, margin = _changed_check(brief, changes)  # the decode pool's loss: the brief's split on fewer nodes
    if not (
        brief.disaggregation.enabled and scenario in (Scenario.one_node_lost, Scenario.two_nodes_lost) and lost and prefill - lost >= 1
    ):
        return holds, margin
    prefill_holds, prefill_margin = _changed_check(brief, changes | {"disaggregation.prefill_nodes": prefill - lost})
    return holds and prefill_holds, max(margin, prefill_margin)


def lost_by_a_pool(brief: Brief, scenario: Scenario) -> int:
    """The nodes a serving pool loses in a node-loss scenario: the lost ones the spares do not replace."""
    return max((1 if scenario is Scenario.one_node_lost else 2) - brief.deployment.spare_nodes, 0)


_Core = TypeVar(
    "_Core", bound=CoreDesign | CapacityReadCore | PoolsReadCore
)  # a re-plan, or a design read (on a known SLO capacity, its pools)


def _replanned(brief: Brief, changes: dict[str, Any], core_of: Callable[[Brief], _Core]) -> _Core | None:
    """core_of the brief with `changes`, resolved as plan() resolves it (the KV tiers derive the changed brief's hit
    rate again); None when the changed brief cannot run at all (no node left, a field out of range, a replica that
    cannot be formed)."""
    if changes.get("hardware.nodes", 1) < 1:
        return None
    try:
        return core_of(resolve(brief.with_changes(changes)) if changes else resolve(brief))
    except BriefError:  # InfeasibleDesign too
        return None


def _changed_check(brief: Brief, changes: dict[str, Any]) -> tuple[bool, float]:
    """(the brief with `changes` is feasible and meets its SLO or deadline, its verdict_margin), judged on its verdict's
    core (core.verdict_read: a disaggregated design's pools read) as read_check judges it; (False, inf) when the
    changed brief cannot run at all."""
    core = _replanned(brief, changes, verdict_read)
    if core is None:
        return False, math.inf
    try:
        return read_check(core)
    except BriefError:  # InfeasibleDesign too
        return False, math.inf


N_PLUS_ONE_AVAILABILITY = 0.99  # from here on a node's repair time exceeds the downtime budget: keep a node spare


def n_plus_one(brief: Brief, known: CoreDesign | None = None) -> bool:
    """plan()'s availability rule: a target of 99% or more needs the SLO held with one node lost (an offline job or a
    rollout: its deadline, as its failure row judges it). `known`: a core the one-node-lost design's verdict may be read
    on (core.capacity_read: the same replica and traffic's shape at another fleet or traffic) instead of re-planned;
    where it cannot tell, the brief with the node lost, built and resolved once, is re-planned (as scenario_check's
    _changed_check judges it)."""
    if known is None or not needs_n_plus_one(brief) or brief.disaggregation.enabled:
        return n_plus_one_check(brief)[0]
    lost = _one_node_lost(brief)
    if lost is None:
        return False
    read = _read_on(known, lost)
    if read is not None:
        return read
    try:
        return read_check(verdict_read(lost))[0]
    except BriefError:  # InfeasibleDesign too
        return False


def lost_read(brief: Brief, known: CoreDesign) -> bool | None:
    """scenario_holds(brief, one node lost) read on `known`'s SLO capacity (core.capacity_read), judged as _changed_check
    judges it (a brief that cannot run: False); None where the read cannot tell."""
    if brief.disaggregation.enabled:  # each pool's loss is judged on its own (scenario_check)
        return None
    lost = _one_node_lost(brief)
    return False if lost is None else _read_on(known, lost)


def _one_node_lost(brief: Brief) -> Brief | None:
    """The brief with one node lost (scenario_overrides), resolved as plan() resolves it; None when it cannot run at all
    (no node left, a field out of range, a replica that cannot be formed), as _replanned takes it."""
    changes = scenario_overrides(brief, Scenario.one_node_lost)
    if changes.get("hardware.nodes", 1) < 1:
        return None
    try:
        return resolve(brief.with_changes(changes))
    except BriefError:  # InfeasibleDesign too
        return None


def _read_on(known: CoreDesign, lost: Brief) -> bool | None:
    """core.capacity_read of the resolved brief `lost` on `known` (False where it cannot run; None: it cannot tell)."""
    try:
        return capacity_read(known, lost)
    except BriefError:  # InfeasibleDesign too
        return False


def needs_n_plus_one(brief: Brief) -> bool:
    """The availability target asks for the SLO (a job's deadline) held with one node lost: 99% or more."""
    return brief.slo.availability >= N_PLUS_ONE_AVAILABILITY


def n_plus_one_check(brief: Brief, own: CoreDesign | None = None) -> tuple[bool, float]:
    """n_plus_one, and the margin of the one-node-lost re-plan (-inf when the rule asks for none). `own`: the brief's
    verdict core, when its design meets: where a spare replaces the lost node, the re-plan is read on it (_spare_check)."""
    if not needs_n_plus_one(brief):
        return True, -math.inf
    read = _spare_check(own, brief) if own is not None else None
    return read if read is not None else scenario_check(brief, Scenario.one_node_lost)


def _spare_check(own: CoreDesign, brief: Brief) -> tuple[bool, float] | None:
    """scenario_check(brief, one node lost) read on `own`, the brief's verdict core, whose design meets, where a spare
    replaces the lost node: the general and long-context pools and their load are its, so the operating point and the
    p95s are too; only steps 1-2 are worked out again (core.sizing_figures: the sizing arithmetic counts every replica
    of the fleet, the long-context pool's batch a rate-given brief's replicas). None (re-plan it) for a disaggregated,
    speculative or deadline design, or where the lost design's pools, load or resolved brief differ otherwise."""
    stated, verdict = own.brief, own.verdict
    if lost_by_a_pool(brief, Scenario.one_node_lost) or stated.disaggregation.enabled or stated.speculative.enabled:
        return None
    if stated.objective.kind is not ObjectiveKind.latency or not (verdict.feasible and verdict.meets_slo):
        return None
    try:  # as _changed_check resolves it
        changed = resolve(brief.with_changes(scenario_overrides(brief, Scenario.one_node_lost)))
    except BriefError:
        return False, math.inf
    fleet = {"hardware.nodes": changed.hardware.nodes, "deployment.spare_nodes": changed.deployment.spare_nodes}
    try:
        same = stated.with_changes(fleet) == changed  # the KV tiers' hit rate, say, did not follow the fleet
    except BriefError:
        return None
    if not same:
        return None
    try:
        lost = sizing_figures(changed)
    except BriefError:  # InfeasibleDesign: fewer nodes than a replica spans
        return False, math.inf
    kept = {"spare_nodes": own.pools.spare_nodes, "arithmetic": own.pools.arithmetic}
    if lost.pools.model_copy(update=kept) != own.pools or lost.demand.request_rate_per_s != own.demand.request_rate_per_s:
        return None
    cap, busy, slo = lost.capacity, lost.long_context_utilization, own.slo
    holds = cap.utilization <= 1 and cap.kv_fraction <= 1 and busy <= 1  # own's other rules hold, the same here
    shares = [math.log(share) for share in (cap.utilization, cap.kv_fraction, busy) if share > 0]
    return holds, max([slo_margin_of(slo.ttft_p95_ms, slo.ttft_target_ms, slo.judged_itl_p95_ms, slo.itl_target_ms), *shares])


def _linear(base: CoreDesign, brief: Brief, scenario: Scenario, scenario_core: CoreDesign | None) -> float:
    """The worked design's basis: the baseline's no-cache utilization scaled by the load or fleet ratio."""
    cap = base.capacity
    prefill, decode = cap.prefill_fraction_no_prefix_cache, cap.decode_fraction
    nodes = brief.hardware.nodes
    if scenario in (Scenario.one_node_lost, Scenario.two_nodes_lost):
        lost = 1 if scenario is Scenario.one_node_lost else 2
        left = nodes - lost * base.shape.replica_nodes  # a lost node takes its whole replica's nodes out of service
        before, after = base.shape.replicas_in(nodes), base.shape.replicas_in(max(left, 0))  # a node lost takes its whole replica
        return float(cap.utilization_no_prefix_cache * before / after) if after > 0 else math.inf
    if scenario is Scenario.traffic_doubles:
        return float(cap.utilization_no_prefix_cache * 2)
    if scenario is Scenario.inputs_double:
        return float(prefill * 2 + decode)
    if scenario is Scenario.revert_to_bf16 and scenario_core is not None:
        prefill_ratio = base.shape.peak_tflops_per_gpu / scenario_core.shape.peak_tflops_per_gpu  # 1, or 2 when prefill ran at the FP8 peak
        return float(prefill * prefill_ratio + decode * 2)
    return float(cap.utilization_no_prefix_cache)


def _note(base: CoreDesign, brief: Brief, scenario: Scenario, core: CoreDesign, verdict: Verdict, goal: ObjectiveAnalysis | None) -> str:
    slo, op, mode_ok = core.slo, core.operating_point, verdict.feasible and verdict.meets_slo
    parts = []
    if scenario is Scenario.long_context_burst and base.pools.long_context_nodes > 0:
        parts.append(
            f"the long-context pool goes from {pct(base.long_context_utilization)} to {pct(core.long_context_utilization)} busy"
            f"{' and queues its own requests' if core.long_context_utilization > 1 else ''}; the general pool is untouched (that is why it is segregated)"
        )
    if not mode_ok:  # the re-planned verdict's first problem names the limit and the change; `plan --set` lists them all
        problems = [p for p in verdict.problems if p.field != "deployment.long_context_nodes" or not parts]
        if problems:
            more = f" (+{len(problems) - 1} more: plan --set with this row's overrides lists them)" if len(problems) > 1 else ""
            parts.append(f"{problems[0].problem}; {problems[0].change}{more}")
    if mode_ok and not parts and goal is not None:  # an offline job or a rollout: its deadline judges it
        parts.append(
            f"deadline met: {duration_text(goal.time_s, goal.kind)} of {duration_text(goal.deadline_s, goal.kind)}, ${num(goal.usd_per_m_tokens)} per M tokens"
        )
    elif mode_ok and not parts:
        parts.append(
            f"fits: {pct(op.load_vs_capacity)} of a replica's SLO capacity, p95 TTFT {num(slo.ttft_p95_ms, 'ms')},"
            f" p95 {slo.itl_metric.value.upper()} {num(slo.judged_itl_p95_ms, 'ms')}"  # the gap figure the ITL target judges
        )
    return "; ".join(parts)


def _infeasible(brief: Brief, scenario: Scenario, change: str, overrides: dict[str, Any], note: str, linear: float) -> FailureMode:
    """A scenario whose changed brief cannot run at all: every figure unbounded, nothing met."""
    return FailureMode(
        **_cannot_finish(brief),
        scenario=scenario,
        title=TITLES[scenario],
        change=change,
        overrides=overrides,
        load_vs_capacity=math.inf,
        long_context_utilization=math.inf,
        utilization=math.inf,
        utilization_no_prefix_cache=math.inf,
        utilization_linear_no_prefix_cache=linear,
        ttft_p95_ms=math.inf,
        itl_p95_ms=math.inf,
        tpot_p95_ms=math.inf,
        ttft_ok=False,
        itl_ok=False,
        ok=False,
        note=note,
        runs=False,
    )


def failure_mode(base: CoreDesign, scenario: Scenario, stated: Brief | None = None, core_of: _ReplanFn = replan) -> FailureMode:
    """One scenario's row. `stated` is the brief as given (before planner.mechanisms.resolve; base.brief when None): the
    row's overrides apply to it and the changed brief is resolved again, as `plan --set` does, so a hit rate the KV
    tiers derive follows the changed load and image tokens are added once. `core_of` re-plans the changed brief: replan,
    or worded_replan for a row read only for its verdict and words (its note may then name a problem's plain change)."""
    stated = base.brief if stated is None else stated
    if base.disaggregation is not None and scenario in (Scenario.one_node_lost, Scenario.two_nodes_lost):
        return _pool_node_lost(base, scenario, stated, core_of)
    return _failure_mode(base, scenario, stated, core_of=core_of)


_ReplanFn = Callable[[Brief], CoreDesign]  # a failure row's re-plan of its changed brief


def _pool_node_lost(base: CoreDesign, scenario: Scenario, stated: Brief, core_of: _ReplanFn) -> FailureMode:
    """A disaggregated design loses its nodes from one pool: each pool's loss re-planned, the worse one is the row,
    named with the pool it hits and how the other pool's loss fares."""
    brief, dis = base.brief, base.disaggregation
    assert dis is not None
    lost = lost_by_a_pool(brief, scenario)
    decode = _failure_mode(base, scenario, stated, core_of=core_of)
    if lost == 0 or dis.prefill_nodes - lost < 1:
        pool = "decode" if lost else "spare"
        return decode.model_copy(
            update={"change": f"{decode.change}; {'the decode pool loses them' if lost else 'no pool loses a node'}", "pool": pool}
        )
    prefill = _failure_mode(base, scenario, stated, _prefill_lost(dis.prefill_nodes, lost), core_of)
    worse_is_prefill = (not prefill.ok and decode.ok) or (prefill.ok == decode.ok and prefill.load_vs_capacity > decode.load_vs_capacity)
    row, other = (prefill, decode) if worse_is_prefill else (decode, prefill)
    return _pool_binds(row, "prefill" if worse_is_prefill else "decode", other.ok, other.load_vs_capacity, base, lost)


def _prefill_lost(prefill_nodes: int, lost: int) -> dict[str, Any]:
    """The override that takes a disaggregated design's lost nodes from its prefill pool."""
    return {"disaggregation.prefill_nodes": prefill_nodes - lost}


def _pool_binds(row: FailureMode, name: str, other_ok: bool, other_load: float, base: CoreDesign, lost: int) -> FailureMode:
    """`row`, the loss of `lost` nodes from the pool `name` (the worse one), named with that pool and how the other
    pool's loss fares (it meets or not, `other_ok`, at `other_load` of its SLO capacity)."""
    dis = base.disaggregation
    assert dis is not None
    other_name = "decode" if name == "prefill" else "prefill"
    counts = {"prefill": (dis.prefill_nodes, dis.prefill_nodes - lost), "decode": (dis.decode_nodes, dis.decode_nodes - lost)}
    before, after = counts[name]
    o_before, o_after = counts[other_name]
    change = (
        f"{row.change}; the {name} pool binds: losing {'a' if lost == 1 else lost} {name} node{'s' if lost > 1 else ''}"
        f" ({before} -> {after}) is the worse case; from the {other_name} pool ({o_before} -> {o_after}) the SLO"
        f" {'holds' if other_ok else 'breaks'} at {pct(other_load)} of its SLO capacity"
    )
    note = f"the {name} pool binds ({before} -> {after} nodes; from the {other_name} pool the SLO {'holds' if other_ok else 'breaks'}): {row.note}"
    return row.model_copy(update={"change": change, "pool": name, "note": note})


def _failure_mode(
    base: CoreDesign, scenario: Scenario, stated: Brief, extra: dict[str, Any] | None = None, core_of: _ReplanFn = replan
) -> FailureMode:
    brief = base.brief
    changes, change = _changes(stated, scenario)
    changes = changes | (extra or {})
    reason = _not_applicable(stated, scenario, changes)
    if reason:
        return _unchanged(base, scenario, reason)
    if changes.get("hardware.nodes", 1) < 1:  # no brief has zero nodes: nothing to re-plan, so no overrides either
        note = f"no node left to serve: the fleet has {brief.hardware.nodes} node(s)"
        return _infeasible(brief, scenario, change, {}, note, _linear(base, brief, scenario, None))
    try:
        core = core_of(resolve(stated.with_changes(changes))) if changes else base
    except InfeasibleDesign as exc:
        return _infeasible(
            brief, scenario, change, changes, f"cannot run at all: {exc.problems[0].problem}", _linear(base, brief, scenario, None)
        )
    except BriefError as exc:  # the changed brief leaves a field's valid range
        return _infeasible(brief, scenario, change, changes, f"cannot run at all: {exc}", _linear(base, brief, scenario, None))
    slo = core.slo
    verdict, goal = judged(core)
    ok = bool(verdict.feasible and verdict.meets_slo)  # the same verdict `plan --set` gives (an objective's: its deadline)
    return FailureMode(
        **_deadline_figures(goal),
        scenario=scenario,
        title=TITLES[scenario],
        change=change,
        overrides=changes,
        load_vs_capacity=core.operating_point.load_vs_capacity,
        long_context_utilization=core.long_context_utilization,
        utilization=core.capacity.utilization,
        utilization_no_prefix_cache=core.capacity.utilization_no_prefix_cache,
        utilization_linear_no_prefix_cache=_linear(base, brief, scenario, core),
        ttft_p95_ms=slo.ttft_p95_ms,
        itl_p95_ms=slo.itl_p95_ms,
        tpot_p95_ms=slo.tpot_p95_ms,
        ttft_ok=slo.ttft_ok,
        itl_ok=slo.itl_ok,
        ok=ok,
        note=_note(base, brief, scenario, core, verdict, goal),
        limit=core.operating_point.limit,
    )


@dataclass(frozen=True)
class LostNode:
    """The one-node-lost row as plan() reads it: whether the design holds with a node lost (the row's `ok`) and that
    design as the headroom's N+1 limit reads it (None: it cannot run at all): read on the design's own SLO capacity
    where that tells the verdict (core.CapacityReadCore: steps 1-2 and the load against that capacity, no p95), a
    disaggregated design's on its two pools with their SLO capacity (core.PoolsReadCore), else re-planned with its SLO
    budget only the p95s its verdict judges (core.judged_with_capacity). Nothing reads its other figures. `row()` works
    the row out for the words of a lost N+1: re-planned without advice (core.worded_replan; the failure table's row is
    replan's, with it). `other`: where either pool of a disaggregated design may lose the node, the loss from the pool
    that does not bind, which the row's words only name (_OtherPool)."""

    ok: bool
    core: CoreDesign | CapacityReadCore | PoolsReadCore | None
    base: CoreDesign
    stated: Brief
    other: _OtherPool | None = None

    def row(self) -> FailureMode:
        if self.other is None:
            return failure_mode(self.base, Scenario.one_node_lost, self.stated, worded_replan)
        return _binding_pool_row(self.base, self.stated, self.other)


@dataclass(frozen=True)
class _OtherPool:
    """A disaggregated design's loss of a node from the pool that does not bind (_pool_lost_node): whether the binding
    loss is the prefill pool's, and the other's overrides (the stated brief's), as _pool_node_lost re-plans it."""

    prefill_binds: bool
    overrides: dict[str, Any]


def _binding_pool_row(base: CoreDesign, stated: Brief, other: _OtherPool) -> FailureMode:
    """_pool_node_lost's one-node-lost row re-planned with worded_replan, the binding pool's loss alone re-planned: the
    other pool's loss is named by its verdict and its load against its SLO capacity, read as _pool_lost_node reads it
    (_lost_verdict: the pools' SLO-capacity search, kept where it picked the binding pool on it), which are that loss's
    re-plan's."""
    dis = base.disaggregation
    assert dis is not None
    lost = lost_by_a_pool(base.brief, Scenario.one_node_lost)
    extra = _prefill_lost(dis.prefill_nodes, lost) if other.prefill_binds else None
    row = _failure_mode(base, Scenario.one_node_lost, stated, extra, worded_replan)
    other_ok, other_core = _lost_verdict(stated, other.overrides)
    other_load = other_core.operating_point.load_vs_capacity if other_core is not None else math.inf
    return _pool_binds(row, "prefill" if other.prefill_binds else "decode", other_ok, other_load, base, lost)


def one_node_lost(base: CoreDesign, stated: Brief | None = None) -> LostNode:
    """The one-node-lost row's verdict and design (`stated`: as failure_mode takes it, the brief base was planned
    from), judged as _failure_mode judges the row. A disaggregated design's row is the worse pool's loss (_pool_lost_node)."""
    stated = base.brief if stated is None else stated
    if base.disaggregation is not None:
        return _pool_lost_node(base, stated)
    changes, _ = _nodes_lost(stated, 1, base.shape.replica_nodes)  # it always takes nodes out: never not applicable
    lost = _replanned(stated, changes, partial(_lost_design, base))
    return LostNode(_holds(lost), lost, base, stated)


def _holds(lost: CoreDesign | CapacityReadCore | PoolsReadCore | None) -> bool:
    """Whether a design with nodes lost is feasible and meets its SLO, judged as _failure_mode judges its row (None: it
    cannot run at all)."""
    if isinstance(lost, CapacityReadCore | PoolsReadCore):
        return lost.meets
    verdict = judged(lost)[0] if lost is not None else None
    return verdict is not None and verdict.feasible and verdict.meets_slo


def _lost_design(base: CoreDesign, brief: Brief) -> CoreDesign | CapacityReadCore:
    """The design `brief` (base's with a node lost, resolved) as plan() reads it: read on base's SLO capacity where that
    tells its verdict (core.capacity_read_core: nothing is kept for the failure table, whose row re-plans it), else
    re-planned for its verdict and SLO capacity alone, on base's operating point and p95s where a spare replaces the
    lost node (judged_with_capacity). Raises InfeasibleDesign as both do."""
    read = capacity_read_core(base, brief)
    return read if read is not None else judged_with_capacity(brief, known=base)


def _lost_verdict(stated: Brief, changes: dict[str, Any], with_capacity: bool = True) -> tuple[bool, CoreDesign | PoolsReadCore | None]:
    """Whether the stated brief with `changes` (nodes lost) holds, judged as _failure_mode judges its row, and its design
    re-planned for the verdict and the SLO capacity alone (judged_with_capacity; a disaggregated design's two pools
    read with their SLO capacity where they judge it, core.pools_read_core; None: it cannot run at all). Without
    `with_capacity`, the pools' read skips their SLO-capacity search (its capacity nan)."""
    core = _replanned(stated, changes, partial(_lost_pools_design, with_capacity=with_capacity))
    return _holds(core), core


def _lost_pools_design(brief: Brief, with_capacity: bool = True) -> CoreDesign | PoolsReadCore:
    """A disaggregated design with nodes lost (resolved) as plan() reads it: its two pools read (with their SLO capacity)
    where they judge its verdict (core.read_by_pools), else re-planned for its verdict and SLO capacity alone."""
    return pools_read_core(brief, with_capacity=with_capacity) if read_by_pools(brief) else judged_with_capacity(brief)


def _pool_lost_node(base: CoreDesign, stated: Brief) -> LostNode:
    """one_node_lost of a disaggregated design: _pool_node_lost's row as the verdict reads it. Each pool's loss is
    judged with its SLO capacity alone (_lost_verdict), and the worse one picked as the row picks it (the one that
    misses, else the one nearer its SLO capacity); the row's figures and words are worked out when read. The decode
    pool's loss is searched for its SLO capacity only where the row may be it: not where its pools meet the SLO clearly
    past the prefill pool's loss's capacity (_capacity_above: its load is then the smaller)."""
    dis = base.disaggregation
    assert dis is not None
    lost = lost_by_a_pool(base.brief, Scenario.one_node_lost)
    changes = scenario_overrides(stated, Scenario.one_node_lost)  # nodes always go: never not applicable
    if lost == 0 or dis.prefill_nodes - lost < 1:
        return LostNode(*_lost_verdict(stated, changes), base, stated)
    prefill_changes = changes | _prefill_lost(dis.prefill_nodes, lost)
    prefill_ok, prefill = _lost_verdict(stated, prefill_changes)
    decode_ok, decode = _lost_verdict(stated, changes, with_capacity=False)  # its SLO capacity only where it is needed
    prefill_load = prefill.operating_point.load_vs_capacity if prefill is not None else math.inf
    prefill_worse = (not prefill_ok and decode_ok) or (prefill_ok == decode_ok and _capacity_above(decode, prefill_load))
    if not prefill_worse:  # the decode pool's row, or the two compared on their loads: its SLO capacity searched
        decode_ok, decode = _lost_verdict(stated, changes)
        decode_load = decode.operating_point.load_vs_capacity if decode is not None else math.inf
        prefill_worse = prefill_ok == decode_ok and prefill_load > decode_load
    if prefill_worse:
        return LostNode(prefill_ok, prefill, base, stated, _OtherPool(prefill_binds=True, overrides=changes))
    return LostNode(decode_ok, decode, base, stated, _OtherPool(prefill_binds=False, overrides=prefill_changes))


def _capacity_above(lost: CoreDesign | PoolsReadCore | None, load: float) -> bool:
    """Whether a lost pool's design read without its SLO-capacity search (`lost`) has a capacity clearly above the
    other's, whose load against its capacity is `load`: its pools meet the SLO a little past that capacity (disagg.
    clear_above), so its own search would answer more and its load would be the smaller. False where it cannot tell."""
    past = clear_above(1 / load) if load > 0 else math.inf
    return isinstance(lost, PoolsReadCore) and math.isfinite(past) and pools_meet_at(lost, lost.demand.request_rate_per_s * past)


def row_core(base: CoreDesign, row: FailureMode, stated: Brief, core_of: _ReplanFn = replan) -> CoreDesign | None:
    """The core design a failure row was re-planned as (cached; `core_of` as failure_mode's), None when it cannot run at all."""
    if not row.runs:
        return None
    if not row.overrides:  # not applicable: the design itself
        return base
    return _replanned(stated, row.overrides, core_of)


def lost_first_problem(base: CoreDesign, stated: Brief) -> str | None:
    """The words of the first problem of the one-node-lost row's design re-planned without advice (row_core of
    failure_mode(base, one node lost, stated, worded_replan): the same changes, resolved as the row resolves them, its
    problems' words read on core.worded_core), without the row: the words of a lost N+1 read nothing else of it where
    this answers. None where the row says more: a disaggregated design (its row is the worse pool's loss), a design
    that cannot run with a node lost or whose re-plan lists no problem (the row's note words those)."""
    if base.disaggregation is not None:
        return None
    changes, _ = _changes(stated, Scenario.one_node_lost)  # nodes always go: never not applicable
    lost = _replanned(stated, changes, worded_core)
    problems = lost.verdict.problems if lost is not None else ()
    return problems[0].problem if problems else None


def _not_applicable(stated: Brief, scenario: Scenario, changes: dict[str, Any]) -> str:
    """Why the scenario changes nothing for this brief ("" when it does): a hit rate already at or below the drop, no
    prefix cache to lose, no long-context request to burst, weights already BF16 - its overrides give the baseline."""
    if scenario is Scenario.prefix_hit_rate_drops and not stated.deployment.prefix_caching:
        return "prefix caching is off: no prompt hits the cache, so there is no hit rate to lose"
    try:
        if changes.get("hardware.nodes", 1) < 1 or stated.with_changes(changes) != stated:
            return ""
    except BriefError:  # a change out of a field's range changes something: the row says it cannot run
        return ""
    if scenario is Scenario.prefix_hit_rate_drops:
        return f"the hit rate is already {pct(stated.workload.prefix_hit_rate)}, at or below the {pct(HIT_RATE_AFTER_DROP)} it drops to"
    if scenario is Scenario.long_context_burst:
        return "no request is long-context (share 0%): there is nothing to burst"
    if scenario is Scenario.revert_to_bf16:
        return "weights and KV cache are BF16 already: nothing to revert"
    return "its overrides equal the brief's own values"


def _unchanged(base: CoreDesign, scenario: Scenario, reason: str) -> FailureMode:
    """A scenario that changes nothing: the baseline's figures (`plan` with no override gives them), marked not applicable."""
    slo, (verdict, goal) = base.slo, judged(base)
    return FailureMode(
        **_deadline_figures(goal),
        scenario=scenario,
        title=TITLES[scenario],
        change="nothing, for this brief",
        overrides={},
        load_vs_capacity=base.operating_point.load_vs_capacity,
        long_context_utilization=base.long_context_utilization,
        utilization=base.capacity.utilization,
        utilization_no_prefix_cache=base.capacity.utilization_no_prefix_cache,
        utilization_linear_no_prefix_cache=base.capacity.utilization_no_prefix_cache,
        ttft_p95_ms=slo.ttft_p95_ms,
        itl_p95_ms=slo.itl_p95_ms,
        tpot_p95_ms=slo.tpot_p95_ms,
        ttft_ok=slo.ttft_ok,
        itl_ok=slo.itl_ok,
        ok=bool(verdict.feasible and verdict.meets_slo),
        note=f"not applicable: {reason}",
        limit=base.operating_point.limit,
        applicable=False,
    )


def failure_modes(base: CoreDesign, stated: Brief | None = None) -> tuple[tuple[FailureMode, ...], FailureSummary]:
    """Every scenario re-planned through the core design, and which one binds (`stated`: as failure_mode takes it)."""
    modes = tuple(failure_mode(base, s, stated) for s in Scenario)
    return modes, _summary(base, modes)


def _summary(base: CoreDesign, modes: tuple[FailureMode, ...]) -> FailureSummary:
    brief = base.brief
    applicable = [m for m in modes if m.applicable]
    failing = [m for m in applicable if not m.ok]
    pool = failing or applicable or list(modes)
    binding = max(pool, key=pressure)
    if failing:
        reason = f"{binding.title} fails first among {len(failing)} failing scenario(s): {binding.note}"
    elif binding.objective_share is not None:  # an offline job or a rollout: the scenario nearest its deadline
        reason = f"every scenario fits; {binding.title} comes closest, taking {pct(binding.objective_share)} of the deadline"
    else:
        reason = f"every scenario fits; {binding.title} comes closest, at {pct(binding.load_vs_capacity)} of a replica's SLO capacity"
    one = next(m for m in modes if m.scenario is Scenario.one_node_lost)
    downtime_h = (1 - brief.slo.availability) * HOURS_PER_YEAR
    spare = base.pools.spare_nodes  # the spares the fleet runs (a fleet too small for the stated ones runs fewer)
    target = "the SLO" if brief.objective.kind is ObjectiveKind.latency else "the deadline"  # what judges the rows
    left = (
        f"the work taking {duration_text(one.objective_time_s, brief.objective.kind)} ({pct(one.objective_share or 0.0)} of the deadline)"
        if one.runs and one.objective_time_s is not None and math.isfinite(one.objective_time_s)  # what judges a job or a rollout
        else f"{pct(one.utilization)} busy ({pct(one.utilization_no_prefix_cache)} without prefix cache)"
        if one.runs and math.isfinite(one.utilization)
        else "no fleet that can serve"
        if not one.runs
        else "the fleet unable to carry the peak"
    )
    availability = (
        f"{pct(brief.slo.availability)} allows {num(downtime_h, 'h')} of downtime a year;"
        f" {'with ' + str(spare) + ' spare node(s)' if spare else 'with no spare node'}, losing one node leaves {left} and {target}"
        f" {'holds' if one.ok else 'breaks'}: {'N+1 holds, so rolling one node at a time for deploys is safe' if one.ok else f'no N+1: a node failure or a rolling deploy breaches {target}'}"
    )
    return FailureSummary(
        binding_scenario=binding.scenario,
        binding_reason=reason,
        n_plus_one_ok=one.ok,
        scenarios_within_slo=sum(m.ok for m in applicable),
        scenarios_applicable=len(applicable),
        availability_note=availability,
        load_scaling=(
            "Each scenario is the brief with its overrides applied, planned again by the same function: `plan --set` with a"
            " row's overrides gives that row's verdict. "
            + (
                "The row's load is stated against a general-pool replica's capacity under the SLO (the rate at which it"
                " stops meeting both targets)."
                if brief.objective.kind is ObjectiveKind.latency
                else "The row's time to finish is stated against the deadline, which judges it; its latency figures have no"
                " target and are for reference."
            )
            + " The utilization columns are the worked"
            " design's sizing arithmetic: with the decode batch following the load, utilization grows less than linearly;"
            " the linear column scales the no-cache figure as the worked design does, kept for comparison. A scenario that"
            " changes nothing for this brief is marked not applicable, with the reason, and is not counted."
        ),
    )


def pressure(mode: FailureMode) -> float:
    """How near a row is to failing, the binding scenario's key: an offline job's or a rollout's time over its deadline,
    else a general-pool replica's load over its SLO capacity (unbounded: nearest of all)."""
    value = mode.load_vs_capacity if mode.objective_share is None else mode.objective_share
    return value if math.isfinite(value) else 1e18


def hit_rate_overrides(brief: Brief, hit: float) -> dict[str, Any]:
    """The overrides that plan the brief at a stated hit rate: the rate, and with KV tiers (which derive it and would
    replace a stated one) the tiers off."""
    tiers_off = {"kv_tiers.cpu_gb_per_node": 0.0, "kv_tiers.nvme_gb_per_node": 0.0} if brief.kv_tiers.enabled else {}
    return {**tiers_off, "workload.prefix_hit_rate": hit}


class HitRateFloor(BaseModel):
    """Where the design stops meeting its SLO as the prefix hit rate falls, at the precision it is printed."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    meets_down_to: float  # the lowest rate on the 0.1% grid at which `plan --set` meets (the brief's own rate when it misses)
    misses_at: float  # one grid step below: `plan --set` misses there
    misses_already: bool  # the brief misses at its own rate


def hit_rate_floor(base: CoreDesign, stated: Brief | None = None) -> HitRateFloor | None:
    """The lowest hit rate on the printed 0.1% grid at which the design still meets its SLO, checked by re-planning
    at it and one step below (the verdicts `plan --set workload.prefix_hit_rate=...` gives at the printed values);
    None if even 0% meets. With KV tiers the rate is stated with the tiers off (hit_rate_overrides)."""
    brief = base.brief
    stated = brief if stated is None else stated
    rate = brief.workload.prefix_hit_rate
    if not brief.deployment.prefix_caching or rate <= 0:
        return None

    def grid(steps: int) -> float:
        return round(steps * PCT_STEP, 3)

    def fine(steps: int) -> tuple[bool, float]:
        try:
            core = verdict_core(resolve(stated.with_changes(hit_rate_overrides(stated, grid(steps)))))
        except BriefError:
            return False, math.inf
        verdict, goal = judged(core)  # an offline job or a rollout: its deadline's verdict, as `plan --set` gives it
        return verdict.feasible and verdict.meets_slo, verdict_margin(core, goal)

    own = judged(base)[0]
    meets = own.feasible and own.meets_slo
    high = math.floor(rate / PCT_STEP + 1e-9)  # grid steps: 0% misses, the brief's own rate (rounded down) meets
    question = question_key("hit_rate_floor", stated)
    again = confirmed(fine, LastAnswers.get(question), -1, high) if meets else None  # last time's floor, two re-plans
    if again is not None and again > 0:  # a step below it misses: so does 0%, and the brief's own rate meets
        return HitRateFloor(meets_down_to=grid(again), misses_at=grid(again - 1), misses_already=False)
    at_zero, margin_zero = fine(0)
    if at_zero:
        return None
    if not meets:  # the brief's own hit rate: the verdict in hand
        return HitRateFloor(meets_down_to=rate, misses_at=rate, misses_already=True)
    at_high, margin_high = fine(high)
    if not at_high:  # the brief's rate meets, the grid step below it (or 0%) misses: the bracket is found
        return HitRateFloor(meets_down_to=rate, misses_at=grid(high), misses_already=False)
    last = LastAnswers.get(question)
    high = first_meeting(fine, 0, high, margin_zero, margin_high, None if last is None else int(last))  # on the grid itself
    LastAnswers.keep(question, high)
    return HitRateFloor(meets_down_to=grid(high), misses_at=grid(high - 1), misses_already=False)


def read_check(core: CoreDesign | PoolsReadCore) -> tuple[bool, float]:
    """(the design is feasible and meets its SLO or deadline, as judged() judges it; its verdict_margin), of a core or
    of a disaggregated design's pools read for its verdict (core.verdict_read)."""
    if isinstance(core, PoolsReadCore):
        return core.meets, verdict_margin(core)
    verdict, goal = judged(core)
    return verdict.feasible and verdict.meets_slo, verdict_margin(core, goal)


def verdict_margin(core: CoreDesign | PoolsReadCore, goal: ObjectiveAnalysis | None = None) -> float:
    """How far a re-plan is from missing (<= 0: inside every limit): the log of the worst of its p95s against their
    targets (with `goal`, an objective's: its time against its deadline) and the busy shares feasibility caps at 1
    (the fleet's, the KV cache's, the long-context pool's); inf without a steady state. The hint a grid search
    (planner.grid_search) steers its re-plans by; the verdict decides."""
    shares = _busy_margins(core)
    if isinstance(core, PoolsReadCore):  # its pools' p95s, against the brief's targets as an SLO budget states them
        return max([_pools_margin(core.brief, core.disaggregation.ttft_p95_ms, judged_itl_ms(core)), *shares])
    slo = core.slo
    if goal is not None:
        timed = math.log(goal.time_s / goal.deadline_s) if 0 < goal.time_s < math.inf else math.inf
        return max([timed, *shares])
    return max([slo_margin_of(slo.ttft_p95_ms, slo.ttft_target_ms, slo.judged_itl_p95_ms, slo.itl_target_ms), *shares])


def _pools_margin(brief: Brief, ttft_p95_ms: float, judged_itl_p95_ms: float) -> float:
    """slo_margin_of a disaggregated design's pools' p95s against the brief's targets (as its SLO budget states them)."""
    return slo_margin_of(ttft_p95_ms, float(brief.slo.ttft_p95_ms), judged_itl_p95_ms, float(brief.slo.itl_p95_ms))


def _busy_margins(core: CoreDesign | PoolsReadCore) -> list[float]:
    """The logs of the busy shares feasibility caps at 1 (the fleet's, the KV cache's, the long-context pool's)."""
    cap = core.capacity
    return [math.log(share) for share in (cap.utilization, cap.kv_fraction, core.long_context_utilization) if share > 0]
