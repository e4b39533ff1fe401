"""Step 5 of the method: the SLO budget. TTFT and ITL as waterfalls, their p50 and p95, and trade-offs.

The latency model of one serving replica of the general pool (spares excluded, as the operating point):
- Arrivals are Poisson at rate r = request rate / serving replicas.
- Running batch B: the sequences generating on the replica (users basis: generating / serving replicas;
  request-rate basis: the operating point's in-flight count), capped by max-num-seqs. Sequences over
  the cap wait for a slot: Erlang C with max-num-seqs slots, each held for a reply's generation time.
- Decode tokens come first in every engine step and a prompt's chunk rides in the same step
  (vLLM's chunked-prefill policy), so decode work does not hold prompts back: prompts queue for the
  prefill slot of the engine steps, FCFS (M/G/1). A prompt holds it for S = its chunks' engine steps
  (decode step + scheduler each) + uncached tokens / prefill throughput, with the token part's
  variability from the brief's prompt lengths (a gamma distribution with the brief's mean and p95):
  W = r E[S^2] / (2 (1 - rho)), rho = r E[S], plus half a step for the step in progress when the
  slot is free. (Checked against the step-level simulator: docs/crosscheck.md. Treating decode as a
  higher-priority class that holds prompts back counts the decode's memory time twice: in a mixed
  step it hides under the chunk's compute.)
- A prompt's prefill runs in chunks of (max-num-batched-tokens - B) tokens, one chunk per engine step,
  each step also running the batch's decode: n chunks x (decode step + scheduler) + tokens / prefill rate.
- TPOT of a reply = (decode step + scheduler) / (1 - prefill share of GPU time during its lifetime).
"""

from __future__ import annotations

import math
from functools import lru_cache

from pydantic import BaseModel, ConfigDict

from planner.brief import Brief
from planner.fmt import num, pct
from planner.operating_point import context_tokens, effective_hit_rate
from planner.replica import ReplicaShape

__all__ = [
    "P95_Z",
    "LatencyPoint",
    "SloBudget",
    "TradeoffPoint",
    "WaterfallStep",
    "latency_point",
    "length_cv2",
    "slo_budget",
]

P95_Z = 1.645  # standard normal 95th percentile
_MAX_SHARE = 0.999


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class WaterfallStep(_Model):
    component: str
    ms: float


class TradeoffPoint(_Model):
    x: float  # the engine limit's value (tokens or sequences)
    ttft_p95_ms: float
    itl_p95_ms: float
    longest_step_ms: float  # one engine step carrying a full prefill chunk: the worst single token gap


class LatencyPoint(_Model):
    """Every intermediate figure of the latency model at one load and one engine configuration."""

    rate_per_replica_per_s: float
    load_batch: float  # sequences the load puts on the replica (before the max-num-seqs cap)
    running_batch: float
    running_batch_p95: float
    hold_s: float  # how long a sequence holds a batch slot
    decode_step_ms: float  # at the running batch
    decode_step_p95_ms: float  # at the p95 running batch
    scheduler_ms: float
    uncached_tokens_mean: float
    service_cv2: float
    prefill_service_ms: float  # mean uncached prompt / prefill throughput
    rho_prefill: float
    rho_decode: float
    rho: float
    prefill_slot_busy: float  # utilization of the prefill slot prompts queue for
    priority_wait_ms: float
    admission_wait_ms: float
    queue_wait_ms: float
    cap_uncached_tokens: float
    chunk_tokens: float
    chunks: float
    prefill_stage_ms: float
    fixed_ms: float
    ttft_mean_ms: float
    ttft_p50_ms: float
    ttft_p95_ms: float
    rho_prefill_p95: float
    itl_interference_ms: float
    itl_p50_ms: float
    itl_p95_ms: float
    longest_step_ms: float


class SloBudget(_Model):
    """p50/p95 TTFT and ITL against the targets, with their waterfalls, model and trade-off curves."""

    ttft_p50_ms: float
    ttft_p95_ms: float
    ttft_mean_ms: float
    itl_p50_ms: float
    itl_p95_ms: float
    ttft_target_ms: float
    itl_target_ms: float
    ttft_input_cap_tokens: int
    ttft_ok: bool
    itl_ok: bool
    ttft_waterfall: tuple[WaterfallStep, ...]
    itl_waterfall: tuple[WaterfallStep, ...]
    queue_model: str
    percentile_method: str
    basis: str  # which load the headline figures assume, and the worked design's basis beside them
    point: LatencyPoint
    cold_load_point: LatencyPoint  # the other requests' prefill load as if nothing hit the cache (the worked design's basis)
    tradeoff_batched_tokens: tuple[TradeoffPoint, ...]
    tradeoff_max_num_seqs: tuple[TradeoffPoint, ...]
    arithmetic: dict[str, str]


