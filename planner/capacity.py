"""Step 1 of the method: arithmetic before architecture.

Demand -> memory per GPU -> KV capacity -> decode step and throughput -> prefill throughput -> the
share of GPU time each takes -> utilization -> the binding resource. Each section keeps, beside its
numbers, the arithmetic that produced them (formula with the numbers put in).

Two ways to load the decode batch, named in `utilization_basis`:
- users x duty cycle: the seed's method. Sequences stream at the users' pace for the generation time
  of a turn, so the decode batch per replica is generating sequences / replicas, and utilization is
  the share of GPU time prefill and decode need at that batch.
- a request rate: sequences run at the engine's pace, so a busy replica always has a decode step to
  run; utilization is then the load over the capacity at the ITL target (the operating point's
  capacity rate), split into prefill time and decode time at the capacity batch.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from enum import StrEnum
from functools import cached_property
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict, PrivateAttr, computed_field

from planner.brief import Brief, ObjectiveKind
from planner.fmt import num, pct
from planner.operating_point import context_tokens, seed_capacity_rate, seed_prefill_s, seed_tpot_ms
from planner.replica import GB, ReplicaShape
from planner.trusted import trusted
from planner.written import Written

__all__ = [
    "Binding",
    "Capacity",
    "Demand",
    "Memory",
    "capacity",
    "demand",
    "demand_rate_per_s",
    "kv_fraction_at",
    "memory",
    "utilization_at",
    "utilization_no_prefix_cache_at",
]

KIB = 1024


class _Section(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Binding(StrEnum):
    memory = "memory"
    bandwidth = "bandwidth"
    compute = "compute"


class Demand(Written):
    request_rate_per_s: float
    turn_period_s: float | None
    generating_sequences: float
    input_tokens_per_s: float
    output_tokens_per_s: float
    prefill_tokens_per_s_after_cache: float


class Memory(Written):
    gpu_memory_gb: float
    usable_gb_per_gpu: float
    weights_gb_per_gpu: float
    reserve_gb_per_gpu: float
    kv_gb_per_gpu: float
    kv_bytes_per_token_per_gpu: float
    kv_bytes_per_token_per_replica: float
    kv_context_tokens: float
    kv_capacity_tokens_per_replica: float
    max_sequences_per_replica: float
    max_sequences_per_node: float
    max_sequences_fleet: float


class Capacity(_Section):
    utilization_basis: str
    replicas: int
    replicas_per_node: int
    batch_per_replica: float
    decode_step_bytes_gb_per_gpu: float
    decode_step_weights_gb_per_gpu: float
    decode_step_kv_gb_per_gpu: float
    decode_step_ideal_ms: float
    decode_step_ms: float
    decode_tokens_per_s_per_replica: float
    decode_tokens_per_s: float
    prefill_tokens_per_s_per_replica: float
    prefill_tokens_per_s: float
    prefill_fraction: float
    prefill_fraction_no_prefix_cache: float
    decode_fraction: float
    utilization: float
    utilization_no_prefix_cache: float
    kv_fraction: float
    sizing_load_multiple: float  # the worked design's sizing arithmetic: 1 / utilization (linear; not the headroom)
    binding_constraint: Binding
    binding_constraint_no_prefix_cache: Binding
    step_bytes_at_max_num_seqs_gb: float
    step_at_max_num_seqs_ideal_ms: float
    step_at_max_num_seqs_ms: float
    unchunked_prefill_p95_ms: float
    _text: _CapacityText = PrivateAttr()

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def binding_reason(self) -> str:
        """Why the binding resource binds, with the other shares (written on first read, as the arithmetic is)."""
        return _binding_reason(self.binding_constraint, self.kv_fraction, self.prefill_fraction, self.decode_fraction)

    # The step's arithmetic in words is written the first time it is read (a page, the JSON, the document): the many
    # re-plans a design makes (failure rows, fleet searches, headroom) never read theirs.

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def arithmetic(self) -> dict[str, str]:
        """Each figure's arithmetic in words."""
        t = self._text
        kv = (
            f"{num(self.batch_per_replica)} sequences generating per replica at the sizing batch"
            f" / {num(t.kv_sequences_per_replica)} sequences a replica's KV cache holds = {pct(self.kv_fraction)}"
            " (the sizing arithmetic's share; the KV in use at the operating point is the Capacity page's)"
        )
        return _step_arithmetic(*t.step) | t.shares() | {"binding_constraint": self.binding_reason, "kv_fraction": kv}


