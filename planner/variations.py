"""Step 8 of the method: the follow-up questions (variations A-G of the capstone), each worked from its brief,
and the side-by-side difference of any two designs.

Each analysis re-plans changed briefs through the core design (steps 1-3 and the SLO budget), never the
full plan, so there is no recursion. Figures carry their arithmetic.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from planner.brief import Brief, VariationKey
from planner.catalog import GPUS, MODELS
from planner.core import SIZING_UTILIZATION, CoreDesign, core_design, fewest_nodes, utilization_no_prefix_cache
from planner.cost import HOURS_PER_YEAR, SECONDS_PER_YEAR, CostAnalysis, per_million
from planner.errors import BriefError
from planner.figures import resolve
from planner.fmt import num, pct, usd
from planner.lengths import share_above
from planner.lora import lora_memory
from planner.lora_serving import lora_step_ms
from planner.operating_point import context_tokens, max_num_seqs_for
from planner.pools import general_prompt_cap_tokens, max_model_len_for
from planner.quantization import weight_scheme
from planner.resize import fewest_nodes_meeting, fleet_overrides, goal_words
from planner.slo import LatencyPoint, latency_point

if TYPE_CHECKING:
    from planner.capacity import Capacity, Demand, Memory
    from planner.design import Design
    from planner.operating_point import OperatingPoint
    from planner.replica import ReplicaShape
    from planner.resize import FleetFix
    from planner.slo import SloBudget
    from planner.verdict import Problem

__all__ = [
    "REGION_SHARES",
    "Baseline",
    "FigureDiff",
    "Finding",
    "Option",
    "OptionPool",
    "RegionFleet",
    "SpikeHeadroom",
    "VariationAnalysis",
    "diff_designs",
    "variation_analysis",
]

TARGET_UTILIZATION = SIZING_UTILIZATION
REGION_SHARES = {"Americas": 0.5, "Europe": 0.3, "Asia-Pacific": 0.2}  # assumed split of the users
CROSS_REGION_RTT_MS = 150.0  # assumed round trip when a region's users fail over to another region
NODE_COLD_START_S = 120.0  # assumed: provision, load 70 GB of weights, capture CUDA graphs, warm the cache
SMALL_MODEL = "llama-3.1-8b"


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Finding(_Model):
    label: str
    value: float
    unit: str
    arithmetic: str


class OptionPool(_Model):
    """One pool of an option that runs as several re-plans (variation A's overflow: the big model's pool at its
    remaining share, the small model's pool sized for the overflow), each as `plan --set` with its `overrides` gives it."""

    name: str
    nodes: int
    utilization: float
    utilization_no_prefix_cache: float
    ttft_p95_ms: float
    itl_p95_ms: float
    ok: bool
    usd_per_year: float
    output_tokens_per_year: float
    usd_per_million_output_tokens: float
    overrides: dict[str, Any]
    why_not: str = ""


class Option(_Model):
    name: str
    change: str
    utilization: float
    utilization_no_prefix_cache: float
    ttft_p95_ms: float
    itl_p95_ms: float
    ok: bool  # feasible and meets the SLO, as `plan --set` with `overrides` judges it (every pool's re-plan, with pools)
    arithmetic: str
    overrides: dict[str, Any] = {}  # the brief's changes the option re-plans, as `plan --set` takes them ({}: as briefed)
    why_not: str = ""  # an option that fails: why, its verdict's first problem or what stops it running ("" when ok)
    nodes: int = 0  # the nodes it runs on, across its pools (0: it cannot run)
    usd_per_million_output_tokens: float = math.inf  # across its pools: their cost per year / their output tokens per year
    pools: tuple[OptionPool, ...] = ()  # an option that runs as several re-plans: each (the first is `overrides`' re-plan)


class FigureDiff(_Model):
    figure: str  # its path in the plan's JSON (planner.figures names it)
    baseline: float
    value: float
    change_pct: float  # (value / baseline - 1) x 100; inf when the baseline is 0


class RegionFleet(_Model):
    """One region of a global deployment (variation D): its share of the users and the nodes it is sized for."""

    region: str
    share: float  # of the users, 0-1
    own_nodes: int  # its own traffic at the sizing utilization without prefix cache
    failover_share: float  # its share plus the largest neighbour's, 0-1
    failover_nodes: int  # that traffic at <= 100% (degraded)
    nodes: int  # max of the two: what the region holds


class SpikeHeadroom(_Model):
    """What a spiky peak (variation E) asks of the fleet: hold nodes for the spike, or the average and a ladder."""

    peak_to_average: float
    nodes_for_spike: int
    nodes_for_average: int
    spike_utilization_on_average_fleet: float  # without prefix cache, 0-1 (over 1: the ladder sheds the rest)
    usd_per_million_output_tokens_for_spike: float
    node_cold_start_s: float


class VariationAnalysis(_Model):
    key: VariationKey
    title: str
    question: str
    findings: tuple[Finding, ...]
    options: tuple[Option, ...]
    conclusion: str
    diff: tuple[FigureDiff, ...]
    regions: tuple[RegionFleet, ...] = ()  # variation D: the per-region fleets the main pages show
    spike: SpikeHeadroom | None = None  # variation E: the spike headroom the main pages show


# --- the difference of two designs -----------------------------------------------------------------


@dataclass(frozen=True)
class Baseline:
    """The design a variation is compared with: its core design and its cost, every figure the analyses and the
    difference read (planner.design builds it without the rest of a plan: the failure table, engine command, ...)."""

    core: CoreDesign
    cost: CostAnalysis

    @property
    def brief(self) -> Brief:
        return self.core.brief

    @property
    def shape(self) -> ReplicaShape:
        return self.core.shape

    @property
    def demand(self) -> Demand:
        return self.core.demand

    @property
    def memory(self) -> Memory:
        return self.core.memory

    @property
    def capacity(self) -> Capacity:
        return self.core.capacity

    @property
    def operating_point(self) -> OperatingPoint:
        return self.core.operating_point

    @property
    def slo(self) -> SloBudget:
        return self.core.slo


DIFF_FIGURES = (  # paths in the plan's JSON, each with an entry in the figure registry (planner.figures)
    "brief.hardware.nodes",
    "cost.gpus",
    "demand.request_rate_per_s",
    "demand.generating_sequences",
    "demand.output_tokens_per_s",
    "memory.weights_gb_per_gpu",
    "memory.kv_gb_per_gpu",
    "memory.kv_bytes_per_token_per_gpu",
    "memory.max_sequences_per_replica",
    "capacity.decode_step_ms",
    "capacity.decode_tokens_per_s",
    "capacity.prefill_tokens_per_s",
    "capacity.prefill_fraction",
    "capacity.decode_fraction",
    "capacity.utilization",
    "capacity.utilization_no_prefix_cache",
    "operating_point.tpot_ms",
    "operating_point.capacity_rate_per_s",
    "slo.ttft_p50_ms",
    "slo.ttft_p95_ms",
    "slo.itl_p50_ms",
    "slo.itl_p95_ms",
    "slo.ttft_target_ms",
    "slo.itl_target_ms",
    "cost.usd_per_hour",
    "cost.usd_per_year",
    "cost.output_tokens_per_year",
    "cost.usd_per_million_output_tokens",
)


def _figure(design: Design | Baseline, path: str) -> float:
    return float(resolve(design, path))


def _change_pct(baseline: float, value: float) -> float:
    if baseline == value:
        return 0.0
    if baseline == 0 or not math.isfinite(baseline):
        return math.inf
    return (value / baseline - 1) * 100


def diff_designs(baseline: Design | Baseline, other: Design | Baseline) -> tuple[FigureDiff, ...]:
    """Every figure of DIFF_FIGURES that differs between two designs, with the relative change in percent."""
    diffs = []
    for path in DIFF_FIGURES:
        a, b = _figure(baseline, path), _figure(other, path)
        same = a == b or (math.isfinite(a) and math.isfinite(b) and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12))
        if not same:
            diffs.append(FigureDiff(figure=path, baseline=a, value=b, change_pct=_change_pct(a, b)))
    return tuple(diffs)


