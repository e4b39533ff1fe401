"""The brief: everything a user states about a serving design, and nothing derived.

Every field carries its unit in its name or description and a validated range; the description is
the help text the app shows beside the widget, so it is written once, here.
"""

from __future__ import annotations

import operator
from enum import StrEnum
from functools import cached_property
from typing import Annotated, Any, get_args

from pydantic import ConfigDict, Field, ValidationError, ValidationInfo, field_validator, model_validator

from planner.cached import CachingModel
from planner.errors import BriefError, validation_message
from planner.lengths import length_cv2, size_biased_mean

__all__ = [
    "MAX_NODES",
    "SIZING_HEADROOM",
    "Brief",
    "ComputePeak",
    "Cost",
    "CustomModel",
    "Deployment",
    "Disaggregation",
    "Efficiency",
    "Hardware",
    "ItlMetric",
    "KvPrecision",
    "KvTiers",
    "Latency",
    "Lora",
    "LoraModules",
    "ModelChoice",
    "Multimodal",
    "Objective",
    "ObjectiveKind",
    "Precision",
    "Slo",
    "SpecMethod",
    "Speculative",
    "VariationKey",
    "Workload",
]


class _Frozen(CachingModel):
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        _INT_DEFAULTS[cls] = tuple(
            name
            for name, info in cls.__pydantic_fields__.items()
            if type(info.default) is int and float in (info.annotation, *get_args(info.annotation)) and int not in get_args(info.annotation)
        )

    def __hash__(self) -> int:
        return self._fields_hash  # re-plans key their caches on briefs: a copy keeps the sections it does not change

    @cached_property
    def _fields_hash(self) -> int:
        """The hash of the field values as pydantic's frozen models hash them, worked out once (a copy that changes
        a field works it out again: CachingModel.model_copy). Underscored: iterating a model (`dict(section)`) skips it."""
        return hash(operator.itemgetter(*type(self).model_fields)(self.__dict__))

    @field_validator("*", mode="before")
    @classmethod
    def _no_bool_for_other_types(cls, value: Any, info: ValidationInfo) -> Any:
        """Pydantic's lax mode reads true as 1; in a brief `nodes = true` is a typo, not one node."""
        if isinstance(value, bool) and info.field_name is not None and cls.model_fields[info.field_name].annotation is not bool:
            raise ValueError("true/false is not a value this field takes (it is not a yes/no switch)")
        return value


# By section class (every brief section is a key): the float fields whose default is an int (pydantic leaves a default
# unvalidated, so a section built without them holds 1200 where one validated again holds 1200.0), found as each
# class is made.
_INT_DEFAULTS: dict[type, tuple[str, ...]] = {}


class Precision(StrEnum):
    """Storage precision of the weights."""

    bf16 = "bf16"
    fp8 = "fp8"
    int8 = "int8"
    int4 = "int4"
    fp4 = "fp4"  # NVFP4: E2M1 values, one FP8 scale per 16 (MXFP4's E8M0 scale per 32 is 0.53125 bytes: within 6%)

    @property
    def bytes_per_value(self) -> float:
        return _WEIGHT_BYTES[self]


class KvPrecision(StrEnum):
    """Storage precision of the KV cache."""

    bf16 = "bf16"
    fp8 = "fp8"

    @property
    def bytes_per_value(self) -> float:
        return _KV_BYTES[self]


_WEIGHT_BYTES = {Precision.bf16: 2.0, Precision.fp8: 1.0, Precision.int8: 1.0, Precision.int4: 0.5, Precision.fp4: 0.5 + 1 / 16}
_KV_BYTES = {KvPrecision.bf16: 2.0, KvPrecision.fp8: 1.0}


class ComputePeak(StrEnum):
    """Which of the GPU's dense peaks the compute fraction applies to."""

    auto = "auto"  # the tensor-core precision the weights run at (int4 runs its math in bf16)
    bf16 = "bf16"
    fp8 = "fp8"
    int8 = "int8"