class _CapacityText(NamedTuple):
    """What Capacity.arithmetic is written from: _step_arithmetic's arguments and the shares' text."""

    step: tuple[Brief, ReplicaShape, Demand, float, float, float, float, float, float]
    shares: Callable[[], dict[str, str]]
    kv_sequences_per_replica: float  # the KV share's denominator (Memory.max_sequences_per_replica)


# --- demand ----------------------------------------------------------------------------------------


def _generating_at_engine_pace(brief: Brief, shape: ReplicaShape, rate: float) -> float:
    """Rate-given briefs: Little's law on the decode phase at the worked design's TPOT of an average replica."""
    tpot_s = seed_tpot_ms(brief, shape, rate / shape.replicas) / 1e3
    return rate * (brief.workload.output_tokens_mean - 1) * tpot_s if math.isfinite(tpot_s) else math.inf


def _turn_period_s(brief: Brief) -> float | None:
    """Users x duty: a user's time between turns (None for a given request rate)."""
    w = brief.workload
    return None if w.request_rate is not None else w.generation_s_per_turn / w.duty_cycle


def demand_rate_per_s(brief: Brief) -> float:
    """demand(...).request_rate_per_s alone: the given rate, or the users over their turn period (no solve)."""
    w = brief.workload
    if w.request_rate is not None:
        return w.request_rate
    assert w.users is not None
    period = _turn_period_s(brief)
    assert period is not None
    return w.users / period


def demand(brief: Brief, shape: ReplicaShape) -> Demand:
    w = brief.workload
    hit = brief.effective_hit_rate
    rate, period = demand_rate_per_s(brief), _turn_period_s(brief)
    if period is None:
        generating = _generating_at_engine_pace(brief, shape, rate)
    else:
        assert w.users is not None
        generating = w.users * w.duty_cycle
    inputs, outputs = rate * w.input_tokens_mean, rate * w.output_tokens_mean
    after_cache = inputs * (1 - hit)
    result = trusted(
        Demand,
        request_rate_per_s=rate,
        turn_period_s=period,
        generating_sequences=generating,
        input_tokens_per_s=inputs,
        output_tokens_per_s=outputs,
        prefill_tokens_per_s_after_cache=after_cache,
    )

    def text() -> dict[str, str]:
        if period is None:
            rate_text = f"given: {num(rate, 'req/s')}"
            gen_text = (
                f"{num(rate, 'req/s')} x ({num(w.output_tokens_mean)} - 1) tokens x TPOT at this load = {num(generating)} (Little's law)"
            )
        else:
            assert w.users is not None
            rate_text = (
                f"{num(w.users, 'users')} / ({num(w.generation_s_per_turn, 's')} generating / {num(w.duty_cycle)} duty)"
                f" = {num(w.users)} / {num(period, 's')} per turn = {num(rate, 'req/s')}"
            )
            gen_text = f"{num(w.users, 'users')} x {num(w.duty_cycle)} duty = {num(generating)} sequences"
        return {
            "request_rate_per_s": rate_text,
            "generating_sequences": gen_text,
            "input_tokens_per_s": f"{num(rate, 'req/s')} x {num(w.input_tokens_mean, 'tokens')} = {num(inputs, 'tok/s')}",
            "output_tokens_per_s": f"{num(rate, 'req/s')} x {num(w.output_tokens_mean, 'tokens')} = {num(outputs, 'tok/s')}",
            "prefill_tokens_per_s_after_cache": f"{num(inputs, 'tok/s')} x (1 - {pct(hit)} prefix hits) = {num(after_cache, 'tok/s')}",
        }

    result._text = text
    return result


# --- memory ----------------------------------------------------------------------------------------


