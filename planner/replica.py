"""One replica's physics: how many bytes it holds and moves, how many FLOPs it does, per token and step.

Everything the capacity arithmetic, the operating point and the simulator share lives here, so the
three agree by construction. Per-GPU figures divide by TP; per-replica figures are the whole TP group.

Multi-GPU shapes beyond one TP group (each off by default):
- pipeline parallelism (PP stages, each on its own node): the layers, their weights and KV split between the stages.
  The unit the analysis serves is one micro-batch stream: it passes every stage in turn (its step is the sum of the
  stages' times plus the sends between them), and a replica keeps PP of them in flight, one in each stage, so the
  replica's throughput is PP streams' and a stream holds 1/PP of the replica's KV. `replicas` counts these streams.
- expert parallelism (EP) with data-parallel attention: a stage is EP GPUs (possibly several nodes); the routed
  experts are spread over all of them, the attention runs in EP / TP groups of TP GPUs, each with its own
  sequences' KV (MLA's latent is then held once per group, not on every GPU of a TP group). One engine step runs
  every group at once and joins them in the all-to-alls.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import cached_property
from operator import attrgetter, itemgetter
from typing import Any, NoReturn

from pydantic import ConfigDict

from planner.brief import Brief, Deployment
from planner.cached import CachingModel
from planner.catalog import GpuSpec, ModelSpec, gpu_spec, model_spec
from planner.lora import SGMV_KERNEL_US, lora_kernels, lora_memory, lora_slots
from planner.memo import BoundedMemo
from planner.quantization import prefill_precision
from planner.step_model import CONSTANTS, GEMM_S_PER_TOKEN, LM_HEAD_S_PER_SEQ, Constants, StepConstants, decode_step_function, step_time_s
from planner.trusted import trusted
from planner.verdict import InfeasibleDesign, Problem

__all__ = ["ReplicaShape", "replica_inputs", "shape_of", "units_text"]

GB = 1e9
TB = 1e12
# the capacity arithmetic's decode step: every cost of the engine's step but the GEMM FLOPs (prefill's share)
_ALL_BUT_COMPUTE = tuple(i for i in range(CONSTANTS) if i not in (GEMM_S_PER_TOKEN, LM_HEAD_S_PER_SEQ))


class ReplicaShape(CachingModel):
    """Constants of one replica derived from the brief; the step-time functions below use them. The figures worked out
    from the fields alone (GPUs, weights and KV per GPU, bandwidth, prefill rate) are kept on first read: a plan reads
    them hundreds of times (CachingModel drops them from a copy)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: ModelSpec
    gpu: GpuSpec
    tp: int
    pp: int  # pipeline stages, each on its own node(s)
    ep: int  # expert-parallel degree (1: the experts split with the TP group)
    attention_groups: int  # data-parallel attention groups of TP GPUs in a stage (1 without DP attention)
    replica_nodes: int  # nodes one replica spans: PP stages x the nodes of a stage
    units_per_replica_group: int  # serving units (replicas x PP micro-batch streams) on those replica_nodes nodes
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

    @cached_property
    def memo(self) -> dict[tuple[object, ...], Any]:
        """What the planner derives from this replica and a brief, built once per replica (planner.slo's latency
        engines: a solve evaluates hundreds of loads on one). Not a field: the shape stays what it describes."""
        return {}

    @cached_property
    def replica_key(self) -> tuple[object, ...]:
        """The replica's fields but how many (and its GPU by its catalog key: one spec a key, whose dense_tflops table
        is no hashable part): what a figure of one replica, whatever the fleet, is kept by (the SLO capacity, the
        worked relation's capacity, speculation's switch), so a re-plan that only moves nodes finds it."""
        return (_REPLICA_FIELDS(self.__dict__), self.gpu.key)

    # --- memory -------------------------------------------------------------------------------
    @cached_property
    def gpus(self) -> int:
        """GPUs of one pipeline stage: TP, or EP with DP attention (the serving unit's share of the replica's GPUs)."""
        return self.tp * self.attention_groups

    @property
    def gpus_text(self) -> str:
        """The serving unit's GPUs as a text names them: '8 GPUs', or '16 GPUs (16 attention groups of TP=1)'."""
        groups = f" ({self.attention_groups} attention groups of TP={self.tp})" if self.attention_groups > 1 else ""
        return f"{self.gpus} GPUs{groups}"

    @property
    def units_text(self) -> str:
        """The serving units a text divides the fleet's load by: '12 replicas', or with PP '12 micro-batch streams
        (6 replicas x PP=2)' (`replicas` counts the streams)."""
        return units_text(self.replicas, self.pp)

    @property
    def gpus_per_replica(self) -> int:
        return self.gpus * self.pp

    @property
    def weights_bytes(self) -> float:
        """The weights one serving unit holds (without PP or DP attention: the whole model, every expert, once)."""
        return self.weights_gb_per_gpu * GB * self.gpus

    @cached_property
    def weights_gb_per_gpu(self) -> float:
        """The attention and shared weights split by TP, the routed experts over the stage's GPUs, the layers by PP."""
        experts = self.model.experts * self.model.expert_params if self.model.is_moe else 0.0
        shared = self.model.params - experts
        return (shared / self.tp + experts / self.gpus) * self.weight_bytes_per_value / self.pp / GB

    def replicas_in(self, nodes: int) -> int:
        """Serving units `nodes` nodes run: whole replicas only (a replica spans replica_nodes nodes)."""
        return nodes // self.replica_nodes * self.units_per_replica_group

    def nodes_for(self, units: int) -> int:
        """The fewest nodes that run `units` serving units: whole replicas of replica_nodes nodes."""
        return math.ceil(units / self.units_per_replica_group - 1e-9) * self.replica_nodes

    @cached_property
    def kv_gb_per_gpu(self) -> float:
        return self.usable_gb_per_gpu - self.weights_gb_per_gpu - self.reserve_gb_per_gpu

    @property
    def engine_memory_fraction(self) -> float:
        """--gpu-memory-utilization: the share of each GPU the engine takes (weights, KV, activations), reserve excluded."""
        return round((self.usable_gb_per_gpu - self.reserve_gb_per_gpu) / self.gpu.memory_gb, _FRACTION_DECIMALS)

    @property
    def kv_heads_per_gpu(self) -> float:
        return self.model.kv_heads / self.tp

    @cached_property
    def kv_bytes_per_token_per_gpu(self) -> float:
        """One token's KV on a GPU of its attention group: its heads' share (MLA: the whole latent), its stage's layers."""
        return _kv_bytes_per_token_per_gpu(self.model, self.tp, self.kv_bytes_per_value) / self.pp

    @cached_property
    def kv_bytes_per_token(self) -> float:
        """KV of one token across the replica: the TP group that holds it, every stage."""
        return self.kv_bytes_per_token_per_gpu * self.tp * self.pp

    @cached_property
    def kv_capacity_tokens(self) -> float:
        """Tokens of KV one serving unit holds: each GPU holds its heads' share of its group's tokens, each attention
        group its own sequences; with PP a stream has 1/PP of the replica's pool."""
        per_group = max(self.kv_gb_per_gpu, 0.0) * GB / self.kv_bytes_per_token_per_gpu
        return per_group * self.attention_groups / self.pp

    @property
    def step_overhead_s(self) -> float:
        """Fixed per step: scheduling, launch (the step model's constant)."""
        return self.step.overhead_s

    # --- bandwidth and compute ----------------------------------------------------------------
    @cached_property
    def hbm_bytes_per_s(self) -> float:
        """Peak HBM bandwidth of the replica (all its GPUs; with PP, one stage's: a stream is in one stage at a time)."""
        return self.gpu.hbm_tb_per_s * TB * self.gpus

    @cached_property
    def flops_per_s(self) -> float:
        """Achieved tensor-core throughput of the replica: peak x compute fraction."""
        return self.peak_tflops_per_gpu * TB * self.gpus * self.compute_fraction

    @property
    def flops_per_token(self) -> float:
        return 2 * self.model.active_params  # 2: a multiply and an add per parameter

    @cached_property
    def prefill_tokens_per_s(self) -> float:
        return self.flops_per_s / self.flops_per_token

    @cached_property
    def shared_params_copies(self) -> float:
        """The shared weights' extra copies a step reads: each attention group beyond the first reads its own."""
        return (self.attention_groups - 1) * self.model.shared_params

    def step_bytes(self, batch: float, context_tokens: float) -> float:
        """Bytes one decode step reads on the replica: the weights it touches (each attention group its copy of the
        shared ones) and every sequence's KV."""
        weights = (self.model.params_read_per_step(batch) + self.shared_params_copies) * self.weight_bytes_per_value
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
        steps = self._real_steps
        step = steps[context_tokens] if context_tokens in steps else _kept_step(steps, self.real_step_constants, context_tokens)
        if step is None:  # a step decode_step_function does not write out
            return float(step_time_s(self.real_step_constants, batch, batch, batch * context_tokens, 0.0))
        return float(step(batch))

    @cached_property
    def real_step_constants(self) -> Constants:
        """The step's constants without its compute terms (decode_step_real_s's), kept: the seed relation reads that step
        a hundred times a plan."""
        return self.step.masked(_ALL_BUT_COMPUTE)

    def decode_step_s(self, batch: float, context_tokens: float) -> float:
        """A pure decode step of `batch` sequences each reading `context_tokens` of KV, as the engine runs it
        (planner.step_model: GEMMs, attention, all-reduce, fixed and per-sequence costs)."""
        if not math.isfinite(batch * context_tokens):
            return math.inf
        steps = self._decode_steps
        step = steps[context_tokens] if context_tokens in steps else _kept_step(steps, self.step.values(), context_tokens)
        if step is None:  # a step decode_step_function does not write out
            return float(step_time_s(self.step.values(), batch, batch, batch * context_tokens, 0.0))
        return float(step(batch))

    @cached_property
    def _decode_steps(self) -> dict[float, Callable[[float], float] | None]:
        """decode_step_s's steps by context, each step_model.decode_step_function of the constants (a disaggregated
        decode pool's solves read ~200 steps a plan at one context)."""
        return {}

    @cached_property
    def _real_steps(self) -> dict[float, Callable[[float], float] | None]:
        """decode_step_real_s's steps by context, as _decode_steps (the seed relation's solves: ~40-70 a plan)."""
        return {}


