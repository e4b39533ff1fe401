"""plan(brief) -> Design: the one object that carries the whole answer.

Pages, the CLI and the design document all render a Design, so they can never disagree.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, cached_property, lru_cache

from pydantic import PrivateAttr, computed_field

from planner.architecture import DEADLINE_BASIS, Architecture, architecture
from planner.brief import Brief, ObjectiveKind
from planner.conclusion import conclusion
from planner.config import EngineConfig, Flag, engine_config, with_flags
from planner.core import CoreDesign, carry_peak_change, core_design, worded_replan
from planner.cost import CostAnalysis, SmallerFleet, cost_analysis
from planner.failures import (
    FailureMode,
    FailureSummary,
    LostNode,
    Scenario,
    failure_mode,
    failure_modes,
    hit_rate_floor,
    hit_rate_overrides,
    lost_first_problem,
    needs_n_plus_one,
    one_node_lost,
    row_core,
    scenario_holds,
)
from planner.fmt import pct, times
from planner.headroom import Headroom, headroom, pools_multiple
from planner.kv_tiers import KvTierAnalysis, engines_per_node, kv_tier_analysis
from planner.loader import load_brief
from planner.lora_serving import LoraServing, lora_serving
from planner.mechanism_diagram import with_mechanisms
from planner.mechanism_flags import mechanism_flags
from planner.mechanisms import ignored_fields, mechanism_verdict, resolve
from planner.multimodal import MultimodalAnalysis, multimodal_analysis, with_image_tokens
from planner.objective import ObjectiveAnalysis, objective_analysis
from planner.operating_point import context_tokens
from planner.resize import FleetFix, fewest_nodes_meeting, fleet_fix, fleet_overrides, headroom_fix
from planner.scaleout import ScaleOut, scale_out_analysis
from planner.speculative import speculative_summary
from planner.trusted import trusted
from planner.uncertainty import Uncertainty, uncertainty
from planner.variations import Baseline, VariationAnalysis, variation_analysis
from planner.verdict import Problem, Verdict

__all__ = ["Design", "plan"]


@dataclass(frozen=True)
class _Deferred:
    """The inputs of a Design's parts worked out on first read (Design.config, Design.failures)."""

    core: CoreDesign
    stated: Brief  # the brief as given: failure rows and the hit-rate floor apply their overrides to it
    # the mechanisms whose engine options (mechanism_flags, with their reasons) the configuration adds (None: off)
    tiers: KvTierAnalysis | None
    images: MultimodalAnalysis | None
    lora: LoraServing | None

    def config(self, failures: tuple[FailureMode, ...]) -> EngineConfig:
        core = self.core
        revert = next(m for m in failures if m.scenario is Scenario.revert_to_bf16)
        config = engine_config(
            core.brief,
            core.shape,
            core.slo,
            core.operating_point,
            (revert.utilization, revert.utilization_no_prefix_cache),
            hit_rate_floor(core, self.stated),
            core.disaggregation,
        )
        flags = mechanism_flags(core.brief, engines_per_node(core.shape), self.tiers, self.images, self.lora)
        return _with_mechanisms(config, core, flags)


