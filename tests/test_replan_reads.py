"""N+1 checks read on a core already worked out instead of re-planned (failures._spare_check), or on a disaggregated
design's two pools (core.pools_read_core):
each reading equals the re-plan it replaces, its verdict and its margin alike (exact: the same figures feed both)."""

from __future__ import annotations

import math
from functools import partial

import pytest

import planner.core as core_module
import planner.disagg as disagg
import planner.failures as failures
import planner.headroom as headroom_module
import planner.resize as resize
from benchmarks.plan_speed import _clear_all
from planner import load_brief, plan
from planner.brief import Brief, ObjectiveKind
from planner.capacity import demand
from planner.core import (
    CapacityReadCore,
    LoadPoint,
    PoolsReadCore,
    SizingShares,
    capacity_read,
    core_design,
    feasible_replica,
    verdict_core,
    worded_replan,
)
from planner.errors import BriefError
from planner.failures import Scenario, scenario_overrides
from planner.loader import preset_names
from planner.mechanisms import resolve
from planner.operating_point import probed_around_capacity
from planner.pools import pools_of

pytestmark = pytest.mark.unit


@pytest.fixture(autouse=True)
def _cold_planner() -> None:
    _clear_all()


@pytest.mark.parametrize(("preset", "changes"), [("variation-f", {"deployment.long_context_nodes": 4}), ("rag", {})])
@pytest.mark.parametrize("extra_nodes", [0, 2, 6, 11])
def test_a_spare_replacing_the_lost_node_reads_as_the_re_plan(preset: str, changes: dict[str, int], extra_nodes: int) -> None:
    base = load_brief(preset).with_changes(changes)
    brief = base.with_changes({"hardware.nodes": base.hardware.nodes + extra_nodes, "deployment.spare_nodes": 1})
    own = verdict_core(resolve(brief))
    read = failures._spare_check(own, brief)
    if not (own.verdict.feasible and own.verdict.meets_slo):
        assert read is None  # only a design that meets is read on
        return
    assert read is not None
    assert read == failures.scenario_check(brief, Scenario.one_node_lost)  # re-planned: it is given no core


@pytest.mark.parametrize(("nodes", "prefill_nodes"), [(15, 9), (15, 12), (16, 11), (16, 12), (16, 13), (17, 12), (17, 13), (24, 18)])
@pytest.mark.parametrize("spares", [0, 1])
def test_a_pool_losing_a_node_reads_its_verdict_and_capacity_as_its_re_plan(nodes: int, prefill_nodes: int, spares: int) -> None:
    """failures._lost_verdict: each pool's loss read on its two pools with their SLO capacity (core.pools_read_core)
    equals its re-plan for the verdict and the SLO capacity (judged_with_capacity, worked out afresh), the headroom's
    limits on it alike, exactly; and plan()'s one-node-lost design (failures.one_node_lost) is the failure row's, its
    verdict and SLO capacity alike."""
    stated = load_brief("chat-disaggregated").with_changes(
        {"hardware.nodes": nodes + spares, "deployment.spare_nodes": spares, "disaggregation.prefill_nodes": prefill_nodes}
    )
    changes = scenario_overrides(stated, Scenario.one_node_lost)
    for lost in ({}, {"disaggregation.prefill_nodes": prefill_nodes - 1}):
        _clear_all()
        holds, read = failures._lost_verdict(stated, changes | lost)
        assert isinstance(read, PoolsReadCore)
        fresh = core_module._core_design_of(read.brief, curves=False, with_capacity=True, advise=False, judged_only=True)
        assert holds == (fresh.verdict.feasible and fresh.verdict.meets_slo)
        for name in LoadPoint._fields:
            assert getattr(read.operating_point, name) == getattr(fresh.operating_point, name), name
        assert repr(headroom_module._limits(read)) == repr(headroom_module._limits(fresh))
        assert repr(headroom_module._n_plus_one_limit(read)) == repr(headroom_module._n_plus_one_limit(fresh))
    _clear_all()
    base = core_design(resolve(stated))
    one = failures.one_node_lost(base, stated)
    _clear_all()
    base = core_design(resolve(stated))
    row = failures.failure_mode(base, Scenario.one_node_lost, stated)
    replanned = failures.row_core(base, row, stated)
    assert one.ok == row.ok
    assert one.core is not None and replanned is not None
    assert one.core.brief == replanned.brief  # the same pool's loss is the row
    assert one.core.operating_point.load_vs_capacity == replanned.operating_point.load_vs_capacity


@pytest.mark.parametrize("multiple", [0.8, 1.0, 1.3, 1.45, 1.5, 1.55, 2.0])
def test_n_plus_one_held_at_more_traffic_reads_as_its_re_plan_at_the_peak(multiple: float) -> None:
    """plan() takes N+1 as held where the re-planned headroom (KV tiers: the hit rate follows the load) met the SLO
    with N+1 at a traffic multiple of 1 or more (Headroom.n_plus_one_held); the one-node-lost re-plan at the brief's
    own traffic agrees wherever it does."""
    stated = load_brief("agent-platform")
    stated = stated.with_changes({"workload.request_rate": stated.workload.request_rate * multiple})  # type: ignore[operator]
    design = plan(stated)
    held = design.headroom.n_plus_one_held
    _clear_all()
    holds = failures.scenario_holds(stated, Scenario.one_node_lost)
    assert not held or holds
    assert design.verdict.availability_ok == holds  # the verdict as the re-plan gives it