# --- helpers ----------------------------------------------------------------------------------------


def _option(
    name: str, change: str, core: CoreDesign | None, arithmetic: str, failure: str = "", overrides: dict[str, Any] | None = None
) -> Option:
    """An option as its re-plan gives it (`core`, None when it cannot run: `failure` says why); `overrides`, the brief's
    changes that re-plan it. Its figures and verdict are its one pool's (_pool): feasible and meeting the SLO, else its
    first problem says why."""
    pool = _pool(name, core, dict(overrides or {}), failure)
    worked = (
        f"{arithmetic}; cannot run: {failure}"
        if core is None
        else f"{arithmetic}; utilization {pct(pool.utilization)} ({pct(pool.utilization_no_prefix_cache)} without prefix cache),"
        f" p95 TTFT {num(pool.ttft_p95_ms, 'ms')}, p95 ITL {num(pool.itl_p95_ms, 'ms')}"
    )
    return Option(
        name=name,
        change=change,
        utilization=pool.utilization,
        utilization_no_prefix_cache=pool.utilization_no_prefix_cache,
        ttft_p95_ms=pool.ttft_p95_ms,
        itl_p95_ms=pool.itl_p95_ms,
        ok=pool.ok,
        overrides=pool.overrides,
        nodes=pool.nodes,
        usd_per_million_output_tokens=pool.usd_per_million_output_tokens,
        why_not=pool.why_not,
        arithmetic=worked,
    )


def _node_usd_per_year(brief: Brief) -> float:
    """Dollars a year of one of the brief's nodes at its GPU price, as planner.cost counts them."""
    return brief.hardware.gpus_per_node * brief.cost.usd_per_gpu_hour * HOURS_PER_YEAR


def _yearly(core: CoreDesign) -> tuple[float, float]:
    """(dollars, output tokens) a year of a re-plan's fleet at its brief's average duty, as planner.cost counts them."""
    brief = core.brief
    return (
        brief.hardware.nodes * _node_usd_per_year(brief),
        core.demand.output_tokens_per_s * brief.cost.average_duty * SECONDS_PER_YEAR,
    )


def _pool(name: str, core: CoreDesign | None, overrides: dict[str, Any], failure: str) -> OptionPool:
    """One pool of a several-pool option as its re-plan gives it (`core` None: it cannot run, `failure` says why)."""
    if core is None:
        inf = math.inf
        return OptionPool(
            name=name,
            nodes=0,
            utilization=inf,
            utilization_no_prefix_cache=inf,
            ttft_p95_ms=inf,
            itl_p95_ms=inf,
            ok=False,
            usd_per_year=inf,
            output_tokens_per_year=0.0,
            usd_per_million_output_tokens=inf,
            overrides=overrides,
            why_not=f"cannot run: {failure}",
        )
    verdict = core.verdict
    ok = verdict.feasible and verdict.meets_slo
    usd_year, tokens_year = _yearly(core)
    return OptionPool(
        name=name,
        nodes=core.brief.hardware.nodes,
        utilization=core.capacity.utilization,
        utilization_no_prefix_cache=core.capacity.utilization_no_prefix_cache,
        ttft_p95_ms=core.slo.ttft_p95_ms,
        itl_p95_ms=core.slo.itl_p95_ms,
        ok=ok,
        usd_per_year=usd_year,
        output_tokens_per_year=tokens_year,
        usd_per_million_output_tokens=per_million(usd_year, tokens_year),
        overrides=overrides,
        why_not="" if ok else (_why(verdict.problems[0]) if verdict.problems else "misses the SLO"),
    )


def _pooled_option(name: str, change: str, pools: list[OptionPool], arithmetic: str) -> Option:
    """An option that runs as several re-plans: the first pool's figures and overrides stand for it (its `overrides`),
    its verdict is every pool's, its nodes and cost per M output tokens are across them."""
    first = pools[0]
    ok = all(p.ok for p in pools)
    failing = next((p for p in pools if not p.ok), None)
    usd_year = sum(p.usd_per_year for p in pools)
    tokens_year = sum(p.output_tokens_per_year for p in pools)
    each = "; ".join(
        f"{p.name}: {p.nodes} nodes, utilization {pct(p.utilization)} ({pct(p.utilization_no_prefix_cache)} without prefix cache),"
        f" p95 TTFT {num(p.ttft_p95_ms, 'ms')}, p95 ITL {num(p.itl_p95_ms, 'ms')}, {usd(p.usd_per_year)} a year"
        for p in pools
    )
    return Option(
        name=name,
        change=change,
        utilization=first.utilization,
        utilization_no_prefix_cache=first.utilization_no_prefix_cache,
        ttft_p95_ms=first.ttft_p95_ms,
        itl_p95_ms=first.itl_p95_ms,
        ok=ok,
        overrides=first.overrides,
        why_not="" if failing is None else f"{failing.name}: {failing.why_not}",
        nodes=sum(p.nodes for p in pools),
        usd_per_million_output_tokens=per_million(usd_year, tokens_year),
        pools=tuple(pools),
        arithmetic=(
            f"{arithmetic}; {each}; across them {sum(p.nodes for p in pools)} nodes,"
            f" {usd(usd_year)} / {num(tokens_year / 1e6)} M output tokens a year = {usd(per_million(usd_year, tokens_year))} per M"
        ),
    )


def _why(problem: Problem) -> str:
    """Why an option fails: its verdict's first problem, what misses (not the field its fix would change: an option's
    verdict is re-planned without the advice searches, so that field is not the one `plan --set` with its overrides
    names; the plan of those overrides gives the fix)."""
    return problem.problem


def _try(brief: Brief, changes: dict[str, Any]) -> tuple[CoreDesign | None, str]:
    """An option's re-plan: its figures and verdict, without the SLO-capacity search (an option reads no capacity)."""
    try:
        return core_design(brief.with_changes(changes), curves=False, capacity=False), ""
    except BriefError as exc:  # InfeasibleDesign included
        return None, str(exc)


def _seqs_for(core: CoreDesign) -> int:
    """max-num-seqs that holds the load's batch with headroom (what the engine config would recommend)."""
    batch = core.slo.point.load_batch
    current = core.brief.deployment.max_num_seqs
    return max(current, max_num_seqs_for(batch)) if math.isfinite(batch) else current


def _nodes_needed(brief: Brief, target: float = TARGET_UTILIZATION) -> int:
    """Fewest nodes whose peak utilization without prefix cache is at or under `target` (planner.core.fewest_nodes)."""
    return fewest_nodes(brief, target)


def _f(label: str, value: float, unit: str, arithmetic: str) -> Finding:
    return Finding(label=label, value=value, unit=unit, arithmetic=arithmetic)


# --- A: half the budget -----------------------------------------------------------------------------