class CustomModel(_Frozen):
    """A model described by its architecture numbers instead of a catalog key."""

    layers: int = Field(ge=1, le=1000, description="Transformer layers.")
    hidden_size: int = Field(ge=64, le=131_072, description="Model (residual) width.")
    attention_heads: int = Field(ge=1, le=1024, description="Query heads per layer.")
    kv_heads: int = Field(ge=1, le=1024, description="Key/value heads per layer (GQA groups).")
    head_dim: int = Field(ge=16, le=1024, description="Width of one attention head.")
    params: float = Field(gt=1e7, le=1e13, description="Total parameters (count, e.g. 70.6e9).")
    active_params: float | None = Field(
        default=None,
        gt=1e7,
        le=1e13,
        description="Parameters used per token, for a mixture of experts (count). Empty for dense.",
    )
    experts: int = Field(default=1, ge=1, le=1024, description="Routed experts per MoE layer (1 = dense).")
    experts_per_token: int = Field(default=1, ge=1, le=64, description="Experts each token is routed to.")
    max_context_tokens: int = Field(default=131_072, ge=512, le=10_000_000, description="Longest context the model supports (tokens).")

    @model_validator(mode="after")
    def _moe_consistent(self) -> CustomModel:
        if self.kv_heads > self.attention_heads:
            raise ValueError("kv_heads: cannot exceed attention_heads")
        if self.experts_per_token > self.experts:
            raise ValueError("experts_per_token: cannot exceed experts")
        if self.active_params is not None and self.active_params > self.params:
            raise ValueError("active_params: cannot exceed params")
        return self


class ModelChoice(_Frozen):
    name: str = Field(
        default="llama-3-70b",
        min_length=1,
        max_length=80,
        description="Catalog key of the model (see `python -m planner catalog`), or 'custom' with the architecture below.",
    )
    custom: CustomModel | None = Field(default=None, description="Architecture numbers when name is 'custom'.")
    display_name: str | None = Field(default=None, max_length=120, description="Name to show for a custom model.")
    hf_repo: str | None = Field(
        default=None,
        max_length=200,
        description="Hugging Face repo id (or local model directory) the engine command loads, e.g. Qwen/Qwen2.5-VL-72B-Instruct;"
        " a catalog model has its own, a custom model needs one (vLLM cannot load a display name).",
    )
    hf_config: str | None = Field(
        default=None,
        max_length=1000,
        description="Path to a local Hugging Face config.json; the loader reads it into the custom architecture (nothing is downloaded).",
    )

    @model_validator(mode="after")
    def _custom_needs_numbers(self) -> ModelChoice:
        if self.name == "custom" and self.custom is None:
            raise ValueError("custom: name is 'custom' but no architecture numbers are given")
        return self


MAX_NODES = 100_000  # the largest fleet a brief describes (800,000 GPUs at 8 a node)


class Hardware(_Frozen):
    gpu: str = Field(default="h100-sxm", min_length=1, max_length=40, description="Catalog key of the GPU.")
    gpus_per_node: int = Field(default=8, ge=1, le=72, description="GPUs used per node (one NVLink/NVSwitch domain).")
    nodes: int = Field(default=8, ge=1, le=MAX_NODES, description="Nodes in the fleet.")


class Deployment(_Frozen):
    tp: int = Field(default=8, ge=1, le=72, description="Tensor-parallel degree: GPUs per replica (per pipeline stage), inside one node.")
    weights: Precision = Field(
        default=Precision.fp8,
        description="Weight precision: bf16, fp8, int8, int4 or fp4 (NVFP4: computes in FP4 on Blackwell, in BF16 elsewhere).",
    )
    kv_cache: KvPrecision = Field(default=KvPrecision.fp8, description="KV-cache precision: bf16 or fp8.")
    reserve_gb_per_gpu: float = Field(
        default=5.0,
        ge=0,
        le=200,
        description="Memory per GPU kept out of the KV pool: activations, CUDA graphs, communication buffers (GB).",
    )
    gpu_memory_utilization: float = Field(
        default=1.0,
        gt=0.3,
        le=1.0,
        description="Fraction of each GPU's memory the engine may take for weights, reserve and KV (0-1).",
    )
    max_model_len: int = Field(
        default=8192, ge=256, le=10_000_000, description="Longest sequence a replica accepts: input + output (tokens)."
    )
    max_num_seqs: int = Field(default=160, ge=1, le=16_384, description="Most sequences a replica runs at once (engine limit).")
    max_num_batched_tokens: int = Field(
        default=2048, ge=16, le=1_048_576, description="Most tokens one engine step processes: the prefill chunk budget (tokens)."
    )
    prefix_caching: bool = Field(
        default=True, description="Reuse the KV of prompt prefixes already computed (vLLM --enable-prefix-caching)."
    )
    chunked_prefill: bool = Field(default=True, description="Split long prefills into chunks interleaved with decode steps.")
    long_context_nodes: int = Field(
        default=0,
        ge=0,
        le=MAX_NODES,
        description="Nodes reserved for long-context requests; the general pool gets the nodes the other pools leave.",
    )
    spare_nodes: int = Field(
        default=0, ge=0, le=MAX_NODES, description="Spare/canary nodes held for N+1 and rollouts (they serve until a node fails)."
    )
    pp: int = Field(
        default=1,
        ge=1,
        le=64,
        description="Pipeline-parallel stages, each on its own node (1 = none): a replica is TP x PP GPUs over PP nodes, the layers split between the stages.",
    )
    ep: int = Field(
        default=1,
        ge=1,
        le=1024,
        description="Expert-parallel degree: GPUs a MoE layer's routed experts are spread over, tokens sent to them by all-to-all (1 = none; without DP attention it equals TP).",
    )
    dp_attention: bool = Field(
        default=False,
        description="Data-parallel attention: the replica is EP GPUs a stage, attention runs in EP / TP groups, each holding the attention weights and its own sequences' KV.",
    )

    @model_validator(mode="after")
    def _budget_holds_the_batch(self) -> Deployment:
        # vLLM refuses to start otherwise (SchedulerConfig: every running sequence decodes a token each step)
        if self.max_num_batched_tokens < self.max_num_seqs:
            raise ValueError(
                f"max_num_batched_tokens: {self.max_num_batched_tokens} tokens a step is below max-num-seqs {self.max_num_seqs};"
                " vLLM refuses to start with a token budget under its batch slots (each running sequence decodes a token a"
                f" step): raise it to at least {self.max_num_seqs} or lower max-num-seqs"
            )
        return self


