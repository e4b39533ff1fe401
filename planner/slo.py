"""Step 5 of the method: the SLO budget. TTFT and ITL as waterfalls, their p50 and p95, and trade-offs.

The latency model of one general-pool replica (long-context and spare nodes excluded):
- Arrivals are Poisson at rate r = the general pool's request rate / its replicas.
- Running batch B: the sequences the operating point keeps in flight (Little's law), capped by
  max-num-seqs. Sequences over the cap wait for a slot: Erlang C with max-num-seqs slots.
- Decode tokens come first in every engine step and a prompt's chunk rides in the same step
  (vLLM's chunked-prefill policy), so decode work does not hold prompts back: prompts queue for the
  prefill slot of the engine steps, FCFS (M/G/1). A step costs max(compute of its tokens, bytes it
  reads) + fixed time, as in the simulator, so a prompt of u uncached tokens in k chunks holds the
  slot for S = k (fixed + scheduler) + max(u / prefill rate + k B / prefill rate, k x the step's
  memory time): the chunk's compute hides the decode's weight and KV reads. u follows the brief's
  prompt lengths (a gamma distribution with its mean and p95) clipped at max-model-len, the longest
  prompt the pool admits. W = r E[S^2] / (2 (1 - rho)), rho = r E[S], plus half a step for the step in
  progress when the slot is free; the wait's tail is a gamma with its first two moments (Takacs).
  Checked against the simulator's measured waits: docs/crosscheck.md.
- Load basis (brief.slo.queue_basis): the other requests' prompts either all miss the prefix cache
  (cold_cache: the budget holds through a cache flush, a rolling restart or a failover) or hit it at
  the brief's rate; the measured prompt is cached at the brief's rate either way.
- The measured prompt (at the target's input cap) is prefilled in chunks of max-num-batched-tokens - B,
  one per engine step, each step costed as above.
- TPOT of a reply = (decode step + scheduler) / (1 - interference share during its lifetime), the
  interference share being the time prompts' steps take beyond the decode steps they stand in for
  (a mixed step also emits the batch's tokens): rate x (E[S] - chunks x (decode step + scheduler)).
"""

from __future__ import annotations

import math
from functools import lru_cache

from pydantic import BaseModel, ConfigDict

from planner.brief import Brief, QueueBasis
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
    "queue_load_hit_rate",
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
    step_fixed_ms: float  # per engine step whatever it carries: fixed overhead + scheduler
    step_memory_ms: float  # the batch's weight and KV reads in a step (hidden under a prefill chunk's compute)
    load_hit_rate: float  # the other requests' prefix hit rate (the queue basis)
    uncached_tokens_mean: float
    service_cv2: float
    prefill_service_ms: float  # mean uncached prompt / prefill throughput
    rho_prefill: float
    rho_decode: float
    rho: float
    slot_service_ms: float  # mean time a prompt holds the prefill slot: its chunk steps
    prefill_slot_busy: float  # utilization of the prefill slot prompts queue for
    prompt_wait_ms: float  # M/G/1 wait for the prompts ahead
    admission_wait_ms: float
    queue_wait_ms: float
    chunks_mean: float  # engine steps a mean prompt's chunks ride in
    cap_uncached_tokens: float
    chunk_tokens: float
    chunks: float
    prefill_stage_ms: float
    fixed_ms: float
    ttft_mean_ms: float
    ttft_p50_ms: float
    ttft_p95_ms: float
    rho_interference: float  # GPU time prompts' steps take beyond the decode steps they stand in for
    rho_interference_p95: float  # ... at its p95 over a reply's lifetime
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
    queue_basis: QueueBasis  # the prefix-cache state the other requests' prefill load assumes (brief.slo.queue_basis)
    basis: str  # the headline's basis in words, with the other basis's figures beside it
    point: LatencyPoint  # the headline figures
    alternate_point: LatencyPoint  # the same replica on the other queue basis
    tradeoff_batched_tokens: tuple[TradeoffPoint, ...]
    tradeoff_max_num_seqs: tuple[TradeoffPoint, ...]
    arithmetic: dict[str, str]

    def at_hit_rate(self) -> LatencyPoint:
        """The point whose other requests hit the prefix cache at the brief's rate (capacity.utilization's basis)."""
        return self.point if self.queue_basis is QueueBasis.hit_rate else self.alternate_point


