"""Step 4b of the method: the engine configuration of the general pool, each flag derived from a constraint.

Every value here is recommended from the brief (not copied from it), so a flag can disagree with the
brief's own engine limits; the reason says where the number comes from and the SLO budget shows what the
brief's limits give.
"""

from __future__ import annotations

import math
import shlex
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from planner.brief import Brief, ItlMetric, KvPrecision, ObjectiveKind, Precision
from planner.capacity import memory
from planner.catalog import MODELS, GpuSpec, ModelSpec
from planner.fmt import num, pct
from planner.objective import objective_analysis
from planner.operating_point import SEQS_HEADROOM, SEQS_STEP, OperatingPoint, kv_running_limit, max_num_seqs_for, max_num_seqs_meeting
from planner.pools import MODEL_LEN_HEADROOM, MODEL_LEN_STEP, general_prompt_cap_tokens, max_model_len_for, pools_of
from planner.quantization import prefill_peak, weight_scheme
from planner.replica import MAX_ENGINE_MEMORY_FRACTION, ReplicaShape, shape_of
from planner.slo import SloBudget, TradeoffPoint, chunk_tradeoff_words

if TYPE_CHECKING:
    from planner.disagg import DisaggAnalysis
    from planner.failures import HitRateFloor

__all__ = [
    "HF_IDS",
    "Dependency",
    "EngineConfig",
    "EngineSettings",
    "Flag",
    "Recommendation",
    "engine_config",
    "fmt_fraction",
    "with_flags",
]


HF_IDS = {key: spec.hf_repo for key, spec in MODELS.items()}  # the Hugging Face id the engine command loads, by catalog key


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Flag(_Model):
    flag: str
    value: str  # empty for a switch
    why: str


class Dependency(_Model):
    what: str
    breaks_if: str


class EngineSettings(_Model):
    """The engine configuration the analysis uses, the simulator runs and `command` prints, value for value."""

    model: str
    tensor_parallel_size: int
    quantization: str | None  # None: unquantized (--dtype bfloat16)
    kv_cache_dtype: str
    max_model_len: int
    max_num_seqs: int
    max_num_batched_tokens: int
    gpu_memory_utilization: float
    enable_prefix_caching: bool
    enable_chunked_prefill: bool
    pipeline_parallel_size: int = 1
    data_parallel_size: int = 1  # attention groups of a DP-attention replica (vLLM's DP ranks, joined by EP)
    enable_expert_parallel: bool = False
    scheduling_policy: str = "fcfs"  # vLLM's default; "priority" lets the gateway tier requests
    port: int = 8000
    extra_args: dict[str, str] = {}  # every other option the command prints (flag -> value, '' for a switch): multi-node
    # launch options and the mechanisms' (KV tiers and transfer, speculative decoding, images, adapters)


# Flags that print a field of EngineSettings; every other flag of the command is in its extra_args.
_FIELD_FLAGS = frozenset(
    {
        "--quantization",
        "--dtype",
        "--kv-cache-dtype",
        "--tensor-parallel-size",
        "--pipeline-parallel-size",
        "--data-parallel-size",
        "--enable-expert-parallel",
        "--max-model-len",
        "--max-num-seqs",
        "--max-num-batched-tokens",
        "--gpu-memory-utilization",
        "--enable-prefix-caching",
        "--no-enable-prefix-caching",
        "--enable-chunked-prefill",
        "--no-enable-chunked-prefill",
        "--scheduling-policy",
        "--port",
    }
)


def _extra_args(flags: list[Flag] | tuple[Flag, ...]) -> dict[str, str]:
    return {f.flag: f.value for f in flags if f.flag not in _FIELD_FLAGS}


class Recommendation(_Model):
    """A change to the brief's engine limits the analysis suggests, with the overrides that apply it."""

    flag: str
    value: str
    why: str
    overrides: dict[str, float | int | str]


class EngineConfig(_Model):
    engine: EngineSettings
    command: str  # the general pool's (a disaggregated design's decode pool's)
    flags: tuple[Flag, ...]
    recommendations: tuple[Recommendation, ...]
    dependencies: tuple[Dependency, ...]
    measure_first: tuple[str, ...]
    arithmetic: dict[str, str]
    prefill_command: str | None = None  # a disaggregated design's prefill pool


def _command(model: str, flags: list[Flag] | tuple[Flag, ...]) -> str:
    parts = [f"vllm serve {shlex.quote(model)}"] + [f"  {f.flag}{' ' + shlex.quote(f.value) if f.value else ''}" for f in flags]
    return " \\\n".join(parts)


