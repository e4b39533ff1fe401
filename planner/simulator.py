"""Step 9 of the method: a step-level simulation of one replica checks the closed form.

    brief ──step_costs()──▶ StepCosts ─┐
    brief ──make_requests()──▶ Requests ┴─run_engine()─▶ EngineOutput ──summarize()──▶ SimResult

The step costs come from the same replica physics as the analytic design (planner.replica), so a
pure decode step here takes exactly `ReplicaShape.decode_step_real_s`. `max_rate` bisects on the
arrival rate for the highest one whose SLO attainment reaches the target, and sizes the fleet; it doubles
the probe length (requests a run) until the fleet it implies no longer changes.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any, Literal, NamedTuple

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field

from planner.brief import Brief, ItlMetric, ObjectiveKind
from planner.errors import BriefError
from planner.fmt import num, pct, usd
from planner.mechanisms import ttft_extra_ms
from planner.multimodal import encoder_s_per_request
from planner.replica import ReplicaShape, shape_of
from planner.sim_engine import EngineOutput, StepCosts, run_engine, warm_up
from planner.sim_workload import Requests, make_requests
from planner.step_model import step_time_s

__all__ = [
    "BENCHMARK_ENGINE",
    "Confidence",
    "MaxRateResult",
    "Percentiles",
    "Probe",
    "ProbeLength",
    "SimObjective",
    "SimResult",
    "SimSettings",
    "SimSlo",
    "benchmark_brief",
    "default_rate_per_s",
    "max_rate",
    "simulate",
    "step_costs",
]

ProgressFn = Callable[[float, str], None]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class SimSettings(_Frozen):
    """How to load the replica; lengths default to the brief's distributions."""

    requests: int = Field(default=1000, ge=1, le=2_000_000, description="Requests to simulate.")
    rate_per_s: float | None = Field(
        default=None,
        gt=0,
        description="Poisson arrival rate (req/s); inf submits every request at time 0; empty: the brief's peak per general-pool replica.",
    )
    concurrency: int | None = Field(default=None, ge=1, le=100_000, description="Closed-loop clients (replaces the rate when set).")
    input_tokens: int | None = Field(default=None, ge=1, le=10_000_000, description="Fixed prompt length (tokens); empty: sampled.")
    output_tokens: int | None = Field(default=None, ge=1, le=1_000_000, description="Fixed reply length (tokens); empty: sampled.")
    seed: int = Field(default=0, ge=0, le=2**63 - 1, description="Seed of the request generator.")
    reserve_whole_request: bool = Field(
        default=False,
        description="Admit a request only when the KV cache holds its whole prompt and reply besides the running requests' "
        "(TensorRT-LLM's default GUARANTEED_NO_EVICT: nothing is ever preempted); off: vLLM's admission on the KV in use, "
        "with recompute preemption.",
    )


# The most work one run may do, in tokens: requests x (mean prompt + reply, up to the longest sequence).
# 1e9 lets `simulate qps200-chat --requests 200000` (5e8) run; at worst (each request alone: an engine
# step per reply token, ~30 ns each) a run at the limit takes about 30 s. A max-rate search makes
# seeds x (bisections + 1) runs (117 by default), near saturation where a step serves many requests.
MAX_RUN_TOKENS = 1_000_000_000
MAX_SEARCH_TOKENS = 20_000_000_000  # a whole max-rate search, every probe length it tries included

# The plan check (a brief, neither a rate nor a concurrency, no request count given) runs this many requests, fewer
# if the work limit says so: near capacity a thousand requests end before the queue and the batch reach their steady
# state (variation-a at 90% of capacity: ITL p95 19.3 ms over 1,000 requests, 25.4 over 20,000, plan 29.4).
PLAN_CHECK_REQUESTS = 20_000

# Without an explicit probe length, max-rate doubles it from here until the answer is stable: the same
# replica count at two successive lengths and a rate that moved less than RATE_TOLERANCE between them.
START_PROBE_REQUESTS = 1500
SLOT_FILLS = 8  # the first probe is at least this many times the replica's slots, so the slots fill, turn over and a queue forms
RATE_TOLERANCE = 0.01
MAX_PROBE_REQUESTS = 1_000_000


class Percentiles(_Frozen):
    mean: float
    p50: float
    p90: float
    p95: float
    p99: float


class SimObjective(_Frozen):
    """The plan check of a design judged on its objective (an offline job, an RL rollout batch): one replica at the full
    batch the plan runs it at, a closed loop of that many clients, against the pace the plan states."""

    kind: ObjectiveKind  # an offline job (throughput) or a rollout batch (batch completion)
    batch_per_replica: int  # the closed loop's clients: the plan's objective.batch_per_replica
    output_tokens_per_s: float  # one replica, simulated
    plan_output_tokens_per_s: float  # one replica, the plan's (objective.output_tokens_per_s / replicas)
    time_s: float  # the job's time (or the rollout's makespan) at the simulated pace
    plan_time_s: float  # objective.time_s
    deadline_s: float
    meets: bool  # the simulated pace finishes within the deadline
    scope: str  # what the run checks, in words


class SimResult(_Frozen):
    """One simulated run of one replica. Times in ms unless the name says otherwise."""

    requests: int
    completed: int
    rate_per_s: float | None  # None for closed-loop runs
    concurrency: int | None
    seed: int
    duration_s: float  # first arrival to last token
    output_tokens_per_s: float
    requests_per_s: float
    ttft_ms: Percentiles
    tpot_ms: Percentiles  # per request: (last token - first token) / (output - 1)
    itl_ms: Percentiles  # over every inter-token gap of every request
    queue_ms: Percentiles  # arrival to first admission
    slo_attainment: float  # fraction of requests meeting both the TTFT and the ITL targets
    ttft_target_ms: float
    itl_target_ms: float
    steps: int
    mean_step_ms: float
    preemptions: int
    wall_ms: float  # time spent simulating, without start-up
    arithmetic: dict[str, str]
    clipped_requests: int = 0  # requests whose sampled prompt + reply was cut to the longest sequence the replica takes
    slo: SimSlo | None = None  # the plan check (simulate BRIEF without --rate or --concurrency)
    objective: SimObjective | None = None  # the plan check of an offline job's or a rollout's pace (SimObjective)


class SimSlo(_Frozen):
    """The simulated run on the plan's own keys and definitions (planner.slo), to set beside `plan`'s `slo`."""

    ttft_p50_ms: float  # end to end (the fixed request path included), prompts up to the TTFT cap
    ttft_p95_ms: float
    itl_p50_ms: float  # gaps between consecutive tokens
    itl_p95_ms: float
    tpot_p50_ms: float  # each reply's mean gap
    tpot_p95_ms: float
    fixed_ms: float  # network, gateway, tokenization, first sample, first write: added to the engine's TTFT
    rate_per_replica_per_s: float
    ttft_ok: bool
    itl_ok: bool  # judged on the brief's ITL metric (slo.itl_metric)
    meets_slo: bool  # the run's: the replica it simulates, not the design's verdict
    scope: str  # what the run checks, in words: one general-pool replica (or a prefill-decode pair) at its rate
    plan_meets_slo: bool  # the plan's verdict on the whole design (verdict.meets_slo)
    not_simulated: str  # what the plan's verdict rests on that the run does not run ("" when nothing)


