"""The SLO budget (step 5): the capstone's hand arithmetic, its latency estimates at a full batch, and the
model's own invariants.

reference-figures.md separates the worked design's hand arithmetic (the fixed request path, the 880 new
tokens of a 4,000-token prompt at 78% hits, 31 ms of prefill compute), reproduced as the seed works it, from
its latency estimates under load, which the planner predicts from one operating point at the engine's pace
and checks against the simulator (tests/test_crosscheck.py). The seed's ITL estimate is made at a full batch
of 160: `slo.at_max_batch`.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from planner import apply_overrides, load_brief, plan, preset_names
from planner.fmt import num
from planner.lengths import clamped_moments
from planner.operating_point import REACHES_TARGET, _slo_margin, slo_capacity_rate
from planner.replica import shape_of
from planner.simulator import SimSettings, simulate
from planner.slo import _erlang_c, _queue_wait, _ttft_quantile_s, full_batch_point, length_cv2
from report import render_markdown

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
    assert sum(s.ms for s in slo.itl_waterfall) == pytest.approx(slo.tpot_p50_ms, rel=1e-9)  # a reply's mean gap
    assert slo.ttft_p50_ms <= slo.ttft_p95_ms
    assert slo.itl_p50_ms <= slo.itl_p95_ms
    assert slo.tpot_p50_ms <= slo.tpot_p95_ms


def test_capstone_hand_arithmetic_of_the_ttft_budget(capstone):
    p = capstone.slo.point
    # seed: 880 new tokens after 78% hits on a 4,000-token prompt, 31 ms of pure prefill compute
    assert p.cap_uncached_tokens == pytest.approx(880, rel=0.001)
    assert p.cap_uncached_tokens / capstone.capacity.prefill_tokens_per_s_per_replica * 1e3 == pytest.approx(31, rel=0.05)
    # that prompt fits one 2,048-token step beside the running batch: one chunk
    assert p.chunks == 1
    step = capstone.shape.step  # one chunk: the prompt's tokens and the batch's decode tokens in one step's GEMMs
    cv2, hit_tokens, uncached = length_cv2(1200, 6000), 1200 * 0.78, 1200 * 0.22
    # a prompt token's attention, the mean over gamma lengths weighted by each prompt's uncached tokens: a prompt of L
    # tokens attends over 0.78 L cached and half its 0.22 L new ones, so the mean takes E[L²] / E[L] = 1,200 (1 + CV²)
    attends = (0.78 + 0.22 / 2) * 1200 * (1 + cv2) + 0.5
    prompt_token_s = step.gemm_s_per_token + step.kv_s_per_token * (1 + hit_tokens / uncached) + step.attn_s_per_pair * attends
    gemm_ms = max(880 * prompt_token_s + p.running_batch * (step.gemm_s_per_token + step.lm_head_s_per_seq), step.weights_s) * 1e3
    assert p.prefill_stage_ms == pytest.approx(p.step_fixed_ms + gemm_ms, rel=1e-6)


def test_capstone_itl_at_a_full_batch_against_the_seed_estimate(capstone):
    """The seed estimates ITL at batch 160 (max-num-seqs): decode step 11.5 ms + 8 ms average interleaving + 3 ms
    scheduler, "p50 ~19 ms", and "p95 (steps containing a prefill chunk) ~28 ms". Each figure is reproduced as the
    seed defines it, within reference-figures.md's 20%:

    - its p50 adds the average interleaving to every step: a reply's mean gap, our TPOT p50 (19.4 ms, +2%);
    - its p95 is the step that carries a prefill chunk: ours, with a mean prompt's 264 uncached tokens (1,200 at 78%
      hits) beside the 160 sequences, is 25.5 ms (-9%; the scheduler's 3 ms counted once: 28.5 ms counted it twice);
    - its decode step counts bytes only; the engine's step (planner.step_model) finds the GEMMs at batch 160
      compute-bound under the seed's own 50%-of-BF16 assumption: 12.3 ms, +7% (held to 10%).

    The 95th percentile of the gaps between tokens is another figure: with the batch held full at the engine's pace
    46% of the gaps carry a chunk, so it falls on the longer prompts' chunks (the gamma of mean 1,200 / p95 6,000):
    ~45 ms. The simulator confirms that on the same basis (test below).
    """
    full = capstone.slo.at_max_batch
    assert full.batch == 160 and full.context_tokens == 4000
    assert full.decode_step_ms == pytest.approx(11.5, rel=0.10)  # seed: "decode step at batch 160: 11.5 ms"
    assert full.tpot_p50_ms == pytest.approx(19, rel=SLO_TOL)  # seed: "p50 ~19 ms"
    assert full.chunk_step_ms == pytest.approx(28, rel=SLO_TOL)  # seed: "p95 (steps containing a prefill chunk) ~28 ms"
    assert full.itl_p50_ms == pytest.approx(19, rel=SLO_TOL)
    assert 0.3 < full.mixed_step_share < 0.6
    assert full.itl_p50_ms <= full.tpot_p50_ms <= full.chunk_step_ms <= full.itl_p95_ms
    assert "25.5 ms" in full.arithmetic and "264 uncached tokens" in full.arithmetic


def test_full_batch_itl_agrees_with_the_simulator_on_the_same_basis(capstone):
    """`slo.at_max_batch` is the latency model with max-num-seqs running. Set at the context the simulator's sequences
    actually read (the brief's lengths, not the 4,000-token KV-sizing figure), it meets 160 closed-loop clients on one
    replica: the batch stays full in both. Measured: plan 29.7 req/s, ITL p50 11.4 / p95 40.7 ms, TPOT p50 15.4 ms;
    simulator 29.8 req/s, 10.9 / 39.0 ms, 14.8 ms."""
    brief, shape = capstone.brief, capstone.shape
    p = full_batch_point(brief, shape, brief.running_context_tokens)
    sim = simulate(brief, SimSettings(requests=6000, concurrency=brief.deployment.max_num_seqs))
    assert p.rate_per_replica_per_s == pytest.approx(sim.requests_per_s, rel=0.10)
    assert p.itl_p50_ms == pytest.approx(sim.itl_ms.p50, rel=0.20)
    assert p.itl_p95_ms == pytest.approx(sim.itl_ms.p95, rel=0.20)
    assert p.tpot_p50_ms == pytest.approx(sim.tpot_ms.p50, rel=0.15)


@pytest.mark.parametrize("preset", ["offline-batch", "rl-rollout"])
def test_a_jobs_full_batch_bound_and_its_pace_are_one_figure(preset):
    """A replica at its full batch has one throughput: the SLO budget's full-batch bound (`slo.at_max_batch`) and the
    job's pace (`objective`) state the same rate and the same step. offline-batch's batch of 512 turns over 1,024
    prompt tokens a step, more than the one prompt a step the latency model's prefill slot admits (171% busy at the
    22.5 req/s its pace gave, the bound before): both now read the turnover step, 91.6 ms, 18.6 req/s a replica.
    rl-rollout's slot is 14% busy: the latency model's pace and the turnover agree (3.24 req/s)."""
    d = plan(load_brief(preset))
    full, goal = d.slo.at_max_batch, d.objective
    assert full is not None and goal is not None and full.batch == goal.batch_per_replica
    assert full.rate_per_replica_per_s == pytest.approx(1 / goal.request_s, rel=1e-3)
    assert full.tpot_p50_ms == pytest.approx(goal.decode_step_ms, rel=1e-3)
    assert full.batch * 1e3 / full.tpot_p50_ms == pytest.approx(goal.output_tokens_per_s_per_replica, rel=1e-3)
    seqs = next(f.why for f in d.config.flags if f.flag == "--max-num-seqs")  # the engine limit names the job's step
    assert f"a reply's mean gap {num(goal.decode_step_ms, 'ms')} (the job's step at its full batch)" in seqs


def test_the_full_batch_bound_packs_prompts_as_the_simulator_does():
    """qps10-tp4 with all 256 slots taken turns over 853 prompt tokens a step; the latency model's one-prompt slot
    would be 107% busy at the 19.1 req/s its pace gives (TPOT 55.8 ms). The engine packs prompts by tokens, and so
    does the simulator's closed loop of 256 clients: measured 16.8 req/s, TPOT p50 50.3 ms; the bound now states
    16.8 req/s and 50.7 ms (the turnover step)."""
    d = plan(load_brief("qps10-tp4"))
    full = d.slo.at_max_batch
    assert full is not None and full.batch == 256
    sim = simulate(d.brief, SimSettings(concurrency=full.batch, requests=20 * full.batch))
    assert full.rate_per_replica_per_s == pytest.approx(sim.requests_per_s, rel=0.05)
    assert full.tpot_p50_ms == pytest.approx(sim.tpot_ms.p50, rel=0.05)
    assert "packs prompts by tokens" in full.arithmetic and "853 prompt tokens" in full.arithmetic


def test_capstone_headline_meets_the_slo_at_the_engines_pace(capstone):
    slo, op = capstone.slo, capstone.operating_point
    assert slo.ttft_ok and slo.itl_ok and capstone.verdict.meets_slo and capstone.verdict.availability_ok
    # the running batch is Little's law at the engine's pace, far below the users x duty sizing figure (800 / 6)
    p = slo.point
    assert p.running_batch == pytest.approx(op.in_flight, rel=1e-9)
    assert op.in_flight == pytest.approx(op.rate_per_replica_per_s * op.engine_time_s, rel=1e-6)
    assert op.in_flight < 800 * 0.95 / 6 / 3
    running_context = capstone.brief.running_context_tokens
    assert p.decode_step_ms == pytest.approx(capstone.shape.decode_step_real_s(p.running_batch, running_context) * 1e3, rel=1e-9)
    # the ITL waterfall: interference stretches the decode step and the scheduler into a reply's mean gap
    assert p.itl_interference_ms == pytest.approx((p.decode_step_ms + 3) * p.rho_interference / (1 - p.rho_interference), rel=1e-9)
    # interference: a prompt's steps beyond the decode step each of them also is
    assert p.rho_interference == pytest.approx(
        p.rate_per_replica_per_s * (p.slot_service_ms - p.chunks_mean * (p.decode_step_ms + 3)) / 1e3, rel=1e-9
    )
    assert 0 < p.rho_interference < p.rho_prefill
    assert p.hit_rate == 0.78
    assert "engine's pace" in slo.basis and "78.0%" in slo.basis
    assert slo.queue_model and "M/G/1" in slo.queue_model
    assert "p95" in slo.percentile_method
    # headroom is stated against the replica's capacity under the SLO
    assert op.load_vs_capacity == pytest.approx(op.rate_per_replica_per_s / op.capacity_rate_per_s, rel=1e-9)
    assert 0 < op.load_vs_capacity < 1


def test_queue_formula_is_the_m_g_1_wait_for_the_prefill_slot(capstone):
    """Prompts queue FCFS for the prefill slot; a prompt holds it for its chunk steps, each step costing
    fixed time + max(compute of its tokens, the batch's reads). Checked against draws of the same prompts."""
    p = capstone.slo.point
    brief = capstone.brief
    rng = np.random.default_rng(0)
    cv2 = length_cv2(brief.workload.input_tokens_mean, brief.workload.input_tokens_p95)
    prompts = np.minimum(rng.gamma(1 / cv2, brief.workload.input_tokens_mean * cv2, 2_000_000), brief.deployment.max_model_len - 1)
    uncached = prompts * (1 - p.hit_rate)
    assert p.chunks_mean == 1  # a mean prompt (264 uncached tokens) fits one 2,048-token step
    step = capstone.shape.step  # a prompt token: its GEMMs, its context's KV read, its attention (planner.step_model)
    hit_tokens = brief.workload.input_tokens_mean * p.hit_rate
    token_s = step.gemm_s_per_token + step.kv_s_per_token * (1 + hit_tokens / p.uncached_tokens_mean)
    # each prompt's own attention: its uncached tokens over its cached prefix and the new tokens before them
    work_s = uncached * (token_s + step.attn_s_per_pair * (prompts * p.hit_rate + (uncached + 1) / 2))
    decode_s = p.running_batch * (step.gemm_s_per_token + step.lm_head_s_per_seq)
    service_s = p.step_fixed_ms / 1e3 + np.maximum(work_s + decode_s, p.step_memory_ms / 1e3)
    r = p.rate_per_replica_per_s
    assert p.slot_service_ms == pytest.approx(service_s.mean() * 1e3, rel=0.01)
    rho = r * service_s.mean()
    assert p.prefill_slot_busy == pytest.approx(rho, rel=0.01)
    # a prompt's work is linear and quadratic in its length; the model takes it as a gamma with its mean and CV²,
    # which puts E[S²] a few % off the draws once the weight-read floor clips the short prompts
    assert p.prompt_wait_ms == pytest.approx(r * (service_s**2).mean() / (2 * (1 - rho)) * 1e3, rel=0.05)
    step_wait = p.decode_step_ms / 2  # the rest of the step in progress
    assert p.queue_wait_ms == pytest.approx(p.prompt_wait_ms + p.admission_wait_ms + step_wait, rel=1e-9)
    # the floor a step cannot go below is its GEMMs' weight reads
    assert p.step_memory_ms == pytest.approx(step.weights_s * 1e3, rel=1e-9)


def test_length_variability_fits_known_distributions():
    assert length_cv2(1000, 1000) == 0  # fixed lengths
    assert length_cv2(1000, 1000 * math.log(20)) == pytest.approx(1.0, rel=0.01)  # exponential: p95 = mean x ln 20
    assert length_cv2(1200, 6000) > length_cv2(1200, 3000)


def test_length_variability_grows_with_the_tail_up_to_the_most_skewed_gamma():
    """p95 / mean falls with the gamma's shape from a peak (5.83): below it each ratio has one shape and CV^2 grows
    with the ratio without a jump; past it a ratio is more skew than a gamma has and takes the peak's CV^2 (it was 1000,
    the far side of the peak, from 5.52 on)."""
    ratios = [1.1, 2.0, 3.0, 4.0, 5.0, 5.5, 5.7, 5.8]
    cv2s = [length_cv2(1000, 1000 * r) for r in ratios]
    assert all(a < b for a, b in itertools.pairwise(cv2s))
    assert cv2s[-1] < 12 and length_cv2(1000, 1000 * 5.83) == length_cv2(1000, 100_000) < 12
    assert length_cv2(1000, 5000) == pytest.approx(4.474290333351793, rel=1e-12)  # the capstone's prompts: unchanged


@pytest.mark.parametrize("ratio", [1.02, 1.05, 1.3, 2.0, 2.5, 3.0, 4.0, 4.7, 4.8, 5.0, 5.8])
def test_length_variability_is_the_shape_whose_p95_over_mean_is_the_ratio(ratio: float) -> None:
    """The root from Wilson-Hilferty's start (or the whole bracket past ratio ~4.7, where it has none): SciPy's quantile
    of the shape it gives, over the shape, is the ratio to ~1e-12."""
    from scipy.special import gammaincinv

    shape = 1 / length_cv2(1000, 1000 * ratio)
    assert gammaincinv(shape, 0.95) / shape == pytest.approx(ratio, rel=1e-12)


def test_erlang_c_reduces_to_m_m_1():
    # one slot, offered load 0.5, hold 1 s: a request waits with probability rho = 0.5; the M/M/1 wait is
    # rho / (1 - rho) x hold = 1 s on average, 2 s given a wait (hold / (slots - offered))
    assert _erlang_c(0.5, 1, 1.0) == pytest.approx((0.5, 1.0), rel=1e-9)
    assert _erlang_c(2.0, 2, 1.0) == (1.0, math.inf)
    assert _erlang_c(0.0, 4, 1.0) == (0.0, 0.0)


def test_ttft_takes_the_slot_wait_as_a_distribution():
    """The batch slot's wait is zero for most requests and about exponential for the rest; added to the prefill slot's
    M/G/1 wait, the TTFT quantile is that of their sum (it added the slot wait's mean to every request, so the p50 and
    p95 sat together). Checked against draws of the two waits: zero or gamma, plus zero or exponential."""
    rng = np.random.default_rng(7)
    stages = np.array([0.01, 0.02, 0.04])
    n = 2_000_000
    for slot, prompt_wait_s, tail, admitted, admission_s in (
        (0.3, 0.02, 0.7, 0.2, 0.1),
        (0.0, 0.0, 1.0, 0.2, 0.1),
        (0.5, 0.2, 2.0, 0.05, 0.02),
    ):
        given_p = prompt_wait_s / slot if slot > 0 else 0.0
        wp = np.where(rng.random(n) < slot, rng.gamma(tail, given_p / tail, n), 0.0)
        wa = np.where(rng.random(n) < admitted, rng.exponential(admission_s / admitted, n), 0.0)
        drawn = rng.choice(stages, n) + wp + wa
        busy, mean_s, shape = _queue_wait(slot, prompt_wait_s, tail, admitted, admission_s)
        assert mean_s == pytest.approx(prompt_wait_s + admission_s, rel=1e-12)
        assert busy == pytest.approx(1 - (1 - slot) * (1 - admitted), rel=1e-12)
        for q in (0.5, 0.9, 0.95, 0.99):
            assert _ttft_quantile_s(stages, busy, mean_s, shape, q) == pytest.approx(np.quantile(drawn, q), rel=0.06)
    # the slot wait alone: exponential given a wait
    assert _queue_wait(0.0, 0.0, 1.0, 0.2, 0.1) == pytest.approx((0.2, 0.1, 1.0), rel=1e-9)


def test_max_num_seqs_near_the_running_batch_spreads_the_ttft():
    """capstone with max-num-seqs 32 over the 26 sequences its load keeps running: a fifth of requests wait for a
    batch slot (519 ms on average when they do), the rest not at all. The plan read p50 / p95 TTFT 165 / 192 ms (the
    slot wait's 106 ms mean on every request) and met the 500 ms target; the simulator (20,000 requests, seeds 0-2)
    reads p50 63 ms and p95 567 / 628 / 774 ms, and max-rate finds 8.62 req/s where the plan's SLO capacity was 9.52."""
    result = plan(load_brief("capstone").with_changes({"deployment.max_num_seqs": 32}))
    assert result.slo.ttft_p50_ms < 100
    assert 550 < result.slo.ttft_p95_ms < 900
    assert not result.slo.ttft_ok
    assert 8.2 < result.operating_point.capacity_rate_per_s < 9.0
    # the advice raises max-num-seqs until the slot wait leaves p95 TTFT within its target: 40 (it named 32 for a
    # replica at 1 slot, and nothing at 32), on the problem line, the engine configuration and the fix alike
    problem = next(p for p in result.verdict.problems if p.field == "deployment.max_num_seqs")
    assert problem.overrides == {"deployment.max_num_seqs": 40} and "from 32 to ~40" in problem.change
    assert [r.overrides for r in result.config.recommendations] == [{"deployment.max_num_seqs": 40}]
    assert result.fix is not None and result.fix.setting and result.fix.overrides == {"deployment.max_num_seqs": 40}
    raised = plan(load_brief("capstone").with_changes({"deployment.max_num_seqs": 40}))
    assert raised.slo.ttft_ok and raised.slo.ttft_p95_ms < 150


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
    low = plan(base.with_changes({"workload.prefix_hit_rate": 0.2})).slo
    high = plan(base.with_changes({"workload.prefix_hit_rate": 0.9})).slo
    assert high.ttft_p95_ms < low.ttft_p95_ms  # fewer tokens to prefill, a shorter queue
    assert high.itl_p95_ms < low.itl_p95_ms  # smaller chunks ride in fewer, shorter steps
    assert high.tpot_p50_ms < low.tpot_p50_ms  # the other prompts' prefill steals less of the GPU
    assert [s.ms for s in high.itl_waterfall] != [s.ms for s in low.itl_waterfall]


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
    assert all(p.x >= capstone.slo.point.load_batch for p in seqs)  # the load (26 running) is below every option


def test_max_num_seqs_below_the_load_is_a_problem_naming_the_field():
    d = plan(load_brief("capstone").with_changes({"deployment.max_num_seqs": 20}))  # 26 sequences would run
    assert not d.operating_point.stable and d.operating_point.limit == "slots"
    assert not d.verdict.feasible and not d.verdict.meets_slo
    problem = next(p for p in d.verdict.problems if p.field == "deployment.max_num_seqs")
    assert "raise deployment.max_num_seqs" in problem.change
    below = [p for p in d.slo.tradeoff_max_num_seqs if p.x < 26]
    assert below and all(math.isinf(p.ttft_p95_ms) for p in below)


def test_itl_target_missed_is_a_problem():
    d = plan(load_brief("capstone").with_changes({"slo.itl_p95_ms": 8}))  # p95 ITL 8.1 ms, above the 6.6 ms floor
    assert not d.slo.itl_ok
    assert any("slo.itl_p95_ms" in p.problem for p in d.verdict.problems)


def test_rate_given_brief_has_a_budget():
    d = plan(load_brief("qps10-tp4"))
    p = d.slo.point
    assert p.running_batch == pytest.approx(d.operating_point.in_flight, rel=1e-6)
    assert math.isfinite(d.slo.ttft_p95_ms) and math.isfinite(d.slo.itl_p95_ms)


def test_the_itl_target_judges_what_the_brief_names():
    """slo.itl_metric: per-token gaps (itl, the default) or each reply's mean gap (tpot, the 200-QPS seed's TPOT SLO)."""
    capstone = plan(load_brief("capstone")).slo
    assert capstone.itl_metric == "itl" and capstone.judged_itl_p95_ms == capstone.itl_p95_ms
    chat = plan(load_brief("qps200-chat")).slo
    assert chat.itl_metric == "tpot" and chat.judged_itl_p95_ms == chat.tpot_p95_ms
    assert "TPOT" in chat.basis


def test_tpot_p95_is_not_below_its_p50_at_light_load():
    """One request a second of 50 / 10 tokens on one A100 (a model and GPU of the base catalog)."""
    brief = load_brief("capstone").with_changes(
        {
            "model.name": "llama-3.1-8b",
            "hardware.gpu": "a100-80gb",
            "hardware.gpus_per_node": 4,
            "hardware.nodes": 1,
            "deployment.tp": 1,
            "workload.users": None,
            "workload.request_rate": 1.0,
            "workload.input_tokens_mean": 50,
            "workload.input_tokens_p95": 50,
            "workload.output_tokens_mean": 10,
            "workload.output_tokens_p95": 10,
            "workload.prefix_hit_rate": 0.0,
            "efficiency.bandwidth_fraction": 1.0,
        }
    )
    slo = plan(brief).slo
    assert slo.tpot_p95_ms >= slo.tpot_p50_ms


@pytest.mark.parametrize("name", preset_names())
def test_the_capacity_under_the_slo_meets_the_slo(name: str):
    """The capacity rate is the end of the search's last bracket that meets both targets, never the middle, which
    missed them by a hair on four presets (variation-f, variation-g, offline-batch, rag)."""
    brief = load_brief(name)
    shape = shape_of(brief)
    assert _slo_margin(brief, shape, slo_capacity_rate(brief, shape)) <= 0


def test_the_capacity_follows_the_vision_encoder():
    """The capacity cache's key holds the mechanisms on the first token's path: eight times the encoder's patches an
    image lowers the capacity (it read the first brief's 16.3 req/s)."""
    brief = load_brief("multimodal")
    heavier = brief.with_changes({"multimodal.encoder_patches_per_image": brief.multimodal.encoder_patches_per_image * 8})
    assert slo_capacity_rate(heavier, shape_of(heavier)) < 0.9 * slo_capacity_rate(brief, shape_of(brief))


def test_the_validation_ramp_names_what_reaches_its_target_at_the_capacity():
    """Review s4 finding 6: the document said TPOT reaches the 40 ms ITL target at the capstone's 29.4 req/s; planned
    at that rate (the reviewer's fleet: 33,400 users on 9 nodes, 2 of them long-context), TPOT is 14.8 ms while the
    p95 ITL and the p95 TTFT reach their targets. The ramp names those, as the plan at that rate gives them. (The
    capacity is 29.1 req/s since the batch slot's wait is a distribution, not its mean: 33,060 users.)"""
    base = plan(load_brief("capstone"))
    at = plan(
        apply_overrides(
            load_brief("capstone"),
            {"workload.users": 33060, "hardware.nodes": 9, "deployment.long_context_nodes": 2},
        )
    )
    op = at.operating_point
    assert op.rate_per_replica_per_s == pytest.approx(base.operating_point.capacity_rate_per_s, rel=0.005)
    # p95 ITL there is under its target since prompts clipped at max-model-len count one chunk each (the simulator's
    # plan check at that rate: 32 ms); p95 TTFT binds
    assert at.slo.itl_p95_ms < 40
    assert at.slo.ttft_p95_ms == pytest.approx(500, rel=0.05)
    assert at.slo.tpot_p95_ms < 0.6 * 40  # what the old sentence claimed reaches the target (the simulator: 15.8 ms)
    said = base.operating_point.capacity_reached
    assert "p95 TTFT" in said and "TPOT" not in said
    assert ("p95 ITL" in said) is (at.slo.itl_p95_ms >= REACHES_TARGET * 40)
    ramp = next(line for line in render_markdown(base).splitlines() if "Raise the rate toward" in line)
    assert said in ramp and "TPOT should reach" not in ramp


@pytest.mark.parametrize("name", ["capstone", "qps200-chat", "qps10-tp4", "rag", "chat-disaggregated"])
def test_the_p95s_named_at_the_capacity_are_those_at_their_targets(name: str):
    """Re-planned with the rate scaled to the capacity (per replica), each p95 the plan says reaches its target there is
    within 5% of it, and one it does not name is under it. (agent-platform is left out: its hit rate follows the rate.)"""
    brief = load_brief(name)
    base = plan(brief)
    op = base.operating_point
    scale = op.capacity_rate_per_s / op.rate_per_replica_per_s
    if brief.workload.request_rate is not None:
        scaled = {"workload.request_rate": brief.workload.request_rate * scale}
    else:
        scaled = {"workload.users": round(brief.workload.users * scale)}
    at = plan(apply_overrides(brief, scaled)).slo
    judged = at.itl_metric.judged(at.itl_p95_ms, at.tpot_p95_ms)
    for label, value, target in (
        ("p95 TTFT", at.ttft_p95_ms, at.ttft_target_ms),
        (f"p95 {at.itl_metric.value.upper()}", judged, at.itl_target_ms),
    ):
        if label in op.capacity_reached:
            assert value == pytest.approx(target, rel=0.05), (label, value)
        else:
            assert value < target, (label, value)


def test_clamped_moments_match_their_integrals():
    """E[Z^n] of a gamma clamped to [floor, ceiling], against the integral over its density (scipy): the partial
    moments come from one incomplete gamma a bound by the recurrence P(a + 1, z) = P(a, z) - z^a e^-z / Gamma(a + 1)."""
    from scipy import integrate, stats

    for mean, cv2, floor, ceiling in (
        (300.0, 1.2, 10.0, 5000.0),
        (50.0, 4.0, 1e-3, 1e5),
        (1000.0, 0.01, 900.0, 1100.0),
        (5.0, 2.0, 0.0, 3.0),
    ):
        y = stats.gamma(1 / cv2, scale=mean * cv2)
        for n, got in zip((1, 2, 3), clamped_moments(mean, cv2, floor, ceiling), strict=True):
            inside, _ = integrate.quad(lambda t, n=n, y=y: t**n * y.pdf(t), floor, ceiling, limit=200, epsabs=0, epsrel=1e-12)
            want = floor**n * y.cdf(floor) + inside + ceiling**n * y.sf(ceiling)
            assert got == pytest.approx(want, rel=1e-9)


def _clamped_moments_in_one(mean: float, cv2: float, floor: float, ceiling: float) -> tuple[float, float, float]:
    """clamped_moments as one pass worked it out before its ceiling's terms were kept apart (lengths._below_ceiling)."""
    from planner.lengths import _cdfs_up, _full_moments, _log_gammas_up
    from planner.numerics import gamma_p

    shape, scale = 1 / cv2, mean * cv2
    at_floor = gamma_p(shape, floor / scale) if floor > 0 else 0.0
    at_ceiling = gamma_p(shape, ceiling / scale) if math.isfinite(ceiling) else 1.0
    log_gammas_up = _log_gammas_up(shape)
    floor_up = _cdfs_up(shape, floor / scale, at_floor, log_gammas_up)
    ceiling_up = _cdfs_up(shape, ceiling / scale, at_ceiling, log_gammas_up)
    full = _full_moments(shape, scale, log_gammas_up)
    above = 1 - at_ceiling
    moments = []
    for n in (1, 2, 3):
        middle = full[n - 1] * (ceiling_up[n - 1] - floor_up[n - 1])
        moments.append(floor**n * at_floor + middle + (ceiling**n * above if above > 0 else 0.0))
    return moments[0], moments[1], moments[2]


@pytest.mark.parametrize("mean, cv2, ceiling", [(300.0, 1.2, 5000.0), (50.0, 4.0, 1e5), (2113.2, 0.33, 9.7e4), (5.0, 2.0, math.inf)])
def test_clamped_moments_under_a_kept_ceiling_are_the_one_pass_moments_to_the_bit(mean, cv2, ceiling):
    """The ceiling's terms worked out once (lengths._below_ceiling) and reused at every floor give each moment to the
    bit, at floors from none through the bulk of the gamma to near the ceiling, each floor asked twice."""
    from planner.lengths import _below_ceiling

    _below_ceiling.cache_clear()
    clamped_moments.cache_clear()
    for floor in (0.0, 1e-3 * mean, 0.1 * mean, mean, 3 * mean, 0.0, 0.1 * mean):
        assert clamped_moments(mean, cv2, floor, ceiling) == _clamped_moments_in_one(mean, cv2, floor, ceiling)
    assert _below_ceiling.cache_info().misses == 1


@pytest.mark.parametrize("name", ["offline-batch", "rl-rollout"])
def test_a_deadline_designs_words_never_say_a_latency_target_judges_it(name):
    """An offline job or a rollout keeps the brief's latency targets only as a reference: the SLO basis, the sizing
    utilization, the capacity's arithmetic and the --max-num-seqs reason say so, and none claims a target judges it."""
    design = plan(load_brief(name))
    reason = next(f.why for f in design.config.flags if f.flag == "--max-num-seqs")
    texts = {
        "slo basis": design.slo.basis,
        "capacity": design.operating_point.arithmetic["capacity_rate_per_s"],
        "max-num-seqs": reason,
    }
    if design.brief.workload.request_rate is not None:
        texts["utilization"] = design.capacity.arithmetic["utilization"]
    for where, text in texts.items():
        assert "deadline" in text and "reference" in text, where
        assert "The ITL target judges" not in text and ("against the" not in text or where == "capacity"), where
    latency = plan(load_brief("capstone"))
    assert "The ITL target judges" in latency.slo.basis and "reference" not in latency.operating_point.arithmetic["capacity_rate_per_s"]


def test_a_full_batch_with_no_room_for_prompts_is_unbounded_not_an_error():
    """max-num-batched-tokens equal to max-num-seqs leaves a full batch's step no token for a prompt: the full-batch
    bound admits none (0 req/s a replica) instead of dividing by the zero tokens carried."""
    import json

    from planner.cli import design_json

    design = plan(load_brief("capstone").with_changes({"deployment.max_num_seqs": 16, "deployment.max_num_batched_tokens": 16}))
    bound = design.slo.at_max_batch
    assert bound is not None and bound.rate_per_replica_per_s == 0.0
    json.dumps(design_json(design), allow_nan=False)


@pytest.mark.parametrize(
    ("changes", "itl_checked"),
    [({"deployment.max_num_seqs": 1}, False), ({"workload.users": 60_000}, True)],
)
def test_a_full_batch_without_a_steady_state_feels_the_prompts_it_admits(changes: dict[str, int], itl_checked: bool) -> None:
    """Last read: capstone with max_num_seqs=1 planned TPOT 8.02 ms against the simulator's p50 7.52 ms; with 60,000
    users, TPOT 20.2 ms and p95 ITL 58.6 ms (ITL missed) against the simulator's 14.8 ms and 38.2 ms (met): the unstable
    replica's interference counted prompts at the offered rate (52.8 req/s a replica), while a full batch takes them only
    as fast as its sequences finish (full_batch_turnover: 28.6 req/s; the simulator finishes 30.8). Tolerances: TPOT
    within 4%, p95 ITL within 10% of the simulator's, 3,000 requests at the plan's rate per replica."""
    brief = load_brief("capstone").with_changes(changes)
    design = plan(brief)
    assert not design.operating_point.stable
    run = simulate(brief, SimSettings(requests=3000))
    assert design.operating_point.tpot_ms == pytest.approx(run.tpot_ms.p50, rel=0.04)
    assert design.slo.tpot_p50_ms == pytest.approx(run.tpot_ms.p50, rel=0.04)
    if itl_checked:
        assert design.slo.itl_p95_ms == pytest.approx(run.itl_ms.p95, rel=0.10)
        assert design.slo.itl_ok == (run.itl_ms.p95 <= brief.slo.itl_p95_ms)


def test_tpot_p95_follows_the_replies_that_prompts_interrupt():
    """Review s11: under heavy chunked-prefill interference the p95 TPOT was the mean interference stretched by a
    normal spread of the prompts a reply sees (41.6 ms on agent-platform with 128 GB of CPU KV a node, target 60 ms:
    the plan met it, the simulator missed, 63.1 / 61.7 ms at seeds 0 / 1). A reply is a busy period: the prompts
    arriving during it lengthen it and so let more in, and short replies spread most."""
    agent = plan(load_brief("agent-platform").with_changes({"kv_tiers.cpu_gb_per_node": 128})).slo
    assert agent.itl_metric == "tpot" and agent.tpot_p50_ms == pytest.approx(36.0, rel=0.03)  # the simulator: 36.0
    assert agent.tpot_p95_ms > agent.itl_target_ms and not agent.itl_ok  # the simulator's verdict
    assert agent.tpot_p95_ms == pytest.approx(62.4, rel=0.2)
    chat = plan(load_brief("qps200-chat").with_changes({"workload.request_rate": 230})).slo
    assert chat.tpot_p95_ms == pytest.approx(22.1, rel=0.15)  # the simulator's; it read 16.5 ms (fixed reply lengths)
    assert "busy period" in chat.arithmetic["tpot_p95_ms"] and f"= {num(chat.tpot_p95_ms, 'ms')}" in chat.arithmetic["tpot_p95_ms"]


def test_itl_p95_counts_the_steps_that_pack_a_queued_prompt():
    """Review s11: qps10-tp4 at 14 req/s (1,000-token prompts, 2,048 tokens a step) read p95 ITL 42.6 ms, one prompt's
    step, against the simulator's 76.2 ms (both seeds): the engine fills a step's room with the next queued prompt, so
    more than 5% of the gaps fall on steps carrying ~1,950 prompt tokens. Light load packs almost nothing."""
    busy = plan(load_brief("qps10-tp4").with_changes({"workload.request_rate": 14})).slo
    assert busy.itl_p95_ms == pytest.approx(76.2, rel=0.1)
    assert "packed" in busy.arithmetic["itl_p50_ms"]
    from planner.slo import _packed_share

    assert _packed_share(0.0, 0.01, 0.04, 0.3) == 0.0
    light, heavy = _packed_share(1.0, 0.0125, 0.0426, 0.05), _packed_share(14.0, 0.0125, 0.0426, 0.3)
    assert 0 < light < 0.05 < heavy < 1


def test_the_budgets_stage_quantile_is_numpys_to_the_bit() -> None:
    """latency_at's p95 of the covered prompts' stages (slo._linear_quantile) is np.quantile's figure exactly: the same
    order statistics and interpolation, infinities and NaN included."""
    from planner.slo import _linear_quantile

    rng = np.random.default_rng(7)
    arrays = [np.array([math.inf]), np.array([1.0, math.inf]), np.array([1.0, math.nan]), np.array([3.0, 3.0, 3.0])]
    arrays += [rng.gamma(2.0, 1.0, n) * 10 ** rng.uniform(-6, 3) for n in range(1, 100)]
    for values in arrays:
        for q in (0.95, 0.5, 0.0, 1.0):
            with np.errstate(invalid="ignore"):  # inf - inf: numpy warns where the port gives the same NaN silently
                expected = np.quantile(values, q)
            assert np.array_equal(expected, _linear_quantile(values, q), equal_nan=True)