def queue_load_hit_rate(brief: Brief, basis: QueueBasis | None = None) -> float:
    """The prefix hit rate of the other requests' prompts on a queue basis (the brief's by default)."""
    basis = brief.slo.queue_basis if basis is None else basis
    return 0.0 if basis is QueueBasis.cold_cache else effective_hit_rate(brief)


def _other_basis(basis: QueueBasis) -> QueueBasis:
    return QueueBasis.hit_rate if basis is QueueBasis.cold_cache else QueueBasis.cold_cache


_BASIS_WORDS = {
    QueueBasis.cold_cache: "the other requests' prompts all miss the prefix cache (cold cache: a flush, a rolling restart, a failover)",
    QueueBasis.hit_rate: "the other requests' prompts hit the prefix cache at the brief's rate",
}


def _basis_text(brief: Brief, headline: LatencyPoint, other: LatencyPoint) -> str:
    basis = brief.slo.queue_basis
    text = f"Headline figures (slo.queue_basis = {basis.value}): {_BASIS_WORDS[basis]}; the measured prompt is cached at the brief's rate."
    if effective_hit_rate(brief) == 0:
        return text + " With no prefix hits the two bases are the same."
    return text + (
        f" On the other basis ({_other_basis(basis).value}: {_BASIS_WORDS[_other_basis(basis)]}, slo.alternate_point):"
        f" queue {num(other.queue_wait_ms, 'ms')}, TTFT mean {num(other.ttft_mean_ms, 'ms')}, p95 {num(other.ttft_p95_ms, 'ms')};"
        f" ITL p50 {num(other.itl_p50_ms, 'ms')}, p95 {num(other.itl_p95_ms, 'ms')}."
    )


# --- length variability -----------------------------------------------------------------------------


def _gamma_cdf(shape: float, x: float) -> float:
    """Regularized lower incomplete gamma P(shape, x), by its power series."""
    if x <= 0:
        return 0.0
    if x > shape + 12 * math.sqrt(shape) + 50:  # far in the upper tail: within 1e-12 of 1, where the series is slow
        return 1.0
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


def _mg1_tail_shape(rate: float, rho: float, wait_s: float, third_s3: float) -> float:
    """Gamma shape of the M/G/1 wait given it is not zero, from its first two moments (Takacs).

    E[W^2] = 2 E[W]^2 + r E[S^3] / (3 (1 - rho)). Exponential (shape 1) for exponential service; wider for
    heavy-tailed prompts, narrower for fixed ones.
    """
    if not (0 < rho < 1) or wait_s <= 0:
        return 1.0
    w2 = 2 * wait_s**2 + rate * third_s3 / (3 * (1 - rho))
    m1, m2 = wait_s / rho, w2 / rho
    var = m2 - m1 * m1
    return min(m1 * m1 / var, 1e3) if var > 0 else 1e3


def _gamma_partial_moment(shape: float, scale: float, n: int, x: float) -> float:
    """E[Y^n; Y <= x] for Y gamma(shape, scale): scale^n Gamma(shape + n) / Gamma(shape) P(shape + n, x / scale)."""
    if x <= 0:
        return 0.0
    full = math.exp(n * math.log(scale) + math.lgamma(shape + n) - math.lgamma(shape))
    return full if math.isinf(x) else full * _gamma_cdf(shape + n, x / scale)