def _variation_a(core: CoreDesign, baseline: Baseline | None) -> tuple[list[Finding], list[Option], str]:
    brief, cap = core.brief, core.capacity
    gpus = brief.hardware.nodes * brief.hardware.gpus_per_node
    findings = [
        _f("utilization (at the hit rate)", cap.utilization, "fraction", cap.arithmetic.get("utilization", "")),
        _f(
            "utilization without prefix cache (batch follows the load)",
            cap.utilization_no_prefix_cache,
            "fraction",
            cap.arithmetic.get("utilization_no_prefix_cache", ""),
        ),
    ]
    if baseline is not None:
        base_nodes = baseline.brief.hardware.nodes
        linear = baseline.capacity.utilization_no_prefix_cache * base_nodes / brief.hardware.nodes
        findings.append(
            _f(
                "seed's linear scaling (no prefix cache)",
                linear,
                "fraction",
                f"{pct(baseline.capacity.utilization_no_prefix_cache)} x {base_nodes} / {brief.hardware.nodes} nodes = {pct(linear)}"
                f" (ours {pct(cap.utilization_no_prefix_cache)}: a batch of {num(cap.batch_per_replica)} per node reads the weights once for more tokens)",
            )
        )
    seqs = _seqs_for(core)
    engine: dict[str, Any] = {"deployment.max_num_seqs": seqs}
    read, _ = context_tokens(brief)
    short_kv = min(read, 2000)
    options = [
        _option(
            "accept degradation",
            _as_briefed_change(core),
            core,
            f"{gpus} GPUs as briefed, max-num-seqs {brief.deployment.max_num_seqs}",
        )
    ]
    weights = brief.deployment.weights
    if weights.value != "int4":
        int4_changes = {**engine, "deployment.weights": "int4"}
        int4, why = _try(brief, int4_changes)
        weight_gb = core.memory.weights_gb_per_gpu
        int4_gb = int4.memory.weights_gb_per_gpu if int4 is not None else math.nan
        options.append(
            _option(
                "INT4 weights",
                f"weights {weights.value} -> int4 (W4A16): {num(weight_gb, 'GB')} -> {num(int4_gb, 'GB')} of weights read per GPU each decode"
                " step; prefill math stays BF16",
                int4,
                f"{gpus} GPUs, max-num-seqs {seqs}",
                why,
                int4_changes,
            )
        )
    short_len = 4096
    short_changes, short_words = _shorter_context_changes(brief, short_len, short_kv)
    short_changes = {**engine, **short_changes}
    short, why = _try(brief, short_changes)
    long_pool = (
        f"; the long-context pool at {pct(short.long_context_utilization)} busy"
        if short is not None and "workload.long_context_share" in short_changes and short.pools.long_context_nodes
        else ""
    )
    options.append(
        _option(
            "shorter max context",
            f"max-model-len {num(short_len)}: KV context {num(read)} -> {num(short_kv)} tokens (no sequence holds more than"
            f" {num(short_len)}); {short_words}",
            short,
            f"fewer KV bytes per decode step at max-num-seqs {seqs}{long_pool}",
            why,
            short_changes,
        )
    )
    premium = 0.3
    tier_changes: dict[str, Any] = {**engine, **_traffic_share(brief, premium)}
    tier, why = _try(brief, tier_changes)
    options.append(
        _option(
            "tiered SLO",
            f"priority scheduling: the paying {pct(premium)} keep the SLO and are served first; the free tier gets best effort"
            " (the re-plan is the premium tier alone: its cost per M counts only their tokens)",
            tier,
            f"the premium tier alone on {gpus} GPUs (priority lets it see only its own queue)",
            why,
            tier_changes,
        )
    )
    over = max(0.0, 1 - TARGET_UTILIZATION / cap.utilization_no_prefix_cache) if cap.utilization_no_prefix_cache > 0 else 0.0
    kept_changes: dict[str, Any] = {**engine, **_traffic_share(brief, 1 - over)}
    kept, why = _try(brief, kept_changes)
    small_changes = _overflow_pool_changes(brief, max(over, 0.001))
    small, small_why = _try(brief, small_changes)
    big_name, small_name = MODELS[brief.model.name].name if brief.model.name in MODELS else brief.model.name, MODELS[SMALL_MODEL].name
    pools = [
        _pool(f"{big_name} pool", kept, kept_changes, why),
        _pool(f"{small_name} pool", small, small_changes, small_why),
    ]
    total = sum(p.nodes for p in pools)
    across = per_million(sum(p.usd_per_year for p in pools), sum(p.output_tokens_per_year for p in pools))
    beyond = (
        f", {(total - brief.hardware.nodes) * brief.hardware.gpus_per_node} over the {gpus}-GPU budget"
        if total > brief.hardware.nodes
        else ""
    )
    options.append(
        _pooled_option(
            "overflow to a smaller model",
            f"route {pct(over)} of requests (what keeps the {big_name} fleet at {pct(TARGET_UTILIZATION)} without cache) to a"
            f" {small_name} pool sized for them at the same SLO: {pools[1].nodes} nodes beside the {pools[0].nodes} of {big_name},"
            f" {total} in all ({total * brief.hardware.gpus_per_node} GPUs{beyond}) at {usd(across)} per M output tokens across"
            f" both. {_why_small_model(brief.model.name)}",
            pools,
            f"overflow share = 1 - {pct(TARGET_UTILIZATION)} / {pct(cap.utilization_no_prefix_cache)} = {pct(over)}",
        )
    )
    fits = [  # an option that needs more GPUs than the budget says how many
        o.name + (f" ({o.nodes * brief.hardware.gpus_per_node} GPUs, over the {gpus})" if o.nodes > brief.hardware.nodes else "")
        for o in options
        if o.ok
    ]
    current = brief.deployment.max_num_seqs
    engine_note = (
        f" Each option runs with max-num-seqs {seqs}: the brief's {current} cannot hold the {num(core.slo.point.load_batch)} sequences a node runs."
        if seqs != current
        else ""
    )
    as_briefed = options[0]
    others = [name for name in fits if name != as_briefed.name]
    if as_briefed.ok:  # half the budget still carries the peak: what runs out is headroom, if anything
        cold = cap.utilization_no_prefix_cache
        headroom = (
            f" but headroom: a cold prefix cache puts it above the {pct(TARGET_UTILIZATION)} sizing target"
            if cold > TARGET_UTILIZATION
            else ""
        )
        verdict = (
            f" The SLO holds as briefed (p95 TTFT {num(as_briefed.ttft_p95_ms, 'ms')}, p95 ITL {num(as_briefed.itl_p95_ms, 'ms')}):"
            f" nothing runs out at this load{headroom}."
            + (f" The other options add headroom; those that meet the SLO: {', '.join(others)}." if others else "")
        )
    else:
        verdict = (
            f" Options that meet the SLO: {', '.join(fits)}."
            if fits
            else " No single option meets the SLO; combine them or accept degradation."
        )
    conclusion = (
        f"At {gpus} GPUs the peak runs at {pct(cap.utilization)} ({pct(cap.utilization_no_prefix_cache)} without prefix cache)."
        + engine_note
        + verdict
    )
    return findings, options, conclusion


def _why_small_model(model: str) -> str:
    """Why SMALL_MODEL takes the overflow of `model`: what a request moving between them keeps, and its size."""
    small = MODELS[SMALL_MODEL].name
    family = (
        "it shares the Llama 3 tokenizer and chat template, so a request moves unchanged"
        if model.startswith("llama-3")
        else "the router re-tokenizes a request it moves (another tokenizer)"
    )
    return f"Why {small}: {family}, and its weights fit one GPU, so each GPU is a replica"


def _traffic_share(brief: Brief, share: float) -> dict[str, Any]:
    """The brief's traffic scaled to `share` of its requests, as a brief change (its users, or its request rate)."""
    w = brief.workload
    if w.users is not None:
        return {"workload.users": max(1, round(w.users * share))}
    return {"workload.request_rate": (w.request_rate or 0) * share}


def _overflow_pool_changes(brief: Brief, share: float) -> dict[str, Any]:
    """The small model's pool for `share` of the brief's requests, as brief changes: SMALL_MODEL at TP=1 (its weights fit
    one GPU), the brief's SLO, prompts and engine, no long-context pool of its own (its max-model-len takes the long
    prompts among its requests, up to the model's context), and the fewest nodes that meet the SLO with a spare node."""
    changes: dict[str, Any] = {
        "model.name": SMALL_MODEL,
        "deployment.tp": 1,
        "deployment.long_context_nodes": 0,
        "deployment.spare_nodes": 1,
        **_traffic_share(brief, share),
    }
    try:
        probe = brief.with_changes(changes)
    except BriefError:
        return changes
    longest = general_prompt_cap_tokens(probe, 0) + probe.workload.output_tokens_p95
    wanted = max_model_len_for(longest, MODELS[SMALL_MODEL].max_context_tokens)
    if wanted > probe.deployment.max_model_len:
        changes["deployment.max_model_len"] = wanted
    nodes = fewest_nodes_meeting(brief, changes)
    # none up to the limit meets: the re-plan on the brief's own fleet (at least one node and the spare) says why
    changes["hardware.nodes"] = nodes if nodes is not None else max(brief.hardware.nodes, 2)
    return changes


