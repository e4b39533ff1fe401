"""The problem-library mechanisms on the pages: the conclusion, KV tiers, images, multi-LoRA and an objective other
than latency, each as figures with their arithmetic. Nothing here computes: every value comes from the Design."""

from __future__ import annotations

import math

import streamlit as st

from planner import Design
from planner.brief import ObjectiveKind
from planner.figures import label, show
from planner.objective import duration_text
from ui.show import fig, figure_row, md

__all__ = ["conclusion_box", "mechanism_sections", "objective_section", "objective_tiles"]

_TIERS = (
    "kv_tiers.hit_rate",
    "kv_tiers.hit_rate_hbm_only",
    "kv_tiers.sessions_per_replica",
    "kv_tiers.demand_tokens",
    "kv_tiers.cpu_tokens",
    "kv_tiers.nvme_tokens",
    "kv_tiers.cpu_reload_ms",
    "kv_tiers.ttft_reload_ms",
)
_IMAGES = (
    "multimodal.image_tokens_per_request",
    "multimodal.encoder_ms_per_image",
    "multimodal.encoder_busy_share",
    "multimodal.utilization_with_encoder",
    "multimodal.ttft_encoder_ms",
)
_LORA = (
    "lora_serving.adapters_per_replica",
    "lora_serving.gpu_hit_rate",
    "lora_serving.gpu_gb_per_gpu",
    "lora_serving.ttft_load_ms",
    "lora_serving.overhead",
    "lora_serving.utilization_with_overhead",
)
_THROUGHPUT = (
    "objective.time_s",
    "objective.time_one_node_lost_s",
    "objective.tokens_per_s",
    "objective.usd_per_m_tokens",
    "objective.batch_per_replica",
    "objective.nodes_for_deadline",
)
_BATCH = (
    "objective.time_s",
    "objective.time_one_node_lost_s",
    "objective.longest_output_tokens",
    "objective.straggler_share",
    "objective.tokens_per_s",
    "objective.batch_per_replica",
)


def conclusion_box(design: Design) -> None:
    """The design's conclusion (what binds, which mechanism it turns on), when the design has one."""
    if design.conclusion is not None:
        with st.container(border=True, key="conclusion"):
            st.markdown(f"**Conclusion.** {md(design.conclusion)}")


def objective_section(design: Design) -> None:
    """An offline job or a rollout batch: judged on its time against the deadline, its throughput and cost."""
    goal = design.objective
    if goal is None:
        return
    st.header("Objective: " + ("throughput by a deadline" if goal.kind is ObjectiveKind.throughput else "the batch's makespan"))
    st.markdown(md(goal.headline))
    figure_row([fig(design, path) for path in (_THROUGHPUT if goal.kind is ObjectiveKind.throughput else _BATCH)])
    st.caption(
        "No TTFT or ITL target: the job meets its objective when it finishes by the deadline; the latency figures below are for reference."
    )


def mechanism_sections(design: Design) -> None:
    """One section per mechanism the brief turns on (none for a chat design)."""
    if design.kv_tiers is not None:
        st.header("KV tiers: the prefix cache in HBM, host memory and NVMe")
        st.markdown(
            "The planner derives the prefix hit rate from the cache's capacity (it replaces the brief's prefix hit rate):"
            " a returning session hits when its context survived the think and tool time in some tier; a hit below HBM is reloaded"
            " over PCIe, a term in the TTFT."
        )
        figure_row([fig(design, path) for path in _TIERS])
    if design.multimodal is not None:
        st.header("Images: the tokens they add and the vision encoder")
        figure_row([fig(design, path) for path in _IMAGES])
    if design.lora_serving is not None:
        st.header("Multi-LoRA: adapter cache, routing by tenant, overhead")
        figure_row([fig(design, path) for path in _LORA])


def objective_tiles(design: Design) -> list[tuple[str, str, str, bool]]:
    """(label, value, line under it, good) of the verdict bar's four tiles for an objective other than latency."""
    goal = design.objective
    assert goal is not None
    # in the unit the deadline is stated in; an unbounded time in the registry's words, with its cause
    time_shown = duration_text(goal.time_s, goal.kind) if math.isfinite(goal.time_s) else show(design, "objective.time_s")
    deadline = duration_text(goal.deadline_s, goal.kind)
    tiles = [
        (
            label("objective.time_s"),
            time_shown,
            f"deadline {deadline}: {'met' if goal.meets else 'missed'}",
            goal.meets,
        ),
        (
            label("objective.tokens_per_s"),
            show(design, "objective.tokens_per_s"),
            f"batch {show(design, 'objective.batch_per_replica')} per replica",
            True,
        ),
        (
            label("objective.usd_per_m_tokens"),
            show(design, "objective.usd_per_m_tokens"),
            f"{show(design, 'cost.usd_per_hour')} an hour",
            True,
        ),
    ]
    if goal.kind is ObjectiveKind.batch_completion:
        tiles.append(
            (
                label("objective.straggler_share"),
                show(design, "objective.straggler_share"),
                f"longest output {show(design, 'objective.longest_output_tokens')}",
                goal.straggler_share < 0.5,
            )
        )
    else:
        tiles.append(
            (
                label("objective.nodes_for_deadline"),
                show(design, "objective.nodes_for_deadline"),
                f"of {show(design, 'brief.hardware.nodes')} in the brief",
                goal.meets,
            )
        )
    return tiles
