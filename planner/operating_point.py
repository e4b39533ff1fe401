"""The operating point of one replica by Little's law, solved with the step time it implies.

    TPOT(N)  = decode step(N) / (1 - prefill share)         prefill steals its share of GPU time
    N        = rate x (TTFT + (output - 1) x TPOT(N))        Little's law: in flight = rate x time inside
    capacity = the rate at which TPOT reaches the ITL target

A brief stated as users x duty cycle also states how long a reply streams (generation_s_per_turn: the
users read at that pace), so a sequence holds its batch slot for at least that long:
N = rate x max(TTFT + (output - 1) x TPOT(N), generation time). A brief stated as a request rate runs at
the engine's pace.

The step is evaluated at the running batch N, not at the SLO value: using the 40 ms target as the
step time is the classic mistake this module exists to avoid. Ideal uses the bytes / peak bandwidth
step; real applies the brief's efficiency factors (replica.decode_step_real_s).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from pydantic import BaseModel, ConfigDict

from planner.brief import Brief
from planner.fmt import num, pct
from planner.pools import Pools
from planner.replica import GB, ReplicaShape

__all__ = ["LoadModel", "OperatingPoint", "load_model", "operating_point", "solve_capacity_rate", "solve_in_flight"]

_BISECTIONS = 60  # halvings: 1e-18 of the search range, well past what any figure shows


class LoadModel(BaseModel):
    """Per-request constants of the Little's-law model."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    prefill_s_per_request: float  # uncached prompt tokens / prefill throughput: the uncongested TTFT
    output_tokens: float
    context_read_tokens: float  # KV each running sequence contributes to a decode step's reads
    context_held_tokens: float  # KV reserved per sequence in flight
    paced_s: float  # the least time a reply holds its slot: the users' streaming time (0: the engine's pace)


def context_tokens(brief: Brief) -> tuple[float, float]:
    """(read, held) context per sequence: the brief's KV-sizing context, else input + output/2 and input + output."""
    w = brief.workload
    if w.kv_context_tokens is not None:
        return w.kv_context_tokens, w.kv_context_tokens
    return w.input_tokens_mean + w.output_tokens_mean / 2, w.input_tokens_mean + w.output_tokens_mean


def effective_hit_rate(brief: Brief) -> float:
    return brief.workload.prefix_hit_rate if brief.deployment.prefix_caching else 0.0


def load_model(brief: Brief, shape: ReplicaShape, hit_rate: float | None = None) -> LoadModel:
    hit = effective_hit_rate(brief) if hit_rate is None else hit_rate
    read, held = context_tokens(brief)
    uncached = brief.workload.input_tokens_mean * (1 - hit)
    return LoadModel(
        prefill_s_per_request=uncached / shape.prefill_tokens_per_s,
        output_tokens=brief.workload.output_tokens_mean,
        context_read_tokens=read,
        context_held_tokens=held,
        paced_s=brief.workload.generation_s_per_turn if brief.workload.request_rate is None else 0.0,
    )


StepFn = Callable[[float], float]


def _tpot_s(step: StepFn, batch: float, prefill_share: float) -> float:
    return step(batch) / (1 - prefill_share)


def solve_in_flight(rate: float, load: LoadModel, step: StepFn) -> float:
    """N with N = rate x (TTFT + (out - 1) x TPOT(N)); inf when no fixed point exists (overload)."""
    share = rate * load.prefill_s_per_request
    if share >= 1:
        return math.inf

    def excess(n: float) -> float:
        return rate * _time_inside_s(load, _tpot_s(step, n, share)) - n

    low, high = 0.0, 1.0
    while excess(high) > 0:
        high *= 2
        if high > 1e9:
            return math.inf
    for _ in range(_BISECTIONS):
        mid = (low + high) / 2
        low, high = (mid, high) if excess(mid) > 0 else (low, mid)
    return high


