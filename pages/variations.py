"""Variations: the follow-up questions A-G as presets, each beside the baseline; and interview practice."""

import streamlit as st

from planner import BriefError, Design, InfeasibleDesign, plan, preset_names
from planner.fmt import num, pct
from ui import state
from ui.charts import diff_chart
from ui.practice_form import practice
from ui.show import md, show_problems, table, text_table
from ui.sidebar import page_setup

BASELINE = "capstone"

design = page_setup("Variations")
variations = [name for name in preset_names() if name.startswith("variation-")]


def _figures(d: Design) -> dict[str, str]:
    """The figures shown side by side, formatted from one design."""
    c, slo, cost = d.capacity, d.slo, getattr(d, "cost", None)
    rows = {
        "model": d.model_name,
        "GPU": d.gpu_name,
        "nodes x GPUs": f"{d.brief.hardware.nodes} x {d.brief.hardware.gpus_per_node}",
        "request rate": num(d.demand.request_rate_per_s, "req/s"),
        "weights per GPU": num(d.memory.weights_gb_per_gpu, "GB"),
        "KV cache per GPU": num(d.memory.kv_gb_per_gpu, "GB"),
        "decode step": num(c.decode_step_ms, "ms"),
        "utilization": pct(c.utilization),
        "without prefix caching": pct(c.utilization_no_prefix_cache),
        "binding resource": c.binding_constraint.value,
        "p95 TTFT": f"{num(slo.ttft_p95_ms, 'ms')} (target {num(slo.ttft_target_ms, 'ms')})",
        "p95 ITL": f"{num(slo.itl_p95_ms, 'ms')} (target {num(slo.itl_target_ms, 'ms')})",
        "feasible": "yes" if d.verdict.feasible else "no",
        "meets the SLO": "yes" if d.verdict.meets_slo else "no",
    }
    if cost is not None:
        rows["$ per M output tokens"] = f"${num(cost.usd_per_million_output_tokens)}"
    return rows


def _finding_value(value: float, unit: str) -> str:
    return pct(value) if unit == "fraction" else num(value, unit)


def _compare(name: str) -> None:
    brief = state.preset_brief(name)
    st.subheader(md(brief.title))
    st.markdown(md(brief.description))
    try:
        other = plan(brief)
    except InfeasibleDesign as exc:
        st.error("This variation cannot be computed on its hardware:")
        show_problems(exc.verdict.problems)
        return
    analysis = other.variation
    if analysis is not None:
        st.markdown(f"**The question:** {md(analysis.question)}")
        st.info(md(analysis.conclusion))
        text_table([{"finding": f.label, "value": _finding_value(f.value, f.unit), "arithmetic": f.arithmetic} for f in analysis.findings])
        if analysis.options:
            st.subheader("Options")
            text_table(
                [
                    {
                        "option": o.name,
                        "change": o.change,
                        "utilization": pct(o.utilization),
                        "p95 TTFT": num(o.ttft_p95_ms, "ms"),
                        "p95 ITL": num(o.itl_p95_ms, "ms"),
                        "SLO": "met" if o.ok else "missed",
                    }
                    for o in analysis.options
                ]
            )
    base = _figures(plan(state.preset_brief(BASELINE)))
    mine = _figures(other)
    st.subheader("Beside the baseline")
    table([{"figure": k, "baseline (capstone)": base[k], name: mine[k]} for k in base])
    if analysis is not None and analysis.diff:
        st.plotly_chart(diff_chart(analysis.diff), key=f"chart.diff.{name}")
    if other.verdict.problems:
        show_problems(other.verdict.problems)
    st.button(f"Load {name} as the current brief", key=f"var.load.{name}", on_click=state.select_preset, args=(name,))


st.markdown(
    "Each card is a follow-up question to the capstone, as a preset that changes its brief. Choose one to see it beside the baseline."
)
columns = st.columns(4)
for i, name in enumerate(variations):
    brief = state.preset_brief(name)
    with columns[i % 4], st.container(border=True):
        st.markdown(f"**{md(brief.title)}**")
        st.caption(md(brief.description))
chosen = st.selectbox("Compare with the baseline", variations, key="var.chosen", format_func=lambda n: state.preset_brief(n).title)
if chosen:
    try:
        _compare(chosen)
    except BriefError as exc:
        st.error(str(exc))

if design is not None:
    practice(design)
