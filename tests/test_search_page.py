"""The Search page and the Failure modes page's fleet search, in AppTest: a search on a narrowed space shows the
best design, the frontier chart and the knobs; opening the best makes it the current design (its overrides reach
the URL); the fleet search lists one fleet per failure scenario."""

from __future__ import annotations

import json

import pytest
from apphelp import figure, metrics, new_app, visit

from planner import load_brief
from planner.failures import TITLES
from planner.search import PoolRunner, search
from planner.search_space import space_from_data

pytestmark = pytest.mark.app

SEARCH = "pages/search.py"
FAILURES = "pages/failure_modes.py"
NARROW = {"search.gpu": ["h100-sxm", "mi300x"], "search.tp": [8], "search.weights": ["fp8"], "search.kv_cache": ["fp8"]}


def _searched():
    at = visit(new_app({"preset": "capstone"}), SEARCH)
    for key, value in NARROW.items():
        at.multiselect(key=key).set_value(value)
    at.run()
    button = next(b for b in at.button if b.key == "search.run")
    assert button.label.startswith("Search ")
    button.click()
    at.run(timeout=120)
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_search_page_shows_the_best_the_frontier_and_the_knobs():
    at = _searched()
    shown = metrics(at)
    assert shown["Best $ per M output tokens"].startswith("$")
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    xs = [x for trace in spec["data"] for x in trace.get("x", [])]
    assert len(xs) >= 2, "the frontier chart draws its points"
    assert any("click to open this design" in h for trace in spec["data"] for h in trace.get("hovertext", []))
    assert any("The knobs that matter most" in h.value for h in at.subheader)
    # the page's best is the search's own best on the same space
    brief = load_brief("capstone")
    space = space_from_data({"gpu": NARROW["search.gpu"], "tp": [8], "weights": ["fp8"], "kv_cache": ["fp8"]}, brief)
    with PoolRunner(2) as runner:
        expected = search(brief, space, runner, requests=300)
    assert expected.best is not None
    assert at.session_state["search.result"]["result"].best.overrides == expected.best.overrides


def test_opening_the_best_makes_it_the_current_design_on_every_page():
    at = _searched()
    best = at.session_state["search.result"]["result"].best
    assert best is not None
    next(b for b in at.button if b.key == "search.open_best").click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    params = {key: at.query_params[key] for key in at.query_params}
    for path in ("hardware.gpu", "hardware.nodes"):
        value = params[path][0] if isinstance(params[path], list) else params[path]
        assert value == str(best.overrides[path]), (path, params)
    visit(at, "pages/cost.py")
    assert figure(at, "Cost per M output tokens") == pytest.approx(best.usd_per_million_output_tokens, rel=0.01)


def test_failure_modes_page_finds_the_fleet_each_scenario_needs():
    at = visit(new_app({"preset": "capstone"}), FAILURES)
    next(b for b in at.button if b.key == "fm.survival.run").click()
    at.run(timeout=60)
    assert not at.exception, [e.value for e in at.exception]
    tables = [t for t in at.get("table") + at.get("dataframe")]
    texts = " ".join(str(t.proto) for t in tables)
    for title in TITLES.values():
        assert title in texts, title
    assert "general" in texts


def test_a_design_that_cannot_be_computed_can_still_be_searched():
    """Llama-3.1-405B in BF16 does not fit the capstone's H100s: the page says the design cannot be computed and still
    offers the search over the space around it, whose best (one that fits) the user can open."""
    at = new_app({"preset": "capstone", "model.name": "llama-3.1-405b", "deployment.weights": "bf16"})
    visit(at, SEARCH)
    assert any("cannot be computed" in e.value for e in at.error)
    narrow = {"search.gpu": ["b200", "mi300x"], "search.tp": [8], "search.weights": ["fp8", "int4"], "search.kv_cache": ["fp8"]}
    for key, value in narrow.items():
        at.multiselect(key=key).set_value(value)
    at.run()
    next(b for b in at.button if b.key == "search.run").click()
    at.run(timeout=180)
    assert not at.exception, [e.value for e in at.exception]
    best = at.session_state["search.result"]["result"].best
    assert best is not None
    assert metrics(at)["Best $ per M output tokens"].startswith("$")
    assert any("The current design cannot be computed; the best design meets" in i.value for i in at.info)
    searched = next(c.value for c in at.caption if c.value.startswith("Searched"))
    assert "405B" in searched, searched  # the searched design by its own name, not the preset's
    assert any(b.key == "search.open_best" for b in at.button)
