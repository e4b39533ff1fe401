"""Variations: the follow-up questions A-G as presets, each beside the baseline."""

import streamlit as st

from planner import BriefError, InfeasibleDesign, plan, preset_names
from planner.compare import compare
from planner.figures import format_unit, label, show
from ui import state
from ui.compare import comparison_table
from ui.show import md, show_problems, text_table
from ui.sidebar import page_setup

BASELINE = "capstone"

design = page_setup("Variations")
variations = [name for name in preset_names() if name.startswith("variation-")]


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
        text_table([{"finding": f.label, "value": format_unit(f.value, f.unit), "arithmetic": f.arithmetic} for f in analysis.findings])
        if analysis.options:
            st.subheader("Options")
            figures = ("utilization", "ttft_p95_ms", "itl_p95_ms", "ok")
            text_table(
                [
                    {"option": o.name, "change": o.change}
                    | {label(f"variation.options.{i}.{key}"): show(other, f"variation.options.{i}.{key}", short=True) for key in figures}
                    | ({"why not": o.why_not} if any(not other.ok for other in analysis.options) else {})
                    | {"re-plan (plan --set)": " ".join(f"{path}={value}" for path, value in o.overrides.items()) or "as briefed"}
                    for i, o in enumerate(analysis.options)
                ]
            )
    st.subheader("Beside the baseline")
    st.caption(
        "The capstone against this variation on the figures that matter; green is better, red is worse for the variation."
        f" In brackets: {other.uncertainty.legend}, as on the verdict bar."
    )
    comparison_table(compare(plan(state.preset_brief(BASELINE)), other), "capstone", "this variation")
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
current = state.current_preset()
if current in variations and st.session_state.get("var.preset_seen") != current:  # a variation preset opens on its own card
    st.session_state["var.chosen"] = current
st.session_state["var.preset_seen"] = current
chosen = st.selectbox("Compare with the baseline", variations, key="var.chosen", format_func=lambda n: state.preset_brief(n).title)
if chosen:
    try:
        _compare(chosen)
    except BriefError as exc:
        st.error(str(exc))
