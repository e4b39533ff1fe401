"""A disaggregated design's split searches skip what a pool short on its own rules out (planner.disagg.short_pools):
the answers are the ones re-planning every split gives, with fewer re-plans (counted, not timed)."""

from __future__ import annotations

import math
from itertools import product

import pytest

import planner.resize as resize
from benchmarks.plan_speed import _clear_all
from planner import load_brief
from planner.brief import Brief
from planner.core import core_design
from planner.failures import n_plus_one_check
from planner.mechanisms import resolve

pytestmark = pytest.mark.unit


@pytest.fixture(autouse=True)
def _cold_planner() -> None:
    _clear_all()


def _every_split(brief: Brief, share: float, headroom: bool) -> tuple[int | None, float]:
    """split_meeting as it was: every split re-planned, nearest `share` first, until one meets."""
    general = brief.hardware.nodes - brief.deployment.spare_nodes - brief.deployment.long_context_nodes
    at = min(max(round(general * share), 1), general - 1)
    first = math.inf
    for prefill in sorted(range(1, general), key=lambda p: (abs(p - at), p))[: resize._SPLIT_TRIES]:
        holds, margin = resize._meets(brief.with_changes({"disaggregation.prefill_nodes": prefill}), headroom)
        if holds:
            return prefill, margin
        if prefill == at:
            first = margin
    return None, first


def _chat(nodes: int, **changes: object) -> Brief:
    prefill = max(1, min(nodes - 1, round(nodes * 0.75)))
    return load_brief("chat-disaggregated").with_changes({"hardware.nodes": nodes, "disaggregation.prefill_nodes": prefill} | changes)


def test_the_split_search_answers_as_re_planning_every_split_does() -> None:
    """Fleets that meet at the nearest split, at one further out, or at none (the stated 30% headroom, or the SLO
    alone): the same split and margin as re-planning the splits one by one."""
    found = set()
    for nodes, share, headroom, rate in product((6, 16, 17, 24), (0.3, 0.75, 0.9), (False, True), (150.0, 200.0)):
        brief = _chat(nodes, **{"workload.request_rate": rate})
        _clear_all()
        expected = _every_split(brief, share, headroom)
        _clear_all()
        assert resize.split_meeting(brief, share, headroom) == expected
        found.add(expected[0] is None)
    assert found == {True, False}


def test_a_fleet_no_split_of_which_keeps_the_headroom_is_told_so_in_two_re_plans(monkeypatch: pytest.MonkeyPatch) -> None:
    """chat-disaggregated's 16 nodes keep its 30% headroom at no split: 12 prefill leave the prefill pool short at
    1.3 x the peak, 13 the decode pool. The nearest split is re-planned (its margin steers the fleet search) and every
    other is ruled out by one evaluation of its pools (it re-planned all 15)."""
    brief = load_brief("chat-disaggregated")
    meets: list[int] = []
    inner = resize._meets

    def counted(split: Brief, headroom: bool, margin: bool = True) -> tuple[bool, float]:
        meets.append(split.disaggregation.prefill_nodes)
        return inner(split, headroom, margin)

    monkeypatch.setattr(resize, "_meets", counted)
    prefill, margin = resize.split_meeting(brief, headroom=True)
    assert prefill is None and margin > 0 and meets == [12]


def test_the_headroom_is_told_kept_only_where_the_capacity_search_keeps_it() -> None:
    """_pools_keep_headroom (one evaluation of the pools a millionth above (1 + headroom) x the peak) says kept only
    where keeps_headroom's re-plan with the SLO-capacity search does, and says it for the splits that keep it."""
    told = kept_count = 0
    for headroom, nodes, rate in product((0.05, 0.3, 0.6), (12, 16, 17, 24), (150.0, 200.0, 260.0)):
        brief = _chat(nodes, **{"slo.headroom": headroom, "workload.request_rate": rate})
        quick, (kept, _) = resize._pools_keep_headroom(brief), resize.keeps_headroom(brief)
        assert kept or not quick
        told += quick
        kept_count += kept
    assert 0 < told == kept_count


def test_the_headroom_is_told_missed_only_where_the_capacity_search_misses_it() -> None:
    """_pools_miss_headroom (one evaluation of the pools a millionth below (1 + headroom) x the peak) says missed only
    where keeps_headroom's multiple, from the pools' SLO-capacity search, misses it, and says it for the splits that
    miss it."""
    told = missed = 0
    for headroom, nodes, rate in product((0.05, 0.3, 0.6), (12, 16, 17, 24), (150.0, 200.0, 260.0)):
        brief = _chat(nodes, **{"slo.headroom": headroom, "workload.request_rate": rate})
        quick, (kept, _) = resize._pools_miss_headroom(brief), resize.keeps_headroom(brief)
        assert not (quick and kept)
        told += quick
        missed += not kept
    assert 0 < told == missed


