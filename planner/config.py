"""Step 4b of the method: the engine configuration of the general pool, each flag derived from a constraint.

Every value here is recommended from the brief (not copied from it), so a flag can disagree with the
brief's own engine limits; the reason says where the number comes from and the SLO budget shows what the
brief's limits give.
"""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict

from planner.brief import Brief, KvPrecision, Precision
from planner.fmt import num, pct
from planner.operating_point import context_tokens
from planner.replica import ReplicaShape
from planner.slo import SloBudget, TradeoffPoint

__all__ = ["HF_IDS", "Dependency", "EngineConfig", "Flag", "engine_config"]

HEADROOM = 0.20  # above the expected running batch and the p95 sequence length
MODEL_LEN_STEP = 1024  # max-model-len rounds up to a multiple of this
MEMORY_UTILIZATION_STEP = 0.05  # gpu-memory-utilization rounds down to this
SEQS_STEP = 8  # max-num-seqs rounds up to a multiple of this
DEFAULT_BATCHED_TOKENS = 2048  # vLLM's chunk budget with chunked prefill: the starting point to tune from

HF_IDS = {
    "llama-3-70b": "meta-llama/Meta-Llama-3-70B-Instruct",
    "llama-3.1-70b": "meta-llama/Llama-3.1-70B-Instruct",
    "llama-3.3-70b": "meta-llama/Llama-3.3-70B-Instruct",
    "llama-2-70b": "meta-llama/Llama-2-70b-chat-hf",
    "llama-3.1-8b": "meta-llama/Llama-3.1-8B-Instruct",
    "llama-3.1-405b": "meta-llama/Llama-3.1-405B-Instruct",
    "mixtral-8x7b": "mistralai/Mixtral-8x7B-Instruct-v0.1",
    "qwen3-30b-a3b": "Qwen/Qwen3-30B-A3B",
}


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Flag(_Model):
    flag: str
    value: str  # empty for a switch
    why: str


class Dependency(_Model):
    what: str
    breaks_if: str


class EngineConfig(_Model):
    command: str
    flags: tuple[Flag, ...]
    dependencies: tuple[Dependency, ...]
    measure_first: tuple[str, ...]
    recommended_max_num_seqs: int
    recommended_max_num_batched_tokens: int
    recommended_max_model_len: int
    recommended_gpu_memory_utilization: float
    arithmetic: dict[str, str]


def _round_up(value: float, step: int) -> int:
    return int(math.ceil(value / step) * step)


def _max_model_len(brief: Brief, shape: ReplicaShape) -> tuple[int, str]:
    w = brief.workload
    need = w.input_tokens_p95 + w.output_tokens_p95
    wanted = _round_up(need * (1 + HEADROOM / 2), MODEL_LEN_STEP)
    limit = shape.model.max_context_tokens
    if wanted > limit:
        why = (
            f"p95 input {num(w.input_tokens_p95)} + p95 output {num(w.output_tokens_p95)} = {num(need)} tokens wants {num(wanted)} with headroom,"
            f" but the model stops at {num(limit)}: longer conversations must be truncated or sent to a longer-context model"
        )
        return limit, why
    why = (
        f"p95 input {num(w.input_tokens_p95)} + p95 output {num(w.output_tokens_p95)} = {num(need)} tokens, +{pct(wanted / need - 1)} headroom"
        f" (rounded up to a multiple of {MODEL_LEN_STEP}); not the model's {num(limit)}: a longer limit only"
        " shrinks the usable KV blocks; longer requests go to the long-context pool"
    )
    return wanted, why


def _max_num_seqs(brief: Brief, shape: ReplicaShape, load_batch: float, general_replicas: int, basis: str) -> tuple[int, str]:
    if not math.isfinite(load_batch):  # overloaded: the queue grows without bound, so no batch follows from the load
        value = brief.deployment.max_num_seqs
        return (
            value,
            f"{basis}: the replica is overloaded, so no batch size follows from the load; the brief's {value} stays until replicas are added",
        )
    value = max(_round_up(load_batch * (1 + HEADROOM), SEQS_STEP), SEQS_STEP)
    read, _ = context_tokens(brief)
    step_ms = shape.decode_step_real_s(value, read) * 1e3
    why = (
        f"{basis}, per replica of the {general_replicas}-replica general pool; +{pct(HEADROOM)} headroom"
        f" -> {value}; the decode step at {value} is {num(step_ms, 'ms')} real, inside the {num(brief.slo.itl_p95_ms, 'ms')} ITL target;"
        " kept well under the KV maximum so the engine never preempts"
    )
    return value, why


