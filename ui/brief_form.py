"""The whole brief as a grouped form: one widget per field, a label with its unit, help text from the field's description.

Each widget is a view on a brief path (key `f.<path>`); a change is validated by the planner and either
kept as an override or reported beside the field, the rest of the brief unchanged. The fields the sidebar
controls (ui.sidebar.SIDEBAR_PATHS) are not repeated here. A section draws its fields only while it is open, so
the sections a user has closed cost a control change nothing (some fifty widgets in all).
"""

from __future__ import annotations

from enum import StrEnum
from types import NoneType, UnionType
from typing import Any, get_args

import streamlit as st
from pydantic import BaseModel

from planner import MODELS, Brief
from planner.brief import (
    Cost,
    CustomModel,
    Deployment,
    Disaggregation,
    Efficiency,
    Hardware,
    KvTiers,
    Latency,
    Lora,
    ModelChoice,
    Multimodal,
    Objective,
    Slo,
    Speculative,
    Workload,
)
from ui import state
from ui.brief_files import hf_config_upload
from ui.show import md
from ui.sidebar import SIDEBAR_PATHS, control

__all__ = ["FIELD_LABELS", "SECTIONS", "SECTION_KEY_PREFIX", "brief_form"]

SECTIONS: tuple[tuple[str, str, type[BaseModel]], ...] = (
    ("hardware", "Hardware", Hardware),
    ("deployment", "Deployment", Deployment),
    ("workload", "Workload", Workload),
    ("slo", "SLO", Slo),
    ("efficiency", "Efficiency", Efficiency),
    ("latency", "Latency budget", Latency),
    ("cost", "Cost", Cost),
    ("disaggregation", "Prefill/decode disaggregation", Disaggregation),
    ("speculative", "Speculative decoding", Speculative),
    ("lora", "Multi-LoRA adapters", Lora),
    ("kv_tiers", "KV tiers: host memory and NVMe below HBM", KvTiers),
    ("multimodal", "Images per request", Multimodal),
    ("objective", "Objective: latency, throughput or batch completion", Objective),
)
_COLUMNS = 3
_OPEN_AT_FIRST = ("model", "hardware", "deployment", "workload")
SECTION_KEY_PREFIX = "form.section."  # an expander's open state; not a brief view, so not re-seeded (ui.state)