def _basis_text(cold: LatencyPoint) -> str:
    return (
        "Headline figures load each serving replica at the brief's prefix hit rate (the basis of capacity.utilization)."
        " The worked design's basis counts the other requests' prefill as if nothing hit the cache (slo.cold_load_point):"
        f" TTFT mean {num(cold.ttft_mean_ms, 'ms')}, p50 {num(cold.ttft_p50_ms, 'ms')}, p95 {num(cold.ttft_p95_ms, 'ms')};"
        f" ITL p50 {num(cold.itl_p50_ms, 'ms')}, p95 {num(cold.itl_p95_ms, 'ms')}."
    )


# --- length variability -----------------------------------------------------------------------------


def _gamma_cdf(shape: float, x: float) -> float:
    """Regularized lower incomplete gamma P(shape, x), by its power series."""
    if x <= 0:
        return 0.0
    term = 1.0 / shape
    total = term
    for n in range(1, 4000):
        term *= x / (shape + n)
        total += term
        if term < total * 1e-12:
            break
    return math.exp(shape * math.log(x) - x - math.lgamma(shape)) * total


@lru_cache(maxsize=512)
def length_cv2(mean: float, p95: float) -> float:
    """Squared coefficient of variation of a gamma distribution with this mean and 95th percentile."""
    ratio = p95 / mean
    if ratio <= 1.0 + 1e-9:
        return 0.0
    low, high = 1e-3, 1e4  # gamma shape k; CV^2 = 1 / k
    for _ in range(80):
        k = math.sqrt(low * high)
        if _gamma_cdf(k, ratio * k) > 0.95:
            high = k
        else:
            low = k
    return 1.0 / math.sqrt(low * high)


# --- queueing pieces --------------------------------------------------------------------------------


def _erlang_c_wait_s(offered: float, slots: int, hold_s: float) -> float:
    """Mean wait for a batch slot (M/M/c, c = slots, offered load in sequences); inf when offered >= slots."""
    if offered <= 0:
        return 0.0
    if offered >= slots:
        return math.inf
    blocking = 1.0
    for k in range(1, slots + 1):  # Erlang B by its stable recursion
        blocking = offered * blocking / (k + offered * blocking)
    waiting = slots * blocking / (slots - offered * (1 - blocking))
    return waiting * hold_s / (slots - offered)


def _wait_quantile_s(mean_s: float, busy: float, p: float, tail_shape: float = 1.0) -> float:
    """Quantile of a wait with an atom at zero (1 - busy) and a gamma tail of the given mean and shape (1: exponential)."""
    if mean_s <= 0 or busy <= 0:
        return 0.0
    if not math.isfinite(mean_s):
        return math.inf
    busy = min(busy, 1.0)
    if p <= 1 - busy:
        return 0.0
    tail_mean = mean_s / busy
    q = (p - (1 - busy)) / busy  # the quantile within the waits that are not zero
    if tail_shape == 1.0:
        return tail_mean * -math.log(1 - q)
    scale = tail_mean / tail_shape
    low, high = 0.0, tail_mean
    while _gamma_cdf(tail_shape, high / scale) < q:
        high *= 2
    for _ in range(40):  # 1e-12 of the tail mean
        mid = (low + high) / 2
        low, high = (mid, high) if _gamma_cdf(tail_shape, mid / scale) < q else (low, mid)
    return high


def _mg1_tail_shape(rate: float, rho: float, wait_s: float, steps_s: float, service_s: float, cv2: float) -> float:
    """Gamma shape of the M/G/1 wait given it is not zero, from its first two moments (Takacs).

    E[W^2] = 2 E[W]^2 + r E[S^3] / (3 (1 - rho)); S = the chunk steps + a gamma-distributed prefill time.
    Exponential (shape 1) for exponential service; wider for heavy-tailed prompts, narrower for fixed ones.
    """
    if not (0 < rho < 1) or wait_s <= 0:
        return 1.0
    x2 = service_s**2 * (1 + cv2)
    x3 = service_s**3 * (1 + cv2) * (1 + 2 * cv2)
    s3 = steps_s**3 + 3 * steps_s**2 * service_s + 3 * steps_s * x2 + x3
    w2 = 2 * wait_s**2 + rate * s3 / (3 * (1 - rho))
    m1, m2 = wait_s / rho, w2 / rho
    var = m2 - m1 * m1
    return min(m1 * m1 / var, 1e3) if var > 0 else 1e3


