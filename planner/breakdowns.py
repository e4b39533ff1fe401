"""Breakdowns for stacked bars: the parts of a whole, each part a figure of the design.

The app draws these; keeping the parts here means the page never subtracts or adds a number itself.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from planner.capacity import Capacity, Memory

__all__ = ["Part", "Stack", "decode_step_stack", "memory_stack", "utilization_stacks"]


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
    headroom = max(1.0 - prefill - decode, 0.0)
    return Stack(
        label=label,
        parts=(Part(name="prefill", value=prefill), Part(name="decode", value=decode), Part(name="headroom", value=headroom)),
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