class Design(CoreDesign):
    """The whole analytical design for one brief: the core design and everything derived from it."""

    model_name: str
    gpu_name: str
    architecture: Architecture
    cost: CostAnalysis
    uncertainty: Uncertainty
    fix: FleetFix | None = None  # a design that misses: the fewest nodes that meet the SLO, re-planned (None: it meets, or no fleet does)
    headroom_fix: FleetFix | None = None  # short of a stated slo.headroom: the fewest nodes that keep it, re-planned (resize.headroom_fix)
    headroom: Headroom  # x the peak traffic before a limit of the verdict is reached, and which one (planner.headroom)
    kv_tiers: KvTierAnalysis | None = None  # the KV tiers' capacity, derived hit rate and reload (None: no tier)
    multimodal: MultimodalAnalysis | None = None  # the images' tokens and encoder cost (None: text only)
    objective: ObjectiveAnalysis | None = None  # throughput or batch completion (None: judged on latency)
    lora_serving: LoraServing | None = None  # the adapter cache, routing, overhead and load (None: no adapters)
    ignored_fields: tuple[Problem, ...] = ()  # stated fields the design does not use, each with the reason (they judge nothing)
    _deferred: _Deferred = PrivateAttr()  # what the parts worked out on first read are worked out from

    # The failure table, the engine configuration, the variation's analysis and the scale-out analysis (with the
    # conclusion that quotes it) are worked out the first time they are read (a page, the JSON, the document), from the
    # same core design: a page that shows none of them does not pay for their re-plans. The verdict's N+1 row is planned
    # up front (availability is part of every verdict).

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def config(self) -> EngineConfig:
        """The engine command, a reason per flag, the recommendations, dependencies and what to measure first."""
        return self._deferred.config(self.failures)

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def failures(self) -> tuple[FailureMode, ...]:
        """Every failure scenario re-planned through the core design."""
        return self._failure_table[0]

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def failure_summary(self) -> FailureSummary:
        """Which scenario binds, N+1, and how the rows are worked out."""
        return self._failure_table[1]

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def variation(self) -> VariationAnalysis | None:
        """The brief's variation (A-G): its findings, options re-planned and difference to the capstone (None: none)."""
        if self.brief.variation is None:
            return None
        baseline = None if _BASELINE_BRIEF.variation is not None or self.brief == _BASELINE_BRIEF else _baseline()
        return variation_analysis(self._deferred.core, baseline, self)

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def load_batch_basis(self) -> str:
        """The core design's (CoreDesign.load_batch_basis), written once for both."""
        return self._deferred.core.load_batch_basis

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def mechanism_conclusion(self) -> str | None:
        """The core design's mechanism conclusion (CoreDesign.mechanism_conclusion), worked out once for both."""
        return self._deferred.core.mechanism_conclusion

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def scale_out(self) -> ScaleOut | None:
        """A replica beyond one TP group (PP, EP): what binds, what the design turns on, against the design without it
        re-planned (None: one TP group)."""
        return scale_out_analysis(self._deferred.core)

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def conclusion(self) -> str | None:
        """The one conclusion shown: what binds and which mechanism it turns on (planner.conclusion; None: none shapes it)."""
        scale_out = self.scale_out
        lead = scale_out.conclusion if scale_out is not None else None
        return conclusion(self._deferred.core, lead, self.kv_tiers, self.multimodal, self.lora_serving, self.objective)

    @cached_property
    def _failure_table(self) -> tuple[tuple[FailureMode, ...], FailureSummary]:
        return failure_modes(self._deferred.core, self._deferred.stated)


def _lost_cause(core: CoreDesign, one: FailureMode, stated: Brief) -> str:
    """Why the design misses with one node lost: its re-plan's first problem, without that re-plan's advice (which
    counts nodes from the fleet left after the loss, not the brief's)."""
    lost = row_core(core, one, stated, worded_replan)
    problems = lost.verdict.problems if lost is not None else ()
    cause = problems[0].problem if problems else (one.note or "the design misses the SLO")
    named = one.pool in ("prefill", "decode") and f"{one.pool} pool" not in cause
    return f"the {one.pool} pool binds: {cause}" if named else cause


def _lost_words(core: CoreDesign, stated: Brief, lost: LostNode | None) -> tuple[str, str]:
    """(why the design misses with one node lost, the pool its row loses the node from): the re-plan's first problem
    alone where that is the cause (failures.lost_first_problem: an aggregated design's row names no pool), else from
    the whole row (`lost`'s, or worked out)."""
    first = lost_first_problem(core, stated)
    if first is not None:
        return first, ""
    one = lost.row() if lost is not None else failure_mode(core, Scenario.one_node_lost, stated, worded_replan)
    return _lost_cause(core, one, stated), one.pool


def _lost_n_plus_one_advice(verdict: Verdict, fix: FleetFix | None) -> Verdict:
    """The lost-N+1 problem's advice is the fix's re-planned fleet (the fewest nodes, and a disaggregated design's
    split, that keep the SLO with one lost), where the fix changes the fleet."""
    if verdict.availability_ok or fix is None or fix.setting:
        return verdict
    problems = tuple(
        p.model_copy(update={"change": fix.text, "overrides": fix.overrides})
        if p.field == "deployment.spare_nodes" and p.problem.startswith("no N+1")
        else p
        for p in verdict.problems
    )
    return verdict.model_copy(update={"problems": problems})