class Workload(_Frozen):
    users: int | None = Field(
        default=None, ge=1, le=1_000_000_000, description="Concurrent active conversations at peak (empty when a request rate is given)."
    )
    duty_cycle: float = Field(default=0.08, gt=0, le=1, description="Fraction of the time a user's reply is being generated (0-1).")
    generation_s_per_turn: float = Field(
        default=14.4, gt=0, le=3600, description="Seconds one reply streams for: output length / streaming speed (s)."
    )
    request_rate: float | None = Field(
        default=None, gt=0, le=1e7, description="Peak requests per second; when set it replaces users x duty cycle (req/s)."
    )
    input_tokens_mean: float = Field(default=1200, ge=1, le=10_000_000, description="Mean prompt length including history (tokens).")
    input_tokens_p95: float = Field(default=6000, ge=1, le=10_000_000, description="95th-percentile prompt length (tokens).")
    output_tokens_mean: float = Field(default=350, ge=1, le=1_000_000, description="Mean reply length (tokens).")
    output_tokens_p95: float = Field(default=1200, ge=1, le=1_000_000, description="95th-percentile reply length (tokens).")
    prefix_hit_rate: float = Field(
        default=0.78, ge=0, le=1, description="Fraction of prompt tokens whose KV the prefix cache already holds (0-1)."
    )
    kv_context_tokens: float | None = Field(
        default=None,
        ge=1,
        le=10_000_000,
        description="Average context per sequence for KV sizing and decode reads (tokens). Empty: input + output held, input + output/2 read.",
    )
    long_context_threshold_tokens: int = Field(
        default=16_000, ge=256, le=10_000_000, description="Prompts longer than this go to the long-context pool (tokens)."
    )
    long_context_share: float = Field(default=0.05, ge=0, le=1, description="Fraction of requests above the long-context threshold (0-1).")

    @model_validator(mode="after")
    def _traffic_given_once(self) -> Workload:
        if self.users is None and self.request_rate is None:
            raise ValueError("users: give either users (with duty cycle) or request_rate")
        if self.input_tokens_p95 < self.input_tokens_mean:
            raise ValueError("input_tokens_p95: must be at least input_tokens_mean")
        if self.output_tokens_p95 < self.output_tokens_mean:
            raise ValueError("output_tokens_p95: must be at least output_tokens_mean")
        return self

    @property
    def rate_given(self) -> bool:
        return self.request_rate is not None


class ItlMetric(StrEnum):
    """What the ITL target judges."""

    itl = "itl"  # the gaps between consecutive tokens, every step (those carrying a prefill chunk too)
    tpot = "tpot"  # each reply's mean gap (time per output token after the first)

    def judged(self, itl_ms: float, tpot_ms: float) -> float:
        """Of a per-token ITL figure and a TPOT figure, the one this target judges."""
        return itl_ms if self is ItlMetric.itl else tpot_ms


