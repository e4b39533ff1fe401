"""Every page renders every preset: no exception, the page's key figures shown, the sidebar present."""

from __future__ import annotations

import base64
import json
import re

import pytest
from apphelp import metrics, new_app, open_arithmetic, other_tabs, shown, text_figures, visit
from streamlit.testing.v1 import AppTest

from planner import preset_names
from ui.pages import PAGES

pytestmark = pytest.mark.app

# The figures each page must show for any computable design (metric labels).
KEY_FIGURES = {
    "Brief": ("Utilization at peak", "Binding resource", "TPOT at the operating point"),
    "Capacity": (
        "Request rate",
        "Weights per GPU",
        "Sequences per replica",
        "Decode step at the sizing batch (real)",
        "Utilization at peak",
        "In flight",
        "TPOT at the operating point",
    ),
    "Architecture": ("Gateway nodes (CPU)",),  # and the replicas: the general pool's, or a disaggregated pair's (below)
    "SLO budget": ("p50 TTFT", "p95 TTFT", "p50 ITL"),
    "Failure modes": ("Binding scenario", "N+1 (one node lost)"),
    "Cost": ("Cost per hour", "Cost per year", "Cost per M output tokens"),
    "Variations": (),
    "Compare": (),
    "Search": (),  # figures only after a search runs (tests/test_search_page.py)
}
# a disaggregated design is judged on its two pools: the Brief page shows them, not the aggregated sizing arithmetic
DISAGGREGATED_BRIEF = ("Prefill pool busy", "Binding pool", "TPOT at the operating point")
VERDICT_ERRORS = (
    "Not feasible as briefed",
    "Feasible, misses the SLO",
    "This design cannot be computed",
    "p95 TTFT",
    "p95 ITL",
    "p95 TPOT",
    "TTFT is unbounded",
    "ITL is unbounded",
)


@pytest.mark.parametrize("preset", preset_names())
@pytest.mark.parametrize("page", [p for p, _, _ in PAGES], ids=[t for _, t, _ in PAGES])
def test_page_renders_preset(page: str, preset: str) -> None:
    at = new_app({"preset": preset})
    visit(at, page)
    title = next(t for p, t, _ in PAGES if p == page)
    assert at.title[0].value == title
    assert at.sidebar.selectbox(key="nav.preset").value == preset
    shown = metrics(at) | text_figures(at)
    if title == "Architecture":  # drawn on the server: SVG images, nothing for the browser to lay out
        assert not at.get("graphviz_chart")
        assert sum("data:image/svg+xml;base64," in h.proto.body for h in at.get("html")) == 1, "no diagram"
    if title == "SLO budget":
        assert len(at.get("plotly_chart")) >= 2, "no waterfalls"
    if title == "Architecture":
        pools = ("Prefill-pool replicas", "Decode-pool replicas") if preset == "chat-disaggregated" else ("General-pool replicas",)
        assert all(label in shown for label in pools), (preset, sorted(shown))
    if title == "Failure modes":  # a scenario's name at body size: a metric tile's large type cut it off (review s4 #15)
        assert "Binding scenario" in text_figures(at) and "Binding scenario" not in metrics(at)
    keys = DISAGGREGATED_BRIEF if (title, preset) == ("Brief", "chat-disaggregated") else KEY_FIGURES.get(title, ())
    for label in keys:
        assert label in shown, f"{title} with {preset}: {label!r} missing"
        assert shown[label] not in ("", "nan"), (label, shown[label])
    # The only errors a preset may show are its verdict (variation F does not fit the fleet).
    assert all(e.value.startswith(VERDICT_ERRORS) for e in at.error), [e.value for e in at.error]


