"""The prefill-chunk advice follows the plan's own trade-off: a missed p95 ITL names the max-num-batched-tokens the
trade-off curve shows meeting, in the direction the curve gives (a smaller chunk puts more token gaps on
chunk-carrying steps, so it does not always shorten p95 ITL), and its overrides re-plan as meeting both targets."""

from __future__ import annotations

import math

import pytest

from planner import load_brief, plan
from planner.core import replan
from planner.fmt import num
from planner.mechanisms import resolve
from planner.slo import chunk_tradeoff_words

pytestmark = pytest.mark.unit

INPUTS_DOUBLE = {  # variation-g's "Input lengths double" failure row
    "workload.input_tokens_mean": 2400.0,
    "workload.input_tokens_p95": 12000.0,
    "workload.kv_context_tokens": 5200.0,
    "workload.long_context_share": 0.1224,
}
BF16 = {"deployment.weights": "bf16", "deployment.kv_cache": "bf16", "efficiency.compute_peak": "bf16"}


def _chunk_problem(preset: str, changes: dict[str, object]):  # type: ignore[no-untyped-def]
    design = plan(load_brief(preset).with_changes(changes))
    return design, next(p for p in design.verdict.problems if p.field == "deployment.max_num_batched_tokens")


@pytest.mark.parametrize(("preset", "way"), [("rag", "raise"), ("variation-g", "lower")])
def test_the_chunk_advice_names_the_value_that_re_plans_as_meeting(preset: str, way: str) -> None:
    """Each preset's "Quantization reverted to BF16" row: rag's p95 ITL meets with bigger chunks, variation-g's with
    smaller ones, by the plan's trade-off and its re-plan."""
    design, problem = _chunk_problem(preset, BF16)
    value = problem.overrides["deployment.max_num_batched_tokens"]
    current = design.brief.deployment.max_num_batched_tokens
    assert (value > current) is (way == "raise") and f"{way} max-num-batched-tokens from {current} to {value}" in problem.change
    again = replan(resolve(design.brief.with_changes(problem.overrides)))
    assert again.slo.itl_ok and again.slo.ttft_ok and again.operating_point.stable
    point = next(t for t in design.slo.tradeoff_batched_tokens if t.x == value)
    assert point.itl_p95_ms <= design.slo.itl_target_ms  # the value is the curve's, not a fixed direction


def test_no_chunk_advice_where_no_value_on_the_curve_meets() -> None:
    """variation-f at 18 nodes: p95 ITL misses at 1024, 2048 and 4096 alike; the advice is nodes, with no override."""
    design = plan(load_brief("variation-f").with_changes({"hardware.nodes": 18, "deployment.long_context_nodes": 4}))
    itl = next(p for p in design.verdict.problems if "p95 ITL" in p.problem)
    assert itl.field == "hardware.nodes" and not itl.overrides and "max-num-batched-tokens" not in itl.change


def test_the_flag_reason_says_which_way_p95_itl_and_the_longest_step_move() -> None:
    design = plan(load_brief("capstone"))
    curve = design.slo.tradeoff_batched_tokens
    why = next(f.why for f in design.config.flags if f.flag == "--max-num-batched-tokens")
    assert curve[-1].itl_p95_ms < curve[0].itl_p95_ms  # the capstone's p95 ITL falls as the chunk grows
    assert "at the brief's 2048, 8.14 ms" in why and "longest single step 13.7 ms -> 55.7 ms" in why
    assert "larger ones lengthen single token gaps" not in why


def test_the_trade_off_words_follow_a_curve_that_is_not_monotone_and_call_a_flat_one_flat() -> None:
    """rag's p95 ITL falls, rises and falls again with the chunk (21.6, 92.1 at 2048, 13.4 at its 4096, 13.3 ms): the
    words give the range, the brief's point and where it is lowest, not the two ends ('falls 21.6 -> 13.3'); a curve
    within 1% of flat says so (rl-rollout read 'rises 13.3 ms -> 13.3 ms')."""
    rag = plan(load_brief("rag"))
    words = chunk_tradeoff_words(rag.slo.tradeoff_batched_tokens, 4096)
    highest = max(t.itl_p95_ms for t in rag.slo.tradeoff_batched_tokens)
    assert f"to {num(highest, 'ms')}" in words and "at the brief's 4096" in words and "lowest from 8192 tokens up" in words
    rising = plan(load_brief("qps10-tp4"))  # lowest at the smallest chunk: no size above it reaches the lowest
    assert "lowest at 256 tokens" in chunk_tradeoff_words(rising.slo.tradeoff_batched_tokens, 2048)
    flat = plan(load_brief("rl-rollout"))
    assert "stays near" in chunk_tradeoff_words(flat.slo.tradeoff_batched_tokens, flat.brief.deployment.max_num_batched_tokens)


