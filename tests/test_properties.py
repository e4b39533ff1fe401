"""Property tests: over generated valid briefs, plan() computes or gives a verdict, and physics holds.

Each test states one invariant of the method (more nodes never raise utilization, FP8 weights take
half the bytes of BF16, ...). Briefs are drawn around the capstone and the 10-QPS design: every
catalog model and GPU, every TP that divides a node, every precision, users or a request rate,
lengths, prefix hit rate, efficiency factors. The hypothesis profile (tests/conftest.py) fixes the
number of examples and derandomizes them, so CI runs the same cases every time.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from casecount import count, examples
from conftest import CONTRACT_SCENARIOS
from hypothesis import given, settings
from hypothesis import strategies as st

from planner import GPUS, MODELS, Brief, BriefError, Design, InfeasibleDesign, load_brief, plan
from planner.cli import design_json
from planner.replica import shape_of
from planner.simulator import SimSettings, simulate

pytestmark = pytest.mark.unit

REL = 1e-9  # float noise allowed in a monotonicity comparison (relative)
# slo._invert finds a quantile to 1e-10 of its bracket, which reaches a long prefill step: ~1,000 decode gaps
QUANTILE_REL = 1e-7
BASES = {name: load_brief(name).model_dump(mode="json") for name in ("capstone", "qps10-tp4")}


# --- generated briefs ---------------------------------------------------------------------------


def _fractions(low: float, high: float) -> st.SearchStrategy[float]:
    return st.floats(low, high, allow_nan=False, allow_infinity=False)


@st.composite
def brief_data(draw: st.DrawFn, rate_given: bool | None = None, any_tp: bool = False) -> dict[str, Any]:
    """A valid brief as data (JSON form), so a test can change one field and validate both.

    TP divides the node and the model's KV heads unless any_tp (then the plan may give a TP verdict).
    """
    data = json.loads(json.dumps(BASES[draw(st.sampled_from(sorted(BASES)))]))
    gpus_per_node = draw(st.sampled_from([4, 8]))
    model = draw(st.sampled_from(sorted(MODELS)))
    data["model"] = {"name": model}
    data["hardware"] = {"gpu": draw(st.sampled_from(sorted(GPUS))), "gpus_per_node": gpus_per_node, "nodes": draw(st.integers(1, 48))}
    dep = data["deployment"]
    tps = [tp for tp in (1, 2, 3, 4, 8, 16) if any_tp or (gpus_per_node % tp == 0 and MODELS[model].kv_heads % tp == 0)]
    dep["tp"] = draw(st.sampled_from(tps))
    dep["weights"] = draw(st.sampled_from(["bf16", "fp8", "int8", "int4", "fp4"]))
    dep["kv_cache"] = draw(st.sampled_from(["bf16", "fp8"]))
    dep["reserve_gb_per_gpu"] = draw(_fractions(0, 10))
    dep["gpu_memory_utilization"] = draw(_fractions(0.5, 1))
    dep["prefix_caching"] = draw(st.booleans())
    dep["spare_nodes"] = draw(st.integers(0, 2))
    dep["long_context_nodes"] = draw(st.integers(0, 2))
    w = data["workload"]
    if rate_given is None:
        rate_given = draw(st.booleans())
    if rate_given:
        w["users"], w["request_rate"] = None, draw(_fractions(0.1, 300))
    else:
        w["users"], w["request_rate"] = draw(st.integers(1, 40_000)), None
        w["duty_cycle"] = draw(_fractions(0.01, 1))
        w["generation_s_per_turn"] = draw(_fractions(1, 60))
    w["input_tokens_mean"] = draw(_fractions(50, 6000))
    w["input_tokens_p95"] = w["input_tokens_mean"] * draw(_fractions(1, 5))
    w["output_tokens_mean"] = draw(_fractions(10, 1500))
    w["output_tokens_p95"] = w["output_tokens_mean"] * draw(_fractions(1, 4))
    w["prefix_hit_rate"] = draw(_fractions(0, 1))
    w["kv_context_tokens"] = draw(st.none() | _fractions(256, 12_000))
    data["slo"]["itl_p95_ms"] = draw(_fractions(10, 150))
    data["slo"]["ttft_p95_ms"] = draw(_fractions(100, 5000))
    eff = data["efficiency"]
    eff["compute_fraction"] = draw(_fractions(0.2, 0.9))
    eff["bandwidth_fraction"] = draw(_fractions(0.3, 1))
    eff["tp_comm_overhead"] = draw(_fractions(0, 0.5))
    eff["real_kernel_factor"] = draw(_fractions(1, 3))
    eff["step_overhead_ms"] = draw(_fractions(0, 5))
    return data


def _brief(data: dict[str, Any]) -> Brief:
    return Brief.model_validate(data)


def _with(data: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    out = json.loads(json.dumps(data))
    section, key = path.split(".")
    out[section][key] = value
    return out


def _plan_or_none(brief: Brief) -> Design | None:
    """The design, or None for a verdict that it cannot be computed (the only exception plan may raise)."""
    try:
        return plan(brief)
    except InfeasibleDesign as exc:
        assert exc.problems and all(p.field and p.change for p in exc.problems)
        return None


def _bare_gap_tpot_p95(slo: Any) -> bool:
    """The known slo._tpot defect (a strict xfail in tests/test_slo.py pins it): when a reply sees almost no prompts,
    TPOT p95 is the bare p95 decode gap (the ITL p95 of pure decode steps) and falls below TPOT p50, the mean gap
    with interference. Recognised by exactly that signature, nothing wider."""
    return bool(slo.tpot_p95_ms < slo.tpot_p50_ms and slo.tpot_p95_ms == pytest.approx(slo.itl_p95_ms, rel=QUANTILE_REL))


def _not_above(after: float, before: float) -> bool:
    return after <= before * (1 + REL) + 1e-12 or (math.isinf(after) and math.isinf(before))


def _pair(data: dict[str, Any], path: str, low: Any, high: Any, kind: str) -> tuple[Design, Design] | None:
    """Plans of the brief with path=low and path=high; None (counted as skipped) when either is a verdict."""
    count(f"property: {kind} (examples)")
    lo, hi = _plan_or_none(_brief(_with(data, path, low))), _plan_or_none(_brief(_with(data, path, high)))
    if lo is None or hi is None:
        count(f"property: {kind} (skipped: not computable)")
        return None
    return lo, hi


# --- plan never raises anything but a verdict, and every computed design is self-consistent -----


@settings(max_examples=examples(40))
@given(data=brief_data(any_tp=True))
def test_plan_computes_or_gives_a_verdict_and_its_figures_agree(data: dict[str, Any]) -> None:
    count("property: plan computes or gives a verdict (examples)")
    design = _plan_or_none(_brief(data))
    if design is None:
        count("property: plan computes or gives a verdict (verdicts)")
        return
    cap, op, mem, dem = design.capacity, design.operating_point, design.memory, design.demand
    # the JSON the CLI prints is strict JSON (no NaN or Infinity)
    json.dumps(design_json(design), allow_nan=False)
    # 1. utilization is the sum of its prefill and decode shares
    assert cap.utilization == pytest.approx(cap.prefill_fraction + cap.decode_fraction, rel=1e-9, abs=1e-12)
    # 2. switching the prefix cache off never lowers utilization
    assert cap.utilization_no_prefix_cache >= cap.utilization * (1 - REL)
    # 3. real kernels are never faster than the ideal bytes / peak-bandwidth step
    assert cap.decode_step_ms >= cap.decode_step_ideal_ms * (1 - REL)
    seed = op.seed_relation
    assert seed is not None
    if math.isfinite(seed.tpot_ms):
        assert seed.tpot_ms >= seed.tpot_ideal_ms * (1 - REL)
    assert seed.capacity_rate_per_s <= seed.capacity_rate_ideal_per_s * (1 + REL) + 1e-9
    # 4. Little's law at the engine's pace: in flight = rate x (the prompt's chunk steps + (output - 1) x TPOT)
    if op.stable:
        time_in_system_s = op.engine_time_s
        assert op.tpot_ms >= op.decode_step_ms * (1 - REL)
        assert op.in_flight == pytest.approx(op.rate_per_replica_per_s * time_in_system_s, rel=1e-6, abs=1e-6)
    # 5. demand is rate x tokens; memory adds up to the usable memory
    w = design.brief.workload
    assert dem.input_tokens_per_s == pytest.approx(dem.request_rate_per_s * w.input_tokens_mean)
    assert dem.output_tokens_per_s == pytest.approx(dem.request_rate_per_s * w.output_tokens_mean)
    assert mem.weights_gb_per_gpu + mem.reserve_gb_per_gpu + mem.kv_gb_per_gpu == pytest.approx(mem.usable_gb_per_gpu)
    assert mem.max_sequences_per_replica >= 1  # else plan gives the "no room for one sequence" verdict
    # 6. the SLO waterfalls add up to what they explain; p95 >= p50 >= the fixed request path
    slo = design.slo
    if math.isfinite(slo.ttft_mean_ms):
        assert sum(step.ms for step in slo.ttft_waterfall) == pytest.approx(slo.ttft_mean_ms)
    if math.isfinite(slo.tpot_p50_ms):  # a reply's mean gap: decode step + interference + scheduler
        assert sum(step.ms for step in slo.itl_waterfall) == pytest.approx(slo.tpot_p50_ms)
    assert slo.ttft_p95_ms >= slo.ttft_p50_ms * (1 - REL) and slo.ttft_p50_ms >= slo.point.fixed_ms * (1 - REL)
    assert slo.itl_p95_ms >= slo.itl_p50_ms * (1 - QUANTILE_REL)
    if _bare_gap_tpot_p95(slo):
        count("property: plan computes or gives a verdict (known slo defect: TPOT p95 is the bare gap, below p50)")
    else:
        assert slo.tpot_p95_ms >= slo.tpot_p50_ms * (1 - REL)
    # 7. the verdict agrees with the figures
    if design.verdict.feasible:
        assert cap.utilization <= 1 + REL and cap.kv_fraction <= 1 + REL and op.stable
    else:
        assert design.verdict.problems, "an infeasible design says what to change"
    if design.verdict.meets_slo:
        assert design.slo.ttft_ok and design.slo.itl_ok and op.tpot_ms <= design.brief.slo.itl_p95_ms


@settings(max_examples=examples(15))
@given(data=brief_data(), extreme=st.sampled_from(["users", "rate", "tokens", "nodes", "tiny"]))
def test_extreme_but_valid_briefs_compute_or_give_a_verdict(data: dict[str, Any], extreme: str) -> None:
    """The edges of every range: a billion users, 10 M req/s, 10 M-token prompts, 4,096 nodes, one user."""
    count("property: extreme briefs (examples)")
    w = data["workload"]
    if extreme == "users":
        w.update(users=1_000_000_000, request_rate=None, duty_cycle=1.0, generation_s_per_turn=0.001)
    elif extreme == "rate":
        w.update(request_rate=1e7)
    elif extreme == "tokens":
        w.update(input_tokens_mean=1e7, input_tokens_p95=1e7, output_tokens_mean=1e6, output_tokens_p95=1e6, kv_context_tokens=1e7)
    elif extreme == "nodes":
        data["hardware"]["nodes"] = 4096
    else:
        w.update(
            users=1, request_rate=None, duty_cycle=1e-6, input_tokens_mean=1, input_tokens_p95=1, output_tokens_mean=1, output_tokens_p95=1
        )
    try:
        design = _plan_or_none(_brief(data))
    except BriefError as exc:  # a verdict that is not an InfeasibleDesign would still be acceptable input handling
        pytest.fail(f"plan raised a bare BriefError for a valid brief: {exc}")
    if design is not None:
        json.dumps(design_json(design), allow_nan=False)


# --- monotonic in one input ------------------------------------------------------------------------


@settings(max_examples=examples(20))
@given(data=brief_data(), nodes=st.integers(1, 47), more=st.integers(1, 16))
def test_more_nodes_never_raise_utilization(data: dict[str, Any], nodes: int, more: int) -> None:
    pair = _pair(data, "hardware.nodes", nodes, nodes + more, "more nodes")
    if pair is None:
        return
    few, many = pair
    assert _not_above(many.capacity.utilization, few.capacity.utilization)
    assert _not_above(many.capacity.utilization_no_prefix_cache, few.capacity.utilization_no_prefix_cache)
    assert _not_above(many.capacity.prefill_fraction, few.capacity.prefill_fraction)
    # and the fleet never loses throughput
    assert many.capacity.prefill_tokens_per_s >= few.capacity.prefill_tokens_per_s


@settings(max_examples=examples(20))
@given(data=brief_data(), hits=st.lists(_fractions(0, 1), min_size=2, max_size=2))
def test_higher_prefix_hit_rate_never_raises_prefill_share_or_utilization(data: dict[str, Any], hits: list[float]) -> None:
    low, high = sorted(hits)
    data["deployment"]["prefix_caching"] = True
    pair = _pair(data, "workload.prefix_hit_rate", low, high, "higher prefix hit rate")
    if pair is None:
        return
    cold, warm = pair
    assert _not_above(warm.capacity.prefill_fraction, cold.capacity.prefill_fraction)
    assert _not_above(warm.capacity.utilization, cold.capacity.utilization)
    assert _not_above(warm.operating_point.seed_relation.prefill_ms_per_request, cold.operating_point.seed_relation.prefill_ms_per_request)
    if warm.operating_point.stable and cold.operating_point.stable:
        # A prompt that drops from two chunks to one emits one token fewer for the running replies while it is
        # prefilled, so at that boundary TPOT may rise by a hair (2.5e-5 in one drawn case): held to 1% there.
        same_chunks = warm.slo.point.chunks_mean == cold.slo.point.chunks_mean
        tolerance = 1.0 if same_chunks else 1.01
        assert _not_above(warm.operating_point.tpot_ms, cold.operating_point.tpot_ms * tolerance)
    # and TTFT: less prefill to do and less queueing behind other prompts
    assert _not_above(warm.slo.ttft_p95_ms, cold.slo.ttft_p95_ms)
    assert _not_above(warm.slo.ttft_p50_ms, cold.slo.ttft_p50_ms)


@given(data=brief_data(rate_given=False), duties=st.lists(_fractions(0.01, 1), min_size=2, max_size=2))
def test_higher_duty_cycle_never_lowers_utilization(data: dict[str, Any], duties: list[float]) -> None:
    low, high = sorted(duties)
    pair = _pair(data, "workload.duty_cycle", low, high, "higher duty cycle")
    if pair is None:
        return
    calm, busy = pair
    assert _not_above(calm.capacity.utilization, busy.capacity.utilization)
    assert _not_above(calm.demand.request_rate_per_s, busy.demand.request_rate_per_s)
    assert _not_above(calm.capacity.kv_fraction, busy.capacity.kv_fraction)


@settings(max_examples=examples(12))
@given(data=brief_data(rate_given=True), rates=st.lists(_fractions(0.1, 300), min_size=2, max_size=2))
def test_higher_request_rate_never_lowers_utilization_or_tpot(data: dict[str, Any], rates: list[float]) -> None:
    low, high = sorted(rates)
    pair = _pair(data, "workload.request_rate", low, high, "higher request rate")
    if pair is None:
        return
    calm, busy = pair
    assert _not_above(calm.capacity.utilization, busy.capacity.utilization)
    if busy.operating_point.stable:
        assert calm.operating_point.stable
        assert _not_above(calm.operating_point.tpot_ms, busy.operating_point.tpot_ms)
        assert _not_above(calm.operating_point.in_flight, busy.operating_point.in_flight)


@settings(max_examples=examples(20))
@given(data=brief_data(), factor=_fractions(1, 4))
def test_longer_prompts_never_lower_the_prefill_share(data: dict[str, Any], factor: float) -> None:
    w = data["workload"]
    longer = json.loads(json.dumps(data))
    longer["workload"]["input_tokens_mean"] = w["input_tokens_mean"] * factor
    longer["workload"]["input_tokens_p95"] = w["input_tokens_p95"] * factor
    count("property: longer prompts (examples)")
    short, long_ = _plan_or_none(_brief(data)), _plan_or_none(_brief(longer))
    if short is None or long_ is None:
        count("property: longer prompts (skipped: not computable)")
        return
    assert _not_above(short.capacity.prefill_fraction, long_.capacity.prefill_fraction)
    assert _not_above(
        short.operating_point.seed_relation.prefill_ms_per_request, long_.operating_point.seed_relation.prefill_ms_per_request
    )


# --- memory and step physics (on the replica shape: no plan needed, so many more examples) --------


@settings(max_examples=examples(100))
@given(data=brief_data())
def test_fp8_weights_take_half_the_memory_of_bf16(data: dict[str, Any]) -> None:
    count("property: fp8 weights are half of bf16 (examples)")
    bf16 = shape_of(_brief(_with(data, "deployment.weights", "bf16")))
    fp8 = shape_of(_brief(_with(data, "deployment.weights", "fp8")))
    int4 = shape_of(_brief(_with(data, "deployment.weights", "int4")))
    assert fp8.weights_gb_per_gpu == pytest.approx(bf16.weights_gb_per_gpu / 2, rel=1e-12)
    assert int4.weights_gb_per_gpu == pytest.approx(bf16.weights_gb_per_gpu / 4, rel=1e-12)
    assert fp8.kv_gb_per_gpu >= bf16.kv_gb_per_gpu  # what the weights free goes to the KV pool


@settings(max_examples=examples(100))
@given(data=brief_data())
def test_fp8_kv_holds_twice_the_tokens_per_byte(data: dict[str, Any]) -> None:
    count("property: fp8 KV is half of bf16 per token (examples)")
    bf16 = shape_of(_brief(_with(data, "deployment.kv_cache", "bf16")))
    fp8 = shape_of(_brief(_with(data, "deployment.kv_cache", "fp8")))
    assert fp8.kv_bytes_per_token_per_gpu == pytest.approx(bf16.kv_bytes_per_token_per_gpu / 2, rel=1e-12)
    assert fp8.kv_capacity_tokens == pytest.approx(2 * bf16.kv_capacity_tokens, rel=1e-12)


@settings(max_examples=examples(100))
@given(data=brief_data(), speedup=_fractions(1, 4), batch=_fractions(1, 512), context=_fractions(1, 20_000))
def test_faster_gpu_never_lengthens_the_decode_step(data: dict[str, Any], speedup: float, batch: float, context: float) -> None:
    """The same GPU with more HBM bandwidth (same memory): the decode step at any batch is never longer."""
    count("property: faster GPU never lengthens the decode step (examples)")
    shape = shape_of(_brief(data))
    faster = shape.model_copy(update={"gpu": shape.gpu.model_copy(update={"hbm_tb_per_s": shape.gpu.hbm_tb_per_s * speedup})})
    assert faster.decode_step_real_s(batch, context) <= shape.decode_step_real_s(batch, context) * (1 + REL)
    assert faster.decode_step_ideal_s(batch, context) == pytest.approx(shape.decode_step_ideal_s(batch, context) / speedup)


@settings(max_examples=examples(100))
@given(data=brief_data(), batches=st.lists(_fractions(1, 1024), min_size=2, max_size=2), context=_fractions(1, 20_000))
def test_a_bigger_batch_never_shortens_the_step_nor_lowers_throughput(data: dict[str, Any], batches: list[float], context: float) -> None:
    count("property: bigger batch: longer step, more tokens/s (examples)")
    shape = shape_of(_brief(data))
    small, big = sorted(batches)
    assert shape.decode_step_real_s(small, context) <= shape.decode_step_real_s(big, context) * (1 + REL)
    assert small / shape.decode_step_real_s(small, context) <= big / shape.decode_step_real_s(big, context) * (1 + REL)


@settings(max_examples=examples(100))
@given(data=brief_data())
def test_higher_tp_spreads_the_weights(data: dict[str, Any]) -> None:
    """Doubling TP halves the weights and the KV bytes per token each GPU holds (MLA's latent KV is held whole on every GPU)."""
    count("property: higher TP spreads the weights (examples)")
    data["hardware"]["gpus_per_node"] = 8
    tp = min(data["deployment"]["tp"], 2)
    try:
        narrow = shape_of(_brief(_with(data, "deployment.tp", tp)))
        wide = shape_of(_brief(_with(data, "deployment.tp", 2 * tp)))
    except InfeasibleDesign:  # TP does not divide this model's KV heads
        count("property: higher TP spreads the weights (skipped: TP does not divide the KV heads)")
        return
    assert wide.weights_gb_per_gpu == pytest.approx(narrow.weights_gb_per_gpu / 2)
    split = 1 if MODELS[data["model"]["name"]].kv_lora_rank else 2
    assert wide.kv_bytes_per_token_per_gpu == pytest.approx(narrow.kv_bytes_per_token_per_gpu / split)
    assert wide.kv_gb_per_gpu >= narrow.kv_gb_per_gpu


@settings(max_examples=examples(100))
@given(data=brief_data(), fractions=st.lists(_fractions(0.3, 1), min_size=2, max_size=2))
def test_better_bandwidth_efficiency_never_lengthens_the_step(data: dict[str, Any], fractions: list[float]) -> None:
    count("property: better bandwidth efficiency never lengthens the step (examples)")
    low, high = sorted(fractions)
    slow = shape_of(_brief(_with(data, "efficiency.bandwidth_fraction", low)))
    fast = shape_of(_brief(_with(data, "efficiency.bandwidth_fraction", high)))
    assert fast.decode_step_real_s(64, 4000) <= slow.decode_step_real_s(64, 4000) * (1 + REL)


# --- the simulator against the roofline -----------------------------------------------------------


@settings(max_examples=examples(20))
@given(data=brief_data(), requests=st.integers(20, 150), rate=st.sampled_from([math.inf, None]), seed=st.integers(0, 2**31))
def test_simulated_throughput_never_exceeds_the_roofline(data: dict[str, Any], requests: int, rate: float | None, seed: int) -> None:
    """No schedule beats the hardware: output tok/s <= min(compute roofline, bandwidth roofline) of the replica.

    Compute: every token (prompt or output) is a forward pass of 2 x active params FLOPs at the achieved
    FLOP/s. Bandwidth: every step reads at least the dense weights at peak HBM bandwidth and emits at
    most max-num-seqs output tokens.
    """
    count("property: simulator throughput <= roofline (examples)")
    brief = _brief(data)
    try:
        result = simulate(brief, SimSettings(requests=requests, rate_per_s=rate, seed=seed))
    except BriefError:  # the plan's verdict (InfeasibleDesign) or a replica that holds no KV
        count("property: simulator throughput <= roofline (skipped: not computable)")
        return
    shape = shape_of(brief)
    m = shape.model
    compute_roofline = shape.flops_per_s / shape.flops_per_token
    dense_weight_bytes = (m.shared_params if m.is_moe else m.params) * shape.weight_bytes_per_value
    bandwidth_roofline = brief.deployment.max_num_seqs * shape.hbm_bytes_per_s / dense_weight_bytes
    assert result.completed == requests
    assert 0 < result.output_tokens_per_s <= min(compute_roofline, bandwidth_roofline) * (1 + REL)


# --- failure modes and cost ------------------------------------------------------------------------


def _load_path(data: dict[str, Any]) -> str:
    return "workload.request_rate" if data["workload"]["request_rate"] is not None else "workload.duty_cycle"


@settings(max_examples=examples(15))
@given(data=brief_data(), factor=_fractions(1, 3))
def test_cost_per_million_tokens_falls_as_utilization_rises_at_a_fixed_fleet(data: dict[str, Any], factor: float) -> None:
    """The same fleet at the same price carrying more traffic: busier, and each token cheaper."""
    path = _load_path(data)
    low = data["workload"]["request_rate"] or data["workload"]["duty_cycle"] / factor
    high = low * factor
    pair = _pair(data, path, low, high, "cost per token falls as utilization rises")
    if pair is None:
        return
    calm, busy = pair
    assert busy.cost.usd_per_hour == calm.cost.usd_per_hour
    assert _not_above(calm.capacity.utilization, busy.capacity.utilization)
    assert _not_above(busy.cost.usd_per_million_output_tokens, calm.cost.usd_per_million_output_tokens)
    for design in (calm, busy):  # and the cost arithmetic closes
        c, brief = design.cost, design.brief
        assert c.usd_per_hour == pytest.approx(c.gpus * brief.cost.usd_per_gpu_hour)
        assert c.gpus == brief.hardware.nodes * brief.hardware.gpus_per_node
        assert c.usd_per_million_output_tokens == pytest.approx(c.usd_per_year / c.output_tokens_per_year * 1e6)


@settings(max_examples=examples(15))
@given(data=brief_data())
def test_every_failure_scenario_loads_the_fleet_at_least_as_much_as_the_baseline(data: dict[str, Any]) -> None:
    count("property: failure scenarios never lighten the load (examples)")
    design = _plan_or_none(_brief(data))
    if design is None:
        count("property: failure scenarios never lighten the load (skipped: not computable)")
        return
    modes = {m.scenario.value: m for m in design.failures}
    assert set(CONTRACT_SCENARIOS) <= set(modes)
    base = design.capacity
    heavier = ["one_node_lost", "two_nodes_lost", "traffic_doubles", "inputs_double"]
    if design.brief.deployment.weights.value != "bf16":
        heavier.append("revert_to_bf16")
    if design.brief.deployment.prefix_caching and design.brief.workload.prefix_hit_rate >= 0.2:
        heavier.append("prefix_hit_rate_drops")
    for name in heavier:
        mode = modes[name]
        assert _not_above(base.utilization, mode.utilization), (name, base.utilization, mode.utilization)
        assert _not_above(base.utilization_no_prefix_cache, mode.utilization_no_prefix_cache), name
        assert not mode.ok or mode.utilization <= 1 + REL, f"{name}: ok at {mode.utilization:.0%} utilization"
    assert _not_above(modes["one_node_lost"].utilization, modes["two_nodes_lost"].utilization)