def _with_availability(verdict: Verdict, core: CoreDesign, stated: Brief, lost: LostNode | None, held: bool = False) -> Verdict:
    """Availability: a target of 99% or more needs N+1, the SLO held with one node lost (`lost`, that scenario's row of
    the failure table as the verdict reads it, when the plan worked it out; `held`, the re-planned headroom found it
    held at more traffic (Headroom.n_plus_one_held); else a verdict-only check), and the whole row only for the words
    of a lost N+1 (its figures and words are not worked out for a row nobody reads)."""
    brief = core.brief
    if not needs_n_plus_one(brief) or held:
        return verdict
    if lost.ok if lost is not None else scenario_holds(stated, Scenario.one_node_lost):
        return verdict
    if not (verdict.feasible and verdict.meets_slo):  # the design's own problems come first; losing a node adds none
        return verdict.model_copy(update={"availability_ok": False})
    cause, pool = _lost_words(core, stated, lost)
    problem = Problem(
        field="deployment.spare_nodes",
        problem=f"no N+1: with one node lost, {cause}; a {pct(brief.slo.availability)} availability target cannot hold through a failure or a rolling deploy",
        change=(
            "add a spare node, or move a node from the decode pool to the prefill pool (disaggregation.prefill_nodes):"
            " a node added to the general pool goes to the decode pool"
            if pool == "prefill"
            else "add nodes (a spare, or more in the general pool)"
        ),
    )
    return verdict.model_copy(update={"availability_ok": False, "problems": (*verdict.problems, problem)})


def _with_stated_headroom(
    verdict: Verdict, core: CoreDesign, stated: Brief, goal: ObjectiveAnalysis | None
) -> tuple[Verdict, FleetFix | None]:
    """A stated slo.headroom: the pools' SLO capacity must reach (1 + headroom) x the peak, as max-rate sizes its
    replicas with it. A design short of it is told so, with the fleet that keeps it (resize.headroom_fix); the SLO at
    the peak and N+1 are judged as before (meets_slo, availability_ok), so the cost levers still search those.
    Returns the verdict and that fleet."""
    wanted = core.brief.slo.headroom
    if wanted is None or goal is not None or not (verdict.feasible and verdict.meets_slo):
        return verdict, None
    multiple = pools_multiple(core)
    if multiple >= 1 + wanted:
        return verdict, None
    fix = headroom_fix(stated)
    problem = Problem(
        field="slo.headroom",
        problem=(
            f"with every node up, the pools reach their SLO capacity at {times(multiple)} the peak, short of the"
            f" {pct(wanted)} headroom stated"
        ),
        change=fix.text if fix is not None else "no fleet up to the largest keeps it: change the replica or the targets",
        overrides=fix.overrides
        if fix is not None
        else {},  # the fleet, as `plan --set` takes it (the design meets: no setting fix reads it)
    )
    return verdict.model_copy(update={"headroom_ok": False, "problems": (*verdict.problems, problem)}), fix


BASELINE_PRESET = "capstone"  # the design every variation is compared with
_BASELINE_BRIEF = load_brief(BASELINE_PRESET)  # read once, at import: plan() itself reads no files


@cache
def _baseline() -> Baseline:
    """The capstone as plan() designs it, as far as a variation reads it: its core design and its cost (its failure
    table, engine command, SLO trade-off curves and the rest of a plan are not planned for a comparison nobody reads
    them in)."""
    core = core_design(resolve(_BASELINE_BRIEF), curves=False)
    return Baseline(core=core, cost=_cost(core, _BASELINE_BRIEF, None, core.verdict.feasible, None))  # its levers: never read


def _cost(
    core: CoreDesign,
    stated: Brief,
    fix: FleetFix | None,
    carries_peak: bool,
    lost: LostNode | None,
    goal: ObjectiveAnalysis | None = None,
) -> CostAnalysis:
    """The cost analysis of a core design planned from `stated`; `carries_peak` from the verdict the user sees (a batch
    job's deadline's), with the nodes that fix it when it misses; `lost`, the one-node-lost row's verdict (spot nodes
    stay within the nodes the failure table absorbs; None: re-planned when the levers are read)."""
    dem = core.demand
    fleet = _LeverFleet(core, stated, lost)
    full_pace = (goal.output_tokens_per_s, max(1 - goal.time_s / goal.deadline_s, 0.0)) if goal is not None else None
    fix_nodes, fix_fleet = (fix.nodes, fix.fleet) if fix is not None else (None, "")
    return cost_analysis(core.brief, dem.output_tokens_per_s, dem.input_tokens_per_s, fleet, carries_peak, fix_nodes, full_pace, fix_fleet)