def _kept_step(
    steps: dict[float, Callable[[float], float] | None], constants: Constants, context_tokens: float
) -> Callable[[float], float] | None:
    """The decode step at this context (step_model.decode_step_function), made and kept in `steps` (emptied past
    _STEPS_KEPT contexts)."""
    if len(steps) >= _STEPS_KEPT:
        steps.clear()
    step = steps[context_tokens] = decode_step_function(constants, context_tokens)
    return step


_STEPS_KEPT = 64  # contexts a replica keeps steps for: a plan reads one to a few


_REPLICA_FIELDS = itemgetter(*(name for name in ReplicaShape.model_fields if name not in ("replicas", "gpu")))


def units_text(units: int, pp: int) -> str:
    """'12 replicas', or '12 micro-batch streams (6 replicas x PP=2)' when each replica runs PP streams."""
    return f"{units} micro-batch streams ({units // pp} replicas x PP={pp})" if pp > 1 else f"{units} replicas"


def _compute_precision(brief: Brief, gpu: GpuSpec) -> str:
    """The peak prefill is sized at: what the weights run as on this GPU, or a lower peak the brief states (planner.quantization)."""
    return prefill_precision(brief.deployment.weights, brief.efficiency.compute_peak, gpu)


def _tp_choices(gpus_per_node: int, kv_heads: int) -> str:
    fits = [tp for tp in range(1, gpus_per_node + 1) if gpus_per_node % tp == 0 and kv_heads % tp == 0]
    return ", ".join(str(tp) for tp in fits)