SIZING_HEADROOM = 0.3  # max-rate's capacity above the peak when a brief states no slo.headroom (the 200-QPS seed's 30%)


class Slo(_Frozen):
    ttft_p95_ms: float = Field(default=500, gt=0, le=600_000, description="p95 time to first token target (ms).")
    ttft_input_cap_tokens: int = Field(
        default=4000, ge=1, le=10_000_000, description="The TTFT target applies to prompts up to this length (tokens)."
    )
    itl_p95_ms: float = Field(default=40, gt=0, le=60_000, description="p95 inter-token latency target (ms).")
    itl_metric: ItlMetric = Field(
        default=ItlMetric.itl,
        description="What the ITL target judges: itl (the gaps between consecutive tokens) or tpot (each reply's mean gap).",
    )
    availability: float = Field(default=0.999, ge=0.5, lt=1, description="Availability target (0-1), e.g. 0.999.")
    attainment_target: float = Field(
        default=0.95,
        ge=0.5,
        le=1,
        description="The percentile the TTFT and ITL targets are read at in the simulated max-rate search (0.95 reads them as p95, as the plan does; 0.99 as p99; the plan judges p95 and lists another as not used) (0-1).",
    )
    headroom: float | None = Field(
        default=None,
        ge=0,
        le=10,
        description=(
            "Capacity kept above the peak for bursts and failures (0.3 = 30%): the plan judges that its pools' SLO capacity"
            " reaches (1 + headroom) x the peak, and max-rate sizes its replicas with it. Empty: not stated; the plan judges"
            " none and max-rate sizes with 30%."
        ),
    )

    @property
    def sizing_headroom(self) -> float:
        """The headroom max-rate sizes with: the stated one, else SIZING_HEADROOM."""
        return SIZING_HEADROOM if self.headroom is None else self.headroom


class Efficiency(_Frozen):
    """How close the replica gets to its GPUs' peaks. The defaults are fitted to published serving
    measurements by scripts/calibrate.py (docs/calibration.md), the same for every model and GPU; the
    presets set every field to their own stated assumptions."""

    compute_fraction: float = Field(
        default=0.69, ge=0.001, le=1, description="Achieved fraction of peak tensor-core throughput in prefill (MFU, 0-1)."
    )
    compute_peak: ComputePeak = Field(
        default=ComputePeak.auto,
        description="Which dense peak the compute fraction applies to: auto (the weights' math precision), bf16, fp8 or int8; a peak above the weights' math precision is not used (the plan says so).",
    )
    bandwidth_fraction: float = Field(
        default=0.69, ge=0.001, le=1, description="Achieved fraction of HBM bandwidth when decode reads the weights (0-1)."
    )
    tp_comm_overhead: float = Field(
        default=0.0, ge=0, le=5, description="Extra decode time for tensor-parallel all-reduce when TP > 1, as a fraction (0.2 = +20%)."
    )
    real_kernel_factor: float = Field(
        default=1.0, ge=1, le=10, description="Multiplier from the ideal decode step to what kernels really take (1 = ideal)."
    )
    step_overhead_ms: float = Field(
        default=1.7, ge=0, le=1000, description="Fixed time per engine step: scheduling, sampling, launch (ms)."
    )
    attention_bandwidth_fraction: float = Field(
        default=0.77,
        ge=0.001,  # below 0.1% of the GPU the figures overflow, and no kernel is that slow
        le=1,
        description="Achieved fraction of HBM bandwidth when decode attention reads the KV cache (0-1); paged-attention kernels reach far less than the weight reads.",
    )
    allreduce_latency_us: float = Field(
        default=20.0,
        ge=0,
        le=10_000,
        description="Latency of one tensor-parallel all-reduce when TP > 1, before its bytes move; a step runs two per layer (us).",
    )
    interconnect_fraction: float = Field(
        default=0.47,
        ge=0.01,
        le=1,
        description="Achieved fraction of the GPU's NVLink / Infinity Fabric bandwidth when an all-reduce moves activations (0-1).",
    )
    allreduce_bytes_moved: bool = Field(
        default=True,
        description="Whether the all-reduce's time counts the activations it moves over the link (the seeds use a flat TP factor instead).",
    )
    step_roofline: bool = Field(
        default=False,
        description="Whether a step is one roofline, max(all its FLOPs, all its bytes) (the 200-QPS seed's model), instead of kernel by kernel (attention's KV reads after the GEMMs).",
    )
    per_sequence_us: float = Field(
        default=33.0,
        ge=0,
        le=10_000,
        description="Time per sequence in a step: sampling, detokenizing, scheduler bookkeeping (us).",
    )


