"""Breakdowns for stacked bars: the parts of a whole, each part a figure of the design.

The app draws these; keeping the parts here means the page never subtracts or adds a number itself.
"""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict

from planner.brief import Latency
from planner.capacity import Capacity, Memory
from planner.disagg import DisaggAnalysis
from planner.slo import SloBudget

__all__ = ["LatencyPath", "Part", "Stack", "decode_step_stack", "memory_stack", "ttft_paths", "utilization_stacks"]


class Part(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    value: float


class Stack(BaseModel):
    """One bar: its label, its parts (in drawing order), and the whole they add up to."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    label: str
    parts: tuple[Part, ...]
    total: float
    unit: str


def memory_stack(mem: Memory) -> Stack:
    """One GPU's memory: weights, reserve, KV pool, and what the memory-utilization cap leaves unused (GB)."""
    unused = max(mem.gpu_memory_gb - mem.usable_gb_per_gpu, 0.0)
    parts = [
        Part(name="weights", value=mem.weights_gb_per_gpu),
        Part(name="reserve", value=mem.reserve_gb_per_gpu),
        Part(name="KV cache", value=max(mem.kv_gb_per_gpu, 0.0)),
    ]
    if unused > 0:
        parts.append(Part(name="not used by the engine", value=unused))
    return Stack(label="per GPU", parts=tuple(parts), total=mem.gpu_memory_gb, unit="GB")


def decode_step_stack(cap: Capacity) -> Stack:
    """Bytes one decode step reads per GPU at the running batch: weights and KV (GB)."""
    return Stack(
        label="decode step",
        parts=(
            Part(name="weights", value=cap.decode_step_weights_gb_per_gpu),
            Part(name="KV cache", value=cap.decode_step_kv_gb_per_gpu),
        ),
        total=cap.decode_step_bytes_gb_per_gpu,
        unit="GB",
    )


def _utilization_stack(label: str, prefill: float, decode: float) -> Stack:
    idle = max(1.0 - prefill - decode, 0.0)  # the sizing arithmetic's idle share: not the headroom (planner.headroom)
    return Stack(
        label=label,
        parts=(Part(name="prefill", value=prefill), Part(name="decode", value=decode), Part(name="idle (sizing)", value=idle)),
        total=max(prefill + decode, 1.0),
        unit="fraction",
    )


def utilization_stacks(cap: Capacity) -> tuple[Stack, Stack]:
    """Share of GPU time at peak with the brief's prefix hit rate and without prefix caching."""
    return (
        _utilization_stack("with prefix caching", cap.prefill_fraction, cap.decode_fraction),
        _utilization_stack(
            "without prefix caching",
            cap.prefill_fraction_no_prefix_cache,
            # decode's share without the cache: utilization minus prefill (the rate basis re-solves the capacity rate)
            cap.utilization_no_prefix_cache - cap.prefill_fraction_no_prefix_cache,
        ),
    )


class LatencyPath(BaseModel):
    """One path through the TTFT budget: its parts in the order a request meets them, and the total they add up to."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    label: str
    parts: tuple[Part, ...]
    total_ms: float  # the sum of the parts: the p95 or the mean TTFT the SLO page states


def ttft_paths(latency: Latency, slo: SloBudget, disaggregation: DisaggAnalysis | None = None) -> tuple[LatencyPath, LatencyPath]:
    """The p95 path and the mean path through TTFT, each adding up to the figure shown beside it.

    p95 path: the fixed request path, the queue wait at its 95th percentile (slo.point.queue_wait_p95_ms: what the
    p95 TTFT holds beyond the fixed path and the p95 prompt's chunk steps), and the prefill that completes the p95.
    Mean path: the fixed path, the mean queue wait and the mean covered prompt's chunk steps (slo.ttft_waterfall).
    With no steady state the queue part is infinite and the total is too.
    """
    p = slo.point
    before = (
        Part(name="network", value=latency.network_ms),
        Part(name="gateway", value=latency.gateway_ms),
        Part(name="tokenization", value=latency.tokenization_ms),
    )
    after = (Part(name="first sample", value=latency.first_sample_ms), Part(name="first write", value=latency.first_write_ms))
    if disaggregation is not None:
        return _disaggregated_paths(before, after, slo, disaggregation)
    queue_p95 = p.queue_wait_p95_ms
    extra = tuple(Part(name=step.component, value=step.ms) for step in slo.mechanisms)  # a KV reload, the encoder, an adapter load
    # the prefill that completes the p95: the p95 minus the fixed path and the p95 queue (the p95 prompt's chunk steps
    # when the queue is not empty at the p95; all of the rest when it is)
    prefill_p95 = slo.ttft_p95_ms - p.fixed_ms - queue_p95 if math.isfinite(slo.ttft_p95_ms) else p.prefill_stage_ms
    p95 = LatencyPath(
        label="p95 path",
        parts=(*before, Part(name="queue wait", value=queue_p95), Part(name="prefill", value=prefill_p95), *extra, *after),
        total_ms=slo.ttft_p95_ms,
    )
    mean = LatencyPath(
        label="mean path",
        parts=(
            *before,
            Part(name="queue wait", value=p.queue_wait_ms),
            Part(name="prefill", value=p.prefill_covered_mean_ms),
            *(Part(name=step.component, value=step.ms) for step in slo.mechanisms_mean),
            *after,
        ),
        total_ms=slo.ttft_mean_ms,
    )
    return p95, mean


def _disaggregated_paths(
    before: tuple[Part, ...], after: tuple[Part, ...], slo: SloBudget, dis: DisaggAnalysis
) -> tuple[LatencyPath, LatencyPath]:
    """A disaggregated TTFT: the prefill pool's wait and prefill, the KV transfer, the first decode step (planner.disagg:
    the p95 path is its sum of p95s, the mean path its waterfall)."""
    p95 = LatencyPath(
        label="p95 path",
        parts=(
            *before,
            Part(name="prefill-pool wait", value=dis.prefill_wait_ms_p95),
            Part(name="prefill", value=dis.prefill_stage_ms_p95),
            Part(name="KV transfer", value=dis.transfer_ms_p95),
            Part(name="first decode step", value=2 * dis.decode_step_p95_ms),
            *after,
        ),
        total_ms=slo.ttft_p95_ms,
    )
    mean = LatencyPath(
        label="mean path",
        parts=(
            *before,
            Part(name="prefill-pool wait", value=dis.prefill_wait_ms_mean),
            Part(name="prefill", value=dis.prefill_stage_ms_mean),
            Part(name="KV transfer", value=dis.transfer_ms_mean),
            Part(name="first decode step", value=1.5 * dis.decode_step_ms),
            *after,
        ),
        total_ms=slo.ttft_mean_ms,
    )
    return p95, mean