def _check_tp(tp: int, gpus_per_node: int, kv_heads: int) -> None:
    """A replica is TP GPUs of one node that split the KV heads evenly; anything else is a verdict, not a number.
    TP across nodes is not modelled: its two all-reduces a layer would cross the network (~50 GB/s a GPU against
    NVLink's 450), so a model too large for one node is split into pipeline stages instead."""
    if tp > gpus_per_node:
        problem = (
            f"TP={tp} is larger than a node ({gpus_per_node} GPUs); TP must stay inside one node's GPU links:"
            f" for a model too large for a node, add pipeline stages (deployment.pp, one node each)"
        )
    elif gpus_per_node % tp:
        problem = f"TP={tp} does not divide the {gpus_per_node} GPUs of a node"
    elif kv_heads % tp:
        problem = f"TP={tp} does not divide the model's {kv_heads} KV heads"
    else:
        return
    change = f"set deployment.tp to one of {_tp_choices(gpus_per_node, kv_heads)}, or change hardware.gpus_per_node"
    raise InfeasibleDesign((Problem(field="deployment.tp", problem=problem, change=change),))


def _parallel_problem(dep: Deployment, model: ModelSpec, gpus_per_node: int) -> Problem | None:
    """What makes the brief's EP, DP attention and PP no replica (None when they form one)."""
    tp, ep = dep.tp, dep.ep
    if ep > 1 and not model.is_moe:
        return Problem(field="deployment.ep", problem=f"{model.name} has no routed experts to spread", change="set deployment.ep = 1")
    if dep.dp_attention and ep == 1:
        return Problem(
            field="deployment.dp_attention",
            problem="DP attention spreads a replica's attention groups over its expert-parallel GPUs, and EP is 1",
            change="set deployment.ep to the GPUs the experts spread over (a multiple of TP), or turn dp_attention off",
        )
    if ep > 1 and not dep.dp_attention and ep != tp:
        return Problem(
            field="deployment.ep",
            problem=f"without DP attention the experts spread over the TP group: EP={ep} must equal TP={tp}",
            change=f"set deployment.ep = {tp}, or turn deployment.dp_attention on to spread them over EP / TP attention groups",
        )
    if dep.dp_attention and ep % tp:
        return Problem(
            field="deployment.ep", problem=f"EP={ep} is not a whole number of TP={tp} attention groups", change="set EP to a multiple of TP"
        )
    stage = ep if dep.dp_attention else tp
    if stage > gpus_per_node and stage % gpus_per_node:
        return Problem(
            field="deployment.ep",
            problem=f"EP={ep} is not a whole number of {gpus_per_node}-GPU nodes",
            change=f"set EP to a multiple of {gpus_per_node} (or at most {gpus_per_node})",
        )
    if stage < gpus_per_node and gpus_per_node % stage:
        return Problem(
            field="deployment.ep",
            problem=f"EP={ep} does not divide the {gpus_per_node} GPUs of a node",
            change="set EP to a divisor of the node",
        )
    if dep.pp > model.layers:
        return Problem(
            field="deployment.pp",
            problem=f"{dep.pp} stages for {model.layers} layers",
            change=f"set deployment.pp to at most {model.layers}",
        )
    return None