def test_the_arithmetic_is_drawn_only_while_its_expander_is_open() -> None:
    """A closed 'Show the arithmetic' expander sends nothing to the browser (every control change would redraw it);
    opened, it shows each figure's arithmetic, and it stays open when a control changes the design."""
    at = visit(new_app({"preset": "capstone"}), "pages/capacity.py")
    arithmetic = [e for e in at.get("expander") if e.label == "Show the arithmetic"]
    assert len(arithmetic) == 5 and all(not e.children for e in arithmetic)
    open_arithmetic(at)
    texts = [shown(e.markdown[0].value) for e in at.get("expander") if e.label == "Show the arithmetic"]
    assert len(texts) == 5 and all(text.startswith("- ") for text in texts), texts
    assert any("Request rate" in text and "req/s" in text for text in texts), texts
    at.sidebar.slider(key="sb.workload.duty_cycle").set_value(0.2).run()
    after = [shown(e.markdown[0].value) for e in at.get("expander") if e.label == "Show the arithmetic" and e.markdown]
    assert len(after) == 5, "an open expander closed when the design changed"
    assert after != texts and any("0.2 duty" in text for text in after), after  # and it shows the new design's arithmetic


def test_every_page_has_key_figures_listed() -> None:
    missing = [t for _, t, _ in PAGES if t not in KEY_FIGURES]
    assert not missing, f"add the key figures of {missing} to KEY_FIGURES"


def _diagram_svgs(at) -> list[str]:
    """The SVG documents the Architecture page sends (both layouts), decoded from their data URLs."""
    bodies = [h.proto.body for h in at.get("html")]
    return [
        base64.b64decode(data).decode() for body in bodies for data in re.findall(r"data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)", body)
    ]


def test_architecture_page_draws_the_design_on_the_server() -> None:
    """Both layouts of the edited design, their labels Graphviz's text, the legend, and the GPU of every node."""
    at = visit(new_app({"preset": "capstone", "hardware.nodes": "6", "deployment.kv_cache": "bf16"}), "pages/architecture.py")
    wide, narrow = _diagram_svgs(at)
    for svg in (wide, narrow):
        text = " ".join(re.findall(r">([^<>]+)</text>", svg))
        assert "general pool: 4 nodes, 4 replicas" in text and "FP8 weights, BF16 KV" in text
    assert 'font-size="12.00"' in wide  # the labels' size the page scales to 15 px
    html = " ".join(h.proto.body for h in at.get("html"))
    assert "@container" in html and 'class="arch-legend"' in html and "over 100%: cannot carry the peak" in html
    assert any("8 x NVIDIA H100 SXM 80GB" in c.value for c in at.caption)


def test_architecture_page_without_graphviz_says_so_and_lists_the_pools(monkeypatch: pytest.MonkeyPatch) -> None:
    from report.diagram import svgs_from_dots

    monkeypatch.setenv("DOT", "/nonexistent/dot")
    svgs_from_dots.cache_clear()  # a diagram drawn by an earlier test would still show
    at = visit(new_app({"preset": "capstone"}), "pages/architecture.py")
    svgs_from_dots.cache_clear()
    warnings = [shown(w.value) for w in at.warning]
    assert len(warnings) == 1 and warnings[0].startswith("The diagram cannot be drawn on this server: Graphviz dot not found")
    assert "\n" not in warnings[0]
    assert not _diagram_svgs(at)
    assert any("general" in str(t.value.to_dict()) for t in at.table), "the pool table still shows"


def test_titles_follow_the_edit_on_every_page() -> None:
    """With 6 nodes no page calls the design "on 64 H100": the caption under every title is the design's own name.
    The unedited preset keeps its title; a title the user wrote is kept too."""
    edited = new_app({"preset": "capstone", "hardware.nodes": "6"})
    for page, title, _ in PAGES:
        visit(edited, page)
        assert edited.caption[0].value.replace("\\", "") == "Llama-3-70B for 10,000 users on 6 x 8 NVIDIA H100 SXM 80GB", title
        if title != "Variations":  # whose cards describe the variation presets, as written
            assert not any("64 H100" in c.value for c in edited.main.caption), title  # the sidebar names the preset picked
    preset = new_app({"preset": "capstone"})
    assert preset.caption[0].value.replace("\\", "") == "Capstone: Llama-3-70B for 10,000 chat users on 64 H100"
    own = new_app({"preset": "capstone", "hardware.nodes": "6", "title": "Six nodes"})
    assert own.caption[0].value.replace("\\", "") == "Six nodes"


