"""Figures of one replica kept for every fleet of it (ReplicaShape.replica_key): the replica itself (replica.shape_of),
the worked relation's capacity (operating_point.seed_capacity_rate) and speculation's table and switch
(planner.speculative), a disaggregated design's decode pool at a load (planner.disagg). A figure read from one kept
by a plan with another fleet equals the one worked out fresh, exactly."""

from __future__ import annotations

import pytest

import planner.disagg as disagg
import planner.operating_point as operating_point
import planner.replica as replica
from benchmarks.plan_speed import _clear_all
from planner import load_brief, plan, preset_names
from planner.brief import Brief
from planner.cached import cached_names
from planner.core import feasible_replica
from planner.errors import BriefError
from planner.mechanisms import resolve
from planner.pools import pools_of
from planner.replica import ReplicaShape, shape_of
from planner.speculative import spec_switch, speculative_analysis

pytestmark = pytest.mark.unit

_SPECULATIVE = {
    "eagle": {},
    "draft": {"speculative.method": "draft", "speculative.draft_model": "llama-3.1-8b"},
    "off above 16": {"speculative.off_above_batch": 16},
    "k=5 at 0.5": {"speculative.num_speculative_tokens": 5, "speculative.acceptance_rate": 0.5},
}


def _fleets(brief: Brief) -> list[Brief]:
    """The brief at its own fleet and others (a node lost, more nodes): the same replica, other counts of it."""
    nodes = brief.hardware.nodes
    fleets = []
    for n in (nodes, nodes - 1, nodes + 3):
        try:
            feasible_replica(fleet := brief.with_changes({"hardware.nodes": n, "deployment.spare_nodes": 0}))
        except BriefError:
            continue
        fleets.append(fleet)
    return fleets


@pytest.mark.parametrize("name", [*preset_names(), *(f"chat-speculative {k}" for k in _SPECULATIVE)])
def test_the_worked_relations_capacity_is_a_replicas(name: str) -> None:
    preset, _, variant = name.partition(" ")
    brief = load_brief(preset).with_changes(_SPECULATIVE.get(variant, {}))
    fleets = _fleets(brief)
    hits = (brief.effective_hit_rate, 0.0, 0.5)
    _clear_all()
    kept = {(i, hit): operating_point.seed_capacity_rate(b, feasible_replica(b), hit) for hit in hits for i, b in enumerate(fleets)}
    for (i, hit), rate in kept.items():
        _clear_all()
        shape = feasible_replica(fleets[i])
        assert operating_point.seed_capacity_rate(fleets[i], shape, hit) == rate


@pytest.mark.parametrize("variant", list(_SPECULATIVE))
@pytest.mark.parametrize("batch", [1.0, 7.5, 40.0, 300.0])
def test_speculation_read_from_another_fleets_table_is_worked_out_fresh(variant: str, batch: float) -> None:
    brief = load_brief("chat-speculative").with_changes(_SPECULATIVE[variant])
    fleets = _fleets(brief)
    assert len(fleets) > 1
    _clear_all()
    for fleet in fleets:  # each fleet after the first reads the first's table and switch
        speculative_analysis(fleet, feasible_replica(fleet), batch, fleet.running_context_tokens)
    for fleet in fleets:
        shape = feasible_replica(fleet)
        read = speculative_analysis(fleet, shape, batch, fleet.running_context_tokens), spec_switch(fleet, shape)
        _clear_all()
        fresh = speculative_analysis(fleet, shape, batch, fleet.running_context_tokens), spec_switch(fleet, shape)
        assert read == fresh


