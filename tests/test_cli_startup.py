"""What `python -m planner plan` skips to start fast (issue 17 item 1) gives the same answers: the variation baseline
read without a whole plan of the capstone, the worked relation's single figures, verdict-only re-plans without the
SLO-capacity search; and the command line's process set-up (BLAS threads, the collector, lazy public names)."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

from planner import Brief, CoreDesign, load_brief, numerics, plan, preset_names, variations
from planner.capacity import capacity, demand, memory, utilization_no_prefix_cache_at
from planner.core import core_design, replan, verdict_only
from planner.design import Design
from planner.errors import BriefError
from planner.numerics import gamma_p_array
from planner.operating_point import _CAPACITIES, seed_capacity_rate, seed_relation, seed_tpot_ms
from planner.replica import shape_of
from planner.variations import diff_designs, variation_analysis
from tests.conftest import ROOT

pytestmark = pytest.mark.unit

VARIATIONS = [name for name in preset_names() if name.startswith("variation-")]


def _python(code: str, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


@pytest.mark.parametrize("name", VARIATIONS)
def test_variation_analysis_is_the_one_a_whole_capstone_plan_gives(name):
    design = plan(load_brief(name))
    capstone = plan(load_brief("capstone"))
    assert design.variation is not None
    assert variation_analysis(core_design(design.brief), capstone, design) == design.variation
    assert design.variation.diff == diff_designs(capstone, design)


@pytest.mark.parametrize("name", ["variation-a", "variation-b"])
def test_variation_options_are_the_same_with_the_capacity_search(name, monkeypatch):
    """Options re-plan without the SLO-capacity search: nothing they show may come from it."""
    design = plan(load_brief(name))
    capstone = plan(load_brief("capstone"))

    def with_search(brief: Brief, curves: bool = True, capacity: bool = True) -> CoreDesign:
        return core_design(brief, curves=curves, capacity=True)

    monkeypatch.setattr(variations, "core_design", with_search)
    assert variation_analysis(core_design(design.brief), capstone, design) == design.variation


@pytest.mark.parametrize("name", ["agent-platform", "rag", "chat-speculative", "qps10-tp4", "capstone"])
def test_seed_figures_alone_are_seed_relations_own(name):
    core = core_design(load_brief(name))
    brief, shape = core.brief, core.shape
    for rate in (0.5, core.operating_point.rate_per_replica_per_s, 40.0):
        assert seed_tpot_ms(brief, shape, rate) == seed_relation(brief, shape, rate).tpot_ms
    for hit in (None, 0.0, 0.5):
        assert seed_capacity_rate(brief, shape, hit) == seed_relation(brief, shape, 1.0, hit_rate=hit).capacity_rate_per_s


def test_verdict_only_replan_of_an_overloaded_replica_skips_the_capacity_search():
    brief = load_brief("capstone").with_changes({"hardware.nodes": 2, "workload.duty_cycle": 0.1501})  # a brief no other test plans
    _CAPACITIES.clear()
    quick = verdict_only(brief)
    assert not _CAPACITIES, "a verdict-only re-plan ran the SLO-capacity search"
    full = replan(brief)
    assert not quick.operating_point.stable and quick.operating_point.fix == "add nodes"
    assert math.isnan(quick.operating_point.capacity_rate_per_s)
    assert full.operating_point.fix.startswith("add nodes: ")
    assert (quick.verdict.feasible, quick.verdict.meets_slo) == (full.verdict.feasible, full.verdict.meets_slo)
    assert [p.field for p in quick.verdict.problems] == [p.field for p in full.verdict.problems]


def test_importing_planner_loads_nothing_until_a_name_is_used():
    out = _python(
        "import sys, planner; print('numpy' in sys.modules, 'pydantic' in sys.modules); planner.plan; print('numpy' in sys.modules)"
    )
    assert out.split() == ["False", "False", "True"]
    out = _python("import planner; print(set(planner.__all__) <= set(dir(planner)))")
    assert out == "True"
    assert isinstance(plan(load_brief("capstone")), Design)


def test_the_command_line_runs_blas_on_one_thread_unless_told_and_keeps_the_collector_on():
    code = "import gc, os, planner.__main__; print(os.environ['OPENBLAS_NUM_THREADS'], gc.isenabled(), gc.get_freeze_count() > 10000)"
    env = {k: v for k, v in __import__("os").environ.items() if k != "OPENBLAS_NUM_THREADS"}
    assert _python(code, env).split() == ["1", "True", "True"]
    assert _python(code, env | {"OPENBLAS_NUM_THREADS": "3"}).split() == ["3", "True", "True"]


@pytest.mark.parametrize("name", ["capstone", "variation-d", "rag", "agent-platform", "moe-deepseek", "chat-speculative"])
def test_fleet_searches_read_capacitys_own_no_cache_utilization(name):
    brief = load_brief(name)
    for nodes in (1, 3, brief.hardware.nodes, 40):
        sized = brief.with_changes({"hardware.nodes": nodes})
        try:
            shape = shape_of(sized)
        except BriefError:
            continue
        dem = demand(sized, shape)
        assert (
            utilization_no_prefix_cache_at(sized, shape, dem)
            == capacity(sized, shape, dem, memory(sized, shape)).utilization_no_prefix_cache
        )


def test_gamma_p_array_is_the_computed_one_and_a_fresh_copy():
    x = np.array([[0.0, 0.3, 1.7], [2.5, 60.0, np.inf]])
    first = gamma_p_array(1.5, x)
    np.testing.assert_array_equal(first, numerics._gamma_p_array(1.5, x))
    first[:] = -1.0  # a caller changing its copy
    again = gamma_p_array(1.5, x)
    np.testing.assert_array_equal(again, numerics._gamma_p_array(1.5, x))
    assert again.shape == x.shape and again[0, 0] == 0.0 and again[1, 2] == 1.0