def memory(brief: Brief, shape: ReplicaShape) -> Memory:
    m, dep = shape.model, brief.deployment
    _, held = context_tokens(brief)
    per_replica = shape.kv_capacity_tokens / held
    kv_token = shape.kv_bytes_per_token_per_gpu
    result = trusted(
        Memory,
        gpu_memory_gb=shape.gpu.memory_gb,
        usable_gb_per_gpu=shape.usable_gb_per_gpu,
        weights_gb_per_gpu=shape.weights_gb_per_gpu,
        reserve_gb_per_gpu=shape.reserve_gb_per_gpu,
        kv_gb_per_gpu=shape.kv_gb_per_gpu,
        kv_bytes_per_token_per_gpu=kv_token,
        kv_bytes_per_token_per_replica=shape.kv_bytes_per_token,
        kv_context_tokens=held,
        kv_capacity_tokens_per_replica=shape.kv_capacity_tokens,
        max_sequences_per_replica=per_replica,
        max_sequences_per_node=per_replica * shape.units_per_replica_group / shape.replica_nodes,
        max_sequences_fleet=per_replica * shape.replicas,
    )

    def text() -> dict[str, str]:
        return {
            "weights_gb_per_gpu": (
                f"{num(m.params)} params x {num(dep.weights.bytes_per_value)} B ({dep.weights.value})"
                f" / TP {shape.tp} = {num(shape.weights_gb_per_gpu, 'GB')}"
            ),
            "kv_gb_per_gpu": (
                f"{num(shape.gpu.memory_gb, 'GB')} x {num(dep.gpu_memory_utilization)} - {num(shape.weights_gb_per_gpu, 'GB')} weights"
                f" - {num(shape.reserve_gb_per_gpu, 'GB')} reserve = {num(shape.kv_gb_per_gpu, 'GB')}"
            ),
            "kv_bytes_per_token_per_gpu": (
                f"2 (K,V) x {m.layers} layers x {num(shape.kv_heads_per_gpu)} KV heads per GPU ({m.kv_heads} / TP {shape.tp})"
                f" x {m.head_dim} head dim x {num(dep.kv_cache.bytes_per_value)} B ({dep.kv_cache.value})"
                f" = {num(kv_token, 'B')} ({num(kv_token / KIB, 'KiB')})"
            ),
            "max_sequences_per_replica": (
                f"{num(shape.kv_gb_per_gpu, 'GB')} / ({num(kv_token / KIB, 'KiB')} x {num(held, 'tokens')})"
                f" = {num(per_replica)} sequences per replica; x {shape.replicas} replicas = {num(per_replica * shape.replicas)}"
            ),
        } | _parallel_memory_text(shape, held, per_replica)

    result._text = text
    return result


def _parallel_memory_text(shape: ReplicaShape, held: float, per_replica: float) -> dict[str, str]:
    """The memory arithmetic of a replica split by pipeline stages or expert parallelism (empty for one TP group)."""
    if shape.pp == 1 and shape.ep == 1:
        return {}
    m, bpv = shape.model, shape.weight_bytes_per_value
    experts = m.experts * m.expert_params if m.is_moe else 0.0
    split = f"({num(m.params - experts)} attention and shared params / TP {shape.tp}"
    split += f" + {num(experts)} routed-expert params / {shape.gpus} GPUs)" if experts else ")"
    stages = f" / PP {shape.pp}" if shape.pp > 1 else ""
    kv = (
        f"{m.layers} layers x ({m.kv_lora_rank} latent + {m.qk_rope_head_dim} rotary key), whole on each GPU of a group"
        if m.kv_lora_rank
        else f"2 (K,V) x {m.layers} layers x {num(shape.kv_heads_per_gpu)} KV heads per GPU x {m.head_dim} head dim"
    )
    unit = f" ({shape.pp} micro-batch streams a replica, each with 1/{shape.pp} of the pool)" if shape.pp > 1 else ""
    groups = f" x {shape.attention_groups} attention groups" if shape.attention_groups > 1 else ""
    return {
        "weights_gb_per_gpu": f"{split} x {num(bpv)} B{stages} = {num(shape.weights_gb_per_gpu, 'GB')}",
        "kv_bytes_per_token_per_gpu": f"{kv} x {num(shape.kv_bytes_per_value)} B{stages} = {num(shape.kv_bytes_per_token_per_gpu, 'B')}",
        "max_sequences_per_replica": (
            f"{num(shape.kv_gb_per_gpu, 'GB')} / ({num(shape.kv_bytes_per_token_per_gpu / KIB, 'KiB')} x {num(held, 'tokens')}){groups}"
            f"{' / ' + str(shape.pp) if shape.pp > 1 else ''} = {num(per_replica)} sequences per replica{unit}"
        ),
    }


