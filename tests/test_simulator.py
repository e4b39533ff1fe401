"""The step-level simulator: qps200-chat golden figures, agreement with the replica physics, determinism.

Golden figures from ../shared/spec/reference-figures.md (`qps200-chat`), each with the tolerance
written there: TTFT p50 48 ms and TPOT p50 4.3 ms at 1 req/s (5%); highest rate ~16.8 req/s (8%:
the seed's figure depends on its random draw and scheduler details); 12 instances, 16 with 30%
headroom, 128 H100, ~$0.89 per M output tokens. The seed's figures are a 1,500-request probe's; a
converged search (longer probes until the replica count is stable) finds 16.4 req/s and 13 instances.
"""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest

from planner import load_brief
from planner.replica import shape_of
from planner.sim_engine import StepCosts, run_engine
from planner.sim_workload import make_requests, sample_lengths
from planner.simulator import SimSettings, _histogram_percentiles, max_rate, simulate, step_costs
from planner.step_model import StepConstants

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def qps200():
    return load_brief("qps200-chat")


@pytest.fixture(scope="module")
def qps200_max_rate(qps200):
    """The seed's probe length, given: no doubling."""
    return max_rate(qps200, requests=1500)


@pytest.fixture(scope="module")
def qps200_converged(qps200):
    return max_rate(qps200)


def test_qps200_low_load_latencies(qps200):
    """Seed: at 1 req/s (300 requests) TTFT p50 48 ms, TPOT p50 4.3 ms (5%)."""
    r = simulate(qps200, SimSettings(rate_per_s=1.0, requests=300))
    assert r.completed == 300
    assert r.ttft_ms.p50 == pytest.approx(48, rel=0.05)
    assert r.tpot_ms.p50 == pytest.approx(4.3, rel=0.05)
    assert r.slo_attainment == 1.0


def test_qps200_max_rate_and_fleet(qps200_max_rate):
    m = qps200_max_rate
    assert m.max_rate_per_s == pytest.approx(16.8, rel=0.08)
    assert m.replicas_needed == 12
    assert m.replicas_with_headroom == 16
    assert m.gpus == 128
    assert m.usd_per_hour == pytest.approx(320, rel=1e-9)
    assert m.usd_per_million_output_tokens == pytest.approx(0.89, abs=0.005)


def test_max_rate_is_the_edge_of_the_slo(qps200, qps200_max_rate):
    """Each draw's bisection brackets its answer: a probe at the answer passes, one 3% above fails."""
    m = qps200_max_rate
    assert len(m.max_rate_per_seed) == 9
    assert m.max_rate_per_s == float(np.median(m.max_rate_per_seed))
    passed = [p.rate_per_s for p in m.probes if p.ok]
    failed = [p.rate_per_s for p in m.probes if not p.ok]
    assert max(m.max_rate_per_seed) in passed
    assert min(failed) < max(m.max_rate_per_seed) * 1.03
    assert all(p.slo_attainment >= 0.99 for p in m.probes if p.ok)


def test_max_rate_progress_reaches_one(qps200):
    seen: list[float] = []
    m = max_rate(qps200, lambda fraction, _msg: seen.append(fraction), seeds=2, bisections=4)
    assert seen == sorted(seen)
    assert seen[-1] == 1.0
    assert len(seen) == sum(length.runs for length in m.confidence.lengths) + 1


def test_a_given_probe_length_is_not_checked(qps200_max_rate):
    m = qps200_max_rate
    assert m.probe_requests == m.requests_per_probe == 1500
    assert m.probe_lengths_tried == (1500,)
    assert m.converged is None
    assert m.confidence.checked is False and m.confidence.stopped_by == "given probe length"
    assert m.confidence.statement.startswith("not checked")


