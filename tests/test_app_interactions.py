"""Each sidebar control moves the figures in the direction the physics says, and state survives page switches."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from apphelp import figure, new_app, shown, visit
from streamlit.testing.v1 import AppTest

pytestmark = pytest.mark.app

CAPACITY = "pages/capacity.py"


def _capacity(preset: str = "capstone") -> AppTest:
    return visit(new_app({"preset": preset}), CAPACITY)


def _moves(
    change: Callable[[AppTest], object], up: tuple[str, ...], down: tuple[str, ...], preset: str = "capstone"
) -> dict[str, tuple[float, float]]:
    at = _capacity(preset)
    before = {label: figure(at, label) for label in (*up, *down)}
    change(at)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    after = {label: figure(at, label) for label in (*up, *down)}
    for label in up:
        assert after[label] > before[label], f"{label} should rise: {before[label]} -> {after[label]}"
    for label in down:
        assert after[label] < before[label], f"{label} should fall: {before[label]} -> {after[label]}"
    return {label: (before[label], after[label]) for label in before}


def test_duty_cycle_raises_demand_and_utilization() -> None:
    moved = _moves(
        lambda at: at.slider(key="sb.workload.duty_cycle").set_value(0.16),
        up=("Request rate", "Utilization at peak", "Sizing batch per replica"),
        down=(),
    )
    assert moved["Request rate"][1] == pytest.approx(2 * moved["Request rate"][0], rel=0.01)  # rate = users x duty / generation time


def test_prefix_hit_rate_lowers_prefill_and_utilization() -> None:
    moved = _moves(
        lambda at: at.slider(key="sb.workload.prefix_hit_rate").set_value(0.9),
        up=(),
        down=("Prefill after prefix hits", "Utilization at peak", "Prefill share"),
    )
    assert moved["Prefill after prefix hits"][1] == pytest.approx(66_667 * 0.1, rel=0.01)


def test_users_raise_demand() -> None:
    _moves(
        lambda at: at.number_input(key="sb.workload.users").set_value(20_000),
        up=("Request rate", "Utilization at peak", "In flight"),
        down=(),
    )


def test_request_rate_raises_load_on_a_rate_brief() -> None:
    _moves(
        lambda at: at.number_input(key="sb.workload.request_rate").set_value(14.0),
        up=("Utilization at peak", "TPOT at the operating point", "In flight", "KV in use"),
        down=(),
        preset="qps10-tp4",
    )


def test_more_nodes_lower_utilization_and_batch() -> None:
    _moves(
        lambda at: at.slider(key="sb.hardware.nodes").set_value(12),
        up=("Sequences, whole fleet",),
        down=("Utilization at peak", "Sizing batch per replica"),
    )


def test_bf16_weights_double_weights_and_raise_utilization() -> None:
    moved = _moves(
        lambda at: at.selectbox(key="sb.deployment.weights").set_value("bf16"),
        up=("Weights per GPU", "Utilization at peak", "Decode step at the sizing batch (real)"),
        down=("KV cache per GPU",),
    )
    assert moved["Weights per GPU"][1] == pytest.approx(2 * moved["Weights per GPU"][0], rel=0.01)


def test_bf16_kv_doubles_kv_per_token_and_halves_sequences() -> None:
    moved = _moves(
        lambda at: at.selectbox(key="sb.deployment.kv_cache").set_value("bf16"),
        up=("KV per token per GPU", "Decode step at the sizing batch (real)"),
        down=("Sequences per replica",),
    )
    assert moved["KV per token per GPU"][1] == pytest.approx(2 * moved["KV per token per GPU"][0], rel=0.01)


def test_smaller_model_lowers_weights_and_utilization() -> None:
    _moves(
        lambda at: at.selectbox(key="sb.model.name").set_value("llama-3.1-8b"),
        up=("Sequences per replica",),
        down=("Weights per GPU", "Utilization at peak", "Decode step at the sizing batch (real)"),
    )


def test_faster_gpu_lowers_the_decode_step() -> None:
    _moves(
        lambda at: at.selectbox(key="sb.hardware.gpu").set_value("h200"),
        up=("KV cache per GPU", "Sequences per replica"),
        down=("Decode step at the sizing batch (real)", "Utilization at peak"),
    )


def test_controls_survive_a_page_switch() -> None:
    at = _capacity()
    at.slider(key="sb.workload.duty_cycle").set_value(0.12).run()
    at.slider(key="sb.hardware.nodes").set_value(6).run()
    rate = figure(at, "Request rate")
    visit(at, "app.py")
    assert at.slider(key="sb.workload.duty_cycle").value == pytest.approx(0.12)
    assert at.slider(key="sb.hardware.nodes").value == 6
    visit(at, CAPACITY)
    assert at.slider(key="sb.workload.duty_cycle").value == pytest.approx(0.12)
    assert figure(at, "Request rate") == rate


def test_form_and_sidebar_show_the_same_brief() -> None:
    at = visit(new_app(), "app.py")
    at.selectbox(key="f.model.name").set_value("llama-3.1-8b").run()
    assert at.selectbox(key="sb.model.name").value == "llama-3.1-8b"
    at.selectbox(key="sb.model.name").set_value("llama-3.3-70b").run()
    assert at.selectbox(key="f.model.name").value == "llama-3.3-70b"


def test_the_form_asks_for_no_field_the_sidebar_has_and_labels_each_with_its_unit() -> None:
    from ui.brief_form import FIELD_LABELS, SECTION_KEY_PREFIX, SECTIONS
    from ui.sidebar import SIDEBAR_PATHS

    at = visit(new_app(), "app.py")
    assert at.number_input(key="f.deployment.tp") and not at.main.text_input, "deployment open at first, the title's section closed"
    for key in ["about", *(key for key, _, _ in SECTIONS)]:  # open every section: a closed one draws no fields
        at.session_state[f"{SECTION_KEY_PREFIX}{key}"] = True
    at.run()
    form_paths = {str(w.key).removeprefix("f.") for w in [*at.main.number_input, *at.main.selectbox, *at.main.checkbox] if w.key}
    assert form_paths and not form_paths & SIDEBAR_PATHS, form_paths & SIDEBAR_PATHS
    labels = {w.label for w in [*at.main.number_input, *at.main.selectbox, *at.main.checkbox]}
    assert {"Tensor parallel (TP)", "Max sequences in a batch (max-num-seqs)", "GPUs per node", "Price per GPU-hour ($)"} <= labels
    assert not {"Gpu", "Tp", "Gpus per node", "Max num seqs"} & labels
    assert {w.label for w in at.sidebar.selectbox} >= {"Quantization", "KV cache", "GPU", "Model"}
    assert {w.label for w in at.sidebar.slider} == {"Duty cycle", "Prefix hit rate", "Fleet size (nodes)"}
    assert set(FIELD_LABELS) >= form_paths - {"model.name"}, form_paths - set(FIELD_LABELS)  # the model picker has its own


def test_the_preset_picker_shows_short_names_and_the_full_title_under_it() -> None:
    at = new_app({"preset": "variation-a"})
    picker = at.sidebar.selectbox(key="nav.preset")
    assert picker.value == "variation-a" and {"Capstone", "Variation A", "10 QPS"} <= set(picker.options)  # options as shown
    assert max(len(option) for option in picker.options) <= 24, "the picker's box shows about 24 characters"
    assert "Variation A: half the budget (32 GPUs)" in [shown(c.value) for c in at.sidebar.caption]


def test_no_emoji_in_the_app_code() -> None:
    """Emoji render as boxes on machines without an emoji font (issue 16): icons come from Streamlit's Material font."""
    import re

    from apphelp import ROOT

    emoji = re.compile("[\U0001f000-\U0001faff\u2600-\u27bf\u2b00-\u2bff\ufe0f]")
    files = [ROOT / "app.py", *(ROOT / "pages").glob("*.py"), *(ROOT / "ui").glob("*.py")]
    found = {p.name: emoji.findall(p.read_text()) for p in files if emoji.search(p.read_text())}
    assert found == {}, found


