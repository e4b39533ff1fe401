"""Failure modes (step 6) and cost (step 7): golden figures from reference-figures.md with their tolerances,
and invariants of the re-planned scenarios."""

from __future__ import annotations

import math

import pytest
from conftest import CONTRACT_SCENARIOS

from planner import load_brief, plan
from planner.core import core_design
from planner.cost import DEGRADED_UTILIZATION_TARGET, SPOT_DISCOUNT, SPOT_SHARE
from planner.failures import hit_rate_floor

pytestmark = pytest.mark.unit

TOL = 0.02  # reference-figures.md: 2% unless stated
APPROX = 0.05  # figures the reference gives as "~"


@pytest.fixture(scope="module")
def capstone():
    return plan(load_brief("capstone"))


def _modes(design):
    return {m.scenario.value: m for m in design.failures}


def test_every_scenario_is_present_once(capstone):
    assert [m.scenario.value for m in capstone.failures] == list(CONTRACT_SCENARIOS)
    for m in capstone.failures:
        assert m.title and m.change and m.note


def test_capstone_failures_on_the_consistent_basis(capstone):
    modes = _modes(capstone)
    # reference-figures.md: with the decode batch following the load (Little's law), no-cache basis
    assert modes["one_node_lost"].utilization_no_prefix_cache == pytest.approx(0.56, rel=APPROX)
    assert modes["traffic_doubles"].utilization_no_prefix_cache == pytest.approx(0.90, rel=APPROX)
    # hit rate drops to 20%: ~45% at the configured basis (the seed's 78% does not follow from its arithmetic)
    assert modes["prefix_hit_rate_drops"].utilization == pytest.approx(0.45, rel=APPROX)
    # BF16 revert: decode 2x (prefill already at the BF16 peak in the capstone) gives 73%
    assert modes["revert_to_bf16"].utilization_no_prefix_cache == pytest.approx(0.73, rel=TOL)
    # losing nodes and doubling load raise utilization; the burst leaves the general pool alone
    assert modes["two_nodes_lost"].utilization > modes["one_node_lost"].utilization > capstone.capacity.utilization * 0.99
    assert modes["long_context_burst"].utilization == pytest.approx(capstone.capacity.utilization, rel=1e-9)
    assert "long-context pool" in modes["long_context_burst"].note


def test_capstone_failures_on_the_seed_linear_basis(capstone):
    modes = _modes(capstone)
    # seed: 59% / 68% / 102.7% / 80.8%, scaling its 51.4% linearly (ours starts from 50.9%: 8.7 vs 9.0 ms step)
    assert modes["one_node_lost"].utilization_linear_no_prefix_cache == pytest.approx(0.59, rel=TOL)
    assert modes["two_nodes_lost"].utilization_linear_no_prefix_cache == pytest.approx(0.68, rel=TOL)
    assert modes["traffic_doubles"].utilization_linear_no_prefix_cache == pytest.approx(1.027, rel=TOL)
    assert modes["inputs_double"].utilization_linear_no_prefix_cache == pytest.approx(0.808, rel=TOL)
    # the consistent basis is below the linear one wherever the batch grows
    for name in ("one_node_lost", "two_nodes_lost", "traffic_doubles"):
        assert modes[name].utilization_no_prefix_cache < modes[name].utilization_linear_no_prefix_cache


def test_capstone_summary(capstone):
    s = capstone.failure_summary
    assert s.n_plus_one_ok
    assert s.binding_scenario.value in CONTRACT_SCENARIOS
    assert "planned again by the same function" in s.load_scaling and "capacity under the SLO" in s.load_scaling
    assert "8.76 h" in s.availability_note  # 0.1% of 8,760 h
    failing = [m for m in capstone.failures if not m.ok]
    if failing:
        assert s.binding_scenario in {m.scenario for m in failing}


def test_traffic_doubles_breaks_a_busy_long_context_pool_first(capstone):
    m = _modes(capstone)["traffic_doubles"]
    # the general pool keeps up (at the engine's pace 8 nodes' replicas run at about half their SLO capacity) ...
    assert m.ttft_ok and m.itl_ok and 0.4 < m.load_vs_capacity < 0.7
    # ... and the one long-context node, 39.9% busy with the prompts over 6,000 tokens, carries twice its share
    assert m.ok and capstone.architecture.pools[1].utilization == pytest.approx(0.399, abs=0.001)
    # with 14% long-context traffic that node is 92% busy at the brief's load and cannot carry twice its share
    busier = _modes(plan(capstone.brief.with_changes({"workload.long_context_share": 0.14})))["traffic_doubles"]
    assert busier.ttft_ok and busier.itl_ok and not busier.ok and "long-context pool" in busier.note


def test_every_row_is_the_verdict_plan_gives_with_its_overrides(capstone):
    """failures[].overrides applied with --set give the row's verdict and utilization (one function, one answer)."""
    for m in capstone.failures:
        if not m.overrides:
            continue
        replanned = plan(capstone.brief.with_changes(m.overrides))
        assert m.ok == (replanned.verdict.feasible and replanned.verdict.meets_slo), m.scenario
        assert m.utilization == pytest.approx(replanned.capacity.utilization, rel=1e-9), m.scenario
        assert m.ttft_p95_ms == pytest.approx(replanned.slo.ttft_p95_ms, rel=1e-9), m.scenario
        assert m.load_vs_capacity == pytest.approx(replanned.operating_point.load_vs_capacity, rel=1e-9), m.scenario


def test_failure_verdicts_follow_the_slo_targets(capstone):
    for m in capstone.failures:
        assert m.ttft_ok == (m.ttft_p95_ms <= 500)
        assert m.itl_ok == (m.itl_p95_ms <= 40)
        assert m.ok <= (m.ttft_ok and m.itl_ok)


