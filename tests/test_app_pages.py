"""Every page renders every preset: no exception, the page's key figures shown, the sidebar present."""

from __future__ import annotations

import pytest
from apphelp import metrics, new_app, visit

from planner import preset_names
from ui.pages import PAGES

pytestmark = pytest.mark.app

# The figures each page must show for any computable design (metric labels).
KEY_FIGURES = {
    "Brief": ("Utilization at peak", "Binding resource", "TPOT at the operating point"),
    "Capacity": ("Request rate", "Weights per GPU", "Sequences per replica", "Decode step (real)", "Utilization", "In flight", "TPOT"),
    "Architecture": ("Gateway nodes (CPU)", "General-pool replicas"),
    "SLO budget": ("TTFT p50", "TTFT p95", "ITL p50", "ITL p95"),
    "Failure modes": ("Binding scenario", "N+1 (one node lost)"),
    "Cost": ("Per hour", "Per year", "Per million output tokens"),
    "Variations": (),
    "Search": (),  # figures only after a search runs (tests/test_search_page.py)
}
VERDICT_ERRORS = ("Not feasible as briefed", "This design cannot be computed", "p95 TTFT", "p95 ITL")


@pytest.mark.parametrize("preset", preset_names())
@pytest.mark.parametrize("page", [p for p, _, _ in PAGES], ids=[t for _, t, _ in PAGES])
def test_page_renders_preset(page: str, preset: str) -> None:
    at = new_app({"preset": preset})
    visit(at, page)
    title = next(t for p, t, _ in PAGES if p == page)
    assert at.title[0].value == title
    assert at.sidebar.selectbox(key="nav.preset").value == preset
    shown = metrics(at)
    if title == "Architecture":
        assert at.get("graphviz_chart"), "no diagram"
    if title == "SLO budget":
        assert len(at.get("plotly_chart")) >= 2, "no waterfalls"
    for label in KEY_FIGURES.get(title, ()):
        assert label in shown, f"{title} with {preset}: {label!r} missing"
        assert shown[label] not in ("", "nan"), (label, shown[label])
    # The only errors a preset may show are its verdict (variation F does not fit the fleet).
    assert all(e.value.startswith(VERDICT_ERRORS) for e in at.error), [e.value for e in at.error]


def test_every_page_has_key_figures_listed() -> None:
    missing = [t for _, t, _ in PAGES if t not in KEY_FIGURES]
    assert not missing, f"add the key figures of {missing} to KEY_FIGURES"
