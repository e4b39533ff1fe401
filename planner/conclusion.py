"""The conclusion of a problem-library design: what binds and which mechanism the design turns on, with the arithmetic.

The one conclusion a design shows (the Capacity page, the document, the CLI): written for the designs a mechanism
shapes (scale-out beyond one TP group, disaggregation or speculation, KV tiers, images, an objective other than
latency, adapters) and for the long-input, short-output shape of RAG (uncached prompts at least ten times the reply);
the scale-out and disaggregation/speculation texts (planner.scaleout, planner.mechanism_conclusion) are its parts.
The chat designs keep their pages as they were.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from planner.brief import ObjectiveKind
from planner.fmt import num, pct

if TYPE_CHECKING:
    from planner.core import CoreDesign
    from planner.kv_tiers import KvTierAnalysis
    from planner.lora_serving import LoraServing
    from planner.multimodal import MultimodalAnalysis
    from planner.objective import ObjectiveAnalysis

__all__ = ["PREFILL_DOMINATED_RATIO", "conclusion"]

PREFILL_DOMINATED_RATIO = 10.0  # uncached prompt / reply from which a design reads as RAG-shaped: prefill dominates


def _sentence(text: str) -> str:
    """`text` with its first letter capitalized and the rest left as written (units stay "MB", "GB/s")."""
    return text[:1].upper() + text[1:]


def _objective(goal: ObjectiveAnalysis) -> str:
    a = goal.arithmetic
    if goal.kind is ObjectiveKind.throughput:
        return (
            f"Judged on throughput, not latency: {goal.headline[:1].lower() + goal.headline[1:]}. The batch runs at its largest: {a['batch']}; {a['request']}."
            f" {_sentence(a['job'])}."
        )
    return f"Judged on the batch's makespan: {goal.headline[:1].lower() + goal.headline[1:]}. {_sentence(a['longest'])}; {a['makespan']}."


def _tiers(tiers: KvTierAnalysis) -> str:
    a = tiers.arithmetic
    return (
        f"The KV tiers turn on: {a['sessions']}; {a['demand']}. {a['capacity']}. {a['resident']}, so the hit rate is {a['hit_rate']}."
        f" A reload costs {num(tiers.cpu_reload_ms, 'ms')} from CPU against {num(tiers.recompute_ms, 'ms')} to recompute: {a['ttft']}."
    )


def _images(core: CoreDesign, images: MultimodalAnalysis) -> str:
    w = core.brief.workload
    share = images.image_tokens_per_request / w.input_tokens_mean
    return (
        f"Images turn on the multimodal path: {images.arithmetic['tokens']}, {pct(share)} of the {num(w.input_tokens_mean, 'tokens')} prompt,"
        f" so the image tokens, not the encoder, drive prefill and KV. {images.arithmetic['encoder']}; {images.arithmetic['per_request']}."
    )


def _lora(lora: LoraServing) -> str:
    a = lora.arithmetic
    return f"Multi-LoRA turns on: {a['routing']}; {a['cache']}. {_sentence(a['load'])}. {_sentence(a['memory'])}; {a['overhead']}."


def _binding(core: CoreDesign) -> str:
    cap, p = core.capacity, core.slo.point
    return (
        f"What binds: {cap.binding_constraint} (prefill {pct(cap.prefill_fraction)} and decode {pct(cap.decode_fraction)} of the fleet at the peak);"
        f" one replica meets the SLO up to {num(core.operating_point.capacity_rate_per_s, 'req/s')} and carries {num(core.operating_point.rate_per_replica_per_s, 'req/s')},"
        f" its prefill slot {pct(p.prefill_slot_busy)} busy; p95 TTFT {num(core.slo.ttft_p95_ms, 'ms')} against {num(core.slo.ttft_target_ms, 'ms')}."
    )


def _rag(core: CoreDesign) -> str:
    w = core.brief.workload
    uncached = w.input_tokens_mean * (1 - core.brief.effective_hit_rate)
    return (
        f"Long input, short output: {num(w.input_tokens_mean, 'tokens')} in and {num(w.output_tokens_mean, 'tokens')} out, {num(uncached, 'tokens')}"
        f" prefilled after a {pct(core.brief.effective_hit_rate)} prefix hit: prefill dominates, so chunked prefill"
        f" (max-num-batched-tokens {core.brief.deployment.max_num_batched_tokens}) and the prefix cache are the mechanisms that matter;"
        " speculative decoding would speed only the short reply."
    )


def conclusion(
    core: CoreDesign,
    scale_out: str | None,
    tiers: KvTierAnalysis | None,
    images: MultimodalAnalysis | None,
    lora: LoraServing | None,
    goal: ObjectiveAnalysis | None,
) -> str | None:
    """The design's one conclusion, or None for a design no mechanism shapes. `scale_out` is the scale-out
    analysis's own conclusion; a design's "what binds" comes from the objective, the scale-out or the
    disaggregation/speculation text when it has one, from the capacity otherwise."""
    w = core.brief.workload
    rag = w.input_tokens_mean * (1 - core.brief.effective_hit_rate) >= PREFILL_DOMINATED_RATIO * w.output_tokens_mean
    leads = [text for text in (scale_out, core.mechanism_conclusion) if text is not None]
    if not leads and tiers is None and images is None and lora is None and goal is None and not rag:
        return None
    parts = ([_objective(goal)] if goal is not None else []) + leads
    if not parts:
        parts = [_binding(core)]
    if rag and goal is None:
        parts.append(_rag(core))
    if tiers is not None:
        parts.append(_tiers(tiers))
    if images is not None:
        parts.append(_images(core, images))
    if lora is not None:
        parts.append(_lora(lora))
    return " ".join(parts)