def test_every_brief_field_has_a_label_with_its_unit() -> None:
    """A field added to the brief needs a label in ui.brief_form.FIELD_LABELS (else the form shows its code name), and
    a label carries the unit its field's description ends with ('... (ms).')."""
    import re

    from planner.brief import CustomModel
    from ui.brief_form import FIELD_LABELS, SECTIONS

    models = {key: model for key, _, model in SECTIONS} | {"model.custom": CustomModel}
    paths = {f"{key}.{name}" for key, model in models.items() for name in model.model_fields}
    assert paths == set(FIELD_LABELS), (paths - set(FIELD_LABELS), set(FIELD_LABELS) - paths)
    for path, label in FIELD_LABELS.items():
        section, name = path.rsplit(".", 1)
        unit = re.search(r"\((ms|tokens|GB|req/s|s|0-1|\$)\)\.?$", str(models[section].model_fields[name].description))
        assert unit is None or f"({unit.group(1)}" in label or f"{unit.group(1)})" in label, f"{path}: {label!r} lacks {unit.group(0)}"


def test_rejected_value_is_reported_beside_the_field_and_the_rest_kept() -> None:
    at = visit(new_app(), "app.py")
    at.number_input(key="f.deployment.spare_nodes").set_value(2).run()
    at.number_input(key="f.workload.input_tokens_p95").set_value(100.0).run()
    assert any("workload.input_tokens_p95" in shown(e.value) and "at least input_tokens_mean" in shown(e.value) for e in at.error)
    assert at.number_input(key="f.workload.input_tokens_p95").value == 6000  # the brief keeps its valid value
    assert at.number_input(key="f.deployment.spare_nodes").value == 2  # and the other changes
    assert at.query_params.get("deployment.spare_nodes") in (["2"], "2")