def _clamped_moments(mean: float, cv2: float, floor: float, ceiling: float) -> tuple[float, float, float]:
    """E[Z], E[Z^2], E[Z^3] of Z = max(min(Y, ceiling), floor), Y gamma with this mean and CV^2 (fixed when CV^2 = 0)."""
    if cv2 <= 0 or mean <= 0 or floor >= ceiling:
        z = max(min(mean, ceiling), floor)
        return z, z * z, z**3
    shape, scale = 1 / cv2, mean * cv2
    below = _gamma_cdf(shape, floor / scale) if floor > 0 else 0.0
    above = 1 - _gamma_cdf(shape, ceiling / scale) if math.isfinite(ceiling) else 0.0
    moments = []
    for n in (1, 2, 3):
        middle = _gamma_partial_moment(shape, scale, n, ceiling) - _gamma_partial_moment(shape, scale, n, floor)
        moments.append(floor**n * below + middle + (ceiling**n * above if above > 0 else 0.0))
    return moments[0], moments[1], moments[2]


def _chunked_prefill_s(tokens: float, chunks: float, batch: float, memory_s: float, fixed_step_s: float, prefill_rate: float) -> float:
    """Engine time of `chunks` steps carrying `tokens` prompt tokens beside a decode batch of `batch`.

    Each step costs its fixed time + max(compute of its tokens, the batch's weight and KV reads), as in the
    simulator: a chunk's compute hides the decode's memory time.
    """
    return chunks * fixed_step_s + max((tokens + chunks * batch) / prefill_rate, chunks * memory_s)


