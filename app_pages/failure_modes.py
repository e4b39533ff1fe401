"""Failure modes: what each stress does to utilization and the SLO, which one binds, and the critical dependencies."""

import streamlit as st

from planner.fmt import num, pct
from ui.charts_stress import failure_chart
from ui.show import Fig, figure_row, md, text_table
from ui.sidebar import page_setup
from ui.survival import survival_section

design = page_setup("Failure modes")
if design is None:
    st.stop()
summary, failures = design.failure_summary, design.failures
binding = next(f for f in failures if f.scenario == summary.binding_scenario)

figure_row(
    [
        Fig("Binding scenario", binding.title, summary.binding_reason),
        Fig("Its utilization", pct(binding.utilization), binding.note),
        Fig("N+1 (one node lost)", "holds" if summary.n_plus_one_ok else "fails", summary.availability_note),
        Fig("Scenarios within the SLO", f"{sum(f.ok for f in failures)} of {len(failures)}"),
    ],
    arithmetic_title="Show why",
)
(st.warning if not binding.ok else st.info)(f"Binds: {binding.title}. {summary.binding_reason}")

st.plotly_chart(failure_chart(failures, summary.binding_scenario), key="chart.failures")
text_table(
    [
        {
            "scenario": ("▶ " if f.scenario == summary.binding_scenario else "") + f.title,
            "what changes": f.change,
            "utilization": pct(f.utilization),
            "without prefix cache": pct(f.utilization_no_prefix_cache),
            "seed's linear basis": pct(f.utilization_linear_no_prefix_cache),
            "p95 TTFT": num(f.ttft_p95_ms, "ms"),
            "p95 ITL": num(f.itl_p95_ms, "ms"),
            "SLO": "met" if f.ok else "missed",
            "note": f.note,
        }
        for f in failures
    ]
)
st.caption(f"Load scaling: {md(summary.load_scaling)}")
survival_section(design)

st.header("Critical dependencies")
for dep in design.config.dependencies:
    st.markdown(f"- **{md(dep.what)}**: breaks if {md(dep.breaks_if)}")
