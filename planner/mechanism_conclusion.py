"""What binds and which serving mechanism the design turns on, in one paragraph with its arithmetic.

A design with prefill/decode disaggregation or speculative decoding states why: the resource that binds in the
aggregated design, the mechanism's figures, and the latency it gives against the design without it.
"""

from __future__ import annotations

import math

from planner.brief import Brief
from planner.capacity import Capacity
from planner.disagg import DisaggAnalysis, splits_summary
from planner.fmt import num, pct
from planner.slo import SloBudget
from planner.speculative import SpeculativeAnalysis

__all__ = ["mechanism_conclusion"]


def _disaggregation_text(brief: Brief, cap: Capacity, dis: DisaggAnalysis) -> str:
    c = dis.comparison
    return (
        f"{cap.binding_constraint.value.capitalize()} binds: prefill takes {pct(cap.prefill_fraction)} of the aggregated fleet's time"
        f" and decode {pct(cap.decode_fraction)}, so prompt chunks ride in the decode steps and stretch the token gaps"
        f" (aggregated p95 ITL {num(c.chunked_itl_p95_ms, 'ms')}, TPOT {num(c.chunked_tpot_p95_ms, 'ms')})."
        f" Disaggregation turns on: {dis.arithmetic['split']}. Prefill: {dis.arithmetic['prefill']}."
        f" KV transfer: {dis.arithmetic['transfer']}. Decode: {dis.arithmetic['decode']}."
        f" p95 TTFT {num(dis.ttft_p95_ms, 'ms')} (chunked {num(c.chunked_ttft_p95_ms, 'ms')}), p95 ITL {num(dis.itl_p95_ms, 'ms')}"
        f" (chunked {num(c.chunked_itl_p95_ms, 'ms')}) against {num(brief.slo.ttft_p95_ms, 'ms')} and {num(brief.slo.itl_p95_ms, 'ms')}: {c.verdict}."
        f" The split: {splits_summary(dis, brief)}."
    )


def _speculation_text(brief: Brief, spec: SpeculativeAnalysis, before: SloBudget, after: SloBudget, gpus_per_replica: int) -> str:
    metric = brief.slo.itl_metric.value.upper()
    seqs = brief.deployment.max_num_seqs
    turns_off = (
        "turns it off above that load"
        if spec.off_above_batch < seqs
        else f"would turn it off above that load, beyond max-num-seqs {seqs}: it stays on at every batch the engine runs"
    )
    cross = (
        f"the gain falls to 1 at a batch of {num(spec.crossover_batch)} (x{num(spec.gain_at_max_batch)} at max-num-seqs {seqs}),"
        f" so vLLM's disable_by_batch_size={spec.off_above_batch_per_engine} {turns_off}"
        + (
            f" (per DP-attention rank: the replica's {num(spec.off_above_batch)} over its ranks, each an engine)"
            if spec.off_above_batch_per_engine != spec.off_above_batch
            else ""
        )
        if math.isfinite(spec.crossover_batch)
        else f"it still pays at max-num-seqs {brief.deployment.max_num_seqs} (x{num(spec.gain_at_max_batch)})"
    )
    state = "on" if spec.on_at_load else "off"
    return (
        f"The decode step's weight reads bind at this load: a running batch of {num(spec.operating_batch)} reads all"
        f" {gpus_per_replica} GPUs' weights for a few tokens, p95 {metric} {num(before.judged_itl_p95_ms, 'ms')} of the"
        f" {num(brief.slo.itl_p95_ms, 'ms')} target without speculation. Speculative decoding ({spec.method.value}, {spec.draft}):"
        f" {spec.arithmetic['tokens_per_step']}; {spec.arithmetic['batch_1']}; at the running batch x{num(spec.gain_at_load)},"
        f" so it is {state} at load and p95 {metric} is {num(after.judged_itl_p95_ms, 'ms')}. At higher batches {cross}."
    )


def mechanism_conclusion(
    brief: Brief,
    cap: Capacity,
    dis: DisaggAnalysis | None,
    spec: SpeculativeAnalysis | None,
    before: SloBudget,
    after: SloBudget,
    gpus_per_replica: int,
) -> str | None:
    """The paragraph, or None when the design turns neither mechanism on. `gpus_per_replica`: the GPUs whose weights a
    decode step reads (TP x DP attention x PP; DeepSeek-R1's EP=16 replica is 16 GPUs at TP=1)."""
    parts = []
    if dis is not None:
        parts.append(_disaggregation_text(brief, cap, dis))
    if spec is not None:
        parts.append(_speculation_text(brief, spec, before, after, gpus_per_replica))
    return " ".join(parts) if parts else None