def test_custom_model_starts_from_the_catalog_numbers() -> None:
    at = visit(new_app(), "app.py")
    at.selectbox(key="f.model.name").set_value("custom").run()
    assert not at.error, [e.value for e in at.error]
    assert at.number_input(key="f.model.custom.layers").value == 80
    assert at.text_input(key="f.model.hf_repo").value == "meta-llama/Meta-Llama-3-70B-Instruct"  # the weights it loads stay
    at.number_input(key="f.model.custom.layers").set_value(40).run()
    assert figure(at, "Utilization at peak") > 0


def test_infeasible_design_is_a_verdict_not_a_traceback() -> None:
    at = new_app({"preset": "capstone", "model.name": "llama-3.1-405b", "deployment.weights": "bf16"})
    assert not at.exception
    assert any("cannot be computed" in e.value for e in at.error)
    assert any("Tensor parallel (TP)" in shown(m.value) for m in at.markdown)  # the field the problem names, in words


def test_back_to_the_preset_clears_the_changes() -> None:
    at = _capacity()
    at.slider(key="sb.hardware.nodes").set_value(6).run()
    at.sidebar.button[0].click().run()
    assert at.slider(key="sb.hardware.nodes").value == 8
    assert dict(at.query_params) in ({"preset": ["capstone"]}, {"preset": "capstone"})