def with_flags(config: EngineConfig, extra: list[Flag], prefill_changes: dict[str, str] | None = None) -> EngineConfig:
    """The configuration with mechanism flags (KV transfer, speculative decoding) before --port; with
    `prefill_changes` (flag -> value) also the prefill pool's command: the same flags with those values."""
    port = [f for f in config.flags if f.flag == "--port"]
    flags = [f for f in config.flags if f.flag != "--port"] + extra + port
    engine = config.engine.model_copy(update={"extra_args": _extra_args(flags)})
    prefill = None
    if prefill_changes is not None:
        prefill_flags = [f.model_copy(update={"value": prefill_changes[f.flag]}) if f.flag in prefill_changes else f for f in flags]
        prefill = _command(config.engine.model, [f for f in prefill_flags if f.flag != "--speculative-config"])
    return config.model_copy(
        update={"engine": engine, "flags": tuple(flags), "command": _command(engine.model, flags), "prefill_command": prefill}
    )


def _max_model_len_why(brief: Brief, shape: ReplicaShape) -> tuple[str, Recommendation | None]:
    """The longest sequence the general pool takes is the longest prompt the router sends it + a p95 reply."""
    w, value = brief.workload, brief.deployment.max_model_len
    pools, _ = pools_of(brief, shape)
    cap = general_prompt_cap_tokens(brief, pools.long_context_nodes)
    need = cap + w.output_tokens_p95
    if pools.long_context_nodes and w.long_context_share > 0:
        sent, beyond = f"prompts up to {num(cap)} (longer go to the long-context pool)", "a longer reply stops at the limit"
    elif w.long_context_share > 0:
        sent, beyond = f"every prompt, the long ones near {num(cap)} (no long-context pool)", "a longer request is refused or cut"
    else:
        sent, beyond = f"p95 input {num(cap)}", "the few longer requests are refused (prompt) or stop at the limit (reply)"
    why = (
        f"{num(value)} tokens: {sent} + p95 output {num(w.output_tokens_p95)} = {num(need)} fit with room;"
        f" a longer limit only shrinks the usable KV blocks, {beyond}"
    )
    if value >= need:
        return why, None
    wanted = max_model_len_for(need, shape.model.max_context_tokens)
    refused = "refused" if cap >= value else "cut"
    why = f"{num(value)} tokens is below {sent} + p95 output {num(w.output_tokens_p95)} = {num(need)}: the longest requests are {refused}"
    if wanted <= value:
        return f"{why}; the model stops at {num(shape.model.max_context_tokens)}: route them to a longer-context model", None
    return why, Recommendation(
        flag="--max-model-len",
        value=str(wanted),
        why=f"{num(need)} tokens + {pct(MODEL_LEN_HEADROOM)} headroom, rounded to {MODEL_LEN_STEP}",
        overrides={"deployment.max_model_len": wanted},
    )


