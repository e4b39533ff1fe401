"""One replica's physics: how many bytes it holds and moves, how many FLOPs it does, per token and step.

Everything the capacity arithmetic, the operating point and the simulator share lives here, so the
three agree by construction. Per-GPU figures divide by TP; per-replica figures are the whole TP group.
"""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict

from planner.brief import Brief, ComputePeak
from planner.catalog import GpuSpec, ModelSpec, gpu_spec, model_spec
from planner.quantization import weight_scheme
from planner.step_model import CONSTANTS, GEMM_S_PER_TOKEN, LM_HEAD_S_PER_SEQ, StepConstants, step_time_s
from planner.verdict import InfeasibleDesign, Problem

__all__ = ["ReplicaShape", "shape_of"]

GB = 1e9
TB = 1e12
# the capacity arithmetic's decode step: every cost of the engine's step but the GEMM FLOPs (prefill's share)
_ALL_BUT_COMPUTE = tuple(i for i in range(CONSTANTS) if i not in (GEMM_S_PER_TOKEN, LM_HEAD_S_PER_SEQ))


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
    step: StepConstants  # the per-kernel step-time constants (planner.step_model)
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
        return _kv_bytes_per_token_per_gpu(self.model, self.tp, self.kv_bytes_per_value)

    @property
    def kv_bytes_per_token(self) -> float:
        """KV of one token across the whole replica."""
        return self.kv_bytes_per_token_per_gpu * self.tp

    @property
    def kv_capacity_tokens(self) -> float:
        """Tokens of KV one replica holds (each GPU holds its heads' share of every token)."""
        return max(self.kv_gb_per_gpu, 0.0) * GB / self.kv_bytes_per_token_per_gpu

    @property
    def step_overhead_s(self) -> float:
        """Fixed per step: scheduling, launch (the step model's constant)."""
        return self.step.overhead_s

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
        """The capacity arithmetic's decode step: the engine's step (planner.step_model) without its compute term,
        so the decode share of the replica is its memory and latency time and the prefill share its compute.
        With the seeds' constants (flat TP and kernel factors, no bytes moved by the all-reduce, no per-sequence
        cost) this is exactly the worked designs' hand formula; the engine's own step is `decode_step_s`."""
        if not math.isfinite(batch * context_tokens):
            return math.inf
        return float(step_time_s(self.step.masked(_ALL_BUT_COMPUTE), batch, batch, batch * context_tokens, 0.0))

    def decode_step_s(self, batch: float, context_tokens: float) -> float:
        """A pure decode step of `batch` sequences each reading `context_tokens` of KV, as the engine runs it
        (planner.step_model: GEMMs, attention, all-reduce, fixed and per-sequence costs)."""
        if not math.isfinite(batch * context_tokens):
            return math.inf
        return float(step_time_s(self.step.values(), batch, batch, batch * context_tokens, 0.0))


def _compute_precision(brief: Brief, gpu: GpuSpec) -> str:
    """The peak the GEMMs run at: the brief's choice, else what the weights run as on this GPU (planner.quantization)."""
    peak = brief.efficiency.compute_peak
    if peak is not ComputePeak.auto:
        return str(peak.value)
    return weight_scheme(brief.deployment.weights, gpu).compute_precision


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


ACTIVATION_BYTES = 2  # an all-reduce moves BF16 activations


def _gemm_params(model: ModelSpec) -> tuple[float, float]:
    """(parameters a token's projections multiply, excluding the LM head; the LM head's) of the active path.
    The input embedding is a lookup, not a GEMM; a tied LM head shares its weights (counted once in params)."""
    head = float(model.vocab_size * model.hidden_size)
    tables = head if model.tied_embeddings else 2 * head
    return model.active_params - tables, head


