"""Headroom (planner.headroom) speaks of the limits the verdict judges: the traffic multiple it states is the one at
which `plan --set` with that traffic stops meeting the SLO, so the failure table's "traffic doubles" agrees with it."""

from __future__ import annotations

import math

import pytest

from planner import apply_overrides, load_brief, plan
from planner.brief import Brief
from planner.fmt import pct
from planner.headroom import sizing_words
from planner.sweeps import utilization_vs_traffic

pytestmark = pytest.mark.unit

# latency-judged briefs whose hit rate does not move with the load (KV-tier and deadline briefs are judged otherwise)
PRESETS = (
    "capstone",
    "qps10-tp4",
    "qps200-chat",
    "variation-a",
    "variation-c",
    "chat-disaggregated",
    "rag",
    "moe-deepseek",
    "chat-speculative",  # N+1 binds (x2.99) long before its SLO capacity (x5.98): review s6 finding 3
    "lora-platform",
    "multimodal",
)


def _at_traffic(brief: Brief, multiple: float) -> bool:
    """Whether the brief with its peak traffic scaled by `multiple` meets its SLO with the N+1 its availability target
    asks for, as `plan --set` judges it: the verdict headroom speaks of."""
    w = brief.workload
    if w.rate_given:
        assert w.request_rate is not None
        override = {"workload.request_rate": w.request_rate * multiple}
    else:
        assert w.users is not None
        override = {"workload.users": int(w.users * multiple)}
    v = plan(apply_overrides(brief, override)).verdict
    return v.feasible and v.meets_slo and v.availability_ok  # N+1 too, where the availability target asks for it


@pytest.mark.parametrize("preset", PRESETS)
def test_the_headroom_is_where_the_replanned_verdict_turns(preset: str) -> None:
    brief = load_brief(preset)
    h = plan(brief).headroom.multiple
    assert h > 1
    assert _at_traffic(brief, h * 0.97), f"{preset}: misses below its headroom x{h:.3g}"
    assert not _at_traffic(brief, h * 1.03), f"{preset}: still meets above its headroom x{h:.3g}"


@pytest.mark.parametrize("preset", PRESETS)
def test_traffic_doubles_agrees_with_the_headroom(preset: str) -> None:
    design = plan(load_brief(preset))
    doubles = next(m for m in design.failures if m.scenario.value == "traffic_doubles")
    assert doubles.ok == (design.headroom.multiple >= 2), (preset, design.headroom.text)


def test_capstone_headroom_is_the_long_context_pool_not_the_sizing_arithmetic() -> None:
    design = plan(load_brief("capstone"))
    h, op = design.headroom, design.operating_point
    limits = {lim.key: lim for lim in h.limits}
    assert h.binding == limits["long_context"].name and h.multiple == pytest.approx(limits["long_context"].multiple, rel=1e-2)
    assert h.multiple <= limits["long_context"].multiple  # rounded down: never a multiple the design cannot carry
    # the one long-context node takes the prompts over 6,000 tokens (39.9% busy at the peak): it fills at ~x3.07,
    # before the general pool reaches its SLO capacity (x3.34), so traffic x2 fits (the failure table's row)
    assert 2.0 < h.multiple < limits["general"].multiple
    assert limits["general"].multiple == pytest.approx(op.capacity_rate_per_s / op.rate_per_replica_per_s, rel=1e-9)  # 29.4 / 8.8
    assert design.capacity.sizing_load_multiple == pytest.approx(1 / design.capacity.utilization)  # x3.61: the seed's, kept apart
    assert h.multiple < design.capacity.sizing_load_multiple
    assert "long-context pool" in h.text and f"x{h.multiple:.3g} the peak traffic" in h.text  # rounded down


def test_the_traffic_chart_crosses_100_percent_at_the_headroom() -> None:
    brief = load_brief("capstone")
    h = plan(brief).headroom.multiple
    for p in utilization_vs_traffic(brief):
        worst = max(p.general_load_vs_capacity, p.long_context_utilization, p.utilization)
        assert (worst < 1) == (p.multiplier < h), p


def test_a_hit_rate_that_follows_the_load_is_replanned() -> None:
    """agent-platform derives its hit rate from its KV tiers, which fill as the traffic grows: the closed form (its
    general pool's SLO capacity, x2.08) overstates the headroom, so the traffic is re-planned and the verdict turns
    before x2, where `plan --set workload.request_rate=60` misses (review s4, finding 1). What turns there is N+1:
    at x1.7213 the design still meets its SLO, and with one node lost it does not (review s6, finding 3)."""
    brief = load_brief("agent-platform")
    h = plan(brief).headroom
    assert h.binding == "N+1 is lost in the re-planned design"
    assert h.multiple <= 2.0 and _at_traffic(brief, h.multiple * 0.995) and not _at_traffic(brief, 2.0)
    beyond = plan(brief.with_changes({"workload.request_rate": brief.workload.request_rate * 1.7213})).verdict
    assert beyond.meets_slo and not beyond.availability_ok