def _max_num_seqs_why(brief: Brief, shape: ReplicaShape, slo: SloBudget, op: OperatingPoint) -> tuple[str, Recommendation | None]:
    value = brief.deployment.max_num_seqs
    full = slo.at_max_batch
    if full is None:
        bound = "the full-batch bound is not computed for a re-plan"
    elif full.chunk_step_ms is None:  # a decode pool: no prompt rides in its steps
        bound = (
            f"with all {value} slots of a decode replica running the ITL would be {num(full.itl_p50_ms, 'ms')} at p50 and p95"
            f" against the {num(brief.slo.itl_p95_ms, 'ms')} target (pure decode steps: the prompts are prefilled on the prefill pool)"
        )
    else:
        full_words = f"all {value} slots running" if full.batch >= value else f"the {full.batch} sequences the KV pool holds running"
        target = num(brief.slo.itl_p95_ms, "ms")
        chunk = f"a step carrying a mean prompt's chunk {num(full.chunk_step_ms, 'ms')}: the SLO budget's full-batch figures"
        bound = (
            f"with {full_words} the ITL would be p50 {num(full.itl_p50_ms, 'ms')} / p95 {num(full.itl_p95_ms, 'ms')} against the"
            f" {target} target (a reply's mean gap {num(full.tpot_p50_ms, 'ms')}, {chunk})"
            if brief.slo.itl_metric is ItlMetric.itl
            else f"with {full_words} a reply's mean gap would be {num(full.tpot_p50_ms, 'ms')} at p50 against the {target} target,"
            f" which judges it (TPOT) (gaps between tokens p50 {num(full.itl_p50_ms, 'ms')} / p95 {num(full.itl_p95_ms, 'ms')}, {chunk})"
        )
    if full is not None and brief.objective.kind is not ObjectiveKind.latency:  # the job runs its largest batch
        bound = (
            f"with {min(full.batch, value)} sequences running a token gap would be p50 {num(full.itl_p50_ms, 'ms')} /"
            f" p95 {num(full.itl_p95_ms, 'ms')} and a reply's mean gap {num(full.tpot_p50_ms, 'ms')} (the job's step at its full batch),"
            " for reference: no latency target judges this design, its deadline does"
        )
    if not op.stable:
        return f"{value}: the replica has no steady state at this load (the verdict says what binds); {bound}", None
    running = op.in_flight
    kv_sequences = kv_running_limit(brief, shape)
    kv_clause = (
        f"kept under the {num(kv_sequences)} sequences the KV pool holds at the running context so the engine does not preempt"
        if value <= kv_sequences
        else f"above the {num(kv_sequences)} sequences the KV pool holds at the running context: past them the engine preempts"
        " (the analysis caps the running batch there)"
    )
    why = (
        f"{value}: {num(running)} sequences run at the operating point (Little's law at the engine's pace), so {value} leaves"
        f" x{num(value / max(running, 1e-9))} for bursts, a lost node and slower replies; {bound}; {kv_clause}"
    )
    if value > kv_sequences:
        step = SEQS_STEP * shape.attention_groups  # a multiple of SEQS_STEP on every rank
        fits = max(math.floor(kv_sequences / step) * step, step)
        per_rank = "" if shape.attention_groups == 1 else f" ({shape.attention_groups} ranks x {_per_rank(fits, shape)})"
        return why, Recommendation(
            flag="--max-num-seqs",
            value=str(_per_rank(fits, shape)),
            why=f"{fits}{per_rank}: the most sequences in multiples of {SEQS_STEP} a rank that the KV pool holds at the running context;"
            " more slots only preempt",
            overrides={"deployment.max_num_seqs": fits},
        )
    point = slo.point  # the TTFT waits for a batch slot (an aggregated replica's: a disaggregated one's pools judge it)
    slot_bound = not (slo.ttft_ok or brief.disaggregation.enabled) and point.admission_wait_ms > point.prompt_wait_ms
    if value < running * (1 + SEQS_HEADROOM) or slot_bound:
        need = max_num_seqs_meeting(brief, shape, op.rate_per_replica_per_s, running) if slot_bound else max_num_seqs_for(running)
        headroom = f"{num(running)} running + {pct(SEQS_HEADROOM)} headroom: fewer slots queue requests at the peak"
        if need <= value:
            return why, None
        return why, Recommendation(
            flag="--max-num-seqs",
            value=str(need),
            why=headroom
            if need == max_num_seqs_for(running)
            else f"the fewest slots (in steps of {SEQS_STEP}) above the {num(running)} running whose wait for a batch slot"
            f" keeps p95 TTFT within its {num(brief.slo.ttft_p95_ms, 'ms')} target",
            overrides={"deployment.max_num_seqs": need},
        )
    return why, None


def _max_num_batched_tokens_why(
    brief: Brief, shape: ReplicaShape, slo: SloBudget, dis: DisaggAnalysis | None
) -> tuple[str, Recommendation | None]:
    value = brief.deployment.max_num_batched_tokens
    if dis is not None:
        return _disaggregated_batched_tokens_why(brief, dis), None
    p = slo.point
    chunk = max(value - p.running_batch, 0)
    why = (
        f"{value}: a prefill chunk of up to {value} - {num(p.running_batch)} decode tokens = {num(chunk)} tokens rides in each step,"
        f" {num(chunk / shape.prefill_tokens_per_s * 1e3, 'ms')} of prefill when full; {pct(p.mixed_step_share)} of token gaps fall on such steps,"
        f" so p95 ITL is {num(slo.itl_p95_ms, 'ms')} and p95 TTFT {num(slo.ttft_p95_ms, 'ms')}"
    )
    moves = chunk_tradeoff_words(slo.tradeoff_batched_tokens, value)
    why += f"; {moves}: tune on measured p95 ITL" if moves else ": tune on measured p95 ITL"
    curve = {int(t.x): t for t in slo.tradeoff_batched_tokens}
    current = curve.get(value)
    if current is None or not _misses_slo(current, brief):
        return why, None
    meets = [x for x, t in curve.items() if not _misses_slo(t, brief)]
    if not meets:
        return why, None
    best = min(meets, key=lambda x: abs(math.log(x / value)))
    return why, Recommendation(
        flag="--max-num-batched-tokens",
        value=str(best),
        why=f"the nearest value on the trade-off curve that meets both targets (p95 TTFT {num(curve[best].ttft_p95_ms, 'ms')}, p95 ITL {num(curve[best].itl_p95_ms, 'ms')})",
        overrides={"deployment.max_num_batched_tokens": best},
    )