def _chart_titles(at: AppTest) -> list[str]:
    return [json.loads(c.proto.spec)["layout"]["title"]["text"] for c in at.get("plotly_chart")]


def test_the_slo_page_draws_one_engine_limit_at_a_time() -> None:
    """The two trade-off charts sit in tabs that draw only the open one: every control change moves both curves, and
    a changed Plotly chart is drawn anew in the browser (benchmarks/browser_speed.py). Each tab still draws its chart."""
    at = visit(new_app({"preset": "capstone"}), "pages/slo_budget.py")
    waterfalls = ["Time to first token (ms)", "Inter-token latency (ITL, ms)"]
    assert _chart_titles(at) == [*waterfalls, "Prefill chunk (max-num-batched-tokens)"]
    other_tabs(at)
    assert _chart_titles(at) == [*waterfalls, "Batch limit (max-num-seqs)"]


def test_the_capacity_page_draws_one_utilization_chart_at_a_time() -> None:
    """The share of GPU time and each limit as traffic grows sit in tabs that draw only the open one (both move with
    every control); the memory chart does not move with the load and the decode step's bytes are the page's own."""
    at = visit(new_app({"preset": "capstone"}), "pages/capacity.py")
    above = ["Memory of one NVIDIA H100 SXM 80GB (GB)", "Bytes one decode step reads per GPU (GB)"]
    assert _chart_titles(at) == [*above, "Share of GPU time at peak, sizing arithmetic (%)"]
    other_tabs(at)
    assert _chart_titles(at) == [*above, "Each limit as traffic grows"]


@pytest.mark.parametrize("preset", ["moe-deepseek", "chat-disaggregated"])
def test_the_brief_pages_kv_in_use_is_the_capacity_pages(preset: str) -> None:
    """One figure, one name: the Brief page's KV tile is the operating point's KV in use the Capacity page shows (moe
    451 GB, 42.4% of the pool), not the sizing batch's share it showed under that name (26.3%)."""
    at = new_app({"preset": preset})
    brief_tiles = metrics(at)
    capacity_tiles = metrics(visit(at, "pages/capacity.py"))
    assert "KV in use at peak" not in brief_tiles
    assert brief_tiles["KV in use"] == capacity_tiles["KV in use"]


def test_the_capacity_page_calls_rags_sizing_figure_optimistic_with_the_headrooms_rounding() -> None:
    """rag's sizing arithmetic (17.6%, x5.67 linear) comes after its SLO capacity (x1.2): the page says optimistic where it
    said "the worked design's conservative sizing arithmetic", and writes x5.67 as the headroom's text does (it read x5.68)."""
    at = visit(new_app({"preset": "rag"}), "pages/capacity.py")
    captions = " ".join(shown(c.value) for c in at.caption)
    assert "conservative sizing arithmetic" not in captions
    assert "would reach 100% at x5.67 if it scaled linearly, but the general pool reaches its SLO capacity at x1.2" in captions
    assert "here it is optimistic" in captions


def test_a_disaggregated_architecture_counts_each_pools_replicas_with_the_split() -> None:
    """chat-disaggregated's general pool runs 12 prefill and 4 decode replicas: the Architecture page shows both counts
    (it showed 'General-pool replicas 16' beside the working of 50 req/s per decode replica)."""
    at = visit(new_app({"preset": "chat-disaggregated"}), "pages/architecture.py")
    tiles = metrics(at)
    assert tiles["Prefill-pool replicas"] == "12" and tiles["Decode-pool replicas"] == "4"
    assert "General-pool replicas" not in tiles
    open_arithmetic(at)
    assert any("= 12 prefill (TP=8, 12 replicas) + 4 decode (TP=8, 4 replicas)" in shown(m.value) for m in at.markdown)


