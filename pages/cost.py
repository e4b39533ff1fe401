"""Cost: $/hour, $/year, tokens/year, $ per million tokens, the levers, and $ per million against fleet size."""

from dataclasses import replace

import streamlit as st

from planner.figures import label, show
from planner.fleet import cost_vs_fleet
from ui.charts_stress import cost_vs_fleet_chart
from ui.show import arithmetic_expander, fig, figure_row, md, table
from ui.sidebar import page_setup
from ui.verdict_bar import verdict_headline

design = page_setup("Cost")
if design is None:
    st.stop()
cost, verdict = design.cost, design.verdict
works = verdict.feasible and verdict.meets_slo

if not works:  # a price for a fleet that does not serve the brief is no price: say so before the figures
    first = verdict.problems[0] if verdict.problems else None
    st.error(
        f"{verdict_headline(design)}: {show(design, 'cost.usd_per_million_output_tokens')} per M output tokens is what this fleet"
        " costs, not what serving the brief costs." + (f" Fix first: {md(first.change)}." if first is not None else "")
    )
per_m = fig(design, "cost.usd_per_million_output_tokens")
per_m_in = fig(design, "cost.usd_per_million_input_tokens")
if not works:
    per_m, per_m_in = replace(per_m, note="misses the SLO"), replace(per_m_in, note="misses the SLO")
figure_row(
    [
        fig(design, "cost.gpus"),
        fig(design, "cost.usd_per_hour"),
        fig(design, "cost.usd_per_year"),
        fig(design, "cost.output_tokens_per_year"),
        per_m,
        per_m_in,
    ]
)

st.header("Levers")
table(
    [
        {
            "lever": lever.name,
            label(f"cost.levers.{i}.usd_per_million_output_tokens"): show(design, f"cost.levers.{i}.usd_per_million_output_tokens"),
            "change": lever.change,
        }
        for i, lever in enumerate(cost.levers)
    ]
)
arithmetic_expander(((lever.name, lever.arithmetic) for lever in cost.levers), title="Show the arithmetic of each lever")

st.header("Cost per M output tokens by fleet size")
st.plotly_chart(cost_vs_fleet_chart(cost_vs_fleet(design.brief), design.brief.hardware.nodes), key="chart.cost_fleet")
st.caption(
    "The peak's tokens do not change with the fleet, so the cost per million grows with the nodes; the marked points are fleets that cannot carry the peak."
)