def _shorter_context_changes(brief: Brief, max_model_len: int, kv_context: float) -> tuple[dict[str, Any], str]:
    """A shorter max-model-len as brief changes, and what happens to the prompts it no longer takes. The users send the
    same prompts (the brief's lengths stay); the general pool accepts those that fit with a p95 reply, and the brief's
    share above that is routed to the long-context pool when there is one, else refused (the re-plan serves the rest)."""
    w = brief.workload
    fits = math.floor(max_model_len - w.output_tokens_p95)  # the longest prompt that fits with a p95 reply
    changes: dict[str, Any] = {"deployment.max_model_len": max_model_len, "workload.kv_context_tokens": kv_context}
    routed_now = w.long_context_share > 0 and w.long_context_threshold_tokens <= fits  # already none over `fits` in the pool
    # the lengths' tail there, and at least the brief's share over its own (higher) threshold: the share over a lower
    # threshold is never smaller
    above = max(
        share_above(w.input_tokens_mean, w.input_tokens_p95, fits), w.long_context_share if w.long_context_threshold_tokens >= fits else 0.0
    )
    if routed_now or above <= 0:
        return changes, f"prompts longer than {num(fits, 'tokens')} already go elsewhere"
    if brief.deployment.long_context_nodes > 0:
        changes["workload.long_context_threshold_tokens"] = fits
        changes["workload.long_context_share"] = round(above, 4)  # as `plan --set` reads it back
        return changes, (
            f"prompts over {num(fits, 'tokens')} ({pct(above)} of requests by the brief's prompt lengths; was over"
            f" {num(w.long_context_threshold_tokens)}, {pct(w.long_context_share)}) go to the long-context pool"
        )
    changes |= _traffic_share(brief, 1 - above)
    changes["workload.long_context_share"] = 0.0
    return changes, (
        f"prompts over {num(fits, 'tokens')} ({pct(above)} of requests by the brief's prompt lengths) are refused: no"
        " long-context pool takes them, so the re-plan serves the rest"
    )


def _as_briefed_change(core: CoreDesign) -> str:
    """'Change nothing', and what that gives at this fleet: the SLO held, held only while the prefix cache is warm, or
    the peak queueing and the degradation ladder shedding the rest."""
    cap, slo = core.capacity, core.slo
    if not (core.verdict.feasible and slo.ttft_ok and slo.itl_ok):
        return "change nothing: the peak queues, p95s stretch, and the degradation ladder sheds the rest"
    held = f"change nothing: the peak takes {pct(cap.utilization)} of the fleet and the SLO holds"
    if cap.utilization_no_prefix_cache > 1:
        return f"{held} while the prefix cache is warm; a cold cache ({pct(cap.utilization_no_prefix_cache)}) queues the peak and the degradation ladder sheds the rest"
    # the sizing arithmetic only: whether the SLO holds with a cold cache is the failure table's hit-rate row (a re-plan)
    return (
        f"{held}; a cold prefix cache would take {pct(cap.utilization_no_prefix_cache)} of its GPU time by the sizing arithmetic"
        " (whether the SLO then holds is the failure table's hit-rate row)"
    )


# --- B: 200 ms TTFT ---------------------------------------------------------------------------------


def _longest_prompt_tokens(p: LatencyPoint, target_ms: float, prefill_rate: float) -> tuple[float, float, float]:
    """(queue p95, one step, uncached tokens) a prompt may have and still meet the target at the p95 queue."""
    step = p.decode_step_ms + p.scheduler_ms
    if not math.isfinite(p.prefill_stage_ms):  # max-num-batched-tokens leaves no room for a chunk: nothing prefills
        return math.inf, step, 0.0
    queue_p95 = p.queue_wait_p95_ms
    return queue_p95, step, max(target_ms - p.fixed_ms - queue_p95 - step, 0.0) / 1e3 * prefill_rate


def _variation_b(core: CoreDesign) -> tuple[list[Finding], list[Option], str]:
    brief, slo = core.brief, core.slo
    lat, p = brief.latency, slo.point
    target = brief.slo.ttft_p95_ms
    prefill_rate = core.capacity.prefill_tokens_per_s_per_replica
    network_gateway = lat.network_ms + lat.gateway_ms
    fixed = p.fixed_ms
    queue_p95, step, max_tokens = _longest_prompt_tokens(p, target, prefill_rate)
    cold = latency_point(brief, core.shape, p.rate_per_replica_per_s, p.load_batch, hit_rate=0.0)
    cold_queue_p95, _, cold_tokens = _longest_prompt_tokens(cold, target, prefill_rate)
    cap = brief.slo.ttft_input_cap_tokens
    cold_ms = cap / prefill_rate * 1e3
    findings = [
        _f(
            "network + gateway",
            network_gateway,
            "ms",
            f"{num(lat.network_ms, 'ms')} RTT + {num(lat.gateway_ms, 'ms')} gateway = {num(network_gateway, 'ms')} of {num(target, 'ms')}",
        ),
        _f(
            "irreducible path",
            fixed,
            "ms",
            f"{num(network_gateway, 'ms')} + {num(lat.tokenization_ms, 'ms')} tokenization + {num(lat.first_sample_ms, 'ms')} first sample"
            f" + {num(lat.first_write_ms, 'ms')} first write = {num(fixed, 'ms')}",
        ),
        _f(
            "cold prefill of a prompt at the cap",
            cold_ms,
            "ms",
            f"{num(cap, 'tokens')} / {num(prefill_rate, 'tok/s')} = {num(cold_ms, 'ms')}: no cache hit",
        ),
        _f(
            "longest uncached prompt that meets the target",
            max_tokens,
            "tokens",
            f"({num(target, 'ms')} - {num(fixed, 'ms')} fixed - {num(queue_p95, 'ms')} queue p95 - one step {num(step, 'ms')})"
            f" x {num(prefill_rate, 'tok/s')} = {num(max_tokens, 'tokens')}",
        ),
        _f(
            "longest uncached prompt that meets the target with a cold cache (every prompt misses)",
            cold_tokens,
            "tokens",
            f"queue p95 {num(cold_queue_p95, 'ms')} when every prompt misses: {num(cold_tokens, 'tokens')}",
        ),
        _f("p95 TTFT", slo.ttft_p95_ms, "ms", slo.arithmetic.get("ttft_p95_ms", "")),
    ]
    options = []
    for hit in (0.85, 0.9, 0.95):
        if hit > brief.workload.prefix_hit_rate:
            hit_changes = {"workload.prefix_hit_rate": hit}
            opt, why = _try(brief, hit_changes)
            options.append(
                _option(
                    f"prefix hit rate {pct(hit)}",
                    f"prefix hit rate {pct(brief.workload.prefix_hit_rate)} -> {pct(hit)}",
                    opt,
                    "fewer uncached tokens per prompt",
                    why,
                    hit_changes,
                )
            )
    near_changes = {"latency.network_ms": brief.latency.network_ms / 2}
    near, why = _try(brief, near_changes)
    options.append(
        _option(
            "edge gateway nearer the users",
            f"network RTT {num(lat.network_ms, 'ms')} -> {num(lat.network_ms / 2, 'ms')}",
            near,
            "halves the round trip",
            why,
            near_changes,
        )
    )
    hit = brief.effective_hit_rate
    cap_uncached = cap * (1 - hit)
    conclusion = (
        f"{num(fixed, 'ms')} of the {num(target, 'ms')} is fixed before any GPU work. With the queue at p95 {num(queue_p95, 'ms')}, "
        + (
            f"a prompt meets the target when at most {num(max_tokens, 'tokens')} of it miss the cache (the cap prompt's"
            f" {num(cap_uncached, 'uncached tokens')} at {pct(hit)} hits are {'within' if cap_uncached <= max_tokens else 'over'} that);"
            if max_tokens > 0
            else (
                f"no prompt meets it: the queue alone outlasts the {num(target - fixed, 'ms')} left;"
                if math.isfinite(queue_p95)
                else "no prompt meets it: max-num-batched-tokens leaves no room for a prefill chunk beside the running batch;"
            )
        )
        + f" with a cold cache (queue p95 {num(cold_queue_p95, 'ms')}) up to {num(cold_tokens, 'tokens')}, so a cold {num(cap, 'token')} prompt"
        f" ({num(cold_ms, 'ms')} of prefill alone) {'qualifies' if cold_tokens >= cap else 'does not'}."
        " A draft model or a smaller model for the first token are the remaining levers."
    )
    return findings, options, conclusion