def _at_replica_rate(stated: Brief, nodes: int, rate_per_replica: float) -> Brief:
    """The stated brief on `nodes` nodes with its traffic scaled so a general-pool replica carries `rate_per_replica`
    (resolved: the KV tiers' hit rate follows the traffic and the fleet)."""
    brief, multiple = resolve(stated.with_changes({"hardware.nodes": nodes})), 1.0
    for _ in range(4):  # the derived hit rate and a users brief's whole users move the rate a little: iterate
        shape = feasible_replica(brief)
        rate = pools_of(brief, shape)[0].general_rate_per_replica(demand(brief, shape).request_rate_per_s)
        multiple *= rate_per_replica / rate
        w = stated.workload
        traffic = (
            {"workload.request_rate": w.request_rate * multiple}
            if w.request_rate is not None
            else {"workload.users": max(int((w.users or 1) * multiple), 1)}
        )
        brief = resolve(stated.with_changes({"hardware.nodes": nodes} | traffic))
    return brief


@pytest.mark.parametrize(
    "preset",
    ["capstone", "variation-f", "agent-platform", "rag", "qps200-chat", "lora-platform", "multimodal", "moe-deepseek", "chat-speculative"],
)
def test_a_verdict_read_on_the_slo_capacity_is_the_re_plans(preset: str) -> None:
    """core.capacity_read: the verdict of the brief at another fleet or traffic, read on a core's SLO capacity, equals
    its re-plan's (verdict_core) wherever it tells, at the edges of what it reads (a ten-thousandth under the capacity,
    a thousandth over it) and beyond, on the brief's fleet and others."""
    stated = load_brief(preset)
    known = core_design(resolve(stated))
    capacity = known.operating_point.capacity_rate_per_s
    told = 0
    for nodes in (stated.hardware.nodes - 1, stated.hardware.nodes, stated.hardware.nodes + 3):
        for share in (0.5, 1 - 1.0001e-4, 1 + 1.0001e-3, 1.01, 1.5):
            told += _read_as_re_planned(known, _at_replica_rate(stated, nodes, capacity * share), (nodes, share))
    assert told >= 12


def _read_as_re_planned(known: core_module.CoreDesign, brief: Brief, where: object) -> int:
    """1 where core.capacity_read tells the brief's verdict on `known` (and it is its re-plan's), 0 where it does not."""
    read = capacity_read(known, brief)
    if read is None:
        return 0
    replanned = verdict_core(brief).verdict
    assert read == (replanned.feasible and replanned.meets_slo), where
    return 1


def _field_by_field(a: Brief, b: Brief) -> bool:
    """core.same_but_fleet_and_traffic as its definition reads: every field of every section equal but the moved ones."""
    if a.workload.rate_given != b.workload.rate_given:
        return False
    moved = core_module._FLEET_AND_TRAFFIC
    for section in Brief.model_fields:
        x, y = getattr(a, section), getattr(b, section)
        if section not in moved:
            if x != y:
                return False
        elif any(getattr(x, name) != getattr(y, name) for name in type(x).model_fields if name not in moved[section]):
            return False
    return True