@dataclass(frozen=True)
class _LeverFleet:
    """The cost levers' re-plans, asked for when the levers are first read: the smaller fleet and the lost nodes absorbed."""

    core: CoreDesign
    stated: Brief
    lost: LostNode | None  # the one-node-lost row's verdict (None: not planned yet)

    def __call__(self) -> tuple[SmallerFleet, int | None]:
        lost = self.lost if self.lost is not None else one_node_lost(self.core, self.stated)
        return _smaller_fleet(self.stated), _absorbed_nodes(self.core, self.stated, lost)


def _absorbed_nodes(core: CoreDesign, stated: Brief, lost: LostNode) -> int:
    """Lost nodes the design absorbs, as the failure table judges them: 0, 1 or 2 (its rows stop at two)."""
    if not lost.ok:
        return 0
    return 2 if failure_mode(core, Scenario.two_nodes_lost, stated).ok else 1


def _with_mechanisms(config: EngineConfig, core: CoreDesign, more: list[Flag]) -> EngineConfig:
    """The engine command with the KV-transfer and speculative-decoding options the design turns on, then `more`
    (the KV tiers', images' and adapters' options); a disaggregated design's prefill pool runs them too."""
    extra = []
    if core.disaggregation is not None:
        dis = core.disaggregation
        extra.append(
            Flag(
                flag="--kv-transfer-config",
                value=dis.kv_transfer_flag,
                why=f"moves each prompt's KV from the prefill pool to the decode pool over NIXL (RDMA): {dis.arithmetic['transfer']}",
            )
        )
    if core.speculative is not None:
        spec = core.speculative
        extra.append(Flag(flag="--speculative-config", value=spec.config_json, why=speculative_summary(spec)))
    extra += more
    if not extra:
        return config
    prefill = None
    if core.disaggregation is not None:
        dis, brief = core.disaggregation, core.brief
        budget = brief.disaggregation.prefill_max_num_batched_tokens or brief.deployment.max_num_batched_tokens
        prefill = {"--tensor-parallel-size": str(dis.prefill_tp), "--max-num-batched-tokens": str(budget)}
    return with_flags(config, extra, prefill)


def _smaller_fleet(stated: Brief) -> SmallerFleet:
    """The cost lever's smaller fleet, re-planned as `plan --set` would: cold prefix cache first, then the brief's hit rate."""
    nodes = stated.hardware.nodes
    cache = stated.deployment.prefix_caching and (stated.kv_tiers.enabled or stated.workload.prefix_hit_rate > 0)
    cold = hit_rate_overrides(stated, 0.0) if cache else {}  # with KV tiers, the tiers off: they would derive the rate again
    stated_headroom = stated.slo.headroom if stated.objective.kind is ObjectiveKind.latency else None
    keep = stated_headroom is not None  # the fleet keeps the stated slo.headroom too, as the verdict judges it
    cold_nodes = fewest_nodes_meeting(stated, cold, limit=nodes, headroom=keep) if cold else None
    warm = cold_nodes if cold_nodes is not None else fewest_nodes_meeting(stated, limit=nodes, headroom=keep)
    split = {}  # a disaggregated design: the prefill/decode split that meets on those nodes (searched, not kept)
    if warm is not None:
        changes = cold if cold_nodes is not None else None
        split = {k: v for k, v in fleet_overrides(stated, warm, changes, headroom=keep).items() if k != "hardware.nodes"}
    return SmallerFleet(
        cold_cache_nodes=cold_nodes, nodes=warm, cold=cold, n_plus_one=needs_n_plus_one(stated), split=split, headroom=stated_headroom
    )  # resize.meets keeps N+1


def plan(brief: Brief) -> Design:
    """The whole design for a brief; raises InfeasibleDesign when it cannot be computed at all."""
    return _plan_cached(brief)