def test_the_converged_search_needs_the_same_replicas_at_its_last_two_lengths(qps200, qps200_converged):
    """1,500-request probes say 12 replicas, longer ones 13 (a short run misses congestion a long one meets): the
    search doubles from 8 x the 512 slots until two lengths agree on the replicas and move the rate by at most 1%."""
    m = qps200_converged
    c = m.confidence
    assert m.converged is True and c.checked and c.stopped_by == "converged"
    assert m.probe_lengths_tried[0] == 8 * 512
    assert all(b == 2 * a for a, b in zip(m.probe_lengths_tried, m.probe_lengths_tried[1:], strict=False))
    assert m.probe_requests == m.probe_lengths_tried[-1] == c.requests[-1]
    assert c.replicas_needed[0] == c.replicas_needed[1] == m.replicas_needed == 13
    assert c.relative_change is not None and c.relative_change <= c.tolerance == 0.01
    assert c.rates_per_s[-1] == m.max_rate_per_s == pytest.approx(16.8, rel=0.08)
    assert c.rate_low_per_s <= m.max_rate_per_s <= c.rate_high_per_s
    assert c.replicas_range == (math.ceil(200 / c.rate_high_per_s), math.ceil(200 / c.rate_low_per_s))
    assert not c.capped_at_slot_bound and c.work_tokens <= c.work_limit_tokens
    again = max_rate(qps200)  # deterministic for a seed (the wall time aside)
    assert again.model_dump(exclude={"wall_ms"}) == m.model_dump(exclude={"wall_ms"})


def test_the_work_limit_stops_the_doubling_before_convergence(qps200):
    """With a tolerance no two lengths meet, the doubling runs until the next length would pass the work limit."""
    limit = 3e8
    m = max_rate(qps200, seeds=3, bisections=6, tolerance=0.0, work_limit_tokens=limit)
    c = m.confidence
    assert m.converged is False and c.stopped_by == "work limit"
    assert len(m.probe_lengths_tried) >= 2
    runs, tokens = 3 * 7, 2000 + 500
    assert c.work_tokens == sum(m.probe_lengths_tried) * runs * tokens <= limit
    assert (sum(m.probe_lengths_tried) + 2 * m.probe_requests) * runs * tokens > limit
    assert c.statement.startswith("not converged: the work limit")


def test_one_request_matches_the_closed_form(qps200):
    """Alone on the replica: TTFT = the prompt's GEMM and attention FLOPs at the achieved FLOP/s + its KV read + the
    fixed step (a roofline step: the KV read hides under the compute); TPOT = the decode step (planner.step_model) at the mean context."""
    shape = shape_of(qps200)
    k = shape.step
    r = simulate(qps200, SimSettings(requests=1, rate_per_s=1.0, input_tokens=2000, output_tokens=501))
    assert k.roofline == 1.0  # the seed's step: the prompt's KV read hides under its compute
    prefill_s = 2000 * k.gemm_s_per_token + k.lm_head_s_per_seq + 2000 * 2001 / 2 * k.attn_s_per_pair + k.overhead_s
    assert r.ttft_ms.p50 == pytest.approx(prefill_s * 1e3, rel=1e-9)
    assert r.ttft_ms.p50 == pytest.approx(2000 / shape.prefill_tokens_per_s * 1e3, rel=0.05)  # near the hand arithmetic
    # decode steps read 2,001 ... 2,500 tokens of context: the mean is 2,250.5
    assert r.tpot_ms.p50 == pytest.approx(shape.decode_step_s(1, 2250.5) * 1e3, rel=1e-9)


def test_same_seed_same_result(qps200):
    a = simulate(qps200, SimSettings(rate_per_s=12.0, requests=400, seed=7))
    b = simulate(qps200, SimSettings(rate_per_s=12.0, requests=400, seed=7))
    c = simulate(qps200, SimSettings(rate_per_s=12.0, requests=400, seed=8))
    assert a.model_dump(exclude={"wall_ms"}) == b.model_dump(exclude={"wall_ms"})
    assert a.ttft_ms != c.ttft_ms


def test_sampled_lengths_follow_the_brief():
    rng = np.random.default_rng(0)
    for mean, p95 in ((1000, 3000), (1200, 6000)):
        lengths = sample_lengths(rng, 200_000, mean, p95)
        assert lengths.mean() == pytest.approx(mean, rel=0.02)
        assert np.percentile(lengths, 95) == pytest.approx(p95, rel=0.03)
    assert (sample_lengths(rng, 10, 500, 500) == 500).all()


def test_lengths_are_clipped_to_max_model_len():
    reqs = make_requests(
        count=2000,
        rate_per_s=1.0,
        clients=0,
        prompt_mean=3000,
        prompt_p95=9000,
        output_mean=800,
        output_p95=2000,
        max_model_len=4096,
        prefix_hit_rate=0.5,
        seed=1,
    )
    assert (reqs.prompt_tokens + reqs.output_tokens <= 4096).all()
    assert (reqs.cached_tokens < reqs.prompt_tokens).all()


