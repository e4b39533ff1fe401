"""$ per million output tokens against fleet size agrees with planning each fleet in full."""

from __future__ import annotations

import pytest

from planner import load_brief, plan
from planner.fleet import cost_vs_fleet, fleet_sizes

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("preset", ["capstone", "qps10-tp4", "variation-g"])
def test_fleet_points_match_the_full_plan(preset: str) -> None:
    brief = load_brief(preset)
    points = {p.nodes: p for p in cost_vs_fleet(brief)}
    assert brief.hardware.nodes in points
    for n in {min(points), brief.hardware.nodes, max(points)}:
        full = plan(brief.with_changes({"hardware.nodes": n}))
        assert points[n].usd_per_million_output_tokens == pytest.approx(full.cost.usd_per_million_output_tokens, rel=1e-9)
        assert points[n].utilization == pytest.approx(full.capacity.utilization, rel=1e-9)
        assert points[n].carries_peak == (full.capacity.utilization <= 1)
        assert points[n].gpus == full.cost.gpus


def test_more_nodes_cost_more_per_token_and_carry_more() -> None:
    points = cost_vs_fleet(load_brief("capstone"))
    prices = [p.usd_per_million_output_tokens for p in points]
    utils = [p.utilization for p in points]
    assert prices == sorted(prices) and utils == sorted(utils, reverse=True)


def test_fleet_sizes_span_half_to_double() -> None:
    assert fleet_sizes(8) == tuple(range(4, 17))
    assert fleet_sizes(1) == (1, 2)
    sizes = fleet_sizes(64)
    assert sizes[0] == 32 and sizes[-1] <= 128 and len(sizes) <= 13
