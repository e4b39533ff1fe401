"""A core worked out for its verdict alone (core.verdict_core's, with slo.judged_budget) judges as the whole re-plan
does: the same verdict, margin and figures its readers take (the resize, headroom and failure searches)."""

from __future__ import annotations

import math
from typing import Any

import pytest

import planner.core as core_module
from benchmarks.plan_speed import _clear_all
from planner import load_brief, plan, preset_names
from planner.core import CoreDesign, verdict_core, verdict_only
from planner.errors import BriefError
from planner.failures import judged, verdict_margin
from planner.mechanisms import resolve

pytestmark = pytest.mark.unit


@pytest.fixture(autouse=True)
def _cold_planner() -> None:
    """No plan's core worked out before: verdict_core then works out its own."""
    _clear_all()


def _fleets(nodes: int) -> list[dict[str, Any]]:
    """The brief's fleet and smaller ones, where more designs miss (a fleet search's re-plans)."""
    return [{}, *({"hardware.nodes": n} for n in sorted({max(nodes - 1, 1), max(nodes // 2, 1)}) if n != nodes)]


def _read(core: CoreDesign) -> tuple[Any, ...]:
    """What verdict_core's readers take from a core: the verdict (a deadline's too), its margin, the judged p95s, the
    busy shares, the fixed request path and a disaggregated design's pools."""
    verdict, goal = judged(core)
    slo, dis = core.slo, core.disaggregation
    pools = None if dis is None else (dis.prefill_busy, dis.prefill_replicas, dis.prefill_nodes, dis.decode_nodes, dis.stable)
    return (
        core.verdict.feasible,
        core.verdict.meets_slo,
        verdict.feasible,
        verdict.meets_slo,
        verdict_margin(core, goal),
        slo.ttft_ok,
        slo.itl_ok,
        slo.ttft_p95_ms,
        slo.judged_itl_p95_ms,
        slo.point.fixed_ms,
        core.capacity.utilization,
        core.capacity.kv_fraction,
        core.long_context_utilization,
        core.operating_point.stable,
        pools,
    )


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


@pytest.mark.parametrize("name", preset_names())
def test_a_judged_core_reads_as_the_whole_re_plan(name: str) -> None:
    """Each preset on its fleet and two smaller ones: verdict_core's core and verdict_only's (the whole SLO budget)
    give the same verdict, margin and figures, exactly (the judged p95s are worked out by the same calls)."""
    stated = load_brief(name)
    for changes in _fleets(stated.hardware.nodes):
        try:
            brief = resolve(stated.with_changes(changes))
            whole = verdict_only(brief)
        except BriefError:
            with pytest.raises(BriefError):
                verdict_core(resolve(stated.with_changes(changes)))
            continue
        light = verdict_core(brief)
        assert light is not whole
        assert _same(_read(light), _read(whole)), (name, changes)


@pytest.mark.parametrize(("name", "factor"), [("rag", 1.3), ("qps10-tp4", 1.2), ("qps10-tp4", 1.3)])
def test_the_chunk_advice_confirms_on_a_judged_core_as_on_the_whole_re_plan(name: str, factor: float) -> None:
    """The chunk advice (core._chunk_change) confirms a value of its trade-off curve on that brief's verdict core
    (core._judged_core): for every value of the curve, what it reads there (the steady state, whether each p95 meets,
    the p95 ITL and TTFT its words quote) and the verdict's readers' figures are verdict_only's (the whole re-plan's),
    exactly."""
    stated = load_brief(name)
    assert stated.workload.request_rate is not None
    brief = resolve(stated.with_changes({"workload.request_rate": stated.workload.request_rate * factor}))
    curve = plan(brief).slo.tradeoff_batched_tokens
    assert curve
    for t in curve:
        chunked = brief.with_changes({"deployment.max_num_batched_tokens": int(t.x)})
        try:
            whole = verdict_only(chunked)
        except BriefError:
            with pytest.raises(BriefError):
                core_module._judged_core(chunked)
            continue
        light = core_module._judged_core(chunked)
        read = [(c.operating_point.stable, c.slo.ttft_ok, c.slo.itl_ok, c.slo.itl_p95_ms, c.slo.ttft_p95_ms) for c in (light, whole)]
        assert read[0] == read[1] and _same(_read(light), _read(whole)), (name, factor, t.x)