def _prompt_chunks(tokens: float, room: float) -> float:
    """Engine steps a prompt of `tokens` uncached tokens is prefilled over, `room` tokens a step."""
    if room <= 0:
        return math.inf
    return max(math.ceil(tokens / room), 1) if math.isfinite(room) and tokens > 0 else 1.0


def latency_point(
    brief: Brief,
    shape: ReplicaShape,
    rate_per_replica: float,
    load_batch: float,
    *,
    hit_rate: float | None = None,
    load_hit_rate: float | None = None,
    max_num_seqs: int | None = None,
    max_num_batched_tokens: int | None = None,
) -> LatencyPoint:
    """The latency model at one load; engine limits and hit rate default to the brief's.

    `load_hit_rate` changes only the other requests' prefill load (the queue and the ITL interference),
    keeping the measured request's own prompt at `hit_rate`.
    """
    w, dep, lat = brief.workload, brief.deployment, brief.latency
    hit = effective_hit_rate(brief) if hit_rate is None else hit_rate
    seqs = dep.max_num_seqs if max_num_seqs is None else max_num_seqs
    budget = dep.max_num_batched_tokens if max_num_batched_tokens is None else max_num_batched_tokens
    read, _ = context_tokens(brief)
    rate = rate_per_replica
    sched_s = lat.scheduler_ms / 1e3
    hold_s = load_batch / rate if rate > 0 else 0.0
    batch = min(load_batch, float(seqs))
    batch_p95 = min(load_batch + P95_Z * math.sqrt(max(load_batch, 0.0)), float(seqs))
    step_s = shape.decode_step_real_s(max(batch, 1.0), read)
    step_p95_s = shape.decode_step_real_s(max(batch_p95, 1.0), read)
    prefill_rate = shape.prefill_tokens_per_s
    load_hit = hit if load_hit_rate is None else load_hit_rate
    uncached = w.input_tokens_mean * (1 - load_hit)
    cv2 = length_cv2(w.input_tokens_mean, w.input_tokens_p95)
    service_s = uncached / prefill_rate
    rho_p = rate * service_s
    rho_d = rate * w.output_tokens_mean * step_s / max(batch, 1.0)
    room = budget - batch if dep.chunked_prefill else math.inf
    steps_s = _prompt_chunks(uncached, room) * (step_s + sched_s)  # engine steps a mean prompt's chunks ride in
    rho = rho_p + rho_d  # share of GPU time prefill and decode take together
    slot = rate * (steps_s + service_s)  # utilization of the prefill slot
    second_s2 = steps_s**2 + 2 * steps_s * service_s + service_s**2 * (1 + cv2)  # E[S^2]
    priority_s = rate * second_s2 / (2 * (1 - slot)) if slot < 1 else math.inf  # M/G/1 FCFS
    step_wait_s = (1 - min(slot, 1.0)) * step_s / 2  # a free slot still waits for the step in progress
    admission_s = _erlang_c_wait_s(load_batch, seqs, hold_s)
    queue_s = priority_s + admission_s + step_wait_s
    cap_tokens = min(float(brief.slo.ttft_input_cap_tokens), w.input_tokens_p95) * (1 - hit)
    if room <= 0:
        chunk, chunks, stage_s = 0.0, math.inf, math.inf
    else:
        chunk = min(room, cap_tokens)
        chunks = max(math.ceil(cap_tokens / room), 1) if cap_tokens > 0 else 1
        stage_s = chunks * (step_s + sched_s) + cap_tokens / prefill_rate
    fixed_ms = lat.network_ms + lat.gateway_ms + lat.tokenization_ms + lat.first_sample_ms + lat.first_write_ms
    busy = min(slot, 1.0)
    ttft_mean = fixed_ms + (queue_s + stage_s) * 1e3
    tail = _mg1_tail_shape(rate, slot, priority_s, steps_s, service_s, cv2)
    ttft_p50 = fixed_ms + (stage_s + step_wait_s + _wait_quantile_s(queue_s - step_wait_s, busy, 0.50, tail)) * 1e3
    ttft_p95 = fixed_ms + (stage_s + step_wait_s + _wait_quantile_s(queue_s - step_wait_s, busy, 0.95, tail)) * 1e3
    # the prefill share a reply sees over its lifetime: compound Poisson work, normal approximation
    tpot_mean_s = (step_s + sched_s) / (1 - min(rho_p, _MAX_SHARE))
    arrivals = rate * w.output_tokens_mean * tpot_mean_s
    spread = math.sqrt((1 + cv2) / arrivals) if arrivals > 0 else 0.0
    rho_p95 = min(rho_p * (1 + P95_Z * spread), _MAX_SHARE)
    itl_p50 = (step_s + sched_s) / (1 - rho_p) if rho_p < 1 else math.inf
    itl_p95 = (step_p95_s + sched_s) / (1 - rho_p95) if rho_p < 1 else math.inf
    full_chunk = min(room, w.input_tokens_p95 * (1 - hit)) if math.isfinite(room) else w.input_tokens_p95 * (1 - hit)
    longest = step_p95_s + sched_s + max(full_chunk, 0.0) / prefill_rate
    return LatencyPoint(
        rate_per_replica_per_s=rate,
        load_batch=load_batch,
        running_batch=batch,
        running_batch_p95=batch_p95,
        hold_s=hold_s,
        decode_step_ms=step_s * 1e3,
        decode_step_p95_ms=step_p95_s * 1e3,
        scheduler_ms=lat.scheduler_ms,
        uncached_tokens_mean=uncached,
        service_cv2=cv2,
        prefill_service_ms=service_s * 1e3,
        rho_prefill=rho_p,
        rho_decode=rho_d,
        rho=rho,
        prefill_slot_busy=slot,
        priority_wait_ms=priority_s * 1e3,
        admission_wait_ms=admission_s * 1e3,
        queue_wait_ms=queue_s * 1e3,
        cap_uncached_tokens=cap_tokens,
        chunk_tokens=chunk,
        chunks=chunks,
        prefill_stage_ms=stage_s * 1e3,
        fixed_ms=fixed_ms,
        ttft_mean_ms=ttft_mean,
        ttft_p50_ms=ttft_p50,
        ttft_p95_ms=ttft_p95,
        rho_prefill_p95=rho_p95,
        itl_interference_ms=(itl_p50 - step_s - sched_s) * 1e3,
        itl_p50_ms=itl_p50 * 1e3,
        itl_p95_ms=itl_p95 * 1e3,
        longest_step_ms=longest * 1e3,
    )


