"""The prefill-chunk advice follows the plan's own trade-off: a missed p95 ITL names the max-num-batched-tokens the
trade-off curve shows meeting, in the direction the curve gives (a smaller chunk puts more token gaps on
chunk-carrying steps, so it does not always shorten p95 ITL), and its overrides re-plan as meeting both targets."""

from __future__ import annotations

import pytest

from planner import load_brief, plan
from planner.core import replan
from planner.mechanisms import resolve

pytestmark = pytest.mark.unit

INPUTS_DOUBLE = {  # variation-g's "Input lengths double" failure row
    "workload.input_tokens_mean": 2400.0,
    "workload.input_tokens_p95": 12000.0,
    "workload.kv_context_tokens": 5200.0,
    "workload.long_context_share": 0.1224,
}
BF16 = {"deployment.weights": "bf16", "deployment.kv_cache": "bf16", "efficiency.compute_peak": "bf16"}


def _chunk_problem(changes: dict[str, object]):  # type: ignore[no-untyped-def]
    design = plan(load_brief("variation-g").with_changes(changes))
    return design, next(p for p in design.verdict.problems if p.field == "deployment.max_num_batched_tokens")


@pytest.mark.parametrize(("changes", "way"), [(INPUTS_DOUBLE, "raise"), (BF16, "lower")])
def test_the_chunk_advice_names_the_value_that_re_plans_as_meeting(changes: dict[str, object], way: str) -> None:
    design, problem = _chunk_problem(changes)
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
    assert "p95 ITL falls" in why and "longest single step grows" in why and "larger ones lengthen single token gaps" not in why