def test_simulator_check_shows_simulated_beside_analytic() -> None:
    at = visit(new_app(), "pages/slo_budget.py")
    at.button(key="sim.run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    frame = next(t.value for t in at.table if "simulator" in t.value.columns)
    assert list(frame.columns) == ["figure", "plan", "simulator", "agreement"]
    assert "p95 TTFT" in set(frame["figure"]) and all(frame["simulator"].str.endswith(("ms", "req/s")))
    # the capstone's plan and simulator agree on the figures the tests gate (docs/crosscheck.md)
    gated = frame[frame["figure"].isin(["p95 TTFT", "p95 ITL"])]
    assert all("within" in a for a in gated["agreement"]), list(gated["agreement"])
    text = " ".join(m.value for m in at.markdown)
    assert "The plan meets the SLO; the simulator meets it" in text
    at.slider(key="sb.workload.duty_cycle").set_value(0.1).run()  # a new design: the old run is not shown for it
    assert all("simulator" not in t.value.columns for t in at.table)


def test_simulator_check_says_what_the_plan_judges_beyond_the_run() -> None:
    """Review s4 finding 11: at a duty cycle of 0.16 with 10% of prompts long the plan misses on the long-context pool
    while the simulated general-pool replica meets; the check says which replica it ran and what lies outside it."""
    query = {"preset": "capstone", "workload.duty_cycle": "0.16", "workload.long_context_share": "0.1"}
    at = visit(new_app(query), "pages/slo_budget.py")
    at.button(key="sim.run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    text = " ".join(shown(m.value) for m in at.markdown)
    assert "The plan misses the SLO; the simulator meets it" in text
    assert "The run checks one general-pool replica" in text
    assert "what the plan misses on lies outside this run: the long-context pool is 126.9% busy" in text


def test_simulator_check_of_an_offline_job_checks_its_pace() -> None:
    """Review s6 finding 2: an offline job is judged on its time, so the check runs a replica at its full batch (512
    closed-loop clients) and sets the simulated pace and the job's time beside the plan's, not only latency at a rate."""
    at = visit(new_app({"preset": "offline-batch"}), "pages/slo_budget.py")
    at.button(key="sim.run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    frame = next(t.value for t in at.table if "simulator" in t.value.columns)
    row = frame[frame["figure"] == "Output tokens/s a replica at the full batch (512)"]
    assert len(row) == 1 and row["simulator"].iloc[0].endswith("tok/s")
    text = " ".join(shown(m.value) for m in at.markdown)
    assert "The plan meets its deadline. The simulator runs one replica at its full batch: 512 closed-loop clients" in text
    assert "so the deadline is met" in text


def test_variation_side_by_side_and_load() -> None:
    at = visit(new_app(), "pages/variations.py")
    at.selectbox(key="var.chosen").set_value("variation-g").run()
    frame = next(t.value for t in at.table if "this variation" in t.value.columns)
    assert list(frame.columns) == ["capstone", "this variation", "difference", "change", ""]
    itl = frame.loc["p95 ITL (target 40 ms)"]  # an A100 decodes slower: the variation's ITL is worse, and the row says so
    assert itl["capstone"] != itl["this variation"] and itl[""] == "worse" and itl["change"].startswith("+")
    assert "p95 TTFT (target 500 ms)" in frame.index and "Cost per M output tokens" in frame.index and "GPUs" in frame.index
    assert at.info, "the variation's conclusion"
    assert not at.get("plotly_chart"), "no percentage bar chart: the table carries the differences"
    at.button(key="var.load.variation-g").click().run()
    assert at.sidebar.selectbox(key="nav.preset").value == "variation-g"
    assert at.selectbox(key="sb.hardware.gpu").value == "a100-80gb"


def test_fewer_nodes_cost_less_per_hour_and_per_token() -> None:
    at = visit(new_app(), "pages/cost.py")
    before = (figure(at, "Cost per hour"), figure(at, "Cost per M output tokens"))
    at.slider(key="sb.hardware.nodes").set_value(6).run()
    after = (figure(at, "Cost per hour"), figure(at, "Cost per M output tokens"))
    assert after[0] == pytest.approx(before[0] * 6 / 8) and after[1] < before[1]
    assert len(at.get("plotly_chart")) == 1


def test_failure_modes_follow_the_prefix_hit_rate() -> None:
    at = visit(new_app(), "pages/failure_modes.py")
    at.slider(key="sb.workload.prefix_hit_rate").set_value(0.2).run()
    assert not at.exception
    table_text = at.table[0].value.to_string()
    assert "Prefix hit rate drops" in table_text


def test_a_pp_designs_operating_point_names_its_streams():
    """RAG at PP=2: the operating point is one micro-batch stream's; the caption counts 12 streams of 6 replicas."""
    at = visit(new_app({"preset": "rag", "deployment.pp": "2"}), CAPACITY)
    captions = " ".join(shown(c.value) for c in at.caption)
    assert "One micro-batch stream of the general pool (12 micro-batch streams (6 replicas x PP=2) carry its share" in captions
    assert "12 replicas" not in captions


def test_the_hit_rate_slider_shows_the_rate_the_kv_tiers_derive() -> None:
    """Agent platform derives its hit rate from the KV tiers: the sidebar shows that rate (disabled), not the brief's
    stated one, and a link's stated rate is named as not used."""
    at = visit(new_app({"preset": "agent-platform", "workload.prefix_hit_rate": "0.2"}), "pages/failure_modes.py")
    assert not at.exception, [e.value for e in at.exception]
    slider = next(w for w in at.sidebar.slider if w.label.startswith("Prefix hit rate"))
    assert slider.label == "Prefix hit rate (derived from the KV tiers)" and slider.disabled
    assert slider.value == pytest.approx(0.855, abs=5e-4)
    captions = " ".join(shown(c.value) for c in at.sidebar.caption)
    assert "stated 20.0% is not used" in captions and "85.5%" in captions


def test_a_scenario_that_changes_nothing_reads_not_applicable() -> None:
    at = visit(new_app({"preset": "qps200-chat"}), "pages/failure_modes.py")
    assert not at.exception, [e.value for e in at.exception]
    table_text = at.table[0].value.to_string()
    assert table_text.count("not applicable") >= 2 and "0.0% -> 0.0%" not in table_text
    charted = [t["y"] for c in at.get("plotly_chart") for t in json.loads(c.proto.spec)["data"] if "y" in t]
    assert not any("Long-context burst" in str(y) for y in charted)


def test_the_failure_chart_of_a_tpot_brief_charts_tpot() -> None:
    """Review s4 #3: agent-platform's failure chart showed "p95 ITL (target 60 ms)" at up to 247% labelled "meets";
    its ITL target judges TPOT, so the chart and the table show p95 TPOT."""
    at = visit(new_app({"preset": "agent-platform"}), "pages/failure_modes.py")
    assert not at.exception, [e.value for e in at.exception]
    names = [t.get("name", "") for c in at.get("plotly_chart") for t in json.loads(c.proto.spec)["data"]]
    assert "p95 TPOT (target 60 ms)" in names and not any(n.startswith("p95 ITL") for n in names)
    assert "p95 TPOT" in at.table[0].value.columns and "p95 ITL" not in at.table[0].value.columns


def _charts(at: AppTest) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def _target_marks(spec: dict) -> list[str]:
    """A chart's target lines, as their legend entries and labels name them."""
    names = [t.get("name") or "" for t in spec["data"]] + [a.get("text") or "" for a in spec["layout"].get("annotations", [])]
    return [n for n in names if "target" in n]


@pytest.mark.parametrize(("preset", "deadline", "doubled"), [("offline-batch", "24 h", "16.6 h"), ("rl-rollout", "600 s", "299 s")])
def test_a_deadline_designs_failure_page_charts_its_time_against_the_deadline(preset: str, deadline: str, doubled: str) -> None:
    """Issue 16 item 3: an offline job's or a rollout's failure modes are charted by the figure that judges them, each
    scenario's time to finish as a share of the deadline (the deadline at 100%, the binding scenario marked, the time
    written in the deadline's unit), not by latency against targets that judge nothing; the table leads with it."""
    from planner import load_brief, plan

    design = plan(load_brief(preset))
    at = visit(new_app({"preset": preset}), "pages/failure_modes.py")
    judged, busy = _charts(at)
    assert judged["layout"]["title"]["text"] == "Time to finish against the deadline"
    assert f"deadline {deadline}" in [a["text"] for a in judged["layout"]["annotations"]]
    assert not _target_marks(judged) and not _target_marks(busy)
    assert not any("SLO" in (t.get("name") or "") for t in busy["data"])  # no SLO capacity: no latency target
    bars = judged["data"][0]
    charted = [m for m in design.failures if m.applicable]
    hatches = bars["marker"]["pattern"]["shape"]
    for row, m, x, hatch in zip(bars["y"], charted, bars["x"], hatches, strict=True):
        assert m.title in row and (("(binds)" in row) == (m.scenario == design.failure_summary.binding_scenario))
        if m.runs:  # its share of the deadline, in percent
            assert x == pytest.approx(m.objective_share * 100) and hatch == ""
        else:  # it never finishes: drawn to the chart's reach, hatched
            assert x == max(bars["x"]) >= 110 and hatch == "/"
    assert any(t.startswith(f" {doubled} (") for t in judged["data"][1]["text"])
    columns = list(at.table[0].value.columns)
    assert columns[:4] == ["what changes", "Deadline", "Time to finish", "Share of the deadline"]
    assert [c for c in columns if "p95" in c] == ["p95 TTFT (reference, no target)", "p95 ITL (reference, no target)"]
    assert columns.index("p95 TTFT (reference, no target)") > columns.index("Utilization at peak")
    doubled_row = at.table[0].value.loc["Traffic doubles"]
    share = f"{design.failures[[m.scenario.value for m in design.failures].index('traffic_doubles')].objective_share:.1%}"
    assert doubled_row["Time to finish"] == doubled and doubled_row["Share of the deadline"] == share
    info = " ".join(shown(i.value) for i in at.info)
    assert "no latency target" in info and f"against the {deadline} deadline" in info


def test_a_latency_designs_failure_page_keeps_its_latency_chart() -> None:
    at = visit(new_app({"preset": "capstone"}), "pages/failure_modes.py")
    judged, busy = _charts(at)
    assert judged["layout"]["title"]["text"] == "p95 latency against its target"
    assert _target_marks(judged) == ["p95 TTFT (target 500 ms)", "p95 ITL (target 40 ms)", "target"]
    assert busy["data"][0]["name"] == "general pool: load / SLO capacity"
    assert list(at.table[0].value.columns)[:4] == ["what changes", "SLO", "p95 TTFT", "p95 ITL"]


@pytest.mark.parametrize("preset", ["offline-batch", "rl-rollout", "capstone"])
def test_the_slo_budget_draws_targets_only_where_they_judge(preset: str) -> None:
    """Issue 16 item 3: the waterfalls and the trade-off charts draw no target line or 'target' legend for a design its
    deadline judges (its latency is for reference); a latency design's keep every target."""
    at = visit(new_app({"preset": preset}), "pages/slo_budget.py")
    charts = _charts(at)
    assert [c["layout"]["title"]["text"] for c in charts][:3] == [
        "Time to first token (ms)",
        "Inter-token latency (ITL, ms)",
        "Prefill chunk (max-num-batched-tokens)",
    ]
    marks = [_target_marks(c) for c in charts[:3]]
    if preset == "capstone":
        assert marks == [["target 500 ms"], ["target 40 ms"], ["target 500 ms", "target 40 ms"]]
        assert len(charts[1]["layout"]["shapes"]) == 2  # the p95 and the target, over the total's row
    else:
        assert marks == [[], [], []]
        assert len(charts[1]["layout"]["shapes"]) == 1  # the p95 alone


@pytest.mark.parametrize(
    ("preset", "time", "share"), [("offline-batch", "8.28 h", "34.5% of 24 h"), ("rl-rollout", "244 s", "40.7% of 600 s")]
)
def test_a_jobs_time_tile_reads_in_its_deadlines_unit_with_its_share_under_it(preset: str, time: str, share: str) -> None:
    """The objective's tiles write a time as the registry's duration: in the deadline's unit (a job's 29,821 s read
    8.28 h), its share of the deadline on the line under it, so the tile is never cut ('244 s (40.7% of 60…')."""
    at = visit(new_app({"preset": preset}), "pages/slo_budget.py")
    bar, tile = [m for m in at.metric if m.label == "Time to finish"]  # the verdict bar's, the objective section's
    assert tile.value == time and tile.delta == share
    assert bar.value == time and bar.delta.startswith("deadline ")


def test_a_rejection_names_the_rule_it_breaks_and_goes_with_the_next_change() -> None:
    """A mean input above its p95 is refused at the mean's field, saying which field's rule it breaks (not as if the
    p95 had been typed); the field keeps its valid value, and the message goes with the user's next change."""
    at = visit(new_app(), "app.py")
    at.number_input(key="f.workload.input_tokens_mean").set_value(200_000.0).run()
    errors = [shown(e.value) for e in at.error]
    assert any(e.startswith("200000 not accepted") and "with it, workload.input_tokens_p95 would break its rule" in e for e in errors), (
        errors
    )
    assert at.number_input(key="f.workload.input_tokens_mean").value == 1200
    at.number_input(key="f.deployment.spare_nodes").set_value(2).run()
    assert not any("not accepted" in shown(e.value) for e in at.error), [e.value for e in at.error]


def test_switching_variation_g_to_fp8_weights_plans_prefill_at_the_bf16_peak() -> None:
    """Variation G states the A100's INT8 peak; the sidebar's Quantization set to FP8 runs the weights weight-only
    (W8A16): the verdict turns to the one planned at the BF16 peak, and a caption says the INT8 peak is not used."""
    at = visit(new_app({"preset": "variation-g"}), CAPACITY)
    assert not at.exception, [e.value for e in at.exception]
    assert "not used" not in " ".join(shown(c.value) for c in at.sidebar.caption)
    at.sidebar.selectbox(key="sb.deployment.weights").set_value("fp8").run()
    assert not at.exception, [e.value for e in at.exception]
    captions = " ".join(shown(c.value) for c in at.sidebar.caption)
    assert "The brief's INT8 compute peak is not used: these weights compute at the BF16 peak" in captions
    headlines = " ".join(m.value for m in at.markdown)
    assert "Not feasible as briefed" in headlines and "Meets the SLO" not in headlines


def test_the_brief_page_says_which_stated_fields_the_design_does_not_use() -> None:
    """chat-disaggregated states a p99 SLO percentile the plan's closed form does not read (it judges p95): the Brief
    page says so under the verdict, by the field's name and the reason, where only the CLI, the JSON and the sidebar's
    compute-peak caption said it; a brief that states nothing unused shows no such block."""
    at = new_app({"preset": "chat-disaggregated"})
    unused = [shown(m.value) for m in at.markdown if "Stated but not used" in m.value]
    assert len(unused) == 1 and "SLO percentile" in unused[0] and "p95" in unused[0]
    assert not [m for m in new_app({"preset": "capstone"}).markdown if "Stated but not used" in m.value]