class Latency(_Frozen):
    network_ms: float = Field(default=25, ge=0, le=10_000, description="Client-to-gateway round trip (ms).")
    gateway_ms: float = Field(default=12, ge=0, le=10_000, description="Gateway: auth, rate limit, routing (ms).")
    tokenization_ms: float = Field(default=4, ge=0, le=10_000, description="Tokenizing the prompt (ms).")
    first_sample_ms: float = Field(default=2, ge=0, le=10_000, description="Sampling the first token (ms).")
    first_write_ms: float = Field(default=6, ge=0, le=10_000, description="First streamed (SSE) write back to the client (ms).")
    scheduler_ms: float = Field(
        default=3, ge=0, le=10_000, description="Scheduler and sampling overhead added to each decode step as seen by a client (ms)."
    )


class Cost(_Frozen):
    usd_per_gpu_hour: float = Field(default=2.5, gt=0, le=1000, description="Price of one GPU for one hour ($).")
    average_duty: float = Field(default=0.51, gt=0, le=1, description="Average traffic over a day as a fraction of peak (0-1).")


class VariationKey(StrEnum):
    """Which follow-up question (variation A-G of the capstone) a brief poses."""

    a = "a"
    b = "b"
    c = "c"
    d = "d"
    e = "e"
    f = "f"
    g = "g"


class LoraModules(StrEnum):
    """Which projections of each layer a LoRA adapter adapts."""

    qv = "qv"
    qkvo = "qkvo"


class Lora(_Frozen):
    adapters: int = Field(default=0, ge=0, le=100_000, description="Fine-tuned LoRA adapters served on the base model (0 = none).")
    rank: int = Field(default=16, ge=1, le=1024, description="LoRA rank of each adapter.")
    modules: LoraModules = Field(default=LoraModules.qkvo, description="Projections each adapter adapts: qv or qkvo.")
    max_loras: int = Field(
        default=0,
        ge=0,
        le=4096,
        description="Adapter slots on the GPUs of one replica (vLLM --max-loras); 0 = every adapter stays resident on every replica.",
    )
    max_cpu_loras: int = Field(
        default=0,
        ge=0,
        le=100_000,
        description="Adapters one replica keeps in host memory (vLLM --max-cpu-loras); 0 = as many as the GPU slots.",
    )
    tenant_routing: bool = Field(
        default=True,
        description="Route each tenant's requests to the replicas that hold its adapter (adapters partitioned over replicas).",
    )
    adapter_storage_gb_s: float = Field(
        default=2.0,
        gt=0,
        le=1000,
        description="Bandwidth an adapter loads at from storage on a host-cache miss (GB/s; a local NVMe reads 3-7 GB/s, object storage less).",
    )


class KvTiers(_Frozen):
    """Host memory and local NVMe below the GPU's prefix cache (vLLM's KV offloading / LMCache). Off while both sizes are 0;
    on, the planner derives the prefix hit rate from the cache capacity instead of taking workload.prefix_hit_rate (a
    stated rate that differs is reported as not used, Design.ignored_fields; with both sizes at 0 the stated rate counts)."""

    cpu_gb_per_node: float = Field(
        default=0.0, ge=0, le=100_000, description="Host memory per node given to the KV cache (GB; 0 = no CPU tier)."
    )
    nvme_gb_per_node: float = Field(
        default=0.0, ge=0, le=1_000_000, description="Local NVMe per node given to the KV cache (GB; 0 = no NVMe tier)."
    )
    cpu_gb_s_per_gpu: float = Field(
        default=50.0,
        gt=0,
        le=10_000,
        description="Host-to-GPU bandwidth per GPU a reload achieves (GB/s; PCIe Gen5 x16 is 64 GB/s a direction, about 50 achieved).",
    )
    nvme_gb_s_per_node: float = Field(
        default=12.0,
        gt=0,
        le=10_000,
        description="Read bandwidth of the node's NVMe KV store (GB/s; a Gen4 drive reads about 7 GB/s, two striped about 12-14).",
    )
    think_time_s: float = Field(
        default=30.0,
        ge=0,
        le=86_400,
        description="Time between a reply's end and the session's next request: the user thinking, tools running (s). Briefs given as users take it from the duty cycle.",
    )
    turns_per_session: float = Field(
        default=8.0, ge=1, le=10_000, description="Requests in one session on average: the first has no history to hit."
    )
    new_tokens_per_turn: float = Field(
        default=300.0,
        ge=0,
        le=10_000_000,
        description="Prompt tokens each turn adds that no cache holds: the user's message, a tool's result (tokens).",
    )
    shared_prefix_tokens: float = Field(
        default=0.0,
        ge=0,
        le=10_000_000,
        description="Tokens at the front of every prompt that all sessions share (system prompt, tool definitions): they hit on every request, first turns too (tokens).",
    )

    @property
    def enabled(self) -> bool:
        return self.cpu_gb_per_node > 0 or self.nvme_gb_per_node > 0