class Probe(_Frozen):
    rate_per_s: float
    slo_attainment: float
    ok: bool


StoppedBy = Literal["converged", "work limit", "probe length limit", "given probe length"]  # what ended the doubling


class ProbeLength(_Frozen):
    """One probe length's search: the median over the request draws and the fleet it implies."""

    requests: int
    max_rate_per_s: float  # median over the draws
    rate_low_per_s: float  # lowest and highest draw
    rate_high_per_s: float
    replicas_needed: int | None
    draws_at_top: int  # draws whose run met the SLO at the search's top (1.05 x the compute bound): too short to overload
    draws_capped: int  # draws capped at the slots' bound
    runs: int  # simulated runs at this length


class Confidence(_Frozen):
    """What the answer's stability means: the last two probe lengths, the spread over the draws, what stopped the search."""

    checked: bool  # False when the probe length was given (no doubling)
    stopped_by: StoppedBy
    tolerance: float  # the largest relative rate change between the last two lengths that counts as stable
    requests: tuple[int, ...]  # the last two probe lengths (one when only one was run)
    rates_per_s: tuple[float, ...]  # the median rate at each
    relative_change: float | None  # |last - previous| / last
    replicas_needed: tuple[int | None, ...]  # at each
    draws: int
    rate_low_per_s: float  # the lowest and highest draw at the final length
    rate_high_per_s: float
    replicas_range: tuple[int | None, int | None]  # replicas needed at the highest and at the lowest draw
    slot_bound_per_s: float  # median over the final length's draws; inf with speculation
    capped_at_slot_bound: bool  # the final answer is the slots' bound, not a rate a run overloaded above
    work_tokens: float  # requests x tokens over every run of every length
    work_limit_tokens: float
    lengths: tuple[ProbeLength, ...]
    statement: str


class MaxRateResult(_Frozen):
    """The highest rate one replica sustains under the SLO, and the fleet that carries the peak with it.

    `requests_per_probe` (= `probe_requests`), `max_rate_per_seed` and `probes` are the final probe length's."""

    max_rate_per_s: float
    peak_rate_per_s: float
    attainment_target: float
    headroom: float
    replicas_needed: int | None  # None when no rate meets the SLO
    replicas_with_headroom: int | None
    gpus: int | None
    usd_per_hour: float | None
    usd_per_million_output_tokens: float | None
    requests_per_probe: int
    max_rate_per_seed: tuple[float, ...]  # one bisection per request draw; the result is their median
    probes: tuple[Probe, ...]
    wall_ms: float
    arithmetic: dict[str, str]
    probe_requests: int  # the probe length the answer comes from
    probe_lengths_tried: tuple[int, ...]
    converged: bool | None  # None: a given probe length, not checked
    confidence: Confidence
    judged_by_deadline: bool = False  # an offline job or a rollout: this latency sizing is for reference, not the design's


# A stock engine as benchmarks run it: vLLM's serving defaults (256 sequences, 8,192 tokens a step,
# 90% of GPU memory), random prompts that share no prefix.
BENCHMARK_ENGINE: dict[str, object] = {
    "deployment.max_num_seqs": 256,
    "deployment.max_num_batched_tokens": 8192,
    "deployment.gpu_memory_utilization": 0.9,
    "deployment.reserve_gb_per_gpu": 0.0,
    "deployment.max_model_len": 32_768,
    "deployment.spare_nodes": 0,
    "deployment.long_context_nodes": 0,
    "workload.users": None,
    "workload.request_rate": 1.0,
    "workload.prefix_hit_rate": 0.0,
    "workload.kv_context_tokens": None,
    "latency.scheduler_ms": 0.0,  # the calibrated step overhead already holds the engine's scheduling
}


def benchmark_brief(changes: dict[str, object] | None = None) -> Brief:
    """The calibrated defaults on a stock engine; `changes` (dotted paths) describe the benchmark's setup."""
    return Brief().with_changes(BENCHMARK_ENGINE | (changes or {}))


# --- physics -----------------------------------------------------------------------------------------


def step_costs(brief: Brief, shape: ReplicaShape) -> StepCosts:
    """The replica's step-time constants (the shape's, as the planner's closed forms use them) and engine limits."""
    dep = brief.deployment
    kv_capacity = int(shape.kv_capacity_tokens)
    if kv_capacity < 2:
        raise BriefError("deployment.tp", f"the replica holds no KV: {num(shape.kv_gb_per_gpu, 'GB')} per GPU left after the weights")
    overhead_s = shape.step.overhead_s + brief.latency.scheduler_ms / 1e3  # the plan's per-step scheduler time too
    return StepCosts(
        step=shape.step.model_copy(update={"overhead_s": overhead_s}),
        max_num_batched_tokens=dep.max_num_batched_tokens,
        max_num_seqs=dep.max_num_seqs,
        kv_capacity_tokens=kv_capacity,
        chunked_prefill=dep.chunked_prefill,
        encoder_s=encoder_s_per_request(brief, shape),
    )


def default_rate_per_s(brief: Brief, shape: ReplicaShape) -> float:
    """The brief's peak rate per general-pool replica, as the operating point and the SLO budget take it."""
    from planner.capacity import demand  # the demand arithmetic, without planning the whole design
    from planner.pools import pools_of

    pools, _ = pools_of(brief, shape)
    if brief.disaggregation.enabled:  # the decode pool's replicas carry the requests; the prefill pool's clock is scaled
        from planner.core import core_design

        dis = core_design(brief, curves=False, capacity=False).disaggregation
        assert dis is not None
        return dis.decode_rate_per_replica_per_s
    return pools.general_rate_per_replica(demand(brief, shape).request_rate_per_s)


def routed_prompt_cap(brief: Brief) -> int | None:
    """The longest prompt the router sends a general-pool replica when a long-context pool takes the longer ones
    (planner.pools), else None: the replica is sent every request."""
    from planner.pools import general_prompt_cap_tokens, pools_of

    pools, _ = pools_of(brief, _replica(brief))
    if not (pools.long_context_nodes and brief.workload.long_context_share > 0):
        return None
    return int(general_prompt_cap_tokens(brief, pools.long_context_nodes))  # the pools' own rule


def _requests(brief: Brief, settings: SimSettings, rate: float, max_model_len: int) -> Requests:
    w = brief.workload
    return make_requests(
        count=settings.requests,
        rate_per_s=rate,
        clients=settings.concurrency or 0,
        prompt_mean=settings.input_tokens or w.input_tokens_mean,
        prompt_p95=settings.input_tokens or w.input_tokens_p95,
        output_mean=settings.output_tokens or w.output_tokens_mean,
        output_p95=settings.output_tokens or w.output_tokens_p95,
        max_model_len=max_model_len,
        prefix_hit_rate=brief.effective_hit_rate,
        seed=settings.seed,
    )


def _check_lengths(settings: SimSettings, brief: Brief, max_len: int) -> None:
    """Fixed lengths must fit the longest sequence the replica takes (sampled ones are cut and counted)."""
    bound = "deployment.max_model_len" if max_len == brief.deployment.max_model_len else "its KV capacity"
    limit = f"the replica takes at most {max_len:,} tokens a request (prompt + reply; {bound})"
    prompt, reply = settings.input_tokens, settings.output_tokens
    if prompt is not None and prompt >= max_len:
        raise BriefError("--input", f"a {prompt:,}-token prompt leaves no room for a reply: {limit}")
    if reply is not None and reply >= max_len:
        raise BriefError("--output", f"a {reply:,}-token reply leaves no room for a prompt: {limit}")
    if prompt is not None and reply is not None and prompt + reply > max_len:
        raise BriefError("--output", f"--input {prompt:,} + --output {reply:,} = {prompt + reply:,} tokens: {limit}")


