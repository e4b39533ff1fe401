"""The URL carries the design: a copied link reopens the same controls and the same figures."""

from __future__ import annotations

import pytest
from apphelp import figure, metrics, new_app, shown, visit

from planner import load_brief
from ui.state import diff_overrides, from_query_params, to_query_params

pytestmark = pytest.mark.app


def _params(at: object) -> dict[str, str]:
    raw = dict(at.query_params)  # type: ignore[attr-defined]
    return {k: v[-1] if isinstance(v, list) else v for k, v in raw.items()}


def test_link_round_trip_reopens_the_same_design() -> None:
    at = visit(new_app({"preset": "capstone"}), "pages/capacity.py")
    at.slider(key="sb.workload.duty_cycle").set_value(0.12).run()
    at.slider(key="sb.workload.prefix_hit_rate").set_value(0.6).run()
    at.slider(key="sb.hardware.nodes").set_value(10).run()
    at.selectbox(key="sb.deployment.weights").set_value("int8").run()
    at.selectbox(key="sb.hardware.gpu").set_value("h200").run()
    link = _params(at)
    assert link == {
        "preset": "capstone",
        "deployment.weights": "int8",
        "hardware.gpu": "h200",
        "hardware.nodes": "10",
        "workload.duty_cycle": "0.12",
        "workload.prefix_hit_rate": "0.6",
    }
    shown = metrics(at)

    reopened = visit(new_app(link), "pages/capacity.py")
    assert metrics(reopened) == shown
    assert reopened.slider(key="sb.workload.duty_cycle").value == pytest.approx(0.12)
    assert reopened.selectbox(key="sb.hardware.gpu").value == "h200"
    assert _params(reopened) == link


def test_link_to_another_preset() -> None:
    at = new_app({"preset": "qps10-tp4"})
    assert at.sidebar.selectbox(key="nav.preset").value == "qps10-tp4"
    assert at.number_input(key="sb.workload.request_rate").value == pytest.approx(10.0)


def test_bad_link_parameter_is_reported_and_the_rest_kept() -> None:
    at = visit(new_app({"preset": "capstone", "hardware.nodes": "6", "workload.duty_cycle": "7", "no.such": "1"}), "pages/capacity.py")
    warnings = " ".join(shown(w.value) for w in at.warning)
    assert "workload.duty_cycle" in warnings and "no.such" in warnings
    assert at.slider(key="sb.hardware.nodes").value == 6
    assert figure(at, "Request rate") == pytest.approx(55.6, rel=0.01)


def test_unknown_preset_in_link_falls_back_to_the_capstone() -> None:
    at = new_app({"preset": "../../etc/passwd"})
    assert at.sidebar.selectbox(key="nav.preset").value == "capstone"
    assert any("unknown preset" in shown(w.value) for w in at.warning)


def test_url_codec_round_trips_every_kind_of_value() -> None:
    base = load_brief("capstone")
    other = base.with_changes(
        {
            "title": "123",
            "assumptions": ["one", "two"],
            "workload.users": None,
            "workload.request_rate": 40.0,
            "deployment.prefix_caching": False,
        }
    )
    overrides = diff_overrides(base, other)
    preset, parsed, errors = from_query_params(to_query_params("capstone", overrides))
    assert (preset, errors) == ("capstone", {})
    assert base.with_changes(parsed) == other


def test_diff_of_a_custom_model_round_trips() -> None:
    base = load_brief("capstone")
    custom = base.with_changes(
        {
            "model.name": "custom",
            "model.custom": {"layers": 32, "hidden_size": 4096, "attention_heads": 32, "kv_heads": 8, "head_dim": 128, "params": 8e9},
        }
    )
    assert base.with_changes(diff_overrides(base, custom)) == custom
    assert custom.with_changes(diff_overrides(custom, base)) == base


def _browser_goes_to(at: object, url: dict[str, str]) -> None:
    """What the browser's Back or Forward does: rerun the page with that entry's URL, no control changed."""
    at.query_params.clear()  # type: ignore[attr-defined]
    for key, value in url.items():
        at.query_params[key] = value  # type: ignore[attr-defined]
    at.run()  # type: ignore[attr-defined]


def test_back_restores_the_design_of_the_previous_url_and_forward_the_next() -> None:
    at = visit(new_app({"preset": "capstone"}), "pages/capacity.py")
    first = _params(at)
    at.slider(key="sb.workload.duty_cycle").set_value(0.12).run()
    second = _params(at)
    assert second == {**first, "workload.duty_cycle": "0.12"}
    assert figure(at, "Request rate") == pytest.approx(83.3, rel=0.01)

    _browser_goes_to(at, first)
    assert at.slider(key="sb.workload.duty_cycle").value == pytest.approx(0.08)
    assert figure(at, "Request rate") == pytest.approx(55.6, rel=0.01)
    assert _params(at) == first, "the undone design is not written back"
    assert at.session_state["state.overrides"] == {}

    _browser_goes_to(at, second)
    assert at.slider(key="sb.workload.duty_cycle").value == pytest.approx(0.12)
    assert figure(at, "Request rate") == pytest.approx(83.3, rel=0.01)


def test_back_across_a_preset_change_returns_to_the_preset_before() -> None:
    at = visit(new_app({"preset": "capstone", "hardware.nodes": "6"}), "pages/capacity.py")
    first = _params(at)
    at.sidebar.selectbox(key="nav.preset").set_value("qps10-tp4").run()
    assert _params(at) == {"preset": "qps10-tp4"}
    _browser_goes_to(at, first)
    assert at.sidebar.selectbox(key="nav.preset").value == "capstone"
    assert at.slider(key="sb.hardware.nodes").value == 6


def test_a_change_wins_over_the_url_the_browser_sent_with_it() -> None:
    """A key press sent before the browser applied the last run's URL carries the older URL: the press must count."""
    at = visit(new_app({"preset": "capstone"}), "pages/capacity.py")
    stale = _params(at)
    at.slider(key="sb.workload.duty_cycle").set_value(0.12).run()
    at.query_params.clear()
    for key, value in stale.items():
        at.query_params[key] = value
    at.slider(key="sb.workload.duty_cycle").set_value(0.13).run()
    assert at.session_state["state.overrides"] == {"workload.duty_cycle": 0.13}
    assert _params(at)["workload.duty_cycle"] == "0.13"
