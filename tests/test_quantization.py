"""What each weight precision runs as on each GPU (planner.quantization), and what the plan computes at."""

from __future__ import annotations

import pytest

from planner import load_brief, plan
from planner.brief import ComputePeak, Precision
from planner.catalog import gpu_spec
from planner.quantization import prefill_peak, weight_scheme
from planner.replica import shape_of
from tests.conftest import cli_json, run_cli

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


@pytest.mark.parametrize(
    ("weights", "stated", "gpu", "peak", "unused"),
    [
        (Precision.fp8, ComputePeak.int8, "a100-80gb", "bf16", True),  # FP8 runs weight-only on Ampere: no INT8 math
        (Precision.int4, ComputePeak.int8, "a100-80gb", "bf16", True),  # W4A16 computes in BF16 on any GPU
        (Precision.bf16, ComputePeak.fp8, "h100-sxm", "bf16", True),
        (Precision.fp8, ComputePeak.bf16, "h100-sxm", "bf16", False),  # a lower peak: the brief's margin (the capstone's)
        (Precision.int8, ComputePeak.int8, "a100-80gb", "int8", False),
        (Precision.fp8, ComputePeak.auto, "h100-sxm", "fp8", False),
        (Precision.fp8, ComputePeak.auto, "a100-80gb", "bf16", False),
    ],
)
def test_one_rule_decides_the_prefill_peak_from_the_weights_and_the_gpu(weights, stated, gpu, peak, unused):
    p = prefill_peak(weights, stated, gpu_spec(gpu))
    assert (p.precision, p.unused) == (peak, unused)
    assert ("is not used" in p.why) == unused and bool(p.unused_why) == unused


@pytest.mark.parametrize("weights", ["fp8", "int4"])
def test_variation_g_switched_to_weight_only_weights_is_planned_at_the_bf16_peak_its_flag_states(weights):
    """The sidebar's quantization control on variation G (A100, efficiency.compute_peak=int8): FP8 and INT4 weights
    run weight-only (W8A16, W4A16), so prefill is sized at the BF16 peak the --quantization reason states, and the
    verdict is the one the brief gets with that peak stated; the stated INT8 peak is reported as not used."""
    switched = load_brief("variation-g").with_changes({"deployment.weights": weights})
    design = plan(switched)
    at_bf16 = plan(switched.with_changes({"efficiency.compute_peak": "bf16"}))
    assert design.shape.compute_precision == "bf16" and design.shape.peak_tflops_per_gpu == 312.0
    assert "8 GPUs x 312 TFLOP/s (bf16)" in design.capacity.arithmetic["prefill_tokens_per_s"]
    assert design.capacity.utilization == at_bf16.capacity.utilization
    assert design.headroom.multiple == at_bf16.headroom.multiple < 1
    assert (design.verdict.feasible, design.verdict.meets_slo) == (at_bf16.verdict.feasible, at_bf16.verdict.meets_slo) == (False, False)
    flag = next(f for f in design.config.flags if f.flag == "--quantization")
    assert "prefill at the BF16 peak" in flag.why and "efficiency.compute_peak=int8 is not used" in flag.why
    assert [p.field for p in design.ignored_fields] == ["efficiency.compute_peak"]
    assert "prefill computes at the BF16 peak (312 TFLOP/s), not the stated INT8 peak (624 TFLOP/s)" in design.ignored_fields[0].problem
    assert at_bf16.ignored_fields == ()
    revert = next(f for f in design.failures if f.scenario.value == "revert_to_bf16")
    assert "prefill math at the BF16 peak" not in revert.change  # it is there already


def test_variation_g_as_briefed_keeps_its_int8_peak():
    design = plan(load_brief("variation-g"))
    assert design.shape.compute_precision == "int8" and design.ignored_fields == ()
    flag = next(f for f in design.config.flags if f.flag == "--quantization")
    assert flag.value == "compressed-tensors" and "2x the BF16 peak for prefill" in flag.why
    revert = next(f for f in design.failures if f.scenario.value == "revert_to_bf16")
    assert revert.change.endswith("prefill math at the BF16 peak")