def _time_inside_s(load: LoadModel, tpot_s: float) -> float:
    """How long a request holds its batch slot: its prefill and reply, at least the paced streaming time."""
    return max(load.prefill_s_per_request + (load.output_tokens - 1) * tpot_s, load.paced_s)


def tpot_at_rate_s(rate: float, load: LoadModel, step: StepFn) -> float:
    n = solve_in_flight(rate, load, step)
    if not math.isfinite(n):
        return math.inf
    return _tpot_s(step, n, rate * load.prefill_s_per_request)


def solve_capacity_rate(target_tpot_s: float, load: LoadModel, step: StepFn) -> float:
    """Highest rate whose TPOT stays at or under the target; 0 when even one sequence misses it.

    At the capacity rate r the TPOT is the target T, so Little's law gives the in-flight count directly,
    N = r x max(TTFT + (out - 1) x T, paced time), and TPOT(r) <= T exactly when step(N) / (1 - prefill share) <= T:
    one bisection on r instead of a fixed point inside every probe.
    """
    if step(1.0) > target_tpot_s:
        return 0.0

    def within_target(rate: float) -> bool:
        share = rate * load.prefill_s_per_request
        if share >= 1:
            return False
        n = rate * _time_inside_s(load, target_tpot_s)
        return _tpot_s(step, n, share) <= target_tpot_s

    low = 0.0
    high = 1 / load.prefill_s_per_request if load.prefill_s_per_request > 0 else 1e7
    for _ in range(_BISECTIONS):
        mid = (low + high) / 2
        low, high = (mid, high) if within_target(mid) else (low, mid)
    return low