# What each field is called on screen, with its unit: the engine's flag name where the field is one.
FIELD_LABELS: dict[str, str] = {
    "hardware.gpu": "GPU",
    "hardware.gpus_per_node": "GPUs per node",
    "hardware.nodes": "Fleet size (nodes)",
    "deployment.tp": "Tensor parallel (TP)",
    "deployment.weights": "Quantization (weights)",
    "deployment.kv_cache": "KV cache precision",
    "deployment.reserve_gb_per_gpu": "Reserve per GPU (GB)",
    "deployment.gpu_memory_utilization": "GPU memory utilization (0-1)",
    "deployment.max_model_len": "Max sequence length (max-model-len, tokens)",
    "deployment.max_num_seqs": "Max sequences in a batch (max-num-seqs)",
    "deployment.max_num_batched_tokens": "Max tokens per step (max-num-batched-tokens)",
    "deployment.prefix_caching": "Prefix caching",
    "deployment.chunked_prefill": "Chunked prefill",
    "deployment.long_context_nodes": "Long-context nodes",
    "deployment.spare_nodes": "Spare nodes (N+1, canary)",
    "deployment.pp": "Pipeline stages (PP, a node each)",
    "deployment.ep": "Expert parallel (EP, GPUs)",
    "deployment.dp_attention": "DP attention",
    "workload.users": "Users at peak",
    "workload.duty_cycle": "Duty cycle (0-1)",
    "workload.generation_s_per_turn": "Reply streaming time (s)",
    "workload.request_rate": "Request rate (req/s)",
    "workload.input_tokens_mean": "Input length, mean (tokens)",
    "workload.input_tokens_p95": "Input length, p95 (tokens)",
    "workload.output_tokens_mean": "Output length, mean (tokens)",
    "workload.output_tokens_p95": "Output length, p95 (tokens)",
    "workload.prefix_hit_rate": "Prefix hit rate (0-1)",
    "workload.kv_context_tokens": "KV context per sequence (tokens)",
    "workload.long_context_threshold_tokens": "Long-context threshold (tokens)",
    "workload.long_context_share": "Long-context share of requests (0-1)",
    "slo.ttft_p95_ms": "p95 TTFT target (ms)",
    "slo.ttft_input_cap_tokens": "TTFT target covers prompts up to (tokens)",
    "slo.itl_p95_ms": "p95 ITL target (ms)",
    "slo.itl_metric": "ITL target judges",
    "slo.availability": "Availability target (0-1)",
    "slo.attainment_target": "Max-rate percentile the targets are read at (0-1)",
    "slo.headroom": "Headroom above peak (0-1)",
    "efficiency.compute_fraction": "Prefill compute efficiency, MFU (0-1)",
    "efficiency.compute_peak": "Compute peak precision",
    "efficiency.bandwidth_fraction": "Weight-read bandwidth efficiency (0-1)",
    "efficiency.tp_comm_overhead": "TP all-reduce overhead (fraction)",
    "efficiency.real_kernel_factor": "Real kernel time (x ideal)",
    "efficiency.step_overhead_ms": "Step overhead (ms)",
    "efficiency.attention_bandwidth_fraction": "KV-read bandwidth efficiency (0-1)",
    "efficiency.allreduce_latency_us": "All-reduce latency (µs)",
    "efficiency.interconnect_fraction": "NVLink bandwidth efficiency (0-1)",
    "efficiency.allreduce_bytes_moved": "All-reduce moves its bytes over NVLink",
    "efficiency.step_roofline": "Whole step as one roofline (the 200-QPS seed)",
    "efficiency.per_sequence_us": "Cost per sequence in a step (µs)",
    "latency.network_ms": "Network round trip (ms)",
    "latency.gateway_ms": "Gateway (ms)",
    "latency.tokenization_ms": "Tokenization (ms)",
    "latency.first_sample_ms": "First sample (ms)",
    "latency.first_write_ms": "First streamed write (ms)",
    "latency.scheduler_ms": "Scheduler per step (ms)",
    "cost.usd_per_gpu_hour": "Price per GPU-hour ($)",
    "cost.average_duty": "Average load, fraction of peak (0-1)",
    "model.custom.layers": "Layers",
    "model.custom.hidden_size": "Hidden size",
    "model.custom.attention_heads": "Attention heads",
    "model.custom.kv_heads": "KV heads (GQA groups)",
    "model.custom.head_dim": "Head dimension",
    "model.custom.params": "Parameters (count)",
    "model.custom.active_params": "Active parameters per token (count)",
    "model.custom.experts": "Experts per MoE layer",
    "model.custom.experts_per_token": "Experts per token",
    "model.custom.max_context_tokens": "Max context (tokens)",
    "disaggregation.enabled": "Disaggregate prefill and decode",
    "disaggregation.prefill_nodes": "Prefill nodes",
    "disaggregation.prefill_tp": "Prefill TP",
    "disaggregation.prefill_max_num_batched_tokens": "Prefill tokens per step",
    "disaggregation.kv_link_gbps_per_gpu": "KV link per GPU (Gb/s)",
    "disaggregation.transfer_efficiency": "KV link efficiency (0-1)",
    "disaggregation.transfer_latency_ms": "KV transfer set-up (ms)",
    "speculative.enabled": "Speculative decoding",
    "speculative.method": "Draft method",
    "speculative.draft_model": "Draft model (catalog key)",
    "speculative.num_speculative_tokens": "Draft tokens per step (k)",
    "speculative.acceptance_rate": "Acceptance rate per token (0-1)",
    "speculative.off_above_batch": "Off above batch (sequences)",
    "lora.adapters": "LoRA adapters",
    "lora.rank": "Adapter rank",
    "lora.modules": "Adapted projections",
    "lora.max_loras": "GPU adapter slots a replica (max-loras; 0 = all resident)",
    "lora.max_cpu_loras": "Host-memory adapters a replica (max-cpu-loras)",
    "lora.tenant_routing": "Route by tenant (adapters partitioned over replicas)",
    "lora.adapter_storage_gb_s": "Adapter load from storage (GB/s)",
    "kv_tiers.cpu_gb_per_node": "CPU tier per node (GB; 0 = none)",
    "kv_tiers.nvme_gb_per_node": "NVMe tier per node (GB; 0 = none)",
    "kv_tiers.cpu_gb_s_per_gpu": "Host-to-GPU reload bandwidth per GPU (GB/s)",
    "kv_tiers.nvme_gb_s_per_node": "NVMe read bandwidth per node (GB/s)",
    "kv_tiers.think_time_s": "Think and tool time between turns (s)",
    "kv_tiers.turns_per_session": "Turns per session",
    "kv_tiers.new_tokens_per_turn": "New prompt tokens per turn (tokens)",
    "kv_tiers.shared_prefix_tokens": "Prefix every prompt shares (tokens)",
    "multimodal.images_per_request": "Images per request (mean; 0 = text only)",
    "multimodal.max_images_per_request": "Most images a prompt (limit-mm-per-prompt)",
    "multimodal.tokens_per_image": "Tokens per image",
    "multimodal.encoder_params": "Vision encoder parameters (count)",
    "multimodal.encoder_patches_per_image": "Encoder patches per image",
    "multimodal.encoder_cache_hit_rate": "Encoder cache hit rate (0-1)",
    "multimodal.processor_cache_gb": "Processor cache (mm-processor-cache-gb, GB)",
    "multimodal.prompt_includes_images": "Input lengths already count the image tokens",
    "objective.kind": "Objective",
    "objective.job_tokens": "Offline job size (tokens)",
    "objective.deadline_hours": "Offline job deadline (h)",
    "objective.batch_prompts": "Rollout batch (prompts)",
    "objective.batch_deadline_s": "Rollout batch deadline (s)",
    "objective.output_tokens_max": "Longest rollout output (tokens)",
}


