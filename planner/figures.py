"""The figure registry: one name, one unit and one format for every figure the tool shows.

Each figure is found by its path in `python -m planner plan BRIEF --json` ("slo.ttft_p95_ms"; a list entry is
"failures.*.ttft_p95_ms"). Its entry gives the label a person reads, the unit, the number format, the path of the
arithmetic the plan gives for it, which direction is better, and the target it is judged against. The app's pages,
the design document (report/), the CLI's text output, the comparison of two designs and the interview practice all
read labels and formats from here, so "p95 TTFT" is called and printed the same way everywhere.

A figure without a steady state (an infinite queue) reads as words with its cause ("unbounded: every batch slot is
taken"), never as a raw infinity. A figure can carry a band (the low and high of a stated coverage) when the plan
gives one (planner.uncertainty): `format_value(..., band=...)` prints its range after the value.
"""

from __future__ import annotations

import math
import re
from enum import Enum, StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict

from planner.fmt import UNBOUNDED, num, pct, unbounded, usd
from planner.uncertainty import Band, outside_note

__all__ = [
    "LIMIT_CAUSES",
    "REGISTRY",
    "Band",
    "Better",
    "FigureSpec",
    "Format",
    "arithmetic",
    "cause_of",
    "deadline_unit",
    "field_label",
    "format_unit",
    "format_value",
    "label",
    "of_target",
    "resolve",
    "show",
    "spec",
]


class Format(StrEnum):
    """How a figure's value is written."""

    number = "number"  # planner.fmt.num with the unit: 55.6 req/s, 313 billion
    percent = "percent"  # a fraction 0-1 as 27.7%
    money = "money"  # planner.fmt.usd: $4.48, $160, $1,401,600
    integer = "integer"  # a whole number: 64
    multiple = "multiple"  # x3.61
    text = "text"  # an enum or a name, as written
    yes_no = "yes_no"  # a boolean as the entry's two words
    duration = "duration"  # a time in seconds, written in the unit the design's deadline is stated in: 8.28 h, 244 s


class Better(StrEnum):
    """Which way a change of the figure is an improvement (the comparison colours it)."""

    smaller = "smaller"
    larger = "larger"
    neutral = "neutral"  # neither (a size, a count, a share whose right value depends on the goal)


