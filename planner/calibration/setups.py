"""A Measurement as the simulator runs it: a brief (model, GPU, TP, precisions, engine limits, KV pool) and a load,
and the simulated figure read in the row's unit.

The engine limits a row leaves open are its engine family's defaults:

- TensorRT-LLM: max_batch_size 2,048, max_num_tokens 8,192, kv_cache_free_gpu_mem_fraction 0.9 of the memory the
  weights and activations leave (0.95 where the row says so), and its default capacity scheduler policy,
  GUARANTEED_NO_EVICT: a request starts only when the KV cache can hold its whole prompt and reply besides the
  running requests' whole lengths, so none is ever preempted (trtllm-bench throughput --scheduler_policy defaults to
  guaranteed_no_evict, tensorrt_llm/bench/benchmark/throughput.py; "GUARANTEED_NO_EVICT (default)", TensorRT-LLM docs,
  performance-tuning-guide/useful-runtime-flags). The reservation is each request's own prompt and reply: trtllm-bench
  asks for the dataset's output length; an MLPerf harness's max_new_tokens is unstated, so the same is taken (a larger
  one would admit fewer). vLLM and SGLang admit on the KV in use and preempt when it runs out.
- vLLM V1 (0.8 on; vllm/engine/arg_utils.py EngineArgs.get_batch_defaults): on a GPU of at least 70 GiB that is
  not an A100, max_num_seqs 1,024 and max_num_batched_tokens 16,384 offline (LLM class) or 8,192 serving; on
  others 256 and 8,192 offline or 2,048 serving; chunked prefill always on. vLLM V0 (before 0.8, and the ROCm
  fork with multi-step scheduling): 256 sequences, chunked prefill off, a step of max(max_model_len, 2,048) tokens.
  gpu_memory_utilization 0.9 of the whole GPU.
- SGLang (python/sglang/srt/server_args.py): chunked_prefill_size 2,048 under 35 GB, 8,192 under 160 GB, 16,384
  above; mem_fraction_static 0.88 of the whole GPU; max_running_requests the request pool it sizes from the KV
  pool, min(max(KV tokens / context x 512, 2,048), 4,096).
- LMDeploy TurboMind: max_batch_size 128, max_prefill_token_num 8,192, cache_max_entry_count 0.8 of free memory.

A static batch runs every request at t = 0 with max-num-seqs = the batch and a step that prefills the whole batch
at once, so the run is one prefill and then lockstep decode. Rows of a whole system (MLPerf) simulate one replica
at its share of the load and multiply; an attention-data-parallel row (DEP) simulates one rank (below).
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, ConfigDict

from planner.brief import Brief
from planner.calibration.measurements import Basis, EngineFamily, LoadKind, Measurement, MetricKind, release_tuple
from planner.catalog import GPUS, MODELS, GpuSpec, ModelSpec
from planner.replica import shape_of
from planner.simulator import SimResult, SimSettings, simulate

__all__ = ["ACTIVATIONS_GB", "EngineDefaults", "Setup", "engine_defaults", "metric_of", "predict", "setup"]

ACTIVATIONS_GB = 1.0  # per GPU, kept out of the KV pool before the engine takes its fraction (activations, graphs)
_GIB = 2**30
_MAX_STEP_TOKENS = 1_048_576  # the brief's largest max_num_batched_tokens


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class EngineDefaults(_Frozen):
    """The engine limits and KV pool a run uses where its row states none."""

    max_num_seqs: int
    max_num_batched_tokens: int
    chunked_prefill: bool
    kv_fraction: float
    kv_of_free_memory: bool  # True: a fraction of what weights and activations leave (TRT, LMDeploy); False: of the whole GPU
    source: str
    reserve_whole_request: bool = False  # admission reserves a request's whole prompt and reply (TRT's GUARANTEED_NO_EVICT)


class Setup(_Frozen):
    """One row as the simulator runs it: the brief and load of one simulated unit (a replica, or a DEP rank)."""

    measurement: Measurement
    brief: Brief
    settings: SimSettings
    units: int  # simulated units in the row's system: the figure of one unit x units is the system's
    gpus_per_unit: int
    weight: float
    note: str  # the defaults and approximations the setup used


def _vllm_v1(m: Measurement) -> bool:
    release = release_tuple(m.engine_release)
    return bool(release) and release >= (0, 8) and not m.limits.multi_step


def _offline(m: Measurement) -> bool:
    """Every request submitted at once (LLM class, trtllm-bench, MLPerf Offline) rather than a server's clients."""
    return m.load.kind in (LoadKind.max_load, LoadKind.static_batch)


