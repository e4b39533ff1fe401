"""Presets D and E change the main pages, not only the Variations page: per-region fleets on Architecture and Cost,
the spike headroom on Capacity and Cost (issue 13 item 4)."""

from __future__ import annotations

import pytest

from planner import load_brief, plan
from planner.fmt import usd
from tests.apphelp import new_app, shown, visit

pytestmark = pytest.mark.app


def _texts(at) -> str:  # type: ignore[no-untyped-def]
    parts = [h.value for h in at.header] + [shown(m.value) for m in at.markdown] + [shown(c.value) for c in at.caption]
    parts += [t.value.to_string() for t in at.table] + [d.value.to_string() for d in at.dataframe]
    return "\n".join(parts)


def test_global_users_show_their_regional_fleets() -> None:
    regions = plan(load_brief("variation-d")).variation.regions  # type: ignore[union-attr]
    text = _texts(visit(new_app({"preset": "variation-d"}), "pages/architecture.py"))
    assert "Regions" in text and all(r.region in text for r in regions)
    assert f"{sum(r.nodes for r in regions)} nodes" in text
    assert "Regions" not in _texts(visit(new_app(), "pages/architecture.py"))  # the capstone has no regions


def test_a_spiky_peak_shows_its_headroom_on_capacity_and_cost() -> None:
    spike = plan(load_brief("variation-e")).variation.spike  # type: ignore[union-attr]
    assert spike is not None and spike.nodes_for_spike > spike.nodes_for_average
    at = new_app({"preset": "variation-e"})
    capacity = _texts(visit(at, "pages/capacity.py"))
    assert "The spike" in capacity and "sized for the spike" in capacity
    cost = _texts(visit(at, "pages/cost.py"))
    assert f"Sized for the spike:** {spike.nodes_for_spike} nodes" in cost


def test_the_variations_page_shows_each_option_s_re_plan() -> None:
    """Review s9 finding 3: each option's overrides are on its card, as `plan --set` takes them, so the figures beside
    them can be re-planned; variation A's shorter context routes the longer prompts to the long-context pool."""
    at = visit(new_app(), "pages/variations.py")
    at.selectbox(key="var.chosen").set_value("variation-a").run()
    assert not at.exception, [e.value for e in at.exception]
    text = _texts(at)
    assert "re-plan (plan --set)" in text and "workload.long_context_threshold_tokens=2896" in text


def test_the_variations_page_shows_the_overflow_pools_and_their_cost() -> None:
    """Review s10 finding 2: the overflow option's row gave the 70B pool alone. The card has a row for each pool with
    its re-plan (the small model's names its model and nodes), and the option's nodes and cost per M across both."""
    overflow = plan(load_brief("variation-a")).variation.options[-1]  # type: ignore[union-attr]
    at = visit(new_app(), "pages/variations.py")
    at.selectbox(key="var.chosen").set_value("variation-a").run()
    assert not at.exception, [e.value for e in at.exception]
    table = next(t.value for t in at.table if "overflow to a smaller model" in t.value.index)
    rows = {name: table.loc[name] for name in table.index}
    whole, small = rows["overflow to a smaller model"], rows["overflow to a smaller model: Llama-3.1-8B pool"]
    assert whole["Nodes"] == "6" and whole["Cost per M output tokens"] == usd(overflow.usd_per_million_output_tokens)
    assert small["Nodes"] == "2" and "model.name=llama-3.1-8b" in small["re-plan (plan --set)"]
    assert "hardware.nodes=2" in small["re-plan (plan --set)"]
    assert rows["overflow to a smaller model: Llama-3-70B pool"]["Nodes"] == "4"


def test_the_cost_page_prices_a_setting_fix_on_the_same_fleet() -> None:
    """Review s9 finding 1: max-num-seqs 1 on the capstone is fixed by max-num-seqs 40 on the same 8 nodes (32 leaves a
    fifth of requests waiting for a batch slot: p95 TTFT 747 ms against 500)."""
    at = visit(new_app({"preset": "capstone", "deployment.max_num_seqs": "1"}), "pages/cost.py")
    text = _texts(at) + "\n".join(shown(e.value) for e in at.error)
    assert (
        "plan --set deployment.max_num_seqs=40 meets it" in text and "with it, these 8 nodes with deployment.max_num_seqs=40 cost" in text
    )
    assert "1012" not in text


def test_a_variation_preset_opens_the_variations_page_on_its_own_card() -> None:
    """/variations?preset=variation-f compared Variation A under F's verdict bar: the chooser starts at the current
    preset when it is a variation, and a user's choice then stays."""
    at = visit(new_app({"preset": "variation-f"}), "pages/variations.py")
    assert at.selectbox(key="var.chosen").value == "variation-f"
    assert any("405B" in h.value for h in at.subheader), [h.value for h in at.subheader]
    at.selectbox(key="var.chosen").set_value("variation-b").run()
    assert at.selectbox(key="var.chosen").value == "variation-b"


def test_an_edited_variation_preset_is_analysed_as_edited() -> None:
    """variation-a with a 15 ms ITL target: the verdict bar said it misses while the card below said "The SLO holds as
    briefed ... those that meet the SLO: INT4 weights, shorter max context, ..." (the unedited preset's analysis). The
    card analyses the design the verdict bar judges, and says it is the edited one; another card stays as its preset."""
    edited = plan(load_brief("variation-a").with_changes({"slo.itl_p95_ms": 15.0})).variation  # type: ignore[union-attr]
    at = visit(new_app({"preset": "variation-a", "slo.itl_p95_ms": "15"}), "pages/variations.py")
    assert not at.exception, [e.value for e in at.exception]
    text = _texts(at) + "\n".join(shown(i.value) for i in at.info)
    assert "Options that meet the SLO: tiered SLO." in text and "The SLO holds as briefed" not in text
    assert edited.conclusion.endswith("Options that meet the SLO: tiered SLO.")
    assert "As edited in the sidebar (1 change(s) from the preset)" in text
    at.selectbox(key="var.chosen").set_value("variation-b").run()
    assert "As edited in the sidebar" not in _texts(at)