def test_a_split_verdict_without_its_margins_is_the_one_with_them() -> None:
    """A caller that reads the verdict alone (a fleet search's confirmation, fleet_overrides) gets _meets's verdict
    from _meets_verdict (the headroom before N+1, a clear miss of it told by one evaluation of the pools) and
    split_meeting's split with margin=False: the ones the margins' checks give, on fleets that meet at the brief's
    split and ones no split of which meets (the SLO, N+1 or the headroom missed)."""
    seen = set()
    for nodes, headroom, rate in product((6, 16, 17, 18, 24), (0.05, 0.3), (150.0, 200.0, 260.0)):
        brief = _chat(nodes, **{"slo.headroom": headroom, "workload.request_rate": rate})
        for with_headroom in (False, True):
            _clear_all()
            holds, _ = resize._meets(brief, with_headroom)
            split, _ = resize.split_meeting(brief, None, with_headroom)
            _clear_all()
            assert resize._meets(brief, with_headroom, margin=False)[0] == resize._meets_verdict(brief, with_headroom) == holds
            _clear_all()
            assert resize.split_meeting(brief, None, with_headroom, margin=False)[0] == split
            seen.add((holds, split is None))
    assert seen == {(True, False), (False, True)}


def test_the_split_words_re_plan_no_split_a_short_pool_rules_out(monkeypatch: pytest.MonkeyPatch) -> None:
    """chat-disaggregated's conclusion names the splits that meet (10 to 13 prefill of 16) and which keep N+1: with a
    node lost, 10 leaves a 9-node prefill pool over 100% busy and 13 a 2-node decode pool short of batch slots, so
    only 11 and 12 are re-planned; the words are the ones re-planning each gives."""
    import planner.disagg as disagg

    brief = resolve(load_brief("chat-disaggregated"))
    dis = core_design(brief).disaggregation
    assert dis is not None
    checked: list[int] = []

    def counted(split: Brief) -> tuple[bool, float]:
        checked.append(split.disaggregation.prefill_nodes)
        return n_plus_one_check(split)

    monkeypatch.setattr("planner.failures.n_plus_one_check", counted)
    words = disagg.splits_summary(dis, brief)
    assert checked == [11, 12]
    monkeypatch.setattr(disagg, "_short_with_a_node_lost", lambda brief: lambda n: False)
    checked.clear()
    assert disagg.splits_summary(dis, brief) == words and checked == [10, 11, 12, 13]


def _counted_split_meeting(monkeypatch: pytest.MonkeyPatch, brief: Brief, share: float) -> tuple[tuple[int | None, float], list[int]]:
    """split_meeting's answer and the splits it re-planned (_meets), from cold."""
    meets: list[int] = []
    inner = resize._meets

    def counted(split: Brief, headroom: bool, margin: bool = True) -> tuple[bool, float]:
        meets.append(split.disaggregation.prefill_nodes)
        return inner(split, headroom, margin)

    _clear_all()
    with monkeypatch.context() as patched:
        patched.setattr(resize, "_meets", counted)
        answer = resize.split_meeting(brief, share)
    return answer, meets


def test_a_split_whose_pools_miss_together_is_not_re_planned(monkeypatch: pytest.MonkeyPatch) -> None:
    """variation-f disaggregated on 44 nodes (4 of them long-context): 13 prefill nodes leave the prefill pool short on
    its own; 15 to 17 leave neither pool short, but the two together miss the p95 TTFT at the peak, so their re-plans
    (which judge the same pools) are not made; 18 meets. The answer is the one re-planning every split gives."""
    brief = load_brief("variation-f").with_changes(
        {"disaggregation.enabled": True, "disaggregation.prefill_nodes": 2, "deployment.long_context_nodes": 4, "hardware.nodes": 44}
    )
    answer, meets = _counted_split_meeting(monkeypatch, brief, 1 / 3)
    _clear_all()
    assert answer == _every_split(brief, 1 / 3, False)
    assert answer[0] == 18 and meets == [13, 18]


def test_a_split_whose_pools_miss_with_a_node_lost_is_not_re_planned(monkeypatch: pytest.MonkeyPatch) -> None:
    """chat-disaggregated on 24 nodes at 260 req/s, 30% of them asked on prefill: 7 prefill nodes (the nearest) miss,
    the splits up to 12 miss on their pools at the peak, and 13, whose pools meet the peak, misses N+1 on its pools
    alone once a node is lost (read on the fleet less a node), so none of them is re-planned; 14 meets with N+1. The
    answer is the one re-planning every split gives."""
    brief = _chat(24, **{"workload.request_rate": 260.0})
    answer, meets = _counted_split_meeting(monkeypatch, brief, 0.3)
    _clear_all()
    assert answer == _every_split(brief, 0.3, False)
    assert answer[0] == 14 and meets == [7, 14]