class Multimodal(_Frozen):
    """Images in each request: the vision encoder's compute, the tokens they add to the prompt, the encoder cache. Off at 0 images."""

    images_per_request: float = Field(default=0.0, ge=0, le=1000, description="Images in a request on average (0 = text only).")
    max_images_per_request: int = Field(
        default=4, ge=1, le=1000, description="Most images one prompt may carry (vLLM --limit-mm-per-prompt)."
    )
    tokens_per_image: float = Field(
        default=1024.0,
        ge=1,
        le=100_000,
        description="Prompt tokens one image becomes after the encoder (Qwen2.5-VL: one per 28x28 pixels).",
    )
    encoder_params: float = Field(
        default=675e6, gt=0, le=1e11, description="Parameters of the vision encoder (count; Qwen2.5-VL's ViT: 675M)."
    )
    encoder_patches_per_image: float = Field(
        default=4096.0,
        ge=1,
        le=1_000_000,
        description="Patches the encoder runs per image (Qwen2.5-VL: 4 per output token, 14x14 pixels each).",
    )
    encoder_cache_hit_rate: float = Field(
        default=0.0, ge=0, le=1, description="Fraction of images whose encoder output is already cached (the same image re-sent) (0-1)."
    )
    processor_cache_gb: float = Field(
        default=4.0, ge=0, le=1000, description="Host memory for the multimodal processor cache (vLLM --mm-processor-cache-gb)."
    )
    prompt_includes_images: bool = Field(
        default=False, description="Whether workload.input_tokens_* already count the image tokens (the planner adds them otherwise)."
    )

    @property
    def enabled(self) -> bool:
        return self.images_per_request > 0


class ObjectiveKind(StrEnum):
    """What the design is judged on."""

    latency = "latency"  # interactive: TTFT and ITL targets at the peak
    throughput = "throughput"  # an offline job: tokens processed by a deadline, cost per token
    batch_completion = "batch_completion"  # RL rollout: the time to finish a batch of prompts


class Objective(_Frozen):
    kind: ObjectiveKind = Field(
        default=ObjectiveKind.latency,
        description="What the design is judged on: latency (TTFT/ITL targets), throughput (an offline job by a deadline) or batch_completion (an RL rollout batch).",
    )
    job_tokens: float = Field(
        default=1e9, gt=0, le=1e15, description="Throughput: tokens the offline job processes, input and output together (tokens)."
    )
    deadline_hours: float = Field(default=24.0, gt=0, le=10_000, description="Throughput: hours the job must finish in (h).")
    batch_prompts: int = Field(default=4096, ge=1, le=10_000_000, description="Batch completion: prompts in one rollout batch (count).")
    batch_deadline_s: float = Field(
        default=600.0, gt=0, le=1e7, description="Batch completion: seconds a rollout batch must finish in, prefill to the last token (s)."
    )
    output_tokens_max: float = Field(
        default=16_384,
        ge=1,
        le=10_000_000,
        description="Batch completion: the longest output a rollout may generate (tokens): the straggler.",
    )


