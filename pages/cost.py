"""Cost: $/hour, $/year, tokens/year, $ per million tokens, the levers, and $ per million against fleet size."""

from dataclasses import replace

import streamlit as st

from planner.figures import label, show
from planner.fleet import cost_vs_fleet
from planner.fmt import usd
from planner.objective import duration_text
from ui.charts_stress import cost_vs_fleet_chart
from ui.show import arithmetic_expander, chart, fig, figure_row, md, table
from ui.sidebar import page_setup
from ui.verdict_bar import the_fix, verdict_headline

design = page_setup("Cost")
if design is None:
    st.stop()
cost, verdict = design.cost, design.verdict
works = verdict.feasible and verdict.meets_slo

if not works:  # a price for a fleet that does not serve the brief is no price: say so before the figures
    at_fix = (
        f" The change that fixes it: {md(design.fix.text)}; {'with it, ' + md(design.fix.fleet) + ' cost' if design.fix.setting else 'that fleet costs'}"
        f" {show(design, 'cost.usd_per_million_output_tokens_at_fix')} per M output tokens."
        if design.fix is not None
        else (f" Fix first: {md(the_fix(design))}." if verdict.problems else "")
    )
    fleet = "cannot carry the peak, so" if not cost.carries_peak else "misses the SLO, so"
    st.error(
        f"{verdict_headline(design)}: this fleet {fleet} {show(design, 'cost.usd_per_million_output_tokens')} per M output tokens is what"
        " it costs over the brief's tokens, not what serving the brief costs." + at_fix
    )
per_m = fig(design, "cost.usd_per_million_output_tokens")
per_m_in = fig(design, "cost.usd_per_million_input_tokens")
if not works:
    note = "misses the SLO" if cost.carries_peak else "not the cost of serving: the fleet cannot carry the peak"
    per_m, per_m_in = replace(per_m, note=note), replace(per_m_in, note=note)
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

if design.objective is not None:  # a job: the fleet paid only while the work runs is the other basis
    st.markdown(
        f"**Judged on its deadline:** the figures above keep the fleet all year at the brief's average load; paid only while"
        f" the work runs at its full batch, the same fleet costs {show(design, 'objective.usd_per_m_output_tokens')} per M output"
        f" tokens ({show(design, 'objective.usd_per_m_tokens')} per M tokens in and out), and the work takes"
        f" {duration_text(design.objective.time_s, design.objective.kind)} of its"
        f" {duration_text(design.objective.deadline_s, design.objective.kind)} deadline: the rest of the time is"
        " free for more of it."
    )

spike = design.variation.spike if design.variation is not None else None
if spike is not None:  # variation E: what holding the spike's nodes costs
    st.markdown(
        "**Sized for the spike:** "
        + md(
            f"{spike.nodes_for_spike} nodes at {usd(spike.usd_per_million_output_tokens_for_spike)} per M output tokens;"
            f" sized for the average, {spike.nodes_for_average} node{'' if spike.nodes_for_average == 1 else 's'} and a degradation ladder for the rest (the Capacity page's spike)."
        )
    )
regions = design.variation.regions if design.variation is not None else ()
if regions:  # variation D: the regional fleets hold more nodes than one region
    st.markdown(
        f"**Global users:** the regions hold {sum(r.nodes for r in regions)} nodes against {design.brief.hardware.nodes} in one region"
        " (the Architecture page's regions); this page prices the briefed fleet."
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
chart(cost_vs_fleet_chart(cost_vs_fleet(design.brief), design.brief.hardware.nodes), key="chart.cost_fleet")
st.caption(
    "The peak's tokens do not change with the fleet, so the cost per million grows with the nodes; the marked points are fleets that miss the SLO or lose N+1 (each re-planned as `plan --set hardware.nodes=N`"
    + (
        ", with the prefill/decode split that meets at that size: `--set disaggregation.prefill_nodes=P`"
        if design.brief.disaggregation.enabled
        else ""
    )
    + ")."
)
