"""Grid searches steered by the verdict's margin: the same grid point a bisection finds, in fewer re-plans."""

from __future__ import annotations

import math
import random

import pytest

import planner.core as core_module
import planner.headroom as headroom_module
import planner.resize as resize
from benchmarks.plan_speed import _clear_all
from planner import load_brief
from planner.core import core_design
from planner.failures import hit_rate_floor
from planner.grid_search import around_guess, bisection_bracket, confirmed, first_meeting
from planner.mechanisms import resolve

pytestmark = pytest.mark.unit


@pytest.fixture(autouse=True)
def _cold_planner() -> None:
    """Every planner cache emptied first (benchmarks.plan_speed's cold start): what a test counts is its own work,
    not a hint or a core an earlier test left."""
    _clear_all()


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
    for guess in (flip, flip - 1, rng.randint(-5, width + 5)):  # last time's answer, right or not
        assert first_meeting(probe, 0, width, margins[kind](0), margins[kind](width), guess) == flip


def test_a_smooth_margin_closes_the_bracket_in_a_few_probes() -> None:
    flip, width, probes = 107, 780, []

    def probe(k: int) -> tuple[bool, float]:
        probes.append(k)
        return k >= flip, math.log((flip - 0.5 + 300) / (k + 300))  # convex, like a busy share's log

    assert first_meeting(probe, 0, width, *(probe(k)[1] for k in (0, width))) == flip
    assert len(probes) - 2 <= 6  # a bisection takes 10


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """The briefs re-planned for a verdict alone from here on (a verdict the plan or a failure row worked out is not
    one; count them with len(set(...)): a brief asked twice is planned once)."""
    calls: list[object] = []
    inner = core_module._judged_core  # what verdict_core works out when no plan or row did

    def counted(brief):  # type: ignore[no-untyped-def]
        calls.append(brief)
        return inner(brief)

    monkeypatch.setattr(core_module, "_judged_core", counted)
    return calls


def test_the_capstones_hit_rate_floor_takes_six_re_plans_not_twelve(monkeypatch: pytest.MonkeyPatch) -> None:
    """Five steered by the margin (the last two on either side of the predicted flip), and 0%: its own rate's verdict
    is the plan's."""
    stated = load_brief("capstone")
    base = core_design(resolve(stated))
    calls = _counting(monkeypatch)
    floor = hit_rate_floor(base, stated)
    assert floor is not None and (floor.meets_down_to, floor.misses_at) == (0.107, 0.106)  # as the bisection found it
    assert len(set(calls)) <= 6


def test_no_fleet_meets_is_asked_of_the_largest_once_the_margin_stops_moving(monkeypatch: pytest.MonkeyPatch) -> None:
    """Variation F misses at any fleet (its margin does not move with the nodes): the fleet fix asks 100,000 nodes
    after two doublings instead of doubling fifteen times to learn it."""
    stated = load_brief("variation-f")
    calls = _counting(monkeypatch)
    assert resize.fewest_nodes_meeting(stated) is None
    assert len(set(calls)) <= 5


