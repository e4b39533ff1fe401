"""The SLO budget (step 5): golden figures from the capstone's budget and the model's own invariants.

The worked design (capstone-64xH100-design.txt, step 4) computes its queue wait and ITL interference at
its no-cache load (51% utilization): the other requests' prompts all miss the prefix cache, only the
measured request's own prompt is cached (880 new tokens). That is the brief's default queue basis
(slo.queue_basis = cold_cache), so the headline `design.slo` is on the worked design's basis; the
hit-rate basis is `slo.alternate_point`. Tolerance 20% (reference-figures.md: the queue and p95 models
are the project's own).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from planner import load_brief, plan
from planner.slo import _erlang_c_wait_s, length_cv2

pytestmark = pytest.mark.unit

SLO_TOL = 0.20


@pytest.fixture(scope="module")
def capstone():
    return plan(load_brief("capstone"))


def _steps(waterfall):
    return {s.component: s.ms for s in waterfall}


def test_capstone_fixed_parts_of_the_ttft_waterfall(capstone):
    steps = _steps(capstone.slo.ttft_waterfall)
    assert steps["network round trip"] == 25
    assert steps["gateway: auth, rate limit, route"] == 12
    assert steps["tokenization"] == 4
    assert steps["first sample"] == 2
    assert steps["first streamed write"] == 6


def test_capstone_waterfalls_sum_to_their_totals(capstone):
    slo = capstone.slo
    assert sum(s.ms for s in slo.ttft_waterfall) == pytest.approx(slo.ttft_mean_ms, rel=1e-9)
    assert sum(s.ms for s in slo.itl_waterfall) == pytest.approx(slo.itl_p50_ms, rel=1e-9)
    assert slo.ttft_p50_ms <= slo.ttft_p95_ms
    assert slo.itl_p50_ms <= slo.itl_p95_ms


def test_capstone_headline_reproduces_the_worked_budget(capstone):
    slo = capstone.slo
    assert slo.queue_basis == "cold_cache"
    # seed: p95 TTFT ~340 ms (20%)
    assert slo.ttft_p95_ms == pytest.approx(340, rel=SLO_TOL)
    # seed: ITL p50 ~19 ms, p95 ~28 ms (20%)
    assert slo.itl_p50_ms == pytest.approx(19, rel=SLO_TOL)
    assert slo.itl_p95_ms == pytest.approx(28, rel=SLO_TOL)
    p = slo.point
    # seed: 880 new tokens after 78% hits on a 4,000-token prompt, 31 ms of pure prefill compute
    assert p.cap_uncached_tokens == pytest.approx(880, rel=0.001)
    assert p.cap_uncached_tokens / capstone.capacity.prefill_tokens_per_s_per_replica * 1e3 == pytest.approx(31, rel=0.05)
    # seed: "queue wait (at 51% utilization)": the same no-cache prefill load, on one general-pool replica
    # (the fleet's 29.7% prefill share x 8 nodes x 95% of the requests / 6 general nodes)
    assert p.rho_prefill == pytest.approx(capstone.capacity.prefill_fraction_no_prefix_cache * 8 * 0.95 / 6, rel=1e-6)
    # Known difference, stated: the seed's mean is 25 + 12 + 4 + queue ~90 + prefill ~55 + 2 + 6 = ~194 ms.
    # Ours is ~145 ms: the simulator-checked M/G/1 queue at that load is ~57 ms (the simulator measures
    # 37-50 ms at the engine's pace, docs/crosscheck.md), and the 880-token prompt prefills in one
    # 2,048-token step (~39 ms) rather than the seed's informal ~55 ms. The p95, the SLO's statistic, lands
    # within 20% of the seed's; the mean is held to 30% here, and docs/crosscheck.md states the deviation.
    assert slo.ttft_mean_ms == pytest.approx(194, rel=0.30)
    assert p.queue_wait_ms == pytest.approx(57, rel=0.10) and p.prefill_stage_ms == pytest.approx(39, rel=0.05)


def test_capstone_headline_meets_the_slo_as_the_seed_concludes(capstone):
    slo = capstone.slo
    assert slo.ttft_ok and slo.itl_ok
    # running batch: 800 generating, 95% of them on the 6 general-pool nodes (long-context and spare excluded)
    assert slo.point.running_batch == pytest.approx(800 * 0.95 / 6, rel=1e-6)
    assert slo.point.running_batch == pytest.approx(capstone.operating_point.in_flight, rel=1e-9)
    assert slo.point.decode_step_ms == pytest.approx(capstone.shape.decode_step_real_s(800 * 0.95 / 6, 4000) * 1e3, rel=1e-9)
    # the ITL waterfall's decode step is that step; interference is the prefill share's stretch
    p = slo.point
    assert p.itl_interference_ms == pytest.approx((p.decode_step_ms + 3) * p.rho_interference / (1 - p.rho_interference), rel=1e-9)
    # interference: a prompt's steps beyond the decode step each of them also is
    assert p.rho_interference == pytest.approx(
        p.rate_per_replica_per_s * (p.slot_service_ms - p.chunks_mean * (p.decode_step_ms + 3)) / 1e3, rel=1e-9
    )
    assert 0 < p.rho_interference < p.rho_prefill
    # on the hit-rate basis the other prompts are mostly cached: a shorter queue and less interference
    warm = slo.alternate_point
    assert warm.load_hit_rate == 0.78 and p.load_hit_rate == 0
    assert warm.queue_wait_ms < p.queue_wait_ms / 3 and warm.itl_p95_ms < p.itl_p95_ms
    assert slo.at_hit_rate() is warm
    assert slo.queue_model and "M/G/1" in slo.queue_model
    assert "p95" in slo.percentile_method


def test_queue_formula_is_the_m_g_1_wait_for_the_prefill_slot(capstone):
    """Prompts queue FCFS for the prefill slot; a prompt holds it for its chunk steps, each step costing
    fixed time + max(compute of its tokens, the batch's reads). Checked against draws of the same prompts."""
    p = capstone.slo.point
    brief = capstone.brief
    prefill_rate = capstone.shape.prefill_tokens_per_s
    rng = np.random.default_rng(0)
    cv2 = length_cv2(brief.workload.input_tokens_mean, brief.workload.input_tokens_p95)
    prompts = np.minimum(rng.gamma(1 / cv2, brief.workload.input_tokens_mean * cv2, 2_000_000), brief.deployment.max_model_len - 1)
    uncached = prompts * (1 - p.load_hit_rate)
    assert p.chunks_mean == 1  # a mean prompt (1,200 tokens) fits one 2,048-token step
    service_s = p.step_fixed_ms / 1e3 + np.maximum((uncached + p.running_batch) / prefill_rate, p.step_memory_ms / 1e3)
    r = p.rate_per_replica_per_s
    assert p.slot_service_ms == pytest.approx(service_s.mean() * 1e3, rel=0.01)
    rho = r * service_s.mean()
    assert p.prefill_slot_busy == pytest.approx(rho, rel=0.01)
    assert p.prompt_wait_ms == pytest.approx(r * (service_s**2).mean() / (2 * (1 - rho)) * 1e3, rel=0.03)
    step_wait = (1 - p.prefill_slot_busy) * p.decode_step_ms / 2
    assert p.queue_wait_ms == pytest.approx(p.prompt_wait_ms + p.admission_wait_ms + step_wait, rel=1e-9)
    # the memory time a step reads is the decode step without its fixed overhead
    assert p.step_memory_ms == pytest.approx(p.decode_step_ms - capstone.shape.step_overhead_s * 1e3, rel=1e-9)


def test_length_variability_fits_known_distributions():
    assert length_cv2(1000, 1000) == 0  # fixed lengths
    assert length_cv2(1000, 1000 * math.log(20)) == pytest.approx(1.0, rel=0.01)  # exponential: p95 = mean x ln 20
    assert length_cv2(1200, 6000) > length_cv2(1200, 3000)


def test_erlang_c_reduces_to_m_m_1():
    # one slot, offered load 0.5, hold 1 s: the M/M/1 wait is rho / (1 - rho) x hold = 1 s
    assert _erlang_c_wait_s(0.5, 1, 1.0) == pytest.approx(1.0, rel=1e-9)
    assert _erlang_c_wait_s(2.0, 2, 1.0) == math.inf


def test_more_nodes_never_lengthen_the_latencies():
    base = load_brief("capstone")
    previous = None
    for nodes in (4, 5, 6, 8, 12):
        slo = plan(base.with_changes({"hardware.nodes": nodes})).slo
        if previous is not None:
            assert slo.ttft_p95_ms <= previous.ttft_p95_ms + 1e-9
            assert slo.itl_p95_ms <= previous.itl_p95_ms + 1e-9
        previous = slo


def test_prefix_hit_rate_shortens_ttft_and_itl():
    base = load_brief("capstone")
    for basis in ("cold_cache", "hit_rate"):
        brief = base.with_changes({"slo.queue_basis": basis})
        low = plan(brief.with_changes({"workload.prefix_hit_rate": 0.2})).slo
        high = plan(brief.with_changes({"workload.prefix_hit_rate": 0.9})).slo
        assert high.ttft_p95_ms < low.ttft_p95_ms  # the measured prompt is cached at the hit rate on both bases
        if basis == "hit_rate":
            assert high.itl_p95_ms < low.itl_p95_ms  # the other prompts' prefill steals less of the GPU
        else:
            assert high.itl_p95_ms == pytest.approx(low.itl_p95_ms, rel=1e-9)  # cold: the others miss either way


def test_duty_cycle_moves_the_waterfalls():
    base = load_brief("capstone")
    busy = plan(base.with_changes({"workload.duty_cycle": 0.12})).slo
    calm = plan(base.with_changes({"workload.duty_cycle": 0.04})).slo
    assert busy.ttft_mean_ms > calm.ttft_mean_ms
    assert busy.itl_p50_ms > calm.itl_p50_ms


def test_tradeoff_curves_move_the_right_way(capstone):
    tokens = capstone.slo.tradeoff_batched_tokens
    assert [p.x for p in tokens] == sorted(p.x for p in tokens)
    assert 2048 in [p.x for p in tokens]
    for a, b in itertools.pairwise(tokens):
        assert b.ttft_p95_ms <= a.ttft_p95_ms + 1e-9  # bigger chunks: fewer steps per prompt
        assert b.longest_step_ms >= a.longest_step_ms - 1e-9  # ... but longer single steps
    seqs = capstone.slo.tradeoff_max_num_seqs
    assert 160 in [p.x for p in seqs]
    for a, b in itertools.pairwise(seqs):
        assert b.itl_p95_ms >= a.itl_p95_ms - 1e-9  # a bigger batch cap: slower steps at the p95 batch
        assert b.ttft_p95_ms <= a.ttft_p95_ms + 1e-9  # ... but less waiting for a slot
    below_load = [p for p in seqs if p.x < capstone.slo.point.load_batch]
    assert below_load and all(math.isinf(p.ttft_p95_ms) for p in below_load)


def test_max_num_seqs_below_the_load_is_an_slo_problem_naming_the_field():
    d = plan(load_brief("capstone").with_changes({"deployment.max_num_seqs": 100}))
    assert not d.slo.ttft_ok
    assert not d.verdict.meets_slo
    assert any(p.field == "deployment.max_num_seqs" and "slo.ttft_p95_ms" in p.problem for p in d.verdict.problems)


def test_itl_target_missed_is_a_problem():
    d = plan(load_brief("capstone").with_changes({"slo.itl_p95_ms": 10}))
    assert not d.slo.itl_ok
    assert any("slo.itl_p95_ms" in p.problem for p in d.verdict.problems)


def test_rate_given_brief_has_a_budget():
    d = plan(load_brief("qps10-tp4"))
    p = d.slo.point
    assert p.running_batch == pytest.approx(d.operating_point.in_flight, rel=1e-6)
    assert math.isfinite(d.slo.ttft_p95_ms) and math.isfinite(d.slo.itl_p95_ms)


def test_the_headline_states_its_basis_and_the_other_basis_figures(capstone):
    from planner.fmt import num

    basis, warm = capstone.slo.basis, capstone.slo.alternate_point
    assert "queue_basis = cold_cache" in basis and "slo.alternate_point" in basis
    assert num(warm.ttft_p95_ms, "ms") in basis and num(warm.itl_p95_ms, "ms") in basis
    same = plan(load_brief("qps200-chat")).slo  # no prefix hits: both bases are the same
    assert "the two bases are the same" in same.basis and same.alternate_point == same.point
