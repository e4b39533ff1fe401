"""Multi-LoRA serving as a first-class part of any brief with adapters: the adapter cache, the load on a miss,
tenant-aware routing, the batched-LoRA overhead and the engine options.

Tenant-aware routing partitions the adapters over the general pool's replicas, so a replica serves
adapters / replicas of them; without it every replica sees every adapter. Without max_loras every adapter stays
resident on every replica (what variation C and the memory check assume); with it a replica holds max_loras adapters in
GPU slots and max_cpu_loras in host memory (vLLM's LRU caches); requests spread evenly over the adapters a replica
serves, so a slot hit is slots / adapters served (capped at 1). A miss loads the adapter over the host link from
host memory, or first from storage when host memory misses too. The batched kernels (Punica's SGMV, S-LoRA) are a
term of the step model (planner.step_model), so the capacity, the SLO model and the simulator all carry them; the
overhead reported is that term's share of the decode step at the capacity batch (5-15% measured).
"""

from __future__ import annotations

import math
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict

from planner.brief import Brief, Lora
from planner.fmt import num, pct
from planner.lora import SGMV_KERNEL_US, LoraMemory, lora_kernels, lora_memory
from planner.pools import Pools, pools_of
from planner.replica import ReplicaShape
from planner.step_model import LORA_PARTS, step_time_s
from planner.trusted import trusted
from planner.verdict import Problem

__all__ = ["VLLM_LORA_RANKS", "AdapterLoads", "LoraServing", "adapter_loads", "lora_serving"]

VLLM_LORA_RANKS = (1, 8, 16, 32, 64, 128, 256, 320, 512)  # the values vLLM's --max-lora-rank accepts
HOST_LINK_GB_S_PER_GPU = 50.0  # PCIe Gen5 x16: 64 GB/s a direction, about 50 achieved
MISS_TAIL = 0.05  # a miss share above this puts the load inside the p95 TTFT