def _prompt_service_moments(
    uncached_mean: float,
    uncached_max: float,
    cv2: float,
    chunks: float,
    batch: float,
    memory_s: float,
    fixed_step_s: float,
    prefill_rate: float,
) -> tuple[float, float, float]:
    """E[S], E[S^2], E[S^3] of the time a prompt holds the prefill slot: _chunked_prefill_s of its uncached tokens.

    S = chunks x fixed + d + max(min(Y, ceiling), floor), with Y = uncached / prefill rate (gamma), d = the
    batch's decode compute in those steps, floor = chunks x memory - d, and ceiling = the uncached part of the
    longest prompt the pool admits (max-model-len). Chunks are those of a mean prompt: a long prompt's extra
    steps' fixed time and decode tokens are left out (on the capstone's cold load E[S] is ~6% and the wait
    ~19% under a per-prompt count), while short prompts, which the engine packs several to a step, are each
    charged a whole step's floor. The two partly cancel: against the waits the simulator measures, this
    model's mean wait is within 10% (about 9% above at 8.8 req/s; docs/crosscheck.md), so counting chunks
    per prompt without packing short ones would move it further off.
    """
    if not math.isfinite(chunks):
        return math.inf, math.inf, math.inf
    decode_s = chunks * batch / prefill_rate
    floor = max(chunks * memory_s - decode_s, 0.0)
    z1, z2, z3 = _clamped_moments(uncached_mean / prefill_rate, cv2, floor, uncached_max / prefill_rate)
    a = chunks * fixed_step_s + decode_s  # S = a + Z
    return a + z1, a * a + 2 * a * z1 + z2, a**3 + 3 * a * a * z1 + 3 * a * z2 + z3


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

    `load_hit_rate` is the other requests' prefix hit rate (their prefill load: the queue and the ITL
    interference); it defaults to the brief's queue basis. The measured request's own prompt is at `hit_rate`.
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
    load_hit = queue_load_hit_rate(brief) if load_hit_rate is None else load_hit_rate
    uncached = w.input_tokens_mean * (1 - load_hit)
    cv2 = length_cv2(w.input_tokens_mean, w.input_tokens_p95)
    service_s = uncached / prefill_rate
    rho_p = rate * service_s
    rho_d = rate * w.output_tokens_mean * step_s / max(batch, 1.0)
    room = budget - batch if dep.chunked_prefill else math.inf
    fixed_step_s = shape.step_overhead_s + sched_s  # per engine step, whatever it carries
    memory_s = step_s - shape.step_overhead_s  # the batch's weight and KV reads: hidden under a chunk's compute
    rho = rho_p + rho_d  # share of GPU time prefill and decode take together
    chunks_mean = _prompt_chunks(uncached, room)
    longest_uncached = (dep.max_model_len - 1) * (1 - load_hit)  # prompts are clipped at max-model-len
    s1, s2, s3 = _prompt_service_moments(uncached, longest_uncached, cv2, chunks_mean, batch, memory_s, fixed_step_s, prefill_rate)
    slot = rate * s1  # utilization of the prefill slot
    prompt_wait_s = rate * s2 / (2 * (1 - slot)) if slot < 1 else math.inf  # M/G/1 FCFS (Pollaczek-Khinchine)
    step_wait_s = (1 - min(slot, 1.0)) * step_s / 2  # a free slot still waits for the step in progress
    admission_s = _erlang_c_wait_s(load_batch, seqs, hold_s)
    queue_s = prompt_wait_s + admission_s + step_wait_s
    cap_tokens = min(float(brief.slo.ttft_input_cap_tokens), w.input_tokens_p95) * (1 - hit)
    if room <= 0:
        chunk, chunks, stage_s = 0.0, math.inf, math.inf
    else:
        chunk = min(room, cap_tokens)
        chunks = max(math.ceil(cap_tokens / room), 1) if cap_tokens > 0 else 1
        stage_s = _chunked_prefill_s(cap_tokens, chunks, batch, memory_s, fixed_step_s, prefill_rate)
    fixed_ms = lat.network_ms + lat.gateway_ms + lat.tokenization_ms + lat.first_sample_ms + lat.first_write_ms
    busy = min(slot, 1.0)
    ttft_mean = fixed_ms + (queue_s + stage_s) * 1e3
    tail = _mg1_tail_shape(rate, slot, prompt_wait_s, s3)
    ttft_p50 = fixed_ms + (stage_s + step_wait_s + _wait_quantile_s(queue_s - step_wait_s, busy, 0.50, tail)) * 1e3
    ttft_p95 = fixed_ms + (stage_s + step_wait_s + _wait_quantile_s(queue_s - step_wait_s, busy, 0.95, tail)) * 1e3
    # the time prompts' steps take beyond the decode steps they stand in for (a mixed step also emits the
    # batch's tokens), as a share of GPU time; a reply's gaps stretch by 1 / (1 - that share)
    served = min(rate, 1 / s1) if s1 > 0 else rate  # an overloaded slot serves prompts back to back, no faster
    rho_i = served * max(s1 - chunks_mean * (step_s + sched_s), 0.0) if math.isfinite(s1) else math.inf
    # the share a reply sees over its lifetime: compound Poisson work, normal approximation
    tpot_mean_s = (step_s + sched_s) / (1 - min(rho_i, _MAX_SHARE))
    arrivals = served * w.output_tokens_mean * tpot_mean_s if math.isfinite(s1) else 0.0
    spread = math.sqrt((1 + cv2) / arrivals) if arrivals > 0 else 0.0
    rho_i95 = min(rho_i * (1 + P95_Z * spread), _MAX_SHARE)
    itl_p50 = (step_s + sched_s) / (1 - rho_i) if rho_i < 1 else math.inf
    itl_p95 = (step_p95_s + sched_s) / (1 - rho_i95) if rho_i < 1 else math.inf
    full_chunk = min(room, w.input_tokens_p95 * (1 - hit)) if math.isfinite(room) else w.input_tokens_p95 * (1 - hit)
    longest = _chunked_prefill_s(max(full_chunk, 0.0), 1, batch_p95, step_p95_s - shape.step_overhead_s, fixed_step_s, prefill_rate)
    return LatencyPoint(
        rate_per_replica_per_s=rate,
        load_batch=load_batch,
        running_batch=batch,
        running_batch_p95=batch_p95,
        hold_s=hold_s,
        decode_step_ms=step_s * 1e3,
        decode_step_p95_ms=step_p95_s * 1e3,
        scheduler_ms=lat.scheduler_ms,
        step_fixed_ms=fixed_step_s * 1e3,
        step_memory_ms=memory_s * 1e3,
        load_hit_rate=load_hit,
        uncached_tokens_mean=uncached,
        service_cv2=cv2,
        prefill_service_ms=service_s * 1e3,
        rho_prefill=rho_p,
        rho_decode=rho_d,
        rho=rho,
        prefill_slot_busy=slot,
        slot_service_ms=s1 * 1e3,
        prompt_wait_ms=prompt_wait_s * 1e3,
        admission_wait_ms=admission_s * 1e3,
        queue_wait_ms=queue_s * 1e3,
        chunks_mean=chunks_mean,
        cap_uncached_tokens=cap_tokens,
        chunk_tokens=chunk,
        chunks=chunks,
        prefill_stage_ms=stage_s * 1e3,
        fixed_ms=fixed_ms,
        ttft_mean_ms=ttft_mean,
        ttft_p50_ms=ttft_p50,
        ttft_p95_ms=ttft_p95,
        rho_interference=rho_i,
        rho_interference_p95=rho_i95,
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
    """The SLO budget of one general-pool replica; `basis` says where load_batch comes from (for the arithmetic).

    `curves=False` leaves the trade-off curves empty: re-plans that read only the verdict (failure modes) skip them.
    """
    slo, lat = brief.slo, brief.latency
    p = latency_point(brief, shape, rate_per_replica, load_batch)
    other = latency_point(
        brief, shape, rate_per_replica, load_batch, load_hit_rate=queue_load_hit_rate(brief, _other_basis(slo.queue_basis))
    )
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
        queue_basis=slo.queue_basis,
        basis=_basis_text(brief, p, other),
        point=p,
        alternate_point=other,
        tradeoff_batched_tokens=_tradeoff(tokens_curve),
        tradeoff_max_num_seqs=_tradeoff(seqs_curve),
        arithmetic=_arithmetic(brief, p, basis),
    )