def _check_parallel(dep: Deployment, model: ModelSpec, gpus_per_node: int) -> None:
    problem = _parallel_problem(dep, model, gpus_per_node)
    if problem is not None:
        raise InfeasibleDesign((problem,))


MAX_ENGINE_MEMORY_FRACTION = 0.95
_FRACTION_STEP = 1e-4  # --gpu-memory-utilization is printed to four decimals
_FRACTION_DECIMALS = 4


def _engine_fraction(memory_gb: float, gpu_memory_utilization: float, reserve_gb: float) -> float:
    """The share of a GPU the engine takes (--gpu-memory-utilization): the brief's share less the reserve, at most
    MAX_ENGINE_MEMORY_FRACTION (CUDA context, NCCL buffers and activations need the rest), rounded down once to
    the four decimals the command prints, so the KV pool analysed is the one the printed flag gives."""
    wanted = min((memory_gb * gpu_memory_utilization - reserve_gb) / memory_gb, MAX_ENGINE_MEMORY_FRACTION)
    return round(math.floor(wanted / _FRACTION_STEP + 1e-9) * _FRACTION_STEP, _FRACTION_DECIMALS)  # 0.879, not 0.8790000000000001


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


# Expert and pipeline parallelism's network: the stated assumptions (the brief has no fields for them).
A2A_BYTES_PER_VALUE = 3.0  # a routed token copy goes out in FP8 (1 byte) and comes back in BF16 (2): DeepEP's dispatch and combine
NETWORK_FRACTION = 0.85  # achieved share of a GPU's scale-out NIC (DeepEP's README: ~43-47 GB/s RDMA of 400 Gb/s ConnectX-7)
NETWORK_LATENCY_US = 10.0  # one RDMA message across the InfiniBand fabric, on top of the all-reduce's NVLink latency
PP_SEND_BYTES_PER_VALUE = 2.0  # the activations a stage hands the next, BF16