# --- C: LoRA adapters -------------------------------------------------------------------------------


def _variation_c(core: CoreDesign) -> tuple[list[Finding], list[Option], str]:
    brief, shape, cap = core.brief, core.shape, core.capacity
    lora, m = brief.lora, shape.model
    # rank x in + out widths of the adapted projections x layers, BF16; a GPU holds its TP share of its stage's layers
    mem = lora_memory(lora, m, shape.tp, shape.attention_groups, pp=shape.pp)
    per_layer, modules, params = mem.widths_per_layer, mem.modules, mem.params_per_adapter
    adapter_gb, total_gb, per_gpu = mem.gb_per_adapter, mem.gb_per_replica, mem.gb_per_gpu
    kv_left = shape.kv_gb_per_gpu - per_gpu
    seqs_before = core.memory.max_sequences_per_replica
    seqs_after = seqs_before * kv_left / shape.kv_gb_per_gpu if shape.kv_gb_per_gpu > 0 else 0.0
    util_after = cap.utilization  # the step model carries the batched-LoRA kernels (planner.lora_serving)
    stages = f" / PP {shape.pp} stages (each holds its own layers')" if shape.pp > 1 else ""
    copies = f" x {shape.attention_groups} attention groups (each DP rank its own copy)" if shape.attention_groups > 1 else ""
    kernels_ms, step_ms = lora_step_ms(shape, cap.batch_per_replica, context_tokens(brief)[0])
    share = kernels_ms / step_ms if step_ms > 0 else 0.0
    findings = [
        _f(
            "parameters per adapter",
            params,
            "params",
            f"rank {lora.rank} x ({modules}: {num(per_layer)} in + out widths per layer) x {m.layers} layers = {num(params)}",
        ),
        _f("memory per adapter", adapter_gb * 1e3, "MB", f"{num(params)} x 2 B (BF16) = {num(adapter_gb * 1e3, 'MB')}"),
        _f(
            "memory for all adapters",
            total_gb,
            "GB",
            f"{lora.adapters} x {num(adapter_gb * 1e3, 'MB')}{copies} = {num(total_gb, 'GB')} per replica",
        ),
        _f(
            "adapter memory per GPU",
            per_gpu,
            "GB",
            f"{num(total_gb / shape.attention_groups, 'GB')} / TP {shape.tp}{stages} = {num(per_gpu, 'GB')} of {num(shape.kv_gb_per_gpu, 'GB')} KV",
        ),
        _f(
            "sequences per replica",
            seqs_after,
            "sequences",
            f"{num(seqs_before)} x {num(kv_left, 'GB')} / {num(shape.kv_gb_per_gpu, 'GB')} = {num(seqs_after)}",
        ),
        _f(
            "utilization with multi-LoRA kernels",
            util_after,
            "fraction",
            f"the batched-LoRA kernels take {num(kernels_ms, 'ms')} of the {num(step_ms, 'ms')} decode step at the capacity batch"
            f" ({pct(share)}, 5-15% measured): the capacity's utilization carries them, {pct(util_after)}",
        ),
    ]
    conclusion = (
        f"One base model serves all {lora.adapters} variants: {num(total_gb, 'GB')} of adapters ({num(per_gpu, 'GB')} per GPU) all stay resident,"
        f" so no swapping; the batched-LoRA kernels add {pct(share)} to each decode step and utilization is ~{pct(util_after)}. Route adapter-aware (a conversation's adapter and prefix on one replica);"
        f" engine: --enable-lora --max-loras {min(lora.adapters, 128)} --max-lora-rank {lora.rank}."
    )
    return findings, [], conclusion


# --- D: global users --------------------------------------------------------------------------------


def _scaled(brief: Brief, share: float) -> Brief:
    w = brief.workload
    if w.users is not None:
        return brief.with_changes({"workload.users": max(1, round(w.users * share))})
    return brief.with_changes({"workload.request_rate": (w.request_rate or 0) * share})


def region_fleets(brief: Brief) -> tuple[RegionFleet, ...]:
    """Each region sized for its own users and for a degraded failover of its largest neighbour."""
    fleets = []
    for region, share in REGION_SHARES.items():
        own = _nodes_needed(_scaled(brief, share))
        neighbour = max(s for r, s in REGION_SHARES.items() if r != region) if len(REGION_SHARES) > 1 else 0.0
        failover = _nodes_needed(_scaled(brief, share + neighbour), target=1.0)
        fleets.append(
            RegionFleet(
                region=region,
                share=share,
                own_nodes=own,
                failover_share=share + neighbour,
                failover_nodes=failover,
                nodes=max(own, failover),
            )
        )
    return tuple(fleets)


def _variation_d(core: CoreDesign, fleets: tuple[RegionFleet, ...]) -> tuple[list[Finding], list[Option], str]:
    brief = core.brief
    findings = []
    largest = max(REGION_SHARES.values())
    for fleet in fleets:
        findings.append(
            _f(
                f"{fleet.region} nodes",
                fleet.nodes,
                "nodes",
                f"{pct(fleet.share)} of users: {fleet.own_nodes} nodes at <= {pct(TARGET_UTILIZATION)} without cache; taking a failed neighbour's"
                f" {pct(fleet.failover_share - fleet.share)} too needs {fleet.failover_nodes} at <= 100% (degraded); sized for max = {fleet.nodes}",
            )
        )
    total = sum(f.nodes for f in fleets)
    single = brief.hardware.nodes
    findings.append(_f("total nodes", total, "nodes", f"sum over regions = {total} vs {single} in one region ({num(total / single)}x)"))
    rtt = CROSS_REGION_RTT_MS - brief.latency.network_ms
    findings.append(
        _f(
            "TTFT added during a regional failover",
            rtt,
            "ms",
            f"{num(CROSS_REGION_RTT_MS, 'ms')} assumed cross-region RTT - {num(brief.latency.network_ms, 'ms')} regional = +{num(rtt, 'ms')}",
        )
    )
    conclusion = (
        f"Latency drives the split: each region serves its own users at a regional RTT; sized for its traffic plus a degraded failover of the"
        f" largest neighbour ({pct(largest)} of users), the fleet needs {total} nodes instead of {single}. Sessions and their prefix caches stay"
        " regional; a failover starts cold and pays the cross-region RTT."
    )
    return findings, [], conclusion


# --- E: 10x spiky peak ------------------------------------------------------------------------------


def spike_headroom(brief: Brief, output_tokens_per_s: float) -> SpikeHeadroom:
    """Nodes for the spike against nodes for the average, and what each costs."""
    peak_nodes = _nodes_needed(brief)
    average_nodes = _nodes_needed(_scaled(brief, brief.cost.average_duty))
    per_node_year = _node_usd_per_year(brief)
    out_year = output_tokens_per_s * brief.cost.average_duty * SECONDS_PER_YEAR
    return SpikeHeadroom(
        peak_to_average=1 / brief.cost.average_duty,
        nodes_for_spike=peak_nodes,
        nodes_for_average=average_nodes,
        spike_utilization_on_average_fleet=utilization_no_prefix_cache(brief, average_nodes),
        usd_per_million_output_tokens_for_spike=per_million(peak_nodes * per_node_year, out_year),
        node_cold_start_s=NODE_COLD_START_S,
    )