def _tokens_per_request(brief: Brief, settings: SimSettings, max_len: int) -> float:
    """Mean prompt + reply tokens of the run's requests (sampled lengths are cut to the longest sequence)."""
    prompt = settings.input_tokens or brief.workload.input_tokens_mean
    reply = settings.output_tokens or brief.workload.output_tokens_mean
    return min(prompt + reply, max_len)


def _plan_check_requests(tokens_per_request: float) -> int:
    """Requests the plan check runs: PLAN_CHECK_REQUESTS, or as many as the work limit allows (at least SimSettings' default)."""
    fits = int(MAX_RUN_TOKENS / max(tokens_per_request, 1.0))
    default = int(SimSettings.model_fields["requests"].default)  # pydantic types a field's default as Any
    return max(min(PLAN_CHECK_REQUESTS, fits), min(default, fits))


def _check_work(requests: int, tokens_per_request: float, runs: int, limit: int) -> None:
    """Refuse a run (or a search of `runs` runs) whose requests x tokens exceed `limit` tokens."""
    work = requests * runs * tokens_per_request
    if work > limit:
        most = int(limit / (runs * tokens_per_request))
        each, what = (f" in each of {runs} runs", "a search") if runs > 1 else ("", "a run")
        raise BriefError(
            "--requests",
            f"{requests:,} requests{each} x {tokens_per_request:,.0f} tokens (prompt + reply) = {work:,.0f} tokens,"
            f" above the {limit:,} tokens {what} may simulate: give at most {most:,} requests",
        )


# --- metrics -----------------------------------------------------------------------------------------


def _percentiles(values_ms: npt.NDArray[np.float64]) -> Percentiles:
    """Percentiles over the requests; one that never finished counts as unbounded (inf), none at all gives NaN."""
    if values_ms.size == 0:
        return Percentiles(mean=math.nan, p50=math.nan, p90=math.nan, p95=math.nan, p99=math.nan)
    values = np.where(np.isfinite(values_ms), values_ms, np.inf)
    p50, p90, p95, p99 = _quantiles(values, [50, 90, 95, 99])
    return Percentiles(mean=float(values.mean()), p50=p50, p90=p90, p95=p95, p99=p99)


def _quantiles(values: npt.NDArray[np.float64], qs: list[float]) -> list[float]:
    """np.percentile, interpolated between neighbours when every value is finite; with an unbounded value among
    them the nearest value above (interpolating towards inf gives NaN)."""
    if np.isfinite(values).all():
        return [float(v) for v in np.percentile(values, qs)]
    return [float(v) for v in np.percentile(values, qs, method="higher")]


def _histogram_percentiles(counts: npt.NDArray[np.int64], sums_ms: npt.NDArray[np.float64]) -> Percentiles:
    """Percentiles of the ITL histogram (planner.sim_engine.ITL_BINS_PER_DECADE): each is the mean gap of the
    bin holding the exact percentile, within 0.12% of it; the mean is exact. No gaps (one-token replies): NaN."""
    total = int(counts.sum())
    if total == 0:
        return Percentiles(mean=math.nan, p50=math.nan, p90=math.nan, p95=math.nan, p99=math.nan)
    cum = np.cumsum(counts)
    held = np.searchsorted(cum, np.array([0.5, 0.9, 0.95, 0.99]) * total, side="left")  # bins holding p50 .. p99
    p50, p90, p95, p99 = (float(v) for v in sums_ms[held] / counts[held])
    return Percentiles(mean=float(sums_ms.sum() / total), p50=p50, p90=p90, p95=p95, p99=p99)


def _histogram_quantile(counts: npt.NDArray[np.int64], sums_ms: npt.NDArray[np.float64], q: float) -> float:
    """One percentile of the ITL histogram, as _histogram_percentiles works them out (NaN without gaps)."""
    total = int(counts.sum())
    if total == 0:
        return math.nan
    held = int(np.searchsorted(np.cumsum(counts), q * total, side="left"))
    return float(sums_ms[held] / counts[held])


def _per_request_ms(out: EngineOutput, reqs: Requests) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    ttft = (out.first_token_s - out.arrival_s) * 1e3
    extra = reqs.output_tokens - 1
    with np.errstate(invalid="ignore", divide="ignore"):
        tpot = np.where(extra > 0, (out.finish_s - out.first_token_s) / np.maximum(extra, 1) * 1e3, 0.0)
    tpot = np.where(np.isnan(out.finish_s), np.inf, tpot)
    queue = (out.scheduled_s - out.arrival_s) * 1e3
    return ttft, tpot, queue


def fixed_ttft_ms(brief: Brief) -> float:
    """The request path outside the engine: network, gateway, tokenization, first sample, first write, and the terms of
    the mechanisms the brief turns on (a KV reload from a tier, the vision encoder, an adapter load: the plan's too).
    The engine loop runs each request's mean encoder time in the step that admits it, so the path carries the p95
    request's encoder time beyond that mean."""
    lat = brief.latency
    encoder_ms = encoder_s_per_request(brief, shape_of(brief)) * 1e3 if brief.multimodal.enabled else 0.0
    return (
        lat.network_ms
        + lat.gateway_ms
        + lat.tokenization_ms
        + lat.first_sample_ms
        + lat.first_write_ms
        + max(ttft_extra_ms(brief) - encoder_ms, 0.0)
    )


def attainment(brief: Brief, reqs: Requests, ttft_ms: npt.NDArray[np.float64], tpot_ms: npt.NDArray[np.float64]) -> float:
    """Fraction of requests meeting both targets: the TTFT end to end (fixed path included) for prompts up to the
    cap, and each reply's mean gap (a reply whose mean gap exceeds the target has gaps over it)."""
    slo = brief.slo
    ttft_ok = (ttft_ms + fixed_ttft_ms(brief) <= slo.ttft_p95_ms) | (reqs.prompt_tokens > slo.ttft_input_cap_tokens)
    ok = ttft_ok & (tpot_ms <= slo.itl_p95_ms) & np.isfinite(ttft_ms)
    return float(ok.mean())


