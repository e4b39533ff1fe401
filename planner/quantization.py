"""What a weight precision means on a given GPU: the scheme the engine runs, what it computes in, and its flag.

A GPU whose tensor cores take the precision runs weights and activations in it (W8A8, W4A4): the GEMMs compute at
that precision's peak. Elsewhere the engine keeps the weights in the small format and dequantizes them to BF16 inside
the GEMM (weight-only, e.g. vLLM's Marlin kernels for FP8 on Ampere): half or a quarter of the bytes a decode step
reads, but prefill computes at the BF16 peak. Facts: NVIDIA's datasheets (FP8 from Hopper and Ada, FP4 from Blackwell,
INT8 tensor cores from Ampere), AMD's MI300X (FP8 and INT8), vLLM's quantization docs (fp8 falls back to
weight-only FP8 Marlin on GPUs without FP8; awq_marlin for W4A16; modelopt_fp4 for NVFP4 checkpoints).

`prefill_peak` is the one rule for the peak prefill is sized at (`prefill_precision`, without its words, for the
replica's capacity), which the weights' engine flag and the architecture decision also read: the scheme's peak, or a
lower one the brief states (efficiency.compute_peak, a deliberate margin, as the capstone sizes FP8 prefill at the BF16
peak). A stated peak above the scheme's is one the engine cannot run (INT8 math with FP8 weights dequantized on an
A100): not used, and the plan says so (planner.mechanisms.ignored_fields).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from planner.brief import ComputePeak, Precision
from planner.catalog import GpuSpec
from planner.fmt import num
from planner.trusted import trusted

__all__ = ["PrefillPeak", "WeightScheme", "prefill_peak", "prefill_precision", "weight_scheme"]


class WeightScheme(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    precision: Precision
    native: bool  # the tensor cores compute in this precision
    compute_precision: str  # the dense peak the GEMMs run at
    scheme: str  # e.g. "W8A8 FP8", "W8A16 FP8 (weight-only)"
    flag_value: str | None  # vLLM --quantization; None for BF16 (--dtype bfloat16)
    why: str


_NAMES = {"bf16": "BF16", "fp8": "FP8", "int8": "INT8", "int4": "INT4", "fp4": "FP4"}


def _flag(precision: str, gpu: GpuSpec) -> str | None:
    if precision == "bf16":
        return None
    if precision == "int4":
        return "awq" if gpu.generation == "cdna3" else "awq_marlin"  # W4A16 checkpoints; Marlin is NVIDIA-only
    return {"fp8": "fp8", "int8": "compressed-tensors", "fp4": "modelopt_fp4"}[precision]


def _native(name: str, gpu: GpuSpec) -> str:
    return f"{name} weights and activations, native on the {gpu.name}'s {gpu.matrix_units}"


def _runs_at(precision: Precision, gpu: GpuSpec) -> str:
    """The dense peak `precision` weights' GEMMs run at on `gpu` (WeightScheme.compute_precision): their own where the
    tensor cores take it (no engine runs W4A4 INT4), else BF16 (weight-only)."""
    value = precision.value  # an enum's value is a property: read once (a plan forms a replica a dozen times)
    return value if value != "int4" and gpu.runs_natively(value) else "bf16"


def weight_scheme(precision: Precision, gpu: GpuSpec) -> WeightScheme:
    """The scheme `precision` runs as on `gpu`."""
    name = _NAMES[precision.value]
    if precision is Precision.bf16:
        return trusted(
            WeightScheme,
            precision=precision,
            native=True,
            compute_precision="bf16",
            scheme="BF16",
            flag_value=None,
            why="unquantized: no accuracy risk, twice the bytes per decode step of an 8-bit format",
        )
    weight_only = precision.value == "int4"  # no engine runs W4A4 INT4 for these models
    if _runs_at(precision, gpu) != "bf16":
        bits = "W8A8" if precision.bytes_per_value >= 1 else "W4A4"
        return trusted(
            WeightScheme,
            precision=precision,
            native=True,
            compute_precision=precision.value,
            scheme=f"{bits} {name}",
            flag_value=_flag(precision.value, gpu),
            why=f"{_native(name, gpu)}: fewer bytes per decode step and"
            f" {gpu.peak_tflops(precision.value) / gpu.peak_tflops('bf16'):.0f}x the BF16 peak for prefill",
        )
    bits = "W8A16" if precision.bytes_per_value >= 1 else "W4A16"
    reason = f"the {gpu.name} has no {name} {gpu.matrix_units}" if not weight_only else "W4A16 is how engines run 4-bit integer weights"
    return trusted(
        WeightScheme,
        precision=precision,
        native=False,
        compute_precision="bf16",
        scheme=f"{bits} {name} (weight-only)",
        flag_value=_flag(precision.value, gpu),
        why=f"{name} weights dequantized to BF16 inside the GEMMs ({reason}): fewer bytes per decode step, prefill at the BF16 peak",
    )


class PrefillPeak(BaseModel):
    """The dense peak prefill is sized at, and why: what the weights run as, or a lower peak the brief states."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    precision: str  # the peak the capacity arithmetic uses (ReplicaShape.compute_precision)
    stated: ComputePeak
    unused: bool  # the brief states a peak above what the engine computes at: not used
    why: str  # the weights' reason, with the peak the plan sizes prefill at
    unused_why: str  # why the stated peak is not used ('' when it is)