# --- capacity --------------------------------------------------------------------------------------


def _pressures(kv_fraction: float, prefill_fraction: float, decode_fraction: float) -> dict[Binding, float]:
    """Each resource's share, in the order a tie is broken: memory, compute, bandwidth."""
    return {Binding.memory: kv_fraction, Binding.compute: prefill_fraction, Binding.bandwidth: decode_fraction}


def _binding(kv_fraction: float, prefill_fraction: float, decode_fraction: float) -> Binding:
    """The resource with the largest share (the first of them on a tie)."""
    pressures = _pressures(kv_fraction, prefill_fraction, decode_fraction)
    return max(pressures, key=lambda b: pressures[b])


def _binding_reason(binding: Binding, kv_fraction: float, prefill_fraction: float, decode_fraction: float) -> str:
    """Why `binding` (_binding of these shares) binds, with the other shares."""
    pressures = _pressures(kv_fraction, prefill_fraction, decode_fraction)
    what = {
        Binding.memory: "KV cache: sequences needed / sequences that fit",
        Binding.compute: "prefill: tensor-core time",
        Binding.bandwidth: "decode: HBM bandwidth time",
    }
    others = ", ".join(f"{b.value} {pct(v)}" for b, v in pressures.items() if b is not binding)
    return f"{binding.value} binds: {what[binding]} takes {pct(pressures[binding])} ({others})"


class _Shares(NamedTuple):
    """Shares of GPU time at the load, with and without the prefix cache, and how they were found."""

    prefill: float
    prefill_no_cache: float
    decode: float
    decode_tokens_per_s: float  # fleet
    utilization: float
    utilization_no_cache: float
    arithmetic: Callable[[], dict[str, str]]  # written when Capacity.arithmetic is first read


def _decode_batch_and_step_s(brief: Brief, shape: ReplicaShape, dem: Demand) -> tuple[float, float]:
    """A replica's decode batch (the generating sequences shared out) and its real decode step (s)."""
    batch = dem.generating_sequences / shape.replicas
    step_real = shape.decode_step_real_s(batch, context_tokens(brief)[0]) if math.isfinite(batch) else math.inf
    return batch, step_real


def _streaming_decode_fleet(shape: ReplicaShape, batch: float, step_real: float) -> float:
    """Users x duty: the fleet's decode tokens a second at the batch the load implies."""
    return batch / step_real * shape.replicas if math.isfinite(step_real) else 0.0


def _decode_share(dem: Demand, decode_fleet: float) -> float:
    return dem.output_tokens_per_s / decode_fleet if decode_fleet > 0 else math.inf


def utilization_no_prefix_cache_at(brief: Brief, shape: ReplicaShape, dem: Demand) -> float:
    """capacity(...).utilization_no_prefix_cache alone (no memory, no other share, no text): what a search over fleet
    sizes reads at each size."""
    if brief.workload.request_rate is not None:
        return _load_over_capacity(brief, shape, dem.request_rate_per_s, 0.0)[1]
    batch, step_real = _decode_batch_and_step_s(brief, shape, dem)
    prefill_nc = dem.input_tokens_per_s / (shape.prefill_tokens_per_s * shape.replicas)
    return prefill_nc + _decode_share(dem, _streaming_decode_fleet(shape, batch, step_real))


def utilization_at(brief: Brief, shape: ReplicaShape, dem: Demand) -> float:
    """capacity(...).utilization alone (no memory, no text), by the same arithmetic: what a search over traffic
    multiples (planner.headroom) reads at each multiple."""
    if brief.workload.request_rate is not None:
        return _load_over_capacity(brief, shape, dem.request_rate_per_s, brief.effective_hit_rate)[1]
    batch, step_real = _decode_batch_and_step_s(brief, shape, dem)
    prefill = dem.prefill_tokens_per_s_after_cache / (shape.prefill_tokens_per_s * shape.replicas)
    return prefill + _decode_share(dem, _streaming_decode_fleet(shape, batch, step_real))