@pytest.mark.parametrize("preset", ["agent-platform", "capstone", "variation-f", "qps10-tp4"])
def test_briefs_the_same_but_for_the_fleet_and_traffic_are_told_field_by_field(preset: str) -> None:
    """core.same_but_fleet_and_traffic (its sections' other fields read at once) tells what the field-by-field
    comparison tells, for changes of the fleet and traffic alone and of every other kind of field beside them."""
    stated = load_brief(preset)
    w = stated.workload
    traffic = {"workload.request_rate": w.request_rate * 1.3} if w.request_rate is not None else {"workload.users": (w.users or 1) * 2}
    fleet = {"hardware.nodes": stated.hardware.nodes + 3, "deployment.spare_nodes": 1}
    others: list[dict[str, object]] = [
        {},
        {"hardware.gpus_per_node": 4, "hardware.tp": 4},
        {"deployment.max_num_seqs": stated.deployment.max_num_seqs // 2},
        {"workload.input_tokens_mean": w.input_tokens_mean + 1},
        {"workload.duty_cycle": w.duty_cycle / 2},
        {"slo.ttft_p95_ms": stated.slo.ttft_p95_ms * 2},
        {"title": "another"},
    ]
    told = []
    for other in others:
        for moved in ({}, traffic, fleet, traffic | fleet):
            try:
                brief = stated.with_changes(other | moved)
            except BriefError:
                continue
            same = core_module.same_but_fleet_and_traffic(stated, brief)
            assert same == _field_by_field(stated, brief), (other, moved)
            told.append(same)
    assert True in told and False in told


@pytest.mark.parametrize(
    "preset", ["capstone", "variation-f", "agent-platform", "rag", "moe-deepseek", "variation-b", "chat-speculative", "multimodal"]
)
def test_a_verdict_read_on_the_capacity_searchs_probes_is_the_re_plans(preset: str) -> None:
    """core.capacity_read within the ten-thousandth under and the thousandth over the SLO capacity: a load at or under
    the highest rate the search probed meeting, or at or over the lowest it probed missing
    (operating_point.probed_around_capacity), reads as its re-plan's verdict (verdict_core), on the brief's fleet and
    others; a load between those two is re-planned."""
    stated = load_brief(preset)
    known = core_design(resolve(stated))
    capacity = known.operating_point.capacity_rate_per_s
    probed = probed_around_capacity(known.brief, known.shape)
    assert probed is not None and probed.met_rate_per_s <= capacity < probed.missed_rate_per_s
    met, missed = probed.met_rate_per_s / capacity, probed.missed_rate_per_s / capacity
    shares = [1 - 5e-5, 1 - 1e-5, met * (1 - 2e-6), (1 + missed) / 2, missed * (1 + 2e-6), 1 + 4e-4, 1 + 9e-4]
    told = 0
    for nodes in (stated.hardware.nodes - 1, stated.hardware.nodes, stated.hardware.nodes + 3):
        for share in shares:
            brief = _at_replica_rate(stated, nodes, capacity * share)
            shape = feasible_replica(brief)
            rate = pools_of(brief, shape)[0].general_rate_per_replica(demand(brief, shape).request_rate_per_s)
            between = max(probed.met_rate_per_s, capacity * (1 - 1e-4)) < rate < min(probed.missed_rate_per_s, capacity * (1 + 1e-3))
            if between:
                assert capacity_read(known, brief) is None, (nodes, share)
            told += _read_as_re_planned(known, brief, (nodes, share))
    assert told >= 6


@pytest.mark.parametrize(
    ("preset", "changes"), [("variation-f", {"deployment.long_context_nodes": 4}), ("capstone", {}), ("qps200-chat", {}), ("rag", {})]
)
def test_a_fleet_size_read_on_the_plans_slo_capacity_is_its_re_plan(preset: str, changes: dict[str, int]) -> None:
    """resize._read_first: whether a fleet size meets (with the N+1 its availability asks for), read on the plan's own
    core where its SLO capacity tells, equals meets_check's re-plans at every fleet size around the answer."""
    stated = load_brief(preset)
    base = stated.with_changes(changes)
    known = core_design(resolve(stated))
    replanned = "re-planned"
    read = resize._read_first(lambda nodes: (replanned, math.nan), base, known)  # type: ignore[arg-type,return-value]
    told = 0
    for nodes in range(max(stated.hardware.nodes - 4, 1), 3 * stated.hardware.nodes + 8):
        holds, _ = read(nodes)
        if holds == replanned:
            continue
        told += 1
        assert holds == resize.meets_check(base.with_changes({"hardware.nodes": nodes}))[0], nodes
    assert told >= 8


@pytest.mark.parametrize(
    ("preset", "changes"),
    [
        ("qps200-chat", {}),
        ("qps200-chat", {"workload.request_rate": 260.0}),
        ("capstone", {"slo.headroom": 0.5}),
        ("variation-f", {"deployment.long_context_nodes": 4, "slo.headroom": 0.3}),  # the long-context pool's limit too
        ("rag", {"slo.headroom": 1.0}),
    ],
)
def test_a_fleet_size_keeping_the_stated_headroom_read_on_the_slo_capacity_is_its_re_plan(preset: str, changes: dict[str, object]) -> None:
    """resize._read_first with the stated headroom (resize.headroom_fix's search): whether a fleet size meets with N+1
    and keeps slo.headroom, its pools' multiple read on the plan's own SLO capacity (core.capacity_read_core), equals
    _meets' re-plans (keeps_headroom's, with their SLO-capacity search) at every fleet size around the answer, and the
    multiple read is the re-plan's to the bit."""
    from planner.headroom import pools_multiple

    stated = load_brief(preset)
    base = stated.with_changes(changes)
    known = core_design(resolve(base))
    replanned = "re-planned"
    read = resize._read_first(lambda nodes: (replanned, math.nan), base, known, headroom=True)  # type: ignore[arg-type,return-value]
    told = kept = 0
    for nodes in range(max(stated.hardware.nodes - 4, 1), 3 * stated.hardware.nodes + 8):
        holds, _ = read(nodes)
        if holds == replanned:
            continue
        told += 1
        sized = base.with_changes({"hardware.nodes": nodes})
        assert holds == resize._meets(sized, headroom=True)[0], nodes
        core = core_module.capacity_read_core(known, resolve(sized))
        if core is not None and core.meets:
            kept += 1
            assert pools_multiple(core) == resize.keeps_headroom(sized)[1], nodes
    assert told >= 8 and kept >= 4


@pytest.mark.parametrize("preset", ["capstone", "variation-c", "qps10-tp4", "variation-a", "variation-f"])
@pytest.mark.parametrize("extra_nodes", [-2, 0, 6])
def test_a_spare_replacing_the_lost_node_keeps_the_designs_point(preset: str, extra_nodes: int) -> None:
    """judged_with_capacity with `known` (failures.one_node_lost where the SLO capacity does not tell: a spare replaces
    the lost node): the operating point and the judged p95s are the design's own where its pools and load are, and the
    core equals the one worked out afresh in every figure its readers read (the point's, the p95s, the verdict, steps 1-2)."""
    stated = load_brief(preset)
    stated = stated.with_changes({"hardware.nodes": max(stated.hardware.nodes + extra_nodes, 2)})
    base = core_design(resolve(stated))
    changes = scenario_overrides(stated, Scenario.one_node_lost)
    lost = failures._replanned(stated, changes, partial(core_module.judged_with_capacity, known=base))
    assert lost is not None
    fresh = core_module._core_design_of(lost.brief, curves=False, with_capacity=True, advise=False, judged_only=True)
    for name in type(fresh.operating_point).model_fields:
        assert getattr(lost.operating_point, name) == getattr(fresh.operating_point, name), name
    for name in ("ttft_p95_ms", "judged_itl_p95_ms", "ttft_ok", "itl_ok"):
        assert getattr(lost.slo, name) == getattr(fresh.slo, name), name
    for name in type(fresh.capacity).model_fields:
        assert getattr(lost.capacity, name) == getattr(fresh.capacity, name), name
    assert (lost.verdict, lost.pools, lost.demand, lost.long_context_utilization) == (
        fresh.verdict,
        fresh.pools,
        fresh.demand,
        fresh.long_context_utilization,
    )
    if base.operating_point.stable:  # the point read, not solved again
        assert lost.operating_point is base.operating_point


def _perturbed(stated: Brief, extra_nodes: int, spares: int, traffic: float) -> Brief:
    """The stated brief with more or fewer nodes, `spares` spare nodes and its traffic scaled (None: not plannable)."""
    w = stated.workload
    scaled = (
        {"workload.request_rate": w.request_rate * traffic}
        if w.request_rate is not None
        else {"workload.users": max(int((w.users or 1) * traffic), 1)}
    )
    nodes = max(stated.hardware.nodes + extra_nodes, spares + stated.deployment.long_context_nodes + 1)
    return stated.with_changes({"hardware.nodes": nodes, "deployment.spare_nodes": spares} | scaled)


@pytest.mark.parametrize("preset", preset_names())
def test_the_lost_node_read_on_the_slo_capacity_is_its_re_plan(preset: str) -> None:
    """failures.one_node_lost where the design's own SLO capacity tells the verdict with one node lost
    (core.capacity_read_core): its verdict, the headroom's limits on it (the N+1 limit plan() reads) and every figure
    they read equal the re-plan's (judged_with_capacity, worked out afresh) and the failure row's verdict, exactly, over
    fleets, spares and traffic around the preset's."""
    read_count = 0
    for extra_nodes in (-1, 0, 3):
        for spares in (0, 1):
            for traffic in (0.7, 1.0, 1.3):
                _clear_all()
                try:
                    stated = _perturbed(load_brief(preset), extra_nodes, spares, traffic)
                    base = core_design(resolve(stated))
                except BriefError:  # InfeasibleDesign too: no design to lose a node from
                    continue
                lost = failures.one_node_lost(base, stated)
                row = failures.failure_mode(base, Scenario.one_node_lost, stated)
                assert lost.ok == row.ok, (extra_nodes, spares, traffic)
                if not isinstance(lost.core, CapacityReadCore):
                    continue
                read_count += 1
                read = lost.core
                fresh = core_module._core_design_of(read.brief, curves=False, with_capacity=True, advise=False, judged_only=True)
                assert read.meets == (fresh.verdict.feasible and fresh.verdict.meets_slo)
                assert (read.brief, read.shape, read.pools, read.demand, read.memory) == (
                    fresh.brief,
                    fresh.shape,
                    fresh.pools,
                    fresh.demand,
                    fresh.memory,
                )
                for name in LoadPoint._fields:
                    assert getattr(read.operating_point, name) == getattr(fresh.operating_point, name), name
                for name in SizingShares._fields:
                    assert getattr(read.capacity, name) == getattr(fresh.capacity, name), name
                assert read.long_context_utilization == fresh.long_context_utilization
                assert repr(headroom_module._limits(read)) == repr(headroom_module._limits(fresh))
                assert repr(headroom_module._n_plus_one_limit(read)) == repr(headroom_module._n_plus_one_limit(fresh))
    if preset not in _NOT_READ:
        assert read_count >= 4
    else:
        assert read_count == 0


# disaggregated and deadline designs: their pools or deadline judge them, not the SLO capacity
_NOT_READ = {"chat-disaggregated", "offline-batch", "rl-rollout"}


_SPECULATING = [
    {"slo.itl_metric": "tpot", "speculative.num_speculative_tokens": 1, "speculative.acceptance_rate": 0.5, "deployment.max_num_seqs": 16},
    {"slo.itl_metric": "itl", "speculative.num_speculative_tokens": 3, "speculative.acceptance_rate": 0.8, "deployment.max_num_seqs": 64},
    {"slo.itl_metric": "tpot", "speculative.num_speculative_tokens": 6, "speculative.acceptance_rate": 0.8, "deployment.max_num_seqs": 32},
    {"slo.itl_metric": "itl", "speculative.num_speculative_tokens": 5},  # the preset's max-num-seqs: the switch may lie below it
]


@pytest.mark.parametrize("preset", ["chat-speculative", "capstone", "qps200-chat", "qps10-tp4", "moe-deepseek", "rag", "variation-c"])
def test_a_speculative_verdict_read_on_the_slo_capacity_is_the_re_plans(preset: str) -> None:
    """core.capacity_read of a speculative design (speculation on at every batch up to max-num-seqs): its verdict at
    other fleets and traffic equals the re-plan's, under and over the capacity and at the read's edges; where the
    switch lies below max-num-seqs (a p95 falls where speculation turns off) it reads nothing."""
    told = refused = 0
    for changes in _SPECULATING:
        _clear_all()
        stated = load_brief(preset).with_changes({"speculative.enabled": True} | changes)
        try:
            known = core_design(resolve(stated))
        except BriefError:
            continue
        capacity = known.operating_point.capacity_rate_per_s
        if not 0 < capacity < math.inf:
            continue
        for nodes in (stated.hardware.nodes, stated.hardware.nodes + 2):
            for share in (0.1, 0.4, 0.8, 0.95, 1 - 1.0001e-4, 1 + 1.0001e-3, 1.05, 1.5, 3.0):
                try:
                    brief = _at_replica_rate(stated, nodes, capacity * share)
                    read = capacity_read(known, brief)
                except BriefError:
                    continue
                if read is None:
                    refused += core_module._speculating_at_every_batch(known) is False
                    continue
                told += 1
                replanned = verdict_core(brief).verdict
                assert read == (replanned.feasible and replanned.meets_slo), (changes, nodes, share)
    assert told >= 20
    if preset == "capstone":  # its switch (138 running) lies below its max-num-seqs (160): not read
        assert refused > 0


# disaggregated briefs around chat-disaggregated's: fleets, splits (2+ prefill nodes), spares, traffic, a prefill TP of
# its own, the ITL metric, misses, a deadline objective and speculative decoding (neither read by the pools), KV tiers,
# and other presets disaggregated
_DISAGGREGATED = [
    ("chat-disaggregated", {}),
    ("chat-disaggregated", {"hardware.nodes": 15, "disaggregation.prefill_nodes": 11}),
    ("chat-disaggregated", {"hardware.nodes": 17, "disaggregation.prefill_nodes": 13}),
    ("chat-disaggregated", {"hardware.nodes": 16, "disaggregation.prefill_nodes": 2}),
    ("chat-disaggregated", {"hardware.nodes": 16, "disaggregation.prefill_nodes": 15}),
    ("chat-disaggregated", {"hardware.nodes": 16, "disaggregation.prefill_nodes": 16}),
    ("chat-disaggregated", {"hardware.nodes": 19, "deployment.spare_nodes": 2, "disaggregation.prefill_nodes": 12}),
    ("chat-disaggregated", {"hardware.nodes": 24, "disaggregation.prefill_nodes": 18, "workload.request_rate": 300.0}),
    ("chat-disaggregated", {"workload.request_rate": 150.0, "slo.itl_metric": "itl", "slo.itl_p95_ms": 40}),
    ("chat-disaggregated", {"workload.request_rate": 260.0}),
    ("chat-disaggregated", {"slo.ttft_p95_ms": 300}),
    ("chat-disaggregated", {"slo.itl_p95_ms": 6.5}),
    ("chat-disaggregated", {"disaggregation.prefill_tp": 16}),
    ("chat-disaggregated", {"disaggregation.prefill_tp": 4, "disaggregation.prefill_max_num_batched_tokens": 4096}),
    ("chat-disaggregated", {"objective.kind": "throughput", "objective.job_tokens": 1e9, "objective.deadline_hours": 24}),
    ("chat-disaggregated", {"speculative.enabled": True, "speculative.num_speculative_tokens": 3}),
    ("chat-disaggregated", {"kv_tiers.cpu_gb_per_node": 512.0, "deployment.prefix_caching": True, "workload.prefix_hit_rate": 0.3}),
    ("qps200-chat", {"disaggregation.enabled": True, "disaggregation.prefill_nodes": 3}),
    ("rag", {"disaggregation.enabled": True, "disaggregation.prefill_nodes": 2}),
    # the mechanisms' extra first-token path (the vision encoder, an adapter load, a KV reload) in the fixed path
    ("multimodal", {"disaggregation.enabled": True, "disaggregation.prefill_nodes": 2}),
    ("lora-platform", {"disaggregation.enabled": True, "disaggregation.prefill_nodes": 2}),
    ("agent-platform", {"disaggregation.enabled": True, "disaggregation.prefill_nodes": 3}),
]


@pytest.mark.parametrize(("preset", "changes"), _DISAGGREGATED)
def test_a_disaggregated_verdict_read_on_its_pools_is_the_re_plans(preset: str, changes: dict[str, object]) -> None:
    """core.pools_read_core: a disaggregated latency design's verdict read on its two pools equals its verdict core's
    worked out afresh (core._judged_core), its margin and what a split search reads of it (the replica, pools, load and
    request path) alike, exactly; a deadline or speculative design is not read so (verdict_read re-plans it)."""
    try:
        brief = resolve(load_brief(preset).with_changes(changes))
        fresh = core_module._judged_core(brief)
    except BriefError:  # InfeasibleDesign too: the read raises as the re-plan does
        with pytest.raises(BriefError):
            core_module.pools_read_core(resolve(load_brief(preset).with_changes(changes)))
        return
    if not core_module.read_by_pools(brief):
        assert brief.speculative.enabled or brief.objective.kind is not ObjectiveKind.latency
        assert core_module.verdict_read(brief) is fresh
        return
    read = core_module.pools_read_core(brief)
    assert read.feasible == fresh.verdict.feasible
    assert read.meets == (fresh.verdict.feasible and fresh.verdict.meets_slo)
    assert failures.read_check(read) == failures.read_check(fresh)
    assert (read.brief, read.shape, read.pools, read.demand) == (fresh.brief, fresh.shape, fresh.pools, fresh.demand)
    assert (read.capacity.utilization, read.capacity.kv_fraction) == (fresh.capacity.utilization, fresh.capacity.kv_fraction)
    assert read.long_context_utilization == fresh.long_context_utilization
    assert read.fixed_ms == fresh.slo.point.fixed_ms
    assert (read.disaggregation.ttft_p95_ms, core_module.judged_itl_ms(read)) == (fresh.slo.ttft_p95_ms, fresh.slo.judged_itl_p95_ms)
    assert fresh.disaggregation is not None and read.disaggregation.stable == fresh.disaggregation.stable
    assert read.operating_point.rate_per_replica_per_s == fresh.operating_point.rate_per_replica_per_s


@pytest.mark.parametrize(("preset", "changes"), _DISAGGREGATED)
def test_a_fleet_search_on_the_pools_read_is_its_re_plans(preset: str, changes: dict[str, object], monkeypatch: pytest.MonkeyPatch) -> None:
    """resize's checks of a disaggregated brief read on its pools (core.verdict_read) answer as on its re-planned verdict
    core: meets_check, the headroom's pools check and the split search, over fleets around the brief's."""
    stated = load_brief(preset).with_changes(changes)
    sizes = [max(stated.hardware.nodes + extra, stated.deployment.spare_nodes + 2) for extra in (-1, 0, 1, 3)]

    def answers() -> list[object]:
        out: list[object] = []
        for nodes in sizes:
            _clear_all()
            brief = stated.with_changes({"hardware.nodes": nodes})
            out += [resize.meets_check(brief), resize._pools_keep_headroom(brief), resize.split_meeting(brief, None, True)]
        return out

    read = answers()
    monkeypatch.setattr(core_module, "read_by_pools", lambda brief: False)  # every verdict re-planned
    assert read == answers()


def _pools_core(preset: str, changes: dict[str, object]) -> core_module.CoreDesign | None:
    """The brief's core with its pools' SLO capacity searched, None where it cannot run or has no pools' capacity."""
    try:
        core = core_design(resolve(load_brief(preset).with_changes(changes)))
    except BriefError:
        return None
    if core.disaggregation is None or not core.operating_point.rate_per_replica_per_s > 0:
        return None
    return core


@pytest.mark.parametrize(("preset", "changes"), _DISAGGREGATED)
def test_the_pools_read_on_their_slo_capacity_are_the_pools_worked_out(preset: str, changes: dict[str, object]) -> None:
    """core.pools_meet_at: whether a design's two pools meet the SLO at a rate, read on their SLO-capacity search (a
    core's, a pools read's) where the rate lies clear of it, equals disagg.pools_meet worked out afresh, at rates
    around the capacity (inside and outside meets_by_capacity's band) and the stated headroom's; and the capacity
    search's test that skips the decode pool at a prefill pool 100% busy (disagg._PoolLoads.meets) is the load's."""
    core = _pools_core(preset, changes)
    if core is None:
        return
    peak, scale = core.demand.request_rate_per_s, core.disaggregation.capacity_scale  # type: ignore[union-attr]
    reads = [core]
    if core_module.read_by_pools(core.brief):
        reads.append(core_module.pools_read_core(core.brief, with_capacity=True))
    multiples = [0.5, 1.0, 1.3 * (1 + 1e-6), 2.0, 8.0]
    if 0 < scale < 1e4:
        multiples += [scale * (1 + d) for d in (-3e-6, -1e-6, -1e-7, 0.0, 1e-7, 1e-6, 3e-6)]
    fixed_ms = core_module.request_path_ms(core)
    for multiple in multiples:
        fresh = disagg.pools_meet(core.brief, core.shape, core.pools, peak * multiple, fixed_ms)
        for read in reads:
            assert core_module.pools_meet_at(read, peak * multiple) == fresh, (multiple, type(read).__name__)
        loads = disagg._PoolLoads(core.brief, core.shape, core.pools, peak, fixed_ms)
        skipped = loads.meets(multiple)  # before the load is worked out: the busy prefill pool's shortcut
        load = loads(multiple)
        assert skipped == (load.meets, disagg._capacity_margin(core.brief, load)), multiple
        assert load.meets == fresh


@pytest.mark.parametrize(("nodes", "prefill_nodes"), [(15, 9), (15, 12), (16, 2), (16, 11), (16, 12), (16, 13), (17, 13), (24, 18)])
@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"deployment.spare_nodes": 1},
        {"workload.request_rate": 260.0},
        {"slo.ttft_p95_ms": 300},
        {"slo.itl_p95_ms": 6.5},
        {"objective.kind": "throughput", "objective.job_tokens": 1e9, "objective.deadline_hours": 24},
        {"kv_tiers.cpu_gb_per_node": 512.0, "deployment.prefix_caching": True, "workload.prefix_hit_rate": 0.3},
    ],
)
def test_a_lost_pool_picked_without_its_capacity_search_is_the_one_both_searches_pick(
    nodes: int, prefill_nodes: int, changes: dict[str, object]
) -> None:
    """failures._pool_lost_node searches the decode pool's loss for its SLO capacity only where the row may be it: the
    lost node it picks (its verdict, its design and load against its capacity) is the one picked with both pools' losses
    searched (the rule it replaces: the one that misses, else the one nearer its SLO capacity)."""
    spares = int(changes.get("deployment.spare_nodes", 0))  # type: ignore[call-overload]
    stated = load_brief("chat-disaggregated").with_changes(
        changes | {"hardware.nodes": nodes + spares, "disaggregation.prefill_nodes": prefill_nodes}
    )
    base = core_design(resolve(stated))
    one = failures.one_node_lost(base, stated)
    _clear_all()
    changed = scenario_overrides(stated, Scenario.one_node_lost)
    lost = failures.lost_by_a_pool(stated, Scenario.one_node_lost)
    if lost == 0 or prefill_nodes - lost < 1:
        picked = failures._lost_verdict(stated, changed)
    else:
        prefill = failures._lost_verdict(stated, changed | {"disaggregation.prefill_nodes": prefill_nodes - lost})
        decode = failures._lost_verdict(stated, changed)
        loads = [core.operating_point.load_vs_capacity if core is not None else math.inf for _, core in (prefill, decode)]
        prefill_worse = (not prefill[0] and decode[0]) or (prefill[0] == decode[0] and loads[0] > loads[1])
        picked = prefill if prefill_worse else decode
    assert one.ok == picked[0]
    assert (one.core is None) == (picked[1] is None)
    if one.core is not None and picked[1] is not None:
        assert one.core.brief == picked[1].brief
        assert one.core.operating_point.load_vs_capacity == picked[1].operating_point.load_vs_capacity


