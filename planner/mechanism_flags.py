"""The engine options the mechanisms need (KV tiers, images, adapters), each with its reason."""

from __future__ import annotations

import json

from planner.brief import Brief
from planner.config import Flag
from planner.fmt import num, pct
from planner.kv_tiers import KvTierAnalysis
from planner.lora_serving import LoraServing
from planner.multimodal import MultimodalAnalysis

__all__ = ["mechanism_flags"]

GIB = 2**30


def _kv_tier_flags(brief: Brief, tiers: KvTierAnalysis, engines_per_node: int) -> list[Flag]:
    t = brief.kv_tiers
    per_engine_gib = t.cpu_gb_per_node / engines_per_node * 1e9 / GIB
    why = f"{tiers.arithmetic['resident']}; {tiers.arithmetic['hit_rate']}"
    if t.nvme_gb_per_node > 0:
        config = {
            "kv_connector": "LMCacheConnectorV1",
            "kv_role": "kv_both",
        }
        return [
            Flag(
                flag="--kv-transfer-config",
                value=json.dumps(config, separators=(",", ":")),
                why=(
                    f"LMCache holds the prefix cache below HBM: {num(t.cpu_gb_per_node / engines_per_node, 'GB')} of host memory"
                    f" (LMCACHE_MAX_LOCAL_CPU_SIZE) and {num(t.nvme_gb_per_node / engines_per_node, 'GB')} of NVMe"
                    f" (LMCACHE_LOCAL_DISK, LMCACHE_MAX_LOCAL_DISK_SIZE) per engine; {why}"
                ),
            )
        ]
    return [
        Flag(
            flag="--kv-offloading-backend",
            value="native",
            why="vLLM's own CPU offloading of evicted prefix blocks (LRU), reloaded on a hit",
        ),
        Flag(
            flag="--kv-offloading-size",
            value=f"{per_engine_gib:.0f}",
            why=f"{num(t.cpu_gb_per_node, 'GB')} of host memory per node / {engines_per_node} engine(s), in GiB; {why}",
        ),
    ]


def _multimodal_flags(brief: Brief, images: MultimodalAnalysis) -> list[Flag]:
    mm = brief.multimodal
    return [
        Flag(
            flag="--limit-mm-per-prompt",
            value=json.dumps({"image": mm.max_images_per_request}, separators=(",", ":")),
            why=f"at most {mm.max_images_per_request} images a prompt: the engine reserves encoder memory for that many ({num(mm.tokens_per_image, 'tokens')} each)",
        ),
        Flag(
            flag="--mm-processor-cache-gb",
            value=num(mm.processor_cache_gb),
            why=f"re-sent images skip preprocessing and the encoder: {pct(mm.encoder_cache_hit_rate)} of images assumed cached; {images.arithmetic['per_request']}",
        ),
    ]


def _lora_flags(serving: LoraServing) -> list[Flag]:
    return [
        Flag(flag="--enable-lora", value="", why="one base model serves every adapter; the batched kernels mix adapters in one step"),
        Flag(flag="--max-loras", value=str(serving.gpu_slots), why=f"{serving.arithmetic['routing']}; {serving.arithmetic['cache']}"),
        Flag(
            flag="--max-lora-rank",
            value=str(serving.max_lora_rank),
            why=f"the adapters' rank, rounded up to a value vLLM accepts; {serving.arithmetic['adapter']}",
        ),
        Flag(flag="--max-cpu-loras", value=str(serving.cpu_slots), why=serving.arithmetic["load"]),
    ]


def mechanism_flags(
    brief: Brief,
    engines_per_node: int,
    tiers: KvTierAnalysis | None,
    images: MultimodalAnalysis | None,
    lora: LoraServing | None,
) -> list[Flag]:
    """The mechanisms' options, each with its reason (none when every mechanism is off); planner.config.with_flags
    puts them before --port in every pool's command."""
    extra: list[Flag] = []
    if tiers is not None:
        extra += _kv_tier_flags(brief, tiers, engines_per_node)
    if images is not None:
        extra += _multimodal_flags(brief, images)
    if lora is not None:
        extra += _lora_flags(lora)
    return extra