def _shares_at_streaming_pace(dem: Demand, prefill_fleet: float, decode_fleet: float) -> _Shares:
    """Users x duty: decode runs at the batch the load implies; shares of time add up."""
    prefill = dem.prefill_tokens_per_s_after_cache / prefill_fleet
    prefill_nc = dem.input_tokens_per_s / prefill_fleet
    decode = _decode_share(dem, decode_fleet)

    def arithmetic() -> dict[str, str]:
        return {
            "prefill_fraction": f"{num(dem.prefill_tokens_per_s_after_cache, 'tok/s')} / {num(prefill_fleet, 'tok/s')} = {pct(prefill)}",
            "prefill_fraction_no_prefix_cache": f"{num(dem.input_tokens_per_s, 'tok/s')} / {num(prefill_fleet, 'tok/s')} = {pct(prefill_nc)}",
            "decode_fraction": f"{num(dem.output_tokens_per_s, 'tok/s')} / {num(decode_fleet, 'tok/s')} = {pct(decode)}",
            "utilization": f"prefill {pct(prefill)} + decode {pct(decode)} = {pct(prefill + decode)}",
            "utilization_no_prefix_cache": f"prefill {pct(prefill_nc)} + decode {pct(decode)} = {pct(prefill_nc + decode)}",
        }

    return _Shares(
        prefill=prefill,
        prefill_no_cache=prefill_nc,
        decode=decode,
        decode_tokens_per_s=decode_fleet,
        utilization=prefill + decode,
        utilization_no_cache=prefill_nc + decode,
        arithmetic=arithmetic,
    )


def _load_over_capacity(brief: Brief, shape: ReplicaShape, rate: float, hit: float) -> tuple[float, float, float]:
    """(prefill share, utilization, capacity rate per replica) by the worked design's relation at the engine's pace."""
    per_replica = rate / shape.replicas
    cap = seed_capacity_rate(brief, shape, hit_rate=hit)
    utilization = per_replica / cap if cap > 0 else math.inf
    return per_replica * seed_prefill_s(brief, shape, hit_rate=hit), utilization, cap


_REFERENCE = " (a reference: the deadline judges this design)"  # an offline job's or a rollout's latency target


def _shares_at_engine_pace(brief: Brief, shape: ReplicaShape, dem: Demand, hit: float) -> _Shares:
    """Request rate: utilization = load / capacity at the ITL target; decode takes what prefill leaves of it."""
    per_replica = dem.request_rate_per_s / shape.replicas
    prefill, utilization, cap = _load_over_capacity(brief, shape, dem.request_rate_per_s, hit)
    prefill_nc, utilization_nc, cap_nc = _load_over_capacity(brief, shape, dem.request_rate_per_s, 0.0)
    decode = utilization - prefill
    decode_fleet = dem.output_tokens_per_s / decode if decode > 0 else math.inf

    def arithmetic() -> dict[str, str]:
        return {
            "prefill_fraction": f"{num(per_replica, 'req/s')} per replica x prefill time per request = {pct(prefill)}",
            "prefill_fraction_no_prefix_cache": f"{num(per_replica, 'req/s')} per replica x full-prompt prefill time = {pct(prefill_nc)}",
            "decode_fraction": f"utilization {pct(utilization)} - prefill {pct(prefill)} = {pct(decode)}",
            "decode_tokens_per_s": f"{num(dem.output_tokens_per_s, 'tok/s')} / {pct(decode)} of decode time = {num(decode_fleet, 'tok/s')} at capacity",
            "utilization": (
                f"{num(per_replica, 'req/s')} per replica / {num(cap, 'req/s')}, the rate at which the mean token time (Little's law)"
                f" reaches the {num(brief.slo.itl_p95_ms, 'ms')} ITL target (the sizing arithmetic's capacity, not the SLO capacity,"
                " which judges the p95s)"
                f"{_REFERENCE if brief.objective.kind is not ObjectiveKind.latency else ''} = {pct(utilization)}"
            ),
            "utilization_no_prefix_cache": f"{num(per_replica, 'req/s')} / {num(cap_nc, 'req/s')} without prefix hits = {pct(utilization_nc)}",
        }

    return _Shares(
        prefill=prefill,
        prefill_no_cache=prefill_nc,
        decode=decode,
        decode_tokens_per_s=decode_fleet,
        utilization=utilization,
        utilization_no_cache=utilization_nc,
        arithmetic=arithmetic,
    )