def _queue_model_text(p: LatencyPoint) -> str:
    return (
        "M/G/1 queue for the prefill slot per general-pool replica (session affinity pins a conversation to one replica,"
        " so replicas do not pool their queues): Poisson arrivals; decode tokens run first in every engine step and a"
        " prompt's chunk rides in the same step, so prompts wait only for the prompts ahead (FCFS) and the step in"
        " progress. A step costs fixed time + max(compute of its tokens, the batch's weight and KV reads), as in the"
        " simulator, so a prompt holds the slot for its chunk steps: the chunk's compute hides the decode's reads."
        f" Prompt lengths: a gamma distribution with the brief's mean and p95 (CV² {num(p.service_cv2)}), clipped at"
        " max-model-len, the longest prompt the pool admits. Plus an Erlang C wait for a batch slot when the running"
        " sequences approach max-num-seqs. The TTFT is for a prompt at the target's input cap, the longest prompt the"
        " target covers. Checked against the simulator's measured waits (docs/crosscheck.md)."
    )


def _percentile_text() -> str:
    return (
        "TTFT: the queue wait is zero with probability 1 - utilization and gamma-distributed above it, with the M/G/1"
        " wait's first two moments (Takacs: exponential for exponential service, wider for heavy-tailed prompts, narrower"
        " for fixed ones); p50 and p95 are that distribution's quantiles plus the fixed parts, half a step and the"
        " prefill. ITL (TPOT per reply): p50 at the mean running batch and mean interference share (prompts' steps"
        " beyond the decode steps they stand in for); p95 at the p95 running batch (Poisson: B + 1.645 √B, capped at"
        " max-num-seqs) and the p95 interference share over a reply's lifetime (compound-Poisson prefill work, normal"
        " approximation)."
    )