# --- the budget -------------------------------------------------------------------------------------


def _batched_token_values(current: int, batch: float) -> list[int]:
    values = {256, 512, 1024, 2048, 4096, 8192, 16384, current}
    return sorted(v for v in values if v > batch or v == current)


def _max_num_seqs_values(current: int, load_batch: float) -> list[int]:
    values = {current}
    if math.isfinite(load_batch):  # an overloaded replica (infinite batch) has no batch to size for
        values.add(max(math.ceil(load_batch * 1.05), 1))
    values |= {max(round(current * f), 1) for f in (0.5, 0.75, 0.875, 1.25, 1.5, 2.0, 3.0)}
    return sorted(values)


def _tradeoff(points: list[tuple[int, LatencyPoint]]) -> tuple[TradeoffPoint, ...]:
    return tuple(
        TradeoffPoint(x=x, ttft_p95_ms=p.ttft_p95_ms, itl_p95_ms=p.itl_p95_ms, longest_step_ms=p.longest_step_ms) for x, p in points
    )


def slo_budget(brief: Brief, shape: ReplicaShape, rate_per_replica: float, load_batch: float, basis: str, curves: bool = True) -> SloBudget:
    """The SLO budget of one serving replica; `basis` says where load_batch comes from (for the arithmetic).

    `curves=False` leaves the trade-off curves empty: re-plans that read only the verdict (failure modes) skip them.
    """
    slo, lat = brief.slo, brief.latency
    p = latency_point(brief, shape, rate_per_replica, load_batch)
    cold = latency_point(brief, shape, rate_per_replica, load_batch, load_hit_rate=0.0)
    dep = brief.deployment
    tokens_curve = [
        (v, latency_point(brief, shape, rate_per_replica, load_batch, max_num_batched_tokens=v))
        for v in (_batched_token_values(dep.max_num_batched_tokens, p.running_batch) if curves else ())
    ]
    seqs_curve = [
        (
            v,
            latency_point(
                brief, shape, rate_per_replica, load_batch, max_num_seqs=v, max_num_batched_tokens=max(dep.max_num_batched_tokens, v + 1)
            ),
        )
        for v in (_max_num_seqs_values(dep.max_num_seqs, load_batch) if curves else ())
    ]
    ttft_waterfall = (
        WaterfallStep(component="network round trip", ms=lat.network_ms),
        WaterfallStep(component="gateway: auth, rate limit, route", ms=lat.gateway_ms),
        WaterfallStep(component="tokenization", ms=lat.tokenization_ms),
        WaterfallStep(component="queue wait (mean)", ms=p.queue_wait_ms),
        WaterfallStep(component="prefill of uncached tokens, chunked with decode", ms=p.prefill_stage_ms),
        WaterfallStep(component="first sample", ms=lat.first_sample_ms),
        WaterfallStep(component="first streamed write", ms=lat.first_write_ms),
    )
    itl_waterfall = (
        WaterfallStep(component=f"decode step at batch {num(p.running_batch)}", ms=p.decode_step_ms),
        WaterfallStep(component="chunked-prefill interference", ms=p.itl_interference_ms),
        WaterfallStep(component="scheduler and sampling", ms=lat.scheduler_ms),
    )
    return SloBudget(
        ttft_p50_ms=p.ttft_p50_ms,
        ttft_p95_ms=p.ttft_p95_ms,
        ttft_mean_ms=p.ttft_mean_ms,
        itl_p50_ms=p.itl_p50_ms,
        itl_p95_ms=p.itl_p95_ms,
        ttft_target_ms=slo.ttft_p95_ms,
        itl_target_ms=slo.itl_p95_ms,
        ttft_input_cap_tokens=slo.ttft_input_cap_tokens,
        ttft_ok=p.ttft_p95_ms <= slo.ttft_p95_ms,
        itl_ok=p.itl_p95_ms <= slo.itl_p95_ms,
        ttft_waterfall=ttft_waterfall,
        itl_waterfall=itl_waterfall,
        queue_model=_queue_model_text(p),
        percentile_method=_percentile_text(),
        basis=_basis_text(cold),
        point=p,
        cold_load_point=cold,
        tradeoff_batched_tokens=_tradeoff(tokens_curve),
        tradeoff_max_num_seqs=_tradeoff(seqs_curve),
        arithmetic=_arithmetic(brief, p, cold, basis),
    )