_V0_LONG_CONTEXT = 32_768  # vLLM V0 turned chunked prefill on by default above this context (vLLM PR #6666)


def _vllm_v0_defaults(context: int) -> EngineDefaults:
    if context > _V0_LONG_CONTEXT:
        return EngineDefaults(
            max_num_seqs=256,
            max_num_batched_tokens=512,
            chunked_prefill=True,
            kv_fraction=0.9,
            kv_of_free_memory=False,
            source="vLLM V0 defaults for a > 32k-context model (256 sequences, chunked prefill on at 512 tokens a step, 0.9 of the GPU)",
        )
    return EngineDefaults(
        max_num_seqs=256,
        max_num_batched_tokens=max(context, 2048),
        chunked_prefill=False,
        kv_fraction=0.9,
        kv_of_free_memory=False,
        source="vLLM V0 defaults (256 sequences, chunked prefill off, max(the model's context, 2,048) tokens a step, 0.9 of the GPU)",
    )


def _vllm_defaults(m: Measurement, gpu: GpuSpec) -> EngineDefaults:
    if not _vllm_v1(m):
        return _vllm_v0_defaults(MODELS[m.model].max_context_tokens)
    big = gpu.memory_gb * 1e9 >= 70 * _GIB and gpu.key != "a100-80gb"  # vLLM: >= 70 GiB and not an A100
    offline = _offline(m)
    tokens = (16_384 if offline else 8192) if big else (8192 if offline else 2048)
    seqs = 1024 if big else 256
    context = "offline" if offline else "server"
    return EngineDefaults(
        max_num_seqs=seqs,
        max_num_batched_tokens=tokens,
        chunked_prefill=True,
        kv_fraction=0.9,
        kv_of_free_memory=False,
        source=f"vLLM V1 {context} defaults on a {'>= 70 GiB' if big else 'smaller or A100'} GPU ({seqs} sequences, {tokens:,} tokens a step, 0.9 of the GPU)",
    )


def _sglang_defaults(gpu: GpuSpec) -> EngineDefaults:
    mib = gpu.memory_gb * 1e9 / 2**20
    tokens = 2048 if mib < 35 * 1024 else 8192 if mib < 160 * 1024 else 16_384
    return EngineDefaults(
        max_num_seqs=4096,  # replaced by the request pool the KV pool sizes (_sglang_request_pool)
        max_num_batched_tokens=tokens,
        chunked_prefill=True,
        kv_fraction=0.88,
        kv_of_free_memory=False,
        source=f"SGLang defaults (chunked_prefill_size {tokens:,}, mem_fraction_static 0.88, request pool from the KV pool)",
    )


def engine_defaults(m: Measurement, gpu: GpuSpec) -> EngineDefaults:
    """The engine family's defaults for this row's release, GPU and load."""
    if m.engine is EngineFamily.trtllm:
        return EngineDefaults(
            max_num_seqs=2048,
            max_num_batched_tokens=8192,
            chunked_prefill=True,
            kv_fraction=0.9,
            kv_of_free_memory=True,
            source="TensorRT-LLM defaults (max_batch_size 2,048, max_num_tokens 8,192, kv_cache_free_gpu_mem_fraction 0.9, GUARANTEED_NO_EVICT)",
            reserve_whole_request=True,
        )
    if m.engine is EngineFamily.vllm:
        return _vllm_defaults(m, gpu)
    if m.engine is EngineFamily.sglang:
        return _sglang_defaults(gpu)
    return EngineDefaults(
        max_num_seqs=128,
        max_num_batched_tokens=8192,
        chunked_prefill=True,
        kv_fraction=0.8,
        kv_of_free_memory=True,
        source="LMDeploy TurboMind defaults (max_batch_size 128, max_prefill_token_num 8,192, cache_max_entry_count 0.8 of free memory)",
    )


def _dep_rank_model(spec: ModelSpec, ranks: int) -> dict[str, Any]:
    """One attention-data-parallel rank of a DEP deployment as a TP=1 model: the attention and shared weights whole,
    1/ranks of the routed experts (EP over the ranks), the full active parameters per token (a rank runs its own
    tokens' attention and, on average, as much expert work as its tokens need), and MLA's latent KV
    (kv_lora_rank + rotary key a layer) as one KV head of half that width (key and value)."""
    local_experts = spec.experts // ranks
    params = spec.shared_params + local_experts * spec.expert_params
    latent = spec.kv_lora_rank + spec.qk_rope_head_dim
    return {
        "model.name": "custom",
        "model.display_name": f"{spec.name}: one attention-DP rank of {ranks} (EP{ranks})",
        "model.custom": {
            "layers": spec.layers,
            "hidden_size": spec.hidden_size,
            "attention_heads": spec.attention_heads,
            "kv_heads": 1 if latent else spec.kv_heads,
            "head_dim": latent // 2 if latent else spec.head_dim,
            "params": params,
            "active_params": spec.active_params,
            "experts": local_experts,
            "experts_per_token": spec.experts_per_token,
            "max_context_tokens": spec.max_context_tokens,
        },
    }