def _summarize(brief: Brief, settings: SimSettings, rate: float, reqs: Requests, out: EngineOutput, wall_s: float) -> SimResult:
    ttft, tpot, queue = _per_request_ms(out, reqs)
    completed = int(np.isfinite(out.finish_s).sum())
    start = float(np.min(out.arrival_s))
    end = float(np.nanmax(out.finish_s)) if completed else start
    duration = max(end - start, 1e-12)
    tokens = int(reqs.output_tokens[np.isfinite(out.finish_s)].sum())
    closed = settings.concurrency is not None
    load = (
        f"{settings.concurrency} closed-loop clients"
        + (f" (only {reqs.count} send: one request each)" if (settings.concurrency or 0) > reqs.count else "")
        if closed
        else ("all at t = 0" if math.isinf(rate) else f"Poisson {num(rate, 'req/s')}")
    )
    mean_step_ms = out.busy_s / max(out.steps, 1) * 1e3
    return SimResult(
        requests=reqs.count,
        completed=completed,
        rate_per_s=None if closed else rate,
        concurrency=settings.concurrency,
        seed=settings.seed,
        duration_s=duration,
        output_tokens_per_s=tokens / duration,
        requests_per_s=completed / duration,
        ttft_ms=_percentiles(ttft),
        tpot_ms=_percentiles(tpot[reqs.output_tokens > 1]),
        itl_ms=_histogram_percentiles(out.itl_bin_count, out.itl_bin_sum_s * 1e3),
        queue_ms=_percentiles(queue),
        slo_attainment=attainment(brief, reqs, ttft, tpot),
        ttft_target_ms=brief.slo.ttft_p95_ms,
        itl_target_ms=brief.slo.itl_p95_ms,
        steps=out.steps,
        mean_step_ms=mean_step_ms,
        preemptions=out.preemptions,
        wall_ms=wall_s * 1e3,
        arithmetic={
            "load": f"{reqs.count} requests, {load}, seed {settings.seed}",
            "output_tokens_per_s": f"{tokens:,} output tokens / {num(duration, 's')} = {num(tokens / duration, 'tok/s')}",
            "requests_per_s": f"{completed:,} completed / {num(duration, 's')} = {num(completed / duration, 'req/s')}",
            "steps": f"{out.steps:,} engine steps, {num(mean_step_ms, 'ms')} each on average, {out.preemptions} preemptions",
        }
        | _routing_note(brief, settings)
        | _clipped_note(reqs),
        clipped_requests=reqs.clipped,
    )


def _routing_note(brief: Brief, settings: SimSettings) -> dict[str, str]:
    cap = routed_prompt_cap(brief) if settings.input_tokens is None else None
    if cap is None:
        return {}
    return {
        "routing": f"the router sends a general-pool replica prompts up to {num(cap, 'tokens')} and the long-context pool the"
        f" longer ones ({pct(brief.workload.long_context_share)} of requests); this run draws the brief's whole length"
        " distribution, as the plan's latency model takes it for the general pool (the worked design's sizing basis), so"
        " it is heavier than the general pool's own traffic and the longest draws are cut to max-model-len"
    }


def _clipped_note(reqs: Requests) -> dict[str, str]:
    if reqs.clipped == 0:
        return {}
    return {
        "clipped_requests": f"{reqs.clipped:,} of {reqs.count:,} requests ({pct(reqs.clipped / reqs.count)}) drew a prompt + reply"
        " longer than the replica takes (max-model-len, or its KV capacity if smaller) and were cut to fit"
    }


# --- runs --------------------------------------------------------------------------------------------


def _replica(brief: Brief) -> ReplicaShape:
    """The brief's replica; raises InfeasibleDesign (a BriefError with the plan's verdict) when it cannot run."""
    from planner.core import feasible_replica

    return feasible_replica(brief)


def simulate(brief: Brief, settings: SimSettings | None = None) -> SimResult:
    """Simulate one replica of the brief under the settings' load.

    With neither a rate nor a concurrency it checks the plan: one general-pool replica at the plan's rate per
    replica, with the engine configuration the plan analyses (the brief's limits), and a `slo` block on the plan's
    own definitions.
    """
    settings = settings or SimSettings()
    shape = _replica(brief)
    costs = step_costs(brief, shape)
    check = settings.rate_per_s is None and settings.concurrency is None
    rate = settings.rate_per_s if settings.rate_per_s is not None else default_rate_per_s(brief, shape)
    max_len = min(brief.deployment.max_model_len, costs.kv_capacity_tokens)
    _check_lengths(settings, brief, max_len)
    tokens = _tokens_per_request(brief, settings, max_len)
    if check and "requests" not in settings.model_fields_set:
        settings = settings.model_copy(update={"requests": _plan_check_requests(tokens)})
    _check_work(settings.requests, tokens, runs=1, limit=MAX_RUN_TOKENS)
    reqs = _requests(brief, settings, rate, max_len)
    costs, steps, notes = _mechanisms(brief, shape, costs, reqs, settings, rate)
    if settings.reserve_whole_request:
        costs = costs.model_copy(update={"reserve_whole_request": True})
    warm_up()
    start = time.perf_counter()
    if brief.disaggregation.enabled:
        out = _run_disaggregated(brief, shape, costs, reqs, steps)
    else:
        out = run_engine(reqs.arrival_s, reqs.prompt_tokens, steps, reqs.cached_tokens, reqs.clients, costs)
    wall = time.perf_counter() - start
    result = _summarize(brief, settings, rate, reqs, out, wall)
    if notes:
        result = result.model_copy(update={"arithmetic": result.arithmetic | notes})
    if not check:
        return result
    return result.model_copy(
        update={"slo": _sim_slo(brief, rate, reqs, out, result), "objective": _objective_check(brief, shape, settings.seed)}
    )


OBJECTIVE_CHECK_BATCHES = 20  # the objective check's requests: this many times the full batch (every slot turns over 20 times)


def _objective_check(brief: Brief, shape: ReplicaShape, seed: int) -> SimObjective | None:
    """An offline job's or a rollout's pace as the simulator runs it: a closed loop of the plan's full batch on one
    replica (None for a design judged on latency). The time follows the pace: the plan's time x its pace / the run's."""
    from planner.capacity import memory
    from planner.objective import objective_analysis

    goal = objective_analysis(brief, shape, memory(brief, shape))
    if goal is None:
        return None
    batch = int(goal.batch_per_replica)
    run = simulate(brief, SimSettings(concurrency=batch, requests=OBJECTIVE_CHECK_BATCHES * batch, seed=seed))
    planned = goal.output_tokens_per_s_per_replica
    if goal.kind is ObjectiveKind.throughput:
        time_s = goal.time_s * planned / run.output_tokens_per_s
        what = "the job's time"
    else:  # the bulk's work follows the pace; the straggler's own decode at the tail's batch is the plan's
        bulk_s = brief.objective.batch_prompts * goal.request_s / max(shape.replicas, 1) * planned / run.output_tokens_per_s
        time_s = max(bulk_s, goal.straggler_s)
        what = "the batch's makespan (the bulk at the simulated pace, the straggler's own decode as planned)"
    return SimObjective(
        kind=goal.kind,
        batch_per_replica=batch,
        output_tokens_per_s=run.output_tokens_per_s,
        plan_output_tokens_per_s=planned,
        time_s=time_s,
        plan_time_s=goal.time_s,
        deadline_s=goal.deadline_s,
        meets=time_s <= goal.deadline_s,
        scope=f"one replica at its full batch: {batch} closed-loop clients, {OBJECTIVE_CHECK_BATCHES * batch:,} requests; {what}",
    )


def _scope(brief: Brief, rate: float) -> str:
    """The part of the design the plan check runs, in words."""
    if brief.disaggregation.enabled:
        return f"one prefill replica feeding one decode replica at {num(rate, 'req/s')} a decode replica (the plan's rate), its TTFT and token gaps"
    return f"one general-pool replica at {num(rate, 'req/s')} (the plan's rate per replica), its TTFT and token gaps"