def test_capstone_sizes_fp8_prefill_at_the_bf16_peak_and_its_flag_says_so():
    """The capstone's seed works prefill at 990 TFLOP/s with FP8 weights (efficiency.compute_peak=bf16): a margin the
    brief states. The engine runs W8A8 FP8; the flag and the architecture decision say prefill is sized at BF16."""
    design = plan(load_brief("capstone"))
    assert design.shape.compute_precision == "bf16" and design.shape.peak_tflops_per_gpu == 989.4
    flag = next(f for f in design.config.flags if f.flag == "--quantization")
    assert flag.value == "fp8" and "2x the BF16 peak for prefill" not in flag.why
    assert "prefill is sized at the BF16 peak (989 TFLOP/s) as the brief states (efficiency.compute_peak=bf16)" in flag.why
    decision = next(d for d in design.architecture.decisions if d.decision == "W8A8 FP8 weights")
    assert "prefill is sized at the BF16 peak" in decision.why and design.ignored_fields == ()


def test_cli_reports_a_stated_peak_the_weights_cannot_run():
    out = cli_json("plan", "variation-g", "--set", "deployment.weights=fp8")
    assert [f["field"] for f in out["ignored_fields"]] == ["efficiency.compute_peak"]
    assert out["verdict"]["feasible"] is False
    text = run_cli("plan", "variation-g", "--set", "deployment.weights=fp8", check=True).stdout
    assert "Not used" in text and "efficiency.compute_peak: not used" in text


def _engine_flag(design, flag):
    return next(f for f in design.config.flags if f.flag == flag)


def test_the_engine_flag_reasons_on_an_mi300x_use_amds_words_and_arithmetic_that_adds_up():
    """MI300X nodes join their GPUs by Infinity Fabric and compute on matrix cores; 192 GB - 5 GB reserve is 187 GB,
    and the 182 GB the engine gets is the 0.95 cap, shown as its own step."""
    design = plan(load_brief("capstone").with_changes({"hardware.gpu": "mi300x"}))
    tp = _engine_flag(design, "--tensor-parallel-size").why
    assert "Infinity Fabric" in tp and "NVSwitch" not in tp and "NVLink" not in tp
    quant = _engine_flag(design, "--quantization").why
    assert "matrix cores" in quant and "tensor cores" not in quant
    decision = next(d.why for d in design.architecture.decisions if d.decision.startswith("TP="))
    assert "Infinity Fabric" in decision and "NVSwitch" not in decision and "NVLink" not in decision
    memory = _engine_flag(design, "--gpu-memory-utilization").why
    assert "192 GB x 1 - 5 GB reserve = 187 GB, capped at 0.95 x 192 GB = 182 GB per GPU" in memory


@pytest.mark.parametrize("key", ["h100-sxm", "a100-80gb", "mi300x", "l40s", "arc-pro-b60", "gb200"])
def test_every_gpus_tp_and_weight_reasons_name_its_own_link_and_compute_units(key: str) -> None:
    spec = gpu_spec(key)
    design = plan(load_brief("capstone").with_changes({"hardware.gpu": key}))
    assert spec.scale_up_domain in _engine_flag(design, "--tensor-parallel-size").why
    quant = _engine_flag(design, "--quantization").why
    assert spec.matrix_units in quant
    others = {"tensor cores", "matrix cores", "XMX engines"} - {spec.matrix_units}
    assert not any(o in quant for o in others)


def test_a_stated_peak_the_gpu_has_no_math_for_is_not_used():
    """efficiency.compute_peak=fp8 on an A100 (no FP8 math): not a margin under the INT8 weights' peak but a peak the
    GPU lacks; prefill is sized at the weights' INT8 peak and the field is reported as not used, with a change the GPU
    can take (it sized prefill at 312 TFLOP/s, the BF16 fallback of a missing precision, and reported nothing)."""
    briefed = plan(load_brief("variation-g"))
    stated = plan(load_brief("variation-g").with_changes({"efficiency.compute_peak": "fp8"}))
    assert stated.capacity.prefill_tokens_per_s_per_replica == pytest.approx(briefed.capacity.prefill_tokens_per_s_per_replica)
    unused = next(p for p in stated.ignored_fields if p.field == "efficiency.compute_peak")
    assert "has no FP8 math" in unused.problem and "deployment.weights=fp8" not in unused.change