def _limits(m: Measurement, defaults: EngineDefaults) -> tuple[int, int, bool, str]:
    """(max_num_seqs, max_num_batched_tokens, chunked prefill, note): the row's own, else the defaults; a static batch's own."""
    if m.load.kind is LoadKind.static_batch:
        batch = m.load.requests
        tokens = min(max(round(batch * m.lengths.input_mean_tokens), 16), _MAX_STEP_TOKENS)
        return batch, tokens, defaults.chunked_prefill, f"static batch of {batch:,}: prefilled in one step of {tokens:,} tokens"
    lim = m.limits

    def origin(stated: object) -> str:
        return "the row's" if stated is not None else "default"

    seqs = lim.max_num_seqs or defaults.max_num_seqs
    tokens = lim.max_num_batched_tokens or defaults.max_num_batched_tokens
    chunked = defaults.chunked_prefill if lim.chunked_prefill is None else lim.chunked_prefill
    note = (
        f"engine: {seqs:,} sequences ({origin(lim.max_num_seqs)}), {tokens:,} tokens a step ({origin(lim.max_num_batched_tokens)}),"
        f" chunked prefill {'on' if chunked else 'off'} ({origin(lim.chunked_prefill)}); defaults: {defaults.source}"
    )
    if not chunked and tokens < m.lengths.max_tokens:  # the brief refuses it; a prompt that fits the step is never split
        chunked = True
        note += f"; chunked prefill kept on: every prompt fits the {tokens:,}-token step, which the engine needs without it"
    return seqs, tokens, chunked, note


def _sglang_request_pool(kv_tokens: float, context: int) -> int:
    """SGLang's request pool: min(max(KV tokens / context x 512, 2,048), 4,096)."""
    return int(min(max(kv_tokens / context * 512, 2048), 4096))


def _units(m: Measurement) -> tuple[int, int, int]:
    """(simulated units in the system, GPUs per unit, TP of the simulated unit)."""
    if m.attention_dp:
        return m.replicas * m.tp, 1, 1
    return m.replicas, m.gpus_per_replica, m.gpus_per_replica  # pipeline stages folded into TP


def _settings(m: Measurement, units: int, defaults: EngineDefaults) -> SimSettings:
    load, lengths = m.load, m.lengths
    fixed = lengths.fixed
    rate = load.rate_per_s / units if load.rate_per_s is not None else math.inf
    return SimSettings(
        requests=max(math.ceil(load.requests / units), 1),
        rate_per_s=None if load.kind is LoadKind.concurrency else rate,
        concurrency=max(math.ceil(load.concurrency / units), 1) if load.concurrency is not None else None,
        input_tokens=round(lengths.input_mean_tokens) if fixed else None,
        output_tokens=round(lengths.output_mean_tokens) if fixed else None,
        seed=0,
        # a static batch is admitted whole by construction; in-flight batching follows the engine's admission policy
        reserve_whole_request=defaults.reserve_whole_request and load.kind is not LoadKind.static_batch,
    )


def _reserve_changes(brief: Brief, defaults: EngineDefaults, fraction: float) -> tuple[dict[str, Any], str]:
    """The KV pool: the engine's fraction of free memory (weights and activations out first) or of the whole GPU, and a
    note when the planner's cap on the engine's share of a GPU (replica.MAX_ENGINE_MEMORY_FRACTION) trims it."""
    if not defaults.kv_of_free_memory:
        return {"deployment.gpu_memory_utilization": fraction, "deployment.reserve_gb_per_gpu": ACTIVATIONS_GB}, ""
    shape = shape_of(brief)
    free = shape.gpu.memory_gb - shape.weights_gb_per_gpu - ACTIVATIONS_GB
    reserve = ACTIVATIONS_GB + (1 - fraction) * free
    changes = {"deployment.gpu_memory_utilization": 1.0, "deployment.reserve_gb_per_gpu": round(reserve, 3)}
    granted = shape_of(brief.with_changes(changes)).kv_gb_per_gpu
    wanted = fraction * free
    if granted < wanted * 0.99:
        return (
            changes,
            f"the planner's cap on an engine's share of the GPU leaves {granted:.1f} GB of KV a GPU, not the engine's {wanted:.1f} GB",
        )
    return changes, ""