def _not_simulated(brief: Brief) -> tuple[bool, str]:
    """(the plan's verdict, what it rests on beyond the replica the check runs): when the plan has that replica meet
    both targets with a steady state yet the design misses, every problem it names lies outside the run (another
    pool, the fleet's sizing, an engine or adapter limit)."""
    from planner.core import core_design

    core = core_design(brief, curves=False, capacity=False)
    replica_meets = core.operating_point.stable and core.slo.ttft_ok and core.slo.itl_ok
    if core.verdict.meets_slo or not replica_meets:
        return core.verdict.meets_slo, ""
    beyond = "; ".join(f"{p.problem} ({p.field})" for p in core.verdict.problems)
    return False, f"what the plan misses on lies outside this run: {beyond}"


def _mechanisms(
    brief: Brief, shape: ReplicaShape, costs: StepCosts, reqs: Requests, settings: SimSettings, rate: float
) -> tuple[StepCosts, npt.NDArray[np.int64], dict[str, str]]:
    """Speculative decoding's costs and step counts when the plan has it on at its running batch (planner.sim_mechanisms);
    else the costs and replies as they are."""
    from planner.core import core_design  # the plan's running batch decides whether speculation is on
    from planner.sim_mechanisms import speculative_costs

    notes: dict[str, str] = {}
    if brief.disaggregation.enabled:
        dis = core_design(brief, curves=False, capacity=False).disaggregation
        assert dis is not None
        if settings.concurrency is not None:
            raise BriefError(
                "--concurrency",
                "a disaggregated design runs open-loop arrivals through its two pools: give --rate (per decode replica) instead",
            )
        prefill_rate = rate * dis.decode_replicas / dis.prefill_replicas
        notes["pools"] = (
            f"disaggregated: one prefill replica at {num(prefill_rate, 'req/s')} feeding one decode replica at"
            f" {num(rate, 'req/s')} ({dis.arithmetic['split']}); each prompt's KV crosses in {num(dis.transfer_ms_mean, 'ms')} (mean)"
        )
    if not brief.speculative.enabled:
        return costs, reqs.output_tokens, notes
    spec = core_design(brief, curves=False, capacity=False).speculative
    assert spec is not None
    notes["speculative"] = (
        f"speculation by batch: speculative steps (k={spec.num_speculative_tokens}, acceptance {num(spec.acceptance_rate)},"
        f" {num(spec.tokens_per_step)} tokens a sequence in expectation, drawn per step) while at most {spec.off_above_batch} requests"
        " run, plain steps above (disable_by_batch_size); ITL is the gap between streamed chunks"
    )
    return speculative_costs(brief, shape, costs, spec, settings.seed), reqs.output_tokens, notes


def _speculative_or_plain_costs(brief: Brief, shape: ReplicaShape, costs: StepCosts, seed: int) -> StepCosts:
    """The costs a search runs: with speculation by batch when the brief turns it on."""
    if not brief.speculative.enabled:
        return costs
    from planner.core import core_design
    from planner.sim_mechanisms import speculative_costs

    spec = core_design(brief, curves=False, capacity=False).speculative
    assert spec is not None
    return speculative_costs(brief, shape, costs, spec, seed)


def _run_disaggregated(brief: Brief, shape: ReplicaShape, costs: StepCosts, reqs: Requests, steps: npt.NDArray[np.int64]) -> EngineOutput:
    """One prefill replica feeding one decode replica (planner.sim_mechanisms)."""
    from planner.core import core_design, feasible_replica
    from planner.disagg import kv_transfer_s, prefill_brief
    from planner.sim_mechanisms import disaggregated_output

    dis = core_design(brief, curves=False, capacity=False).disaggregation
    assert dis is not None
    pbrief = prefill_brief(brief)
    pcosts = step_costs(pbrief, feasible_replica(pbrief))
    sending = min(dis.prefill_tp, dis.decode_tp)
    transfer = np.array([kv_transfer_s(brief, float(p), shape.kv_bytes_per_token, sending) for p in reqs.prompt_tokens])
    return disaggregated_output(
        reqs.arrival_s,
        reqs.prompt_tokens,
        steps,
        reqs.cached_tokens,
        pcosts,
        costs.model_copy(update={"encoder_s": 0.0}),  # the prefill pool encodes the images
        dis.prefill_replicas / dis.decode_replicas,
        transfer,
    )


def _sim_slo(brief: Brief, rate: float, reqs: Requests, out: EngineOutput, result: SimResult) -> SimSlo:
    ttft, _, _ = _per_request_ms(out, reqs)
    fixed = fixed_ttft_ms(brief)
    covered = ttft[(reqs.prompt_tokens <= brief.slo.ttft_input_cap_tokens)]
    covered = np.where(np.isfinite(covered), covered, np.inf)
    ttft_p50, ttft_p95 = (v + fixed for v in _quantiles(covered, [50, 95])) if covered.size else (math.inf, math.inf)
    slo = brief.slo
    judged_itl = slo.itl_metric.judged(result.itl_ms.p95, result.tpot_ms.p95)
    ttft_ok, itl_ok = ttft_p95 <= slo.ttft_p95_ms, not judged_itl > slo.itl_p95_ms  # NaN: no gaps to judge
    plan_meets, beyond = _not_simulated(brief)
    return SimSlo(
        ttft_p50_ms=ttft_p50,
        ttft_p95_ms=ttft_p95,
        itl_p50_ms=result.itl_ms.p50,
        itl_p95_ms=result.itl_ms.p95,
        tpot_p50_ms=result.tpot_ms.p50,
        tpot_p95_ms=result.tpot_ms.p95,
        fixed_ms=fixed,
        rate_per_replica_per_s=rate,
        ttft_ok=bool(ttft_ok),
        itl_ok=bool(itl_ok),
        meets_slo=bool(ttft_ok and itl_ok),
        scope=_scope(brief, rate),
        plan_meets_slo=plan_meets,
        not_simulated=beyond,
    )


def _attainment_at(brief: Brief, costs: StepCosts, unit: Requests, rate: float) -> tuple[float, bool]:
    """(SLO attainment, whether the run meets the SLO) at a rate, reusing one draw of unit-rate arrivals (common random
    numbers). It meets the SLO as the plan and the simulator check define it, at the percentile slo.attainment_target
    reads the targets as (0.95: p95): that percentile of TTFT (end to end, prompts up to the TTFT cap) and of the gap
    figure the ITL target judges (per-token gaps or each reply's mean gap), each at or under its target."""
    reqs = Requests(
        arrival_s=unit.arrival_s / rate,
        prompt_tokens=unit.prompt_tokens,
        output_tokens=unit.output_tokens,
        cached_tokens=unit.cached_tokens,
        clients=0,
    )
    if brief.disaggregation.enabled:  # the two pools: one prefill replica feeding one decode replica at `rate`
        out = _run_disaggregated(brief, _replica(brief), costs, reqs, reqs.output_tokens)
    else:
        out = run_engine(reqs.arrival_s, reqs.prompt_tokens, reqs.output_tokens, reqs.cached_tokens, 0, costs)
    ttft, tpot, _ = _per_request_ms(out, reqs)
    return attainment(brief, reqs, ttft, tpot), _meets_at_percentile(brief, reqs, out, ttft, tpot)


