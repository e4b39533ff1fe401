"""The figure registry (planner.figures): one name and one format per figure; numbers as words, money in one rule,
unbounded figures with their cause; the comparison of two designs; and the data behind the SLO and failure charts."""

from __future__ import annotations

import math

import pytest

from planner import load_brief, plan, preset_names
from planner.breakdowns import ttft_paths
from planner.cli import _TEXT_FIGURES, _plan_text, design_json
from planner.compare import COMPARE_FIGURES, Direction, compare
from planner.errors import BriefError
from planner.figures import REGISTRY, FigureSpec, Format, arithmetic, cause_of, field_label, format_value, label, resolve, show, spec
from planner.fmt import num, pct, usd
from planner.naming import design_name
from planner.practice import Kind, practice_steps
from planner.uncertainty import Band
from planner.variations import DIFF_FIGURES
from ui.charts import ITL_RANGE_ROW, TTFT_RANGE_ROW, itl_waterfall_chart, tradeoff_chart, ttft_waterfall_chart
from ui.charts_stress import _TEXT_ROOM, failure_latency_chart, failure_utilization_chart, scenario_labels


def _band(low: float, high: float) -> Band:
    return Band(figure="test", value=(low + high) / 2, low=low, high=high, kind="ttft")


pytestmark = pytest.mark.unit

PRESETS = [name for name in preset_names() if name != "variation-f"]  # variation F does not fit its fleet: no plan
UNSTEADY = {"deployment.max_num_seqs": 20}  # the capstone with every batch slot taken: no steady state


# --- the number rules --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (2.5, "$2.50"),
        (4.4817, "$4.48"),
        (2.8, "$2.80"),
        (45.2, "$45.20"),
        (160, "$160"),
        (1_401_600, "$1,401,600"),
        (2.1e9, "$2.1 billion"),
    ],
)
def test_money_has_one_rule(value: float, text: str) -> None:
    """Cents below $100, whole dollars above, words from a billion: never "$2.8" beside "$2.29"."""
    assert usd(value) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [(3.127e11, "313 billion"), (1.072e12, "1.07 trillion"), (999.6e9, "1 trillion"), (70.6e9, "70.6 billion"), (19_444.4, "19,444")],
)
def test_large_numbers_read_as_words(value: float, text: str) -> None:
    assert num(value) == text


def test_no_magnitude_prints_scientific_notation() -> None:
    for exponent in range(-80, 22):
        for mantissa in (1.0, 3.127, 9.9996):
            value = mantissa * 10.0**exponent
            for text in (num(value), num(-value), usd(value), pct(value)):
                assert "e+" not in text and "e-" not in text, (value, text)


def test_an_infinite_figure_reads_as_words_with_its_cause() -> None:
    design = plan(load_brief("capstone").with_changes(UNSTEADY))
    assert show(design, "slo.ttft_p95_ms") == "unbounded: batch slots full (max-num-seqs)"
    assert show(design, "slo.ttft_p95_ms", short=True) == "unbounded"
    assert cause_of(design) == "batch slots full (max-num-seqs)"
    entry = spec("slo.ttft_p95_ms")
    assert format_value(entry, math.nan) == "n/a" and format_value(entry, math.inf, cause="x") == "unbounded: x"


def test_a_figure_can_carry_a_band() -> None:
    """The plan's uncertainty (low and high of a stated coverage) prints after the value, in the figure's format."""
    assert format_value(spec("slo.ttft_p95_ms"), 84.2, band=_band(70.1, 96.3)) == "84.2 ms (70.1 to 96.3 ms)"
    assert format_value(spec("capacity.utilization"), 0.277, band=_band(0.25, 0.31)) == "27.7% (25.0% to 31.0%)"


def test_yes_no_figures_read_as_their_words() -> None:
    design = plan(load_brief("capstone"))
    assert show(design, "failure_summary.n_plus_one_ok") == "holds"
    assert show(design, "verdict.availability_ok") == "N+1 holds"


# --- the registry covers what the tool shows ----------------------------------------------------------------


def _concrete(path: str) -> str:
    return path.replace("*", "0")