@pytest.mark.parametrize("preset", ["offline-batch", "rl-rollout"])
def test_a_deadline_brief_has_its_deadline_as_its_only_limit(preset: str) -> None:
    """Judged on its deadline, not on latency: the SLO capacity of its replicas is no limit of its verdict."""
    design = plan(load_brief(preset))
    goal, h = design.objective, design.headroom
    assert goal is not None and [lim.key for lim in h.limits] == ["deadline"]
    if preset == "offline-batch":  # a job's time grows with its tokens: deadline / time
        assert h.multiple == pytest.approx(goal.deadline_s / goal.time_s, rel=1e-2) and h.multiple <= goal.deadline_s / goal.time_s
    else:  # a rollout's straggler does not grow with the prompts: more work fits than deadline / time says
        assert h.multiple > goal.deadline_s / goal.time_s
    assert "deadline" in h.text and "SLO capacity" not in h.text


def test_a_rollouts_deadline_multiple_takes_a_few_objective_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rollout's time grows about linearly with its prompts: the chord through two batches' times lands just past
    the first batch that misses, and the search settles beside it (4 passes; 9 when the batch doubled until it missed)."""
    import planner.headroom as headroom_module
    from benchmarks.plan_speed import _clear_all

    _clear_all()
    inner, counts = headroom_module.rollout_makespan_s, []
    monkeypatch.setattr(
        headroom_module, "rollout_makespan_s", lambda brief, shape, mem, count: counts.append(count) or inner(brief, shape, mem, count)
    )
    limit = plan(load_brief("rl-rollout")).headroom.limits[0]
    assert "30,686 prompts still finishes in time, 30,687 does not" in limit.arithmetic
    assert len(counts) <= 4  # the batch's own time is the objective's


def test_a_rollouts_makespan_alone_is_its_objectives_time() -> None:
    """objective.rollout_makespan_s (the headroom's deadline search) equals objective_analysis's time_s for the brief
    with that many prompts, exactly, over batches small and large, fleets, lengths and a budget that settles the batch."""
    from planner.core import core_design
    from planner.mechanisms import resolve
    from planner.objective import objective_analysis, rollout_makespan_s

    stated = load_brief("rl-rollout")
    budget_is_the_batch = {"deployment.max_num_batched_tokens": stated.deployment.max_num_seqs}
    short = {"workload.output_tokens_mean": 300, "workload.output_tokens_p95": 300}  # no spread: the mean is the longest
    for changes in ({}, {"hardware.nodes": 1}, {"hardware.nodes": 5}, budget_is_the_batch, short):
        core = core_design(resolve(stated.with_changes(changes)), curves=False)
        for count in (1, 7, 100, core.brief.objective.batch_prompts, 30_687, 400_000, 10_000_000):
            more = core.brief.with_changes({"objective.batch_prompts": count})
            worked = objective_analysis(more, core.shape, core.memory)
            assert worked is not None
            assert rollout_makespan_s(core.brief, core.shape, core.memory, count) == worked.time_s, (changes, count)


def test_the_verdict_bar_names_the_headroom_and_its_limit() -> None:
    from ui.verdict_bar import _binding

    text = _binding(plan(load_brief("capstone")))
    assert text.startswith("headroom x3.07 before the long-context pool fills;")


@pytest.mark.parametrize("preset", [*PRESETS, "agent-platform", "offline-batch"])
def test_the_sizing_crossing_reads_the_utilization_capacity_works_out(preset: str) -> None:
    """The sizing limit's search reads capacity.utilization_at at each multiple: the very figure capacity() gives
    there (the same arithmetic without its text), for a rate and for users x duty."""
    from planner.capacity import capacity, utilization_at
    from planner.core import core_design
    from planner.headroom import scaled_demand
    from planner.mechanisms import resolve

    core = core_design(resolve(load_brief(preset)), curves=False)
    for multiple in (0.37, 1.0, 2.5, 9.0):
        dem = scaled_demand(core.demand, multiple)
        assert utilization_at(core.brief, core.shape, dem) == capacity(core.brief, core.shape, dem, core.memory).utilization


@pytest.mark.parametrize("preset", ["capstone", "variation-c", "variation-f", "chat-disaggregated", "agent-platform"])
@pytest.mark.parametrize("long_context_nodes", [None, 1, 3])
def test_the_crossings_start_from_the_designs_own_figures(preset: str, long_context_nodes: int | None) -> None:
    """headroom._crossing takes its value at x1 from the design (not worked out again): the long-context pool's busy
    share and the sizing utilization read at x1 are the design's own figures, exactly, for a core worked out and for one
    read on an SLO capacity (the one-node-lost design plan() reads)."""
    from planner.capacity import utilization_at
    from planner.core import CapacityReadCore, CoreDesign, capacity_read_core, core_design
    from planner.failures import Scenario, scenario_overrides
    from planner.headroom import long_context_utilization_at, scaled_demand
    from planner.mechanisms import resolve

    stated = load_brief(preset)
    if long_context_nodes is not None:
        stated = stated.with_changes({"deployment.long_context_nodes": long_context_nodes, "workload.long_context_share": 0.05})
    core = core_design(resolve(stated), curves=False)
    cores: list[object] = [core]
    read = capacity_read_core(core, resolve(stated.with_changes(scenario_overrides(stated, Scenario.one_node_lost))))
    if read is not None:
        cores.append(read)
    for each in cores:
        assert isinstance(each, CoreDesign | CapacityReadCore)
        busy = each.long_context_utilization
        assert long_context_utilization_at(each, 1.0) == busy or not math.isfinite(busy)
        assert utilization_at(each.brief, each.shape, scaled_demand(each.demand, 1.0)) == each.capacity.utilization


def test_the_sizing_arithmetic_is_called_conservative_only_where_it_comes_first():
    """rag's 17.6% implies x5.67, but a replica reaches its SLO capacity at x1.2 and N+1 is lost at x1.1: the sizing
    figure is optimistic there and is said so (the Capacity page called it "conservative" for every design); where the
    linear load to 100% comes before the SLO capacity it is the conservative side."""
    design = plan(load_brief("rag"))
    c, h = design.capacity, design.headroom
    words = sizing_words(h, c.utilization, c.sizing_load_multiple)
    assert f"{pct(c.utilization)} of the fleet would reach 100% at x5.67" in words
    assert "SLO capacity at x1.2 and N+1 is lost at x1.1: here it is optimistic" in words
    limits = tuple(lim.model_copy(update={"multiple": 9.0}) if lim.key == "general" else lim for lim in h.limits)
    roomy = h.model_copy(update={"limits": limits})
    assert "before the general pool reaches its SLO capacity at x9: here it is the conservative figure" in sizing_words(
        roomy, c.utilization, c.sizing_load_multiple
    )


def test_a_disaggregated_designs_capacity_multiple_reads_as_its_headroom_limit_does():
    """chat-disaggregated's pools meet the SLO up to x1.2465 the peak: the operating point's working and the headroom's
    limit both write it x1.24 (rounded down, a multiple the design carries); the working read x1.25."""
    design = plan(load_brief("chat-disaggregated"))
    general = next(lim for lim in design.headroom.limits if lim.key == "general")
    assert general.arithmetic.endswith(": x1.24")
    assert "up to x1.24 the peak" in design.operating_point.arithmetic["capacity_rate_per_s"]


def test_the_verdict_bar_names_only_the_target_that_ends_the_replicas_capacity() -> None:
    """Variation G's replica meets p95 TTFT far below its target at its capacity (about 186 ms of 500): only p95 ITL
    reaches its target there, and the bar says so in the design document's words (operating_point.capacity_reached)."""
    from ui.verdict_bar import _binding

    design = plan(load_brief("variation-g"))
    op = design.operating_point
    assert "p95 ITL reaches its" in op.capacity_reached and "TTFT" not in op.capacity_reached
    bar = _binding(design)
    assert op.capacity_reached in bar
    assert "latency targets" not in bar and "TTFT" not in bar


@pytest.mark.parametrize(
    "preset",
    [
        "capstone",
        "variation-a",
        "variation-c",
        "variation-f",
        "rag",
        "qps200-chat",
        "offline-batch",
        "agent-platform",
        "chat-disaggregated",
    ],
)
@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"deployment.long_context_nodes": 1, "workload.long_context_share": 0.05},
        {"deployment.long_context_nodes": 3, "workload.long_context_share": 0.05},
        {"deployment.spare_nodes": 1},
        {"workload.users": 2500, "workload.request_rate": None},
    ],
)
def test_the_lost_nodes_first_limit_searched_only_where_it_can_come_first_is_the_first_of_all(
    preset: str, changes: dict[str, object]
) -> None:
    """headroom._limits(first_only): the N+1 limit reads only the one-node-lost design's first limit, so a crossing
    (the long-context pool's, the sizing utilization's) is searched only where it can come first; that first limit is
    the first of every limit worked out, its multiple, name and words alike, for the design and its one-node-lost
    design as plan() reads it; and the N+1 limit that takes the design's long-context pool's limit where the lost
    design's pool is the same (_same_long_context_pool) is the one worked out on the lost design alone."""
    from planner.core import core_design
    from planner.errors import BriefError
    from planner.failures import one_node_lost
    from planner.headroom import _limits, _n_plus_one_limit
    from planner.mechanisms import resolve

    try:
        stated = load_brief(preset).with_changes(changes)
        core = core_design(resolve(stated), curves=False)
    except (BriefError, ValueError):
        return
    lost = one_node_lost(core, stated).core
    for each in [core] if lost is None else [core, lost]:
        every = [lim for lim in _limits(each) if not math.isnan(lim.multiple)]
        first = [lim for lim in _limits(each, first_only=True) if not math.isnan(lim.multiple)]
        if every:
            assert repr(min(first, key=lambda lim: lim.multiple)) == repr(min(every, key=lambda lim: lim.multiple))
    assert repr(_n_plus_one_limit(lost, (core, _limits(core)))) == repr(_n_plus_one_limit(lost))