class Disaggregation(_Frozen):
    """Prefill/decode disaggregation: a prefill pool and a decode pool, the KV moved between them (off by default)."""

    enabled: bool = Field(default=False, description="Serve prompts on a prefill pool and replies on a separate decode pool.")
    prefill_nodes: int = Field(
        default=1, ge=1, le=MAX_NODES, description="Nodes of the general pool that run prefill; the rest of it decodes."
    )
    prefill_tp: int | None = Field(
        default=None, ge=1, le=72, description="Tensor-parallel degree of a prefill replica. Empty: deployment.tp."
    )
    prefill_max_num_batched_tokens: int | None = Field(
        default=None, ge=16, le=1_048_576, description="Token budget of one prefill-pool step. Empty: deployment.max_num_batched_tokens."
    )
    kv_link_gbps_per_gpu: float | None = Field(
        default=None,
        gt=0,
        le=100_000,
        description="Network bandwidth each GPU sends KV over to the decode pool (Gb/s). Empty: the GPU's scale-out NIC from the catalog (H100: 400, one NDR InfiniBand port per GPU).",
    )
    transfer_efficiency: float = Field(
        default=0.7, gt=0, le=1, description="Achieved fraction of that link when the KV connector moves a prompt's KV (0-1)."
    )
    transfer_latency_ms: float = Field(
        default=1.0, ge=0, le=10_000, description="Fixed cost of one KV transfer: the connector's handshake and the RDMA set-up (ms)."
    )


class SpecMethod(StrEnum):
    """How draft tokens are proposed."""

    eagle = "eagle"  # an EAGLE head: one decoder layer on the target's hidden states, the target's LM head
    draft = "draft"  # a small draft model of the same family


class Speculative(_Frozen):
    """Speculative decoding: draft k tokens, verify them in one target step (off by default)."""

    enabled: bool = Field(default=False, description="Run speculative decoding (vLLM --speculative-config).")
    method: SpecMethod = Field(default=SpecMethod.eagle, description="eagle (a one-layer head) or draft (a small draft model).")
    draft_model: str | None = Field(
        default=None, max_length=80, description="Catalog key of the draft model, for method 'draft' (e.g. llama-3.1-8b for a 70B target)."
    )
    num_speculative_tokens: int = Field(default=3, ge=1, le=16, description="Draft tokens proposed per step (k).")
    acceptance_rate: float = Field(
        default=0.7, ge=0, lt=1, description="Chance each draft token is accepted, given the ones before it were (0-1)."
    )
    off_above_batch: int | None = Field(
        default=None,
        ge=1,
        le=16_384,
        description="Turn speculation off when more sequences than this run (vLLM disable_by_batch_size). Empty: the computed crossover.",
    )

    @model_validator(mode="after")
    def _draft_named(self) -> Speculative:
        if self.enabled and self.method is SpecMethod.draft and not self.draft_model:
            raise ValueError("draft_model: method 'draft' needs a draft model's catalog key")
        return self


