"""The fit, its cross-validation and the error bands the plan carries (planner.calibration.fit, planner.uncertainty)."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field

import numpy as np
import pytest

from planner import load_brief, plan
from planner.brief import Efficiency
from planner.calibration.fit import Parameter, cross_validate, family_constants, fit, group_errors
from planner.uncertainty import BANDS_FILE, uncertainty

pytestmark = pytest.mark.unit


@dataclass(frozen=True)
class _Obs:
    id: str
    source: str
    value: float
    x: float
    weight: float = 1.0
    groups: dict[str, str] = field(default_factory=dict)
    family: str = "vllm"


def _law(obs: _Obs, constants: dict[str, float]) -> float:
    """A step-like law: fixed time + work / rate."""
    return constants["fixed"] + obs.x / constants["rate"]


_PARAMS = (
    Parameter(name="fixed", low=0.0, high=10.0, start=3.0, why_range="test"),
    Parameter(name="rate", low=0.5, high=20.0, start=5.0, why_range="test"),
)


def _observations(noise: float = 0.0) -> list[_Obs]:
    rng = np.random.default_rng(0)
    truth = {"fixed": 1.2, "rate": 8.0}
    out = []
    for i, x in enumerate(np.linspace(1, 100, 24)):
        value = _law(_Obs("", "", 1.0, float(x)), truth) * math.exp(rng.normal(0, noise))
        out.append(_Obs(id=str(i), source=f"s{i % 4}", value=value, x=float(x), groups={"half": "low" if x < 50 else "high"}))
    return out


def test_fit_recovers_known_constants():
    result = fit(_observations(), _law, parameters=_PARAMS, max_evaluations=400)
    assert result.constants["fixed"] == pytest.approx(1.2, rel=0.05)
    assert result.constants["rate"] == pytest.approx(8.0, rel=0.05)
    assert result.objective < 0.01 and result.at_edge == ()


def test_a_constant_pinned_at_its_range_is_reported():
    narrow = (_PARAMS[0], Parameter(name="rate", low=0.5, high=4.0, start=2.0, why_range="too low on purpose"))
    assert "rate" in fit(_observations(), _law, parameters=narrow, max_evaluations=300).at_edge


def test_held_out_errors_exceed_in_sample_on_noisy_data():
    obs = _observations(noise=0.1)
    full = fit(obs, _law, parameters=_PARAMS, max_evaluations=300)
    held = cross_validate(obs, _law, full, parameters=_PARAMS, max_evaluations=150)
    assert set(held) == {o.id for o in obs}  # every row predicted by a fold that did not see its source
    in_sample = np.median([abs(_law(o, full.constants) / o.value - 1) for o in obs])
    assert np.median(np.abs(list(held.values()))) >= in_sample * 0.95
    groups = group_errors(held, {o.id: o.groups for o in obs})
    assert {v: int(s["rows"]) for v, s in groups["half"].items()} == {"low": 12, "high": 12}


def _family_law(obs: _Obs, constants: dict[str, float]) -> float:
    return _law(obs, family_constants(constants, obs.family))


def _two_families() -> list[_Obs]:
    """Family a (sources s0, s1) steps with 1.2 fixed; family b (source s2 only) with 4.0: the rate is shared."""
    out = []
    for i, x in enumerate(np.linspace(1, 100, 18)):
        family, source = ("b", "s2") if i % 3 == 2 else ("a", f"s{i % 3}")
        value = _law(_Obs("", "", 1.0, float(x)), {"fixed": 4.0 if family == "b" else 1.2, "rate": 8.0})
        out.append(_Obs(id=str(i), source=source, value=value, x=float(x), family=family))
    return out


def test_a_familys_own_constant_is_fitted_and_never_leaks_into_its_held_out_fold():
    """The split recovers each family's fixed cost; when the only source of family b is held out, its rows fall back
    to the shared constant (fitted on family a), so their held-out error is large, not the split's in-sample ~0."""
    own_b = _PARAMS[0].model_copy(update={"family": "b"})
    params = (*_PARAMS, own_b)
    assert own_b.key == "fixed:b" and family_constants({"fixed": 1.0, "fixed:b": 3.0}, "b") == {"fixed": 3.0}
    obs = _two_families()
    full = fit(obs, _family_law, parameters=params, max_evaluations=600)
    assert full.constants["fixed"] == pytest.approx(1.2, rel=0.1) and full.constants["fixed:b"] == pytest.approx(4.0, rel=0.1)
    held = cross_validate(obs, _family_law, full, parameters=params, max_evaluations=300)
    b_errors = [abs(held[o.id]) for o in obs if o.family == "b"]
    a_errors = [abs(held[o.id]) for o in obs if o.family == "a"]
    assert min(b_errors) > 0.01 and np.median(a_errors) < 0.02


