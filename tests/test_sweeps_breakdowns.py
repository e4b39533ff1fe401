"""The app's sweep and stacked-bar helpers agree with the planner they are built on."""

from __future__ import annotations

import pytest

from planner import apply_overrides, load_brief, plan
from planner.breakdowns import decode_step_stack, memory_stack, ttft_paths, utilization_stacks
from planner.sweeps import utilization_vs_traffic

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("preset", ["capstone", "qps10-tp4"])
def test_traffic_sweep_matches_a_replanned_brief(preset: str) -> None:
    brief = load_brief(preset)
    points = {p.multiplier: p for p in utilization_vs_traffic(brief)}
    assert points[1.0].utilization == pytest.approx(plan(brief).capacity.utilization, rel=1e-9)
    field = "workload.request_rate" if brief.workload.rate_given else "workload.users"
    base = brief.workload.request_rate if brief.workload.rate_given else brief.workload.users
    assert base is not None
    for m in (0.5, 2.0):
        scaled = plan(apply_overrides(brief, {field: base * m if brief.workload.rate_given else int(base * m)})).capacity
        assert points[m].utilization == pytest.approx(scaled.utilization, rel=1e-6)
        assert points[m].utilization_no_prefix_cache == pytest.approx(scaled.utilization_no_prefix_cache, rel=1e-6)


def test_more_traffic_never_lowers_utilization() -> None:
    points = utilization_vs_traffic(load_brief("capstone"))
    values = [p.utilization for p in points]
    assert values == sorted(values)
    assert all(p.utilization_no_prefix_cache >= p.utilization for p in points)


def test_memory_stack_adds_up_to_the_gpu() -> None:
    for preset in ("capstone", "qps10-tp4"):
        m = plan(load_brief(preset)).memory
        stack = memory_stack(m)
        assert sum(p.value for p in stack.parts) == pytest.approx(stack.total)
        assert stack.total == m.gpu_memory_gb


def test_step_and_utilization_stacks() -> None:
    c = plan(load_brief("capstone")).capacity
    step = decode_step_stack(c)
    assert sum(p.value for p in step.parts) == pytest.approx(c.decode_step_bytes_gb_per_gpu)
    with_cache, without = utilization_stacks(c)
    assert sum(p.value for p in with_cache.parts) == pytest.approx(1.0)
    assert with_cache.parts[0].value + with_cache.parts[1].value == pytest.approx(c.utilization)
    assert without.parts[0].value + without.parts[1].value == pytest.approx(c.utilization_no_prefix_cache)


@pytest.mark.parametrize("preset", ["multimodal", "agent-platform", "lora-platform"])
def test_the_mean_path_carries_a_mean_requests_mechanisms(preset):
    """Review s6: the mean path charged the p95 request's mechanism terms (multimodal: 4 uncached images, 4.66 ms). A
    mean request meets the mean (1.6 uncached images, 1.86 ms); the p95 path keeps the p95 request's; each path still
    adds up to its total, and the mean TTFT's arithmetic names the term it adds."""
    d = plan(load_brief(preset))
    p95_path, mean_path = ttft_paths(d.brief.latency, d.slo)
    assert d.slo.mechanisms and len(d.slo.mechanisms_mean) == len(d.slo.mechanisms)
    for p95_step, mean_step in zip(d.slo.mechanisms, d.slo.mechanisms_mean, strict=True):
        assert 0 < mean_step.ms < p95_step.ms
        assert any(part.value == mean_step.ms for part in mean_path.parts) and any(part.value == p95_step.ms for part in p95_path.parts)
    assert sum(part.value for part in mean_path.parts) == pytest.approx(d.slo.ttft_mean_ms)
    assert sum(step.ms for step in d.slo.ttft_waterfall) == pytest.approx(d.slo.ttft_mean_ms)
    assert d.slo.mechanisms_mean[0].component in d.slo.arithmetic["ttft_mean_ms"]