def _meets_at_percentile(
    brief: Brief, reqs: Requests, out: EngineOutput, ttft_ms: npt.NDArray[np.float64], tpot_ms: npt.NDArray[np.float64]
) -> bool:
    """The run's TTFT and judged gap at the percentile slo.attainment_target names, each against its target."""
    slo = brief.slo
    q = slo.attainment_target
    covered = ttft_ms[reqs.prompt_tokens <= slo.ttft_input_cap_tokens]
    if covered.size:
        (ttft_q,) = _quantiles(np.where(np.isfinite(covered), covered, np.inf), [q * 100])
        if ttft_q + fixed_ttft_ms(brief) > slo.ttft_p95_ms:
            return False
    if slo.itl_metric is ItlMetric.itl:
        gap_q = _histogram_quantile(out.itl_bin_count, out.itl_bin_sum_s * 1e3, q)
    else:
        replies = tpot_ms[reqs.output_tokens > 1]
        gap_q = _quantiles(np.where(np.isfinite(replies), replies, np.inf), [q * 100])[0] if replies.size else math.nan
    return not gap_q > slo.itl_p95_ms  # NaN: no gaps to judge


def _compute_bound_rate(shape: ReplicaShape, unit: Requests) -> float:
    """No replica finishes requests faster than its FLOPs allow: uncached prompt + output tokens per request."""
    tokens = float(np.mean(unit.prompt_tokens - unit.cached_tokens + unit.output_tokens))
    return shape.prefill_tokens_per_s / tokens


def _slots(costs: StepCosts, prompt_tokens: float, output_tokens: float) -> tuple[float, float]:
    """The requests a replica runs at once and the tokens each holds: max-num-seqs, or the KV pool over a running
    sequence's context (its prompt and half its reply)."""
    held = prompt_tokens + output_tokens / 2
    return min(float(costs.max_num_seqs), costs.kv_capacity_tokens / held), held


def _slot_bound_rate(costs: StepCosts, unit: Requests) -> float:
    """No replica sustains more requests than its slots hold over a request's life (Little's law): the slots
    (max-num-seqs, or the KV pool over a running sequence's context) / (output tokens x the decode step at that batch).
    A probe whose requests all fit in the slots never meets this limit (3,748-token replies on 4,096 slots), so the
    search's answer is capped here. Speculation emits several tokens a step: no cap."""
    if costs.speculative is not None:
        return math.inf
    out = float(np.mean(unit.output_tokens))
    slots, held = _slots(costs, float(np.mean(unit.prompt_tokens)), out)
    step_s = float(step_time_s(costs.step.values(), slots, slots, slots * held, 0.0))
    return slots / (out * step_s)


def _bound_rate(brief: Brief, shape: ReplicaShape, unit: Requests) -> float:
    """The bisection's top: the compute bound, for a disaggregated design per decode replica (its prompts on the
    prefill replicas, prefill replicas / decode replicas of them a decode replica's worth)."""
    if not brief.disaggregation.enabled:
        return _compute_bound_rate(shape, unit)
    from planner.core import core_design, feasible_replica
    from planner.disagg import prefill_brief

    dis = core_design(brief, curves=False, capacity=False).disaggregation
    assert dis is not None
    prompt = float(np.mean(unit.prompt_tokens - unit.cached_tokens))
    prefill = feasible_replica(prefill_brief(brief)).prefill_tokens_per_s / max(prompt, 1.0) * dis.prefill_replicas / dis.decode_replicas
    decode = shape.prefill_tokens_per_s / max(float(np.mean(unit.output_tokens)), 1.0)
    return min(prefill, decode)


def _bisect(high: float, bisections: int, probe: Callable[[float], bool]) -> float:
    """Highest rate in (0, high] whose run meets the SLO (`probe`), to high / 2^bisections."""
    if probe(high):  # a short run can hide an overload that a long one would show: report the bound
        return high
    low = 0.0
    for _ in range(bisections):
        mid = (low + high) / 2
        low, high = (mid, high) if probe(mid) else (low, mid)
    return low