@lru_cache(maxsize=256)
def _plan_cached(stated: Brief) -> Design:
    brief = resolve(stated)  # image tokens in the prompt, the hit rate the KV tiers give (unchanged when both are off)
    core = core_design(brief)
    shape, pools, cap = core.shape, core.pools, core.capacity
    long_util = core.long_context_utilization
    goal = objective_analysis(brief, shape, core.memory)
    arch = architecture(
        brief,
        general_nodes=pools.general_nodes,
        long_context_nodes=pools.long_context_nodes,
        spare_nodes=pools.spare_nodes,
        replicas_per_node=shape.replicas_per_node,
        tp=shape.tp,
        weights_gb_per_gpu=shape.weights_gb_per_gpu,
        general_utilization=core.operating_point.load_vs_capacity if goal is None else goal.time_s / goal.deadline_s,
        long_context_utilization=long_util,
        unchunked_prefill_p95_ms=cap.unchunked_prefill_p95_ms,
        fleet_utilization=cap.utilization,
        fleet_utilization_no_prefix_cache=cap.utilization_no_prefix_cache,
        shape=shape,
        disaggregation=core.disaggregation,
        general_basis="SLO capacity" if goal is None else DEADLINE_BASIS,  # a job: the share of its deadline the work takes
    )
    # the stated brief: its text names the hit rate it replaces (no tiers: no analysis, and no image tokens added for it)
    tiers = kv_tier_analysis(with_image_tokens(stated), shape) if stated.kv_tiers.enabled else None
    images = multimodal_analysis(brief, shape, core.operating_point.rate_per_replica_per_s, cap.utilization)
    merge = "merge the most used adapters into their own replicas"
    nodes_change = carry_peak_change(brief, merge) if cap.utilization > 1 and brief.lora.adapters else ""  # the fleet re-plans find
    lora = lora_serving(brief, shape, cap.utilization, cap.batch_per_replica, context_tokens(brief)[0], nodes_change)
    n_plus_one = needs_n_plus_one(brief)
    reads_lost = n_plus_one and (goal is not None or tiers is None)  # the headroom's N+1 limit reads the lost design
    lost = one_node_lost(core, stated) if reads_lost else None  # the table's row as the verdict reads it
    head = headroom(  # KV tiers: the hit rate follows the load, so the traffic is re-planned
        core, stated if tiers is not None else None, goal, lost.core if lost is not None else None, n_plus_one
    )
    verdict = mechanism_verdict(core.verdict, core, images, lora, goal)  # an offline job or a rollout: judged on its deadline
    verdict = _with_availability(verdict, core, stated, lost, head.n_plus_one_held)  # the N+1 row is judged as the verdict is
    meets = verdict.feasible and verdict.meets_slo and verdict.availability_ok
    fix = None if meets else fleet_fix(stated, verdict.problems)  # a lost N+1 too: the nodes that keep it
    verdict = _lost_n_plus_one_advice(verdict, fix)
    verdict, kept_by = _with_stated_headroom(verdict, core, stated, goal)  # after the fix: a fleet of its own, named in the problem
    cost = _cost(core, stated, fix, verdict.feasible, lost, goal)
    op, slo = core.operating_point, core.slo
    predictions = {
        "operating_point.capacity_rate_per_s": op.capacity_rate_per_s,
        "operating_point.replicas_at_capacity": op.rate_per_replica_per_s * op.general_replicas / op.capacity_rate_per_s
        if op.capacity_rate_per_s > 0
        else float("inf"),
        "slo.point.decode_step_ms": slo.point.decode_step_ms,
        "slo.ttft_p50_ms": slo.ttft_p50_ms,
        "slo.ttft_p95_ms": slo.ttft_p95_ms,
        "slo.itl_p50_ms": slo.itl_p50_ms,
        "slo.itl_p95_ms": slo.itl_p95_ms,
        "slo.tpot_p50_ms": slo.tpot_p50_ms,
    }
    arch = with_mechanisms(arch, brief, tiers, images, lora, goal)
    core_fields = {name: getattr(core, name) for name in CoreDesign.model_fields} | {"verdict": verdict}
    design = trusted(
        Design,
        **core_fields,
        model_name=shape.model.name,
        gpu_name=shape.gpu.name,
        architecture=arch,
        cost=cost,
        uncertainty=uncertainty(brief, predictions, shape.gpu.key),
        headroom=head,
        fix=fix,
        headroom_fix=kept_by,
        kv_tiers=tiers,
        multimodal=images,
        objective=goal,
        lora_serving=lora,
        ignored_fields=ignored_fields(stated, brief),
    )
    design._deferred = _Deferred(core=core, stated=stated, tiers=tiers, images=images, lora=lora)
    return design
