"""Grid searches steered by the verdict's margin: the same grid point a bisection finds, in fewer re-plans."""

from __future__ import annotations

import math
import random

import pytest

import planner.failures as failures
import planner.resize as resize
from planner import load_brief
from planner.core import core_design
from planner.failures import hit_rate_floor
from planner.grid_search import first_meeting
from planner.mechanisms import resolve

pytestmark = pytest.mark.unit


def _bisection(holds, low: int, high: int) -> int:
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if holds(mid) else (mid, high)
    return high


@pytest.mark.parametrize("seed", range(40))
def test_the_answer_is_the_bisections_whatever_the_margin_says(seed: int) -> None:
    """The margin only chooses where to look: smooth, flat, infinite or misleading, the answer is the flip point."""
    rng = random.Random(seed)
    width = rng.choice([2, 3, 10, 780, 100_000])
    flip = rng.randint(1, width)
    kind = seed % 4
    margins = {
        0: lambda k: math.log(1.5) * (flip - 0.5 - k) / width,  # smooth, crosses 0 between the grid points
        1: lambda k: 0.3,  # flat: set by something the grid does not move
        2: lambda k: math.inf,  # no hint
        3: lambda k: rng.uniform(-1, 1),  # misleading
    }

    def probe(k: int) -> tuple[bool, float]:
        return k >= flip, margins[kind](k)

    holds = lambda k: k >= flip  # noqa: E731
    assert first_meeting(probe, 0, width, margins[kind](0), margins[kind](width)) == _bisection(holds, 0, width) == flip


def test_a_smooth_margin_closes_the_bracket_in_a_few_probes() -> None:
    flip, width, probes = 107, 780, []

    def probe(k: int) -> tuple[bool, float]:
        probes.append(k)
        return k >= flip, math.log((flip - 0.5 + 300) / (k + 300))  # convex, like a busy share's log

    assert first_meeting(probe, 0, width, *(probe(k)[1] for k in (0, width))) == flip
    assert len(probes) - 2 <= 6  # a bisection takes 10


def _counting(monkeypatch: pytest.MonkeyPatch, module: object) -> list[object]:
    calls: list[object] = []
    inner = module.verdict_only  # type: ignore[attr-defined]

    def counted(brief):  # type: ignore[no-untyped-def]
        calls.append(brief)
        return inner(brief)

    monkeypatch.setattr(module, "verdict_only", counted)
    return calls


def test_the_capstones_hit_rate_floor_takes_eight_re_plans_not_twelve(monkeypatch: pytest.MonkeyPatch) -> None:
    stated = load_brief("capstone")
    base = core_design(resolve(stated))
    calls = _counting(monkeypatch, failures)
    floor = hit_rate_floor(base, stated)
    assert floor is not None and (floor.meets_down_to, floor.misses_at) == (0.107, 0.106)  # as the bisection found it
    assert len(calls) <= 8


def test_no_fleet_meets_is_asked_of_the_largest_once_the_margin_stops_moving(monkeypatch: pytest.MonkeyPatch) -> None:
    """Variation F misses at any fleet (its margin does not move with the nodes): the fleet fix asks 100,000 nodes
    after two doublings instead of doubling fifteen times to learn it."""
    stated = load_brief("variation-f")
    calls = _counting(monkeypatch, resize)
    assert resize.fewest_nodes_meeting(stated) is None
    assert len(calls) <= 5