def kv_fraction_at(shape: ReplicaShape, dem: Demand, mem: Memory) -> float:
    """capacity(...).kv_fraction alone: a replica's decode batch over the sequences its KV cache holds."""
    batch = dem.generating_sequences / shape.replicas
    return batch / mem.max_sequences_per_replica if mem.max_sequences_per_replica > 0 else math.inf


def capacity(brief: Brief, shape: ReplicaShape, dem: Demand, mem: Memory) -> Capacity:
    w, dep = brief.workload, brief.deployment
    read, _ = context_tokens(brief)
    batch, step_real = _decode_batch_and_step_s(brief, shape, dem)
    step_ideal = shape.decode_step_ideal_s(batch, read) if math.isfinite(batch) else math.inf
    prefill_fleet = shape.prefill_tokens_per_s * shape.replicas
    if w.request_rate is None:
        basis = "users x duty cycle: decode batch = generating sequences / replicas; utilization = prefill time + decode time"
        shares = _shares_at_streaming_pace(dem, prefill_fleet, _streaming_decode_fleet(shape, batch, step_real))
    else:
        basis = "request rate: utilization = load / capacity at the ITL target (TPOT from Little's law), split into prefill and decode time"
        if brief.objective.kind is not ObjectiveKind.latency:
            basis += f"; the ITL target is{_REFERENCE}"
        shares = _shares_at_engine_pace(brief, shape, dem, brief.effective_hit_rate)
        if brief.speculative.enabled:
            basis += "; with speculative decoding on at the batch, a token's decode time is its share of the speculative step"
    kv_fraction = kv_fraction_at(shape, dem, mem)
    binding = _binding(kv_fraction, shares.prefill, shares.decode)
    binding_nc = _binding(kv_fraction, shares.prefill_no_cache, shares.decode)
    # per GPU of a stage, summed over the stages a step passes (PP); each attention group reads its own sequences' KV
    weights_read = shape.step_bytes(batch, 0.0) / shape.gpus / GB
    kv_read = batch * read * shape.kv_bytes_per_token_per_gpu * shape.pp / shape.attention_groups / GB
    step_max_ideal = shape.decode_step_ideal_s(dep.max_num_seqs, read)
    result = trusted(
        Capacity,
        utilization_basis=basis,
        replicas=shape.replicas,
        replicas_per_node=shape.replicas_per_node,
        batch_per_replica=batch,
        decode_step_bytes_gb_per_gpu=weights_read + kv_read,
        decode_step_weights_gb_per_gpu=weights_read,
        decode_step_kv_gb_per_gpu=kv_read,
        decode_step_ideal_ms=step_ideal * 1e3,
        decode_step_ms=step_real * 1e3,
        decode_tokens_per_s_per_replica=shares.decode_tokens_per_s / shape.replicas,
        decode_tokens_per_s=shares.decode_tokens_per_s,
        prefill_tokens_per_s_per_replica=shape.prefill_tokens_per_s,
        prefill_tokens_per_s=prefill_fleet,
        prefill_fraction=shares.prefill,
        prefill_fraction_no_prefix_cache=shares.prefill_no_cache,
        decode_fraction=shares.decode,
        utilization=shares.utilization,
        utilization_no_prefix_cache=shares.utilization_no_cache,
        kv_fraction=kv_fraction,
        sizing_load_multiple=1 / shares.utilization if shares.utilization > 0 else math.inf,
        binding_constraint=binding,
        binding_constraint_no_prefix_cache=binding_nc,
        step_bytes_at_max_num_seqs_gb=shape.step_bytes(dep.max_num_seqs, read) / shape.gpus / GB,
        step_at_max_num_seqs_ideal_ms=step_max_ideal * 1e3,
        step_at_max_num_seqs_ms=shape.decode_step_real_s(dep.max_num_seqs, read) * 1e3,
        unchunked_prefill_p95_ms=w.input_tokens_p95 / shape.prefill_tokens_per_s * 1e3,
    )
    step = (brief, shape, dem, batch, read, weights_read + kv_read, step_ideal, step_real, prefill_fleet)
    result._text = _CapacityText(step, shares.arithmetic, mem.max_sequences_per_replica)
    return result