def _arithmetic(brief: Brief, p: LatencyPoint, basis: str) -> dict[str, str]:
    w, lat, slo = brief.workload, brief.latency, brief.slo
    hit = effective_hit_rate(brief)
    inf_note = " (no fixed point: the queue grows without bound)"
    prefill_rate = num(p.uncached_tokens_mean / p.prefill_service_ms * 1e3 if p.prefill_service_ms > 0 else 0, "tok/s")
    return {
        "rate_per_replica_per_s": f"{num(p.rate_per_replica_per_s, 'req/s')} per general-pool replica",
        "running_batch": (
            f"{basis}; capped at max-num-seqs {brief.deployment.max_num_seqs} -> {num(p.running_batch)};"
            f" p95 {num(p.load_batch)} + 1.645 x √{num(p.load_batch)} = {num(p.running_batch_p95)} (capped)"
        ),
        "rho": (
            f"prefill compute {num(p.rate_per_replica_per_s, 'req/s')} x {num(p.prefill_service_ms, 'ms')} = {pct(p.rho_prefill)};"
            f" decode {num(p.rate_per_replica_per_s, 'req/s')} x {num(w.output_tokens_mean)} tokens x {num(p.decode_step_ms, 'ms')}"
            f" / {num(p.running_batch)} = {pct(p.rho_decode)}; total {pct(p.rho)}. Prefill slot busy {pct(p.prefill_slot_busy)}"
            f" ({num(p.rate_per_replica_per_s, 'req/s')} x {num(p.slot_service_ms, 'ms')}, the mean time a prompt's chunk steps take)"
        ),
        "slot_service_ms": (
            f"a mean prompt ({num(p.uncached_tokens_mean, 'tokens')} uncached: other prompts hit the cache at {pct(p.load_hit_rate)}) in {num(p.chunks_mean)} step(s):"
            f" {num(p.step_fixed_ms, 'ms')} fixed + max(its tokens and the batch's {num(p.running_batch)} decode tokens / {prefill_rate},"
            f" {num(p.step_memory_ms, 'ms')} of weight and KV reads) per step, averaged over prompt lengths (gamma, CV² {num(p.service_cv2)},"
            f" clipped at max-model-len {brief.deployment.max_model_len}) = {num(p.slot_service_ms, 'ms')}"
        ),
        "queue_wait_ms": (
            f"W = {num(p.rate_per_replica_per_s)} x E[S²] / (2 x (1 - {pct(p.prefill_slot_busy)}))"
            f" = {num(p.prompt_wait_ms, 'ms')} (S: the prompt's chunk steps, mean {num(p.slot_service_ms, 'ms')});"
            f" + slot wait {num(p.admission_wait_ms, 'ms')} + (1 - {pct(p.prefill_slot_busy)}) x {num(p.decode_step_ms, 'ms')} / 2 for the step in progress"
            f" = {num(p.queue_wait_ms, 'ms')}" + ("" if math.isfinite(p.queue_wait_ms) else inf_note)
        ),
        "prefill_stage_ms": (
            f"{num(min(slo.ttft_input_cap_tokens, w.input_tokens_p95), 'tokens')} at the cap x (1 - {pct(hit)} hits) = {num(p.cap_uncached_tokens, 'tokens')};"
            f" {num(p.chunks)} chunk(s) of up to {num(p.chunk_tokens)}: {num(p.chunks)} x {num(p.step_fixed_ms, 'ms')} fixed"
            f" + max(({num(p.cap_uncached_tokens)} + {num(p.chunks)} x {num(p.running_batch)} decode tokens) / {prefill_rate},"
            f" {num(p.chunks)} x {num(p.step_memory_ms, 'ms')} reads) = {num(p.prefill_stage_ms, 'ms')}"
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
            f"({num(p.decode_step_ms, 'ms')} step + {num(lat.scheduler_ms, 'ms')}) / (1 - {pct(p.rho_interference)} interference:"
            f" {num(p.rate_per_replica_per_s, 'req/s')} x ({num(p.slot_service_ms, 'ms')} a prompt's steps"
            f" - {num(p.chunks_mean)} x {num(p.decode_step_ms + lat.scheduler_ms, 'ms')} of decode they also do)) = {num(p.itl_p50_ms, 'ms')}"
        ),
        "itl_p95_ms": (
            f"({num(p.decode_step_p95_ms, 'ms')} step at batch {num(p.running_batch_p95)} + {num(lat.scheduler_ms, 'ms')})"
            f" / (1 - {pct(p.rho_interference_p95)} p95 interference share) = {num(p.itl_p95_ms, 'ms')} vs target {num(slo.itl_p95_ms, 'ms')}"
        ),
        "longest_step_ms": (
            f"one engine step at the p95 batch carrying a full prefill chunk: {num(p.step_fixed_ms, 'ms')} fixed + the larger of the chunk's"
            f" and the batch's compute and the batch's reads = {num(p.longest_step_ms, 'ms')} (a single token gap, not the TPOT)"
        ),
    }