def _start_requests(brief: Brief, costs: StepCosts, tokens_per_request: float, runs: int, limit: float) -> int:
    """The first probe length: SLOT_FILLS x the replica's slots, at least START_PROBE_REQUESTS, so the slots fill and
    turn over (3,748-token replies keep 4,096 requests running: 1,500 never overload them); at most a third of what
    the work limit allows, so a second, doubled length fits too."""
    slots, _ = _slots(costs, brief.workload.input_tokens_mean, brief.workload.output_tokens_mean)
    wanted = max(START_PROBE_REQUESTS, math.ceil(SLOT_FILLS * slots))
    return max(min(wanted, int(limit / (3 * runs * tokens_per_request)), MAX_PROBE_REQUESTS // 2), 10)


def _probe_lengths(first: int, tokens_per_request: float, runs: int, limit: float) -> tuple[list[int], StoppedBy]:
    """The lengths the doubling may try within the work limit (every length's runs counted), and what ends the list."""
    work = runs * tokens_per_request  # tokens a search of one request per run does
    _check_work(first, tokens_per_request, runs, int(limit))  # not even 10 requests a run fit: refused
    lengths = [first]
    while 2 * lengths[-1] <= MAX_PROBE_REQUESTS and (sum(lengths) + 2 * lengths[-1]) * work <= limit:
        lengths.append(2 * lengths[-1])
    return lengths, "work limit" if 2 * lengths[-1] <= MAX_PROBE_REQUESTS else "probe length limit"


def _first(reqs: Requests, count: int) -> Requests:
    """The first `count` requests of a draw (open-loop arrivals)."""
    if count == reqs.arrival_s.size:
        return reqs
    return Requests(
        arrival_s=reqs.arrival_s[:count],
        prompt_tokens=reqs.prompt_tokens[:count],
        output_tokens=reqs.output_tokens[:count],
        cached_tokens=reqs.cached_tokens[:count],
        clients=0,
    )


def _peak_rate(brief: Brief, shape: ReplicaShape) -> float:
    from planner.capacity import demand

    return demand(brief, shape).request_rate_per_s


def _replicas(peak: float, rate: float) -> int | None:
    return math.ceil(peak / rate) if rate > 0 else None


class _Search(NamedTuple):
    """One probe length's search, with the draws and runs behind it."""

    length: ProbeLength
    per_seed: tuple[float, ...]
    probes: tuple[Probe, ...]
    slot_bound_per_s: float  # median over the draws
    median_capped: bool  # the median draw's answer is its slots' bound


def _search_length(
    brief: Brief,
    shape: ReplicaShape,
    costs: StepCosts,
    units: list[Requests],
    bisections: int,
    on_probe: Callable[[float, float], None],
) -> _Search:
    """For each request draw (unit-rate arrivals), bisect for the highest rate at which its run meets the SLO at the
    percentile slo.attainment_target names (_meets_at_percentile); each draw is capped at the slots' bound."""
    peak = _peak_rate(brief, shape)
    probes: list[Probe] = []
    found: list[float] = []
    bounds: list[float] = []
    at_top = 0
    capped: list[bool] = []
    for unit in units:

        def probe(rate: float, unit: Requests = unit) -> bool:
            got, ok = _attainment_at(brief, costs, unit, rate)
            probes.append(Probe(rate_per_s=rate, slo_attainment=got, ok=ok))
            on_probe(rate, got)
            return ok

        top = _bound_rate(brief, shape, unit) * 1.05
        searched = _bisect(top, bisections, probe)
        bound = _slot_bound_rate(costs, unit)
        found.append(min(searched, bound))
        bounds.append(bound)
        at_top += searched >= top
        capped.append(searched > bound)
    rate = float(np.median(found))
    length = ProbeLength(
        requests=units[0].arrival_s.size,
        max_rate_per_s=rate,
        rate_low_per_s=min(found),
        rate_high_per_s=max(found),
        replicas_needed=_replicas(peak, rate),
        draws_at_top=at_top,
        draws_capped=sum(capped),
        runs=len(probes),
    )
    by_rate = [c for _, c in sorted(zip(found, capped, strict=True))]
    middle = by_rate[(len(by_rate) - 1) // 2 : len(by_rate) // 2 + 1]  # the draw(s) the median is taken from
    return _Search(length, tuple(found), tuple(probes), float(np.median(bounds)), all(middle))


def _relative_change(previous: ProbeLength, last: ProbeLength) -> float:
    if last.max_rate_per_s > 0:
        return abs(last.max_rate_per_s - previous.max_rate_per_s) / last.max_rate_per_s
    return 0.0 if previous.max_rate_per_s == 0 else math.inf


def _stable(lengths: list[ProbeLength], tolerance: float) -> bool:
    """The answer no longer depends on the probe length: the last two lengths need the same replicas, their rates differ
    by at most `tolerance`, and no draw at either met the SLO at the search's top (a run too short to overload)."""
    if len(lengths) < 2:
        return False
    previous, last = lengths[-2:]
    return (
        previous.replicas_needed == last.replicas_needed
        and _relative_change(previous, last) <= tolerance
        and previous.draws_at_top == last.draws_at_top == 0
    )


def max_rate(
    brief: Brief,
    progress: ProgressFn | None = None,
    *,
    requests: int | None = None,
    seed: int = 0,
    seeds: int = 9,
    bisections: int = 12,
    tolerance: float = RATE_TOLERANCE,
    work_limit_tokens: float = MAX_SEARCH_TOKENS,
) -> MaxRateResult:
    """The highest Poisson rate one replica sustains under the SLO, and the fleet it implies.

    At one probe length: for each of `seeds` request draws, bisect for the highest rate at which a run of that
    many requests meets the SLO as the plan defines it, its TTFT and judged gap at the percentile
    slo.attainment_target names (p95) each under its target; the answer is the median over draws
    (one draw's answer swings by a few percent with the draw, the median of several does not).
    A short run hides congestion a long one meets, so without `requests` the probe length doubles from
    max(START_PROBE_REQUESTS, SLOT_FILLS x the slots) until two successive lengths need the same replicas and their
    rates differ by at most `tolerance`, within `work_limit_tokens` over every run (`converged` False when the
    limit stops it first). A given `requests` runs that one length (`converged` None: not checked).
    """
    warm_up()
    start = time.perf_counter()
    shape = _replica(brief)
    costs = _speculative_or_plain_costs(brief, shape, step_costs(brief, shape), seed)
    max_len = min(brief.deployment.max_model_len, costs.kv_capacity_tokens)
    runs = seeds * (bisections + 1)  # simulated runs a length may take
    tokens = _tokens_per_request(brief, SimSettings(), max_len)
    if requests is not None:
        _check_work(requests, tokens, runs, int(work_limit_tokens))
        lengths = [requests]
        limit_reason: StoppedBy = "given probe length"
    else:
        first = _start_requests(brief, costs, tokens, runs, work_limit_tokens)
        lengths, limit_reason = _probe_lengths(first, tokens, runs, work_limit_tokens)
    done, length_now = 0, lengths[0]  # runs so far, against the most the planned lengths may take

    def on_probe(rate: float, got: float) -> None:
        nonlocal done
        done += 1
        if progress is not None:
            text = f"{length_now:,}-request probes: {num(rate, 'req/s')}: {pct(got)} of requests meet the SLO"
            progress(min(done / (runs * len(lengths)), 1.0), text)

    # One draw per seed at the longest length; a shorter probe runs its first requests, so successive lengths share
    # their arrivals (common random numbers) and differ by what the longer run adds, not by a new draw's luck.
    draws = [_requests(brief, SimSettings(requests=lengths[-1], seed=k), 1.0, max_len) for k in range(seed, seed + seeds)]
    searches: list[_Search] = []
    for length_now in lengths:
        units = [_first(draw, length_now) for draw in draws]
        searches.append(_search_length(brief, shape, costs, units, bisections, on_probe))
        if requests is None and _stable([s.length for s in searches], tolerance):
            break
    if progress is not None:
        progress(1.0, "done")
    converged = None if requests is not None else _stable([s.length for s in searches], tolerance)
    stopped_by = "converged" if converged else limit_reason
    work = sum(s.length.requests for s in searches) * runs * tokens
    confidence = _confidence(brief, shape, searches, tolerance, stopped_by, work, work_limit_tokens)
    final = searches[-1]
    return _fleet(brief, shape, final, confidence, converged, time.perf_counter() - start)


def _confidence(
    brief: Brief,
    shape: ReplicaShape,
    searches: list[_Search],
    tolerance: float,
    stopped_by: str,
    work_tokens: float,
    work_limit_tokens: float,
) -> Confidence:
    lengths = tuple(s.length for s in searches)
    last_two = lengths[-2:]
    final = lengths[-1]
    peak = _peak_rate(brief, shape)
    change = _relative_change(*last_two) if len(last_two) == 2 else None
    replicas_range = (_replicas(peak, final.rate_high_per_s), _replicas(peak, final.rate_low_per_s))
    fields = {
        "checked": stopped_by != "given probe length",
        "stopped_by": stopped_by,
        "tolerance": tolerance,
        "requests": tuple(x.requests for x in last_two),
        "rates_per_s": tuple(x.max_rate_per_s for x in last_two),
        "relative_change": change,
        "replicas_needed": tuple(x.replicas_needed for x in last_two),
        "draws": len(searches[-1].per_seed),
        "rate_low_per_s": final.rate_low_per_s,
        "rate_high_per_s": final.rate_high_per_s,
        "replicas_range": replicas_range,
        "slot_bound_per_s": searches[-1].slot_bound_per_s,
        "capped_at_slot_bound": searches[-1].median_capped,
        "work_tokens": work_tokens,
        "work_limit_tokens": work_limit_tokens,
        "lengths": lengths,
    }
    return Confidence.model_validate(fields | {"statement": _statement(fields, final)})


def _replica_text(replicas: tuple[int | None, ...]) -> str:
    shown = ["none" if r is None else str(r) for r in replicas]
    return shown[0] if len(set(shown)) == 1 else "-".join(shown)


def _statement(c: dict[str, Any], final: ProbeLength) -> str:
    """One sentence: how the probe length was chosen, how stable the answer is, what bounds it."""
    tried = ", ".join(f"{x.requests:,}" for x in c["lengths"])
    rates = " -> ".join(num(r, "req/s") for r in c["rates_per_s"])
    replicas = " -> ".join("none" if r is None else str(r) for r in c["replicas_needed"])
    change = "" if c["relative_change"] is None else f" ({pct(c['relative_change'])} vs the {pct(c['tolerance'])} tolerance)"
    if c["stopped_by"] == "converged":
        head = f"converged at {final.requests:,} requests a probe (tried {tried}): {replicas} replicas, {rates}{change}"
    elif c["stopped_by"] == "given probe length":
        head = f"not checked: the probe length was given ({final.requests:,} requests a probe)"
    else:
        why = (
            f"the work limit ({c['work_limit_tokens']:,.0f} tokens over every run)"
            if c["stopped_by"] == "work limit"
            else "the longest probe"
        )
        head = f"not converged: {why} stopped the doubling at {final.requests:,} requests a probe (tried {tried}): replicas {replicas}, {rates}{change}"
    spread = (
        f"; its {c['draws']} draws span {num(c['rate_low_per_s'])}-{num(c['rate_high_per_s'], 'req/s')}"
        f" ({_replica_text(c['replicas_range'])} replicas)"
    )
    notes = ""
    if c["capped_at_slot_bound"]:
        notes += f"; the answer is the slots' bound ({num(c['slot_bound_per_s'], 'req/s')}, Little's law), no run overloaded below it"
    if final.draws_at_top:
        notes += f"; {final.draws_at_top} draws met the SLO at the search's top (1.05 x the compute bound): too short a probe to overload"
    return head + spread + notes


def _two_pool_gpus(brief: Brief, shape: ReplicaShape, decode_replicas: int, decode_load: float) -> tuple[int, str]:
    """GPUs of `decode_replicas` decode replicas and the prefill replicas that feed them: the run fed one decode replica
    from P/D prefill replicas (the plan's split), so a prefill replica carries rate x D/P; the pool is sized on the
    load itself (`decode_load`: peak / rate x (1 + headroom), in decode replicas' worth), not on the rounded-up decode
    count, which would round twice (ceil(5 x 12/4) = 15 where ceil(4.07 x 12/4) = 13 carry it)."""
    from planner.core import core_design

    dis = core_design(brief, curves=False, capacity=False).disaggregation
    assert dis is not None
    ratio = f"{dis.prefill_replicas}/{dis.decode_replicas}"
    prefill = math.ceil(decode_load * dis.prefill_replicas / dis.decode_replicas - 1e-9)
    gpus = decode_replicas * shape.gpus + prefill * dis.prefill_tp
    return gpus, (
        f"{decode_replicas} decode replicas x {shape.gpus} GPUs + ceil({num(decode_load)} x {ratio}) = {prefill} prefill replicas"
        f" x {dis.prefill_tp} GPUs = {gpus} GPUs (the rate is a decode replica's, fed by {ratio} prefill replicas in the run:"
        " the prefill pool is sized on the same load, each prefill replica carrying its share of the rate)"
    )


def _as_the_plan(target: float) -> str:
    """How the search's percentile stands to the plan's: the same figures the plan judges at p95 (mechanisms.ignored_fields)."""
    from planner.mechanisms import PLAN_PERCENTILE

    if target == PLAN_PERCENTILE:
        return "as the plan judges them"
    return (
        f"the figures the plan judges at p95 (its latency model's percentile: `plan` lists slo.attainment_target as not used),"
        f" read here at the {_percentile_name(target)} the brief states"
    )


def _percentile_name(q: float) -> str:
    """p95 for 0.95, p99.9 for 0.999."""
    return f"p{num(q * 100)}"


def _fleet(
    brief: Brief, shape: ReplicaShape, final: _Search, confidence: Confidence, converged: bool | None, wall_s: float
) -> MaxRateResult:
    from planner.cost import per_million

    rate, requests, per_seed, probes = final.length.max_rate_per_s, final.length.requests, final.per_seed, final.probes
    target = brief.slo.attainment_target
    peak = _peak_rate(brief, shape)
    headroom = brief.slo.sizing_headroom
    arithmetic = {
        "max_rate_per_s": (
            f"median over {len(per_seed)} request draws of the highest rate at which a run of {requests:,} Poisson requests has"
            f" its {_percentile_name(target)} TTFT <= {num(brief.slo.ttft_p95_ms, 'ms')} (end to end, prompts up to the TTFT cap)"
            f" and its {_percentile_name(target)} {'per-token ITL' if brief.slo.itl_metric is ItlMetric.itl else 'TPOT'}"
            f" <= {num(brief.slo.itl_p95_ms, 'ms')}, {_as_the_plan(target)}"
            + f" (bisection, {len(probes)} simulated runs): median({', '.join(num(r) for r in sorted(per_seed))}) = {num(rate, 'req/s')}"
            + (
                f"; draws capped at the slots' bound, slots / (output tokens x the step at that batch) (Little's law: the {requests:,}"
                " requests do not overload the batch slots in a run, so the run cannot show the overload a longer one would)"
                if final.length.draws_capped
                else ""
            )
        ),
        "probe_requests": confidence.statement,
    }
    deadline = brief.objective.kind is not ObjectiveKind.latency
    if deadline:
        arithmetic["judged_by"] = (
            "this design is judged on its deadline, not on latency: the search reads the brief's latency targets for"
            " reference, and the fleet below is what they would need; `plan` sizes the design by its deadline"
        )
    if rate <= 0:
        arithmetic["replicas_needed"] = "no rate meets the SLO on this replica: change the replica (TP, precision, GPU) or the targets"
        needed = with_headroom = gpus = None
        usd_hour = usd_per_m = None
    else:
        needed = math.ceil(peak / rate)
        with_headroom = math.ceil(peak / rate * (1 + headroom))
        gpus = with_headroom * shape.gpus  # a PP replica's micro-batch stream: its share, TP GPUs (whole replicas on the fleet)
        gpus_text = f"{with_headroom} replicas x {shape.gpus} GPUs = {gpus} GPUs"
        if brief.disaggregation.enabled:  # a decode replica with its share of the prefill pool, in the plan's split
            gpus, gpus_text = _two_pool_gpus(brief, shape, with_headroom, peak / rate * (1 + headroom))
        usd_hour = gpus * brief.cost.usd_per_gpu_hour
        usd_per_m = per_million(usd_hour, peak * brief.workload.output_tokens_mean * 3600)
        arithmetic |= {
            "replicas_needed": f"ceil({num(peak, 'req/s')} peak / {num(rate, 'req/s')}) = {needed}",
            "replicas_with_headroom": f"ceil({num(peak, 'req/s')} / {num(rate, 'req/s')} x (1 + {pct(headroom)} headroom)) = {with_headroom}",
            "gpus": gpus_text,
            "usd_per_hour": f"{gpus} GPUs x {usd(brief.cost.usd_per_gpu_hour)} = {usd(usd_hour)} per hour",
            "usd_per_million_output_tokens": (
                f"{usd(usd_hour)} / ({num(peak, 'req/s')} x {num(brief.workload.output_tokens_mean, 'tokens')} x 3,600 s) x 1e6"
                f" = {usd(usd_per_m)} per M output tokens at peak"
            ),
        }
    return MaxRateResult(
        judged_by_deadline=deadline,
        max_rate_per_s=rate,
        peak_rate_per_s=peak,
        attainment_target=target,
        headroom=headroom,
        replicas_needed=needed,
        replicas_with_headroom=with_headroom,
        gpus=gpus,
        usd_per_hour=usd_hour,
        usd_per_million_output_tokens=usd_per_m,
        requests_per_probe=requests,
        max_rate_per_seed=per_seed,
        probes=probes,
        wall_ms=wall_s * 1e3,
        arithmetic=arithmetic,
        probe_requests=requests,
        probe_lengths_tried=tuple(x.requests for x in confidence.lengths),
        converged=converged,
        confidence=confidence,
    )
