"""Interview practice grades estimates within 10% and points at the step to revisit."""

from __future__ import annotations

import pytest

from planner import load_brief, plan
from planner.practice import PRACTICE_FIGURES, grade, practice_figures

pytestmark = pytest.mark.unit


def test_good_estimates_pass_and_bad_ones_say_where_to_look() -> None:
    design = plan(load_brief("capstone"))
    feedback = {
        f.key: f
        for f in grade(design, {"request_rate_per_s": 56, "utilization": 60, "binding_constraint": "memory", "weights_gb_per_gpu": None})
    }
    assert set(feedback) == {"request_rate_per_s", "utilization", "binding_constraint"}
    assert feedback["request_rate_per_s"].ok and feedback["request_rate_per_s"].off_by == "within 10%"
    assert feedback["request_rate_per_s"].revisit == ""
    util = feedback["utilization"]
    assert not util.ok and util.off_by.endswith("high") and "Step 2" in util.revisit
    assert util.arithmetic == design.capacity.arithmetic["utilization"]
    binding = feedback["binding_constraint"]
    assert not binding.ok and binding.off_by.startswith("bandwidth binds")


def test_tolerance_edges() -> None:
    design = plan(load_brief("capstone"))
    rate = design.demand.request_rate_per_s
    (inside,) = grade(design, {"request_rate_per_s": rate * 1.099})
    (outside,) = grade(design, {"request_rate_per_s": rate * 0.85})
    assert inside.ok and not outside.ok and outside.off_by == "-15% low"


def test_every_figure_is_gradable_on_every_base_preset() -> None:
    for preset in ("capstone", "qps10-tp4"):
        design = plan(load_brief(preset))
        assert practice_figures(design) == PRACTICE_FIGURES
        assert all(f.arithmetic for f in grade(design, {f.key: 1.0 for f in PRACTICE_FIGURES if f.unit != "choice"}))