class LoraServing(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    adapters_per_replica: int
    gpu_slots: int  # --max-loras
    cpu_slots: int  # --max-cpu-loras
    max_lora_rank: int  # --max-lora-rank
    gb_per_adapter: float
    gpu_gb_per_gpu: float  # the GPU slots' adapters, per GPU: its TP share of its pipeline stage's layers
    cpu_gb_per_replica: float  # the host cache
    gpu_hit_rate: float
    cpu_hit_rate: float  # in GPU or host memory
    load_from_cpu_ms: float
    load_from_storage_ms: float
    ttft_load_ms: float  # what the p95 TTFT carries
    overhead: float  # the batched-LoRA kernels' share of the decode step at the capacity batch
    lora_step_ms: float  # ... their time in that step
    utilization_with_overhead: float  # the capacity's utilization, which carries the kernels
    problems: tuple[Problem, ...]
    arithmetic: dict[str, str]


def _rank_flag(rank: int) -> int:
    return next((r for r in VLLM_LORA_RANKS if r >= rank), rank)


def _split_text(shape: ReplicaShape) -> str:
    """What an adapter is split over on one GPU: 'TP 4', or with PP 'TP 4 / PP 2 stages' (a stage holds only its own layers')."""
    return f"TP {shape.tp} / PP {shape.pp} stages" if shape.pp > 1 else f"TP {shape.tp}"


def _links_text(shape: ReplicaShape) -> str:
    """The host links a miss loads over: '4', or with PP '4 x 2 stages' (each stage loads its own layers at once)."""
    return f"{shape.tp} x {shape.pp} stages" if shape.pp > 1 else f"{shape.tp}"


def _distinct(slots: int, batch: float) -> float:
    """Distinct adapters among a step's sequences, drawn evenly from the slots (planner.step_model's LoRA term)."""
    return slots * (1 - (1 - 1 / slots) ** max(batch, 1.0)) if slots > 1 else 1.0


def _routing_text(lora: Lora, replicas: int, served: int, pools: Pools) -> str:
    """Tenant routing's arithmetic over the serving replicas the adapters are partitioned over (the general pool's: the
    spare serves none, the long-context pool takes every tenant's long prompts); with every adapter resident on every
    replica (no --max-loras) any replica serves any tenant, and the text says routing is not needed for adapter hits."""
    if not lora.tenant_routing:
        return f"no tenant routing: every replica serves all {lora.adapters:,} adapters"
    left = ["the spare"] if pools.spare_nodes else []
    if pools.long_context_nodes:
        left.append("the long-context pool, which takes every tenant's long prompts,")
    outside = f" ({' and '.join(left)} not counted)" if left else ""
    over = f"{lora.adapters:,} adapters / {replicas} general-pool replicas = {served} per replica{outside}"
    if lora.max_loras == 0:
        return f"tenant routing is not needed for adapter hits: every replica holds every adapter, so any replica serves any tenant; routed, {over}"
    return f"tenant-aware routing: {over}"


def lora_step_ms(shape: ReplicaShape, batch: float, read: float) -> tuple[float, float]:
    """(the batched-LoRA kernels' ms, the capacity's decode step's ms) at a batch whose sequences each read `read`
    tokens of KV (planner.capacity's): the step model's LoRA term and the step it is part of."""
    b = max(batch, 1.0)
    lora_s = step_time_s(shape.step.masked(LORA_PARTS), b, b, b * read, 0.0)
    return lora_s * 1e3, shape.decode_step_real_s(b, read) * 1e3


class AdapterLoads(NamedTuple):
    """A replica's adapter cache and what a request's adapter costs its first token (lora_serving's figures, without
    its words: the SLO budget's TTFT terms read these alone)."""

    pools: Pools
    replicas: int  # the general pool's whole replicas the adapters are partitioned over
    served: int  # adapters a replica serves
    slots: int  # --max-loras
    cpu: int  # --max-cpu-loras
    memory: LoraMemory  # an adapter's size and where it sits
    gpu_hit_rate: float
    cpu_hit_rate: float  # in GPU or host memory
    load_from_cpu_s: float
    load_from_storage_s: float
    ttft_s: float  # what the p95 TTFT carries


def adapter_loads(brief: Brief, shape: ReplicaShape) -> AdapterLoads | None:
    """The adapter cache of a replica of `shape` under the brief and its loads on a miss (None: no adapters)."""
    lora = brief.lora
    if lora.adapters == 0:
        return None
    mem = lora_memory(lora, shape.model, shape.tp, shape.attention_groups, pp=shape.pp)
    pools, _ = pools_of(brief, shape)
    replicas = max(pools.general_replicas // shape.pp, 1)  # the general pool's whole replicas (with PP it counts micro-batch streams)
    served = math.ceil(lora.adapters / replicas) if lora.tenant_routing else lora.adapters
    slots = min(lora.max_loras, served) if lora.max_loras > 0 else lora.adapters  # 0: every adapter resident on every replica
    cpu = max(lora.max_cpu_loras, slots)
    gpu_hit = min(1.0, slots / served)
    cpu_hit = min(1.0, cpu / served)
    links = shape.tp * shape.pp  # each stage's TP GPUs load that stage's layers of the adapter, all stages at once
    from_cpu_s = mem.gb_per_adapter / (HOST_LINK_GB_S_PER_GPU * links)
    from_storage_s = mem.gb_per_adapter / lora.adapter_storage_gb_s + from_cpu_s
    miss_storage = 1 - cpu_hit
    ttft_s = from_storage_s if miss_storage > MISS_TAIL else from_cpu_s if 1 - gpu_hit > MISS_TAIL else 0.0
    return AdapterLoads(pools, replicas, served, slots, cpu, mem, gpu_hit, cpu_hit, from_cpu_s, from_storage_s, ttft_s)


def lora_serving(
    brief: Brief, shape: ReplicaShape, utilization: float, batch: float = 1.0, read: float = 0.0, nodes_change: str = ""
) -> LoraServing | None:
    """The adapters' serving figures; a fleet over 100% with their kernels gets `nodes_change` (the fleet re-plans find)."""
    loads = adapter_loads(brief, shape)
    if loads is None:
        return None
    lora = brief.lora
    pools, replicas, served, slots, cpu, mem, gpu_hit, cpu_hit, from_cpu_s, from_storage_s, ttft_s = loads
    util = utilization  # the capacity's decode step carries the kernels already
    kernels_ms, step_ms = lora_step_ms(shape, batch, read)
    groups = shape.attention_groups  # with DP attention each group (a DP rank, its own engine) holds and loads its own copies
    copies_text = (
        f"; each of the {groups} attention groups (DP ranks) holds its own: {num(slots * mem.gb_per_adapter * groups, 'GB')} over the replica's {shape.gpus_per_replica} GPUs,"
        f" and {cpu} x {groups} = {cpu * groups} adapters in host memory"
        if groups > 1
        else ""
    )
    overhead = kernels_ms / step_ms if step_ms > 0 else 0.0
    routing = _routing_text(lora, replicas, served, pools)
    problems: list[Problem] = []
    if util > 1:
        problems.append(
            Problem(
                field="hardware.nodes",
                problem=f"with the batched-LoRA kernels in every step the fleet runs at {pct(util)}: over 100% at the peak",
                change=nodes_change or "add nodes, or merge the most used adapters into their own replicas",
            )
        )
    arithmetic = {
        "adapter": f"rank {lora.rank} x {num(mem.widths_per_layer)} widths ({mem.modules}) x {shape.model.layers} layers x 2 bytes = {num(mem.gb_per_adapter * 1e3, 'MB')}",
        "routing": routing,
        "cache": (
            f"{slots} GPU slots (--max-loras) and {cpu} in host memory (--max-cpu-loras) for {served} adapters:"
            f" {pct(gpu_hit)} of requests find theirs on the GPU, {pct(cpu_hit)} in GPU or host memory (even spread)"
            if lora.max_loras > 0
            else f"no --max-loras in the brief: all {slots} adapters stay resident on every replica ({slots} GPU slots), so every request finds its adapter on the GPU"
        ),
        "load": (
            f"a miss loads {num(mem.gb_per_adapter * 1e3, 'MB')}: from host memory over {'an attention group' + chr(39) + 's ' if shape.attention_groups > 1 else ''}{_links_text(shape)} x {num(HOST_LINK_GB_S_PER_GPU, 'GB/s')}"
            f" = {num(from_cpu_s * 1e3, 'ms')}, from storage at {num(lora.adapter_storage_gb_s, 'GB/s')} first = {num(from_storage_s * 1e3, 'ms')};"
            f" the p95 TTFT carries {num(ttft_s * 1e3, 'ms')}"
        ),
        "memory": f"{slots} x {num(mem.gb_per_adapter * 1e3, 'MB')} / {_split_text(shape)} = {num(slots * mem.gb_per_adapter / (shape.tp * shape.pp), 'GB')} per GPU beside the weights"
        + copies_text,
        "overhead": (
            f"at the capacity batch of {num(max(batch, 1.0))} the step reads its {num(_distinct(slots, batch))} distinct adapters (of {slots} slots),"
            f" computes rank {lora.rank} on each token and"
            f" launches {lora_kernels(lora, shape.model)} segmented kernels (shrink + expand, {mem.modules}, {shape.model.layers} layers, {num(SGMV_KERNEL_US, 'us')} each):"
            f" {num(kernels_ms, 'ms')} of a {num(step_ms, 'ms')} decode step = {pct(overhead)} (5-15% measured for Punica/S-LoRA);"
            f" the capacity's utilization carries it: {pct(util)}"
        ),
    }
    return trusted(
        LoraServing,
        adapters_per_replica=served,
        gpu_slots=slots,
        cpu_slots=cpu,
        max_lora_rank=_rank_flag(lora.rank),
        gb_per_adapter=mem.gb_per_adapter,
        gpu_gb_per_gpu=slots * mem.gb_per_adapter / (shape.tp * shape.pp),  # a GPU holds its TP share of its stage's layers
        cpu_gb_per_replica=cpu * mem.gb_per_adapter * groups,
        gpu_hit_rate=gpu_hit,
        cpu_hit_rate=cpu_hit,
        load_from_cpu_ms=from_cpu_s * 1e3,
        load_from_storage_ms=from_storage_s * 1e3,
        ttft_load_ms=ttft_s * 1e3,
        overhead=overhead,
        lora_step_ms=kernels_ms,
        utilization_with_overhead=util,
        problems=tuple(problems),
        arithmetic=arithmetic,
    )