def _comm_groups(brief: Brief, model: ModelSpec) -> tuple[int, int, int]:
    """(GPUs of a stage, attention groups in it, MoE layers that all-to-all: 0 without EP)."""
    dep = brief.deployment
    stage = dep.ep if dep.dp_attention else dep.tp
    return stage, stage // dep.tp, model.moe_layers if dep.ep > 1 else 0


def _a2a_s_per_token(model: ModelSpec, gpu: GpuSpec, stage: int, gpus_per_node: int, nvlink: float) -> float:
    """One token's dispatch and combine in one MoE layer: its top-k copies, each GPU sending its 1/stage share of the
    tokens, to the other GPUs of its node over NVLink and to the other nodes' over the network, both at once."""
    copy_bytes = model.hidden_size * model.experts_per_token * A2A_BYTES_PER_VALUE / stage
    in_node = min(stage, gpus_per_node)
    intra_share, inter_share = (in_node - 1) / stage, (stage - in_node) / stage  # where a routed copy lands
    network = gpu.scale_out_gb_per_s * 1e9 * NETWORK_FRACTION
    return max(copy_bytes * intra_share / nvlink, copy_bytes * inter_share / network)


def _mla_decode_flops(model: ModelSpec) -> float:
    """FLOPs a decode query spends on one token of MLA's cached latent, all layers (0 for GQA, whose decode attention
    waits on the KV reads): every one of the heads scores the latent and rotary key (2 x 576 FLOPs) and sums the latent
    (2 x 512), so a step's attention is compute-bound (FlashMLA: ~660 TFLOP/s BF16 on H800, not the HBM bandwidth)."""
    if not model.kv_lora_rank:
        return 0.0
    return model.layers * model.attention_heads * 2 * (2 * model.kv_lora_rank + model.qk_rope_head_dim)


def step_constants(brief: Brief, model: ModelSpec, gpu: GpuSpec, precision: str) -> StepConstants:
    """The replica's step-time constants from the catalog and the brief's efficiencies (planner.step_model); `model`
    and `gpu` are the brief's (shape_of looks them up). Kept by the sections they are worked out from, which leave
    out the fleet's size, how its nodes split into pools and the traffic: a plan's re-plans at other node counts (its
    one-node-lost design, which runs without the spare it used) find the same replica's step."""
    key = (*replica_inputs(brief), precision)
    steps = _STEPS.get(key)
    if steps is None:
        steps = _step_constants(brief, model, gpu, precision)
        _STEPS.keep(key, steps)
    return steps


_STEPS: BoundedMemo[tuple[object, ...], StepConstants] = BoundedMemo(64)  # emptied with the planner's caches
# the deployment's fields a replica's step can depend on: all but the pools' sizes (spare and long-context nodes)
_STEP_DEPLOYMENT_FIELDS = attrgetter(*(name for name in Deployment.model_fields if name not in ("spare_nodes", "long_context_nodes")))


def replica_inputs(brief: Brief) -> tuple[object, ...]:
    """The brief's sections and fields one replica (its shape and step) is worked out from: not the fleet's size, how
    its nodes split into pools, nor the traffic."""
    hw, dep = brief.hardware, brief.deployment
    return (
        *_STEP_DEPLOYMENT_FIELDS(dep),
        brief.efficiency,
        hw.gpu,
        hw.gpus_per_node,
        brief.lora,
        brief.model,
    )