def test_every_registered_figure_is_a_path_of_the_plans_json() -> None:
    """Each entry's path (with list index 0), arithmetic and target resolve in `plan --json` of a preset that has it;
    the search's figures are keys of `search --json`."""
    designs = {
        name: design_json(plan(load_brief(name)))
        for name in (
            "capstone",
            "variation-a",
            "qps10-tp4",
            "agent-platform",
            "multimodal",
            "rl-rollout",
            "lora-platform",
            "chat-disaggregated",
        )
    }
    from planner.search import SearchResult

    for entry in REGISTRY.values():
        if entry.path.startswith("search."):  # a figure of `search --json`, not of the plan
            assert entry.path.removeprefix("search.") in SearchResult.model_fields, entry.path
            continue
        path = _concrete(entry.path)
        holders = [data for data in designs.values() if _resolves(data, path)]
        assert holders, f"{entry.path}: not in the JSON of any preset"
        for where in (entry.arithmetic, entry.target):
            if where is not None:
                assert any(_resolves(data, where) for data in holders), f"{entry.path}: {where} missing"


def _resolves(data: object, path: str) -> bool:
    try:
        resolve(data, path)
    except (KeyError, IndexError, AttributeError, TypeError):
        return False
    return True


def test_every_figure_list_of_the_tool_is_registered() -> None:
    """The variations diff, the comparison, the practice and the CLI's text all name registered figures."""
    practised = [q.figure for s in practice_steps(plan(load_brief("capstone"))) for q in s.questions if q.figure and q.step != "variation"]
    for path in (*DIFF_FIGURES, *COMPARE_FIGURES, *practised, *_TEXT_FIGURES):
        assert spec(path).label, path
    with pytest.raises(KeyError, match="no figure registered"):
        spec("capacity.no_such_figure")


def test_list_entries_share_their_pattern() -> None:
    assert spec("failures.3.ttft_p95_ms") is REGISTRY["failures.*.ttft_p95_ms"]


def test_a_brief_field_reads_in_words() -> None:
    assert field_label("deployment.max_num_seqs") == "max-num-seqs"
    assert field_label("deployment.tp") == "Tensor parallel (TP)"
    assert field_label("workload.input_tokens_mean") == "Workload: input tokens mean"


def test_the_cli_text_names_figures_as_the_registry_does() -> None:
    text = _plan_text(plan(load_brief("capstone")), design_name(load_brief("capstone"), load_brief("capstone")))
    assert "Cost per M output tokens" in text and "$4.48" in text and "p95 TTFT" in text and "(target 500 ms)" in text
    stuck = load_brief("capstone").with_changes(UNSTEADY)
    unsteady = _plan_text(plan(stuck), design_name(stuck, load_brief("capstone")))
    assert "unbounded: batch slots full" in unsteady and "inf" not in unsteady.split()


def test_practice_answers_are_written_as_the_registry_writes_them() -> None:
    design = plan(load_brief("capstone"))
    numbers = {q.id: q for s in practice_steps(design) for q in s.questions if q.kind is Kind.number}
    assert numbers["cost.per_million"].answer == show(design, "cost.usd_per_million_output_tokens") == "$4.48"
    assert numbers["utilization.peak"].answer == "27.7%" and numbers["utilization.peak"].unit == "%"


def test_the_document_names_variation_differences_by_label() -> None:
    from report.markdown import render_markdown

    text = render_markdown(plan(load_brief("variation-a")))
    assert "| Decode step at the sizing batch (real) |" in text and "capacity.decode_step_ms" not in text


# --- two designs side by side ----------------------------------------------------------------------------------


def test_compare_gives_both_values_the_change_and_its_direction() -> None:
    capstone, half = plan(load_brief("capstone")), plan(load_brief("variation-a"))
    rows = {r.path: r for r in compare(capstone, half)}
    gpus, cost, ttft = rows["cost.gpus"], rows["cost.usd_per_hour"], rows["slo.ttft_p95_ms"]
    assert (gpus.left, gpus.right, gpus.absolute, gpus.relative) == ("64", "32", "-32", "-50%")
    assert cost.direction is Direction.better and cost.absolute == "-$80.00"
    assert (
        ttft.direction is Direction.worse
        and ttft.left == show(capstone, "slo.ttft_p95_ms")
        and ttft.target == "500 ms"
        and ttft.absolute.startswith("+")
    )
    assert rows["capacity.utilization"].absolute.endswith(" pts") and rows["capacity.utilization"].relative == ""
    assert rows["verdict.meets_slo"].direction is Direction.same
    back = {r.path: r for r in compare(half, capstone)}
    assert back["cost.usd_per_hour"].direction is Direction.worse and back["cost.usd_per_hour"].absolute == "+$80.00"