def test_prompts_clipped_at_max_model_len_ride_in_one_chunk() -> None:
    """variation-g with inputs doubled: max-model-len 8192 clips a prompt's uncached part at 8191 x 22% = 1,802
    tokens, under the ~2,000 a step has room for, so each prompt takes one chunk-carrying step (the simulator counts
    1.01 a request); the unclipped gamma tail counted 1.10 and put the plan's p95 ITL at 43.1 ms (simulator 16.8)."""
    from planner.slo import _expected_chunks, engine

    core = replan(resolve(load_brief("variation-g").with_changes(INPUTS_DOUBLE)))
    eng = engine(core.brief, core.shape)
    assert _expected_chunks(eng, eng.room(core.slo.point.running_batch)) == 1.0
    assert core.slo.point.mixed_step_share < 0.16 and core.slo.itl_p95_ms < 35


@pytest.mark.parametrize("preset", ["qps200-chat", "capstone", "rag"])
def test_each_point_of_the_chunk_curve_is_the_re_plan_at_that_value(preset: str) -> None:
    """The curve kept the brief's running batch at every chunk size: qps200-chat's point at 256 tokens read p95 TTFT
    4,897 ms (in its --max-num-batched-tokens reason) where `plan --set deployment.max_num_batched_tokens=256` reads 764
    ms (the simulator 765), as the smaller chunk slows the pace and more sequences run. Each point is now the re-plan's."""
    brief = load_brief(preset)
    design = plan(brief)
    current = brief.deployment.max_num_batched_tokens
    others = [t for t in design.slo.tradeoff_batched_tokens if int(t.x) != current]
    assert len(others) >= 3
    for t in others:
        again = plan(brief.with_changes({"deployment.max_num_batched_tokens": int(t.x)})).slo
        assert (t.ttft_p95_ms, t.itl_p95_ms, t.tpot_p95_ms) == pytest.approx(
            (again.ttft_p95_ms, again.itl_p95_ms, again.tpot_p95_ms), rel=1e-6
        )


def _advice_from_the_whole_curve(core) -> int | None:  # type: ignore[no-untyped-def]
    """The chunk advice as it was worked out before the curve was read lazily: the whole curve first, then the values
    meeting both targets on it, nearest the brief's first (on a log scale), re-planned until one meets."""
    from planner.brief import BriefError
    from planner.core import _CHUNK_TRIES, verdict_only
    from planner.slo import batched_tokens_tradeoff

    brief, slo, op = core.brief, core.slo, core.operating_point
    current = brief.deployment.max_num_batched_tokens
    curve = batched_tokens_tradeoff(brief, core.shape, op.rate_per_replica_per_s, op.in_flight, slo.point.running_batch)
    meeting = [t for t in curve if t.x != current and t.itl_p95_ms <= slo.itl_target_ms and t.ttft_p95_ms <= slo.ttft_target_ms]
    for t in sorted(meeting, key=lambda t: abs(math.log(t.x / current)))[:_CHUNK_TRIES]:
        try:
            again = verdict_only(brief.with_changes({"deployment.max_num_batched_tokens": int(t.x)}))
        except BriefError:
            continue
        if again.operating_point.stable and again.slo.ttft_ok and again.slo.itl_ok:
            return int(t.x)
    return None