def _step_constants(brief: Brief, model: ModelSpec, gpu: GpuSpec, precision: str) -> StepConstants:
    """step_constants worked out.

    A serving unit's step runs its stages in turn, so the constants are the whole model's (the sum of the stages').
    With DP attention the attention groups run side by side on their shares of the batch (per-token costs / groups),
    and the routed experts' reads and FLOPs spread over the stage's GPUs."""
    dep, eff, hw = brief.deployment, brief.efficiency, brief.hardware
    tp = dep.tp
    stage, groups, moe_layers = _comm_groups(brief, model)
    hbm = gpu.hbm_tb_per_s * TB * tp
    compute = gpu.peak_tflops(precision) * TB * stage * eff.compute_fraction
    attention_compute = gpu.peak_tflops("bf16") * TB * stage * eff.compute_fraction  # attention runs in BF16
    dense, experts = _weights_read(model)
    gemm_params, head_params = _gemm_params(model)
    bpv = dep.weights.bytes_per_value
    kv_bytes = _kv_bytes_per_token_per_gpu(model, tp, dep.kv_cache.bytes_per_value) * tp
    comm = tp > 1
    reads = hbm / ((1 + eff.tp_comm_overhead if comm else 1.0) * eff.real_kernel_factor)  # the seeds' flat factors slow the reads
    link = gpu.interconnect_gb_per_s * 1e9 * eff.interconnect_fraction
    token_bytes = model.hidden_size * ACTIVATION_BYTES if eff.allreduce_bytes_moved else 0.0
    # all-reduces: after attention and after the MLP, every layer; with EP the MoE layers all-to-all instead
    allreduces = (2 * model.layers if dep.ep == 1 else model.layers + model.dense_layers) if comm else 0
    stage_sends = dep.pp - 1
    network = gpu.scale_out_gb_per_s * 1e9 * NETWORK_FRACTION
    a2a_latency_s = (eff.allreduce_latency_us + (NETWORK_LATENCY_US if stage > hw.gpus_per_node else 0.0)) / 1e6
    return trusted(
        StepConstants,
        weights_s=dense * bpv / (reads * eff.bandwidth_fraction),
        experts_s=experts * bpv / (reads * stage / tp * eff.bandwidth_fraction),  # every GPU of the stage reads its experts
        expert_miss=1 - model.experts_per_token / model.experts if model.is_moe else 1.0,
        gemm_s_per_token=2 * gemm_params / compute,  # 2: a multiply and an add per parameter
        lm_head_s_per_seq=2 * head_params / compute,
        kv_s_per_token=max(kv_bytes / (reads * eff.attention_bandwidth_fraction), _mla_decode_flops(model) / attention_compute * groups)
        / groups,
        attn_s_per_pair=4 * model.layers * model.attention_heads * model.head_dim / attention_compute,  # QK and AV
        allreduces=float(allreduces),
        allreduce_latency_s=eff.allreduce_latency_us / 1e6,
        one_shot_s_per_token=(tp - 1) * token_bytes / link / groups if comm else 0.0,
        two_shot_s_per_token=2 * (tp - 1) / tp * token_bytes / link / groups if comm else 0.0,
        overhead_s=eff.step_overhead_ms / 1e3,
        per_sequence_s=eff.per_sequence_us / 1e6 / groups,  # each DP-attention rank schedules and samples its own sequences
        roofline=1.0 if eff.step_roofline else 0.0,
        a2a_latency_s=2 * moe_layers * a2a_latency_s,  # 2: dispatch and combine
        a2a_s_per_token=moe_layers * _a2a_s_per_token(model, gpu, stage, hw.gpus_per_node, link) if moe_layers else 0.0,
        pp_latency_s=stage_sends * NETWORK_LATENCY_US / 1e6,
        pp_s_per_token=stage_sends * model.hidden_size * PP_SEND_BYTES_PER_VALUE / network / groups,
        **_lora_constants(brief, model, reads * eff.bandwidth_fraction, attention_compute),
    )


