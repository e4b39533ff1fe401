"""The plan against the step-level simulator on the same basis (planner.crosscheck, docs/crosscheck.md).

`simulate BRIEF` runs one general-pool replica at the plan's rate per replica with the plan's engine
configuration; its `slo` block uses the plan's keys and definitions. Issue 11's tolerances: TTFT p95 and ITL
p95 within 20%, TPOT p50 within 15%, the same verdict whenever the simulator is more than 15% from a target.
"""

from __future__ import annotations

import pytest

from planner import load_brief, preset_names
from planner.crosscheck import GENERATED, OUTLIERS_ALLOWED, TOLERANCE, compare, generated_briefs

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("name", preset_names())
def test_every_preset_agrees_with_the_simulator(name):
    row = compare(load_brief(name), name)
    assert row.agrees, (row.label, {k: row.error(k) for k in TOLERANCE}, row.plan, row.simulated)
    if name == "variation-f":  # 405B on six nodes: no steady state in the plan, a growing queue in the simulator
        assert row.overloaded and not row.simulated_meets_slo


@pytest.fixture(scope="module")
def generated():
    return [compare(brief, label) for label, brief in generated_briefs(GENERATED)]


def test_forty_generated_briefs_agree_with_the_simulator(generated):
    assert len(generated) >= 40
    outside = [(c.label, {k: round(c.error(k), 3) for k in TOLERANCE}) for c in generated if not c.agrees]
    assert len(outside) <= OUTLIERS_ALLOWED, outside
    # the outliers are the known high-load cases (docs/crosscheck.md), never a wrong verdict with a clear margin
    assert all(c.load_vs_capacity > 0.8 for c in generated if not c.agrees)
    assert all(c.plan_meets_slo == c.simulated_meets_slo for c in generated if c.clear_margin)


def test_generated_briefs_cover_the_space(generated):
    labels = " ".join(c.label for c in generated)
    for part in ("llama-3.1-8b", "70b", "h100-sxm", "a100-80gb", "h200", "TP1", "TP8", "hit 0%", "hit 80%"):
        assert part in labels
    loads = [c.load_vs_capacity for c in generated]
    assert min(loads) < 0.3 and max(loads) > 0.8


def test_the_report_names_every_preset(root):
    text = (root / "docs" / "crosscheck.md").read_text(encoding="utf-8")
    for name in preset_names():
        assert f"| {name} |" in text
    assert f"## {GENERATED} generated briefs" in text


def test_the_plan_check_runs_to_a_steady_state_by_default():
    """`simulate BRIEF` and the app's check run what this gate runs: PLAN_CHECK_REQUESTS requests unless told otherwise.
    Over 1,000, variation-a (90% of its capacity) ended before its queue did: ITL p95 19.3 ms against the plan's 29.4
    (+52%); over 20,000 it is 25.4 ms (+16%)."""
    from planner import plan
    from planner.simulator import PLAN_CHECK_REQUESTS, SimSettings, simulate

    design = plan(load_brief("variation-a"))
    sim = simulate(design.brief, SimSettings())
    assert sim.requests == PLAN_CHECK_REQUESTS and sim.slo is not None
    assert sim.slo.itl_p95_ms == pytest.approx(design.slo.itl_p95_ms, rel=TOLERANCE["itl_p95_ms"])
    assert simulate(design.brief, SimSettings(requests=500)).requests == 500  # a count given is run as given
    assert simulate(design.brief, SimSettings(rate_per_s=5.0)).requests == 1000  # a benchmark run keeps its default


def test_the_plan_check_fits_the_work_limit():
    from planner.simulator import MAX_RUN_TOKENS, PLAN_CHECK_REQUESTS, _plan_check_requests

    assert _plan_check_requests(2000) == PLAN_CHECK_REQUESTS
    assert _plan_check_requests(MAX_RUN_TOKENS / 5000) == 5000  # long requests: as many as the limit allows
    assert _plan_check_requests(MAX_RUN_TOKENS / 10) == 10  # never more than the limit, even below the usual 1,000
