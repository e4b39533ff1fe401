"""One replica's physics: how many bytes it holds and moves, how many FLOPs it does, per token and step.

Everything the capacity arithmetic, the operating point and the simulator share lives here, so the
three agree by construction. Per-GPU figures divide by TP; per-replica figures are the whole TP group.
"""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict

from planner.brief import Brief, ComputePeak, Precision
from planner.catalog import GpuSpec, ModelSpec, gpu_spec, model_spec
from planner.verdict import InfeasibleDesign, Problem

__all__ = ["ReplicaShape", "shape_of"]

GB = 1e9
TB = 1e12


class ReplicaShape(BaseModel):
    """Constants of one replica derived from the brief; the step-time functions below use them."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: ModelSpec
    gpu: GpuSpec
    tp: int
    replicas: int
    replicas_per_node: int
    weight_bytes_per_value: float
    kv_bytes_per_value: float
    compute_precision: str
    peak_tflops_per_gpu: float
    compute_fraction: float
    bandwidth_fraction: float  # weight reads
    attention_bandwidth_fraction: float  # KV reads by decode attention
    tp_factor: float  # 1 + all-reduce overhead when TP > 1
    real_kernel_factor: float
    step_overhead_s: float  # fixed per step, including the TP all-reduce latencies
    usable_gb_per_gpu: float  # memory x gpu_memory_utilization
    reserve_gb_per_gpu: float

    # --- memory -------------------------------------------------------------------------------
    @property
    def weights_bytes(self) -> float:
        """All weights of the model, held once per replica (MoE: every expert)."""
        return self.model.params * self.weight_bytes_per_value

    @property
    def weights_gb_per_gpu(self) -> float:
        return self.weights_bytes / self.tp / GB

    @property
    def kv_gb_per_gpu(self) -> float:
        return self.usable_gb_per_gpu - self.weights_gb_per_gpu - self.reserve_gb_per_gpu

    @property
    def engine_memory_fraction(self) -> float:
        """--gpu-memory-utilization: the share of each GPU the engine takes (weights, KV, activations), reserve excluded."""
        return (self.usable_gb_per_gpu - self.reserve_gb_per_gpu) / self.gpu.memory_gb

    @property
    def kv_heads_per_gpu(self) -> float:
        return self.model.kv_heads / self.tp

    @property
    def kv_bytes_per_token_per_gpu(self) -> float:
        m = self.model
        if m.kv_lora_rank:  # MLA: one compressed latent and a rotary key per layer, held whole on every GPU
            return m.layers * (m.kv_lora_rank + m.qk_rope_head_dim) * self.kv_bytes_per_value
        return 2 * m.layers * self.kv_heads_per_gpu * m.head_dim * self.kv_bytes_per_value  # 2: key and value

    @property
    def kv_bytes_per_token(self) -> float:
        """KV of one token across the whole replica."""
        return self.kv_bytes_per_token_per_gpu * self.tp

    @property
    def kv_capacity_tokens(self) -> float:
        """Tokens of KV one replica holds (each GPU holds its heads' share of every token)."""
        return max(self.kv_gb_per_gpu, 0.0) * GB / self.kv_bytes_per_token_per_gpu

    # --- bandwidth and compute ----------------------------------------------------------------
    @property
    def hbm_bytes_per_s(self) -> float:
        """Peak HBM bandwidth of the replica (all its GPUs)."""
        return self.gpu.hbm_tb_per_s * TB * self.tp

    @property
    def flops_per_s(self) -> float:
        """Achieved tensor-core throughput of the replica: peak x compute fraction."""
        return self.peak_tflops_per_gpu * TB * self.tp * self.compute_fraction

    @property
    def flops_per_token(self) -> float:
        return 2 * self.model.active_params  # 2: a multiply and an add per parameter

    @property
    def prefill_tokens_per_s(self) -> float:
        return self.flops_per_s / self.flops_per_token

    def step_bytes(self, batch: float, context_tokens: float) -> float:
        """Bytes one decode step reads on the replica: the weights it touches and every sequence's KV."""
        weights = self.model.params_read_per_step(batch) * self.weight_bytes_per_value
        return weights + batch * context_tokens * self.kv_bytes_per_token

    def decode_step_ideal_s(self, batch: float, context_tokens: float) -> float:
        """Bytes read / peak bandwidth: the step at 100% of HBM bandwidth, no overheads."""
        return self.step_bytes(batch, context_tokens) / self.hbm_bytes_per_s

    def decode_step_real_s(self, batch: float, context_tokens: float) -> float:
        """The real step: weights at the achieved bandwidth, KV at attention's, x TP all-reduce and kernel factors, + fixed time."""
        weights = self.model.params_read_per_step(batch) * self.weight_bytes_per_value / self.bandwidth_fraction
        kv = batch * context_tokens * self.kv_bytes_per_token / self.attention_bandwidth_fraction
        return (weights + kv) / self.hbm_bytes_per_s * self.tp_factor * self.real_kernel_factor + self.step_overhead_s


def _compute_precision(brief: Brief) -> str:
    peak = brief.efficiency.compute_peak
    if peak is not ComputePeak.auto:
        return str(peak.value)
    weights = brief.deployment.weights
    return "bf16" if weights in (Precision.bf16, Precision.int4) else weights.value  # W4A16 math is bf16


def _tp_choices(gpus_per_node: int, kv_heads: int) -> str:
    fits = [tp for tp in range(1, gpus_per_node + 1) if gpus_per_node % tp == 0 and kv_heads % tp == 0]
    return ", ".join(str(tp) for tp in fits)


def _check_tp(tp: int, gpus_per_node: int, kv_heads: int) -> None:
    """A replica is TP GPUs of one node that split the KV heads evenly; anything else is a verdict, not a number."""
    if tp > gpus_per_node:
        problem = f"TP={tp} is larger than a node ({gpus_per_node} GPUs); TP must stay inside one NVLink domain"
    elif gpus_per_node % tp:
        problem = f"TP={tp} does not divide the {gpus_per_node} GPUs of a node"
    elif kv_heads % tp:
        problem = f"TP={tp} does not divide the model's {kv_heads} KV heads"
    else:
        return
    change = f"set deployment.tp to one of {_tp_choices(gpus_per_node, kv_heads)}, or change hardware.gpus_per_node"
    raise InfeasibleDesign((Problem(field="deployment.tp", problem=problem, change=change),))


MAX_ENGINE_MEMORY_FRACTION = 0.95
_FRACTION_STEP = 1e-4  # --gpu-memory-utilization is printed to four decimals


def _engine_fraction(memory_gb: float, gpu_memory_utilization: float, reserve_gb: float) -> float:
    """The share of a GPU the engine takes (--gpu-memory-utilization): the brief's share less the reserve, at most
    MAX_ENGINE_MEMORY_FRACTION (CUDA context, NCCL buffers and activations need the rest), rounded down once to
    the four decimals the command prints, so the KV pool analysed is the one the printed flag gives."""
    wanted = min((memory_gb * gpu_memory_utilization - reserve_gb) / memory_gb, MAX_ENGINE_MEMORY_FRACTION)
    return math.floor(wanted / _FRACTION_STEP + 1e-9) * _FRACTION_STEP


def shape_of(brief: Brief) -> ReplicaShape:
    """The replica the brief describes; raises InfeasibleDesign (a BriefError) when no replica can be formed."""
    hw, dep = brief.hardware, brief.deployment
    model = model_spec(brief.model)
    gpu = gpu_spec(hw.gpu)
    _check_tp(dep.tp, hw.gpus_per_node, model.kv_heads)
    precision = _compute_precision(brief)
    eff = brief.efficiency
    replicas_per_node = hw.gpus_per_node // dep.tp
    return ReplicaShape(
        model=model,
        gpu=gpu,
        tp=dep.tp,
        replicas=replicas_per_node * hw.nodes,
        replicas_per_node=replicas_per_node,
        weight_bytes_per_value=dep.weights.bytes_per_value,
        kv_bytes_per_value=dep.kv_cache.bytes_per_value,
        compute_precision=precision,
        peak_tflops_per_gpu=gpu.peak_tflops(precision),
        compute_fraction=eff.compute_fraction,
        bandwidth_fraction=eff.bandwidth_fraction,
        attention_bandwidth_fraction=eff.attention_bandwidth_fraction,
        tp_factor=1 + eff.tp_comm_overhead if dep.tp > 1 else 1.0,
        real_kernel_factor=eff.real_kernel_factor,
        step_overhead_s=(eff.step_overhead_ms + (2 * model.layers * eff.allreduce_latency_us / 1e3 if dep.tp > 1 else 0.0)) / 1e3,
        usable_gb_per_gpu=gpu.memory_gb * _engine_fraction(gpu.memory_gb, dep.gpu_memory_utilization, dep.reserve_gb_per_gpu)
        + dep.reserve_gb_per_gpu,
        reserve_gb_per_gpu=dep.reserve_gb_per_gpu,
    )