def setup(measurement: Measurement, efficiency: dict[str, Any] | None = None) -> Setup:
    """The brief and load that describe one row; efficiency fields (planner.brief.Efficiency) default to the planner's."""
    m = measurement
    gpu, spec = GPUS[m.gpu], MODELS[m.model]
    defaults = engine_defaults(m, gpu)
    seqs, tokens, chunked, limits_note = _limits(m, defaults)
    units, gpus_per_unit, tp = _units(m)
    lengths = m.lengths
    rate = m.load.rate_per_s / units if m.load.rate_per_s is not None else 1.0
    changes: dict[str, Any] = {
        "model.name": m.model,
        "hardware.gpu": m.gpu,
        "deployment.tp": tp,
        "deployment.weights": m.weights.value,
        "deployment.kv_cache": m.kv_cache.value,
        "deployment.max_num_seqs": seqs,
        "deployment.max_num_batched_tokens": tokens,
        "deployment.max_model_len": lengths.max_tokens,
        "deployment.chunked_prefill": chunked,
        "deployment.prefix_caching": False,
        "workload.users": None,
        "workload.request_rate": rate,
        "workload.input_tokens_mean": lengths.input_mean_tokens,
        "workload.input_tokens_p95": lengths.input_p95_tokens,
        "workload.output_tokens_mean": lengths.output_mean_tokens,
        "workload.output_tokens_p95": lengths.output_p95_tokens,
        "workload.prefix_hit_rate": 0.0,
        "latency.scheduler_ms": 0.0,  # the calibrated step overhead holds the engine's scheduling (simulator.BENCHMARK_ENGINE)
    }
    if m.attention_dp:
        changes |= _dep_rank_model(spec, m.tp)
    changes |= {f"efficiency.{k}": v for k, v in (efficiency or {}).items()}
    brief = Brief().with_changes(changes)
    fraction = m.limits.kv_memory_fraction or defaults.kv_fraction
    reserve_changes, cap_note = _reserve_changes(brief, defaults, fraction)
    brief = brief.with_changes(reserve_changes)
    pool = "free memory (weights and activations out first)" if defaults.kv_of_free_memory else "the GPU"
    notes = [limits_note, f"KV pool: {fraction:g} of {pool} ({'the row' if m.limits.kv_memory_fraction else 'default'})", cap_note]
    if m.engine is EngineFamily.sglang and m.limits.max_num_seqs is None:
        requests_pool = _sglang_request_pool(shape_of(brief).kv_capacity_tokens, spec.max_context_tokens)
        brief = brief.with_changes({"deployment.max_num_seqs": requests_pool})
        notes.append(f"SGLang request pool {requests_pool:,}")
    if m.attention_dp:
        notes.append(
            f"one of {units} attention-DP ranks simulated (TP=1, 1/{m.tp} of the experts, its own sequences' KV); EP all-to-all not modelled"
        )
    return Setup(
        measurement=m,
        brief=brief,
        settings=_settings(m, units, defaults),
        units=units,
        gpus_per_unit=gpus_per_unit,
        weight=m.weight,
        note="; ".join(n for n in notes if n),
    )


def metric_of(setup: Setup, result: SimResult) -> float:
    """The simulated figure the row measured, in the row's unit and basis."""
    m = setup.measurement
    scale = setup.units if m.basis is Basis.system else 1
    kind = m.metric
    if kind is MetricKind.output_tok_s_total:
        return result.output_tokens_per_s * scale
    if kind is MetricKind.output_tok_s_per_gpu:
        return result.output_tokens_per_s / setup.gpus_per_unit
    if kind is MetricKind.request_per_s:
        return result.requests_per_s * scale
    if kind is MetricKind.e2e_latency_mean_ms:  # a reply's first token, then its remaining gaps
        return result.ttft_ms.mean + result.tpot_ms.mean * (m.lengths.output_mean_tokens - 1)
    family, statistic = kind.value.removesuffix("_ms").split("_")
    percentiles = {"ttft": result.ttft_ms, "tpot": result.tpot_ms, "itl": result.itl_ms}[family]
    return float(getattr(percentiles, statistic))


def predict(setup: Setup) -> float:
    """Run the project's simulator on the setup and read the row's figure."""
    return metric_of(setup, simulate(setup.brief, setup.settings))