@pytest.mark.parametrize(("nodes", "prefill_nodes"), [(15, 9), (16, 2), (16, 11), (16, 12), (16, 13), (17, 13), (24, 18)])
@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"workload.request_rate": 260.0},
        {"workload.request_rate": 300.0},
        {"slo.itl_p95_ms": 6.5},
        {"objective.kind": "throughput", "objective.job_tokens": 1e9, "objective.deadline_hours": 24},
        {"speculative.enabled": True},
    ],
)
def test_a_lost_pools_row_re_planning_the_binding_pool_alone_is_the_row(nodes: int, prefill_nodes: int, changes: dict[str, object]) -> None:
    """failures.LostNode.row() of a disaggregated design re-plans only the pool whose loss binds (the other pool's loss is
    named by its verdict and load, read as _pool_lost_node read them): the row is the one failure_mode re-plans from
    both pools' losses, every figure and word of it."""
    stated = load_brief("chat-disaggregated").with_changes(
        changes | {"hardware.nodes": nodes, "disaggregation.prefill_nodes": prefill_nodes}
    )
    base = core_design(resolve(stated))
    row = failures.one_node_lost(base, stated).row()
    _clear_all()
    both = failures.failure_mode(base, Scenario.one_node_lost, stated, worded_replan)
    assert repr(row.model_dump()) == repr(both.model_dump())  # repr: nan figures compare too


