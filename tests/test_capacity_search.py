"""The SLO-capacity search against a brute-force reference: a bisection of the same margin (both p95s against their
targets) to 1e-7 of the rate; and the clause on what is reached at the capacity, read from the search's probes, against
the clause with every p95 worked out there."""

from __future__ import annotations

import math

import pytest

from planner import load_brief, plan
from planner.brief import ItlMetric
from planner.core import core_design
from planner.operating_point import (
    _CAPACITY_TOLERANCE,
    JUST_PAST,
    _limit_of,
    _nearness_at_ends,
    _p95s_at,
    _pace_fn,
    _slo_margin,
    _slot_peaks,
    _solve,
    _steady,
    reached_at_capacity,
    slo_capacity_rate,
)
from planner.slo import engine, judged_p95s_ms, latency_point

pytestmark = pytest.mark.unit

_REFERENCE_RTOL = 1e-7  # the bisection's bracket, of the rate

# presets whose searches take each path (a token gap's knee, a TTFT just short of saturation, a near-linear gap, a
# jump of the gap's p95 over its target, a target bound by the TTFT) and changes that move them: the jump cases (the
# gap's p95 jumps over its target where the share of gaps on mixed steps passes 5%: qps10-tp4 with tighter ITL targets,
# rag and offline-batch with doubled prompts), a climb past the knee (rag's tighter ITL) and a jump past it (qps10-tp4's
# looser ITL: a second jump, at a share of ~27%)
_CASES = [
    ("rag", {}),
    ("rag", {"workload.input_tokens_mean": 16000}),
    ("rag", {"slo.itl_p95_ms": 48.0}),
    ("offline-batch", {"workload.input_tokens_mean": 3000}),
    ("qps10-tp4", {"slo.itl_p95_ms": 28.0}),
    ("qps10-tp4", {"slo.itl_p95_ms": 60.0}),
    ("multimodal", {}),
    ("moe-deepseek", {}),
    ("lora-platform", {}),
    ("qps10-tp4", {"slo.itl_p95_ms": 36.0}),
    ("rl-rollout", {}),
    ("capstone", {"slo.ttft_p95_ms": 200.0}),
    ("chat-speculative", {}),
    ("variation-f", {}),
    ("chat-speculative", {"deployment.max_num_seqs": 256}),  # speculation stops below the limit: the slot's share peaks there
]


def _case(name: str, changes: dict[str, float]):
    brief = load_brief(name)
    brief = brief.with_changes(changes) if changes else brief
    design = plan(brief)
    return design, design.brief, core_design(design.brief).shape


def _bisected(brief, shape, capacity: float) -> float:
    """The highest rate that meets both targets, by bisection of the margin between half the capacity found (meets) and
    a tenth over it (misses), to _REFERENCE_RTOL."""
    low, high = capacity / 2, capacity * 1.1
    assert _slo_margin(brief, shape, low) <= 0 < _slo_margin(brief, shape, high)
    while high - low > _REFERENCE_RTOL * low:
        mid = (low + high) / 2
        low, high = (mid, high) if _slo_margin(brief, shape, mid) <= 0 else (low, mid)
    return low


@pytest.mark.parametrize(("name", "changes"), _CASES)
def test_the_capacity_search_lands_within_its_tolerance_of_a_bisection(name, changes):
    """The answer meets both targets and lies within _CAPACITY_TOLERANCE below the bisection's crossing."""
    _, brief, shape = _case(name, changes)
    capacity = slo_capacity_rate(brief, shape)
    reference = _bisected(brief, shape, capacity)
    assert _slo_margin(brief, shape, capacity) <= 0
    assert capacity <= reference * (1 + _REFERENCE_RTOL)
    assert reference - capacity <= _CAPACITY_TOLERANCE * capacity + _REFERENCE_RTOL * reference


@pytest.mark.parametrize(("name", "changes"), _CASES)
def test_the_clause_at_the_capacity_reads_as_with_every_p95_worked_out(name, changes):
    """The search's probes stand for a p95 it did not work out at the capacity (one under its share of the target at a
    higher rate): the clause reads word for word as the one from both p95s worked out there."""
    design, brief, shape = _case(name, changes)
    capacity = design.operating_point.capacity_rate_per_s
    worked = reached_at_capacity(brief, _p95s_at(brief, shape, capacity), _p95s_at(brief, shape, capacity * JUST_PAST))
    assert design.operating_point.capacity_reached == worked


@pytest.mark.parametrize("name", ["rag", "qps10-tp4", "offline-batch", "capstone", "agent-platform"])
def test_the_share_beside_the_p95s_is_the_latency_points_mixed_step_share(name):
    """judged_p95s_ms's share of token gaps on mixed steps (the capacity search's knee coordinate) is the one the
    latency point states, at rates up to the capacity; nan where the judged p95 is not the token gap's (a TPOT target,
    agent-platform's) or not worked out."""
    _, brief, shape = _case(name, {})
    capacity = slo_capacity_rate(brief, shape)
    for rate in (capacity / 2, capacity * 0.9, capacity):
        n = _steady(brief, shape, rate)[0]
        _, _, share = judged_p95s_ms(engine(brief, shape), brief, rate, n)
        if brief.slo.itl_metric is ItlMetric.itl:
            assert share == latency_point(brief, shape, rate, n).mixed_step_share
        else:
            assert math.isnan(share)
        assert math.isnan(judged_p95s_ms(engine(brief, shape), brief, rate, n, (True, False))[2])


_RATE_SHARES = [0.02 * 1.12**k for k in range(50)]  # of the SLO capacity: rates the measures are compared at (0.02 to ~5)

# besides the search's cases (chat-speculative's with 256 seqs among them: a prompt's time on the slot peaks at the last
# batch speculation runs at, not at the limit), briefs where the prefill slot's share sets the measure
_MEASURE_CASES = [*_CASES, ("qps200-chat", {}), ("offline-batch", {}), ("agent-platform", {})]


@pytest.mark.parametrize(("name", "changes"), _MEASURE_CASES)
def test_the_saturation_measure_from_the_top_batch_equals_the_solves(name, changes):
    """Where the paces at the first batch, the limit and the prefill slot's peaks settle the saturation measure
    (_nearness_at_ends), it is the running-batch solve's, bit for bit, at rates from well under the capacity to far
    past saturation."""
    _, brief, shape = _case(name, changes)
    limit, _ = _limit_of(brief, shape)
    peaks = _slot_peaks(engine(brief, shape).spec, limit)
    capacity = slo_capacity_rate(brief, shape)
    settled = 0
    for share in _RATE_SHARES:
        rate = capacity * share
        pace_at = _pace_fn(brief, shape, rate)
        at_ends = _nearness_at_ends(rate, pace_at, limit, peaks)
        if at_ends is not None:
            settled += 1
            assert at_ends == _solve(rate, pace_at, limit)[2]
    assert settled > 0