def test_a_cold_fleet_fix_starts_where_the_slo_capacity_predicts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Variation F's fix (the long-context pool grown, then the fewest nodes) is searched from the SLO capacity's
    prediction: the predicted fleet meets and the one a node below misses, two checks instead of doubling from the
    brief's 8 nodes (8, 16, 32, then five in the bracket), both read on the plan's own SLO capacity (resize._read_first:
    no re-plan); the answer is the one every fleet size would re-plan to."""
    from planner import plan

    checked: list[int] = []
    inner = resize._meets
    monkeypatch.setattr(resize, "_meets", lambda brief, headroom: checked.append(brief.hardware.nodes) or inner(brief, headroom))
    stated = load_brief("variation-f")
    fix = plan(stated).fix
    assert fix is not None and checked == []
    fixed = stated.with_changes(fix.overrides)
    assert resize.meets(fixed) and not resize.meets(fixed.with_changes({"hardware.nodes": fix.nodes - 1}))


def test_a_slider_move_predicts_the_moved_fleet_fix_from_the_plans_own_core(monkeypatch: pytest.MonkeyPatch) -> None:
    """Variation F's fix after one step of the duty-cycle slider (8% -> 9%: two nodes more): the plan's own core
    predicts the moved answer (the fix only grows the long-context pool, so the general pool is the plan's), two
    checks, where last time's answer would walk to it in three; both read on the plan's own SLO capacity, no re-plan."""
    from planner import plan

    stated = load_brief("variation-f")
    before = plan(stated).fix
    moved = stated.with_changes({"workload.duty_cycle": stated.workload.duty_cycle + 0.01})
    checked: list[int] = []
    inner = resize._meets
    monkeypatch.setattr(resize, "_meets", lambda brief, headroom: checked.append(brief.hardware.nodes) or inner(brief, headroom))
    fix = plan(moved).fix
    assert before is not None and fix is not None and fix.nodes == before.nodes + 2
    assert checked == []
    fixed = moved.with_changes(fix.overrides)
    assert resize.meets(fixed) and not resize.meets(fixed.with_changes({"hardware.nodes": fix.nodes - 1}))


def _from_the_guess(flip: int, guess: int, limit: int = 100_000) -> tuple[int | None, list[int]]:
    """fewest_nodes_meeting's search of (2, limit] from `guess`, on a margin like a p95's log over its target."""
    made: list[int] = []

    def ok(k: int) -> tuple[bool, float]:
        made.append(k)
        return k >= flip, math.log((flip - 0.5) / k)

    probe = resize._Remembered(ok, {})
    nodes = confirmed(probe, guess, 2, limit)
    if nodes is None:
        bracket = resize._bracket(probe, 2, limit, 8)
        assert bracket is not None
        (low, margin_low), (high, margin_high) = bracket
        nodes = first_meeting(probe, low, high, margin_low, margin_high)
    return nodes, made


@pytest.mark.parametrize(("guess", "probes"), [(19, 2), (18, 2), (20, 3), (17, 3), (16, 4), (21, 5), (3, 10), (400, 11), (1_000, 12)])
def test_a_fleet_search_from_a_guess_finds_the_flip_with_each_size_probed_once(guess: int, probes: int) -> None:
    """On the answer or a node beside it: two or three probes (grid_search.confirmed); farther off, the search goes on
    from the sizes the confirmation probed (none probed twice), and still ends at the flip."""
    nodes, made = _from_the_guess(19, guess)
    assert nodes == 19 and len(made) == len(set(made)) == probes, made


def _halvings(below, low: float, high: float, halvings: int) -> tuple[float, float]:
    for _ in range(halvings):
        mid = (low + high) / 2
        low, high = (mid, high) if below(mid) else (low, mid)
    return low, high


@pytest.mark.parametrize("seed", range(40))
def test_the_bracket_is_the_one_the_halvings_end_with(seed: int) -> None:
    """Every midpoint the bisection would test is decided by a test made on its side: the very same bracket."""
    rng = random.Random(seed)
    high = rng.choice([1.0, 2.0, 8.0, 1e4])
    crossing = rng.uniform(0.01, 0.99) * high
    halvings = rng.choice([9, 30, 50])
    kind = seed % 4
    margins = {
        0: lambda x: x / crossing - 1,  # smooth, as a busy share
        1: lambda x: math.log(x / crossing) ** 3 if x != crossing else 0.0,  # flat at the crossing
        2: lambda x: -0.1 if x < crossing else math.inf,  # jumps to no steady state
        3: lambda x: rng.uniform(-1, 1),  # misleading
    }

    def test(x: float) -> tuple[bool, float]:
        return x < crossing, margins[kind](x)

    expected = _halvings(lambda x: x < crossing, 0.0, high, halvings)
    assert bisection_bracket(test, 0.0, high, halvings) == expected
    for guess in (crossing, crossing * 1.001, rng.uniform(-1, 2) * high):  # where it crossed last time, right or not
        assert bisection_bracket(test, 0.0, high, halvings, guess=guess) == expected


def _crossing_case(seed: int) -> tuple[random.Random, int, float, tuple[float, float], float]:
    """A random crossing in (0.1, 0.9): the generator, the halvings, the crossing, the halvings' last bracket around
    it and that bracket's width."""
    rng = random.Random(seed)
    halvings = rng.choice([9, 30])
    crossing = rng.uniform(0.1, 0.9)
    expected = _halvings(lambda x: x < crossing, 0.0, 1.0, halvings)
    return rng, halvings, crossing, expected, expected[1] - expected[0]


@pytest.mark.parametrize("seed", range(20))
def test_a_guess_in_the_crossings_last_bracket_takes_two_tests(seed: int) -> None:
    """The two ends of the last bracket around a guess (where the crossing was last time) decide every midpoint when
    the crossing is still inside it, whatever the margin (none, or one that jumps): two tests, the very bracket the
    halvings end with (the guess and a point a bracket's width beside it left the bracket's end to a third); one
    bracket off, the far end of the bracket beside is the third."""
    rng, halvings, crossing, expected, width = _crossing_case(seed)
    tested: list[float] = []

    def test(x: float) -> tuple[bool, float]:
        tested.append(x)
        return x < crossing, math.nan if seed % 2 else (-0.1 if x < crossing else math.inf)

    for guess, tests in ((rng.uniform(*expected), 2), (rng.uniform(*expected) + rng.choice([-1, 1]) * width, 3)):
        tested.clear()
        assert bisection_bracket(test, 0.0, 1.0, halvings, guess=guess) == expected
        assert len(tested) <= tests


@pytest.mark.parametrize("seed", range(20))
def test_a_guess_tested_from_its_upper_end_leaves_the_same_bracket(seed: int) -> None:
    """around_guess with high_first (the re-planned headroom: a design meeting above meets below): the upper end of the
    last bracket around the guess is tested first, and the bracket is the halvings' own in as few tests."""
    rng, halvings, crossing, expected, width = _crossing_case(seed)
    tested: list[float] = []

    def test(x: float) -> tuple[bool, float]:
        tested.append(x)
        return x < crossing, math.nan

    for guess, tests in ((rng.uniform(*expected), 2), (rng.uniform(*expected) + rng.choice([-1, 1]) * width, 3)):
        tested.clear()
        below, above = around_guess(test, 0.0, 1.0, halvings, guess, high_first=True)
        assert tested[0] == _halvings(lambda x, guess=guess: x <= guess, 0.0, 1.0, halvings)[1]
        assert bisection_bracket(test, 0.0, 1.0, halvings, below, above) == expected
        assert len(tested) <= tests


def test_a_chord_that_closes_in_from_one_side_is_followed_by_the_other_end() -> None:
    """Regula falsi closes in on a crossing from one side; the midpoints on the other side were each tested (14 tests
    here, 19 for the disaggregated pools' capacity): once a chord step is under a thousand last brackets, the other
    end of the last bracket there is tested instead."""
    crossing = 1.2440560674
    tested: list[float] = []

    def margin(x: float) -> float:
        return (x - crossing) * (1 + x)

    def test(x: float) -> tuple[bool, float]:
        tested.append(x)
        return x < crossing, margin(x)

    bracket = bisection_bracket(test, 1.0, 2.0, 30, (1.0, margin(1.0)), (2.0, margin(2.0)))
    assert bracket == _halvings(lambda x: x < crossing, 1.0, 2.0, 30)
    assert len(tested) <= 9


def test_a_chord_beside_the_last_point_on_its_side_predicts_the_crossing() -> None:
    """A prefill queue's p95 TTFT (its wait climbs like 1 / the idle share), as the disaggregated capacity search steers
    by it (disagg._capacity_margin): the chords close in from above, and the line through the last two there predicts
    the crossing; the two ends of the last bracket around it settle the 30 halvings (9 tests before: the midpoints
    below on the way)."""
    tested: list[float] = []

    def margin(x: float) -> float:
        busy = x / 1.29
        return math.inf if busy >= 1 else ((150 + 40 * math.log(busy / 0.05) / (1 - busy)) / 1000 - 1) * (1 - busy)

    def test(x: float) -> tuple[bool, float]:
        tested.append(x)
        return margin(x) <= 0, margin(x)

    bracket = bisection_bracket(test, 1.0, 2.0, 30, (1.0, margin(1.0)), (2.0, math.inf), 1.29 * (1 - 1e-12))
    assert bracket == _halvings(lambda x: margin(x) <= 0, 1.0, 2.0, 30)
    assert len(tested) <= 6


def test_a_chord_that_lands_on_the_crossing_is_followed_by_the_other_end() -> None:
    """A busy share linear in the load (capstone's long-context pool): the chord lands where it is 1 to the last bit (a
    margin of 0, so above), and the other end of the last bracket there settles the 50 halvings (11 tests before: each
    midpoint below it on the way)."""
    tested: list[float] = []

    def test(x: float) -> tuple[bool, float]:
        tested.append(x)
        value = x / 3.0728043071122  # the share at x times the traffic
        return value < 1, value - 1

    bracket = bisection_bracket(test, 0.0, 4.0, 50, (2.0, test(2.0)[1]), (4.0, test(4.0)[1]))
    assert bracket == _halvings(lambda x: x / 3.0728043071122 < 1, 0.0, 4.0, 50)
    assert len(tested) <= 2 + 3


def test_a_smooth_crossing_takes_a_third_of_the_tests() -> None:
    tested: list[float] = []

    def test(x: float) -> tuple[bool, float]:
        tested.append(x)
        return x * x / 3.7 < 1, x * x / 3.7 - 1

    bracket = bisection_bracket(test, 0.0, 4.0, 50, (1.0, 1 / 3.7 - 1), (4.0, 16 / 3.7 - 1))
    assert bracket == _halvings(lambda x: x * x / 3.7 < 1, 0.0, 4.0, 50)
    assert len(tested) <= 20  # the halvings test 50 midpoints


def test_the_capstones_sizing_headroom_takes_a_few_sizing_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The sizing utilization's crossing (users x duty: the batch grows with the load) was 52 sizing passes; each is
    the utilization alone (capacity.utilization_at), not a whole capacity()."""
    stated = load_brief("capstone")
    core = core_design(resolve(stated))
    passes: list[object] = []
    inner = headroom_module.utilization_at

    def counted(*args):  # type: ignore[no-untyped-def]
        passes.append(args)
        return inner(*args)

    monkeypatch.setattr(headroom_module, "utilization_at", counted)
    limit = headroom_module._sizing_limits(core)[0]
    assert limit.key == "sizing_utilization" and 5 < limit.multiple < 6
    assert 0 < len(passes) <= 20


def test_a_slider_move_asks_the_hit_rate_floor_near_its_last_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    """The capstone planned, then its duty cycle nudged (a slider move): 0%, the last answer and the step below it."""
    stated = load_brief("capstone")
    hit_rate_floor(core_design(resolve(stated)), stated)
    nudged = stated.with_changes({"workload.duty_cycle": stated.workload.duty_cycle * 1.001})
    base = core_design(resolve(nudged))
    calls = _counting(monkeypatch)
    floor = hit_rate_floor(base, nudged)
    assert floor is not None and floor.misses_at == round(floor.meets_down_to - 0.001, 3)
    assert len(set(calls)) <= 2  # one step up from last time's floor: it (now missing) and the step above


def _counting_replans(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """The re-planned headroom's re-plans: the design's own verdict and its N+1 (one node lost) re-plan (each read on
    the design's SLO capacity where that tells, counted as a re-plan)."""
    replans: list[object] = []
    for name in ("_meets_slo", "n_plus_one"):
        inner = getattr(headroom_module, name)
        monkeypatch.setattr(headroom_module, name, lambda brief, known, inner=inner: replans.append(brief) or inner(brief, known))
    return replans


def test_a_slider_move_asks_the_re_planned_headroom_near_where_it_turned(monkeypatch: pytest.MonkeyPatch) -> None:
    """The KV tiers' re-planned headroom (its margin jumps): two `plan --set` checks after a nudge, the ends of the
    halvings' last bracket around where it turned last time (ten from the bracket's middle, five from the turn alone);
    three re-plans, as the design that meets at the upper end meets at the lower one (its N+1 re-plan alone there)."""
    from planner import plan

    stated = load_brief("agent-platform")
    plan(stated)
    replans = _counting_replans(monkeypatch)
    nudged = plan(stated.with_changes({"workload.request_rate": stated.workload.request_rate * 1.001}))
    assert nudged.headroom.limits[0].key == "replanned" and 1 < nudged.headroom.limits[0].multiple < 3
    assert len(replans) <= 3


def test_the_agent_platforms_re_planned_headroom_takes_three_re_plans_cold(monkeypatch: pytest.MonkeyPatch) -> None:
    """Cold, the closed forms' N+1 turn is where it looks first: the upper end of the halvings' last bracket there
    (the design's verdict and its N+1 re-plan), then the lower end's N+1 re-plan alone."""
    from planner import plan

    replans = _counting_replans(monkeypatch)
    limit = plan(load_brief("agent-platform")).headroom.limits[0]
    assert limit.key == "replanned" and limit.name == "N+1 is lost in the re-planned design"
    assert len(replans) == 3


@pytest.mark.parametrize(
    ("guess", "expected", "probes"),
    [(107, 107, 2), (108, 107, 3), (106, 107, 2), (105, 107, 3), (110, None, 3), (104, None, 3), (None, None, 0), (0, None, 0)],
)
def test_last_times_answer_is_taken_when_probes_beside_it_confirm_the_flip(guess, expected, probes) -> None:  # type: ignore[no-untyped-def]
    made: list[int] = []

    def probe(k: int) -> tuple[bool, float]:
        made.append(k)
        return k >= 107, math.nan

    assert confirmed(probe, guess, 0, 780) == expected and len(made) == probes


def test_a_slider_move_that_leaves_the_floor_confirms_it_in_two_re_plans(monkeypatch: pytest.MonkeyPatch) -> None:
    stated = load_brief("capstone")
    hit_rate_floor(core_design(resolve(stated)), stated)
    nudged = stated.with_changes({"workload.duty_cycle": stated.workload.duty_cycle * 1.00001})
    base = core_design(resolve(nudged))
    calls = _counting(monkeypatch)
    floor = hit_rate_floor(base, nudged)
    assert floor is not None and (floor.meets_down_to, floor.misses_at) == (0.107, 0.106) and len(set(calls)) == 2


def test_a_wide_fleet_search_starts_where_the_slo_capacity_predicts(monkeypatch: pytest.MonkeyPatch) -> None:
    """The cost lever of the capstone scaled to 100,000 nodes searches 25,000 to 100,000 fleet sizes: the SLO
    capacity's prediction and the few sizes beside it instead of a bisection's 17 or more."""
    base = load_brief("capstone")
    scale = 100_000 / base.hardware.nodes
    stated = base.with_changes(
        {
            "hardware.nodes": 100_000,
            "workload.users": round(base.workload.users * scale),  # type: ignore[operator]
            "deployment.long_context_nodes": round(base.deployment.long_context_nodes * scale),
            "deployment.spare_nodes": round(base.deployment.spare_nodes * scale),
        }
    )
    checks: list[int] = []
    inner = resize.meets_check
    monkeypatch.setattr(resize, "meets_check", lambda brief: checks.append(brief.hardware.nodes) or inner(brief))
    nodes = resize.fewest_nodes_meeting(stated, limit=100_000)
    assert nodes is not None and 25_000 < nodes < 100_000
    assert len(set(checks)) <= 7
