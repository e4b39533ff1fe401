"""Cost: $/hour, $/year, tokens/year, $ per million tokens, the levers, and $ per million against fleet size."""

import streamlit as st

from planner.fleet import cost_vs_fleet
from planner.fmt import num
from ui.charts_stress import cost_vs_fleet_chart
from ui.show import Fig, arithmetic_expander, figure_row, table
from ui.sidebar import page_setup

design = page_setup("Cost")
if design is None:
    st.stop()
cost = design.cost


def usd(value: float, unit: str = "") -> str:
    return f"${num(value)}{unit}"


figure_row(
    [
        Fig("GPUs", num(cost.gpus)),
        Fig("Per hour", usd(cost.usd_per_hour), cost.arithmetic.get("usd_per_hour", "")),
        Fig("Per year", usd(cost.usd_per_year), cost.arithmetic.get("usd_per_year", "")),
        Fig("Output tokens per year", num(cost.output_tokens_per_year), cost.arithmetic.get("output_tokens_per_year", "")),
        Fig("Per million output tokens", usd(cost.usd_per_million_output_tokens), cost.arithmetic.get("usd_per_million_output_tokens", "")),
        Fig("Per million input tokens", usd(cost.usd_per_million_input_tokens), cost.arithmetic.get("usd_per_million_input_tokens", "")),
    ]
)

st.header("Levers")
table(
    [
        {"lever": lever.name, "$ per M output tokens": usd(lever.usd_per_million_output_tokens), "change": lever.change}
        for lever in cost.levers
    ]
)
arithmetic_expander(((lever.name, lever.arithmetic) for lever in cost.levers), title="Show the arithmetic of each lever")

st.header("$ per million output tokens against fleet size")
st.plotly_chart(cost_vs_fleet_chart(cost_vs_fleet(design.brief), design.brief.hardware.nodes), key="chart.cost_fleet")
st.caption(
    "The peak's tokens do not change with the fleet, so $ per million grows with the nodes; the marked points are fleets that cannot carry the peak."
)