def _variation_e(core: CoreDesign, baseline: Baseline | None, spike: SpikeHeadroom) -> tuple[list[Finding], list[Option], str]:
    brief = core.brief
    ratio, peak_nodes, average_nodes = spike.peak_to_average, spike.nodes_for_spike, spike.nodes_for_average
    per_node_year = _node_usd_per_year(brief)
    out_year = core.demand.output_tokens_per_s * brief.cost.average_duty * SECONDS_PER_YEAR
    peak_cost = spike.usd_per_million_output_tokens_for_spike
    overload = spike.spike_utilization_on_average_fleet
    findings = [
        _f("peak / average", ratio, "x", f"1 / {num(brief.cost.average_duty)} average duty = {num(ratio)}x"),
        _f(
            "nodes to carry the spike",
            peak_nodes,
            "nodes",
            f"fewest nodes at <= {pct(TARGET_UTILIZATION)} without cache at the peak = {peak_nodes}",
        ),
        _f("nodes for the average", average_nodes, "nodes", f"the same at {pct(brief.cost.average_duty)} of the peak = {average_nodes}"),
        _f(
            "spike load on the average fleet",
            overload,
            "fraction",
            f"the peak on {average_nodes} nodes runs at {pct(overload)} without cache: the ladder must shed the rest",
        ),
        _f(
            "$ per M output tokens sized for the spike",
            peak_cost,
            "$",
            f"{peak_nodes} nodes x ${num(per_node_year)}/yr / {num(out_year / 1e6)} M tokens at {num(brief.cost.average_duty)} average = ${num(peak_cost)}",
        ),
        _f(
            "node cold start", NODE_COLD_START_S, "s", "assumed: provision, load the weights, capture CUDA graphs; a spike rises in seconds"
        ),
    ]
    if baseline is not None:
        findings.append(
            _f(
                "vs the capstone's $ per M",
                baseline.cost.usd_per_million_output_tokens,
                "$",
                f"at {num(baseline.brief.cost.average_duty)} average duty: ${num(baseline.cost.usd_per_million_output_tokens)}",
            )
        )
    replanned = fewest_nodes_meeting(brief)  # the peak re-planned: the fewest nodes that meet it, with N+1 where asked
    held = (
        f"{peak_nodes} nodes by the {pct(TARGET_UTILIZATION)} no-cache rule for a {num(ratio)}x peak ({usd(peak_cost)} per M output tokens"
    )
    if replanned is not None and replanned < peak_nodes:
        fewest_cost = peak_cost * replanned / peak_nodes  # the same tokens on fewer nodes
        findings.append(
            _f(
                "nodes that meet the SLO at the peak (re-planned)",
                replanned,
                "nodes",
                f"the fewest nodes at which plan --set hardware.nodes=N meets {goal_words(brief)} at the peak = {replanned};"
                f" ${num(peak_cost)} x {replanned} / {peak_nodes} = ${num(fewest_cost)} per M output tokens",
            )
        )
        held += f"; re-planned, {replanned} meet {goal_words(brief)}: {usd(fewest_cost)})"
    else:
        held += ")"
    conclusion = (
        f"Autoscaling cannot follow a spike that rises faster than a {num(NODE_COLD_START_S, 's')} cold start. Either hold {held},"
        f" or hold ~{average_nodes} and a degradation ladder: priority for paying traffic, shorter max output, queue the free tier,"
        " overflow to an external provider."
    )
    return findings, [], conclusion


# --- F: 405B ----------------------------------------------------------------------------------------


def _replanned_fleet(core: CoreDesign, fix: FleetFix | None, meets: bool) -> tuple[str, Finding | None]:
    """What the design needs, re-planned (planner.resize, the verdict's fix): the nodes, with the long-context ones, that
    `plan --set` gives as meeting the SLO; or that the brief's own fleet meets; or that no fleet size does."""
    brief = core.brief
    nodes = brief.hardware.nodes
    if meets:
        return f"As briefed, its {nodes} nodes meet the SLO.", None
    if fix is None:
        return "No fleet size meets the SLO (re-planned): the replica or the targets must change.", None
    lc = brief.deployment.long_context_nodes
    pool = f" ({fix.long_context_nodes} long-context)" if fix.long_context_nodes != lc else ""
    text = f"Re-planned, {fix.nodes} nodes{pool} meet {goal_words(brief)}: {num(fix.nodes / nodes)}x the GPUs"
    return text, _f("nodes that meet the SLO (re-planned)", fix.nodes, "nodes", fix.text)


def _variation_f(
    core: CoreDesign, baseline: Baseline | None, fix: FleetFix | None = None, meets: bool = False
) -> tuple[list[Finding], list[Option], str]:
    brief, shape, mem, cap = core.brief, core.shape, core.memory, core.capacity
    findings = [
        _f("weights per GPU", mem.weights_gb_per_gpu, "GB", mem.arithmetic["weights_gb_per_gpu"]),
        _f("KV per GPU", mem.kv_gb_per_gpu, "GB", mem.arithmetic["kv_gb_per_gpu"]),
        _f("sequences per replica", mem.max_sequences_per_replica, "sequences", mem.arithmetic["max_sequences_per_replica"]),
        _f("utilization on the same fleet", cap.utilization, "fraction", cap.arithmetic.get("utilization", "")),
    ]
    if baseline is not None:
        weights_ratio = mem.weights_gb_per_gpu / baseline.memory.weights_gb_per_gpu
        findings.append(
            _f(
                "decode slower per token (weight bytes)",
                weights_ratio,
                "x",
                f"{num(mem.weights_gb_per_gpu, 'GB')} / {num(baseline.memory.weights_gb_per_gpu, 'GB')} read per step = {num(weights_ratio)}x",
            )
        )
        batch = baseline.capacity.batch_per_replica
        read, _ = context_tokens(brief)
        step_s, baseline_step_s = shape.decode_step_real_s(batch, read), baseline.shape.decode_step_real_s(batch, read)
        findings.append(
            _f(
                f"decode step at batch {num(batch)}",
                step_s / baseline_step_s,
                "x",
                f"{num(step_s * 1e3, 'ms')} vs {num(baseline_step_s * 1e3, 'ms')} = {num(step_s / baseline_step_s)}x (KV reads dilute the weight ratio)",
            )
        )
        linear = cap.utilization_no_prefix_cache / baseline.capacity.utilization_no_prefix_cache
        findings.append(
            _f(
                "GPUs for the capstone's headroom (linear)",
                linear,
                "x",
                f"{pct(cap.utilization_no_prefix_cache)} / {pct(baseline.capacity.utilization_no_prefix_cache)} without cache = {num(linear)}x the GPUs",
            )
        )
    nodes = _nodes_needed(brief)
    multiplier = nodes / brief.hardware.nodes
    relation = f"; the worked design's ~4x is the linear ratio of utilizations ({num(linear)}x here)" if baseline is not None else ""
    lc = brief.deployment.long_context_nodes
    kept = f", the long-context pool kept at {lc} node{'s' if lc != 1 else ''}" if lc > 0 else ""
    findings.append(
        _f(
            "GPU multiplier by the sizing rule (no prefix cache)",
            multiplier,
            "x",
            f"fewest nodes at <= {pct(TARGET_UTILIZATION)} without cache{kept} = {nodes} / {brief.hardware.nodes} = {num(multiplier)}x{relation}",
        )
    )
    replanned, needed = _replanned_fleet(core, fix, meets)
    if needed is not None:
        findings.append(needed)
    linear_note = f"; the worked design's ~4x is {num(linear)}x here" if baseline is not None else ""
    short_pool = fix is not None and fix.long_context_nodes != lc  # the long-context pool, kept, fails at any fleet size
    sizing_rule = f"the {pct(TARGET_UTILIZATION)} no-cache rule's {nodes} ({num(multiplier)}x{linear_note})" + (
        f" miss with {lc} long-context node{'s' if lc != 1 else ''}." if short_pool else " are cold-cache headroom."
    )
    conclusion = (
        f"{shape.model.name} fits at TP={shape.tp} ({num(mem.weights_gb_per_gpu, 'GB')} weights, {num(mem.kv_gb_per_gpu, 'GB')} KV per GPU)"
        f" but runs at {pct(cap.utilization)}. {replanned}{'; ' + sizing_rule if needed is not None else ' ' + sizing_rule.capitalize()}"
        " Or a smaller model."
    )
    return findings, [], conclusion