def test_compare_judges_no_per_replica_figure_across_replica_sizes() -> None:
    """TP 8 -> 4: a replica's SLO capacity halves while the fleet has twice the replicas; the row says the replicas
    differ and judges neither better nor worse (it read '-56% worse'). Same-size replicas are judged as before."""
    capstone = plan(load_brief("capstone"))
    half_tp = plan(load_brief("capstone").with_changes({"deployment.tp": 4}))
    rows = {r.path: r for r in compare(capstone, half_tp)}
    row, step = rows["operating_point.capacity_rate_per_s"], rows["operating_point.decode_step_ms"]
    assert row.direction is Direction.changed and row.label.endswith("(a replica of 8 vs 4 GPUs)") and row.relative.startswith("-")
    assert step.direction is Direction.changed and step.label.endswith("(a replica of 8 vs 4 GPUs)")  # it read '+96% worse'
    busier = plan(load_brief("capstone").with_changes({"workload.prefix_hit_rate": 0.2}))
    same_size = {r.path: r for r in compare(capstone, busier)}["operating_point.capacity_rate_per_s"]
    assert same_size.direction is Direction.worse and same_size.label == "Capacity under the SLO"


def test_compare_says_unbounded_with_its_cause_and_judges_the_change() -> None:
    capstone = plan(load_brief("capstone"))
    stuck = plan(load_brief("capstone").with_changes(UNSTEADY))
    rows = {r.path: r for r in compare(capstone, stuck)}
    assert rows["slo.ttft_p95_ms"].right.startswith("unbounded: batch slots full")
    assert rows["slo.ttft_p95_ms"].direction is Direction.worse and rows["slo.ttft_p95_ms"].absolute == ""
    assert rows["verdict.meets_slo"].direction is Direction.worse
    stricter = plan(load_brief("capstone").with_changes({"slo.ttft_p95_ms": 200}))
    ttft = {r.path: r for r in compare(capstone, stricter)}["slo.ttft_p95_ms"]
    assert (
        ttft.target == "" and ttft.left == f"{show(capstone, 'slo.ttft_p95_ms')} (target 500 ms)" and ttft.right.endswith("(target 200 ms)")
    )


def test_a_large_change_reads_as_a_ratio() -> None:
    entry = FigureSpec(path="x", label="x", unit="ms", format=Format.number)
    from planner.compare import _relative, _signed

    assert _relative(1.0, 1540.0) == "x1,540" and _relative(10.0, 10.4) == "+4.0%" and _signed(entry, -0.281) == "-0.281 ms"


# --- the data behind the charts -----------------------------------------------------------------------------


@pytest.mark.parametrize("preset", PRESETS)
def test_the_ttft_waterfall_adds_up_to_the_p95_shown_beside_it(preset: str) -> None:
    design = plan(load_brief(preset))
    slo = design.slo
    dis = design.disaggregation
    chart = ttft_waterfall_chart(ttft_paths(design.brief.latency, slo, dis), slo.ttft_target_ms)  # as the SLO page calls it
    p95, mean, target = chart.data
    assert list(target.x) == [slo.ttft_target_ms] * 2 and target.name.startswith("target")
    assert p95.name.startswith("p95 path") and mean.name.startswith("mean path")
    for trace, total in ((p95, slo.ttft_p95_ms), (mean, slo.ttft_mean_ms)):
        parts = [x for x, m in zip(trace.x, trace.measure, strict=True) if m == "relative"]
        assert trace.measure[-1] == "total" and trace.x[-1] == pytest.approx(total)
        assert sum(parts) == pytest.approx(total, abs=1.0), (preset, trace.name)
        assert all(x >= 0 for x in parts), (preset, trace.name, parts)
    if dis is not None:  # the prefill pool's wait at its p95, and the KV transfer's own bar
        bars = dict(zip(p95.y, p95.x, strict=True))
        assert (bars["prefill-pool wait"], bars["KV transfer"]) == pytest.approx((dis.prefill_wait_ms_p95, dis.transfer_ms_p95))
        return
    queue = dict(zip(p95.y, p95.x, strict=True))["queue wait"]
    assert queue == pytest.approx(slo.point.queue_wait_p95_ms)  # the queue at its p95, not its mean