def _disaggregated_batched_tokens_why(brief: Brief, dis: DisaggAnalysis) -> str:
    """The decode pool's step budget (this command) and the prefill pool's (its own command): a decode step carries only
    the running sequences' tokens, a prefill step a prompt's chunk with no decode beside it."""
    value = brief.deployment.max_num_batched_tokens
    prefill_budget = brief.disaggregation.prefill_max_num_batched_tokens or value
    room = (
        f"at least the {brief.deployment.max_num_seqs} tokens a full batch emits"
        if value >= brief.deployment.max_num_seqs
        else f"below the {brief.deployment.max_num_seqs} tokens a full batch emits, so a full batch waits a step"
    )
    return (
        f"{value}: on the decode pool a step carries only the running sequences' tokens ({num(dis.decode_batch)} at the operating"
        f" point, {room}) and prompts arrive prefilled, so no chunk lengthens a token gap; the prefill pool's command takes"
        f" {prefill_budget} a step for prompt chunks alone: a mean prompt holds a prefill replica {num(dis.prefill_service_ms_mean, 'ms')},"
        f" {pct(dis.prefill_busy)} busy, p95 TTFT {num(dis.ttft_p95_ms, 'ms')}"
    )


def _misses_slo(point: TradeoffPoint, brief: Brief) -> bool:
    judged = brief.slo.itl_metric.judged(point.itl_p95_ms, point.tpot_p95_ms)  # as the brief states it
    return judged > brief.slo.itl_p95_ms or point.ttft_p95_ms > brief.slo.ttft_p95_ms