@pytest.mark.parametrize("name", preset_names())
def test_a_replica_copied_for_another_fleet_is_the_one_formed_fresh(name: str) -> None:
    """Its fields, and every value its readers keep on it (those the first shape worked out, carried over), but its
    memo, which is its own."""
    brief = load_brief(name)
    low = brief.deployment.spare_nodes + brief.deployment.long_context_nodes
    fleets = [brief.with_changes({"hardware.nodes": n}) for n in sorted({max(low, 1), brief.hardware.nodes, brief.hardware.nodes + 5})]
    kept = [name for name in cached_names(ReplicaShape) if name != "memo"]
    for fleet in fleets:
        _clear_all()
        first = shape_of(brief)  # kept: the fleet below reads it
        first.memo["x"] = 1
        for name in kept:
            getattr(first, name)
        try:
            read: object = shape_of(fleet)
        except BriefError as exc:
            read = exc.args
        _clear_all()
        try:
            fresh: object = shape_of(fleet)
        except BriefError as exc:
            fresh = exc.args
        assert read == fresh
        if isinstance(read, ReplicaShape) and isinstance(fresh, ReplicaShape):
            assert read.model_dump_json() == fresh.model_dump_json() and read.memo == {}
            assert all(read.__dict__[name] == getattr(fresh, name) for name in kept)  # carried over, each as worked out
            fields = list(ReplicaShape.model_fields)  # in their declared order, as trusted builds them, all set
            assert list(read.__dict__)[: len(fields)] == fields and read.__pydantic_fields_set__ == fresh.__pydantic_fields_set__
            assert read.__pydantic_private__ == fresh.__pydantic_private__ and read.__pydantic_extra__ is None


def test_a_replica_copied_for_another_fleet_is_its_first_with_the_fleet_changed(monkeypatch: pytest.MonkeyPatch) -> None:
    """shape_of's copy for another fleet copies the first shape's instance dict (CachingModel.copy_keeping: ~3 us), its
    fields and kept values at once, instead of building a ReplicaShape of its fields and adding the kept values after
    (~7 us; agent-platform and variation-f copy 13-14 replicas a cold plan)."""
    brief = load_brief("agent-platform")
    _clear_all()
    first = shape_of(brief)
    first.memo["x"] = 1
    first.prefill_tokens_per_s  # noqa: B018  (kept on first read)
    built: list[type] = []
    monkeypatch.setattr(replica, "trusted", lambda model, /, **fields: built.append(model))
    copy = shape_of(brief.with_changes({"hardware.nodes": brief.hardware.nodes + 1}))
    assert built == []
    assert copy.replicas == first.replicas_in(brief.hardware.nodes + 1) and copy.memo == {}
    assert [name for name in first.__dict__ if name != "memo"] == list(copy.__dict__)[: len(first.__dict__) - 1]
    assert copy.__dict__["prefill_tokens_per_s"] is first.__dict__["prefill_tokens_per_s"]


@pytest.mark.parametrize("changes", [{}, {"deployment.max_num_seqs": 64}, {"slo.itl_metric": "itl", "workload.output_tokens_mean": 200}])
@pytest.mark.parametrize("rate", [0.5, 12.5, 50.0, 400.0])
def test_a_decode_pools_pace_read_from_another_fleets_is_worked_out_fresh(changes: dict[str, object], rate: float) -> None:
    """disagg._decode_pace: a decode replica's batch and steps at a rate, kept by its replica, read by a fleet from the
    one another fleet worked out equal the ones worked out fresh (the steady and the full batch alike)."""
    fleets = _fleets(load_brief("chat-disaggregated").with_changes(changes))
    assert len(fleets) > 1
    _clear_all()
    for fleet in fleets:  # each fleet after the first reads the first's
        disagg._decode_pace(fleet, feasible_replica(fleet), rate)
    for fleet in fleets:
        shape = feasible_replica(fleet)
        read = disagg._decode_pace(fleet, shape, rate)
        _clear_all()
        assert read == disagg._decode_pace(fleet, shape, rate)


@pytest.mark.parametrize(
    "changes",
    [{}, {"deployment.spare_nodes": 1, "hardware.nodes": 17}, {"disaggregation.prefill_nodes": 2}, {"disaggregation.prefill_tp": 4}],
)
def test_a_disaggregated_split_kept_by_a_plan_is_the_one_worked_out_fresh(changes: dict[str, object]) -> None:
    """disagg._split_of: a split of the general pool kept by its brief, replica and general-pool nodes (read 3-5 times a
    plan) equals the one worked out fresh, for the plan's fleets and the fleet less a node."""
    fleets = _fleets(load_brief("chat-disaggregated").with_changes(changes))
    _clear_all()
    for fleet in fleets:
        plan(fleet)
    for fleet in fleets:
        brief = resolve(fleet)
        shape = feasible_replica(brief)
        pools, _ = pools_of(brief, shape)
        assert disagg._split_of(brief, shape, pools) == disagg._worked_split(brief, shape, pools)