def test_impossible_scenarios_are_verdicts_not_exceptions():
    qps10 = _modes(plan(load_brief("qps10-tp4")))
    assert not qps10["two_nodes_lost"].ok and math.isinf(qps10["two_nodes_lost"].utilization)
    f = _modes(plan(load_brief("variation-f")))
    assert not f["revert_to_bf16"].ok and "weights do not fit" in f["revert_to_bf16"].note


def test_more_nodes_never_raise_failure_utilization():
    base = load_brief("capstone")
    small, large = plan(base.with_changes({"hardware.nodes": 7})), plan(base.with_changes({"hardware.nodes": 10}))
    for a, b in zip(small.failures, large.failures, strict=True):
        assert b.utilization <= a.utilization + 1e-9, a.scenario


def test_hit_rate_floor_is_a_dependency(capstone):
    """The floor is found by re-planning at each hit rate: just above it `plan --set` meets the SLO, just below not.
    On the capstone the general pool holds down to about 11% (the worked design: 20% still fits)."""
    floor = hit_rate_floor(core_design(capstone.brief))
    assert floor is not None and 0.05 < floor < 0.2
    hit = next(d for d in capstone.config.dependencies if "hit rate" in d.what)
    assert "below" in hit.breaks_if and f"{floor * 100:.1f}%" in hit.breaks_if

    def meets(rate: float) -> bool:
        v = plan(capstone.brief.with_changes({"workload.prefix_hit_rate": rate})).verdict
        return v.feasible and v.meets_slo

    assert meets(min(floor + 0.005, 0.78)) and not meets(floor - 0.01)
    no_cache = plan(capstone.brief.with_changes({"deployment.prefix_caching": False}))
    assert not any("hit rate" in d.what for d in no_cache.config.dependencies)
    fp8 = next(d for d in capstone.config.dependencies if "FP8" in d.what)
    revert = _modes(capstone)["revert_to_bf16"]
    assert f"{revert.utilization * 100:.1f}%" in fp8.breaks_if
    assert f"{revert.utilization_no_prefix_cache * 100:.1f}% without prefix cache" in fp8.breaks_if


# --- cost ---------------------------------------------------------------------------------------------


def test_capstone_cost(capstone):
    c = capstone.cost
    assert c.usd_per_hour == pytest.approx(160, rel=1e-9)  # 64 x $2.50
    assert c.usd_per_year == pytest.approx(1_401_600, rel=1e-9)  # x 8,760 h
    assert c.output_tokens_per_year == pytest.approx(3.12e11, rel=TOL)  # 19,444 x 0.51 x 3.15e7 s
    assert c.usd_per_million_output_tokens == pytest.approx(4.48, rel=TOL)
    assert c.usd_per_million_input_tokens == pytest.approx(1_401_600 / (c.input_tokens_per_year / 1e6), rel=1e-9)
    assert set(c.arithmetic) >= {"usd_per_hour", "usd_per_year", "output_tokens_per_year", "usd_per_million_output_tokens"}


def test_capstone_cost_levers(capstone):
    c = capstone.cost
    levers = {lever.name.split(" ")[0]: lever for lever in c.levers}
    # filling the trough runs the fleet at peak all day: $/M x the average duty
    assert levers["fill"].usd_per_million_output_tokens == pytest.approx(4.48 * 0.51, rel=TOL)
    spot = levers["spot"]
    assert "2 of 8" in spot.name
    assert spot.usd_per_million_output_tokens == pytest.approx(c.usd_per_million_output_tokens * (1 - SPOT_SHARE * SPOT_DISCOUNT), rel=1e-9)
    smaller = levers["smaller"]
    assert smaller.usd_per_million_output_tokens < c.usd_per_million_output_tokens
    nodes = int(smaller.change.split(" -> ")[1].split(" ")[0])
    check = plan(load_brief("capstone").with_changes({"hardware.nodes": nodes}))
    assert check.capacity.utilization_no_prefix_cache <= DEGRADED_UTILIZATION_TARGET
    fewer = plan(load_brief("capstone").with_changes({"hardware.nodes": nodes - 1}))
    assert fewer.capacity.utilization_no_prefix_cache > DEGRADED_UTILIZATION_TARGET
    for lever in c.levers:
        assert "$" in lever.arithmetic and lever.change


def test_cost_follows_price_and_duty():
    base = load_brief("capstone")
    cheap = plan(base.with_changes({"cost.usd_per_gpu_hour": 1.25})).cost
    assert cheap.usd_per_million_output_tokens == pytest.approx(4.48 / 2, rel=TOL)
    busy = plan(base.with_changes({"cost.average_duty": 1.0})).cost
    assert busy.usd_per_million_output_tokens == pytest.approx(4.48 * 0.51, rel=TOL)


def test_the_smaller_fleet_lever_says_none_when_the_fleet_is_already_the_fewest():
    """agent-platform's 8 nodes are the fewest that carry its peak at the ladder's target: the lever says so instead
    of '8 -> 8 nodes; 0.0%'; the capstone's fleet has a smaller one (8 -> 5)."""
    levers = {lever.name: lever for lever in plan(load_brief("agent-platform")).cost.levers}
    same = levers["smaller fleet with a degradation ladder"]
    assert same.change.startswith("none: 8 nodes are already the fewest") and "->" not in same.change
    capstone = {lever.name: lever for lever in plan(load_brief("capstone")).cost.levers}
    assert capstone["smaller fleet with a degradation ladder"].change.startswith("8 -> 5 nodes")