def test_the_bands_file_is_the_reports_held_out_residuals(root):
    """planner/calibration/bands.json holds the 10th-90th percentiles of the report's held-out errors per metric kind."""
    report = json.loads((root / "docs" / "calibration.json").read_text(encoding="utf-8"))
    bands = json.loads(BANDS_FILE.read_text(encoding="utf-8"))
    cv = report["cross_validation"]
    assert cv["median_abs_error"] == pytest.approx(np.median(np.abs(list(cv["rows"].values()))))
    for kind, band in bands["by_kind"].items():
        logs = [math.log1p(cv["rows"][str(r["id"])]) for r in report["rows"] if r["groups"]["metric"] == kind]
        assert band["rows"] == len(logs)
        assert band["log_p10"] == pytest.approx(np.quantile(logs, 0.1))
        assert band["log_p90"] == pytest.approx(np.quantile(logs, 0.9))
    assert bands["rows"] == len(cv["rows"])


def test_the_plan_carries_bands_on_its_predictions():
    design = plan(load_brief("capstone"))
    u = design.uncertainty
    ttft = u.band("slo.ttft_p95_ms")
    assert ttft is not None and ttft.value == design.slo.ttft_p95_ms and ttft.low < ttft.high
    capacity = u.band("operating_point.capacity_rate_per_s")
    assert capacity is not None and capacity.value == design.operating_point.capacity_rate_per_s
    needed = u.band("operating_point.replicas_at_capacity")
    assert needed is not None
    # the replicas needed move opposite to the capacity
    assert needed.low * capacity.high == pytest.approx(needed.value * capacity.value, rel=1e-9)
    assert u.calibrated and "leave-one-source-out" in u.basis
    assert "its own efficiencies" in u.basis  # the capstone states the seed's efficiencies


def test_outside_the_calibrated_data_the_band_says_so_and_widens():
    """Every catalog GPU has rows today; a GPU without any (a custom or future entry) gets the widest spread, doubled."""
    brief = load_brief("capstone").with_changes({"efficiency": {}})
    figures = {"slo.itl_p95_ms": 20.0, "operating_point.capacity_rate_per_s": 10.0}
    inside, outside = uncertainty(brief, figures, "h100-sxm"), uncertainty(brief, figures, "no-rows-gpu")
    assert inside.calibrated and not outside.calibrated and "no measurements on this GPU" in outside.basis
    for path in figures:
        a, b = inside.band(path), outside.band(path)
        assert a is not None and b is not None and b.plus_minus > a.plus_minus


def test_the_engine_family_split_is_kept_only_if_it_predicts_held_out_sources_better(root):
    """docs/calibration.json reports both fits' held-out median; the kept one is the lower, and it is the report's."""
    report = json.loads((root / "docs" / "calibration.json").read_text(encoding="utf-8"))
    split = report["engine_family_split"]
    medians = {name: v["held_out_median_abs_error"] for name, v in split["variants"].items()}
    assert set(medians) == {"shared", "per engine family"}
    assert split["kept"] == min(medians, key=lambda name: medians[name])
    assert report["cross_validation"]["median_abs_error"] == pytest.approx(medians[split["kept"]])
    family_keys = {k for k in split["variants"]["per engine family"]["constants"] if ":" in k}
    assert family_keys == {"step_overhead_ms:trtllm", "per_sequence_us:trtllm"}
    assert set(report["fitted"]) == set(split["variants"][split["kept"]]["constants"])