def test_rate_inf_and_closed_loop(qps200):
    burst = simulate(qps200, SimSettings(rate_per_s=float("inf"), requests=600, input_tokens=128, output_tokens=128))
    assert burst.completed == 600
    assert burst.rate_per_s == float("inf")
    closed = simulate(qps200, SimSettings(concurrency=4, requests=40, input_tokens=256, output_tokens=64))
    assert closed.completed == 40
    # four clients, each waiting for its reply: never more than four requests in the engine
    assert closed.queue_ms.p99 < 1.0
    assert closed.requests_per_s < burst.requests_per_s


# --- the fast loop against the straightforward one (benchmarks/sim_reference.py) ---------------------


@pytest.fixture(scope="module")
def reference_run(root):
    sys.path.insert(0, str(root))
    from benchmarks.sim_reference import reference_run

    return reference_run


@pytest.mark.parametrize(("kv_capacity", "reserve_whole"), [(3_000_000, False), (30_000, False), (9_000, False), (9_000, True)])
def test_fast_loop_equals_straightforward_loop(reference_run, qps200, kv_capacity, reserve_whole):
    """Same scheduler, same requests: the same times, including when the KV cache forces preemptions, and with
    TensorRT-LLM's whole-request reservation, which never preempts."""
    costs = step_costs(qps200, shape_of(qps200)).model_copy(
        update={"kv_capacity_tokens": kv_capacity, "max_num_batched_tokens": 2048, "reserve_whole_request": reserve_whole}
    )
    reqs = make_requests(
        count=300,
        rate_per_s=14.0,
        clients=0,
        prompt_mean=1500,
        prompt_p95=4000,
        output_mean=300,
        output_p95=900,
        max_model_len=min(8192, kv_capacity),
        prefix_hit_rate=0.3,
        seed=3,
    )
    fast = run_engine(reqs.arrival_s, reqs.prompt_tokens, reqs.output_tokens, reqs.cached_tokens, 0, costs)
    ref = reference_run(
        reqs.arrival_s.tolist(), reqs.prompt_tokens.tolist(), reqs.output_tokens.tolist(), reqs.cached_tokens.tolist(), costs
    )
    assert fast.steps == ref.steps
    assert fast.preemptions == ref.preemptions
    np.testing.assert_allclose(fast.first_token_s, ref.first_token_s, rtol=1e-12)
    np.testing.assert_allclose(fast.finish_s, ref.finish_s, rtol=1e-12)
    assert int(fast.itl_bin_count.sum()) == len(ref.itl_gaps_s)
    if kv_capacity < 10_000:
        assert (fast.preemptions == 0) if reserve_whole else (fast.preemptions > 0)
    _assert_histogram_matches_exact(fast, np.array(ref.itl_gaps_s) * 1e3)


def test_whole_request_reservation_runs_what_fits_to_the_end(qps200):
    """Every request at once, each 300 + 200 tokens, a KV cache of 5,000 tokens: vLLM's admission fills it with
    prompts and preempts as replies grow; TensorRT-LLM's GUARANTEED_NO_EVICT runs 10 at a time, never more, and
    preempts none."""
    costs = step_costs(qps200, shape_of(qps200)).model_copy(update={"kv_capacity_tokens": 5000, "max_num_seqs": 256})
    reqs = make_requests(
        count=60,
        rate_per_s=math.inf,
        clients=0,
        prompt_mean=300,
        prompt_p95=300,
        output_mean=200,
        output_p95=200,
        max_model_len=5000,
        prefix_hit_rate=0.0,
        seed=0,
    )
    runs = {
        reserve: run_engine(
            reqs.arrival_s,
            reqs.prompt_tokens,
            reqs.output_tokens,
            reqs.cached_tokens,
            0,
            costs.model_copy(update={"reserve_whole_request": reserve}),
        )
        for reserve in (False, True)
    }
    assert runs[False].preemptions > 0 and runs[True].preemptions == 0
    reserved = runs[True]
    assert np.isfinite(reserved.finish_s).all()
    events = sorted([(s, 1) for s in reserved.scheduled_s] + [(f, -1) for f in reserved.finish_s])  # an end before a start at a tie
    running = np.cumsum([step for _, step in events])
    assert running.max() == 10