@pytest.mark.parametrize("traffic", [1.3, 1.5, 2.0])
@pytest.mark.parametrize(("nodes", "prefill_nodes"), [(16, 8), (16, 12), (24, 10), (24, 12)])
def test_the_prefill_split_fix_skipping_splits_whose_pools_miss_is_the_one_trying_each(
    traffic: float, nodes: int, prefill_nodes: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """resize._prefill_split_fix skips a split whose pools miss on the brief's own core and stops at one whose decode
    pool misses alone: its fix (or none) is the one re-planning every split it tries (14 or 16 prefill nodes of 24 at
    1.3-1.5x chat-disaggregated's traffic, none on 16 nodes or at 2x)."""
    stated = load_brief("chat-disaggregated")
    brief = stated.with_changes(
        {
            "workload.request_rate": traffic * stated.workload.request_rate,
            "hardware.nodes": nodes,
            "disaggregation.prefill_nodes": prefill_nodes,
        }
    )
    pruned = resize._prefill_split_fix(brief)
    _clear_all()
    monkeypatch.setattr(resize, "_short_pools", lambda *args, **kwargs: resize._TELLS_NOTHING)
    assert pruned == resize._prefill_split_fix(brief)


@pytest.mark.parametrize(
    "preset", ["agent-platform", "capstone", "variation-c", "variation-f", "rag", "qps200-chat", "chat-disaggregated", "offline-batch"]
)
def test_n_plus_one_read_on_a_known_core_or_re_planned_once_is_the_re_plans(preset: str) -> None:
    """failures.n_plus_one with a known core: the brief with a node lost, built and resolved once, read on the core's
    SLO capacity (core.capacity_read) or else re-planned, answers as n_plus_one_check's own re-plan (scenario_check),
    at traffic around where the headroom finds N+1 lost (inside the capacity search's probed bands too) and beyond."""
    stated = load_brief(preset)
    design = plan(stated)
    turn = min(lim.multiple for lim in design.headroom.limits if math.isfinite(lim.multiple) and lim.multiple > 0)
    multiples = [0.7, 1.0, 2.5, *(turn * (1 + d) for d in (-1e-3, -5e-4, -1e-4, 0.0, 1e-4, 5e-4, 1e-3))]
    for multiple in multiples:
        brief = headroom_module._at_traffic(stated, multiple)
        _clear_all()
        known = core_design(resolve(stated))
        read = failures.n_plus_one(brief, known)
        _clear_all()
        assert read == failures.n_plus_one_check(brief)[0], multiple


@pytest.mark.parametrize(("preset", "changes"), _DISAGGREGATED)
@pytest.mark.parametrize("traffic", [0.5, 1.0, 1.2, 3.0])
def test_the_pools_capacity_search_from_the_models_crossing_is_the_search_from_the_steady_bound(
    preset: str, changes: dict[str, object], traffic: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """disagg.capacity_scale looks first where the pools' margin crosses 0 on their closed forms with the decode batch
    solved on the step's linear piece (_PoolLoads.model_crossing): only where it looks, so its answer (the multiple and
    the binding pool) is the search's from the steady state's bound it looked at before, exactly (where the token gap
    binds it looks there still: {"slo.itl_p95_ms": 6.5} at half the traffic ended a bracket apart, 5e-10, from the
    model's crossing, the decode root-find's tolerance turning a test there); and the model's crossing lies inside the
    search's last bracket where the batch stays on that piece (chat-disaggregated's own)."""
    core = _pools_core(preset, changes)
    if core is None:
        return
    rate, fixed_ms = core.demand.request_rate_per_s * traffic, core_module.request_path_ms(core)

    def search() -> tuple[float, str]:
        _clear_all()
        return disagg.capacity_scale(core.brief, core.shape, core.pools, rate, fixed_ms)

    steered = search()
    if (preset, changes, traffic) == ("chat-disaggregated", {}, 1.0):
        loads = disagg._PoolLoads(core.brief, core.shape, core.pools, rate, fixed_ms)
        width = 1 / 2**disagg._SCALE_BISECTIONS
        assert abs(loads.model_crossing(1.0, 2.0) - steered[0]) < width
    monkeypatch.setattr(
        disagg._PoolLoads, "model_crossing", lambda self, low, high: disagg._steady_up_to(self._brief, self._shape, self(1.0))
    )
    assert search() == steered


@pytest.mark.parametrize("load", [1.0, 1.2])
@pytest.mark.parametrize(("nodes", "prefill"), [(16, 8), (16, 12), (20, 10), (14, 6)])
def test_a_disaggregated_designs_headroom_multiple_read_on_its_pools_is_its_re_plans(load: float, nodes: int, prefill: int) -> None:
    """resize.keeps_headroom of a disaggregated latency design reads its pools' multiple on the two pools with their
    SLO-capacity search (core.pools_read_core), not on a re-plan: the same multiple to the bit, so the same verdict on
    the stated headroom."""
    from benchmarks.plan_speed import _clear_all
    from planner.core import pools_read_core, read_by_pools, replan, worked_out
    from planner.headroom import pools_multiple

    stated = load_brief("chat-disaggregated")
    brief = stated.with_changes(
        {"workload.duty_cycle": stated.workload.duty_cycle * load, "hardware.nodes": nodes, "disaggregation.prefill_nodes": prefill}
    )
    resolved = resolve(brief)
    assert read_by_pools(resolved) and brief.slo.headroom is not None
    _clear_all()  # no core worked out for the brief: keeps_headroom reads its pools
    kept = resize.keeps_headroom(brief)
    assert worked_out(resolved) is None
    multiple = pools_multiple(replan(resolved))
    assert math.isfinite(multiple) and pools_multiple(pools_read_core(resolved, with_capacity=True)) == multiple
    assert kept == (multiple >= 1 + brief.slo.headroom, multiple)