# --- G: A100 ----------------------------------------------------------------------------------------


def _short(name: str) -> str:
    """A GPU's short name, its words up to the model number: "NVIDIA A100 SXM 80GB" -> "A100", "AMD Instinct MI300X
    192GB" -> "Instinct MI300X", "NVIDIA RTX PRO 6000 Blackwell ..." -> "RTX PRO 6000"."""
    words = name.removeprefix("NVIDIA ").removeprefix("AMD ").removeprefix("Intel ").split()
    last = next((i for i, word in enumerate(words) if any(c.isdigit() for c in word)), 0)
    return " ".join(words[: last + 1])


def _precisions(brief: Brief) -> str:
    return f"{brief.deployment.weights.value.upper()} weights, {brief.deployment.kv_cache.value.upper()} KV"


_GPU_CHOICES = ("hardware.gpu", "deployment.weights", "deployment.kv_cache", "efficiency.compute_peak", "cost.usd_per_gpu_hour")


def _on_gpu_of(brief: Brief, other: Brief) -> dict[str, Any]:
    """The `plan --set` changes that put the brief on the other brief's GPU: its GPU, precisions, compute peak and price
    (the preset's variation G on the capstone's: H100, FP8 weights and KV, the BF16 peak, $2.50), the rest kept."""
    changes: dict[str, Any] = {}
    for path in _GPU_CHOICES:
        value = resolve(other, path)
        if value != resolve(brief, path):
            changes[path] = getattr(value, "value", value)
    return changes


def _gpu_replanned(brief: Brief, out_year: float) -> tuple[int | None, float]:
    """The fewest nodes of the brief's GPU at which `plan --set hardware.nodes=N` meets its SLO (with N+1 where asked),
    and their $ per M output tokens (inf when no fleet up to MAX_NODES meets)."""
    nodes = fewest_nodes_meeting(brief)
    if nodes is None:
        return None, math.inf
    year = nodes * _node_usd_per_year(brief)
    return nodes, per_million(year, out_year)


def _replanned_findings(
    brief: Brief, gpu: str, nodes: int | None, cost: float, out_year: float, on: dict[str, Any] | None = None
) -> list[Finding]:
    """A GPU's re-planned fleet and its $ per M as findings, with the `plan --set` that gives it; `brief` is the variation's
    own or, with `on`, the changes that put it on another GPU (the capstone's), which the command lists first."""
    if nodes is None:
        return []
    gpu_sets = "".join(f" --set {path}={value}" for path, value in (on or {}).items())
    sets = gpu_sets + "".join(f" --set {path}={value}" for path, value in fleet_overrides(brief, nodes).items())
    this = f"this brief on the {gpu}" if on else "plan --set hardware.nodes=N"
    return [
        _f(
            f"{gpu} nodes that meet {goal_words(brief)} (re-planned)",
            nodes,
            f"{gpu} nodes",  # "6 A100 nodes": the count names its GPU
            f"the fewest nodes at which {this} meets {goal_words(brief)}, at the"
            f" {pct(brief.workload.prefix_hit_rate)} prefix hit rate briefed = {nodes}: plan{sets} meets it",
        ),
        _f(
            f"{gpu} $ per M (re-planned)",
            cost,
            "$",
            f"{nodes} nodes x {brief.hardware.gpus_per_node} x ${num(brief.cost.usd_per_gpu_hour)} x 8760 h / {num(out_year / 1e6)} M"
            f" = ${num(cost)}",
        ),
    ]


def _cost_answer(gpu: str, nodes: int | None, cost: float, base_gpu: str, base_nodes: int | None, base_cost: float, goal: str) -> str:
    """The $ per M question answered by the re-plans: each GPU's fewest nodes that meet, their $ per M, which is cheaper."""
    if nodes is None:
        return f"Re-planned, no fleet of {gpu}s up to the node limit meets {goal}: there is no $ per M to compare."
    text = f"Re-planned, {nodes} {gpu} nodes meet {goal} at {usd(cost)} per M output tokens"
    if base_nodes is None:
        return text + (f"; no {base_gpu} fleet up to the node limit does." if base_gpu else ".")
    ratio = cost / base_cost
    cheaper = f"{pct(1 - ratio)} cheaper" if ratio < 1 else f"{pct(ratio - 1)} dearer" if ratio > 1 else "the same"
    return f"{text}, vs {base_nodes} {base_gpu} nodes at {usd(base_cost)}: {gpu} {cheaper} per M."