def _assert_histogram_matches_exact(out, gaps_ms):
    """The ITL histogram's percentiles against the exact ones over every gap: the smallest gap at or above
    the q-th fraction of them (what sorting the gaps gives). Stated precision: within 0.12% (one bin's width),
    the mean to rounding; the issue asks for 0.5%."""
    exact = np.sort(gaps_ms)
    got = _histogram_percentiles(out.itl_bin_count, out.itl_bin_sum_s * 1e3)
    for name, q in (("p50", 0.5), ("p90", 0.9), ("p95", 0.95), ("p99", 0.99)):
        want = exact[int(np.ceil(q * exact.size)) - 1]
        assert getattr(got, name) == pytest.approx(want, rel=0.0012), name
    assert got.mean == pytest.approx(exact.mean(), rel=1e-9)


@pytest.mark.parametrize("rate_per_s", [40.0, 14.0, 2.0])
def test_itl_histogram_matches_the_exact_percentiles(reference_run, qps200, rate_per_s):
    """Overloaded (preemptions), busy and nearly idle runs: the straightforward loop records every gap, the
    kernel only bins them."""
    costs = step_costs(qps200, shape_of(qps200)).model_copy(update={"kv_capacity_tokens": 20_000})
    reqs = make_requests(
        count=200,
        rate_per_s=rate_per_s,
        clients=0,
        prompt_mean=1500,
        prompt_p95=4000,
        output_mean=200,
        output_p95=600,
        max_model_len=8192,
        prefix_hit_rate=0.0,
        seed=5,
    )
    fast = run_engine(reqs.arrival_s, reqs.prompt_tokens, reqs.output_tokens, reqs.cached_tokens, 0, costs)
    ref = reference_run(
        reqs.arrival_s.tolist(), reqs.prompt_tokens.tolist(), reqs.output_tokens.tolist(), reqs.cached_tokens.tolist(), costs
    )
    _assert_histogram_matches_exact(fast, np.array(ref.itl_gaps_s) * 1e3)
    if rate_per_s > 20:
        assert fast.preemptions > 0


def test_moe_weights_read_grows_with_the_batch():
    step = StepConstants.only(weights_s=1e-3, experts_s=4e-3, expert_miss=0.75, gemm_s_per_token=1e-6)
    costs = StepCosts(
        step=step,
        max_num_batched_tokens=512,
        max_num_seqs=64,
        kv_capacity_tokens=100_000,
        chunked_prefill=True,
    )
    one = np.ones(1, dtype=np.int64)
    out = run_engine(np.zeros(1), one * 1, one * 3, one * 0, 0, costs)
    # one token per step touches 1 - 0.75 of the experts: 1 ms + 4 ms x 0.25 = 2 ms a step
    assert out.busy_s == pytest.approx(3 * 2e-3, rel=1e-9)


def test_max_rate_judges_the_slo_as_the_plan_and_its_check_do():
    """max-rate reads the targets at the percentile slo.attainment_target names (p95), each figure on its own, as the
    plan's capacity and the simulator check do: a rag design the check calls meeting at 1.25 req/s a replica (while
    only 86% of its requests meet both targets at once) is not sized by the stricter joint share (0.96 req/s, 16
    replicas where the plan has 12). FP8 weights, W8A8 on the MI300X's FP8 math (INT4 runs weight-only at the BF16
    peak: a third of the rate)."""
    changes = {
        "hardware.gpu": "mi300x",
        "deployment.tp": 2,
        "deployment.weights": "fp8",
        "deployment.kv_cache": "fp8",
        "deployment.max_num_seqs": 64,
        "deployment.max_num_batched_tokens": 8192,
        "hardware.nodes": 3,
        "cost.usd_per_gpu_hour": 2.0,
    }
    brief = load_brief("rag").with_changes(changes)
    found = max_rate(brief, requests=1500)
    assert 1.1 < found.max_rate_per_s < 1.5 and found.replicas_needed is not None and found.replicas_needed <= 13
    assert any(p.ok and p.slo_attainment < 0.95 for p in found.probes)  # each p95 meets though fewer meet both at once


def test_max_rate_of_a_deadline_design_says_its_fleet_is_for_reference():
    """An offline job or a rollout is judged on its deadline: max-rate still searches the brief's latency targets, and
    says so (its fleet is not the design's; `plan` sizes that by the deadline). A latency design says nothing of it."""
    for name in ("offline-batch", "rl-rollout"):
        found = max_rate(load_brief(name), requests=300, seeds=3)
        assert found.judged_by_deadline and "judged on its deadline" in found.arithmetic["judged_by"]
    latency = max_rate(load_brief("qps10-tp4"), requests=300, seeds=3)
    assert not latency.judged_by_deadline and "judged_by" not in latency.arithmetic