@pytest.mark.parametrize("preset", PRESETS)
def test_the_brief_marker_sits_at_the_briefs_value(preset: str) -> None:
    """On the log axis too: a trace at the brief's own value (a shape there took the exponent: x ~3 for 2,048)."""
    design = plan(load_brief(preset))
    slo, dep = design.slo, design.brief.deployment
    charts = (
        (
            tradeoff_chart("t", "tokens", slo.tradeoff_batched_tokens, dep.max_num_batched_tokens, 500, 40, log_x=True),
            dep.max_num_batched_tokens,
        ),
        (tradeoff_chart("s", "sequences", slo.tradeoff_max_num_seqs, dep.max_num_seqs, 500, 40), dep.max_num_seqs),
    )
    for chart, value in charts:
        marks = [t for t in chart.data if (t.name or "").startswith("the brief")]
        assert marks and all(list(t.x) == [value] * len(t.x) for t in marks), (preset, value)
        if chart.layout.xaxis.type == "log":
            assert value in chart.layout.xaxis.tickvals
            ticks = dict(zip(chart.layout.xaxis.tickvals, chart.layout.xaxis.ticktext, strict=True))
            assert all(text == num(v) for v, text in ticks.items())  # round numbers, written as everywhere else


def test_failure_charts_draw_the_figure_that_fails() -> None:
    """With 14% long-context traffic the capstone's failing scenarios fail on the long-context pool: that pool's bar
    passes 100%, the latencies do not; an unbounded latency is drawn to the chart's reach and labelled in words."""
    design = plan(load_brief("capstone").with_changes({"workload.long_context_share": 0.14}))
    busy = failure_utilization_chart(design.failures, design.failure_summary.binding_scenario, long_context_pool=True)
    pools = {t.name: t for t in busy.data}
    long_context = pools["long-context pool busy"]
    failing = [(f, x) for f, x in zip(design.failures, long_context.x, strict=True) if not f.ok]
    assert failing and all(x > 100 for _, x in failing)
    stuck = plan(load_brief("capstone").with_changes(UNSTEADY))
    latency = failure_latency_chart(stuck.failures, stuck.failure_summary.binding_scenario, 500, 40)
    ttft = latency.data[0]
    assert "unbounded" in ttft.text and max(ttft.x) == pytest.approx(latency.layout.xaxis.range[1] / _TEXT_ROOM)


def test_failure_values_are_written_past_their_whiskers() -> None:
    """Review s4 finding 15: a bar's value sat where its whisker ran through it; now each is written after the end of
    its bar and its whisker, on the bar's own row, inside the axis."""
    design = plan(load_brief("agent-platform"))
    slo = design.slo
    chart = failure_latency_chart(
        design.failures, design.failure_summary.binding_scenario, slo.ttft_target_ms, slo.itl_target_ms, design.uncertainty
    )
    bars = [t for t in chart.data if t.type == "bar"]
    texts = [t for t in chart.data if t.type == "scatter" and t.mode == "text"]
    assert len(bars) == len(texts) == 2
    for bar, text in zip(bars, texts, strict=True):
        assert list(text.y) == list(bar.y) and bar.textposition == "none"
        for x, plus, at in zip(bar.x, bar.error_x.array, text.x, strict=True):
            assert at == pytest.approx(x + plus) and at < chart.layout.xaxis.range[1]
    assert list(chart.layout.yaxis.ticktext) == scenario_labels(design.failures, design.failure_summary.binding_scenario)


# --- the error bands on every chart of a prediction ------------------------------------------------------------


def test_the_range_of_any_latency_is_the_verdict_bars_basis() -> None:
    """A curve's or a scenario's range is the plan's own band for the same value: the same spread and coverage."""
    design = plan(load_brief("capstone"))
    u = design.uncertainty
    for path, kind in (("slo.ttft_p95_ms", "ttft"), ("slo.itl_p95_ms", "itl")):
        band = u.band(path)
        assert band is not None and u.range_of(band.value, kind) == pytest.approx((band.low, band.high))
    low, high = u.range_of(100.0, "itl")
    assert low < high and high / low > 1.2  # a spread, not a point
    assert u.range_of(math.inf, "ttft") == (math.inf, math.inf)
    assert "80% range" in u.legend