class OperatingPoint(BaseModel):
    """One general-pool replica at the share of the peak it carries (long-context and spare nodes excluded)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    general_replicas: int
    rate_per_replica_per_s: float
    prefill_ms_per_request: float
    prefill_share: float
    prefill_saturation_rate_per_s: float
    in_flight: float
    in_flight_ideal: float
    tpot_ms: float
    tpot_ideal_ms: float
    kv_in_use_gb: float
    kv_in_use_ideal_gb: float
    memory_used_gb: float
    memory_total_gb: float
    capacity_rate_per_s: float
    capacity_rate_ideal_per_s: float
    load_vs_capacity: float
    stable: bool
    arithmetic: dict[str, str]


def _kv_gb(in_flight: float, load: LoadModel, shape: ReplicaShape) -> float:
    return in_flight * load.context_held_tokens * shape.kv_bytes_per_token / GB


def operating_point(brief: Brief, shape: ReplicaShape, pools: Pools, request_rate: float) -> OperatingPoint:
    """One general-pool replica carrying its share of the peak `request_rate` (req/s, the whole fleet's)."""
    load = load_model(brief, shape)
    rate = pools.general_rate_per_replica(request_rate)
    target_s = brief.slo.itl_p95_ms / 1e3

    def ideal(n: float) -> float:
        return shape.decode_step_ideal_s(n, load.context_read_tokens)

    def real(n: float) -> float:
        return shape.decode_step_real_s(n, load.context_read_tokens)

    share = rate * load.prefill_s_per_request
    n_real, n_ideal = solve_in_flight(rate, load, real), solve_in_flight(rate, load, ideal)
    stable = math.isfinite(n_real)
    tpot_real = _tpot_s(real, n_real, share) if stable else math.inf
    tpot_ideal = _tpot_s(ideal, n_ideal, share) if math.isfinite(n_ideal) else math.inf
    cap_real = solve_capacity_rate(target_s, load, real)
    cap_ideal = solve_capacity_rate(target_s, load, ideal)
    kv_real, kv_ideal = _kv_gb(n_real, load, shape), _kv_gb(n_ideal, load, shape)
    weights_gb = shape.weights_bytes / GB
    total_gb = shape.gpu.memory_gb * shape.tp
    step_real_ms = real(n_real) * 1e3 if stable else math.inf
    arithmetic = {
        "rate_per_replica_per_s": pools.general_rate_text(request_rate),
        "prefill_ms_per_request": (
            f"{num(brief.workload.input_tokens_mean * (1 - effective_hit_rate(brief)))} uncached prompt tokens"
            f" / {num(shape.prefill_tokens_per_s, 'tok/s')} prefill = {num(load.prefill_s_per_request * 1e3, 'ms')}"
        ),
        "prefill_share": f"{num(rate, 'req/s')} x {num(load.prefill_s_per_request * 1e3, 'ms')} = {pct(share)} of GPU time",
        "prefill_saturation_rate_per_s": f"1 / {num(load.prefill_s_per_request * 1e3, 'ms')} = {num(_safe_inv(load.prefill_s_per_request), 'req/s')}",
        "tpot_ms": (
            f"step({num(n_real)} in flight) {num(step_real_ms, 'ms')} / (1 - {pct(share)}) = {num(tpot_real * 1e3, 'ms')}"
            if stable
            else "no fixed point: the replica is overloaded, the queue grows without bound"
        ),
        "in_flight": _in_flight_text(rate, load, tpot_real, n_real),
        "kv_in_use_gb": f"{num(n_real)} x {num(load.context_held_tokens, 'tokens')} x {num(shape.kv_bytes_per_token / 1024, 'KiB')} = {num(kv_real, 'GB')}",
        "memory_used_gb": f"{num(weights_gb, 'GB')} weights + {num(kv_real, 'GB')} KV = {num(weights_gb + kv_real, 'GB')} of {num(total_gb, 'GB')}",
        "capacity_rate_per_s": _capacity_text(brief, load, real, cap_real, cap_ideal),
    }
    return OperatingPoint(
        general_replicas=pools.general_replicas,
        rate_per_replica_per_s=rate,
        prefill_ms_per_request=load.prefill_s_per_request * 1e3,
        prefill_share=share,
        prefill_saturation_rate_per_s=_safe_inv(load.prefill_s_per_request),
        in_flight=n_real,
        in_flight_ideal=n_ideal,
        tpot_ms=tpot_real * 1e3,
        tpot_ideal_ms=tpot_ideal * 1e3,
        kv_in_use_gb=kv_real,
        kv_in_use_ideal_gb=kv_ideal,
        memory_used_gb=weights_gb + kv_real,
        memory_total_gb=total_gb,
        capacity_rate_per_s=cap_real,
        capacity_rate_ideal_per_s=cap_ideal,
        load_vs_capacity=rate / cap_real if cap_real > 0 else math.inf,
        stable=stable,
        arithmetic=arithmetic,
    )


def _in_flight_text(rate: float, load: LoadModel, tpot_s: float, n: float) -> str:
    engine_s = load.prefill_s_per_request + (load.output_tokens - 1) * tpot_s
    inside = f"{num(load.prefill_s_per_request * 1e3, 'ms')} + {num(load.output_tokens - 1)} x {num(tpot_s * 1e3, 'ms')}"
    if load.paced_s > 0:
        held = "the users' pace holds the slot" if load.paced_s >= engine_s else "the engine is slower than the users' pace"
        inside = f"max({inside}, {num(load.paced_s, 's')} streamed at the users' pace; {held})"
    return f"{num(rate, 'req/s')} x {inside} = {num(n)} sequences"


def _capacity_text(brief: Brief, load: LoadModel, step: StepFn, cap: float, cap_ideal: float) -> str:
    target = brief.slo.itl_p95_ms
    if cap <= 0:
        return f"even one sequence's step ({num(step(1.0) * 1e3, 'ms')}) exceeds the {num(target, 'ms')} target: capacity = 0"
    n = solve_in_flight(cap, load, step)
    share = cap * load.prefill_s_per_request
    return (
        f"TPOT = step({num(n)} in flight) {num(step(n) * 1e3, 'ms')} / (1 - {pct(share)} prefill) = {num(target, 'ms')}"
        f" at r = {num(cap, 'req/s')} real ({num(cap_ideal, 'req/s')} ideal)"
    )


def _safe_inv(x: float) -> float:
    return 1 / x if x > 0 else math.inf
