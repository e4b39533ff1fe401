"""Images in each request: the tokens they add to the prompt, the vision encoder's compute, the encoder cache.

The encoder runs in BF16 (it is not quantized with the language model) at the brief's compute fraction. The image tokens join the prompt (they take KV and prefill like text): the planner adds them to the brief's
prompt lengths unless the brief says they are counted already. The encoder runs on the replica's GPUs before
the prefill: a ViT's forward pass is 2 FLOPs per parameter per patch, so an image costs 2 x params x patches,
and a cached image (the same one re-sent) costs nothing. Its time is a TTFT term (the p95 request's own images), a
share of the GPUs' time at the peak, and work in the prefill queue: every request's mean encoder time holds the
prefill slot before its chunks (planner.slo's service time, the simulator's step that admits it).
"""

from __future__ import annotations

from functools import cached_property
from typing import NamedTuple

from pydantic import ConfigDict, PrivateAttr, computed_field

from planner.brief import Brief
from planner.cached import CachingModel
from planner.fmt import num, pct
from planner.replica import ReplicaShape
from planner.trusted import trusted

__all__ = ["MultimodalAnalysis", "encoder_s_per_image", "encoder_s_per_request", "multimodal_analysis", "with_image_tokens"]


class _Text(NamedTuple):
    """What MultimodalAnalysis.arithmetic is written from besides its figures."""

    brief: Brief
    shape: ReplicaShape
    rate_per_replica: float
    utilization: float


class MultimodalAnalysis(CachingModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    image_tokens_per_request: float
    encoder_tflop_per_image: float
    encoder_ms_per_image: float
    encoder_ms_per_request: float  # the images a request carries, less the cached ones
    encoder_busy_share: float  # of one replica's time at its share of the peak
    utilization_with_encoder: float  # the fleet's utilization at the peak with the encoder's time added
    ttft_encoder_ms: float  # what the p95 TTFT carries: a request with the most images, none cached
    _text: _Text = PrivateAttr()

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def arithmetic(self) -> dict[str, str]:
        """Each figure's arithmetic in words, written on first read (the latency model reads the encoder's figures alone,
        for every engine it builds)."""
        return _arithmetic(self, *self._text)


def with_image_tokens(brief: Brief) -> Brief:
    """The brief with the image tokens in its prompt lengths (once: the multimodal section records it)."""
    mm = brief.multimodal
    if not mm.enabled or mm.prompt_includes_images:
        return brief
    w = brief.workload
    mean_add = mm.images_per_request * mm.tokens_per_image
    p95_add = max(mean_add, min(mm.max_images_per_request, 2 * mm.images_per_request) * mm.tokens_per_image)
    return brief.with_changes(
        {
            "workload.input_tokens_mean": w.input_tokens_mean + mean_add,
            "workload.input_tokens_p95": w.input_tokens_p95 + p95_add,
            "multimodal.prompt_includes_images": True,
        }
    )


def encoder_s_per_image(brief: Brief, shape: ReplicaShape) -> float:
    """One image through the vision encoder on the replica's GPUs: 2 x params x patches FLOPs at the BF16 compute."""
    mm = brief.multimodal
    # the ViT runs unquantized, in BF16, on the replica's GPUs as its prefill does (with DP attention every group
    # encodes its own requests' images)
    encoder_flops_per_s = shape.gpu.dense_tflops["bf16"] * 1e12 * shape.gpus * shape.compute_fraction
    return 2 * mm.encoder_params * mm.encoder_patches_per_image / encoder_flops_per_s


def encoder_s_per_request(brief: Brief, shape: ReplicaShape) -> float:
    """A request's mean encoder time: its images less the encoder cache's hits (0 for a text-only brief)."""
    mm = brief.multimodal
    if not mm.enabled:
        return 0.0
    return mm.images_per_request * (1 - mm.encoder_cache_hit_rate) * encoder_s_per_image(brief, shape)


def multimodal_analysis(brief: Brief, shape: ReplicaShape, rate_per_replica: float, utilization: float = 0.0) -> MultimodalAnalysis | None:
    mm = brief.multimodal
    if not mm.enabled:
        return None
    flops = 2 * mm.encoder_params * mm.encoder_patches_per_image
    per_image_s = encoder_s_per_image(brief, shape)
    per_request_s = encoder_s_per_request(brief, shape)
    p95_images = _p95_images(brief)
    ttft_s = p95_images * per_image_s if mm.encoder_cache_hit_rate < 1 - 0.05 else 0.0
    busy = rate_per_replica * per_request_s
    analysis = trusted(
        MultimodalAnalysis,
        image_tokens_per_request=mm.images_per_request * mm.tokens_per_image,
        encoder_tflop_per_image=flops / 1e12,
        encoder_ms_per_image=per_image_s * 1e3,
        encoder_ms_per_request=per_request_s * 1e3,
        encoder_busy_share=busy,
        utilization_with_encoder=utilization + busy,
        ttft_encoder_ms=ttft_s * 1e3,
    )
    analysis._text = _Text(brief, shape, rate_per_replica, utilization)
    return analysis


def _arithmetic(
    analysis: MultimodalAnalysis, brief: Brief, shape: ReplicaShape, rate_per_replica: float, utilization: float
) -> dict[str, str]:
    mm = brief.multimodal
    per_image_ms, busy = analysis.encoder_ms_per_image, analysis.encoder_busy_share
    encoder_flops_per_s = 2 * mm.encoder_params * mm.encoder_patches_per_image / encoder_s_per_image(brief, shape)
    return {
        "tokens": f"{num(mm.images_per_request)} images x {num(mm.tokens_per_image, 'tokens')} = {num(mm.images_per_request * mm.tokens_per_image, 'tokens')} added to each prompt (KV and prefill)",
        "encoder": (
            f"2 x {num(mm.encoder_params / 1e6)}M params x {num(mm.encoder_patches_per_image)} patches = {num(analysis.encoder_tflop_per_image)} TFLOP per image"
            f" / {num(encoder_flops_per_s / 1e12)} TFLOP/s (BF16 peak x {shape.gpus_text} x {pct(shape.compute_fraction)}) = {num(per_image_ms, 'ms')}"
        ),
        "per_request": (
            f"{num(mm.images_per_request)} images x (1 - {pct(mm.encoder_cache_hit_rate)} encoder-cache hits) x {num(per_image_ms, 'ms')}"
            f" = {num(analysis.encoder_ms_per_request, 'ms')}, which each prompt holds the prefill slot for before its chunks (the queue carries it);"
            f" at {num(rate_per_replica, 'req/s')} per replica the encoder takes {pct(busy)} of the GPUs' time"
        ),
        "utilization": f"{pct(utilization)} prefill and decode + {pct(busy)} encoder = {pct(utilization + busy)} of the GPUs' time at the peak",
        "ttft": f"the p95 request carries {num(_p95_images(brief))} uncached images: {num(analysis.ttft_encoder_ms, 'ms')} of encoder before its prefill",
    }


def _p95_images(brief: Brief) -> float:
    """The images the p95 request carries: twice the mean, at most the most a request may carry."""
    mm = brief.multimodal
    return min(float(mm.max_images_per_request), max(mm.images_per_request, 2 * mm.images_per_request))