def test_the_trade_off_curves_carry_a_shaded_range_around_each_p95() -> None:
    design = plan(load_brief("capstone"))
    slo, dep, u = design.slo, design.brief.deployment, design.uncertainty
    chart = tradeoff_chart("s", "sequences", slo.tradeoff_max_num_seqs, dep.max_num_seqs, 500, 40, uncertainty=u)
    shades = [t for t in chart.data if t.fill == "toself"]
    assert [t.yaxis for t in shades] == ["y", "y2"] and shades[0].name == u.legend
    finite = [p for p in slo.tradeoff_max_num_seqs if math.isfinite(p.ttft_p95_ms)]
    top = shades[0].y[: len(finite)]  # along the highs, then back along the lows
    bottom = shades[0].y[len(finite) :][::-1]
    for p, high, low in zip(finite, top, bottom, strict=True):
        assert low < high and (low, high) == pytest.approx(u.range_of(p.ttft_p95_ms, "ttft"))  # the held-out skew: not centred
    plain = tradeoff_chart("s", "sequences", slo.tradeoff_max_num_seqs, dep.max_num_seqs, 500, 40)
    assert not [t for t in plain.data if t.fill == "toself"]


def test_each_bounded_scenario_bar_carries_its_range_and_an_unbounded_one_none() -> None:
    design = plan(load_brief("capstone"))
    u, slo = design.uncertainty, design.slo
    chart = failure_latency_chart(design.failures, design.failure_summary.binding_scenario, slo.ttft_target_ms, slo.itl_target_ms, u)
    ttft = chart.data[0]
    for f, x, plus, minus in zip(design.failures, ttft.x, ttft.error_x.array, ttft.error_x.arrayminus, strict=True):
        low, high = u.range_of(f.ttft_p95_ms, "ttft")
        assert (x - minus, x + plus) == pytest.approx((low / slo.ttft_target_ms * 100, high / slo.ttft_target_ms * 100)), f.scenario
    assert any((t.name or "").startswith(u.legend) for t in chart.data)  # the legend says what the whiskers are
    stuck = plan(load_brief("capstone").with_changes(UNSTEADY))
    latency = failure_latency_chart(stuck.failures, stuck.failure_summary.binding_scenario, 500, 40, stuck.uncertainty)
    unbounded = [i for i, f in enumerate(stuck.failures) if not math.isfinite(f.ttft_p95_ms)]
    assert unbounded and all(latency.data[0].error_x.array[i] == 0 == latency.data[0].error_x.arrayminus[i] for i in unbounded)


def test_the_itl_waterfall_total_carries_its_range() -> None:
    design = plan(load_brief("capstone"))
    slo, u = design.slo, design.uncertainty
    gap = sum(s.ms for s in slo.itl_waterfall)
    low, high = u.range_of(gap, "itl")
    chart = itl_waterfall_chart(slo.itl_waterfall, slo.judged_itl_p95_ms, slo.itl_target_ms, "ITL", (low, high, u.legend))
    band = next(t for t in chart.data if t.name == u.legend)
    assert list(band.y) == [ITL_RANGE_ROW] * 2 and list(band.x) == pytest.approx([low, high])  # its own row: clear of the total's value
    assert any((t.name or "").startswith("p95 ITL") for t in chart.data)  # named in the legend ...
    # ... drawn beneath the bars, over the total's and the range's rows (serial numbers 3 and 4) only: clear of the parts' values
    below = [(shape.x0, shape.layer, shape.y0, shape.y1) for shape in chart.layout.shapes]
    assert below == [(slo.judged_itl_p95_ms, "below", 2.5, 4.5), (slo.itl_target_ms, "below", 2.5, 4.5)]
    ttft = ttft_waterfall_chart(ttft_paths(design.brief.latency, slo, None), slo.ttft_target_ms, (1.0, 2.0, u.legend))
    assert list(next(t for t in ttft.data if t.name == u.legend).y) == [TTFT_RANGE_ROW] * 2
    assert chart.layout.xaxis.range[1] > high


@pytest.mark.usefixtures("ttft_range_above_the_plan")
def test_compare_gives_each_predicted_figure_its_range() -> None:
    capstone, half = plan(load_brief("capstone")), plan(load_brief("variation-a"))
    rows = {r.path: r for r in compare(capstone, half)}
    low, high = capstone.uncertainty.range_of(capstone.slo.ttft_p95_ms, "ttft")
    assert rows["slo.ttft_p95_ms"].left_range == f"{num(low)} to {num(high, 'ms')}: the plan's 85.6 ms under-predicts it by 0.8% to 57.8%"
    assert rows["operating_point.capacity_rate_per_s"].right_range.endswith("req/s")
    assert rows["cost.gpus"].left_range == "" and rows["verdict.meets_slo"].right_range == ""


