"""What each weight precision runs as on each GPU (planner.quantization), and what the plan computes at."""

from __future__ import annotations

import pytest

from planner import load_brief, plan
from planner.brief import Precision
from planner.catalog import gpu_spec
from planner.quantization import weight_scheme
from planner.replica import shape_of

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("precision", "gpu", "scheme", "compute"),
    [
        (Precision.fp8, "h100-sxm", "W8A8 FP8", "fp8"),
        (Precision.fp8, "mi300x", "W8A8 FP8", "fp8"),
        (Precision.fp8, "b200", "W8A8 FP8", "fp8"),
        (Precision.fp8, "a100-80gb", "W8A16 FP8 (weight-only)", "bf16"),
        (Precision.int8, "a100-80gb", "W8A8 INT8", "int8"),
        (Precision.int4, "h100-sxm", "W4A16 INT4 (weight-only)", "bf16"),
        (Precision.bf16, "a100-80gb", "BF16", "bf16"),
    ],
)
def test_each_precision_runs_as_the_gpu_allows(precision, gpu, scheme, compute):
    s = weight_scheme(precision, gpu_spec(gpu))
    assert (s.scheme, s.compute_precision) == (scheme, compute)
    assert ("native" in s.why) == s.native or precision is Precision.bf16


def test_fp8_on_a100_computes_at_the_bf16_peak_and_says_so():
    brief = load_brief("capstone").with_changes({"hardware.gpu": "a100-80gb", "efficiency.compute_peak": "auto"})
    shape = shape_of(brief)
    assert shape.compute_precision == "bf16" and shape.peak_tflops_per_gpu == 312.0
    flag = next(f for f in plan(brief).config.flags if f.flag == "--quantization")
    assert flag.value == "fp8" and "weight-only" in flag.why and "Hopper" not in flag.why
    assert all("Hopper-native" not in d.why for d in plan(brief).architecture.decisions)


def test_int4_on_amd_uses_the_awq_kernels_not_marlin():
    assert weight_scheme(Precision.int4, gpu_spec("mi300x")).flag_value == "awq"
    assert weight_scheme(Precision.int4, gpu_spec("h100-sxm")).flag_value == "awq_marlin"
