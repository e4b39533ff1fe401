"""What a weight precision means on a given GPU: the scheme the engine runs, what it computes in, and its flag.

A GPU whose tensor cores take the precision runs weights and activations in it (W8A8, W4A4): the GEMMs compute at
that precision's peak. Elsewhere the engine keeps the weights in the small format and dequantizes them to BF16 inside
the GEMM (weight-only, e.g. vLLM's Marlin kernels for FP8 on Ampere): half or a quarter of the bytes a decode step
reads, but prefill computes at the BF16 peak. Facts: NVIDIA's datasheets (FP8 from Hopper and Ada, FP4 from Blackwell,
INT8 tensor cores from Ampere), AMD's MI300X (FP8 and INT8), vLLM's quantization docs (fp8 falls back to
weight-only FP8 Marlin on GPUs without FP8; awq_marlin for W4A16; modelopt_fp4 for NVFP4 checkpoints).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from planner.brief import Precision
from planner.catalog import GpuSpec

__all__ = ["WeightScheme", "weight_scheme"]


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


def weight_scheme(precision: Precision, gpu: GpuSpec) -> WeightScheme:
    """The scheme `precision` runs as on `gpu`."""
    name = _NAMES[precision.value]
    if precision is Precision.bf16:
        return WeightScheme(
            precision=precision,
            native=True,
            compute_precision="bf16",
            scheme="BF16",
            flag_value=None,
            why="unquantized: no accuracy risk, twice the bytes per decode step of an 8-bit format",
        )
    weight_only = precision.value == "int4"  # no engine runs W4A4 INT4 for these models
    if gpu.runs_natively(precision.value) and not weight_only:
        bits = "W8A8" if precision.bytes_per_value >= 1 else "W4A4"
        return WeightScheme(
            precision=precision,
            native=True,
            compute_precision=precision.value,
            scheme=f"{bits} {name}",
            flag_value=_flag(precision.value, gpu),
            why=f"{name} weights and activations, native on the {gpu.name}'s tensor cores: fewer bytes per decode step and"
            f" {gpu.peak_tflops(precision.value) / gpu.peak_tflops('bf16'):.0f}x the BF16 peak for prefill",
        )
    bits = "W8A16" if precision.bytes_per_value >= 1 else "W4A16"
    reason = f"the {gpu.name} has no {name} tensor cores" if not weight_only else "W4A16 is how engines run 4-bit integer weights"
    return WeightScheme(
        precision=precision,
        native=False,
        compute_precision="bf16",
        scheme=f"{bits} {name} (weight-only)",
        flag_value=_flag(precision.value, gpu),
        why=f"{name} weights dequantized to BF16 inside the GEMMs ({reason}): fewer bytes per decode step, prefill at the BF16 peak",
    )