def _queue_model_text(p: LatencyPoint) -> str:
    return (
        "M/G/1 queue for the prefill slot per serving replica (session affinity pins a conversation to one replica,"
        " so replicas do not pool their queues): Poisson arrivals; decode tokens run first in every engine step and a"
        " prompt's chunk rides in the same step, so prompts wait only for the prompts ahead (FCFS) and the step in"
        " progress; service = the engine steps a prompt's chunks ride in + uncached prompt tokens / prefill throughput,"
        f" the token part's variability from a gamma distribution with the brief's prompt mean and p95 (CV² {num(p.service_cv2)});"
        " plus an Erlang C wait for a batch slot when the running sequences approach max-num-seqs."
        " The TTFT is for a prompt at the target's input cap, the longest prompt the target covers."
    )


def _percentile_text() -> str:
    return (
        "TTFT: the queue wait is zero with probability 1 - utilization and gamma-distributed above it, with the M/G/1"
        " wait's first two moments (Takacs: exponential for exponential service, wider for heavy-tailed prompts, narrower"
        " for fixed ones); p50 and p95 are that distribution's quantiles plus the fixed parts, half a step and the"
        " prefill. ITL (TPOT per reply): p50 at the mean running batch and mean prefill share; p95 at the p95 running"
        " batch (Poisson: B + 1.645 √B, capped at max-num-seqs) and the p95 prefill share over a reply's lifetime"
        " (compound-Poisson prefill work, normal approximation)."
    )