def _max_num_batched_tokens(brief: Brief, shape: ReplicaShape, slo: SloBudget, seqs: int) -> tuple[int, str]:
    value = DEFAULT_BATCHED_TOKENS
    curve = {int(p.x): p for p in slo.tradeoff_batched_tokens if p.x > seqs}
    point = curve.get(value)
    meets = [x for x, p in curve.items() if not _misses_slo(p, brief)]
    if point is not None and _misses_slo(point, brief) and meets:
        value = min(meets, key=lambda x: abs(math.log(x / DEFAULT_BATCHED_TOKENS)))
    if value <= seqs:
        value = _round_up(seqs + 1, 256)
    chunk = value - seqs
    chunk_ms = chunk / shape.prefill_tokens_per_s * 1e3
    why = (
        f"the prefill chunk is {value} - {seqs} decode tokens = {chunk} tokens, {num(chunk_ms, 'ms')} of prefill when a step carries a full one;"
        f" smaller chunks lengthen TTFT (more steps per prompt), larger ones lengthen single token gaps;"
        f" at the brief's limits p95 ITL is {num(slo.itl_p95_ms, 'ms')} (target {num(brief.slo.itl_p95_ms, 'ms')}) and the longest single step"
        f" {num(slo.point.longest_step_ms, 'ms')}; start here and tune on measured p95 ITL"
    )
    return value, why


def _misses_slo(point: TradeoffPoint, brief: Brief) -> bool:
    return point.itl_p95_ms > brief.slo.itl_p95_ms or point.ttft_p95_ms > brief.slo.ttft_p95_ms


def _gpu_memory_utilization(brief: Brief, shape: ReplicaShape) -> tuple[float, str]:
    mem = shape.gpu.memory_gb
    reserve = brief.deployment.reserve_gb_per_gpu
    raw = (mem - reserve) / mem
    value = math.floor(raw / MEMORY_UTILIZATION_STEP + 1e-9) * MEMORY_UTILIZATION_STEP
    kv = mem * value - shape.weights_gb_per_gpu
    why = (
        f"from the {num(reserve, 'GB')} reserve: ({num(mem, 'GB')} - {num(reserve, 'GB')}) / {num(mem, 'GB')} = {num(raw)}, rounded down to {num(value)}"
        f" for the activation peak of the largest chunk and the long tail of inputs; the engine then has {num(kv, 'GB')} per GPU"
        f" for KV and activations (the brief's arithmetic uses {num(brief.deployment.gpu_memory_utilization)} with the reserve taken out explicitly)"
    )
    return value, why


# --quantization per weight precision: (flag value, why it is chosen); BF16 runs unquantized (--dtype bfloat16)
_WEIGHT_QUANTIZATION = {
    Precision.fp8: ("fp8", "FP8 weights: {gb} per GPU instead of {bf16} in BF16, half the bytes every decode step reads"),
    Precision.int8: ("compressed-tensors", "INT8 W8A8 checkpoint (no FP8 on this GPU): {gb} per GPU instead of {bf16}"),
    Precision.int4: ("awq_marlin", "INT4 (W4A16) weights: {gb} per GPU; decode reads a quarter of the BF16 bytes"),
}


def _quantization_flags(brief: Brief, shape: ReplicaShape) -> list[Flag]:
    dep = brief.deployment
    gb, bf16 = num(shape.weights_gb_per_gpu, "GB"), num(shape.model.params * 2 / shape.tp / 1e9, "GB")
    if dep.weights in _WEIGHT_QUANTIZATION:
        value, why = _WEIGHT_QUANTIZATION[dep.weights]
        weights = Flag(flag="--quantization", value=value, why=why.format(gb=gb, bf16=bf16))
    else:
        weights = Flag(flag="--dtype", value="bfloat16", why=f"BF16 weights: {gb} per GPU, no quantization risk")
    if dep.kv_cache is KvPrecision.fp8:
        kv = Flag(
            flag="--kv-cache-dtype",
            value="fp8",
            why=f"FP8 KV: {num(shape.kv_bytes_per_token_per_gpu / 1024, 'KiB')} per token per GPU, twice the sequences and half the KV bytes a step reads",
        )
    else:
        kv = Flag(flag="--kv-cache-dtype", value="auto", why="KV in the model's precision (BF16): no KV quantization on this GPU or brief")
    return [weights, kv]


