"""What a re-plan leaves out because another part of the plan already worked it out (counted, not timed)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest

import planner.operating_point as op
import planner.slo as slo_module
from benchmarks.plan_speed import _clear_all
from planner import Brief, load_brief, plan, preset_names
from planner.mechanisms import resolve
from planner.pools import pools_of
from planner.replica import shape_of

pytestmark = pytest.mark.unit


@pytest.fixture(autouse=True)
def _cold_planner() -> None:
    """Every planner cache emptied first (benchmarks.plan_speed's cold start): what a test counts is its own work,
    not a hint or a core an earlier test left."""
    _clear_all()


def _count_pool_analyses(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """The two pools worked out at a load from here on (disagg._at_load: a disaggregation analysis, a capacity-search
    test, another split of the nodes), each call's arguments."""
    import planner.disagg as disagg

    analyses: list[object] = []
    inner = disagg._at_load

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        analyses.append(args)
        return inner(*args, **kwargs)

    monkeypatch.setattr(disagg, "_at_load", counted)
    return analyses


def _record_briefs(monkeypatch: pytest.MonkeyPatch, module: object, name: str, key: Callable[[Brief], Any]) -> list[Any]:
    """`module.name`, a function of one brief, counted from here on: each call's key(brief)."""
    seen: list[Any] = []
    inner = getattr(module, name)

    def counted(brief: Brief) -> object:
        seen.append(key(brief))
        return inner(brief)

    monkeypatch.setattr(module, name, counted)
    return seen


def _record_calls(monkeypatch: pytest.MonkeyPatch, module: object, name: str) -> list[tuple[Any, ...]]:
    """`module.name` counted from here on: each call's positional arguments."""
    seen: list[tuple[Any, ...]] = []
    inner = getattr(module, name)

    def counted(*args: Any) -> object:
        seen.append(args)
        return inner(*args)

    monkeypatch.setattr(module, name, counted)
    return seen


def _replica(brief):  # type: ignore[no-untyped-def]
    brief = resolve(brief)
    shape = shape_of(brief)
    return brief, shape, pools_of(brief, shape)[0]


def _operating_point(brief):  # type: ignore[no-untyped-def]
    return op.operating_point(*_replica(brief), 10.0, with_seed=False)


def test_the_capacity_clause_is_worked_out_once_a_capacity_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """A failure row that moves only the fleet shares the baseline's SLO capacity and what is reached there: it
    evaluates no p95 at the capacity rate again (it evaluated two before)."""
    op._CAPACITIES.clear()
    stated = load_brief("capstone")
    first = _operating_point(stated)
    calls: list[float] = []
    inner = op.judged_p95s_ms

    def counted(eng, brief, rate, batch):  # type: ignore[no-untyped-def]
        calls.append(rate)
        return inner(eng, brief, rate, batch)

    monkeypatch.setattr(op, "judged_p95s_ms", counted)
    smaller = _operating_point(stated.with_changes({"hardware.nodes": stated.hardware.nodes - 1}))
    assert smaller.capacity_rate_per_s == first.capacity_rate_per_s and smaller.capacity_reached == first.capacity_reached
    assert first.capacity_reached and not calls


def test_the_search_reuses_its_own_probe_at_the_capacity(monkeypatch: pytest.MonkeyPatch) -> None:
    """The capacity is one of the search's probes: the clause reads the p95s there from it, each worked out once (the
    search's last probes work out only the p95 still over its target; the clause then the other), and not the rate
    just past it, which it reads only where no p95 reaches its target at the capacity (the capstone's p95 TTFT and
    ITL both reach theirs there)."""
    op._CAPACITIES.clear()
    rates: list[tuple[float, tuple[bool, bool]]] = []
    inner = op.judged_p95s_ms

    def counted(eng, brief, rate, batch, needed=(True, True)):  # type: ignore[no-untyped-def]
        rates.append((rate, needed))
        return inner(eng, brief, rate, batch, needed)

    monkeypatch.setattr(op, "judged_p95s_ms", counted)
    point = _operating_point(load_brief("capstone"))
    capacity = point.capacity_rate_per_s
    worked = [needed for rate, needed in rates if rate == capacity]
    assert [sum(needed[i] for needed in worked) for i in range(2)] == [1, 1]
    assert capacity * op.JUST_PAST not in [rate for rate, _ in rates]
    assert point.capacity_reached.startswith("there p95 TTFT reaches its")


def test_the_clause_looks_past_the_capacity_only_where_no_p95_binds_there() -> None:
    """Where both p95s stay under their targets up to the capacity (the replica loses its steady state first), the
    clause says what happens just past it, and only then does it ask for the p95s there."""
    brief = load_brief("capstone")
    asked: list[bool] = []

    def past() -> tuple[float, float]:
        asked.append(True)
        return (math.inf, math.inf)

    binding = op.reached_at_capacity(brief, (brief.slo.ttft_p95_ms * 0.99, 1.0), past)
    assert binding.startswith("there p95 TTFT reaches its") and not asked
    under = op.reached_at_capacity(brief, (brief.slo.ttft_p95_ms * 0.5, 1.0), past)
    assert "just past it the replica loses its steady state" in under and asked == [True]


def test_the_operating_point_takes_the_pace_its_solve_worked_out(monkeypatch: pytest.MonkeyPatch) -> None:
    """The solve checks the pace at its solution last: the operating point reads that one instead of asking again."""
    asked: list[float] = []
    inner = op.pace

    def counted(brief, shape, rate, batch, **overrides):  # type: ignore[no-untyped-def]
        asked.append(batch)
        return inner(brief, shape, rate, batch, **overrides)

    monkeypatch.setattr(op, "pace", counted)
    point = op.operating_point(*_replica(load_brief("capstone")), 50.0, with_capacity=False, with_seed=False)
    assert point.stable and point.in_flight > 1 and not asked


@pytest.mark.parametrize(("preset", "rates", "rate"), [("rag", (1.0, 2.0), 1.5), ("capstone", (26.0, 29.0), 28.0)])
def test_a_search_solve_starts_from_the_batches_solved_at_its_nearest_rates(preset: str, rates: tuple[float, float], rate: float) -> None:
    """The capacity search's running-batch solve at a rate between two it has solved narrows its bracket to their
    batches (their paces in hand): the batches worked out on either side of where their roots put this one, then those
    roots; the root the cold solve finds, within its xtol, in fewer new paces."""
    brief, shape, _ = _replica(load_brief(preset))
    eng = slo_module.engine(brief, shape)
    limit, _ = op._limit_of(brief, shape)
    seen = op._SearchSolves()
    for solved_rate in rates:
        op._solved(brief, shape, solved_rate, seen)
    hints = seen.hints(rate)
    assert hints[-2:] == tuple(seen.roots[r] for r in rates)
    assert len(hints) == 4 and set(hints[:2]) <= set(seen.batches) and hints[0] < hints[1]

    def solve(hinted: tuple[float, ...]) -> tuple[float, int]:
        asked: set[float] = set()

        def at(n: float) -> slo_module.Pace:
            asked.add(n)
            return eng.pace(rate, n)

        n, binding, _ = op._solve(rate, at, limit, hinted)
        assert binding is None
        return n, len(asked - {1.0, limit, *hinted})

    (cold, cold_new), (warm, warm_new) = solve(()), solve(hints)
    assert abs(warm - cold) <= 1e-9 * limit
    assert warm_new < cold_new


def test_a_disaggregated_re_plan_works_out_no_other_split(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every other split of the nodes is a trade-off curve for the plan's own page: a failure row or a verdict-only
    re-plan reads none of them (each was one more pool analysis, up to 24 a re-plan)."""
    import planner.core as core_module

    analyses = _count_pool_analyses(monkeypatch)
    brief = resolve(load_brief("chat-disaggregated").with_changes({"workload.duty_cycle": 0.31}))
    replanned = core_module.verdict_only(brief)
    assert replanned.disaggregation is not None and replanned.disaggregation.splits == () and len(analyses) == 1
    planned = core_module.core_design(brief)
    assert planned.disaggregation is not None and len(planned.disaggregation.splits) > 1


def test_a_verdict_check_takes_the_failure_rows_core_for_the_same_brief(monkeypatch: pytest.MonkeyPatch) -> None:
    """The cost lever's N+1 check of the brief's own fleet asks the one-node-lost row's brief: the row worked it out."""
    import planner.core as core_module
    from planner.core import core_design
    from planner.failures import Scenario, failure_modes, scenario_check

    stated = load_brief("capstone").with_changes({"workload.duty_cycle": 0.033})
    rows, _ = failure_modes(core_design(resolve(stated)), stated)
    replans: list[object] = []
    inner = core_module._core_cached

    def counted(brief, curves, with_capacity=True):  # type: ignore[no-untyped-def]
        replans.append(brief)
        return inner(brief, curves, with_capacity)

    monkeypatch.setattr(core_module, "_core_cached", counted)
    holds, margin = scenario_check(stated, Scenario.one_node_lost)
    assert not replans and margin < 0
    assert holds is next(row.ok for row in rows if row.scenario is Scenario.one_node_lost)


def test_a_variations_baseline_is_planned_without_trade_off_curves() -> None:
    """A variation compares figures with the capstone's (planner.variations.DIFF_FIGURES): its curves are not read."""
    from planner import plan
    from planner.design import _baseline

    _baseline.cache_clear()
    design = plan(load_brief("variation-a").with_changes({"workload.duty_cycle": 0.034}))
    baseline = _baseline()
    assert design.variation is not None and design.variation.diff
    assert baseline.core.slo.tradeoff_max_num_seqs == () and baseline.core.slo.tradeoff_batched_tokens == ()
    assert baseline.core.operating_point.capacity_rate_per_s == plan(load_brief("capstone")).operating_point.capacity_rate_per_s


def test_a_speculative_re_plan_plans_no_design_without_speculation(monkeypatch: pytest.MonkeyPatch) -> None:
    """The design without speculation is what the plan's mechanism conclusion compares with: a re-plan shows none."""
    import planner.core as core_module

    cores: list[object] = []
    inner = core_module._core_cached

    def counted(brief, curves, with_capacity=True):  # type: ignore[no-untyped-def]
        cores.append(brief)
        return inner(brief, curves, with_capacity)

    monkeypatch.setattr(core_module, "_core_cached", counted)
    brief = resolve(load_brief("chat-speculative").with_changes({"workload.duty_cycle": 0.0321}))
    replanned = core_module.verdict_only(brief)
    assert replanned.speculative is not None and replanned.mechanism_conclusion is None and len(cores) == 1
    assert core_module.core_design(brief).mechanism_conclusion


def test_a_plan_re_plans_the_design_without_speculation_only_when_its_conclusion_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """The verdict bar and the Brief page show no mechanism conclusion: plan() leaves its comparison with the design
    without speculation to the first read (the Capacity page, the document, the JSON), which then gives the same text."""
    import planner.core as core_module

    without: list[object] = []
    inner = core_module._core_cached

    def counted(brief, curves, with_capacity=True):  # type: ignore[no-untyped-def]
        if not brief.speculative.enabled:
            without.append(brief)
        return inner(brief, curves, with_capacity)

    monkeypatch.setattr(core_module, "_core_cached", counted)
    design = plan(load_brief("chat-speculative").with_changes({"workload.duty_cycle": 0.0322}))
    assert not without
    text = design.mechanism_conclusion
    assert len(without) == 1 and text is not None and "speculat" in text.lower()
    assert design.conclusion is not None and design.conclusion.endswith(text) and len(without) == 1


def test_a_slider_move_finds_the_pools_capacity_near_where_it_was(monkeypatch: pytest.MonkeyPatch) -> None:
    """The two pools' SLO capacity (30 halvings of the load multiple) starts at the peak it crossed last time: a
    nudged chat-disaggregated plan works out about half the pool analyses a cold one does."""
    from planner import plan

    stated = load_brief("chat-disaggregated")
    plan(stated)
    analyses = _count_pool_analyses(monkeypatch)
    nudged = plan(stated.with_changes({"workload.request_rate": 200.2}))
    assert nudged.disaggregation is not None and nudged.operating_point.capacity_rate_per_s > 0
    assert len(analyses) <= 70  # 120 when each search starts afresh


def test_the_cost_levers_re_plan_only_when_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """plan() leaves the smaller-fleet lever's search and the spot lever's two-nodes-lost row to the first read of
    cost.levers (the verdict bar and the other pages read none of them); the levers then are what they were."""
    import planner.design as design_module
    from planner import plan
    from planner.failures import Scenario

    searches: list[int | None] = []
    rows: list[Scenario] = []
    search, row = design_module.fewest_nodes_meeting, design_module.failure_mode

    def counted_search(stated, overrides=None, limit=None, headroom=False):  # type: ignore[no-untyped-def]
        searches.append(limit)
        return search(stated, overrides, limit=limit, headroom=headroom)

    def counted_row(core, scenario, *args):  # type: ignore[no-untyped-def]
        rows.append(scenario)
        return row(core, scenario, *args)

    monkeypatch.setattr(design_module, "fewest_nodes_meeting", counted_search)
    monkeypatch.setattr(design_module, "failure_mode", counted_row)
    design = plan(load_brief("agent-platform"))  # meets its SLO with N+1 and a prefix cache: both levers re-plan
    assert not searches and Scenario.two_nodes_lost not in rows
    levers = design.cost.levers
    assert searches and Scenario.two_nodes_lost in rows
    assert [lever.name for lever in levers] == [
        "fill the trough with batch work",
        "smaller fleet with a degradation ladder",
        "spot nodes for 2 of 8",
    ]


def test_the_slo_curves_are_worked_out_only_when_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """plan() leaves the SLO trade-off curves and the full-batch bound to their first read (the SLO budget page, the
    engine configuration): the plan evaluates no latency point at another engine limit until then (the chunk curve's
    points are slo.batched_tokens_point's, the max-num-seqs curve's latency_point's with that limit)."""
    import planner.slo as slo_module
    from planner import plan

    limits: list[dict[str, int]] = []
    chunks: list[int] = []
    inner, inner_chunk = slo_module.latency_point, slo_module.batched_tokens_point

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        limits.append(kwargs)
        return inner(*args, **kwargs)

    monkeypatch.setattr(slo_module, "latency_point", counted)
    monkeypatch.setattr(slo_module, "batched_tokens_point", lambda *a: chunks.append(a[4]) or inner_chunk(*a))
    design = plan(load_brief("capstone"))
    assert not [k for k in limits if k] and not chunks
    seqs, tokens = design.slo.tradeoff_max_num_seqs, design.slo.tradeoff_batched_tokens
    assert len([k for k in limits if k]) == len(seqs) and len(chunks) == len(tokens) and len(seqs) + len(tokens) > 10
    assert design.slo.at_max_batch is not None and design.slo.at_max_batch.chunk_step_ms is not None


@pytest.mark.parametrize("preset", ["rag", "variation-f", "offline-batch"])
def test_the_token_gaps_work_out_the_decode_grid_only_where_asked_inside_it(preset: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cold plan's token-gap quantiles (slo._token_gap_quantiles_s) work out the running batch's grid of decode steps
    only where an inversion asks the CDF between its ends: most quantiles lie on the mixed steps, past them."""
    inversions = _record_calls(monkeypatch, slo_module, "_token_gap_quantiles_s")
    grids = _record_calls(monkeypatch, slo_module, "_decode_gaps_s")
    plan(load_brief(preset))
    assert len(inversions) >= 6 and len(grids) * 3 <= len(inversions)


def test_a_disaggregated_design_reads_its_decode_pools_full_batch() -> None:
    """The deferred full-batch bound of a disaggregated design is its decode pool's (no prompt rides in its steps)."""
    from planner import plan

    bound = plan(load_brief("chat-disaggregated")).slo.at_max_batch
    assert bound is not None and bound.chunk_step_ms is None and bound.mixed_step_share == 0.0


def test_a_re_plans_arithmetic_is_never_written(monkeypatch: pytest.MonkeyPatch) -> None:
    """The capacity's and the SLO budget's arithmetic in words is written when read: agent-platform's plan re-plans
    its brief several times (headroom, failure rows) and writes none; reading the design writes its own, once."""
    import planner.capacity as capacity_module
    import planner.core as core_module
    from planner import plan

    written = {"capacity": 0, "slo": 0, "worked": 0}
    step_text, slo_text, worked = capacity_module._step_arithmetic, slo_module._arithmetic, core_module.capacity

    def counted(name, inner):  # type: ignore[no-untyped-def]
        def call(*args):  # type: ignore[no-untyped-def]
            written[name] += 1
            return inner(*args)

        return call

    monkeypatch.setattr(capacity_module, "_step_arithmetic", counted("capacity", step_text))
    monkeypatch.setattr(slo_module, "_arithmetic", counted("slo", slo_text))
    monkeypatch.setattr(core_module, "capacity", counted("worked", worked))
    stated = load_brief("agent-platform")
    # at this traffic its headroom re-plans the design with one node lost (a load its SLO capacity does not tell)
    design = plan(stated.with_changes({"workload.request_rate": stated.workload.request_rate * 1.002}))  # type: ignore[operator]
    assert written["worked"] > 1 and written["capacity"] == written["slo"] == 0  # its own core and its re-plans
    assert design.capacity.arithmetic["utilization"] and design.slo.arithmetic["ttft_p95_ms"]
    assert written["capacity"] == written["slo"] == 1


def test_a_disaggregated_design_writes_only_its_own_analysis_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """The other splits' and the capacity search's disaggregation analyses write no arithmetic: of the analyses the plan
    makes it writes the few whose conclusion is read (the design's own quotes it), not every one."""
    import planner.disagg as disagg_module
    from planner import plan

    written: list[int] = []  # the split points of each text written
    inner = disagg_module._splits_text
    made = _count_pool_analyses(monkeypatch)

    def counted(points, nodes, n_plus_one=""):  # type: ignore[no-untyped-def]
        written.append(len(points))
        return inner(points, nodes, n_plus_one)

    monkeypatch.setattr(disagg_module, "_splits_text", counted)
    # its stated 30% headroom is short, and the fleet that keeps it is a search of its own (resize.headroom_fix): not stated here
    design = plan(load_brief("chat-disaggregated").with_changes({"slo.headroom": None}))
    # the texts with splits to read: the design's own. The conclusion's N+1 words (disagg.splits_summary) re-plan the 4
    # splits that meet with one node lost; their operating points write their own pools' text, with no splits in it
    assert len(made) > 20 and sum(1 for points in written if points) <= 3 and len(written) <= 3 + 2 * 4
    assert design.disaggregation is not None and design.disaggregation.arithmetic["splits"]


def test_a_disaggregated_designs_other_splits_are_worked_out_when_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """plan() works out none of the other splits of the nodes (a trade-off curve for the plan's own pages): the first
    read does, once, one analysis a split; the JSON lists them where it always did (after the comparison)."""
    from planner import plan
    from planner.cli import design_json, jsonable

    made = _count_pool_analyses(monkeypatch)
    design = plan(load_brief("chat-disaggregated"))
    planned = len(made)
    assert design.disaggregation is not None
    splits = design.disaggregation.splits
    assert len(splits) > 1 and len(made) - planned == len(splits)
    assert design.disaggregation.splits is splits and len(made) - planned == len(splits)
    dumped = design_json(design)["disaggregation"]
    assert dumped["splits"] == jsonable([p.model_dump(mode="json") for p in splits])
    assert list(dumped)[list(dumped).index("comparison") + 1] == "splits"


def test_the_kv_tiers_write_their_arithmetic_when_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every re-plan of agent-platform derives the tiers' hit rate again; only the analysis whose arithmetic is read
    (the design's own: its conclusion quotes it) writes it."""
    import planner.kv_tiers as tiers_module
    from planner import plan

    made = _record_calls(monkeypatch, tiers_module, "_sessions")
    written = _record_calls(monkeypatch, tiers_module, "_sessions_text")
    design = plan(load_brief("agent-platform"))
    assert len(made) > 10 and len(written) <= 2
    assert design.kv_tiers is not None and "sessions" in design.kv_tiers.arithmetic["sessions"]


def test_a_re_plans_demand_and_memory_write_their_words_when_read() -> None:
    """A verdict-only re-plan's demand and memory have written no arithmetic; read, they write the words they always
    did, and two sections with the same figures and words compare equal (planner.written)."""
    from planner.core import verdict_core

    brief = resolve(load_brief("capstone").with_changes({"hardware.nodes": 7}))
    core = verdict_core(brief)
    assert "arithmetic" not in vars(core.demand) and "arithmetic" not in vars(core.memory)
    assert core.demand.arithmetic["request_rate_per_s"].endswith("req/s") and "params" in core.memory.arithmetic["weights_gb_per_gpu"]
    again = verdict_core(resolve(load_brief("capstone").with_changes({"hardware.nodes": 9})))
    assert again.demand == core.demand and hash(again.demand) == hash(core.demand) and again.memory != core.memory


def test_the_replanned_headroom_starts_where_the_kv_tiers_overflow(monkeypatch: pytest.MonkeyPatch) -> None:
    """agent-platform's headroom is where its re-planned verdict turns: just past the traffic at which its derived hit
    rate (with one node lost) leaves its plateau, or before it where the closed forms turn first (N+1 lost at the
    general pool's SLO capacity less a node's replicas, while the hit rate still holds). The search tests the two ends
    of the halvings' last bracket there, which decide every midpoint, so a cold plan re-plans the scaled traffic two or
    three times (11 when it looked only past the tiers' overflow), a slider move about twice from where it turned last
    time, and the limit is where the verdict turns. At each traffic a re-plan of the design and one with a node lost,
    but none of the design below a traffic where it met (cold: 3 re-plans for 2 traffics, not 4); each verdict read on
    the design's SLO capacity where that tells (core.capacity_read), counted here as a re-plan."""
    import planner.headroom as headroom_module
    from planner import plan
    from planner.resize import meets

    tested: list[float] = []
    for name in ("_meets_slo", "n_plus_one"):  # the design's own verdict, its N+1 re-plan
        inner = getattr(headroom_module, name)
        monkeypatch.setattr(
            headroom_module, name, lambda brief, known, inner=inner: tested.append(brief.workload.request_rate) or inner(brief, known)
        )
    for seqs, most in ((160, 2), (192, 3)):  # N+1 lost before the tiers overflow (the closed form's guess), then past it
        tested.clear()
        stated = load_brief("agent-platform").with_changes({"workload.request_rate": 30.03, "deployment.max_num_seqs": seqs})
        limit = plan(stated).headroom.limits[0]
        assert limit.key == "replanned" and len(set(tested)) <= most and len(tested) <= 2 * most - 1
        assert not meets(headroom_module._at_traffic(stated, limit.multiple))
        tested.clear()
        moved = stated.with_changes({"workload.request_rate": 30.06})
        assert plan(moved).headroom.limits[0].key == "replanned" and len(tested) <= 4  # two traffics' re-plans at most


def test_a_long_context_pool_too_small_is_grown_without_re_plans(monkeypatch: pytest.MonkeyPatch) -> None:
    """variation-f's long-context pool cannot carry its share at any fleet size: its fix searches fleet sizes once (with
    the pool grown), not first at the brief's pool where no fleet meets, and sizes the pool from steps 1-2 alone (each
    size was a verdict re-plan); the fix is the one every fleet size and pool size would re-plan to."""
    import planner.resize as resize_module
    from planner import plan

    searches: list[object] = []
    replans: list[object] = []
    search, replan_verdict = resize_module.fewest_nodes_meeting, resize_module.verdict_core

    def counted_search(brief, changes=None, limit=resize_module.MAX_NODES):  # type: ignore[no-untyped-def]
        searches.append(changes)
        return search(brief, changes, limit)

    def counted_replan(brief):  # type: ignore[no-untyped-def]
        replans.append(brief)
        return replan_verdict(brief)

    monkeypatch.setattr(resize_module, "fewest_nodes_meeting", counted_search)
    monkeypatch.setattr(resize_module, "verdict_core", counted_replan)
    stated = load_brief("variation-f").with_changes({"workload.duty_cycle": 0.0331})
    fix = plan(stated).fix
    assert fix is not None and fix.long_context_nodes > stated.deployment.long_context_nodes
    assert searches == [{"deployment.long_context_nodes": fix.long_context_nodes}]
    assert not any(b.deployment.long_context_nodes != fix.long_context_nodes for b in replans)
    fixed = stated.with_changes(fix.overrides)
    assert resize_module.meets(fixed) and not resize_module.meets(fixed.with_changes({"hardware.nodes": fix.nodes - 1}))


def test_each_long_context_pool_is_asked_once_a_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    """variation-f's core advises the long-context pool that carries its share (long_context_nodes_needed, from the
    brief's own pool up) and its fleet fix asks again whether the brief's own pool carries (resize._long_pool_carries):
    each pool size is worked out once a plan (the fix's was the advice's first, worked out twice)."""
    import planner.core as core_module

    asked = _record_briefs(monkeypatch, core_module, "long_context_busy", lambda b: (b.hardware.nodes, b.deployment.long_context_nodes))
    stated = load_brief("variation-f")
    design = plan(stated)
    assert design.fix is not None and len(asked) >= 4  # the advice's search and the fix: several pool sizes asked
    assert (
        stated.hardware.nodes + stated.deployment.long_context_nodes + stated.deployment.spare_nodes,
        stated.deployment.long_context_nodes,
    ) in asked
    assert len(set(asked)) == len(asked)


def test_a_variations_baseline_plans_no_failure_row(monkeypatch: pytest.MonkeyPatch) -> None:
    """A variation reads the capstone's figures and cost, never its cost levers: its one-node-lost row (the levers'
    spot-node count) is re-planned only if the levers are read, and they are then the capstone plan's own."""
    import planner.design as design_module
    from planner import plan

    rows: list[str] = []
    row = design_module.one_node_lost

    def counted_row(core, stated=None):  # type: ignore[no-untyped-def]
        rows.append(core.brief.title)
        return row(core, stated)

    monkeypatch.setattr(design_module, "one_node_lost", counted_row)
    baseline = design_module._baseline()
    assert not rows
    assert baseline.cost.levers == plan(load_brief("capstone")).cost.levers and rows


def test_a_rollouts_deadline_limit_is_found_in_a_few_objective_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    """A rollout's makespan grows about linearly with its prompts: the largest batch that meets its deadline is found by a
    secant through the time's margins (at most 10 objective passes; 18 by bisection to one prompt), and it is the count
    a bisection finds: that batch meets the deadline, one prompt more does not."""
    import planner.headroom as headroom_module
    from planner import plan

    counts: list[int] = []
    inner = headroom_module.objective_analysis

    def counted(brief, *args):  # type: ignore[no-untyped-def]
        counts.append(brief.objective.batch_prompts)
        return inner(brief, *args)

    monkeypatch.setattr(headroom_module, "objective_analysis", counted)
    design = plan(load_brief("rl-rollout").with_changes({"objective.batch_deadline_s": 601.0}))
    limit = design.headroom.limits[0]
    assert limit.key == "deadline" and len(counts) <= 10
    most = round(limit.multiple * design.brief.objective.batch_prompts) - 1
    for count, meets in ((most, True), (most + 1, False)):
        worked = inner(design.brief.with_changes({"objective.batch_prompts": count}), design.shape, design.memory)
        assert worked is not None and (worked.time_s <= 601.0) is meets


def test_the_fewest_nodes_start_where_utilization_predicts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Utilization falls about as 1 / nodes: variation-d's six regional fleet sizes start where the brief's own fleet
    predicts and take about five sizing passes each (113 in all by bisection over 100,000 nodes), each still the
    fewest nodes at or under its target."""
    import planner.core as core_module
    from planner import plan
    from planner.variations import TARGET_UTILIZATION, _scaled

    sized: list[int] = []
    inner = core_module.utilization_no_prefix_cache

    def counted(brief, nodes):  # type: ignore[no-untyped-def]
        sized.append(nodes)
        return inner(brief, nodes)

    monkeypatch.setattr(core_module, "utilization_no_prefix_cache", counted)
    design = plan(load_brief("variation-d").with_changes({"workload.duty_cycle": 0.0333}))
    assert design.variation is not None and design.variation.regions and len(sized) <= 40
    for fleet in design.variation.regions:
        for share, target, nodes in ((fleet.share, TARGET_UTILIZATION, fleet.own_nodes), (fleet.failover_share, 1.0, fleet.failover_nodes)):
            brief = _scaled(design.brief, share)
            assert inner(brief, nodes) <= target and (nodes == 1 or inner(brief, nodes - 1) > target)


def test_a_prefill_pool_that_cannot_keep_up_is_fixed_by_a_fleet_with_its_split_searched(monkeypatch: pytest.MonkeyPatch) -> None:
    """chat-disaggregated at twice its traffic: its prefill pool is over 100% busy. Nodes added with the brief's 12
    prefill nodes kept go to the decode pool, so no fleet met and there was no fix (review s10, finding 2: the search
    keeps the split). The fleet search now asks each size for the split that meets (nearest the brief's 3:1 first):
    27 nodes with 21 on prefill meet with N+1, in a bounded number of re-plans (the splits tried at a fleet size stop
    at resize._SPLIT_TRIES)."""
    import planner.resize as resize_module
    from planner import plan

    fleets = _record_briefs(monkeypatch, resize_module, "meets_check", lambda b: (b.hardware.nodes, b.disaggregation.prefill_nodes))
    stated = load_brief("chat-disaggregated")
    doubled = stated.with_changes({"workload.request_rate": 2.002 * stated.workload.request_rate})
    design = plan(doubled)
    assert design.disaggregation is not None and design.disaggregation.prefill_busy >= 1
    assert design.fix is not None and design.fix.overrides == {"hardware.nodes": 27, "disaggregation.prefill_nodes": 21}
    assert "21 of them prefill, 12 now" in design.fix.text
    assert len(fleets) <= 4 * 2 * resize_module._SPLIT_TRIES  # a few fleet sizes, each at most _SPLIT_TRIES splits
    monkeypatch.undo()
    fixed = plan(doubled.with_changes(design.fix.overrides)).verdict
    assert fixed.meets_slo and fixed.availability_ok
    assert not plan(doubled.with_changes({"hardware.nodes": 27})).verdict.meets_slo  # the brief's 12 prefill nodes kept


def test_the_prefill_split_fix_re_plans_no_split_whose_pools_miss(monkeypatch: pytest.MonkeyPatch) -> None:
    """chat-disaggregated at 1.3x its traffic: its prefill pool is over 100% busy, and every split of its 16 nodes with
    more on prefill starves its decode pool. The brief's own core tells that (resize._short_pools), so the prefill
    split fix re-plans none of them (it re-planned three) and finds none, as before."""
    import planner.resize as resize_module

    replanned = _record_briefs(monkeypatch, resize_module, "meets", lambda b: b.disaggregation.prefill_nodes)
    stated = load_brief("chat-disaggregated")
    brief = stated.with_changes({"workload.request_rate": 1.3 * stated.workload.request_rate})
    assert resize_module._prefill_split_fix(brief) is None and not replanned


def test_the_pools_capacity_starts_where_their_steady_state_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    """chat-disaggregated's one-node-lost row (15 nodes, 12 of them prefill): its decode pool's batch reaches
    max-num-seqs before a latency target, so the latency jumps to unbounded at its capacity and no margin steers the
    search (32 analyses, one per halving). It starts where the closed forms put the end of the steady state: a few
    analyses, the same capacity."""
    import planner.disagg as disagg
    from planner.core import replan

    brief = resolve(load_brief("chat-disaggregated").with_changes({"workload.request_rate": 200.2, "hardware.nodes": 15}))
    analyses = _count_pool_analyses(monkeypatch)
    core = replan(brief)
    assert core.disaggregation is not None and len(analyses) <= 8
    op = core.operating_point
    scale = op.capacity_rate_per_s / core.disaggregation.decode_rate_per_replica_per_s
    monkeypatch.undo()
    dis = core.disaggregation
    for multiple, stable in ((scale, True), (scale * (1 + 1e-8), False)):
        again = disagg.disaggregation_analysis(
            brief, core.shape, core.pools, core.demand.request_rate_per_s * multiple, core.slo, core.capacity, splits=False
        )
        assert again.stable is stable and dis.decode_nodes == again.decode_nodes


def test_a_scale_out_option_works_out_no_slo_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """moe-deepseek's scale-out options (EP kept in one node, DP attention) read a replica's sequences, its decode step
    and its SLO capacity: no SLO budget or verdict is worked out for them, and each figure is the whole re-plan's."""
    import planner.core as core_module
    from planner.core import core_design, replan
    from planner.scaleout import scale_out_analysis

    core = core_design(resolve(load_brief("moe-deepseek").with_changes({"workload.duty_cycle": 0.0331})))
    budgets: list[object] = []
    inner = core_module.slo_budget

    def counted(*args):  # type: ignore[no-untyped-def]
        budgets.append(args)
        return inner(*args)

    monkeypatch.setattr(core_module, "slo_budget", counted)
    analysis = scale_out_analysis(core)
    assert analysis is not None and [o.feasible for o in analysis.options] == [True, True] and not budgets
    monkeypatch.undo()
    for option in analysis.options:
        whole = replan(core.brief.with_changes(option.overrides))
        per_node = whole.operating_point.capacity_rate_per_s * whole.shape.units_per_replica_group / whole.shape.replica_nodes
        assert (
            option.capacity_rate_per_node_per_s == per_node and option.max_sequences_per_replica == whole.memory.max_sequences_per_replica
        )


def test_the_one_node_lost_row_is_planned_only_where_the_plan_reads_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """agent-platform's headroom re-plans the traffic (its KV tiers), so its N+1 limit does not read the design with one
    node lost: a verdict-only check says N+1 holds, and the row (a re-plan with its own SLO-capacity search: the tiers
    derive another hit rate with a node fewer) is planned only when the failure table is read. Where N+1 is lost and
    the design itself meets, the verdict's words read the one-node-lost re-plan's first problem alone
    (failures.lost_first_problem), not the row either."""
    import planner.design as design_module
    from planner import plan
    from planner.failures import Scenario

    rows: list[Scenario] = []
    row = design_module.failure_mode

    def counted_row(core, scenario, *args):  # type: ignore[no-untyped-def]
        rows.append(scenario)
        return row(core, scenario, *args)

    monkeypatch.setattr(design_module, "failure_mode", counted_row)
    design = plan(load_brief("agent-platform").with_changes({"workload.request_rate": 60.06}))
    assert not rows and design.verdict.availability_ok is False
    lost = plan(load_brief("agent-platform").with_changes({"workload.request_rate": 49.0}))  # N+1 lost from x1.535 (46 req/s)
    assert not rows and lost.verdict.meets_slo and not lost.verdict.availability_ok
    assert any(p.problem.startswith("no N+1: with one node lost") for p in lost.verdict.problems)
    met = plan(load_brief("agent-platform").with_changes({"workload.request_rate": 30.06}))
    assert met.verdict.availability_ok and not rows
    assert next(r for r in met.failures if r.scenario is Scenario.one_node_lost).ok


@pytest.mark.parametrize(("preset", "nodes", "needed"), [("moe-deepseek", 10, 12), ("lora-platform", 2, 3), ("agent-platform", 5, 6)])
def test_a_lost_n_plus_one_counts_the_nodes_from_the_brief_and_the_count_keeps_it(preset, nodes, needed):
    """A design that meets the SLO but not with one node lost: the advice gives the fleet that keeps N+1 in all, counted
    from the brief's nodes (the lost row's own advice counted from the fleet left after the loss: moe-deepseek on 10
    nodes read 'add nodes: 10 in all (2 more)'; agent-platform on 5 'raise max_num_seqs to ~240', which still fails),
    the fix is that fleet, and it re-plans as meeting with N+1."""
    design = plan(load_brief(preset).with_changes({"hardware.nodes": nodes}))
    assert design.verdict.meets_slo and not design.verdict.availability_ok
    lost = next(p for p in design.verdict.problems if p.problem.startswith("no N+1"))
    assert design.fix is not None and design.fix.overrides == {"hardware.nodes": needed}
    assert lost.change == design.fix.text and lost.overrides == design.fix.overrides
    assert lost.change.startswith(f"{needed} nodes ({needed - nodes} more)")
    assert "in all" not in lost.problem and "raise" not in lost.problem  # the cause, without the lost fleet's advice
    fixed = plan(load_brief(preset).with_changes(design.fix.overrides))
    assert fixed.verdict.meets_slo and fixed.verdict.availability_ok


def test_a_lost_n_plus_one_on_a_disaggregated_design_advises_the_fix_split():
    """chat-disaggregated with 10 of its 16 nodes on prefill loses N+1 on the prefill pool: the advice is the fix's
    re-planned fleet and split (15 nodes, 11 on prefill: one fewer node), not 'add nodes: 15 in all'."""
    design = plan(load_brief("chat-disaggregated").with_changes({"disaggregation.prefill_nodes": 10}))
    lost = next(p for p in design.verdict.problems if p.problem.startswith("no N+1"))
    assert design.fix is not None and design.fix.overrides == {"hardware.nodes": 15, "disaggregation.prefill_nodes": 11}
    assert lost.change == design.fix.text and "add nodes" not in lost.change and lost.overrides == design.fix.overrides
    assert lost.problem.count("prefill pool") == 1


LOSES_N_PLUS_ONE = [  # designs that meet the SLO but not with one node lost, at the traffic a slider moves them to
    ("rag", "x1.2"),  # the lost design's p95 ITL misses and rides the chunk: its advice re-plans
    ("lora-platform", "x1.2"),
    ("multimodal", "x1.3"),
    ("moe-deepseek", {"hardware.nodes": 10}),
    ("agent-platform", {"workload.request_rate": 49.0}),
    ("chat-disaggregated", {"disaggregation.prefill_nodes": 10}),
]


def _loaded(preset: str, change: dict[str, object] | str) -> Brief:
    brief = load_brief(preset)
    if isinstance(change, dict):
        return brief.with_changes(change)
    factor, w = float(change[1:]), brief.workload
    if w.request_rate is not None:
        return brief.with_changes({"workload.request_rate": w.request_rate * factor})
    return brief.with_changes({"workload.duty_cycle": min(1.0, w.duty_cycle * factor)})


@pytest.mark.parametrize("change", [("rag", "x1.3"), ("qps10-tp4", "x1.2")])
def test_the_chunk_advice_and_its_setting_fix_re_plan_the_advised_chunk_once(
    change: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The chunk advice confirms the value it names on that brief's verdict core (core._judged_core), the core the fleet
    fix's check that the setting alone meets (resize._setting_fix) reads again: no brief is worked out twice (the
    advised chunk was: a verdict_only re-plan for the advice, a judged core for the fix; rag at 1.3x its rate
    14,479 -> 13,405 calls a cold plan)."""
    import planner.core as core_module

    worked: list[Brief] = []
    inner = core_module._core_design_of

    def counted(brief, *args, **kwargs):  # type: ignore[no-untyped-def]
        worked.append(brief)
        return inner(brief, *args, **kwargs)

    monkeypatch.setattr(core_module, "_core_design_of", counted)
    brief = resolve(_loaded(*change))
    design = plan(brief)
    assert design.fix is not None and design.fix.setting
    assert worked.count(brief.with_changes(design.fix.overrides)) == 1 and len(worked) == len(set(worked))


@pytest.mark.parametrize(("preset", "change"), LOSES_N_PLUS_ONE)
def test_the_words_of_a_lost_n_plus_one_are_re_planned_without_advice(preset: str, change: object, monkeypatch: pytest.MonkeyPatch) -> None:
    """plan() words a lost N+1 by the one-node-lost design's first problem (design._lost_cause), whose advice (the
    chunk size, the fleet that carries the peak) it never reads: that design is re-planned without it
    (core.worded_replan), the same problems in the same order and words, and the plan is the one the advised re-plan
    gave (rag at 1.2x its traffic re-planned two chunk sizes for it). The failure table's row keeps its advice."""
    import planner.design as design_module
    import planner.failures as failures_module
    from planner import plan
    from planner.cli import design_json
    from planner.core import replan, worded_replan
    from planner.failures import Scenario, row_core

    brief = _loaded(preset, change)  # type: ignore[arg-type]
    design = plan(brief)
    assert design.verdict.meets_slo and not design.verdict.availability_ok
    kept = design_json(design)
    row = next(r for r in design.failures if r.scenario is Scenario.one_node_lost)
    advised, worded = row_core(design._deferred.core, row, brief), row_core(design._deferred.core, row, brief, worded_replan)
    assert advised is not None and worded is not None and advised is not worded
    assert [p.problem for p in worded.verdict.problems] == [p.problem for p in advised.verdict.problems]
    assert worded.slo.model_dump() == advised.slo.model_dump()
    assert worded.operating_point.model_dump() == advised.operating_point.model_dump()
    _clear_all()
    monkeypatch.setattr(design_module, "worded_replan", replan)  # the words from the advised re-plan, as before
    monkeypatch.setattr(failures_module, "worded_replan", replan)
    assert design_json(plan(brief)) == kept


@pytest.mark.parametrize(("preset", "change"), LOSES_N_PLUS_ONE)
def test_a_lost_n_plus_one_is_worded_from_its_re_plan_without_its_row(preset: str, change: object, monkeypatch: pytest.MonkeyPatch) -> None:
    """plan() words a lost N+1 by the one-node-lost re-plan's first problem (failures.lost_first_problem): the one the
    row's own core lists (row_core with worded_replan), so the row, whose figures and note those words do not read,
    is worked out only for a disaggregated design (its row is the binding pool's loss, failures._binding_pool_row); an aggregated design's re-plan
    works out no full SLO budget for them (core.worded_core). The plan is the one the row gave."""
    import planner.core as core_module
    import planner.design as design_module
    import planner.failures as failures_module
    from planner.cli import design_json
    from planner.core import worded_replan
    from planner.failures import Scenario, failure_mode, lost_first_problem, row_core

    brief = _loaded(preset, change)  # type: ignore[arg-type]
    design = plan(brief)
    assert design.verdict.meets_slo and not design.verdict.availability_ok
    core, stated = design._deferred.core, design._deferred.stated
    lost = row_core(core, failure_mode(core, Scenario.one_node_lost, stated, worded_replan), stated, worded_replan)
    first = lost_first_problem(core, stated)
    if core.disaggregation is not None:
        assert first is None
    else:
        assert lost is not None and first == lost.verdict.problems[0].problem
    _clear_all()
    rows: list[Brief] = []

    def counted(base: object, scenario: Scenario, *args: object, **kwargs: object) -> object:
        rows.append(base.brief)  # type: ignore[attr-defined]
        return failure_mode(base, scenario, *args, **kwargs)  # type: ignore[arg-type]

    budgets: list[Brief] = []

    def budget(brief: Brief, *args: object, **kwargs: object) -> object:
        budgets.append(brief)
        return slo_budget(brief, *args, **kwargs)  # type: ignore[arg-type]

    def counted_pool(base: object, *args: object) -> object:  # a disaggregated design's binding pool's row
        rows.append(base.brief)  # type: ignore[attr-defined]
        return binding_pool_row(base, *args)  # type: ignore[arg-type]

    slo_budget, binding_pool_row = core_module.slo_budget, failures_module._binding_pool_row
    monkeypatch.setattr(failures_module, "failure_mode", counted)
    monkeypatch.setattr(design_module, "failure_mode", counted)
    monkeypatch.setattr(failures_module, "_binding_pool_row", counted_pool)
    monkeypatch.setattr(core_module, "slo_budget", budget)
    design = plan(brief)
    assert len(rows) == (1 if core.disaggregation is not None else 0)
    assert lost is None or core.disaggregation is not None or lost.brief not in budgets
    kept = design_json(design)
    _clear_all()
    monkeypatch.setattr(design_module, "lost_first_problem", lambda *_: None)  # the words from the row, as before
    assert design_json(plan(brief)) == kept


@pytest.mark.parametrize("preset", preset_names())
def test_the_worded_core_lists_the_worded_re_plans_problems_in_its_words(preset: str) -> None:
    """core.worded_core, without the SLO-capacity search and with the SLO budget's judged p95s alone, lists
    worded_replan's problems in the same order and words: at a light, the stated and a heavy load, with a node lost,
    with targets each p95 misses and with targets below the floors no load reaches."""
    from planner.core import worded_core, worded_replan
    from planner.errors import BriefError

    brief = load_brief(preset)
    slo = brief.slo
    variants: list[dict[str, object]] = [
        {},
        {"hardware.nodes": max(brief.hardware.nodes - 1, 1)},
        {"slo.ttft_p95_ms": slo.ttft_p95_ms * 0.3},
        {"slo.ttft_p95_ms": slo.ttft_p95_ms * 0.6, "slo.itl_p95_ms": slo.itl_p95_ms * 0.8},
        {"slo.ttft_p95_ms": 40, "slo.itl_p95_ms": 3},  # below the fixed path and one sequence's step
    ]
    compared = 0
    for change in ("x0.5", "x1.0", "x1.5"):
        for variant in variants:
            try:
                changed = resolve(_loaded(preset, change).with_changes(variant))
                worded = [p.problem for p in worded_replan(changed).verdict.problems]
            except BriefError:  # InfeasibleDesign too: a design that cannot run lists no problems
                continue
            assert [p.problem for p in worded_core(changed).verdict.problems] == worded, (change, variant)
            compared += 1
    assert compared


def test_the_fleet_fix_of_a_multi_node_replica_starts_at_the_fleet_its_lost_replica_needs(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fleet fix's search starts from the SLO capacity's prediction (resize._capacity_guess), which adds the nodes
    the one-node-lost row takes from the general pool: a multi-node replica's all of them (failures._nodes_lost). At
    1.2x its traffic moe-deepseek (2-node replicas) loses its N+1: the prediction, 11 nodes to carry the peak and the
    lost replica's 2, is a node short of the fix's 14, and the confirmation reads two fleet sizes and their
    one-node-lost designs on the plan's SLO capacity (a prediction of 12, one node lost, read three)."""
    import planner.failures as failures_module
    import planner.resize as resize_module

    brief = _loaded("moe-deepseek", "x1.2")
    _clear_all()
    guesses: list[int | None] = []
    read: list[int] = []
    guess, capacity_read = resize_module._capacity_guess, failures_module.capacity_read

    def guessed(*args: object) -> int | None:
        guesses.append(guess(*args))  # type: ignore[arg-type]
        return guesses[-1]

    def counted(known: object, brief: Brief) -> bool | None:
        read.append(brief.hardware.nodes)
        return capacity_read(known, brief)  # type: ignore[arg-type]

    monkeypatch.setattr(resize_module, "_capacity_guess", guessed)
    monkeypatch.setattr(resize_module, "capacity_read", counted)
    monkeypatch.setattr(failures_module, "capacity_read", counted)
    design = plan(brief)
    assert design.fix is not None and not design.fix.setting and design.fix.nodes == 14 and guesses == [13]
    assert sorted(read) == [11, 12, 13, 14]  # 13 and 14, each with its lost replica's two nodes


def test_the_words_of_a_disaggregated_designs_lost_n_plus_one_re_plan_only_the_binding_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    """chat-disaggregated at 1.2x its traffic loses N+1: its words re-plan the loss from the pool that binds alone (the
    other pool's is named by its verdict and load as the one-node-lost read found them), one worded re-plan, not two."""
    import planner.failures as failures_module
    from planner.core import worded_replan

    replanned: list[int] = []

    def counted(brief: Brief) -> object:
        replanned.append(brief.disaggregation.prefill_nodes)
        return worded_replan(brief)

    monkeypatch.setattr(failures_module, "worded_replan", counted)
    design = plan(_loaded("chat-disaggregated", "x1.2"))
    assert design.verdict.meets_slo and not design.verdict.availability_ok
    assert len(replanned) == 1


def test_a_disaggregated_fleet_search_confirms_on_the_verdicts_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """chat-disaggregated at 1.1x its traffic: the fleet that keeps its 30% headroom is confirmed at 18 nodes (19 and
    18 meet, 17 misses the headroom). A confirmation reads no margin, so 17 is judged without its N+1 re-plans and
    without the pools' SLO-capacity search (keeps_headroom: its pools miss a millionth below 1.3x the peak), which
    the margins took; the fix is the one they gave."""
    import planner.resize as resize_module

    capacity: list[int] = []
    lost: list[int] = []
    keeps, n_plus_one = resize_module.keeps_headroom, resize_module.n_plus_one_check

    def counted_keeps(brief: Brief) -> tuple[bool, float]:
        capacity.append(brief.hardware.nodes)
        return keeps(brief)

    def counted_lost(brief: Brief, own: object = None) -> tuple[bool, float]:
        lost.append(brief.hardware.nodes)
        return n_plus_one(brief, own)  # type: ignore[arg-type]

    monkeypatch.setattr(resize_module, "keeps_headroom", counted_keeps)
    monkeypatch.setattr(resize_module, "n_plus_one_check", counted_lost)
    stated = load_brief("chat-disaggregated")
    design = plan(stated.with_changes({"workload.request_rate": 1.1 * stated.workload.request_rate}))
    assert design.headroom_fix is not None and design.headroom_fix.nodes == 18
    assert capacity == [] and lost == [19, 18]


def test_a_fleet_read_on_the_plans_capacity_reads_no_lost_node_where_the_headroom_misses(monkeypatch: pytest.MonkeyPatch) -> None:
    """qps200-chat at 1.1x its rate: the fleet that keeps its 30% headroom is confirmed at 17 nodes, read on the plan's
    own SLO capacity (resize._read_first). 16 misses the headroom on that read, so its one-node-lost design is not read
    (it was, before the headroom was judged); 17's is: the fix is the one the re-plans give."""
    import planner.resize as resize_module

    lost: list[int] = []
    inner = resize_module.lost_read

    def counted(brief: Brief, known: object) -> bool | None:
        lost.append(brief.hardware.nodes)
        return inner(brief, known)  # type: ignore[arg-type]

    monkeypatch.setattr(resize_module, "lost_read", counted)
    stated = load_brief("qps200-chat")
    brief = stated.with_changes({"workload.request_rate": 1.1 * stated.workload.request_rate})
    design = plan(brief)
    assert design.headroom_fix is not None and design.headroom_fix.nodes == 17 and lost == [17]
    monkeypatch.undo()
    assert resize_module._meets(brief.with_changes({"hardware.nodes": 17}), headroom=True)[0]
    assert not resize_module._meets(brief.with_changes({"hardware.nodes": 16}), headroom=True)[0]


def test_the_prompt_service_moments_of_one_ceiling_work_out_its_terms_once() -> None:
    """variation-f: a prompt token costs the same beside every decode batch (its all-reduces take no time), so every
    prompt-service moment of its cold plan clamps the same prompt work under the same ceiling. The 18 new batches its
    solves evaluate each clamp at their own floor (lengths.clamped_moments) and work out the ceiling's incomplete gamma,
    its ladder and the full moments once (lengths._below_ceiling), not 18 times."""
    from planner import lengths

    plan(load_brief("variation-f"))
    assert lengths.clamped_moments.cache_info().misses == 18
    assert lengths._below_ceiling.cache_info().misses == 1


def test_a_step_whose_all_reduces_cost_nothing_shares_no_communication_with_its_prompt_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    """variation-b counts its all-reduces but gives them no latency and no bytes (the seed's flat TP factor): a new
    decode batch's step parts (slo._Engine._step_at) work out no prompt token's share of the communication, which is
    exactly 0 there (step_model.communicates); they did, two comm_part_s a new batch."""
    shares: list[float] = []
    inner = slo_module.comm_part_s

    def counted(k: tuple[float, ...], tokens: float) -> float:
        shares.append(tokens)
        return inner(k, tokens)

    monkeypatch.setattr(slo_module, "comm_part_s", counted)
    plan(load_brief("variation-b"))
    assert shares == []