def _arithmetic(brief: Brief, p: LatencyPoint, cold: LatencyPoint, basis: str) -> dict[str, str]:
    w, lat, slo = brief.workload, brief.latency, brief.slo
    hit = effective_hit_rate(brief)
    inf_note = " (no fixed point: the queue grows without bound)"
    return {
        "rate_per_replica_per_s": f"{num(p.rate_per_replica_per_s, 'req/s')} per serving replica",
        "running_batch": (
            f"{basis} = {num(p.load_batch)} sequences; capped at max-num-seqs {brief.deployment.max_num_seqs} -> {num(p.running_batch)};"
            f" p95 {num(p.load_batch)} + 1.645 x √{num(p.load_batch)} = {num(p.running_batch_p95)} (capped)"
        ),
        "rho": (
            f"prefill compute {num(p.rate_per_replica_per_s, 'req/s')} x {num(p.prefill_service_ms, 'ms')} = {pct(p.rho_prefill)};"
            f" decode {num(p.rate_per_replica_per_s, 'req/s')} x {num(w.output_tokens_mean)} tokens x {num(p.decode_step_ms, 'ms')}"
            f" / {num(p.running_batch)} = {pct(p.rho_decode)}; total {pct(p.rho)}. Prefill slot busy {pct(p.prefill_slot_busy)}"
            f" ({num(p.rate_per_replica_per_s, 'req/s')} x (the engine steps of a prompt's chunks + {num(p.prefill_service_ms, 'ms')}))"
        ),
        "queue_wait_ms": (
            f"W = {num(p.rate_per_replica_per_s)} x E[S²] / (2 x (1 - {pct(p.prefill_slot_busy)}))"
            f" = {num(p.priority_wait_ms, 'ms')} (S: chunk steps + {num(p.prefill_service_ms, 'ms')} prefill, CV² {num(p.service_cv2)} on the prefill part);"
            f" + slot wait {num(p.admission_wait_ms, 'ms')} + (1 - {pct(p.prefill_slot_busy)}) x {num(p.decode_step_ms, 'ms')} / 2 for the step in progress"
            f" = {num(p.queue_wait_ms, 'ms')}" + ("" if math.isfinite(p.queue_wait_ms) else inf_note)
        ),
        "prefill_stage_ms": (
            f"{num(min(slo.ttft_input_cap_tokens, w.input_tokens_p95), 'tokens')} at the cap x (1 - {pct(hit)} hits) = {num(p.cap_uncached_tokens, 'tokens')};"
            f" {num(p.chunks)} chunk(s) of up to {num(p.chunk_tokens)} x ({num(p.decode_step_ms, 'ms')} step + {num(lat.scheduler_ms, 'ms')})"
            f" + {num(p.cap_uncached_tokens)} / {num(p.uncached_tokens_mean / p.prefill_service_ms * 1e3 if p.prefill_service_ms > 0 else 0, 'tok/s')}"
            f" = {num(p.prefill_stage_ms, 'ms')}"
        ),
        "ttft_mean_ms": (
            f"{num(lat.network_ms)} + {num(lat.gateway_ms)} + {num(lat.tokenization_ms)} + queue {num(p.queue_wait_ms)}"
            f" + prefill {num(p.prefill_stage_ms)} + {num(lat.first_sample_ms)} + {num(lat.first_write_ms)} = {num(p.ttft_mean_ms, 'ms')}"
        ),
        "ttft_p95_ms": (
            f"{num(p.fixed_ms, 'ms')} fixed + {num(p.prefill_stage_ms, 'ms')} prefill + queue p95"
            f" {num(p.ttft_p95_ms - p.fixed_ms - p.prefill_stage_ms, 'ms')} = {num(p.ttft_p95_ms, 'ms')} vs target {num(slo.ttft_p95_ms, 'ms')}"
        ),
        "itl_p50_ms": (
            f"({num(p.decode_step_ms, 'ms')} step + {num(lat.scheduler_ms, 'ms')}) / (1 - {pct(p.rho_prefill)} prefill) = {num(p.itl_p50_ms, 'ms')}"
        ),
        "itl_p95_ms": (
            f"({num(p.decode_step_p95_ms, 'ms')} step at batch {num(p.running_batch_p95)} + {num(lat.scheduler_ms, 'ms')})"
            f" / (1 - {pct(p.rho_prefill_p95)} p95 prefill share) = {num(p.itl_p95_ms, 'ms')} vs target {num(slo.itl_p95_ms, 'ms')}"
        ),
        "longest_step_ms": (
            f"{num(p.decode_step_p95_ms, 'ms')} + {num(lat.scheduler_ms, 'ms')} + a full chunk of prefill = {num(p.longest_step_ms, 'ms')}"
            " (a single token gap, not the TPOT)"
        ),
        "cold_load": (
            f"other requests' prompts all uncached (load as in the worked design's budget), this prompt cached as configured: queue {num(cold.queue_wait_ms, 'ms')}, TTFT mean {num(cold.ttft_mean_ms, 'ms')},"
            f" p95 {num(cold.ttft_p95_ms, 'ms')}; ITL p50 {num(cold.itl_p50_ms, 'ms')}, p95 {num(cold.itl_p95_ms, 'ms')}"
        ),
    }