@pytest.mark.usefixtures("ttft_range_above_the_plan")
def test_a_range_that_leaves_out_its_own_figure_says_why():
    """Review s4 finding 9: with a calibration whose TTFT residuals all sit below zero (the fixture), its 80%
    range lies above the plan's p95. Wherever that range is printed beside the figure (verdict bar, document, Compare,
    a figure with its band) it says by how much the plan under-predicts; a range that holds its figure says nothing."""
    from planner.compare import compare
    from planner.figures import format_value, spec
    from planner.uncertainty import outside_note, range_text, ranges_line
    from report.document import _p95_ranges
    from report.figures import Figures

    design = plan(load_brief("capstone"))
    ttft = design.uncertainty.band("slo.ttft_p95_ms")
    assert ttft is not None and ttft.value < ttft.low  # 85.6 ms beside 86.3 to 135 ms
    note = "the plan's 85.6 ms under-predicts it by 0.8% to 57.8%"
    assert outside_note(ttft.value, ttft.low, ttft.high) == note
    assert ranges_line(design.uncertainty, (("p95 TTFT", "slo.ttft_p95_ms"),)) == f"p95 TTFT 86.3 to 135 ms: {note}"
    assert any(note in line for line in _p95_ranges(Figures(design)))
    (row,) = compare(design, design, ("slo.ttft_p95_ms",))
    assert row.left_range == f"86.3 to 135 ms: {note}"
    assert format_value(spec("slo.ttft_p95_ms"), ttft.value, band=ttft) == f"85.6 ms (86.3 to 135 ms: {note})"
    assert outside_note(ttft.value, ttft.low, ttft.high, short=True) == "plan 0.8% to 57.8% low"
    assert range_text(10.0, 6.0, 20.0) == "6 to 20 ms"  # the ITL range holds its figure: no note
    assert outside_note(30.0, 6.0, 20.0) == "the plan's 30 ms over-predicts it by 33.3% to 80.0%"


_DEFAULT_CLAIMS = (  # (pattern in an assumption that says it uses the calibrated defaults, the Efficiency field, scale)
    (r"(\d+)% of the FP8 peak", "compute_fraction", 100),
    (r"(\d+)% of HBM bandwidth", "bandwidth_fraction", 100),
    (r"(\d+)% (?:for|on) the KV", "attention_bandwidth_fraction", 100),
    (r"([\d.]+) ms (?:fixed )?a step", "step_overhead_ms", 1),
    (r"(\d+) us a sequence", "per_sequence_us", 1),
)


@pytest.mark.parametrize("name", ["chat-speculative", "moe-deepseek"])
def test_a_preset_that_cites_the_calibrated_defaults_states_them(name):
    """A preset's assumption that says it runs the planner's calibrated defaults quotes the defaults the planner runs,
    and the brief runs them: a refit that moves a default makes this fail until the text follows."""
    brief, defaults = load_brief(name), Efficiency()
    cited = [a for a in brief.assumptions if "calibrated defaults" in a]
    assert cited, "the preset no longer cites the calibrated defaults"
    for pattern, field_name, scale in _DEFAULT_CLAIMS:
        found = re.search(pattern, cited[0])
        assert found is not None, f"{name}: no {field_name} figure in {cited[0]!r}"
        assert float(found.group(1)) == pytest.approx(getattr(defaults, field_name) * scale), field_name
        assert getattr(brief.efficiency, field_name) == getattr(defaults, field_name)