def _variation_g(core: CoreDesign, baseline: Baseline | None) -> tuple[list[Finding], list[Option], str]:
    brief, shape, cap = core.brief, core.shape, core.capacity
    gpu = _short(shape.gpu.name)
    fleet = f"{brief.hardware.nodes} nodes of {brief.hardware.gpus_per_node}"
    findings = [_f("bandwidth", shape.gpu.hbm_tb_per_s, "TB/s", f"{gpu}: {num(shape.gpu.hbm_tb_per_s, 'TB/s')}")]
    rule = f"by the {pct(TARGET_UTILIZATION)} no-cache rule"
    nodes = _nodes_needed(brief)
    per_node_year = _node_usd_per_year(brief)
    out_year = core.demand.output_tokens_per_s * brief.cost.average_duty * SECONDS_PER_YEAR
    sized_cost = per_million(nodes * per_node_year, out_year)
    replanned, replanned_cost = _gpu_replanned(brief, out_year)
    base_gpu, base_replanned, base_replanned_cost, base_findings = "", None, math.inf, []
    if baseline is not None:
        base_gpu, base_hw = _short(baseline.shape.gpu.name), baseline.brief.hardware
        bw = baseline.shape.gpu.hbm_tb_per_s / shape.gpu.hbm_tb_per_s
        findings.append(
            _f(
                "decode slower (bandwidth)",
                bw,
                "x",
                f"{base_gpu} {num(baseline.shape.gpu.hbm_tb_per_s, 'TB/s')} / {gpu} {num(shape.gpu.hbm_tb_per_s, 'TB/s')} = {num(bw)}x",
            )
        )
        step = cap.decode_step_ms / baseline.capacity.decode_step_ms
        findings.append(
            _f(
                "decode step at the load, this design vs the capstone",
                step,
                "x",
                f"{num(cap.decode_step_ms, 'ms')} / {num(baseline.capacity.decode_step_ms, 'ms')} = {num(step)}x"
                f" (bandwidth, and {brief.deployment.kv_cache.value} KV at {num(core.memory.kv_bytes_per_token_per_gpu / 1024, 'KiB')} per token per GPU)",
            )
        )
        linear = cap.utilization_no_prefix_cache / baseline.capacity.utilization_no_prefix_cache * brief.hardware.nodes / base_hw.nodes
        findings.append(
            _f(
                "nodes for the capstone's headroom (linear)",
                linear,
                "x",
                f"{pct(cap.utilization_no_prefix_cache)} on {brief.hardware.nodes} {gpu} nodes / {pct(baseline.capacity.utilization_no_prefix_cache)}"
                f" on {base_hw.nodes} {base_gpu} nodes, without cache, x {brief.hardware.nodes} / {base_hw.nodes} nodes"
                f" = {num(linear)}x (prefill is slower too: {num(shape.peak_tflops_per_gpu, 'TFLOP/s')} a GPU)",
            )
        )
        on_base_gpu = _on_gpu_of(brief, baseline.brief)  # this brief's traffic and targets on the capstone's GPU
        on_base = brief.with_changes(on_base_gpu)
        base_nodes = _nodes_needed(on_base)
        base_bf16_brief = on_base.with_changes({"deployment.kv_cache": "bf16"})
        base_bf16_nodes = _nodes_needed(base_bf16_brief)
        findings.append(
            _f(
                f"nodes vs {base_gpu} ({_precisions(baseline.brief)})",
                nodes / base_nodes,
                "x",
                f"{nodes} {gpu} nodes ({_precisions(brief)}) vs {base_nodes} {base_gpu} nodes at <= {pct(TARGET_UTILIZATION)} without cache"
                f" = {num(nodes / base_nodes)}x",
            )
        )
        findings.append(
            _f(
                f"nodes vs {base_gpu} with BF16 KV",
                nodes / base_bf16_nodes,
                "x",
                f"{nodes} {gpu} nodes vs {base_bf16_nodes} {base_gpu} nodes ({_precisions(base_bf16_brief)}) = {num(nodes / base_bf16_nodes)}x:"
                " the GPU alone, both on BF16 KV",
            )
        )
        base_price, per_node = on_base.cost.usd_per_gpu_hour, on_base.hardware.gpus_per_node
        base_cost = per_million(base_nodes * _node_usd_per_year(on_base), out_year)
        findings.append(
            _f(
                f"{base_gpu} $ per M {rule}",
                base_cost,
                "$",
                f"{base_nodes} nodes x {per_node} x ${num(base_price)} x 8760 h / {num(out_year / 1e6)} M = ${num(base_cost)}",
            )
        )
        base_replanned, base_replanned_cost = _gpu_replanned(on_base, out_year)
        base_findings = _replanned_findings(on_base, base_gpu, base_replanned, base_replanned_cost, out_year, on_base_gpu)
    findings += [
        _f(f"utilization on {fleet} {gpu} ({_precisions(brief)})", cap.utilization, "fraction", cap.arithmetic.get("utilization", "")),
        _f(f"{gpu} nodes {rule}", nodes, "nodes", f"fewest nodes at <= {pct(TARGET_UTILIZATION)} without cache = {nodes}"),
        _f(
            f"{gpu} $ per M {rule}",
            sized_cost,
            "$",
            f"{nodes} nodes x {brief.hardware.gpus_per_node} x ${num(brief.cost.usd_per_gpu_hour)} (stated {gpu} price) x 8760 h"
            f" / {num(out_year / 1e6)} M = ${num(sized_cost)}",
        ),
    ]
    findings += _replanned_findings(brief, gpu, replanned, replanned_cost, out_year) + base_findings
    if replanned is not None and base_replanned is not None:
        ratio = replanned_cost / base_replanned_cost
        findings.append(
            _f(
                f"{gpu} $ per M vs {base_gpu} (re-planned)",
                ratio,
                "x",
                f"${num(replanned_cost)} on {replanned} {gpu} nodes / ${num(base_replanned_cost)} on {base_replanned} {base_gpu} nodes"
                f" = {num(ratio)}x",
            )
        )
    scheme = weight_scheme(brief.deployment.weights, shape.gpu)  # what the weights run as: weight-only where the GPU lacks the math
    dep = brief.deployment
    runs = f"{dep.weights.value.upper()} weights run as {scheme.scheme}, prefill at the {shape.compute_precision.upper()} peak; {dep.kv_cache.value.upper()} KV"
    precision = f"On {gpu}: {runs}." if shape.gpu.runs_natively("fp8") else f"No FP8 math on {gpu}: {runs}."
    meets = core.verdict.feasible and core.verdict.meets_slo
    answer = _cost_answer(gpu, replanned, replanned_cost, base_gpu, base_replanned, base_replanned_cost, goal_words(brief))
    base_rule = f" vs {base_nodes} {base_gpu} nodes at {usd(base_cost)}" if baseline is not None else ""
    conclusion = (
        f"{precision} Decode is bandwidth-bound. {answer} The {pct(TARGET_UTILIZATION)} no-cache sizing rule's figures assume"
        f" no prefix cache (the brief states {pct(brief.workload.prefix_hit_rate)}): {nodes} {gpu} nodes at {usd(sized_cost)} per M"
        f"{base_rule}. As briefed, its {brief.hardware.nodes} nodes"
        f" {'meet' if meets else 'miss'} the SLO at the engine's pace with the prefix cache."
    )
    return findings, [], conclusion


TITLES = {
    VariationKey.a: ("Half the budget", "The budget is 32 GPUs, not 64: what runs out, and what does each option change?"),
    VariationKey.b: ("p95 TTFT under 200 ms", "Which part of a 200 ms TTFT is irreducible, and which requests can meet it?"),
    VariationKey.c: ("100 fine-tuned variants", "Serve 100 LoRA adapters of the base model: memory, overhead, routing."),
    VariationKey.d: ("Global users", "Users are global: size regions for their traffic plus failover."),
    VariationKey.e: ("10x spiky peak", "Peak is 10x the average and spiky: headroom or a degradation ladder?"),
    VariationKey.f: ("A 405B model", "What if the model were 405B: memory, decode speed, fleet?"),
    VariationKey.g: ("A100 instead of H100", "Can the design run on A100s, and at what $ per million tokens?"),
}


def _question(key: VariationKey, brief: Brief, baseline: Baseline | None, fixed: str) -> str:
    """The question a variation asks, with this brief's numbers where it has them."""
    gpus = brief.hardware.nodes * brief.hardware.gpus_per_node
    if key is VariationKey.a:
        was = f", not {baseline.brief.hardware.nodes * baseline.brief.hardware.gpus_per_node}" if baseline is not None else ""
        return f"The budget is {gpus} GPUs{was}: what runs out, and what does each option change?"
    if key is VariationKey.b:
        return f"The SLO is p95 TTFT < {num(brief.slo.ttft_p95_ms, 'ms')}: which part is irreducible, and which requests can meet it?"
    if key is VariationKey.c:
        return f"Serve {brief.lora.adapters:,} LoRA adapters of the base model: memory, overhead, routing."
    if key is VariationKey.e:
        return f"Peak is {num(1 / brief.cost.average_duty)}x the average and spiky: headroom or a degradation ladder?"
    if key is VariationKey.f:
        model = MODELS[brief.model.name].name if brief.model.name in MODELS else brief.model.name
        return f"What if the model were {model}: memory, decode speed, fleet?"
    if key is VariationKey.g:
        gpu = GPUS[brief.hardware.gpu].name if brief.hardware.gpu in GPUS else brief.hardware.gpu
        return f"Can the design run on {gpus} {gpu} GPUs, and at what $ per million tokens?"
    return fixed


def variation_analysis(
    core: CoreDesign,
    baseline: Baseline | None,
    design_for_diff: Design | None,
) -> VariationAnalysis | None:
    """The analysis of the brief's variation, or None when the brief poses none."""
    key = core.brief.variation
    if key is None:
        return None
    regions: tuple[RegionFleet, ...] = ()
    spike: SpikeHeadroom | None = None
    if key is VariationKey.a:
        findings, options, conclusion = _variation_a(core, baseline)
    elif key is VariationKey.b:
        findings, options, conclusion = _variation_b(core)
    elif key is VariationKey.c:
        findings, options, conclusion = _variation_c(core)
    elif key is VariationKey.d:
        regions = region_fleets(core.brief)
        findings, options, conclusion = _variation_d(core, regions)
    elif key is VariationKey.e:
        spike = spike_headroom(core.brief, core.demand.output_tokens_per_s)
        findings, options, conclusion = _variation_e(core, baseline, spike)
    elif key is VariationKey.f:
        fix = design_for_diff.fix if design_for_diff is not None else None
        meets = design_for_diff is not None and design_for_diff.verdict.feasible and design_for_diff.verdict.meets_slo
        findings, options, conclusion = _variation_f(core, baseline, fix, meets)
    else:
        findings, options, conclusion = _variation_g(core, baseline)
    title, question = TITLES[key]
    question = _question(key, core.brief, baseline, question)
    diff = diff_designs(baseline, design_for_diff) if baseline is not None and design_for_diff is not None else ()
    return VariationAnalysis(
        key=key,
        title=title,
        question=question,
        findings=tuple(findings),
        options=tuple(options),
        conclusion=conclusion,
        diff=diff,
        regions=regions,
        spike=spike,
    )