def _tp_why(brief: Brief, shape: ReplicaShape) -> str:
    """Why this TP: inside the node's scale-up domain (named as the GPU's vendor names it), and what one step fewer or
    more would do (a plain TP replica; an EP, DP-attention or pipelined replica's layout is its own flags' reason)."""
    domain, tp = brief.hardware.gpus_per_node, shape.tp
    inside = f"TP={tp} inside one {domain}-GPU {shape.gpu.scale_up_domain}"
    if shape.ep > 1 or shape.pp > 1 or shape.attention_groups > 1:
        return f"{inside}: the replica's other GPUs are its {'expert' if shape.ep > 1 else 'pipeline'} ranks (the flags below)"
    more = (
        "more would cross nodes"
        if tp >= domain
        else f"{domain // tp} replicas share a node; more TP would split each step further for less batch per GPU"
    )
    weights_gb = shape.weights_gb_per_gpu * tp
    if tp == 1:
        return f"{inside}: one GPU holds {num(weights_gb, 'GB')} of weights and {num(shape.kv_gb_per_gpu, 'GB')} of KV; {more}"
    half_kv_gb = shape.usable_gb_per_gpu - shape.reserve_gb_per_gpu - weights_gb / (tp // 2)
    if brief.objective.kind is not ObjectiveKind.latency and half_kv_gb > 0:  # a job: the fleet's tokens/s decides
        return f"{inside}; {more}; {_half_tp_pace(brief, shape)}"
    fewer = (
        f"TP={tp // 2} would read {num(weights_gb / (tp // 2), 'GB')} of weights a GPU each decode step instead of"
        f" {num(shape.weights_gb_per_gpu, 'GB')} (slower tokens) and leave {num(half_kv_gb, 'GB')} a GPU for KV instead of {num(shape.kv_gb_per_gpu, 'GB')}"
        if half_kv_gb > 0
        else f"TP={tp // 2} would not hold {num(weights_gb, 'GB')} of weights with room for KV"
    )
    return f"{inside}; {more}; {fewer}"


def _half_tp_pace(brief: Brief, shape: ReplicaShape) -> str:
    """For a job judged on its deadline: the fleet's pace at half the TP (twice the replicas), re-worked."""
    half = shape.tp // 2
    other = brief.with_changes({"deployment.tp": half})
    now = objective_analysis(brief, shape, memory(brief, shape))
    half_shape = shape_of(other)
    then = objective_analysis(other, half_shape, memory(other, half_shape))
    if now is None or then is None:
        return f"TP={half} would run twice the replicas"
    verdict = (
        "faster: worth a measured trial (plan --set deployment.tp=" + str(half) + ")" if then.tokens_per_s > now.tokens_per_s else "slower"
    )
    return (
        f"TP={half} would run {half_shape.replicas} replicas instead of {shape.replicas}, each reading more weights a step:"
        f" {num(then.tokens_per_s, 'tokens/s')} for the fleet against {num(now.tokens_per_s, 'tokens/s')} at TP={shape.tp}, {verdict}"
    )


def _gpu_memory_utilization_why(brief: Brief, shape: ReplicaShape) -> str:
    """The flag's arithmetic, each step with its result: the brief's share less the reserve, then the 0.95 cap where
    it applies (the printed figure is the capped one)."""
    mem, dep = shape.gpu.memory_gb, brief.deployment
    value = shape.engine_memory_fraction
    wanted_gb = mem * dep.gpu_memory_utilization - dep.reserve_gb_per_gpu
    steps = f"{num(mem, 'GB')} x {num(dep.gpu_memory_utilization)} - {num(dep.reserve_gb_per_gpu, 'GB')} reserve = {num(wanted_gb, 'GB')}"
    if wanted_gb / mem > MAX_ENGINE_MEMORY_FRACTION:
        steps += (
            f", capped at {num(MAX_ENGINE_MEMORY_FRACTION)} x {num(mem, 'GB')} = {num(mem * value, 'GB')} per GPU for the engine"
            " (the rest is the GPU runtime's context, the collective-communication buffers and the activation peak)"
        )
    else:
        steps += " per GPU for the engine"
    return (
        f"{fmt_fraction(value)}: {steps}; {num(shape.weights_gb_per_gpu, 'GB')} of it weights, {num(shape.kv_gb_per_gpu, 'GB')}"
        " KV: the analysis sizes the KV pool with exactly this"
    )


def fmt_fraction(value: float) -> str:
    """0.9375 -> '0.9375', 0.9 -> '0.90': as many decimals as the value has, at least two."""
    text = f"{value:.4f}".rstrip("0")
    return text if len(text.split(".")[1]) >= 2 else f"{value:.2f}"


def _quantization_flags(brief: Brief, shape: ReplicaShape) -> list[Flag]:
    dep = brief.deployment
    gb, bf16 = num(shape.weights_gb_per_gpu, "GB"), num(shape.weights_gb_per_gpu * 2 / dep.weights.bytes_per_value, "GB")
    scheme = weight_scheme(dep.weights, shape.gpu)
    peak = prefill_peak(dep.weights, brief.efficiency.compute_peak, shape.gpu)  # the peak the capacity is sized at
    if scheme.flag_value is not None:
        weights = Flag(
            flag="--quantization", value=scheme.flag_value, why=f"{scheme.scheme}: {gb} per GPU instead of {bf16} in BF16; {peak.why}"
        )
    else:
        unused = f"; efficiency.compute_peak={peak.stated.value} {peak.unused_why}" if peak.unused else ""
        weights = Flag(flag="--dtype", value="bfloat16", why=f"BF16 weights: {gb} per GPU, no quantization risk{unused}")
    if dep.kv_cache is KvPrecision.fp8:
        kv = Flag(
            flag="--kv-cache-dtype",
            value="fp8",
            why=f"FP8 KV: {num(shape.kv_bytes_per_token_per_gpu / 1024, 'KiB')} per token per GPU, twice the sequences and half the KV bytes a step reads",
        )
    else:
        kv = Flag(flag="--kv-cache-dtype", value="auto", why="KV in the model's precision (BF16): no KV quantization on this GPU or brief")
    return [weights, kv]


def _per_rank(replica_limit: int, shape: ReplicaShape) -> int:
    """An engine limit as the engine takes it: per DP-attention rank (the brief states the replica's, which the analysis uses)."""
    return math.ceil(replica_limit / shape.attention_groups)


def _rank_note(replica_limit: int, shape: ReplicaShape, what: str) -> str:
    if shape.attention_groups == 1:
        return ""
    return f"per DP rank: {shape.attention_groups} ranks x {_per_rank(replica_limit, shape)} = the replica's {replica_limit:,} {what}, as analysed. "


def _parallel_flags(brief: Brief, shape: ReplicaShape) -> list[Flag]:
    """Pipeline stages, DP attention and expert parallelism: the flags that make a replica span GPUs beyond one TP group."""
    gpn, m, k = brief.hardware.gpus_per_node, shape.model, shape.step
    flags = []
    if shape.pp > 1:
        flags += [
            Flag(
                flag="--pipeline-parallel-size",
                value=str(shape.pp),
                why=f"{shape.pp} stages of {num(m.layers / shape.pp)} layers, one node each: {num(shape.weights_gb_per_gpu, 'GB')} of weights a GPU"
                f" instead of {num(shape.weights_gb_per_gpu * shape.pp, 'GB')}; each step sends its activations over the network"
                f" {shape.pp - 1} time{'s' if shape.pp > 2 else ''} ({num(k.pp_s_per_token * 1e6, 'us')} a token +"
                f" {num(k.pp_latency_s * 1e6, 'us')}); the engine keeps {shape.pp} micro-batches in flight, one a stage",
            ),
            Flag(
                flag="--distributed-executor-backend",
                value="ray",
                why=f"a replica spans {shape.replica_nodes} nodes: vLLM runs the stages as one Ray cluster",
            ),
        ]
    if shape.attention_groups > 1:
        local = min(shape.attention_groups, gpn // shape.tp)
        flags.append(
            Flag(
                flag="--data-parallel-size",
                value=str(shape.attention_groups),
                why=f"DP attention: {shape.attention_groups} attention groups of TP={shape.tp}, each with the attention weights and its own"
                f" sequences' KV ({'MLA latent held once a group, not on every GPU' if m.kv_lora_rank else 'KV split by TP inside a group'});"
                f" the replica's KV pool is {shape.attention_groups} groups' worth",
            )
        )
        if shape.gpus > gpn:
            flags.append(
                Flag(
                    flag="--data-parallel-size-local",
                    value=str(local),
                    why=f"{local} of the {shape.attention_groups} ranks on each of the replica's {max(shape.gpus // gpn, 1)} nodes"
                    " (start one such command a node, the first with --data-parallel-address of the head node)",
                )
            )
    if shape.ep > 1:
        span = (
            "over the network (VLLM_ALL2ALL_BACKEND=deepep_low_latency: DeepEP's RDMA kernels)"
            if shape.gpus > gpn
            else f"over the node's {shape.gpu.scale_up_domain}"
        )
        flags.append(
            Flag(
                flag="--enable-expert-parallel",
                value="",
                why=f"EP={shape.ep}: the {m.experts} routed experts spread over {shape.gpus} GPUs ({num(m.experts / shape.gpus)} each) instead of"
                f" every GPU holding a slice of each; tokens go to their {m.experts_per_token} experts by all-to-all {span},"
                f" {num(k.a2a_s_per_token * 1e6, 'us')} a token + {num(k.a2a_latency_s * 1e3, 'ms')} a step over {m.moe_layers} MoE layers",
            )
        )
    return flags


def engine_config(
    brief: Brief,
    shape: ReplicaShape,
    slo: SloBudget,
    op: OperatingPoint,
    revert_utilization: tuple[float, float] | None,  # (at the hit rate, without prefix cache)
    hit_rate_floor: HitRateFloor | None,
    dis: DisaggAnalysis | None = None,
) -> EngineConfig:
    """The vLLM command of the general pool (the brief's engine limits, which the analysis uses), a reason per flag,
    the changes the analysis recommends, the critical dependencies and what to measure first."""
    dep, w = brief.deployment, brief.workload
    quant = _quantization_flags(brief, shape)
    engine = EngineSettings(
        model=shape.model.hf_repo or shape.model.name,
        tensor_parallel_size=shape.tp,
        quantization=quant[0].value if quant[0].flag == "--quantization" else None,
        kv_cache_dtype=quant[1].value,
        max_model_len=dep.max_model_len,
        max_num_seqs=_per_rank(dep.max_num_seqs, shape),
        max_num_batched_tokens=_per_rank(dep.max_num_batched_tokens, shape),
        gpu_memory_utilization=shape.engine_memory_fraction,
        enable_prefix_caching=dep.prefix_caching,
        enable_chunked_prefill=dep.chunked_prefill,
        pipeline_parallel_size=shape.pp,
        data_parallel_size=shape.attention_groups,
        enable_expert_parallel=shape.ep > 1,
    )
    model_len_why, len_rec = _max_model_len_why(brief, shape)
    seqs_why, seqs_rec = _max_num_seqs_why(brief, shape, slo, op)
    batched_why, batched_rec = _max_num_batched_tokens_why(brief, shape, slo, dis)
    mem_why = _gpu_memory_utilization_why(brief, shape)
    flags = [
        *quant,
        Flag(flag="--tensor-parallel-size", value=str(shape.tp), why=_tp_why(brief, shape)),
        *_parallel_flags(brief, shape),
        Flag(flag="--max-model-len", value=str(engine.max_model_len), why=model_len_why),
        Flag(flag="--max-num-seqs", value=str(engine.max_num_seqs), why=_rank_note(dep.max_num_seqs, shape, "sequences") + seqs_why),
        Flag(
            flag="--max-num-batched-tokens",
            value=str(engine.max_num_batched_tokens),
            why=_rank_note(dep.max_num_batched_tokens, shape, "tokens a step") + batched_why,
        ),
        Flag(flag="--gpu-memory-utilization", value=fmt_fraction(engine.gpu_memory_utilization), why=mem_why),
    ]
    unchunked_ms = num(w.input_tokens_p95 / shape.prefill_tokens_per_s * 1e3, "ms")
    flags.append(
        Flag(
            flag="--enable-prefix-caching",
            value="",
            why=f"{pct(w.prefix_hit_rate)} of prompt tokens are history already in the cache: prefill falls from"
            f" {num(w.input_tokens_mean)} to {num(w.input_tokens_mean * (1 - w.prefix_hit_rate))} tokens per request",
        )
        if dep.prefix_caching
        else Flag(
            flag="--no-enable-prefix-caching",
            value="",
            why="the brief turns prefix caching off: every prompt is prefilled in full (vLLM enables it by default)",
        )
    )
    flags.append(
        Flag(
            flag="--enable-chunked-prefill",
            value="",
            why=f"a p95 prompt of {num(w.input_tokens_p95)} tokens unchunked takes {unchunked_ms}"
            + (
                " of GPU: on the prefill pool chunks keep a step within its token budget; the decode pool prefills nothing"
                if dis is not None
                else " of GPU and would stall every running sequence's next token"
            ),
        )
        if dep.chunked_prefill
        else Flag(
            flag="--no-enable-chunked-prefill",
            value="",
            why=f"the brief turns chunked prefill off: a p95 prompt stalls every running sequence for {unchunked_ms}",
        )
    )
    engine = engine.model_copy(update={"scheduling_policy": "priority", "extra_args": _extra_args(flags)})
    flags.append(
        Flag(
            flag="--scheduling-policy",
            value=engine.scheduling_policy,
            why="lets the gateway tier requests (interactive before batch), the first rung of the degradation ladder",
        )
    )
    flags.append(Flag(flag="--port", value=str(engine.port), why="the router's upstream port"))
    return EngineConfig(
        engine=engine,
        command=_command(engine.model, flags),
        flags=tuple(flags),
        recommendations=tuple(r for r in (seqs_rec, batched_rec, len_rec) if r is not None),
        dependencies=(*_model_dependency(shape.model), *_dependencies(brief, shape.gpu, revert_utilization, hit_rate_floor)),
        measure_first=_measure_first(brief),
        arithmetic={
            "max_model_len": model_len_why,
            "max_num_seqs": seqs_why,
            "max_num_batched_tokens": batched_why,
            "gpu_memory_utilization": mem_why,
        },
    )


def _measure_first(brief: Brief) -> tuple[str, ...]:
    """What to measure first on a real engine: the latency figures the SLO judges, or an objective's pace."""
    if brief.objective.kind is not ObjectiveKind.latency:
        work = (
            "tokens finished per hour against what the deadline needs (job tokens / deadline)"
            if brief.objective.kind is ObjectiveKind.throughput
            else "the longest outputs and when the last of the batch finishes (the stragglers set the makespan)"
        )
        return (
            "output tokens/s per replica at the full batch",
            "running batch per replica staying at max-num-seqs (vllm:num_requests_running)",
            "preemptions (vllm:num_preemptions_total): the KV pool must hold the whole batch",
            "prefix-cache hit rate (per replica)",
            work,
            "cost per million tokens, from GPU-hours and tokens processed",
        )
    return (
        "prefix-cache hit rate (per pool and per replica)",
        "average running batch per replica (vllm:num_requests_running)",
        _measure_gap(brief),
        "p95 queue wait before prefill (vllm:request_queue_time_seconds)",
        f"p95 TTFT for prompts up to {num(brief.slo.ttft_input_cap_tokens, 'tokens')}",
        "cost per million output tokens, from GPU-hours and tokens served",
    )


def _measure_gap(brief: Brief) -> str:
    """The gap figure to measure against the ITL target: the one slo.itl_metric judges."""
    if brief.slo.itl_metric is ItlMetric.tpot:
        return f"p95 TPOT (each reply's mean gap) against {num(brief.slo.itl_p95_ms, 'ms')}, with the per-token ITL beside it"
    return f"p95 ITL against {num(brief.slo.itl_p95_ms, 'ms')}, split by steps with and without a prefill chunk"


def _model_dependency(model: ModelSpec) -> tuple[Dependency, ...]:
    """A custom model given no Hugging Face repo id: the command names it by its display name, which vLLM cannot load."""
    if model.hf_repo:
        return ()
    return (
        Dependency(
            what=f"the model the engine loads: the command names {model.name!r}, the brief's display name",
            breaks_if="it is not a Hugging Face repo id or a local model directory (vLLM cannot load a display name): set model.hf_repo",
        ),
    )


_WEIGHT_FALLBACKS = {  # the other weight formats to keep ready, in order of preference (a native one first)
    Precision.fp8: (Precision.int8, Precision.int4),
    Precision.int8: (Precision.fp8, Precision.int4),
    Precision.int4: (Precision.fp8, Precision.int8),
    Precision.fp4: (Precision.fp8, Precision.int8),
}


def _weight_fallback(weights: Precision, gpu: GpuSpec) -> str:
    """A weight quantization other than the one that runs, as `gpu` would run it: the first native one, else the first."""
    options = _WEIGHT_FALLBACKS[weights]
    chosen = next((p for p in options if gpu.runs_natively(p.value) and p is not Precision.int4), options[0])
    return weight_scheme(chosen, gpu).scheme


def _quantization_dependency(brief: Brief, gpu: GpuSpec, revert_utilization: tuple[float, float] | None) -> Dependency:
    """What rests on the quantized parts (weights, KV cache or both): what reverts to BF16 if quality forces it, what
    that costs, and a second weight method to keep ready (one the design does not already run)."""
    dep = brief.deployment
    parts = [f"{dep.weights.value.upper()} weights"] if dep.weights is not Precision.bf16 else []
    parts += [f"{dep.kv_cache.value.upper()} KV"] if dep.kv_cache is not KvPrecision.bf16 else []
    reverted = " and ".join(
        (["the weights"] if dep.weights is not Precision.bf16 else []) + (["the KV cache"] if dep.kv_cache is not KvPrecision.bf16 else [])
    )
    revert = (
        f"reverting puts utilization at {pct(revert_utilization[0])} ({pct(revert_utilization[1])} without prefix cache)"
        if revert_utilization is not None
        else "reverting raises the bytes each decode step reads"
    )
    fallback = (
        f"; keep a second weight quantization method ready as the fallback (e.g. {_weight_fallback(dep.weights, gpu)})"
        if dep.weights is not Precision.bf16
        else ""
    )
    return Dependency(
        what=f"{' and '.join(parts)} keep{'' if dep.weights is not Precision.bf16 else 's'} acceptable quality (validate before committing)",
        breaks_if=f"a quality regression forces {reverted} back to BF16: {revert}{fallback}",
    )


def _dependencies(
    brief: Brief, gpu: GpuSpec, revert_utilization: tuple[float, float] | None, hit_rate_floor: HitRateFloor | None
) -> tuple[Dependency, ...]:
    dep, w = brief.deployment, brief.workload
    deps: list[Dependency] = []
    if dep.weights is not Precision.bf16 or dep.kv_cache is not KvPrecision.bf16:
        deps.append(_quantization_dependency(brief, gpu, revert_utilization))
    if dep.prefix_caching and w.prefix_hit_rate > 0:
        judge = "SLO" if brief.objective.kind is ObjectiveKind.latency else "deadline"
        target = f"its {judge}"
        if hit_rate_floor is None:
            floor = f"nothing the {judge} judges: the design meets {target} even at a 0% hit rate; a lower rate only costs GPU time"
        elif hit_rate_floor.misses_already:
            floor = f"the design misses {target} already at {pct(w.prefix_hit_rate)}; a lower hit rate only adds prefill"
        else:  # both printed values checked by re-planning (planner.failures.hit_rate_floor)
            tiers = " (planned with the KV tiers off, which would otherwise derive the rate)" if brief.kv_tiers.enabled else ""
            meets, misses = pct(hit_rate_floor.meets_down_to), pct(hit_rate_floor.misses_at)
            floor = f"it falls below {meets}: the design meets {target} at {meets} and misses it at {misses}{tiers}"
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