def engine_config(
    brief: Brief,
    shape: ReplicaShape,
    slo: SloBudget,
    load_batch: float,
    general_replicas: int,
    basis: str,
    revert_utilization: tuple[float, float] | None,  # (at the hit rate, without prefix cache)
    hit_rate_floor: float | None,
) -> EngineConfig:
    """The vLLM command of the general pool, its critical dependencies and what to measure first."""
    dep, w = brief.deployment, brief.workload
    model_len, model_len_why = _max_model_len(brief, shape)
    seqs, seqs_why = _max_num_seqs(brief, shape, load_batch, general_replicas, basis)
    batched, batched_why = _max_num_batched_tokens(brief, shape, slo, seqs)
    mem_util, mem_why = _gpu_memory_utilization(brief, shape)
    flags = _quantization_flags(brief, shape)
    flags += [
        Flag(
            flag="--tensor-parallel-size",
            value=str(shape.tp),
            why=f"TP={shape.tp} inside one {brief.hardware.gpus_per_node}-GPU NVSwitch domain; more would cross nodes, fewer would not hold"
            f" {num(shape.weights_gb_per_gpu * shape.tp, 'GB')} of weights with room for KV",
        ),
        Flag(flag="--max-model-len", value=str(model_len), why=model_len_why),
        Flag(flag="--max-num-seqs", value=str(seqs), why=seqs_why),
        Flag(flag="--max-num-batched-tokens", value=str(batched), why=batched_why),
        Flag(flag="--gpu-memory-utilization", value=f"{mem_util:.2f}", why=mem_why),
    ]
    if dep.prefix_caching:
        flags.append(
            Flag(
                flag="--enable-prefix-caching",
                value="",
                why=f"{pct(w.prefix_hit_rate)} of prompt tokens are history already in the cache: prefill falls from"
                f" {num(w.input_tokens_mean)} to {num(w.input_tokens_mean * (1 - w.prefix_hit_rate))} tokens per request",
            )
        )
    if dep.chunked_prefill:
        flags.append(
            Flag(
                flag="--enable-chunked-prefill",
                value="",
                why=f"a p95 prompt of {num(w.input_tokens_p95)} tokens unchunked takes {num(w.input_tokens_p95 / shape.prefill_tokens_per_s * 1e3, 'ms')}"
                " of GPU and would stall every running sequence's next token",
            )
        )
    flags.append(
        Flag(
            flag="--scheduling-policy",
            value="priority",
            why="lets the gateway tier requests (interactive before batch), the first rung of the degradation ladder",
        )
    )
    flags.append(Flag(flag="--port", value="8000", why="the router's upstream port"))
    model_id = HF_IDS.get(shape.model.key, shape.model.name)
    parts = [f"vllm serve {model_id}"] + [f"  {f.flag}{' ' + f.value if f.value else ''}" for f in flags]
    command = " \\\n".join(parts)
    return EngineConfig(
        command=command,
        flags=tuple(flags),
        dependencies=_dependencies(brief, revert_utilization, hit_rate_floor),
        measure_first=(
            "prefix-cache hit rate (per pool and per replica)",
            "average running batch per replica (vllm:num_requests_running)",
            f"p95 ITL against {num(brief.slo.itl_p95_ms, 'ms')}, split by steps with and without a prefill chunk",
            "p95 queue wait before prefill (vllm:request_queue_time_seconds)",
            f"p95 TTFT for prompts up to {num(brief.slo.ttft_input_cap_tokens, 'tokens')}",
            "cost per million output tokens, from GPU-hours and tokens served",
        ),
        recommended_max_num_seqs=seqs,
        recommended_max_num_batched_tokens=batched,
        recommended_max_model_len=model_len,
        recommended_gpu_memory_utilization=mem_util,
        arithmetic={
            "max_model_len": model_len_why,
            "max_num_seqs": seqs_why,
            "max_num_batched_tokens": batched_why,
            "gpu_memory_utilization": mem_why,
        },
    )


def _dependencies(brief: Brief, revert_utilization: tuple[float, float] | None, hit_rate_floor: float | None) -> tuple[Dependency, ...]:
    dep, w = brief.deployment, brief.workload
    deps: list[Dependency] = []
    if dep.weights is not Precision.bf16 or dep.kv_cache is not KvPrecision.bf16:
        revert = (
            f"reverting to BF16 puts utilization at {pct(revert_utilization[0])} ({pct(revert_utilization[1])} without prefix cache)"
            if revert_utilization is not None
            else "reverting to BF16 doubles decode bytes"
        )
        deps.append(
            Dependency(
                what=f"{dep.weights.value.upper()} weights and {dep.kv_cache.value.upper()} KV keep acceptable quality (validate before committing)",
                breaks_if=f"a quality regression forces BF16: {revert}; keep a second quantization method (e.g. INT8 W8A8) as the fallback",
            )
        )
    if dep.prefix_caching and w.prefix_hit_rate > 0:
        floor = f"below {pct(hit_rate_floor)} the SLO or utilization fails" if hit_rate_floor is not None else "the design holds even at 0%"
        deps.append(
            Dependency(
                what=f"prefix-cache hit rate stays near {pct(w.prefix_hit_rate)} (monitor and alert)",
                breaks_if=f"{floor}; prefill demand grows by 1 / (1 - hit rate)",
            )
        )
        deps.append(
            Dependency(
                what="prompts stay cache-friendly: history first, per-request content last; routing keeps a conversation on one replica",
                breaks_if="a product change puts per-request text (timestamps, IDs) at the start of the prompt: every token misses",
            )
        )
    if dep.long_context_nodes > 0:
        deps.append(
            Dependency(
                what=f"long-context requests (over {num(w.long_context_threshold_tokens, 'tokens')}) stay near {pct(w.long_context_share)} of traffic",
                breaks_if="more of them saturate the long-context pool; spilling them onto the general pool blocks its prefill and inflates its KV",
            )
        )
    return tuple(deps)
