"""Failure modes: what each stress does to latency and load (an offline job's or a rollout's: to its time against the
deadline), which one binds, and the critical dependencies."""

import streamlit as st

from planner.figures import deadline_unit, format_value, label, show, spec
from ui.charts_stress import failure_deadline_chart, failure_latency_chart, failure_utilization_chart
from ui.show import Fig, chart, fig, figure_row, md, text_table
from ui.sidebar import page_setup
from ui.survival import survival_section

design = page_setup("Failure modes")
if design is None:
    st.stop()
summary, failures = design.failure_summary, design.failures
binding = next(f for f in failures if f.scenario == summary.binding_scenario)
long_context_pool = design.pools.long_context_nodes > 0  # the pool the fleet holds (none when too small for it)
deadline = design.objective is not None  # an offline job or a rollout: its deadline judges it and every scenario
if design.objective is not None:
    st.info(
        md(
            f"This design is judged on its deadline, not on latency: {design.objective.arithmetic['one_node_lost']}."
            f" Each scenario below is re-planned and judged on its time to finish against the {show(design, 'objective.deadline_s')}"
            " deadline. It has no latency target: the p95 latency columns at the end of the table are for reference only."
        )
    )

figure_row(
    [
        Fig(label("failure_summary.binding_scenario"), binding.title, summary.binding_reason, text=True),
        fig(design, "failure_summary.n_plus_one_ok", help=summary.availability_note),
        fig(
            design,
            "failure_summary.scenarios_within_slo",
            help=f"of {summary.scenarios_applicable} scenarios that apply to this brief"
            + (
                f" ({len(failures) - summary.scenarios_applicable} change nothing here: not counted)"
                if summary.scenarios_applicable < len(failures)
                else ""
            )
            + (", each judged on the deadline" if deadline else ""),
        ),
    ],
    arithmetic_title="Show why",
)
(st.warning if not binding.ok else st.info)(f"Binds: {binding.title}. {summary.binding_reason}")

metric = design.slo.itl_metric.value.upper()  # the gap figure the ITL target judges: ITL or TPOT
judged_path = "tpot_p95_ms" if metric == "TPOT" else "itl_p95_ms"
charted = [f for f in failures if f.applicable]  # a scenario that changes nothing would chart the baseline as its result
left, right = st.columns(2)
with left:
    if deadline:  # the figure that judges each scenario: its time to finish against the deadline
        unit, entry = deadline_unit(design), spec("failures.*.objective_time_s")  # each time in the deadline's unit
        times = [format_value(entry, f.objective_time_s, duration_unit=unit) for f in charted]
        judged_chart = failure_deadline_chart(charted, summary.binding_scenario, times, show(design, "objective.deadline_s"))
    else:
        judged_chart = failure_latency_chart(
            charted, summary.binding_scenario, design.slo.ttft_target_ms, design.slo.itl_target_ms, design.uncertainty, metric
        )
    chart(judged_chart, key="chart.failures")
with right:
    pool_name = "prefill + decode pools" if design.disaggregation is not None else "general pool"
    busy_chart = failure_utilization_chart(charted, summary.binding_scenario, long_context_pool, pool_name)
    chart(busy_chart, key="chart.failures_busy")


def _row(i: int) -> dict[str, str]:
    f, at = failures[i], f"failures.{i}"
    cells = {"scenario": ("▶ " if f.scenario == summary.binding_scenario else "") + f.title, "what changes": f.change}
    if deadline:  # what judges it first (its time against the deadline), latency last, with no target
        paths = ["ok", "objective_time_s", "objective_share", *(["long_context_utilization"] if long_context_pool else [])]
        paths += ["utilization", "utilization_no_prefix_cache", "utilization_linear_no_prefix_cache", "ttft_p95_ms", judged_path]
    else:
        paths = ["ok", "ttft_p95_ms", judged_path, "load_vs_capacity"]
        paths += ["long_context_utilization"] if long_context_pool else []
        paths += ["utilization", "utilization_no_prefix_cache", "utilization_linear_no_prefix_cache"]
    names = {key: _column(at, key) for key in paths}
    if not f.applicable:  # its figures would be the baseline's: say it does not apply instead
        cells |= {names[key]: "not applicable" if key == "ok" else "–" for key in paths}
    elif not f.runs:  # the changed brief cannot be computed at all: no figure, the reason in words
        cells |= {names[key]: "—" for key in paths} | {names["ok"]: "cannot run at all"}
    else:
        cells |= {names[key]: show(design, f"{at}.{key}", short=True) for key in paths}
    return cells | {"note": f.note}


def _column(at: str, key: str) -> str:
    """A column's heading: the registry's label; a deadline design's verdict column names the deadline, and its latency
    columns say they have no target."""
    if deadline and key == "ok":
        return "Deadline"
    if deadline and key.endswith("_p95_ms"):
        return f"{label(f'{at}.{key}')} (reference, no target)"
    return label(f"{at}.{key}")


text_table([_row(i) for i in range(len(failures))])
st.caption(f"Load scaling: {md(summary.load_scaling)}")
if design.disaggregation is not None:
    st.caption(
        "Disaggregated: a lost node is lost from the prefill or the decode pool; each is re-planned and the row is the worse,"
        " naming the pool that binds. Load / capacity is the two pools' (the rate where the binding pool reaches its target);"
        " the utilization columns stay aggregated (the fleet's sizing arithmetic)."
    )

survival_section(design)

st.header("Critical dependencies")
for dep in design.config.dependencies:
    st.markdown(f"- **{md(dep.what)}**: breaks if {md(dep.breaks_if)}")