def test_brief_page_of_a_disaggregated_design_binds_on_its_pools() -> None:
    """chat-disaggregated's Brief page names the pool that binds (it named the aggregated sizing arithmetic's compute,
    which the verdict does not judge), and calls the sizing arithmetic aggregated; a split whose decode pool runs full
    binds on the decode pool (its unbounded slot wait made the TTFT miss, and the prefill pool was named)."""
    at = new_app({"preset": "chat-disaggregated"})
    shown_figures = metrics(at) | text_figures(at)
    assert shown_figures["Prefill pool busy"] == "77.4%" and shown_figures["Binding pool"] == "prefill"
    assert "Utilization at peak" not in shown_figures and "Binding resource" not in shown_figures
    binding = next(shown(m.value) for m in at.markdown if m.value.startswith("**Binding:**"))
    assert "the prefill pool misses the p95 TTFT target first" in binding and "aggregated sizing arithmetic" in binding
    assert "binds on compute at 70.1%" in binding
    full = new_app({"preset": "chat-disaggregated", "disaggregation.prefill_nodes": "14"})
    binding = next(shown(m.value) for m in full.markdown if m.value.startswith("**Binding:**"))
    assert "the decode pool misses its token-gap target first" in binding and "full batch of 512" in binding


def test_the_brief_page_answer_is_green_only_where_the_verdict_bar_is() -> None:
    """chat-speculative at 8 req/s with 40% acceptance meets the SLO without N+1: the verdict bar was amber ("Meets the
    SLO, no N+1") and the Brief page's answer below it green ("Feasible and meets the SLO."). It is amber and says why;
    a stated headroom the pools do not keep is said the same way; the capstone's stays green."""
    at = new_app({"preset": "chat-speculative", "speculative.acceptance_rate": "0.4", "workload.request_rate": "8"})
    assert not at.success, [s.value for s in at.success]
    assert any(w.value == "Feasible and meets the SLO at the peak, but one node lost misses it (no N+1)." for w in at.warning)
    short = new_app({"preset": "chat-disaggregated"})
    assert any("the pools keep less than the stated headroom above the peak" in w.value for w in short.warning)
    assert [s.value for s in new_app({"preset": "capstone"}).success] == ["Feasible and meets the SLO with N+1."]


def test_no_n_plus_one_is_claimed_where_the_availability_does_not_ask_for_it() -> None:
    """rag on 10 nodes with a 95% availability target meets the SLO while one node lost misses it (the failure table's
    row): the Brief page said "Feasible and meets the SLO with N+1." and the verdict bar "Meets the SLO, with N+1"."""
    at = new_app({"preset": "rag", "hardware.nodes": "10", "slo.availability": "0.95"})
    assert [s.value for s in at.success] == ["Feasible and meets the SLO."]
    assert not any("with N+1" in m.value for m in at.markdown), [m.value for m in at.markdown if "N+1" in m.value]
    assert metrics(at)["Availability (N+1)"] == "not needed"  # it read "N+1 holds"


def test_the_slo_page_names_the_slots_the_batch_wait_runs_on() -> None:
    """Near its full batch, moe-deepseek's KV pool holds 2,504 sequences at its context, fewer than its 4,096
    max-num-seqs: the Erlang C wait runs on those 2,504 slots, and the page said "when all 4096 are taken"."""
    at = visit(new_app({"preset": "moe-deepseek", "workload.request_rate": "56.5"}), "pages/slo_budget.py")
    text = " ".join(shown(m.value) for m in at.markdown)
    assert "waits for a batch slot when all 2,504 are taken" in text
    assert "the KV pool holds 2,504 sequences at this context, fewer than max-num-seqs 4,096" in text
    assert "when all 4096 are taken" not in text and "when all 4,096 are taken" not in text