@pytest.mark.parametrize(
    ("preset", "changes", "expected", "most_points"),
    [
        ("rag", BF16, 8192, 2),  # the two nearest values: 2048 (its p95 ITL misses), then 8192, which meets
        ("variation-g", BF16, 256, 5),
        ("variation-f", {"hardware.nodes": 18, "deployment.long_context_nodes": 4}, None, 6),  # none meets: every point
    ],
)
def test_the_advice_reads_the_curve_nearest_first_and_only_as_far_as_it_needs(
    preset: str, changes: dict[str, object], expected: int | None, most_points: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The advice (core._chunk_change) names the value the whole curve named, working out its points nearest the
    brief's first (slo.batched_tokens_nearest) and stopping at the first that re-plans as meeting: rag's BF16 row
    reads 2 of its curve's points, not all of them."""
    import planner.slo as slo_module
    from benchmarks.plan_speed import _clear_all
    from planner.core import _chunk_change

    core = replan(resolve(load_brief(preset).with_changes(changes)))
    assert not core.slo.itl_ok
    _clear_all()  # the points and re-plans worked out from here are the advice's own
    points: list[int] = []
    inner = slo_module.batched_tokens_point
    monkeypatch.setattr(slo_module, "batched_tokens_point", lambda *a: points.append(a[4]) or inner(*a))
    advice = _chunk_change(core.brief, core.shape, core.slo, core.operating_point)
    named = None if advice is None else advice[2]["deployment.max_num_batched_tokens"]
    assert named == expected
    assert len(points) == most_points and len(set(points)) == len(points)
    monkeypatch.undo()
    assert _advice_from_the_whole_curve(core) == expected


@pytest.mark.parametrize("preset", ["rag", "qps200-chat", "capstone", "variation-g"])
def test_the_nearest_points_are_the_curves_own_nearest_first(preset: str) -> None:
    """batched_tokens_nearest gives the trade-off curve's points but the brief's own, ordered by their distance from
    it on a log scale (of two as near, the smaller first), each equal to the curve's."""
    from planner.slo import batched_tokens_nearest, batched_tokens_tradeoff

    core = replan(resolve(load_brief(preset)))
    brief, op = core.brief, core.operating_point
    current = brief.deployment.max_num_batched_tokens
    args = (brief, core.shape, op.rate_per_replica_per_s, op.in_flight, core.slo.point.running_batch)
    curve = batched_tokens_tradeoff(*args)
    expected = sorted((t for t in curve if t.x != current), key=lambda t: (abs(math.log(t.x / current)), t.x))
    assert list(batched_tokens_nearest(*args, math.inf)) == expected and len(expected) == len(curve) - 1


@pytest.mark.parametrize("load", [1.1, 1.3])
def test_a_design_its_deadline_judges_works_out_no_latency_advice(load: float, monkeypatch: pytest.MonkeyPatch) -> None:
    """An offline job's or a rollout's verdict is its deadline's (mechanisms.mechanism_verdict keeps none of the
    core's problems), so its plan works out no advice for a missed ITL: no trade-off point, no re-plan at another
    chunk. Its design is the one planned with that advice worked out (offline-batch at 1.3x its rate misses its 40 ms
    ITL: the advice re-planned five chunk sizes before)."""
    import planner.core as core_module
    import planner.slo as slo_module
    from benchmarks.plan_speed import _clear_all
    from planner.cli import design_json

    base = load_brief("offline-batch")
    assert base.workload.request_rate is not None
    brief = base.with_changes({"workload.request_rate": base.workload.request_rate * load})
    _clear_all()
    points: list[object] = []
    inner = slo_module.batched_tokens_point
    monkeypatch.setattr(slo_module, "batched_tokens_point", lambda *a: points.append(a) or inner(*a))
    design = plan(brief)
    assert not design.slo.itl_ok and design.verdict.meets_slo  # the ITL misses; the deadline is met
    assert points == []
    kept = design_json(design)
    _clear_all()
    advised = core_module._core_design_of

    def always_advised(brief, curves, with_capacity, advise=True, **kwargs):  # type: ignore[no-untyped-def]
        return advised(
            brief, curves, with_capacity, advise=advise or ((curves or with_capacity) and not kwargs.get("judged_only")), **kwargs
        )

    monkeypatch.setattr(core_module, "_core_design_of", always_advised)
    again = plan(brief)
    assert len(points) >= 5  # the advice, worked out, reads the curve (and re-plans at another chunk) ...
    assert design_json(again) == kept  # ... and changes nothing of the design
    _clear_all()


def _at_traffic(preset: str, load: float):  # type: ignore[no-untyped-def]
    """The preset's brief at `load` x its traffic (its request rate, else its users), as the planner's call counts take it."""
    brief = load_brief(preset)
    if brief.workload.request_rate is not None:
        return brief.with_changes({"workload.request_rate": brief.workload.request_rate * load})
    return brief.with_changes({"workload.users": round(brief.workload.users * load)})


@pytest.mark.parametrize(("preset", "load"), [("variation-f", 0.8), ("qps10-tp4", 1.2), ("rag", 1.3), ("capstone", 1.0)])
def test_the_nearest_points_within_a_ttft_target_are_the_curves_within_it(preset: str, load: float) -> None:
    """batched_tokens_nearest, given a p95 TTFT target, works out each value's p95 TTFT first and its point only where
    that is within the target: it gives the whole curve's points (worked out without that check, from cold) whose p95
    TTFT is within it, nearest first, at the plan's own target and at one that splits the curve."""
    from planner.slo import batched_tokens_nearest, batched_tokens_tradeoff

    core = replan(resolve(_at_traffic(preset, load)))
    brief, op = core.brief, core.operating_point
    current = brief.deployment.max_num_batched_tokens
    args = (brief, core.shape, op.rate_per_replica_per_s, op.in_flight, core.slo.point.running_batch)
    core.shape.memo.clear()  # no point kept: each is worked out by the way under test
    curve = batched_tokens_tradeoff(*args)
    split_ms = sorted(t.ttft_p95_ms for t in curve)[len(curve) // 2]
    for target_ms in (core.slo.ttft_target_ms, split_ms):
        core.shape.memo.clear()
        within = list(batched_tokens_nearest(*args, target_ms))
        expected = [t for t in curve if t.x != current and t.ttft_p95_ms <= target_ms]
        assert within == sorted(expected, key=lambda t: (abs(math.log(t.x / current)), t.x))
    assert 0 < len(list(batched_tokens_nearest(*args, split_ms))) < len(curve) - 1


def test_values_whose_p95_ttft_misses_cost_the_advice_no_point(monkeypatch: pytest.MonkeyPatch) -> None:
    """variation-f at 0.8x its users misses its 40 ms ITL, and every other chunk size of its curve puts p95 TTFT over
    the 500 ms target (684 to 1,488 ms): the advice works out the six values' p95 TTFT and none of their points (it
    worked out all six points before: 13,888 -> 10,883 calls a cold plan), and names no value, as the whole curve does."""
    import planner.slo as slo_module
    from benchmarks.plan_speed import _clear_all
    from planner.core import _chunk_change

    core = replan(resolve(_at_traffic("variation-f", 0.8)))
    assert not core.slo.itl_ok
    _clear_all()
    core.shape.memo.clear()
    points: list[int] = []
    waits: list[float] = []
    inner_point, inner_wait = slo_module.batched_tokens_point, slo_module._wait
    monkeypatch.setattr(slo_module, "batched_tokens_point", lambda *a: points.append(a[4]) or inner_point(*a))
    monkeypatch.setattr(slo_module, "_wait", lambda *a: waits.append(a[3]) or inner_wait(*a))
    assert _chunk_change(core.brief, core.shape, core.slo, core.operating_point) is None
    assert points == [] and len(waits) == 6
    monkeypatch.undo()
    assert _advice_from_the_whole_curve(core) is None


@pytest.mark.parametrize(
    ("preset", "load"), [("rag", 1.3), ("rag", 1.0), ("qps10-tp4", 1.2), ("capstone", 1.0), ("variation-g", 0.8), ("chat-speculative", 1.1)]
)
def test_the_curves_point_at_the_briefs_own_value_is_the_slo_budgets(preset: str, load: float) -> None:
    """The chunk advice words the brief's own value's p95 ITL from the SLO budget (core._chunk_change): at a steady
    state the trade-off point there, worked out on its own engine from cold, is the budget's point, every figure to the
    bit."""
    from planner.slo import _tradeoff_point, batched_tokens_point

    core = replan(resolve(_at_traffic(preset, load)))
    brief, op = core.brief, core.operating_point
    assert op.stable
    current = brief.deployment.max_num_batched_tokens
    core.shape.memo.clear()  # the point worked out on an engine of its own, not read from one the budget's solve kept
    point = batched_tokens_point(brief, core.shape, op.rate_per_replica_per_s, op.in_flight, current)
    assert point == _tradeoff_point(current, core.slo.point)


@pytest.mark.parametrize(("preset", "load"), [("rag", 1.3), ("qps10-tp4", 1.2)])
def test_the_chunk_advice_works_out_no_point_at_the_briefs_own_value(preset: str, load: float, monkeypatch: pytest.MonkeyPatch) -> None:
    """rag at 1.3x its rate and qps10-tp4 at 1.2x miss their p95 ITL and the advice names a chunk size: its words read
    the brief's own value's p95 ITL from the SLO budget, with no engine built at that value to work its point out
    again (rag 13,451 -> 12,956 calls a cold plan, qps10-tp4 7,620 -> 7,294)."""
    import planner.slo as slo_module
    from benchmarks.plan_speed import _clear_all
    from planner.core import _chunk_change

    core = replan(resolve(_at_traffic(preset, load)))
    assert not core.slo.itl_ok
    _clear_all()
    core.shape.memo.clear()
    chunks: list[int | None] = []
    inner = slo_module._engine_of
    monkeypatch.setattr(slo_module, "_engine_of", lambda *a, **k: chunks.append(k.get("max_num_batched_tokens")) or inner(*a, **k))
    advice = _chunk_change(core.brief, core.shape, core.slo, core.operating_point)
    assert (
        advice is not None
        and f"({num(core.slo.itl_p95_ms, 'ms')} at {core.brief.deployment.max_num_batched_tokens} on the same curve)" in advice[1]
    )
    assert core.brief.deployment.max_num_batched_tokens not in chunks and len([c for c in chunks if c is not None]) > 0
