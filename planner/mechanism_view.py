"""The mechanisms' figures as the text outputs list them (the CLI's plan text, the design document): one registry
path list per mechanism, shown only when the design turns the mechanism on."""

from __future__ import annotations

from typing import TYPE_CHECKING

from planner.brief import ObjectiveKind
from planner.figures import label, show

if TYPE_CHECKING:
    from planner.design import Design

__all__ = ["MECHANISM_FIGURES", "mechanism_figures", "mechanism_lines", "mechanism_paths"]

MECHANISM_FIGURES: dict[str, tuple[str, ...]] = {
    "kv_tiers": ("kv_tiers.hit_rate", "kv_tiers.hit_rate_hbm_only", "kv_tiers.cpu_reload_ms", "kv_tiers.ttft_reload_ms"),
    "multimodal": (
        "multimodal.image_tokens_per_request",
        "multimodal.encoder_ms_per_image",
        "multimodal.utilization_with_encoder",
        "multimodal.ttft_encoder_ms",
    ),
    "lora_serving": (
        "lora_serving.adapters_per_replica",
        "lora_serving.gpu_hit_rate",
        "lora_serving.gpu_gb_per_gpu",
        "lora_serving.overhead",
        "lora_serving.utilization_with_overhead",
    ),
    "throughput": ("objective.time_s", "objective.tokens_per_s", "objective.usd_per_m_tokens"),
    "batch_completion": ("objective.time_s", "objective.longest_output_tokens", "objective.straggler_share", "objective.usd_per_m_tokens"),
}


def mechanism_paths(design: Design) -> list[str]:
    """The plan paths of every mechanism figure the design has, in a fixed order: the objective first."""
    keys = [key for key in ("kv_tiers", "multimodal", "lora_serving") if getattr(design, key) is not None]
    if design.objective is not None:
        keys.insert(0, "throughput" if design.objective.kind is ObjectiveKind.throughput else "batch_completion")
    return [path for key in keys for path in MECHANISM_FIGURES[key]]


def mechanism_figures(design: Design) -> list[tuple[str, str]]:
    """(label, value) of every mechanism figure the design has."""
    return [(label(path), show(design, path)) for path in mechanism_paths(design)]


def mechanism_lines(design: Design, width: int) -> list[str]:
    lines = [f"  {name:<{width}}{value}" for name, value in mechanism_figures(design)]
    if design.conclusion is not None:
        lines.append(f"  {'Conclusion':<{width}}{design.conclusion}")
    return lines