class FigureSpec(BaseModel):
    """One figure as the tool shows it.

    path: where it lives in the plan's JSON; label: its one name on screen and on paper; unit: printed after the
    number (empty for none); format: how the number is written; arithmetic: the plan path of its worked arithmetic,
    if the plan gives one; better: the direction of an improvement; target: the plan path of the figure it is judged
    against; words: the two words a yes/no figure reads as (true, false); help: one line a tooltip shows.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str
    label: str
    unit: str = ""
    format: Format = Format.number
    arithmetic: str | None = None
    better: Better = Better.neutral
    target: str | None = None
    words: tuple[str, str] = ("yes", "no")
    help: str = ""


def _f(path: str, label: str, unit: str = "", fmt: Format = Format.number, **extra: Any) -> FigureSpec:
    return FigureSpec(path=path, label=label, unit=unit, format=fmt, **extra)


def _a(path: str) -> str:
    """The arithmetic path of a figure whose section keeps it under `arithmetic` by the same key."""
    section, key = path.rsplit(".", 1)
    return f"{section}.arithmetic.{key}"


_P, _M, _C, _T, _Y, _X = Format.percent, Format.money, Format.integer, Format.text, Format.yes_no, Format.multiple
_D = Format.duration
_DEADLINE = "objective.deadline_s"  # what an offline job's or a rollout batch's time is judged against
_LOWER, _HIGHER = Better.smaller, Better.larger

_ENTRIES: tuple[FigureSpec, ...] = (
    # the brief's own figures that pages and the document quote
    _f("brief.hardware.nodes", "GPU nodes", fmt=_C),
    _f("brief.hardware.gpus_per_node", "GPUs per node", fmt=_C),
    _f("brief.deployment.tp", "Tensor parallel (TP)", fmt=_C),
    _f("brief.workload.users", "Users at peak", fmt=_C),
    _f("brief.workload.duty_cycle", "Duty cycle", fmt=_P),
    _f("brief.workload.prefix_hit_rate", "Prefix hit rate", fmt=_P),
    _f("brief.slo.availability", "Availability target", fmt=_P),
    _f("brief.cost.usd_per_gpu_hour", "Price per GPU-hour", fmt=_M),
    _f("brief.hardware.gpu", "GPU", fmt=_T),
    _f("brief.model.name", "Model", fmt=_T),
    _f("brief.deployment.weights", "Quantization (weights)", fmt=_T),
    _f("brief.deployment.kv_cache", "KV cache precision", fmt=_T),
    _f("brief.deployment.max_num_seqs", "max-num-seqs", fmt=_C),
    _f("brief.deployment.max_num_batched_tokens", "max-num-batched-tokens", "tokens", fmt=_C),
    _f("brief.deployment.max_model_len", "max-model-len", "tokens", fmt=_C),
    _f("brief.deployment.spare_nodes", "Spare nodes", fmt=_C),
    _f("brief.deployment.long_context_nodes", "Long-context nodes", fmt=_C),
    _f("brief.deployment.reserve_gb_per_gpu", "Memory reserve per GPU", "GB"),
    _f("brief.workload.request_rate", "Request rate (given)", "req/s"),
    _f("brief.workload.kv_context_tokens", "KV context per sequence", "tokens"),
    _f("brief.slo.ttft_p95_ms", "TTFT target (p95)", "ms"),
    _f("brief.slo.itl_p95_ms", "ITL target (p95)", "ms"),
    _f("brief.slo.headroom", "Headroom kept above the peak", fmt=_P),
    _f("brief.slo.attainment_target", "SLO percentile", fmt=_P),
    _f("brief.disaggregation.prefill_nodes", "Prefill-pool nodes", fmt=_C),
    _f("brief.objective.deadline_hours", "Job deadline", "h"),
    _f("brief.objective.batch_deadline_s", "Rollout batch deadline", "s"),
    _f("brief.lora.adapters", "LoRA adapters", fmt=_C),
    # step 1: demand
    _f("demand.request_rate_per_s", "Request rate", "req/s", arithmetic=_a("demand.request_rate_per_s")),
    _f("demand.generating_sequences", "Generating at once (sizing)", "sequences", arithmetic=_a("demand.generating_sequences")),
    _f("demand.input_tokens_per_s", "Input tokens", "tok/s", arithmetic=_a("demand.input_tokens_per_s")),
    _f("demand.output_tokens_per_s", "Output tokens", "tok/s", arithmetic=_a("demand.output_tokens_per_s")),
    _f(
        "demand.prefill_tokens_per_s_after_cache",
        "Prefill after prefix hits",
        "tok/s",
        arithmetic=_a("demand.prefill_tokens_per_s_after_cache"),
    ),
    # step 2: memory
    _f("memory.weights_gb_per_gpu", "Weights per GPU", "GB", arithmetic=_a("memory.weights_gb_per_gpu")),
    _f("memory.kv_gb_per_gpu", "KV cache per GPU", "GB", arithmetic=_a("memory.kv_gb_per_gpu"), better=_HIGHER),
    _f("memory.kv_bytes_per_token_per_gpu", "KV per token per GPU", "B", arithmetic=_a("memory.kv_bytes_per_token_per_gpu")),
    _f(
        "memory.max_sequences_per_replica",
        "Sequences per replica",
        "sequences",
        arithmetic=_a("memory.max_sequences_per_replica"),
        better=_HIGHER,
    ),
    _f("memory.max_sequences_fleet", "Sequences, whole fleet", "sequences", arithmetic="memory.arithmetic.max_sequences_per_replica"),
    # step 2: the decode step, prefill, utilization
    _f("capacity.batch_per_replica", "Sizing batch per replica", "sequences", arithmetic=_a("capacity.batch_per_replica")),
    _f("capacity.decode_step_bytes_gb_per_gpu", "Step bytes per GPU", "GB", arithmetic=_a("capacity.decode_step_bytes_gb_per_gpu")),
    _f(
        "capacity.decode_step_ideal_ms",
        "Decode step at the sizing batch (ideal)",
        "ms",
        arithmetic=_a("capacity.decode_step_ideal_ms"),
        better=_LOWER,
    ),
    _f("capacity.decode_step_ms", "Decode step at the sizing batch (real)", "ms", arithmetic=_a("capacity.decode_step_ms"), better=_LOWER),
    _f("capacity.decode_tokens_per_s", "Decode capacity", "tok/s", arithmetic=_a("capacity.decode_tokens_per_s"), better=_HIGHER),
    _f("capacity.prefill_tokens_per_s", "Prefill capacity", "tok/s", arithmetic=_a("capacity.prefill_tokens_per_s"), better=_HIGHER),
    _f("capacity.prefill_fraction", "Prefill share", fmt=_P, arithmetic=_a("capacity.prefill_fraction")),
    _f("capacity.decode_fraction", "Decode share", fmt=_P, arithmetic=_a("capacity.decode_fraction")),
    _f(
        "capacity.utilization",
        "Utilization at peak",
        fmt=_P,
        arithmetic=_a("capacity.utilization"),
        help="Share of the fleet's GPU time the peak load takes, with the brief's prefix hit rate.",
    ),
    _f(
        "capacity.utilization_no_prefix_cache",
        "Utilization without prefix caching",
        fmt=_P,
        arithmetic=_a("capacity.utilization_no_prefix_cache"),
    ),
    _f("capacity.binding_constraint", "Binding resource", fmt=_T, arithmetic=_a("capacity.binding_constraint")),
    _f(
        "capacity.sizing_load_multiple",
        "Sizing arithmetic: load to 100%",
        fmt=_X,
        better=_HIGHER,
        help="The worked design's sizing figure: 1 / its utilization (linear; conservative only where it comes before the SLO"
        " capacity). Not the headroom: that is the first"
        " limit of the verdict the traffic reaches (headroom.multiple).",
    ),
    _f(
        "headroom.multiple",
        "Headroom",
        fmt=_X,
        better=_HIGHER,
        arithmetic="headroom.text",
        help="How many times the peak traffic the design carries before a limit of its verdict is reached: the general pool's"
        " capacity under the SLO, the long-context pool's GPU time, or the sizing arithmetic, whichever comes first.",
    ),
    _f(
        "capacity.kv_fraction",
        "KV share at the sizing batch",
        fmt=_P,
        arithmetic=_a("capacity.kv_fraction"),
        help="The sizing arithmetic's KV: the sequences generating per replica (users x duty cycle, or Little's law at the worked"
        " design's pace) over the sequences a replica's KV cache holds. Not the KV in use at the operating point"
        " (operating_point.kv_in_use_gb, the Capacity page), which counts every sequence in flight at its running context.",
    ),
    _f("capacity.replicas", "Replicas", fmt=_C),
    # step 3: the operating point
    _f("operating_point.rate_per_replica_per_s", "Rate per replica", "req/s", arithmetic=_a("operating_point.rate_per_replica_per_s")),
    _f("operating_point.in_flight", "In flight", "sequences", arithmetic=_a("operating_point.in_flight")),
    _f("operating_point.tpot_ms", "TPOT at the operating point", "ms", arithmetic=_a("operating_point.tpot_ms"), better=_LOWER),
    _f("operating_point.kv_in_use_gb", "KV in use", "GB", arithmetic=_a("operating_point.kv_in_use_gb")),
    _f(
        "operating_point.decode_step_ms",
        "Decode step at the running batch",
        "ms",
        arithmetic=_a("operating_point.tpot_ms"),
        better=_LOWER,
        help="One decode step of a general-pool replica at the batch it runs at the peak (the operating point), as the SLO budget uses it.",
    ),
    _f(
        "operating_point.capacity_rate_per_s",
        "Capacity under the SLO",
        "req/s",
        arithmetic=_a("operating_point.capacity_rate_per_s"),
        better=_HIGHER,
        help="The highest rate one general-pool replica carries while meeting both latency targets.",
    ),
    _f(
        "operating_point.load_vs_capacity",
        "Load / capacity under the SLO",
        fmt=_P,
        better=_LOWER,
        help="A general-pool replica's load against the rate at which it stops meeting the SLO.",
    ),
    _f("operating_point.general_replicas", "General-pool replicas", fmt=_C, arithmetic=_a("operating_point.rate_per_replica_per_s")),
    _f("pools.general_replicas", "General-pool replicas", fmt=_C, arithmetic=_a("pools.general_replicas")),
    _f("disaggregation.prefill_replicas", "Prefill-pool replicas", fmt=_C, arithmetic="disaggregation.arithmetic.split"),
    _f("disaggregation.decode_replicas", "Decode-pool replicas", fmt=_C, arithmetic="disaggregation.arithmetic.split"),
    _f(
        "disaggregation.prefill_busy",
        "Prefill pool busy",
        fmt=_P,
        arithmetic="disaggregation.arithmetic.prefill",
        better=_LOWER,
        help="Share of time a prefill-pool replica is running prompts at the peak (at 100% its queue grows without bound).",
    ),
    _f(
        "disaggregation.binding_pool",
        "Binding pool",
        fmt=_T,
        arithmetic="disaggregation.arithmetic.splits",
        help="The pool that misses its target first as the traffic grows: prefill (the p95 TTFT) or decode (the token gaps).",
    ),
    # step 5: the SLO budget
    _f("slo.ttft_p50_ms", "p50 TTFT", "ms", better=_LOWER),
    _f("slo.ttft_p95_ms", "p95 TTFT", "ms", arithmetic=_a("slo.ttft_p95_ms"), better=_LOWER, target="slo.ttft_target_ms"),
    _f("slo.ttft_mean_ms", "Mean TTFT", "ms", arithmetic=_a("slo.ttft_mean_ms"), better=_LOWER),
    _f("slo.itl_p50_ms", "p50 ITL", "ms", arithmetic=_a("slo.itl_p50_ms"), better=_LOWER),
    _f("slo.itl_p95_ms", "p95 ITL", "ms", arithmetic=_a("slo.itl_p95_ms"), better=_LOWER, target="slo.itl_target_ms"),
    _f("slo.tpot_p50_ms", "p50 TPOT", "ms", arithmetic=_a("slo.tpot_p50_ms"), better=_LOWER),
    _f("slo.tpot_p95_ms", "p95 TPOT", "ms", arithmetic=_a("slo.tpot_p95_ms"), better=_LOWER, target="slo.itl_target_ms"),
    _f("slo.ttft_target_ms", "TTFT target (p95)", "ms"),
    _f("slo.itl_target_ms", "ITL target (p95)", "ms"),
    _f("slo.ttft_ok", "TTFT target", fmt=_Y, words=("met", "missed")),
    _f("slo.itl_ok", "ITL target", fmt=_Y, words=("met", "missed")),
    # step 4: architecture
    _f("architecture.gateway_nodes", "Gateway nodes (CPU)", fmt=_C),
    _f("architecture.router_nodes", "Router nodes (CPU)", fmt=_C),
    _f("architecture.pools.*.nodes", "Nodes", fmt=_C),
    _f("architecture.pools.*.replicas", "Replicas", fmt=_C),
    _f("architecture.pools.*.utilization", "Pool busy at peak", fmt=_P, better=_LOWER),
    # step 6: failure modes
    _f("failures.*.utilization", "Utilization at peak", fmt=_P, better=_LOWER),
    _f("failures.*.utilization_no_prefix_cache", "Utilization without prefix caching", fmt=_P, better=_LOWER),
    _f("failures.*.utilization_linear_no_prefix_cache", "Without prefix caching, scaled linearly (worked design)", fmt=_P),
    _f("failures.*.ttft_p95_ms", "p95 TTFT", "ms", better=_LOWER, target="slo.ttft_target_ms"),
    _f("failures.*.itl_p95_ms", "p95 ITL", "ms", better=_LOWER, target="slo.itl_target_ms"),
    _f("failures.*.tpot_p95_ms", "p95 TPOT", "ms", better=_LOWER, target="slo.itl_target_ms"),
    _f("failures.*.load_vs_capacity", "Load / capacity under the SLO", fmt=_P, better=_LOWER),
    _f("failures.*.long_context_utilization", "Long-context pool busy", fmt=_P, better=_LOWER),
    _f("failures.*.ok", "SLO", fmt=_Y, words=("met", "missed")),
    _f(
        "failures.*.objective_time_s",
        "Time to finish",
        "s",
        fmt=_D,
        better=_LOWER,
        target=_DEADLINE,
        help="The re-planned design's time to finish its work (a job's tokens, a rollout batch's longest output), against the deadline.",
    ),
    _f(
        "failures.*.objective_share",
        "Share of the deadline",
        fmt=_P,
        better=_LOWER,
        help="Time to finish / the deadline: over 100% misses it.",
    ),
    _f("failure_summary.binding_scenario", "Binding scenario", fmt=_T),  # pages show the scenario's title
    _f("failure_summary.n_plus_one_ok", "N+1 (one node lost)", fmt=_Y, words=("holds", "fails")),
    _f("failure_summary.scenarios_within_slo", "Scenarios within the SLO", fmt=_C, better=_HIGHER),
    # step 7: cost
    _f("cost.gpus", "GPUs", fmt=_C),
    _f("cost.usd_per_hour", "Cost per hour", fmt=_M, arithmetic=_a("cost.usd_per_hour"), better=_LOWER),
    _f("cost.usd_per_year", "Cost per year", fmt=_M, arithmetic=_a("cost.usd_per_year"), better=_LOWER),
    _f("cost.output_tokens_per_year", "Output tokens per year", "tokens", arithmetic=_a("cost.output_tokens_per_year")),
    _f("cost.input_tokens_per_year", "Input tokens per year", "tokens", arithmetic=_a("cost.input_tokens_per_year")),
    _f(
        "cost.usd_per_million_output_tokens",
        "Cost per M output tokens",
        fmt=_M,
        arithmetic=_a("cost.usd_per_million_output_tokens"),
        better=_LOWER,
    ),
    _f(
        "cost.usd_per_million_input_tokens",
        "Cost per M input tokens",
        fmt=_M,
        arithmetic=_a("cost.usd_per_million_input_tokens"),
        better=_LOWER,
    ),
    _f("cost.levers.*.usd_per_million_output_tokens", "Cost per M output tokens", fmt=_M, better=_LOWER),
    _f(
        "cost.usd_per_million_output_tokens_at_fix",
        "Cost per M output tokens on the fleet that meets the SLO",
        fmt=_M,
        better=_LOWER,
    ),
    # the verdict
    _f("verdict.feasible", "Feasible", fmt=_Y),
    _f("verdict.meets_slo", "Meets the SLO", fmt=_Y, better=_HIGHER),
    _f("verdict.availability_ok", "Availability (N+1)", fmt=_Y, words=("N+1 holds", "no N+1"), better=_HIGHER),
    _f("verdict.headroom_ok", "Stated headroom kept", fmt=_Y, words=("kept", "short"), better=_HIGHER),
    # the design search (python -m planner search; the Search page)
    _f("search.evaluated", "Candidates", fmt=_C),
    _f("search.workers", "Workers", fmt=_C),
    # variations: their options
    _f("variation.options.*.utilization", "Utilization at peak", fmt=_P, better=_LOWER),
    _f("variation.options.*.ttft_p95_ms", "p95 TTFT", "ms", better=_LOWER),
    _f("variation.options.*.itl_p95_ms", "p95 ITL", "ms", better=_LOWER),
    _f("variation.options.*.ok", "SLO", fmt=_Y, words=("met", "missed")),
    _f("variation.options.*.nodes", "Nodes", fmt=_C, better=_LOWER),
    _f("variation.options.*.usd_per_million_output_tokens", "Cost per M output tokens", fmt=_M, better=_LOWER),
    # the mechanisms (issue 14c): KV tiers, multimodal, objectives other than latency, multi-LoRA
    _f("kv_tiers.hit_rate", "Prefix hit rate (derived from the tiers)", fmt=_P, arithmetic="kv_tiers.arithmetic.hit_rate", better=_HIGHER),
    _f("kv_tiers.hit_rate_hbm_only", "Prefix hit rate with HBM alone", fmt=_P, arithmetic="kv_tiers.arithmetic.resident"),
    _f("kv_tiers.sessions_per_replica", "Live sessions per replica", "sessions", arithmetic="kv_tiers.arithmetic.sessions"),
    _f("kv_tiers.demand_tokens", "Context the sessions hold per replica", "tokens", arithmetic="kv_tiers.arithmetic.demand"),
    _f("kv_tiers.cpu_tokens", "CPU tier per replica", "tokens", arithmetic="kv_tiers.arithmetic.capacity"),
    _f("kv_tiers.nvme_tokens", "NVMe tier per replica", "tokens", arithmetic="kv_tiers.arithmetic.capacity"),
    _f("kv_tiers.cpu_reload_ms", "Reload of a capped prompt from CPU", "ms", arithmetic="kv_tiers.arithmetic.reload", better=_LOWER),
    _f("kv_tiers.ttft_reload_ms", "KV reload in the p95 TTFT", "ms", arithmetic="kv_tiers.arithmetic.ttft", better=_LOWER),
    _f("multimodal.image_tokens_per_request", "Image tokens per request", "tokens", arithmetic="multimodal.arithmetic.tokens"),
    _f("multimodal.encoder_ms_per_image", "Encoder time per image", "ms", arithmetic="multimodal.arithmetic.encoder", better=_LOWER),
    _f(
        "multimodal.encoder_busy_share",
        "Encoder share of the GPUs at peak",
        fmt=_P,
        arithmetic="multimodal.arithmetic.per_request",
        better=_LOWER,
    ),
    _f("multimodal.ttft_encoder_ms", "Encoder in the p95 TTFT", "ms", arithmetic="multimodal.arithmetic.ttft", better=_LOWER),
    _f(
        "multimodal.utilization_with_encoder",
        "Utilization with the encoder",
        fmt=_P,
        arithmetic="multimodal.arithmetic.utilization",
        better=_LOWER,
    ),
    _f("objective.kind", "Objective", fmt=_T),
    _f("objective.batch_per_replica", "Batch per replica", "sequences", arithmetic="objective.arithmetic.batch"),
    _f("objective.tokens_per_s", "Throughput (input + output)", "tok/s", arithmetic="objective.arithmetic.throughput", better=_HIGHER),
    _f("objective.usd_per_m_tokens", "Cost per M tokens (input + output)", fmt=_M, arithmetic="objective.arithmetic.cost", better=_LOWER),
    _f(
        "objective.output_tokens_per_s_per_replica",
        "Output tokens/s a replica at the full batch",
        "tok/s",
        arithmetic="objective.arithmetic.request",
        better=_HIGHER,
    ),
    _f("objective.usd_per_m_output_tokens", "Cost per M output tokens while the work runs", fmt=_M, better=_LOWER),
    _f("objective.decode_step_ms", "Step at the full batch", "ms", arithmetic="objective.arithmetic.request"),
    _f("objective.time_s", "Time to finish", "s", fmt=_D, better=_LOWER, target=_DEADLINE),
    _f("objective.deadline_s", "Deadline", "s", fmt=_D),
    _f("objective.meets", "Deadline", fmt=_Y, words=("met", "missed"), better=_HIGHER),
    _f("objective.nodes_for_deadline", "Nodes the work needs by the deadline", fmt=_C),
    _f("objective.longest_output_tokens", "Longest output (the straggler)", "tokens", arithmetic="objective.arithmetic.longest"),
    _f("objective.straggler_share", "Makespan spent on stragglers", fmt=_P, arithmetic="objective.arithmetic.makespan", better=_LOWER),
    _f(
        "objective.time_one_node_lost_s",
        "Time to finish with one node lost",
        "s",
        fmt=_D,
        target=_DEADLINE,
        arithmetic="objective.arithmetic.one_node_lost",
        better=_LOWER,
    ),
    _f("lora_serving.adapters_per_replica", "Adapters per replica", fmt=_C, arithmetic="lora_serving.arithmetic.routing"),
    _f("lora_serving.gpu_hit_rate", "Adapter found on the GPU", fmt=_P, arithmetic="lora_serving.arithmetic.cache", better=_HIGHER),
    _f("lora_serving.gpu_gb_per_gpu", "Adapter memory per GPU", "GB", arithmetic="lora_serving.arithmetic.memory"),
    _f("lora_serving.ttft_load_ms", "Adapter load in the p95 TTFT", "ms", arithmetic="lora_serving.arithmetic.load", better=_LOWER),
    _f(
        "lora_serving.overhead",
        "Batched-LoRA share of the decode step",
        fmt=_P,
        arithmetic="lora_serving.arithmetic.overhead",
        better=_LOWER,
    ),
    _f(
        "lora_serving.utilization_with_overhead",
        "Utilization with the LoRA overhead",
        fmt=_P,
        arithmetic="lora_serving.arithmetic.overhead",
        better=_LOWER,
    ),
)

REGISTRY: dict[str, FigureSpec] = {entry.path: entry for entry in _ENTRIES}

_INDEX = re.compile(r"(?<=\.)\d+(?=\.|$)")


def spec(path: str) -> FigureSpec:
    """The registry entry of a plan path; list indices match '*' ("failures.3.ttft_p95_ms")."""
    key = _INDEX.sub("*", path)
    try:
        return REGISTRY[key]
    except KeyError:
        raise KeyError(f"no figure registered at {path!r} (planner/figures.py)") from None


def label(path: str) -> str:
    return spec(path).label


def field_label(path: str) -> str:
    """A brief field (a problem's `field`, an override's path) as a person reads it: the registry's name of
    `brief.<path>` where it has one, else its section and its words ("Workload: input tokens mean")."""
    entry = REGISTRY.get(f"brief.{path}")
    if entry is not None:
        return entry.label
    section, _, rest = path.partition(".")
    words = rest.replace("_", " ").replace(".", ", ")
    return f"{section.replace('_', ' ').capitalize()}: {words}" if words else section.replace("_", " ").capitalize()


def resolve(root: Any, path: str) -> Any:
    """Walk a dotted path through attributes, dict keys and tuple indices ("failures.0.utilization")."""
    value = root
    for part in path.split("."):
        if isinstance(value, dict):
            value = value[part]
        elif isinstance(value, (list, tuple)):
            value = value[int(part)]
        else:
            value = getattr(value, part)
    return value


# --- why a figure has no finite value --------------------------------------------------------------------

LIMIT_CAUSES = {  # short enough for the line under a metric tile
    "slots": "batch slots full (max-num-seqs)",
    "kv": "KV cache full",
    "prefill": "prefill queue saturated",
    "batched_tokens": "no room for prompts (max-num-batched-tokens)",
}
_NO_STEADY_STATE = "the queue grows without bound"
_CANNOT_RUN = "the design cannot run"


def cause_of(design: Any, path: str = "") -> str:
    """Why an infinite figure at `path` has no value: the limit that binds its replica (a failure row's own, else the
    design's), in words."""
    if path == "objective.time_one_node_lost_s":
        return "its only node is lost, so the job stops"
    index = re.match(r"failures\.(\d+)\.", path)
    if index:
        mode = design.failures[int(index.group(1))]
        return LIMIT_CAUSES.get(mode.limit or "", _NO_STEADY_STATE if mode.runs else _CANNOT_RUN)
    limit = getattr(getattr(design, "operating_point", None), "limit", None)
    return LIMIT_CAUSES.get(str(limit.value) if isinstance(limit, Enum) else str(limit or ""), _NO_STEADY_STATE)


# --- writing a value ----------------------------------------------------------------------------------------


_SECONDS_IN = {"h": 3600.0, "s": 1.0}


def deadline_unit(design: Any) -> str:
    """The unit a design's deadline is stated in, which its times are written in: hours for an offline job, seconds for
    a rollout batch (and for a design without a deadline). `design`: a Design or its JSON."""
    objective = resolve(design, "objective")
    kind = objective.get("kind") if isinstance(objective, dict) else getattr(objective, "kind", None)
    return "h" if kind == "throughput" else "s"


def _number(value: float, entry: FigureSpec, duration_unit: str = "s") -> str:
    if entry.format is Format.duration:
        return num(value / _SECONDS_IN[duration_unit], duration_unit)
    if entry.format is Format.percent:
        return pct(value)
    if entry.format is Format.money:
        return usd(value, entry.unit)
    if entry.format is Format.multiple:
        return f"x{num(value)}"
    if entry.format is Format.integer:
        return f"{value:,.0f}" + (f" {entry.unit}" if entry.unit else "")
    return num(value, entry.unit)


def format_value(entry: FigureSpec, value: Any, *, cause: str = "", band: Band | None = None, duration_unit: str = "s") -> str:
    """A value written as its registry entry says; an infinite one as 'unbounded: <cause>'; a band after it. A duration
    is written in `duration_unit` ('h' or 's': deadline_unit of its design)."""
    if value is None:
        return "n/a"
    if entry.format is Format.text:
        return str(value.value if isinstance(value, Enum) else value)
    if entry.format is Format.yes_no:
        return entry.words[0] if value else entry.words[1]
    number = float(value)
    if math.isnan(number):
        return "n/a"
    if math.isinf(number):
        return unbounded(cause) if number > 0 else "n/a"
    text = _number(number, entry, duration_unit)
    if band is not None and math.isfinite(band.low) and math.isfinite(band.high):
        note = outside_note(number, band.low, band.high, entry.unit)
        text += f" ({_number(band.low, entry).removesuffix(' ' + entry.unit)} to {_number(band.high, entry)}{': ' + note if note else ''})"
    return text


def show(design: Any, path: str, *, short: bool = False) -> str:
    """The figure at `path` of a Design (or its JSON), written as the registry says. `short`: an unbounded figure
    reads only 'unbounded' (a metric tile, a table cell), its cause given beside it; a duration reads without its
    share of the deadline (of_target gives it)."""
    value, entry = resolve(design, path), spec(path)
    cause = "" if short else (cause_of(design, path) if isinstance(value, float) and math.isinf(value) else "")
    if entry.format is not Format.duration:
        return format_value(entry, value, cause=cause)
    text = format_value(entry, value, cause=cause, duration_unit=deadline_unit(design))
    share = "" if short else of_target(design, path)
    return f"{text} ({share})" if share else text


def of_target(design: Any, path: str) -> str:
    """A duration's share of the deadline it is judged against, '40.7% of 600 s' ('' for a figure without a target, a
    missing or an unbounded value)."""
    value, entry = resolve(design, path), spec(path)
    if entry.format is not Format.duration or entry.target is None or value is None or not math.isfinite(float(value)):
        return ""
    target = float(resolve(design, entry.target))
    return f"{pct(float(value) / target)} of {format_value(entry, target, duration_unit=deadline_unit(design))}"


def arithmetic(design: Any, path: str) -> str:
    """The plan's worked arithmetic for the figure at `path`, or '' when the plan gives none."""
    where = spec(path).arithmetic
    if where is None:
        return ""
    try:
        return str(resolve(design, where))
    except (AttributeError, KeyError, IndexError):
        return ""


def format_unit(value: float, unit: str) -> str:
    """A figure whose unit the planner states beside it (a variation's findings): 'fraction' as a percentage,
    '$...' as money, the rest with its unit."""
    if unit == "fraction":
        return pct(value)
    if unit.startswith("$"):
        return usd(value, unit.removeprefix("$").strip())
    return num(value, unit) if math.isfinite(value) else UNBOUNDED