def _lora_constants(brief: Brief, model: ModelSpec, bytes_per_s: float, bf16_flops_per_s: float) -> dict[str, float]:
    """The batched-LoRA kernels' constants (planner.step_model), none without adapters: an adapter's BF16 bytes at the
    weights' achieved bandwidth, its FLOPs per token at the BF16 compute, and the kernels' floor per step."""
    lora = brief.lora
    if lora.adapters == 0:
        return {}
    mem = lora_memory(lora, model, 1)
    return {
        "lora_slots": float(lora_slots(lora)),
        "lora_adapter_s": mem.gb_per_adapter * 1e9 / bytes_per_s,
        "lora_s_per_token": 2 * mem.params_per_adapter / bf16_flops_per_s,  # 2: a multiply and an add, A then B
        "lora_kernels_s": lora_kernels(lora, model) * SGMV_KERNEL_US / 1e6,
    }


def _kv_bytes_per_token_per_gpu(model: ModelSpec, tp: int, bytes_per_value: float) -> float:
    if model.kv_lora_rank:  # MLA: one compressed latent and a rotary key per layer, held whole on every GPU
        return model.layers * (model.kv_lora_rank + model.qk_rope_head_dim) * bytes_per_value
    return 2 * model.layers * model.kv_heads / tp * model.head_dim * bytes_per_value  # 2: key and value


def shape_of(brief: Brief) -> ReplicaShape:
    """The replica the brief describes; raises InfeasibleDesign (a BriefError) when no replica can be formed. One formed
    for a brief that differs only in its fleet (replica_inputs: a re-plan at another node count, a search over fleet
    sizes) is copied with this fleet's count of it."""
    key = replica_inputs(brief)
    formed = _SHAPES.get(key)
    if formed is None:
        shape = _shape_of(brief)
        _SHAPES.keep(key, shape)
        return shape
    nodes = brief.hardware.nodes
    if nodes < formed.replica_nodes:
        _refuse_fleet(formed.pp, formed.replica_nodes // formed.pp, nodes)
    # what readers worked out on the first (its weights and KV per GPU, prefill rate, step...), none of which counts
    # the replicas, but its memo: a replica's engines are its own
    return formed.copy_keeping({"replicas": formed.replicas_in(nodes)}, dropped=("memo",))


# the first shape formed of each replica (a plan forms a few: its own, a draft model's, a search's candidates); emptied
# with the planner's caches
_SHAPES: BoundedMemo[tuple[object, ...], ReplicaShape] = BoundedMemo(32)


def _refuse_fleet(pp: int, stage_nodes: int, nodes: int) -> NoReturn:
    """A fleet of fewer nodes than one replica spans forms no replica: raises the verdict that says so."""
    replica_nodes = stage_nodes * pp
    problem = f"a replica spans {replica_nodes} nodes ({pp} pipeline stage(s) of {stage_nodes} node(s)) and the fleet has {nodes}"
    raise InfeasibleDesign((Problem(field="hardware.nodes", problem=problem, change=f"set hardware.nodes to at least {replica_nodes}"),))


def _shape_of(brief: Brief) -> ReplicaShape:
    hw, dep = brief.hardware, brief.deployment
    model = model_spec(brief.model)
    gpu = gpu_spec(hw.gpu)
    _check_tp(dep.tp, hw.gpus_per_node, model.kv_heads)
    _check_parallel(dep, model, hw.gpus_per_node)
    precision = _compute_precision(brief, gpu)
    eff = brief.efficiency
    stage, groups, _ = _comm_groups(brief, model)
    stage_nodes = max(stage // hw.gpus_per_node, 1)
    units = hw.gpus_per_node * stage_nodes // stage * dep.pp  # replicas on a replica's nodes, x PP streams each
    replica_nodes = stage_nodes * dep.pp
    if hw.nodes < replica_nodes:
        _refuse_fleet(dep.pp, stage_nodes, hw.nodes)
    return trusted(
        ReplicaShape,
        model=model,
        gpu=gpu,
        tp=dep.tp,
        pp=dep.pp,
        ep=dep.ep,
        attention_groups=groups,
        replica_nodes=replica_nodes,
        units_per_replica_group=units,
        replicas=hw.nodes // replica_nodes * units,
        replicas_per_node=units // replica_nodes,
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