def _base_type(annotation: Any) -> tuple[Any, bool]:
    """(type, optional) for `T` or `T | None`."""
    args = get_args(annotation)
    if isinstance(annotation, UnionType) and NoneType in args:
        return next(a for a in args if a is not NoneType), True
    return annotation, False


def _label(path: str) -> str:
    """The field's label; a field added to the brief without one reads as its name until it gets one."""
    return FIELD_LABELS.get(path) or path.rsplit(".", 1)[-1].replace("_", " ").capitalize()


def _field(model: type[BaseModel], section: str, name: str, brief: Brief) -> None:
    info = model.model_fields[name]
    kind, optional = _base_type(info.annotation)
    path, help_text = f"{section}.{name}", info.description
    label = _label(path)
    kw: dict[str, Any] = {"help": help_text, "key_prefix": "f."}
    if kind is bool:
        control(st.checkbox, label, path, brief, **kw)
    elif isinstance(kind, type) and issubclass(kind, StrEnum):
        control(st.selectbox, label, path, brief, options=[e.value for e in kind], **kw)
    elif kind is int:
        control(st.number_input, label, path, brief, step=1, placeholder="empty" if optional else None, **kw)
    elif kind is float:
        control(st.number_input, label, path, brief, step=None, format="%g", placeholder="empty" if optional else None, **kw)
    else:
        control(st.text_input, label, path, brief, **kw)