def _sizing_units(brief: Brief) -> str:
    """What the sizing batch divides by: every replica of the fleet, spare and long-context ones included."""
    dep = brief.deployment
    held = [
        f"{dep.spare_nodes} spare" if dep.spare_nodes else "",
        f"{dep.long_context_nodes} long-context" if dep.long_context_nodes else "",
    ]
    named = " and ".join(h for h in held if h)
    return f" (the worked design's sizing batch: every replica of the fleet, the {named} node(s) included)" if named else ""


def _step_arithmetic(
    brief: Brief,
    shape: ReplicaShape,
    dem: Demand,
    batch: float,
    read: float,
    step_gb: float,
    step_ideal: float,
    step_real: float,
    prefill_fleet: float,
) -> dict[str, str]:
    eff = brief.efficiency
    weights_gb = step_gb - batch * read * shape.kv_bytes_per_token_per_gpu / GB
    real_parts = [f"x {num(shape.tp_factor)} TP all-reduce"] if shape.tp_factor != 1 else []
    real_parts.append(f"/ {num(eff.bandwidth_fraction)} bandwidth efficiency")
    if eff.attention_bandwidth_fraction != eff.bandwidth_fraction:
        real_parts.append(f"(KV reads / {num(eff.attention_bandwidth_fraction)})")
    if eff.real_kernel_factor != 1:
        real_parts.append(f"x {num(eff.real_kernel_factor)} real kernels")
    if shape.step_overhead_s:
        real_parts.append(f"+ {num(shape.step_overhead_s * 1e3, 'ms')} per step")
    decode_replica = batch / step_real if step_real > 0 else 0.0
    unit = "micro-batch stream" if shape.pp > 1 else "replica"
    fleet = shape.units_text if shape.pp > 1 else str(shape.replicas)  # x 12 micro-batch streams (...), or x 12
    return {
        "batch_per_replica": f"{num(dem.generating_sequences)} generating / {shape.units_text} = {num(batch)} sequences{_sizing_units(brief)}",
        "decode_step_bytes_gb_per_gpu": (
            f"{num(weights_gb, 'GB')} weights + {num(batch)} x {num(read, 'tokens')} x"
            f" {num(shape.kv_bytes_per_token_per_gpu / KIB, 'KiB')} KV = {num(step_gb, 'GB')} per GPU"
        ),
        "decode_step_ideal_ms": f"{num(step_gb, 'GB')} / {num(shape.gpu.hbm_tb_per_s * 1e3, 'GB/s')} = {num(step_ideal * 1e3, 'ms')}",
        "decode_step_ms": f"{num(step_ideal * 1e3, 'ms')} {' '.join(real_parts)} = {num(step_real * 1e3, 'ms')}",
        "decode_tokens_per_s": (
            f"{num(batch)} / {num(step_real * 1e3, 'ms')} = {num(decode_replica, 'tok/s')} per {unit}"
            f" x {fleet} = {num(decode_replica * shape.replicas, 'tok/s')}"
        ),
        "prefill_tokens_per_s": (
            f"{shape.gpus} GPUs x {num(shape.peak_tflops_per_gpu, 'TFLOP/s')} ({shape.compute_precision}) x {num(eff.compute_fraction)}"
            f" / (2 x {num(shape.model.active_params)} FLOP per token) = {num(shape.prefill_tokens_per_s, 'tok/s')}"
            f" per {unit} x {fleet} = {num(prefill_fleet, 'tok/s')}"
        ),
    }
