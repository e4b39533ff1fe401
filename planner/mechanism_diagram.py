"""The mechanisms on the architecture diagram and in its decisions: the KV tiers under the general pool, the vision
encoder and its cache before the prefill, the adapter cache beside the replicas, the job queue of an offline objective."""

from __future__ import annotations

from dataclasses import dataclass

from planner.architecture import Architecture, Decision, _html_label
from planner.brief import Brief, ObjectiveKind
from planner.fmt import num, pct
from planner.kv_tiers import KvTierAnalysis
from planner.lora_serving import LoraServing
from planner.multimodal import MultimodalAnalysis
from planner.objective import ObjectiveAnalysis

__all__ = ["MECHANISM_COLORS", "MECHANISM_LEGEND", "has_mechanisms", "with_mechanisms"]

MECHANISM_COLORS = ("#ddf4ff", "#0969da")  # (fill, border) of a mechanism's box: blue, apart from the pools' load colours
MECHANISM_LEGEND = "a mechanism the brief turns on (KV tiers, images, adapters, an offline job)"
_SIDE = f'fillcolor="{MECHANISM_COLORS[0]}", color="{MECHANISM_COLORS[1]}"'
_BESIDE = "  {{rank=same; pool0; {};}}"  # stacked with the general pool: the diagram grows no wider, the printed page keeps its type


def _adapter_decision(brief: Brief) -> str:
    """How requests find their adapter: routed by tenant where replicas hold only some adapters (--max-loras), and
    any replica where every replica holds every adapter or the brief routes no tenant."""
    if brief.lora.max_loras == 0:
        return "every adapter resident on every replica: any replica serves any tenant"
    return (
        "route by tenant to the replicas holding its adapter"
        if brief.lora.tenant_routing
        else "no tenant routing: any replica, adapters cached"
    )


def _extras(
    brief: Brief, tiers: KvTierAnalysis | None, images: MultimodalAnalysis | None, lora: LoraServing | None, goal: ObjectiveAnalysis | None
) -> tuple[list[str], list[Decision]]:
    lines: list[str] = []
    decisions: list[Decision] = []
    if tiers is not None:
        t = brief.kv_tiers
        label = ["KV tiers (LRU below HBM)", f"CPU {num(t.cpu_gb_per_node, 'GB')} a node, {num(t.cpu_gb_s_per_gpu, 'GB/s')} a GPU"]
        if t.nvme_gb_per_node > 0:
            label.append(f"NVMe {num(t.nvme_gb_per_node, 'GB')} a node, {num(t.nvme_gb_s_per_node, 'GB/s')}")
        label.append(f"hit rate {pct(tiers.hit_rate)} (HBM alone {pct(tiers.hit_rate_hbm_only)})")
        lines += [
            f"  kvtiers [label={_html_label(label)}, {_SIDE}];",
            "  pool0 -> kvtiers [dir=both, style=dashed];",
            _BESIDE.format("kvtiers"),
        ]
        decisions.append(
            Decision(
                decision="offload the prefix cache to host memory" + (" and NVMe" if t.nvme_gb_per_node > 0 else ""),
                why=tiers.arithmetic["hit_rate"],
            )
        )
    if images is not None:
        mm = brief.multimodal
        label = [
            "vision encoder + cache",
            f"{num(mm.encoder_params / 1e6)}M ViT on the replica's GPUs",
            f"{num(images.encoder_ms_per_image, 'ms')} an image, {pct(mm.encoder_cache_hit_rate)} cached",
        ]
        lines += [
            f"  encoder [label={_html_label(label)}, {_SIDE}];",
            "  encoder -> pool0 [style=dashed];",
            _BESIDE.format("encoder"),
        ]
        decisions.append(
            Decision(
                decision=f"cap images at {mm.max_images_per_request} a prompt, cache encoder outputs", why=images.arithmetic["per_request"]
            )
        )
    if lora is not None:
        label = [
            "adapter cache",
            f"{lora.gpu_slots} GPU slots, {lora.cpu_slots} in host memory a replica",
            f"{num(brief.lora.adapters)} adapters on storage",
        ]
        lines += [f"  adapters [label={_html_label(label)}, {_SIDE}];", "  adapters -> pool0 [style=dashed];", _BESIDE.format("adapters")]
        decisions.append(
            Decision(
                decision=_adapter_decision(brief),
                why=f"{lora.arithmetic['routing']}; {lora.arithmetic['cache']}",
            )
        )
    if goal is not None:
        what = "offline job queue" if goal.kind is ObjectiveKind.throughput else "rollout batch"
        size = (
            f"{num(brief.objective.job_tokens)} tokens in {num(brief.objective.deadline_hours, 'h')}"
            if goal.kind is ObjectiveKind.throughput
            else f"{brief.objective.batch_prompts:,} prompts a step"
        )
        lines += [f"  job [label={_html_label([what, size, 'largest batch, no TTFT target'])}, {_SIDE}];", "  job -> gateway;"]
        decisions.append(Decision(decision="run every replica at its largest batch", why=goal.arithmetic["batch"]))
    return lines, decisions


def has_mechanisms(design: object) -> bool:
    """Whether the design's diagram carries a mechanism's box (its legend then names the colour)."""
    return any(getattr(design, key, None) is not None for key in ("kv_tiers", "multimodal", "lora_serving", "objective"))


@dataclass(frozen=True)
class _Mechanisms:
    """The mechanisms' boxes and decisions, written when the architecture's diagram or decisions are first read."""

    brief: Brief
    tiers: KvTierAnalysis | None
    images: MultimodalAnalysis | None
    lora: LoraServing | None
    goal: ObjectiveAnalysis | None

    def __call__(self) -> tuple[list[str], list[Decision]]:
        return _extras(self.brief, self.tiers, self.images, self.lora, self.goal)


def with_mechanisms(
    arch: Architecture,
    brief: Brief,
    tiers: KvTierAnalysis | None,
    images: MultimodalAnalysis | None,
    lora: LoraServing | None,
    goal: ObjectiveAnalysis | None,
) -> Architecture:
    """The architecture with the mechanisms' boxes and decisions (unchanged when every mechanism is off)."""
    if tiers is None and images is None and lora is None and goal is None:
        return arch
    return arch.with_extras(_Mechanisms(brief, tiers, images, lora, goal))