class Brief(_Frozen):
    """A serving problem as stated: model, hardware, deployment, traffic, SLO, assumptions, cost."""

    title: str = Field(default="Untitled design", max_length=200, description="Name of this design.")
    description: str = Field(default="", max_length=2000, description="One line saying what the design is.")
    assumptions: tuple[Annotated[str, Field(max_length=1000)], ...] = Field(
        default=(), max_length=50, description="Assumptions the figures rest on, one per line."
    )
    model: ModelChoice = Field(default_factory=ModelChoice)
    hardware: Hardware = Field(default_factory=Hardware)
    deployment: Deployment = Field(default_factory=Deployment)
    workload: Workload = Field(default_factory=lambda: Workload(users=10_000))
    slo: Slo = Field(default_factory=Slo)
    efficiency: Efficiency = Field(default_factory=Efficiency)
    latency: Latency = Field(default_factory=Latency)
    cost: Cost = Field(default_factory=Cost)
    lora: Lora = Field(default_factory=Lora)
    variation: VariationKey | None = Field(
        default=None, description="The capstone follow-up question this brief poses (a-g): its plan carries that variation's analysis."
    )
    disaggregation: Disaggregation = Field(default_factory=Disaggregation)
    speculative: Speculative = Field(default_factory=Speculative)
    kv_tiers: KvTiers = Field(default_factory=KvTiers)
    multimodal: Multimodal = Field(default_factory=Multimodal)
    objective: Objective = Field(default_factory=Objective)

    @property
    def effective_hit_rate(self) -> float:
        """The share of prompt tokens the prefix cache covers: the brief's hit rate when caching is on."""
        return self.workload.prefix_hit_rate if self.deployment.prefix_caching else 0.0

    @cached_property
    def running_context_tokens(self) -> float:
        """Mean KV a running sequence holds and each decode step reads: the mean prompt plus half the reply in
        progress, size-biased (a long reply stays in the batch longer: E[out^2] / (2 E[out]))."""
        w = self.workload
        return w.input_tokens_mean + size_biased_mean(w.output_tokens_mean, length_cv2(w.output_tokens_mean, w.output_tokens_p95)) / 2

    @property
    def sizing_context_tokens(self) -> float:
        """KV per sequence the memory arithmetic sizes for: the brief's kv_context_tokens, else a whole request."""
        w = self.workload
        return w.kv_context_tokens if w.kv_context_tokens is not None else w.input_tokens_mean + w.output_tokens_mean

    def with_changes(self, changes: dict[str, Any]) -> Brief:
        """A new brief with dotted-path changes applied and validated (e.g. {'hardware.nodes': 4}); a model.hf_config
        path is refused here (planner.loader.apply_overrides reads one, relative to the brief file)."""
        fast = self._with_section_changes(changes)
        if fast is not None:
            return fast
        data = set_paths(self.model_dump(mode="json"), changes)
        if isinstance(data.get("model"), dict) and data["model"].get("hf_config"):
            raise BriefError("model.hf_config", HF_CONFIG_PATH_REFUSED)
        try:
            return Brief.model_validate(data)
        except ValidationError as exc:
            raise validation_message(exc) from None

    def _with_section_changes(self, changes: dict[str, Any]) -> Brief | None:
        """with_changes where every path is a known field of a section (`hardware.nodes`, not `model.*`): each changed
        section is validated with its changes (_section_with: one value as an assignment, the field's own rules then the
        section's rules across its fields; several together); the other sections are kept as they are (a brief has no
        rule across sections). None where that does not apply or a value is refused (with_changes then
        validates the whole brief and words the error as always)."""
        if self.model.hf_config:  # refused by with_changes, whatever changes
            return None
        by_section: dict[str, dict[str, Any]] = {}
        for path, value in changes.items():
            section, _, leaf = path.partition(".")
            if not leaf or "." in leaf or section == "model" or section not in Brief.__pydantic_fields__:
                return None
            kind = type(getattr(self, section))
            if kind not in _INT_DEFAULTS or leaf not in kind.__pydantic_fields__:  # not a section's field
                return None
            by_section.setdefault(section, {})[leaf] = value
        try:
            update = {section: _section_with(getattr(self, section), leaves) for section, leaves in by_section.items()}
        except ValidationError:  # a refused value: the whole brief's validation words it
            return None
        return self.model_copy(update=update)


def _section_with(current: _Frozen, leaves: dict[str, Any]) -> _Frozen:
    """`current` with `leaves` validated as the whole brief's validation validates the section. One changed value is
    validated as an assignment (the field's rules, then the section's), and the section's integer defaults of float
    fields, which pydantic does not validate, are validated too: the section reads as the whole section validated again
    would (1200.0, not 1200, in its JSON). Several are validated together, the section again whole from its JSON with
    them: they may pass only together (a prompt mean and its p95 raised at once, the mean past the old p95), and one
    assignment at a time would refuse them. Raises ValidationError for a refused value."""
    if len(leaves) > 1:
        return type(current).model_validate(current.model_dump(mode="json") | leaves)
    changed = current.model_copy()
    validator = type(current).__pydantic_validator__
    for name in _INT_DEFAULTS[type(current)]:
        value = changed.__dict__[name]
        if type(value) is int and name not in leaves:
            validator.validate_assignment(changed, name, value)
    for leaf, value in leaves.items():
        validator.validate_assignment(changed, leaf, value)
    return changed


HF_CONFIG_PATH_REFUSED = "a file path is not accepted here (the server reads no files); upload the config.json instead"


def set_paths(data: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """`data` (a brief as JSON) with each dotted path set; an unknown path raises BriefError naming it."""
    for path, value in changes.items():
        parts = path.split(".")
        node: Any = data
        for part in parts[:-1]:
            if not isinstance(node, dict) or part not in node:
                raise BriefError(path, "unknown field")
            if node[part] is None:
                node[part] = {}
            node = node[part]
        if not isinstance(node, dict) or parts[-1] not in _known_keys(parts[:-1]):
            raise BriefError(path, "unknown field")
        node[parts[-1]] = value
    return data


def _known_keys(section: list[str]) -> set[str]:
    model: Any = Brief
    for part in section:
        annotation = model.model_fields[part].annotation
        args = getattr(annotation, "__args__", None)
        model = next((a for a in args if hasattr(a, "model_fields")), None) if args else annotation
        if model is None or not hasattr(model, "model_fields"):
            return set()
    return set(model.model_fields)