def _weights_read(model: ModelSpec) -> tuple[float, float]:
    """(parameters every step reads, parameters of all routed experts). The input embedding is counted as read in
    full, as the seeds count it (a step gathers only its tokens' rows: ~1.5% of a 70B model's bytes, ~6% of an 8B's)."""
    experts = model.experts * model.expert_params if model.is_moe else 0.0
    return (model.shared_params if model.is_moe else model.params), experts


def step_constants(brief: Brief, model: ModelSpec, gpu: GpuSpec, precision: str) -> StepConstants:
    """The replica's step-time constants from the catalog and the brief's efficiencies (planner.step_model)."""
    dep, eff = brief.deployment, brief.efficiency
    tp = dep.tp
    hbm = gpu.hbm_tb_per_s * TB * tp
    compute = gpu.peak_tflops(precision) * TB * tp * eff.compute_fraction
    attention_compute = gpu.peak_tflops("bf16") * TB * tp * eff.compute_fraction  # attention runs in BF16
    dense, experts = _weights_read(model)
    gemm_params, head_params = _gemm_params(model)
    bpv = dep.weights.bytes_per_value
    kv_bytes = _kv_bytes_per_token_per_gpu(model, tp, dep.kv_cache.bytes_per_value) * tp
    comm = tp > 1
    reads = hbm / ((1 + eff.tp_comm_overhead if comm else 1.0) * eff.real_kernel_factor)  # the seeds' flat factors slow the reads
    link = gpu.interconnect_gb_per_s * 1e9 * eff.interconnect_fraction
    token_bytes = model.hidden_size * ACTIVATION_BYTES if eff.allreduce_bytes_moved else 0.0
    return StepConstants(
        weights_s=dense * bpv / (reads * eff.bandwidth_fraction),
        experts_s=experts * bpv / (reads * eff.bandwidth_fraction),
        expert_miss=1 - model.experts_per_token / model.experts if model.is_moe else 1.0,
        gemm_s_per_token=2 * gemm_params / compute,  # 2: a multiply and an add per parameter
        lm_head_s_per_seq=2 * head_params / compute,
        kv_s_per_token=kv_bytes / (reads * eff.attention_bandwidth_fraction),
        attn_s_per_pair=4 * model.layers * model.attention_heads * model.head_dim / attention_compute,  # QK and AV
        allreduces=2 * model.layers if comm else 0,  # after attention and after the MLP, every layer
        allreduce_latency_s=eff.allreduce_latency_us / 1e6,
        one_shot_s_per_token=(tp - 1) * token_bytes / link if comm else 0.0,
        two_shot_s_per_token=2 * (tp - 1) / tp * token_bytes / link if comm else 0.0,
        overhead_s=eff.step_overhead_ms / 1e3,
        per_sequence_s=eff.per_sequence_us / 1e6,
        roofline=1.0 if eff.step_roofline else 0.0,
    )


def _kv_bytes_per_token_per_gpu(model: ModelSpec, tp: int, bytes_per_value: float) -> float:
    if model.kv_lora_rank:  # MLA: one compressed latent and a rotary key per layer, held whole on every GPU
        return model.layers * (model.kv_lora_rank + model.qk_rope_head_dim) * bytes_per_value
    return 2 * model.layers * model.kv_heads / tp * model.head_dim * bytes_per_value  # 2: key and value


def shape_of(brief: Brief) -> ReplicaShape:
    """The replica the brief describes; raises InfeasibleDesign (a BriefError) when no replica can be formed."""
    hw, dep = brief.hardware, brief.deployment
    model = model_spec(brief.model)
    gpu = gpu_spec(hw.gpu)
    _check_tp(dep.tp, hw.gpus_per_node, model.kv_heads)
    precision = _compute_precision(brief, gpu)
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
        step=step_constants(brief, model, gpu, precision),
        usable_gb_per_gpu=gpu.memory_gb * _engine_fraction(gpu.memory_gb, dep.gpu_memory_utilization, dep.reserve_gb_per_gpu)
        + dep.reserve_gb_per_gpu,
        reserve_gb_per_gpu=dep.reserve_gb_per_gpu,
    )