def test_the_fleet_size_chart_ticks_whole_nodes() -> None:
    """A 2-node brief's fleet chart spans 1-4 nodes: Plotly's own ticks fell between whole nodes and ',d' printed
    1, 2, 2, 3, 4, 4 (seen in the browser); the step is now a whole number of nodes."""
    from planner.fleet import cost_vs_fleet
    from ui.charts_stress import cost_vs_fleet_chart

    brief = load_brief("capstone").with_changes({"hardware.nodes": 2})
    points = cost_vs_fleet(brief)
    axis = cost_vs_fleet_chart(points, 2).layout.xaxis
    assert axis.tickmode == "linear" and axis.dtick == 1
    wide = cost_vs_fleet(load_brief("capstone").with_changes({"hardware.nodes": 200}))
    step = cost_vs_fleet_chart(wide, 200).layout.xaxis.dtick
    assert step == int(step) and (max(p.nodes for p in wide) - min(p.nodes for p in wide)) / step <= 8


@pytest.mark.parametrize("preset", ["moe-deepseek", "chat-disaggregated", "rag"])
def test_the_sizing_kv_share_is_named_and_worked_as_what_it_is(preset: str) -> None:
    """capacity.kv_fraction is the sizing batch over a replica's KV capacity in sequences (moe 875 / 3,326 = 26.3%):
    named so and worked so. It was labelled "KV in use at peak" beside a working of the sequences a replica holds, while
    the KV in use at the operating point is 42.4% (451 of 1,064 GB)."""
    design = plan(load_brief(preset))
    cap, op = design.capacity, design.operating_point
    assert "sizing" in label("capacity.kv_fraction") and label("capacity.kv_fraction") != label("operating_point.kv_in_use_gb")
    words = arithmetic(design, "capacity.kv_fraction")
    assert words.startswith(f"{num(cap.batch_per_replica)} sequences generating per replica at the sizing batch")
    assert f"{num(design.memory.max_sequences_per_replica)} sequences a replica's KV cache holds = {pct(cap.kv_fraction)}" in words
    assert f"({pct(op.kv_in_use_gb / op.kv_capacity_gb)})" in arithmetic(design, "operating_point.kv_in_use_gb")


@pytest.mark.parametrize("preset", preset_names())
def test_the_general_pool_replicas_working_counts_replicas(preset: str) -> None:
    """The replica count's working is the nodes the other pools leave in whole replicas, ending at the count; it was the
    rate per replica's (chat-disaggregated: '... = 50 req/s a decode replica' under 'General-pool replicas 16')."""
    design = plan(load_brief(preset))
    words = arithmetic(design, "pools.general_replicas")
    count = design.pools.general_replicas
    assert "req/s" not in words
    assert words.endswith(f"= {count} replica{'' if count == 1 else 's'}") or words.endswith(f"= {design.shape.units_text})")


def test_every_field_a_verdict_names_has_a_human_label():
    """A problem's or an ignored field's brief path is shown by its registry label, never its code words ('Slo:
    headroom' under chat-disaggregated's stated headroom): every field the presets' verdicts and a few edits name has
    a registry entry."""
    from planner.figures import REGISTRY

    edits = ({}, {"hardware.nodes": 3}, {"workload.duty_cycle": 1.0}, {"deployment.max_num_seqs": 8})
    named = set()
    for name in preset_names():
        for edit in edits:
            try:
                design = plan(load_brief(name).with_changes(edit))
            except BriefError:
                continue
            named |= {p.field for p in (*design.verdict.problems, *design.ignored_fields)}
    assert named and not {f for f in named if f"brief.{f}" not in REGISTRY}


def test_compare_judges_no_per_replica_figure_across_a_decode_and_a_general_pool_replica() -> None:
    """chat-disaggregated against itself aggregated: 'Capacity under the SLO 62.3 -> 17.3 req/s, -72%, worse' set a decode
    replica (no prompts) against a general-pool one, while the aggregated fleet carries more (16 x 17.3 > 4 x 62.3) and
    its load / capacity reads better. The row names the two replicas and judges neither."""
    disaggregated = plan(load_brief("chat-disaggregated"))
    aggregated = plan(load_brief("chat-disaggregated").with_changes({"disaggregation.enabled": False}))
    rows = {r.path: r for r in compare(disaggregated, aggregated)}
    for path in ("operating_point.capacity_rate_per_s", "operating_point.decode_step_ms"):
        assert rows[path].direction is Direction.changed, path
        assert rows[path].label.endswith("(a decode-pool vs a general-pool replica)"), rows[path].label
    assert rows["operating_point.load_vs_capacity"].direction is Direction.better