def prefill_precision(weights: Precision, stated: ComputePeak, gpu: GpuSpec) -> str:
    """prefill_peak's precision without its words (what a replica's capacity is sized at, worked out for every
    replica a plan forms): the scheme's peak, or a lower one the brief states that the GPU has math for."""
    runs = _runs_at(weights, gpu)
    if stated is ComputePeak.auto or not gpu.runs_natively(stated.value):
        return runs
    return stated.value if gpu.peak_tflops(stated.value) < gpu.peak_tflops(runs) else runs


def prefill_peak(weights: Precision, stated: ComputePeak, gpu: GpuSpec) -> PrefillPeak:
    """The peak prefill is sized at with `weights` on `gpu` when the brief states `stated` (auto: the scheme's)."""
    scheme = weight_scheme(weights, gpu)
    runs, precision = scheme.compute_precision, prefill_precision(weights, stated, gpu)  # the words below say why
    if stated is ComputePeak.auto or gpu.peak_tflops(stated.value) == gpu.peak_tflops(runs):
        return trusted(PrefillPeak, precision=precision, stated=stated, unused=False, why=scheme.why, unused_why="")
    runs_at = f"the {runs.upper()} peak ({num(gpu.peak_tflops(runs), 'TFLOP/s')})"
    if not gpu.runs_natively(stated.value):  # a peak the GPU has no math for (FP8 on an A100): not a margin, a slip
        lacks = f"the {gpu.name} has no {stated.value.upper()} math"
        why = f"{scheme.why}; efficiency.compute_peak={stated.value} is not used: {lacks}"
        return trusted(
            PrefillPeak,
            precision=precision,
            stated=stated,
            unused=True,
            why=why,
            unused_why=f"not used: {lacks}, so prefill computes at {runs_at}",
        )
    at = f"the {stated.value.upper()} peak ({num(gpu.peak_tflops(stated.value), 'TFLOP/s')})"
    stated_at = f"the stated {stated.value.upper()} peak ({num(gpu.peak_tflops(stated.value), 'TFLOP/s')})"
    if gpu.peak_tflops(stated.value) < gpu.peak_tflops(runs):  # a deliberate margin: the engine runs faster than planned
        why = (
            f"{_native(_NAMES[weights.value], gpu)}: fewer bytes per decode step; prefill is sized at {at} as the brief states"
            f" (efficiency.compute_peak={stated.value}), a margin under {runs_at} the engine computes at"
        )
        return trusted(PrefillPeak, precision=precision, stated=stated, unused=False, why=why, unused_why="")
    # Above the scheme's peak: a stated peak the GPU has (it is above BF16's), so weights in that precision run it.
    needs = f"deployment.weights={stated.value} (W8A8)"
    unused_why = f"not used: the weights run as {scheme.scheme} on the {gpu.name}, so prefill computes at {runs_at}, not {stated_at}"
    why = f"{scheme.why}; efficiency.compute_peak={stated.value} is not used: {at} needs {needs}"
    return trusted(PrefillPeak, precision=precision, stated=stated, unused=True, why=why, unused_why=unused_why)