def _open_section(title: str, key: str) -> Any | None:
    """The section's expander if it is open, else None: Streamlit reruns when one opens or closes, so a closed
    section's fields need not be drawn."""
    section = st.expander(title, expanded=key in _OPEN_AT_FIRST, key=f"{SECTION_KEY_PREFIX}{key}", on_change="rerun")
    return section if section.open else None


def _section(key: str, title: str, model: type[BaseModel], brief: Brief) -> None:
    section = _open_section(title, key)
    if section is None:
        return
    with section:
        names = [name for name in model.model_fields if f"{key}.{name}" not in SIDEBAR_PATHS]
        columns = st.columns(_COLUMNS)
        for i, name in enumerate(names):
            with columns[i % _COLUMNS]:
                _field(model, key, name, brief)


def _on_assumptions() -> None:
    text = str(st.session_state["f.assumptions"])
    state.set_field("assumptions", [line.strip() for line in text.splitlines() if line.strip()])


def _about(brief: Brief) -> None:
    section = _open_section("Title, description and assumptions", "about")
    if section is None:
        return
    with section:
        control(st.text_input, "Title", "title", brief, key_prefix="f.", help=Brief.model_fields["title"].description)
        control(st.text_area, "Description", "description", brief, key_prefix="f.", help=Brief.model_fields["description"].description)
        if "f.assumptions" not in st.session_state:
            st.session_state["f.assumptions"] = "\n".join(brief.assumptions)
        st.text_area(
            "Assumptions", key="f.assumptions", on_change=_on_assumptions, help=Brief.model_fields["assumptions"].description, height=160
        )
        error = state.field_errors().get("assumptions")
        if error:
            st.error(md(error))


def _custom_from_catalog(key: str) -> dict[str, Any]:
    """The architecture numbers of a catalog model, as a starting point for a custom one."""
    spec = MODELS[key]
    numbers = {name: getattr(spec, name) for name in CustomModel.model_fields}
    if spec.active_params == spec.params:
        numbers["active_params"] = None
    return numbers


def _on_model() -> None:
    chosen = st.session_state["f.model.name"]
    current = state.current_brief().model
    if chosen == "custom" and current.custom is None and current.name in MODELS:
        state.set_fields(
            {
                "model.name": "custom",
                "model.custom": _custom_from_catalog(current.name),
                "model.display_name": f"custom {current.name}",
                "model.hf_repo": current.hf_repo or MODELS[current.name].hf_repo,  # the weights the command loads stay the same
            },
            report_at="model.name",
        )
    else:
        state.set_field("model.name", chosen)


def _model(brief: Brief) -> None:
    section = _open_section("Model", "model")
    if section is None:
        return
    with section:
        options = [*MODELS, "custom"]
        if brief.model.name not in options:
            options.append(brief.model.name)
        if "f.model.name" not in st.session_state:
            st.session_state["f.model.name"] = brief.model.name
        st.selectbox(
            "Model",
            options,
            key="f.model.name",
            on_change=_on_model,
            format_func=lambda k: MODELS[k].name if k in MODELS else k,
            help="Catalog entry of the model, or 'custom' to edit its architecture numbers (starting from the current model's).",
        )
        error = state.field_errors().get("model.name")
        if error:
            st.error(md(error))
        hf_config_upload()
        if brief.model.name == "custom":
            control(
                st.text_input,
                "Display name",
                "model.display_name",
                brief,
                key_prefix="f.",
                help=ModelChoice.model_fields["display_name"].description,
            )
            control(
                st.text_input,
                "Hugging Face repo id",
                "model.hf_repo",
                brief,
                key_prefix="f.",
                help=ModelChoice.model_fields["hf_repo"].description,
            )
            columns = st.columns(_COLUMNS)
            for i, name in enumerate(CustomModel.model_fields):
                with columns[i % _COLUMNS]:
                    _field(CustomModel, "model.custom", name, brief)


def brief_form(brief: Brief) -> None:
    _about(brief)
    _model(brief)
    for key, title, model in SECTIONS:
        _section(key, title, model, brief)
